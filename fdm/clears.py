"""GMEM clear rectangles of an FDM render pass, per bin: ``fdm_apply_gmem_clear_coords``.

Models ``fdm_apply_gmem_clear_coords`` of src/freedreno/vulkan/tu_clear_blit.cc (pop-os/mesa @
05b96fda, identical @ 4ff7b570), the patchpoint (3 dwords, ``TU_FDM_SKIP_BINNING``: not applied
in the binning pass) that rewrites ``RB_RESOLVE_CNTL_1`` / ``RB_RESOLVE_CNTL_2`` (the inclusive
corners of the resolve engine's clear) for every bin.  Its users:

* render-pass load-op clears on a7xx (``tu7_generic_clear_attachment``): one patchpoint per layer
  ``i`` of the attachment, ``rect`` = ``render_areas[i]`` (per-layer render areas) or
  ``render_areas[0]``, ``custom_resolve`` = the subpass's;
* ``vkCmdClearAttachments`` through the generic clear (``tu7_clear_attachment_generic_single_rect``):
  one patchpoint with view 0 unless the subpass is multiview or ``fdm_per_layer``, then one per
  layer; ``rect`` = the ``VkClearRect``;
* the pre-a7xx GMEM clear of ``vkCmdClearAttachments`` (``tu_clear_gmem_attachments`` /
  ``tu_emit_clear_gmem_attachment``): the same per-layer rule, ``custom_resolve`` never set.

Which path a render-pass load-op clear takes, and whether it is mapped, is
:func:`load_op_clear_coords`: the BLIT-event clear of a GPU without the generic clear
(``tu_clear_gmem_attachment``) has the patchpoint only from Mesa 26.2.2 on; before (Mesa 26.1,
26.2.0-rc1: ``[driver] tu_clear_gmem_attachment = "mesa-26.1"``) every bin clears the unmapped
render area (:func:`tu6_emit_blit_scissor`).

The rectangle is mapped from framebuffer space into the space the GMEM resolve engine uses (the
window space of the bin, origin ``b_cs``): ``x -> x / fa + o`` with ``o = tu_fdm_per_bin_offset(fa,
B.offset, b_cs) = b_cs - B.x / fa`` (no HW bin-scaling ``o'``: the resolve engine is not behind
the FOVEAT offset), rounding outward.  The values are what the C computes in ``unsigned`` before
the register packers mask them into their fields.
"""

from __future__ import annotations

from turnip_base.errors import ScenarioError

from .cmath import u32
from .gpu import GpuProfile
from .plan import TilePlan
from .turnip import tu_fdm_per_bin_offset
from .variants import ClearGmemAttachment

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]
#: inclusive corners ``(TL, BR)`` as written to ``RB_RESOLVE_CNTL_1`` and ``RB_RESOLVE_CNTL_2``
Corners = tuple[Pair, Pair]

#: the "clear a 0 area rectangle to skip this clear" corners of an empty bin
EMPTY_CLEAR: Corners = ((1, 1), (0, 0))


def _div_round_up_u32(n: int, d: int) -> int:
    """``DIV_ROUND_UP(n, d)`` = ``(n + d - 1) / d`` (src/util/u_math.h) on ``unsigned`` operands."""
    return u32(u32(n) + d - 1) // d


def fdm_apply_gmem_clear_coords(rect: Rect4, frag_area: Pair, bin_rect: Rect4, common_bin_start: Pair,
                                custom_resolve: bool = False) -> Corners:
    """``fdm_apply_gmem_clear_coords`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda)
    for one view of one bin: ``(RB_RESOLVE_CNTL_1, RB_RESOLVE_CNTL_2)`` = ``((x1, y1), (x2, y2))``.

    ``rect`` is the framebuffer-space rectangle ``(x, y, w, h)`` to clear, ``frag_area`` and
    ``bin_rect`` the view's ``fa`` and bin ``B``, ``common_bin_start`` ``b_cs``.  In the order the
    driver does it:

    1. ``o = tu_fdm_per_bin_offset(fa, B.offset, b_cs)`` (asserts ``B.offset % fa == 0``:
       :class:`~turnip_base.errors.DriverAssertion`), computed even when it is not used;
    2. ``custom_resolve``: ``o = (0, 0)``, ``fa = (1, 1)`` (the subpass renders unscaled);
    3. a bin with ``B.w == 0 && B.h == 0`` (a view not visible in the tile) gets the empty
       rectangle ``(1, 1), (0, 0)``;
    4. otherwise ``x1 = x / fa.w + o.x``, ``x2 = DIV_ROUND_UP(x + w, fa.w) + o.x - 1`` (``y``
       likewise), all ``unsigned``: C division truncates, sums wrap modulo 2**32.
    """
    offset = tu_fdm_per_bin_offset(frag_area, (bin_rect[0], bin_rect[1]), common_bin_start)
    fw, fh = frag_area
    if custom_resolve:
        offset = (0, 0)
        fw, fh = 1, 1
    if bin_rect[2] == 0 and bin_rect[3] == 0:
        return EMPTY_CLEAR
    x, y, w, h = rect
    x1 = u32(u32(x) // fw + offset[0])
    x2 = u32(_div_round_up_u32(x + w, fw) + offset[0] - 1)
    y1 = u32(u32(y) // fh + offset[1])
    y2 = u32(_div_round_up_u32(y + h, fh) + offset[1] - 1)
    return (x1, y1), (x2, y2)


def gmem_clear_coords(tile: TilePlan, view: int, rect: Rect4, custom_resolve: bool = False) -> Corners:
    """:func:`fdm_apply_gmem_clear_coords` for layer ``view`` of a planned tile: the driver reads
    ``frag_areas`` and ``bins`` at ``MIN2(view, views - 1)`` (``views`` = the tile's view count,
    ``tu_fdm_num_layers``) and the tile's ``b_cs``."""
    if view < 0:
        raise ScenarioError("view", f"must be >= 0, got {view}")
    vp = tile.views[min(view, len(tile.views) - 1)]
    return fdm_apply_gmem_clear_coords(rect, vp.frag_area, vp.bin, tile.common_bin_start, custom_resolve)


def gmem_clear_coords_all(tile: TilePlan, rect: Rect4, custom_resolve: bool = False) -> tuple[Corners, ...]:
    """:func:`gmem_clear_coords` for every view of a tile (one patchpoint per layer), in view order."""
    return tuple(gmem_clear_coords(tile, v, rect, custom_resolve) for v in range(len(tile.views)))


def tu6_emit_blit_scissor(rect: Rect4, align: Pair | None = None) -> Corners:
    """``tu6_emit_blit_scissor`` (src/freedreno/vulkan/tu_cmd_buffer.cc, pop-os @ 025a3b4d): with
    ``align`` None (false), as the subpass-begin clears emit it, ``RB_RESOLVE_CNTL_1/2`` =
    ``(x, y)``, ``(x + w - 1, y + h - 1)`` of the render area, in ``uint32_t``; with ``align`` =
    the GPU's ``(gmem_align_w, gmem_align_h)`` (true: the scissor of the GMEM loads and of the
    stores, ``tu6_emit_tile_store``), ``x1, y1`` rounded down and ``x2 + 1, y2 + 1`` up to it.
    The scissor is not patched per bin (without a subsampled attachment ``tu_emit_blit`` has no
    FDM patchpoint): every bin's fast store, and every load of a pass without FDM, resolves this
    render-area rectangle.  (An empty render area emits nothing; ``use_sysmem_rendering`` renders
    a pass with one in sysmem, so no bin reaches it.)"""
    x, y, w, h = rect
    x1, y1, x2, y2 = u32(x), u32(y), u32(u32(x) + w - 1), u32(u32(y) + h - 1)
    if align is not None:
        aw, ah = align
        x1, y1 = x1 & ~(aw - 1), y1 & ~(ah - 1)
        x2, y2 = u32(-(-(x2 + 1) // aw) * aw - 1), u32(-(-(y2 + 1) // ah) * ah - 1)
    return (x1, y1), (x2, y2)


def load_op_clear_coords(tile: TilePlan, view: int, rect: Rect4, gpu: GpuProfile,
                         variant: ClearGmemAttachment = "upstream") -> Corners:
    """The GMEM clear of a render-pass load-op clear for layer ``view`` of a planned FDM tile, as
    the resolve engine's ``RB_RESOLVE_CNTL_1/2`` hold it; ``rect`` is the layer's render area
    (``render_areas[view]`` with per-layer render areas, else ``render_areas[0]``).

    * a GPU with the generic clear (``tu7_generic_clear_attachment``: a750, a8xx) and, on the
      others, ``tu_clear_gmem_attachment`` (src/freedreno/vulkan/tu_clear_blit.cc) from Mesa
      26.2.2 on (``variant`` "upstream"; release note "tu: Fix GMEM clears with an FDM offset on
      the blit-event clear path", pop-os @ 9cad4086): the ``fdm_apply_gmem_clear_coords``
      patchpoint, :func:`gmem_clear_coords`;
    * ``tu_clear_gmem_attachment`` before the fix (``variant`` "mesa-26.1": pop-os @ 05b96fda,
      Mesa 26.2.0-rc1 leegao/mesa-26.2 @ 3c34d70f, Mesa 26.1.6 in the box): it passes a NULL
      ``fdm_rect``, so no patchpoint is emitted and every bin clears what
      :func:`tu6_emit_blit_scissor` wrote at the subpass begin - the unmapped render area of view
      0, or of the layer with per-layer render areas."""
    if gpu.has_generic_clear or variant == "upstream":
        return gmem_clear_coords(tile, view, rect)
    return tu6_emit_blit_scissor(rect)
