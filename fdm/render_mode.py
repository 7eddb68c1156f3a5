"""Whether turnip applies the FDM to a pass, whether it renders the pass in GMEM or in sysmem,
and whether a GMEM pass runs a binning pass: the decisions a scenario determines.

- :func:`attachment_set_ops` and :func:`tu_render_pass_disable_fdm` (tu_pass.cc): a multisampled
  attachment that is loaded or stored turns the FDM off for the whole pass;
- :func:`tu_render_pass_bandwidth_config` (tu_pass.cc) and :func:`autotune_render_mode`
  (``tu_autotune::get_optimal_mode``, tu_autotune.cc): the last step of
  ``use_sysmem_rendering``, for a pass without history;
- :func:`use_hw_binning` (tu_cmd_buffer.cc): the binning pass.

What a scenario cannot say (autotune history across submits, the non-default autotune
algorithms and flags, ``TU_DEBUG`` flags other than ``sysmem``/``gmem``, stencil ops,
``dont_care_as_load``) is listed in docs/decisions.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol, get_args

import attrs

from .tiling import VscConfig

#: ``VkAttachmentLoadOp`` of a scenario attachment (``none`` = ``VK_ATTACHMENT_LOAD_OP_NONE``)
LoadOp = Literal["clear", "load", "dont_care", "none"]
LOAD_OPS: tuple[LoadOp, ...] = get_args(LoadOp)
#: ``VkAttachmentStoreOp`` of a scenario attachment (``none`` = ``VK_ATTACHMENT_STORE_OP_NONE``)
StoreOp = Literal["store", "dont_care", "none"]
STORE_OPS: tuple[StoreOp, ...] = get_args(StoreOp)

RenderMode = Literal["gmem", "sysmem"]

#: ``perf_debug`` text of ``tu_render_pass_disable_fdm`` (the plan's ``fdm_disabled_reason``)
FDM_DISABLED_LOAD = "Disabling fragment density map due to load of multisample attachment"
FDM_DISABLED_STORE = "Disabling fragment density map due to store of multisample attachment"

#: ``get_optimal_mode``: render passes with fewer draws than this are not tuned (SYSMEM) unless
#: ``TU_AUTOTUNE_FLAGS=tune_small`` (tu_autotune.cc: ``rp_state->drawcall_count < 5``)
AUTOTUNE_MIN_DRAWS = 5


class ScenarioAttachment(Protocol):
    """What the decisions read of a scenario attachment (:class:`fdm.scenario.Attachment`)."""

    @property
    def cpp(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def load_op(self) -> LoadOp: ...
    @property
    def store_op(self) -> StoreOp: ...
    @property
    def resolve(self) -> bool: ...


@attrs.frozen(kw_only=True)
class AttachmentFlags:
    """``struct tu_render_pass_attachment``'s op flags and ``cpp`` (bytes per pixel times samples)."""

    cpp: int
    samples: int
    clear: bool               # clear_mask != 0
    load: bool
    store: bool
    will_be_resolved: bool


def attachment_set_ops(att: ScenarioAttachment) -> AttachmentFlags:
    """``attachment_set_ops`` (src/freedreno/vulkan/tu_pass.cc, pop-os @ c02c8b9f) for one
    scenario attachment: ``clear_mask`` iff ``LOAD_OP_CLEAR``, ``load`` iff ``LOAD_OP_LOAD``,
    ``store`` iff ``STORE_OP_STORE`` (``DONT_CARE`` and ``NONE`` neither load nor store).  The
    scenario has no stencil ops: they are taken as ``DONT_CARE``, which leaves the D24S8 and
    D32S8 cases of the driver's switch equal to the colour case.  ``cpp`` is
    ``vk_format_get_blocksize * samples`` (``tu_init_renderpass_attachment``);
    ``will_be_resolved`` is the scenario's ``resolve`` (``tu_subpass_resolve_attachment``)."""
    return AttachmentFlags(cpp=att.cpp * att.samples, samples=att.samples, clear=att.load_op == "clear",
                           load=att.load_op == "load", store=att.store_op == "store",
                           will_be_resolved=att.resolve)


def pass_attachments(attachments: Sequence[ScenarioAttachment]) -> tuple[AttachmentFlags, ...]:
    """``pass->attachments`` of ``tu_CreateRenderPass2`` (tu_pass.cc, pop-os @ c02c8b9f): the
    scenario's attachments through :func:`attachment_set_ops`, then one resolve destination per
    attachment with ``resolve = true``: single-sampled, same format, ``LOAD_OP_DONT_CARE`` and
    ``STORE_OP_STORE`` (the scenario does not list it; it is not in GMEM: only
    ``tu_subpass_use_attachment`` sets ``att->gmem``, and a resolve destination never reaches it)."""
    flags = [attachment_set_ops(a) for a in attachments]
    dests = [AttachmentFlags(cpp=a.cpp, samples=1, clear=False, load=False, store=True, will_be_resolved=False)
             for a in attachments if a.resolve]
    return tuple(flags + dests)


def tu_render_pass_disable_fdm(attachments: Sequence[ScenarioAttachment]) -> str | None:
    """``tu_render_pass_disable_fdm`` (src/freedreno/vulkan/tu_pass.cc, pop-os @ c02c8b9f): the
    first of the pass's user attachments with ``samples > 1`` that is loaded or stored
    (``att->load || att->load_stencil || att->store || att->store_stencil``) turns the FDM off
    for the whole pass (``pass->has_fdm = false``): loading or storing a scaled multisampled
    image "doesn't make much sense".  Returns the driver's ``perf_debug`` text, or None when
    the FDM stays on.  A clear, ``DONT_CARE`` or ``NONE`` op on a multisampled attachment, and a
    multisampled attachment that is only resolved, keep the FDM.  ``TU_DEBUG=nofdm`` (which
    also returns true) is not a scenario flag."""
    for att in attachments:
        f = attachment_set_ops(att)
        if f.samples > 1 and (f.load or f.store):
            # the message names "load" when the attachment is loaded, else "store"
            return FDM_DISABLED_LOAD if f.load else FDM_DISABLED_STORE
    return None


@attrs.frozen(kw_only=True)
class Bandwidth:
    """``pass->gmem_bandwidth_per_pixel`` and ``pass->sysmem_bandwidth_per_pixel``."""

    gmem_per_pixel: int
    sysmem_per_pixel: int


def tu_render_pass_bandwidth_config(attachments: Sequence[ScenarioAttachment]) -> Bandwidth:
    """``tu_render_pass_bandwidth_config`` (src/freedreno/vulkan/tu_pass.cc, pop-os @ c02c8b9f)
    over :func:`pass_attachments`: GMEM pays ``cpp`` per load and per store
    (``tu_load_gmem_attachment``/``tu_store_gmem_attachment``), sysmem ``cpp`` per clear and
    ``cpp + cpp / samples`` per resolve source (``tu6_emit_sysmem_resolves``); integer
    arithmetic as the driver's ``uint32_t``."""
    gmem = sysmem = 0
    for a in pass_attachments(attachments):
        if a.load:
            gmem += a.cpp
        if a.store:
            gmem += a.cpp
        if a.clear:
            sysmem += a.cpp
        if a.will_be_resolved:
            sysmem += a.cpp + a.cpp // a.samples
    return Bandwidth(gmem_per_pixel=gmem, sysmem_per_pixel=sysmem)


def pass_pixel_count(render_areas: Sequence[tuple[int, int]], views: int, layers: int) -> int:
    """``pass_pixel_count`` of ``rp_history::bandwidth_algo::get_optimal_mode`` (tu_autotune.cc,
    pop-os @ 025a3b4d): with per-view render areas (``per_layer_render_area``) the sum of
    their ``w * h`` over ``pass->num_views``; else ``w * h`` of render area 0 times
    ``MAX2(num_views, fb->layers)``.  ``render_areas`` are ``(w, h)`` extents; ``views`` is
    ``pass->num_views`` (0 for a pass that is not multiview)."""
    if len(render_areas) > 1:
        return sum(w * h for w, h in render_areas[:views])
    w, h = render_areas[0]
    return w * h * max(views, layers)


def autotune_render_mode(fdm_enabled: bool, draws: int, attachments: Sequence[ScenarioAttachment],
                         render_areas: Sequence[tuple[int, int]], views: int, layers: int) -> RenderMode:
    """``tu_autotune::get_optimal_mode`` (src/freedreno/vulkan/tu_autotune.cc, pop-os @
    025a3b4d, Mesa 26.1.0-rc2; 26.2's ``use_sysmem_rendering`` at pop-os @ 4ff7b570 calls it
    with the same arguments) with the default configuration (autotune enabled, algorithm
    ``BANDWIDTH``, no ``TU_AUTOTUNE_FLAGS``), a command buffer without
    ``SIMULTANEOUS_USE_BIT``, no feedback loop (``sysmem_single_prim_mode``) and **no history**
    for the pass (no samples-passed result has come back: the first submission of a pass, and
    every submission under the DRM shim, where the GPU never executes):

    1. ``pass->has_fdm``: GMEM ("assume the user knows what they're doing");
    2. fewer than 5 draws (``drawcall_count < 5``): SYSMEM, the default mode, untuned;
    3. otherwise the bandwidth estimate with ``mean_samples_passed = 0``: SYSMEM when
       ``sysmem_bw <= (gmem_bw * 11) / 10`` (``uint64_t``), with ``sysmem_bw`` and ``gmem_bw``
       the per-pixel figures of :func:`tu_render_pass_bandwidth_config` times
       :func:`pass_pixel_count`.

    Once results come back, the samples passed by the draws enter both sides and the decision
    follows the pass's history: not modelled (docs/decisions.md)."""
    if fdm_enabled:
        return "gmem"
    if draws < AUTOTUNE_MIN_DRAWS:
        return "sysmem"
    bw = tu_render_pass_bandwidth_config(attachments)
    pixels = pass_pixel_count(render_areas, views, layers)
    sysmem_bw = bw.sysmem_per_pixel * pixels
    # "the magic numbers of 11 and 10 are randomly chosen"; total_draw_call_bandwidth is 0
    # without samples-passed history
    gmem_bw = (bw.gmem_per_pixel * pixels * 11 + 0) // 10
    return "sysmem" if sysmem_bw <= gmem_bw else "gmem"


def binning_useful(tile_count: tuple[int, int]) -> bool:
    """``tu_tiling_config_update_binning`` (src/freedreno/vulkan/tu_util.cc, sailfish @
    9429b474): ``binning_useful = tile_count.width * tile_count.height > 2``, for each VSC
    config on its own tile count (the FDM-offset VSC's includes its extra row and column).
    ``TU_DEBUG=forcebin`` (true) and ``nobin`` (false) override it; neither is a scenario flag."""
    return tile_count[0] * tile_count[1] > 2


def use_hw_binning(vsc: VscConfig) -> bool:
    """``use_hw_binning`` (src/freedreno/vulkan/tu_cmd_buffer.cc, pop-os @ 4ff7b570, Mesa
    26.2.0-rc3): ``vsc->binning_possible && vsc->binning_useful`` on the VSC config in use
    (``tu_vsc_config``: the FDM-offset one when ``tu_enable_fdm_offset``).  Transform feedback and
    primitives-generated queries (which force it on) are not scenario fields.  Its callers
    (``tu6_tile_render_begin``, ``tu6_emit_tile_select``, ``tu6_render_tile``) run the binning
    pass, ``CP_SET_BIN_DATA5`` and ``CP_SET_VISIBILITY_OVERRIDE(0)`` exactly when it is true."""
    return vsc.binning_possible and binning_useful(vsc.tile_count)


#: the attachment formats the model takes for a scenario attachment of ``cpp`` bytes per texel
#: (the formats the box records: turnip_box.jobs); :func:`blit_can_resolve`, the stored-``S8_UINT``
#: rule of :func:`tu_choose_gmem_layout` and :func:`depth_has_lrz` read them.  No depth format has
#: one byte: a 1-byte depth attachment is the stencil-only ``S8_UINT``
COLOUR_FORMATS = {1: "R8_UNORM", 2: "R8G8_UNORM", 4: "R8G8B8A8_UNORM", 8: "R16G16B16A16_SFLOAT",
                  16: "R32G32B32A32_SFLOAT"}
DEPTH_FORMATS = {1: "S8_UINT", 2: "D16_UNORM", 4: "D32_SFLOAT"}


def attachment_format(cpp: int, depth: bool) -> str | None:
    """The ``VkFormat`` (without ``VK_FORMAT_``) taken for an attachment: :data:`COLOUR_FORMATS`
    or :data:`DEPTH_FORMATS` by ``cpp``; None for a ``cpp`` with no format there."""
    return (DEPTH_FORMATS if depth else COLOUR_FORMATS).get(cpp)


def depth_has_lrz(depth_cpp: int) -> bool:
    """Whether the depth attachment's image has an LRZ buffer: ``tu_image_init`` lays one out only
    for a format with a depth aspect, so the stencil-only ``S8_UINT`` (a 1-byte depth attachment,
    :data:`DEPTH_FORMATS`) has none: ``tu_lrz_init_state`` leaves LRZ off for the pass and
    ``tu_CreateFramebuffer`` takes no FDM-offset tile cap from it (the box, turnip 26.2.6: no LRZ
    on a618..a750; a750, a 3-view 1920x1080 4x pass with offsets: 288x160 tiles, where a D32
    image's cap gives 192x192)."""
    fmt = attachment_format(depth_cpp, True)
    return fmt is None or not fmt.startswith("S8")


def blit_can_resolve(fmt: str) -> bool:
    """``blit_can_resolve`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 4ff7b570): a blit
    event can resolve a multisampled attachment unless the format is SNORM, a colour format whose
    first channel is wider than 10 bits (every float colour format), or an R8G8 UNORM/UINT/SINT/
    SRGB format ("for unknown reasons blit event can't msaa resolve these formats when tiled").
    Depth formats are not colour formats and pass."""
    if "SNORM" in fmt:
        return False
    colour = not fmt.startswith(("D16", "D24", "D32", "S8", "X8"))
    first = re.match(r"[A-Z](\d+)", fmt)   # the first channel's width: R8G8B8A8 -> 8
    if colour and first is not None and int(first.group(1)) > 10:
        return False
    return fmt not in ("R8G8_UNORM", "R8G8_UINT", "R8G8_SINT", "R8G8_SRGB")


def tu_attachment_store_unaligned(render_areas: Sequence[tuple[int, int, int, int]], image_size: tuple[int, int],
                                  gmem_align: tuple[int, int]) -> bool:
    """``tu_attachment_store_unaligned`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @
    4ff7b570) for an optimally tiled, single-level attachment of ``image_size`` (the
    framebuffer's: ``need_y2_align`` is false) without subsampling: some render area (one per
    view with per-view render areas, else the first) has ``x1`` or ``y1`` off ``gmem_align``, or
    an end ``x2``/``y2`` off it that is not the image's edge.  ``TU_DEBUG=unaligned_store`` (always
    true) is not a scenario flag."""
    for x, y, w, h in render_areas:
        x2, y2 = x + w, y + h
        if (x % gmem_align[0] or (x2 % gmem_align[0] and x2 != image_size[0])
                or y % gmem_align[1] or (y2 % gmem_align[1] and y2 != image_size[1])):
            return True
    return False


def tu_choose_gmem_layout(fdm_enabled: bool, attachments: Sequence[ScenarioAttachment], depth_last: bool,
                          render_areas: Sequence[tuple[int, int, int, int]], image_size: tuple[int, int],
                          gmem_align: tuple[int, int]) -> bool | None:
    """``tu_choose_gmem_layout`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 4ff7b570):
    True for ``TU_GMEM_LAYOUT_AVOID_CCU``, False for ``FULL``.  AVOID_CCU when the pass has the
    FDM (``pass->has_fdm``), or some attachment of the pass is stored (``att->store``: a
    ``STORE_OP_STORE`` attachment or a resolve destination, :func:`pass_attachments`) over an
    unaligned render area (:func:`tu_attachment_store_unaligned`), or is resolved
    (``will_be_resolved``) from a format :func:`blit_can_resolve` refuses.  ``render_areas`` are
    those the store checks: one per view with per-view render areas, else the first.

    The formats are :func:`attachment_format`'s (the last attachment is the depth attachment
    when ``depth_last``); a resolved attachment whose ``cpp`` has none there leaves the layout
    unknown: None.  A stored ``S8_UINT`` attachment (a 1-byte depth attachment) asks for
    AVOID_CCU ("we cannot pick out S8 from D24S8/D32S8": no blit events for it; the box, turnip
    26.2.6 on a730: 512x64 tiles, 64x544 under FULL).  The rules a scenario cannot reach (a
    custom-resolve subpass, a resolve between views of mismatched mutability) are taken as
    absent."""
    if fdm_enabled:
        return True
    unaligned = tu_attachment_store_unaligned(render_areas, image_size, gmem_align)
    avoid = False
    for i, (a, f) in enumerate(zip(attachments, pass_attachments(attachments)[:len(attachments)], strict=True)):
        fmt = attachment_format(a.cpp, depth_last and i == len(attachments) - 1)
        if f.store and (unaligned or fmt == "S8_UINT"):
            avoid = True
        if a.resolve:
            if fmt is None:
                return None
            if not blit_can_resolve(fmt):
                avoid = True
    # the resolve destinations: always stored (STORE_OP_STORE), never resolved themselves
    if unaligned and any(a.resolve for a in attachments):
        avoid = True
    return avoid
