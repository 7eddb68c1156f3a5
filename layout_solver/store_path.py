"""How a rendered tile is stored into a subsampled image: the fast (resolve engine) and the slow
(A2D) store paths of a pass with a subsampled attachment.

Models, from src/freedreno/vulkan/tu_clear_blit.cc (pop-os/mesa @ 05b96fda, identical @
4ff7b570):

* ``transform_render_area`` — the render area mapped from framebuffer space into subsampled
  space for one tile and view, rounding outward;
* ``fdm_apply_blit_scissor`` — the fast path (``CP_EVENT_WRITE::BLIT``, emitted per layer by
  ``tu_emit_blit`` when ``pass->has_fdm && fdm_subsampled``): ``RB_RESOLVE_CNTL_1/2`` is the
  transformed render area intersected with the tile's subsampled rectangle, aligned outward to
  ``gmem_align``, and ``RB_RESOLVE_WINDOW_OFFSET`` moves the unscaled GMEM tile to its
  subsampled position;
* ``fdm_apply_render_area`` — the slow path's ``GRAS_A2D_SCISSOR_TL/BR`` = the transformed render
  area (emitted per layer by ``tu_store_gmem_attachment`` when ``fdm_subsampled``);
* ``fdm_apply_store_coords`` — the slow path's ``GRAS_A2D_DEST_TL/BR`` and ``GRAS_A2D_SRC_*``: a
  view subsampled in the tile is copied **unscaled** from GMEM ``[b_cs, b_cs + B/fa)`` to
  ``[start, start + B/fa)`` (``start`` = its subsampled position), any other view is upscaled to
  ``[start, start + B)``.  :func:`fdm.patch.blit_rects` is the same function for a tile the solver
  did not place (``start = B.offset``).

Which of the two paths a tile takes is the a7xx ``TU_PREDICATE_FAST_STORE`` of
``tu6_emit_tile_select`` (``SubsampledTile.fast_store``); both are emitted (``tu_store_gmem_attachment``:
with ``fdm_subsampled`` ``tu_attachment_store_unaligned`` is false, so ``use_fast_path`` holds for
ordinary attachments and ``fast_path_conditional`` = ``has_fdm``).  On a6xx every FDM store is the
slow path.  ``fdm_subsampled`` is pass-wide: in a pass with one subsampled attachment, every stored
attachment takes these paths (docs/spec/turnip-fdm-spec.md §7.1, SUSPECT).  MSAA destinations
(``store_3d_blit``) have no FDM patchpoints and are not modelled.

Integers follow the C: ``VkOffset2D`` is ``int32_t``, ``VkExtent2D``, the fragment area and the
register values ``uint32_t``; mixed expressions are ``unsigned`` and wrap modulo 2**32.  Register
values are returned before the register packers mask them into their fields.
"""

from __future__ import annotations

import attrs

from fdm.cmath import is_pow2, u32
from fdm.geometry import Rect
from fdm.plan import TilePlan
from turnip_base.errors import DriverAssertion, ScenarioError

from .solver import SubsampledLayout, SubsampledTile

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]
#: inclusive corners ``(TL, BR)`` as written to a pair of ``*_TL/*_BR`` (or ``*_1/*_2``) registers
Corners = tuple[Pair, Pair]

#: the empty corners the patchpoints write for an empty bin (a view not visible in the tile)
EMPTY: Corners = ((1, 1), (0, 0))


def _i32(x: int) -> int:
    """``x`` stored in an ``int32_t`` (two's complement wrap, as every compiler turnip is built with)."""
    v = u32(x)
    return v - (1 << 32) if v >= 1 << 31 else v


def _div_round_up_u32(n: int, d: int) -> int:
    """``DIV_ROUND_UP(n, d)`` = ``(n + d - 1) / d`` (src/util/u_math.h) on ``unsigned`` operands."""
    return u32(u32(n) + d - 1) // d


def _align_pot_u32(x: int, pot: int) -> int:
    """``ALIGN_POT(x, pot)`` = ``(x + pot - 1) & ~(pot - 1)`` (src/util/u_math.h) on ``uint32_t``."""
    return u32(u32(x) + pot - 1) & u32(~(pot - 1))


def _as_rect4(r: Rect | Rect4) -> Rect4:
    return r.as_tuple() if isinstance(r, Rect) else (r[0], r[1], r[2], r[3])


def transform_render_area(render_area: Rect4, tile: SubsampledTile, bin_rect: Rect4, view: int) -> Rect4 | None:
    """``transform_render_area`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda): the
    render area in subsampled space for one tile and view, ``(x, y, w, h)`` (``int32`` offset,
    ``uint32`` extent), conservative where it covers a fragment partially.

    ``fa_e`` = ``frag_areas[view]`` if the view is in ``subsampled_views``, else ``(1, 1)``;
    ``off = subsampled_pos[view].offset - B.offset / fa_e``, or ``(0, 0)`` when the solver did not
    place the tile (``!tile->subsampled``); ``x1 = RA.x / fa_e.w + off.x``, ``x2 =
    DIV_ROUND_UP(RA.x + RA.w, fa_e.w) + off.x`` (``y`` likewise), unsigned.

    None where the driver reads a ``subsampled_pos`` the solver never set (a view not visible in
    a placed tile; its bin is empty, so nothing is stored with the value)."""
    fw, fh = tile.effective_frag_area(view)
    if tile.subsampled:
        sub = tile.subsampled_pos[view]
        if sub is None:
            return None
        off = (_i32(sub.x - u32(bin_rect[0]) // fw), _i32(sub.y - u32(bin_rect[1]) // fh))
    else:
        off = (0, 0)
    x, y, w, h = render_area
    x1 = u32(u32(x) // fw + off[0])
    x2 = u32(_div_round_up_u32(x + w, fw) + off[0])
    y1 = u32(u32(y) // fh + off[1])
    y2 = u32(_div_round_up_u32(y + h, fh) + off[1])
    return (_i32(x1), _i32(y1), u32(x2 - x1), u32(y2 - y1))


def fdm_apply_blit_scissor(render_area: Rect4, tile: SubsampledTile, bins: tuple[Rect4, ...], view: int,
                           common_bin_start: Pair, gmem_align: Pair) -> tuple[Corners, Pair]:
    """``fdm_apply_blit_scissor`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda), the
    fast store path's patchpoint: ``((RB_RESOLVE_CNTL_1, RB_RESOLVE_CNTL_2), RB_RESOLVE_WINDOW_OFFSET)``.

    ``view = MIN2(view, views - 1)``; ``S = transform_render_area(RA, tile, bins, view)``; for a
    placed tile (``tile->subsampled``) ``S`` is intersected with ``subsampled_pos[view]`` (signed
    ``MAX2`` of the starts, unsigned ``MIN2`` of the ends, extent wrapping as ``uint32``) and the
    window offset is ``subsampled_pos[view].offset``, else ``b_cs``.  An empty bin (``B.w == 0 &&
    B.h == 0``) gives ``(1,1),(0,0)`` and window offset ``(0, 0)``; otherwise the corners are ``S``
    aligned outward to ``gmem_align`` (``x1 = S.x & ~(gw - 1)``, ``x2 = ALIGN_POT(S.x + S.w, gw) -
    1``, unsigned)."""
    gw, gh = gmem_align
    if not (is_pow2(gw) and is_pow2(gh)):
        raise ScenarioError("gmem_align", f"must be powers of two (ALIGN_POT), got {tuple(gmem_align)}")
    view = min(view, len(bins) - 1)
    b = bins[view]
    if b[2] == 0 and b[3] == 0:
        return EMPTY, (0, 0)
    s = transform_render_area(render_area, tile, b, view)
    if s is None:  # a visible view of a placed tile always has a rectangle
        raise AssertionError(f"tile {tile.cell}: view {view} has a bin but no subsampled position (model bug)")
    sx, sy, sw, sh = s
    if tile.subsampled:
        sub = tile.stored_pos(view)
        pos: Pair = (sub.x, sub.y)
        nx, ny = max(sx, sub.x), max(sy, sub.y)
        sw = u32(min(u32(sx + sw), u32(sub.x + sub.w)) - nx)
        sh = u32(min(u32(sy + sh), u32(sub.y + sub.h)) - ny)
        sx, sy = nx, ny
    else:
        pos = (common_bin_start[0], common_bin_start[1])
    x1 = u32(sx) & u32(~(gw - 1))
    y1 = u32(sy) & u32(~(gh - 1))
    x2 = u32(_align_pot_u32(sx + sw, gw) - 1)
    y2 = u32(_align_pot_u32(sy + sh, gh) - 1)
    return ((x1, y1), (x2, y2)), pos


def fdm_apply_render_area(render_area: Rect4, tile: SubsampledTile, bins: tuple[Rect4, ...], view: int
                          ) -> Corners | None:
    """``fdm_apply_render_area`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda), the
    slow store path's ``GRAS_A2D_SCISSOR_TL/BR``: ``R = transform_render_area(RA, tile, bins,
    MIN2(view, views - 1))``, ``TL = (R.x, R.y)``, ``BR = (R.x + R.w - 1, R.y + R.h - 1)``
    (unsigned).  Written whatever the bin (no empty-bin case); None where
    :func:`transform_render_area` reads an unset ``subsampled_pos`` (the store of that view is
    empty)."""
    view = min(view, len(bins) - 1)
    r = transform_render_area(render_area, tile, bins[view], view)
    if r is None:
        return None
    x, y, w, h = r
    return (u32(x), u32(y)), (u32(x + w - 1), u32(y + h - 1))


def fdm_apply_store_coords(tile: SubsampledTile, bins: tuple[Rect4, ...], view: int, common_bin_start: Pair
                           ) -> tuple[Corners, Corners]:
    """``fdm_apply_store_coords`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda) on a
    tile of a pass with a subsampled attachment: ``(GRAS_A2D_DEST_TL/BR, GRAS_A2D_SRC
    (XMIN, YMIN)/(XMAX, YMAX))``.

    ``view = MIN2(view, views - 1)``, ``fa = frag_areas[view]``, ``B = bins[view]``; asserts
    ``B.w % fa.w == 0`` and ``B.h % fa.h == 0`` (:class:`~turnip_base.errors.DriverAssertion`), ``sw =
    B.w / fa.w``, ``sh = B.h / fa.h``.  ``B.w == 0 && B.h == 0``: both ``(1,1),(0,0)``.  Else
    ``start = tile->subsampled ? subsampled_pos[view].offset : B.offset``; a view in
    ``subsampled_views`` goes unscaled to ``[start, start + (sw, sh) - 1]``, any other view is
    upscaled to ``[start, start + (B.w, B.h) - 1]``; the source is always GMEM ``[b_cs, b_cs +
    (sw, sh) - 1]`` (rendering space, no ``o'``)."""
    view = min(view, len(bins) - 1)
    b = bins[view]
    fw, fh = tile.frag_areas[view]
    if b[2] % fw or b[3] % fh:
        raise DriverAssertion("fdm_apply_store_coords",
                              f"asserts bin.extent % frag_area == 0: bin extent {(b[2], b[3])} is not a multiple "
                              f"of frag area {(fw, fh)}")
    sw, sh = b[2] // fw, b[3] // fh
    if b[2] == 0 and b[3] == 0:
        return EMPTY, EMPTY
    if tile.subsampled:
        sub = tile.stored_pos(view)
        start: Pair = (sub.x, sub.y)
    else:
        start = (b[0], b[1])
    ext = (sw, sh) if tile.is_subsampled(view) else (b[2], b[3])
    dst = (start, (u32(start[0] + ext[0] - 1), u32(start[1] + ext[1] - 1)))
    cx, cy = common_bin_start
    src = ((cx, cy), (u32(cx + sw - 1), u32(cy + sh - 1)))
    return dst, src


@attrs.frozen(kw_only=True)
class StorePath:
    """Both store paths of one view of one rendered tile in a pass with a subsampled attachment.

    Corners are inclusive ``(TL, BR)``; the fast path writes the GMEM tile unscaled at
    ``resolve_window_offset`` clipped to ``resolve_scissor``, the slow path copies ``store_src``
    (GMEM) onto ``store_dst`` clipped to ``a2d_scissor``."""

    view: int
    cell: Pair                               # root cell of the tile
    render_area: Rect4                       # the framebuffer render area the patchpoints got
    subsampled_tile: bool                    # tile->subsampled (the solver placed the tile)
    subsampled_view: bool                    # the view is in subsampled_views
    fast_store: bool                         # TU_PREDICATE_FAST_STORE: the fast path runs, else the slow one
    subsampled_render_area: Rect4 | None     # transform_render_area (None: unset subsampled_pos)
    resolve_scissor: Corners                 # fast path: RB_RESOLVE_CNTL_1, RB_RESOLVE_CNTL_2
    resolve_window_offset: Pair              # fast path: RB_RESOLVE_WINDOW_OFFSET
    a2d_scissor: Corners | None              # slow path: GRAS_A2D_SCISSOR_TL/BR (None: unset subsampled_pos)
    store_dst: Corners                       # slow path: GRAS_A2D_DEST_TL/BR
    store_src: Corners                       # slow path: GRAS_A2D_SRC_XMIN/YMIN, XMAX/YMAX (GMEM)

    @property
    def unscaled(self) -> bool:
        """The slow path copies 1:1 (destination and source of the same non-empty size)."""
        (dx1, dy1), (dx2, dy2) = self.store_dst
        (sx1, sy1), (sx2, sy2) = self.store_src
        return dx2 >= dx1 and dy2 >= dy1 and (dx2 - dx1, dy2 - dy1) == (sx2 - sx1, sy2 - sy1)

    @property
    def slow_store_rect(self) -> Rect4 | None:
        """The destination pixels the slow path writes, ``store_dst ∩ a2d_scissor`` as a half-open
        ``(x, y, w, h)``; None when empty (or when the scissor is unknown)."""
        if self.a2d_scissor is None:
            return None
        (dx1, dy1), (dx2, dy2) = self.store_dst
        (ax1, ay1), (ax2, ay2) = self.a2d_scissor
        x1, y1 = max(dx1, ax1), max(dy1, ay1)
        x2, y2 = min(dx2, ax2), min(dy2, ay2)
        if x2 < x1 or y2 < y1:
            return None
        return (x1, y1, x2 - x1 + 1, y2 - y1 + 1)


def _render_area(layout: SubsampledLayout, view: int) -> Rect4:
    """``per_layer_render_area ? render_areas[i] : render_areas[0]``."""
    ras = layout.plan.scenario.render_areas
    return _as_rect4(ras[min(view, len(ras) - 1)])


def store_path(layout: SubsampledLayout, tile: TilePlan, render_area: Rect | Rect4 | None = None
               ) -> tuple[StorePath, ...]:
    """The store of one rendered tile, one :class:`StorePath` per view (``tu_fdm_num_layers``):
    ``transform_render_area``, ``fdm_apply_blit_scissor``, ``fdm_apply_render_area`` and
    ``fdm_apply_store_coords`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda) with the
    tile's bins and ``b_cs`` from the plan and its subsampled fields from ``layout``.

    ``render_area`` None takes the scenario's (per view when it has one per view, else the
    first); ``gmem_align`` is the GPU's ``gmem_align_w x gmem_align_h``."""
    tcw, tch = layout.tile_count
    cx, cy = tile.cell
    st = layout.tile(cx, cy) if 0 <= cx < tcw and 0 <= cy < tch else None
    if st is None or st.cell != tile.cell:
        raise ScenarioError("tile", f"the layout has no rendered tile with root cell {tile.cell}")
    gpu = layout.plan.scenario.gpu
    bins = tuple(v.bin for v in tile.views)
    b_cs = tile.common_bin_start
    out: list[StorePath] = []
    for v in range(len(bins)):
        ra = _as_rect4(render_area) if render_area is not None else _render_area(layout, v)
        scissor, window = fdm_apply_blit_scissor(ra, st, bins, v, b_cs, (gpu.gmem_align_w, gpu.gmem_align_h))
        dst, src = fdm_apply_store_coords(st, bins, v, b_cs)
        out.append(StorePath(
            view=v, cell=tile.cell, render_area=ra, subsampled_tile=st.subsampled,
            subsampled_view=st.is_subsampled(v), fast_store=st.fast_store,
            subsampled_render_area=transform_render_area(ra, st, bins[v], v), resolve_scissor=scissor,
            resolve_window_offset=window, a2d_scissor=fdm_apply_render_area(ra, st, bins, v), store_dst=dst,
            store_src=src))
    return tuple(out)


def store_paths(layout: SubsampledLayout) -> tuple[tuple[StorePath, ...], ...]:
    """:func:`store_path` of every rendered tile of ``layout.plan``, in walk order (parallel to
    ``layout.plan.tiles``), with the scenario's render areas."""
    return tuple(store_path(layout, t) for t in layout.plan.tiles)
