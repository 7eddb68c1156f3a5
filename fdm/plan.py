"""``plan_render_pass``: everything turnip programs for every rendered tile and view."""

from __future__ import annotations

from typing import Literal

import attrs

from turnip_base.errors import DriverAssertion, NotModelled, ScenarioError

from .density import check_density_layers
from .gpu import GpuProfile, gmem_budget
from .lrz import (
    LrzDrawState,
    LrzPassState,
    fs_forces_lrz_off,
    max_fdm_extra_size,
    tu6_calculate_lrz_state,
    tu_lrz_init_state,
)
from .options import MERGING_VARIANTS, choice
from .patch import (
    BlitRects,
    FsParams,
    ViewportPatch,
    ViewportState,
    bakes_static_viewport,
    blit_rects,
    blit_rects_without_fdm,
    fs_params,
    patch_slots,
    takes_store_3d_blit,
    unpatched_slots,
    viewport_state,
    viewport_state_without_fdm,
    with_store_3d,
)
from .render_mode import (
    attachment_set_ops,
    autotune_render_mode,
    depth_has_lrz,
    tu_attachment_store_unaligned,
    tu_choose_gmem_layout,
    tu_render_pass_disable_fdm,
    use_hw_binning,
)
from .scenario import Scenario
from .tile_select import (
    Foveat,
    PassState,
    bin_is_scaled,
    bin_scale_en,
    common_bin_start,
    force_lrz_dis,
    foveat,
    hw_slots,
    use_fast_store,
    view_bins,
    window_scissor,
)
from .tiles import FdmInputs, TileConfig, TileGrid, calc_tile_config, identity_tile_config
from .tiling import GmemConfig, TilingConfig, gmem_config, select_tile_size, tile_count, vsc_config, walk_order
from .turnip import MAX_VIEWPORT_SIZE, binning_pass_bin, tu_bin_offset, tu_fdm_per_bin_offset

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]


@attrs.frozen(kw_only=True)
class ViewPlan:
    """One view of one rendered tile."""

    view: int
    visible: bool
    bin: Rect4            # B_v, framebuffer space
    frag_area: Pair       # UINT32_MAX pair for a density-0 view
    offset: Pair          # o = tu_fdm_per_bin_offset(fa, B_v, b_cs)
    hw_offset: Pair       # o' programmed for this view's HW slot (0 without HW bin scaling)
    bin_offset: Pair      # b_o of the view ((0,0) where bins are not shifted)


@attrs.frozen(kw_only=True)
class TilePlan:
    """One rendered (root) tile, in walk order."""

    index: int                     # position in the walk
    pos: Pair                      # top-left cell
    extent: Pair                   # E, cells (merged extent)
    gmem_extent: Pair              # G
    cell: Pair                     # the root cell (bottom-right of a merged group)
    pipe: int
    slot_mask: int
    visible_views: int
    common_bin_start: Pair         # b_cs
    views: tuple[ViewPlan, ...]
    bin_is_scaled: bool
    bin_scale_en: bool
    foveat: Foveat
    lrz: bool                      # LRZ in effect for this tile: LRZ at the draws and no force_lrz_dis
    force_lrz_dis: bool            # GRAS_SC_BIN_CNTL.force_lrz_dis as emitted (a7xx+)
    window_scissor: tuple[Pair, Pair]
    fast_store: bool
    slots: tuple[ViewportPatch, ...]
    fs_params: tuple[FsParams, ...]
    blits: tuple[BlitRects, ...]


@attrs.frozen(kw_only=True)
class BinningPlan:
    bins: tuple[Rect4, ...]
    window_scissor: tuple[Pair, Pair]
    slots: tuple[ViewportPatch, ...]


@attrs.frozen(eq=False, kw_only=True)
class RenderPassPlan:
    scenario: Scenario
    gmem: GmemConfig
    tiling: TilingConfig
    viewport_state: ViewportState
    shared_viewport: bool
    fdm_offsets: tuple[Pair, ...] | None
    bin_offsets: tuple[Pair, ...]
    grid: TileGrid
    pass_state: PassState
    binning: BinningPlan
    tiles: tuple[TilePlan, ...]
    lrz: LrzPassState              # tu_lrz_init_state: LRZ for the whole pass
    lrz_draw: LrzDrawState         # tu6_calculate_lrz_state: LRZ at the draws (off in a6xx FDM passes)
    fdm_enabled: bool              # pass->has_fdm after tu_render_pass_disable_fdm
    fdm_disabled_reason: str | None
    binning_pass: bool             # use_hw_binning: a binning pass runs before the tiles
    render_mode: Literal["gmem"] = "gmem"
    sysmem_reason: None = None
    #: cmd->state.rp.gmem_disable_reason at the end of the pass (:func:`gmem_disable_reason`):
    #: "TU_DEBUG(GMEM)" where TU_DEBUG=gmem decided, else None
    gmem_disable_reason: str | None = None


def max_tile_size(sc: Scenario, fdm: bool = True) -> Pair:
    """The tile-size bound of the tile walk: ``tile_max`` of the GPU, capped by the framebuffer's
    ``max_tile_{w,h}_constraint`` (tu_util.cc ``tu_tiling_config_update_tile_layout``).
    ``tu_CreateFramebuffer`` (tu_device.cc, pop-os @ 025a3b4d) sets the constraint only ``if
    (pass->has_fdm)`` (``fdm``: a pass whose FDM ``tu_render_pass_disable_fdm`` turned off has
    none), from the first attachment created with the FDM-offset flag and depth/stencil usage:
    its LRZ over-allocation, ``fdl6_lrz_get_max_fdm_extra_size`` =
    :func:`fdm.lrz.max_fdm_extra_size`.  The depth image is taken to have the pass's largest
    sample count and one layer per view.  A stencil-only depth attachment has no LRZ buffer
    (:func:`fdm.render_mode.depth_has_lrz`): no cap."""
    gpu = sc.gpu
    if (not fdm or not sc.fdm_offset_create_flag or sc.depth_load_op == "none"
            or not depth_has_lrz(sc.attachments[-1].cpp)):
        return (gpu.tile_max_w, gpu.tile_max_h)
    samples = max(a.samples for a in sc.attachments)
    cw, ch = max_fdm_extra_size(gpu, sc.framebuffer[0], sc.framebuffer[1], samples, sc.gmem_layers)
    return (min(gpu.tile_max_w, cw), min(gpu.tile_max_h, ch))


#: why turnip renders a pass in sysmem (``gmem_disable_reason`` of ``use_sysmem_rendering``)
SYSMEM_DEBUG = "TU_DEBUG(SYSMEM)"
SYSMEM_NO_FIT = "Can't fit attachments into gmem"
SYSMEM_NO_BINNING = "Too many tiles and HW binning is not possible"
SYSMEM_AUTOTUNE = "Autotune selected sysmem"
#: the reason ``use_sysmem_rendering`` records when ``TU_DEBUG=gmem`` makes it return false (GMEM)
GMEM_DEBUG = "TU_DEBUG(GMEM)"


def _tiling(sc: Scenario, gm: GmemConfig, fdm: bool = True) -> TilingConfig | None:
    """``tu_tiling_config_update_tile_layout`` and the pipe layout; None when no tile size fits
    (``tiling->possible`` is false: the pass renders in sysmem).  ``fdm`` is ``pass->has_fdm``:
    without it there is no square-tile penalty, no 4x8 merging pipes and no FDM-offset VSC
    (``tu_vsc_config``: ``tu_enable_fdm_offset`` needs the FDM)."""
    gpu = sc.gpu
    fdm_merging = fdm and gpu.has_bin_mask and sc.bin_merging != "off"
    t: Pair | None
    if sc.tile_size is not None:
        t = sc.tile_size
        if t[0] % gm.tile_align[0] or t[1] % gm.tile_align[1]:
            raise ScenarioError("tile_size", f"must be a multiple of the pass tile alignment "
                                             f"{gm.tile_align[0]}x{gm.tile_align[1]} (device alignment adjusted for "
                                             f"1-byte attachments and layers), got {t[0]}x{t[1]}")
        selected = False
    else:
        if gm.gmem_pixels == 0:
            return None
        t = select_tile_size(sc.framebuffer, gm.tile_align, max_tile_size(sc, fdm), gm.gmem_pixels,
                             sc.gmem_layers, fdm)
        if t is None:
            return None
        selected = True
    tc = tile_count(sc.framebuffer, t, sc.fdm_offset_create_flag and fdm)
    vsc = vsc_config(tc, gpu.num_vsc_pipes, fdm_merging)
    return TilingConfig(tile_size=t, vsc=vsc, tile_size_selected=selected)


def sysmem_reason(sc: Scenario, tiling: TilingConfig | None, fdm_enabled: bool = True) -> str | None:
    """``use_sysmem_rendering`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570) for the reasons a scenario
    can express, in the driver's order: ``TU_DEBUG=sysmem``; tiling impossible (attachments do
    not fit GMEM, or no tile size does); ``TU_DEBUG=gmem`` forces GMEM from here on; too many
    tiles (more than 2: ``binning_useful``) and HW binning impossible for the VSC in use;
    autotune (:func:`fdm.render_mode.autotune_render_mode`: GMEM for an FDM pass, sysmem for a
    pass without FDM and fewer than 5 draws, else the bandwidth estimate without history).
    None: the pass renders in GMEM.  (An empty render area, tessellation, feedback loops,
    non-framebuffer-space barriers, transform feedback, primitive queries and autotune history
    are outside the scenario: docs/decisions.md.)  The reason is :func:`gmem_disable_reason`'s,
    which a GMEM pass has too under ``TU_DEBUG=gmem``."""
    reason = gmem_disable_reason(sc, tiling, fdm_enabled)
    return None if reason == GMEM_DEBUG else reason


def gmem_disable_reason(sc: Scenario, tiling: TilingConfig | None, fdm_enabled: bool = True) -> str | None:
    """``cmd->state.rp.gmem_disable_reason`` as ``use_sysmem_rendering`` (tu_cmd_buffer.cc, pop-os
    @ 4ff7b570, Mesa 26.2.0-rc3) leaves it, the text turnip's ``end_render_pass`` tracepoint
    prints as ``tilingDisableReason`` (``tu_trace_end_render_pass``; None: the empty string it
    prints where no reason was set).  Each reason of :func:`sysmem_reason` is set where that
    check returns true (sysmem); ``TU_DEBUG=gmem``, reached after the tiling and before the
    binning and autotune checks, sets :data:`GMEM_DEBUG` and returns false: a GMEM pass with a
    reason.  Where the autotuner picks GMEM no reason is set.  Mesa 26.1.6 sets the same texts
    at the same checks (the box: ``box check --mesa 26.1``)."""
    if "sysmem" in sc.tu_debug:
        return SYSMEM_DEBUG
    if tiling is None:
        return SYSMEM_NO_FIT
    if "gmem" in sc.tu_debug:
        return GMEM_DEBUG
    tc = tiling.vsc.tile_count
    if not tiling.vsc.binning_possible and tc[0] * tc[1] > 2:
        return SYSMEM_NO_BINNING
    areas = tuple((r.w, r.h) for r in sc.render_areas)
    # pass->num_views is 0 for a pass that is not multiview (util_last_bit of an empty mask)
    if autotune_render_mode(fdm_enabled, sc.draws, sc.attachments, areas, sc.views if sc.views > 1 else 0,
                            sc.layers) == "sysmem":
        return SYSMEM_AUTOTUNE
    return None


@attrs.frozen(eq=False, kw_only=True)
class SysmemPlan:
    """An FDM pass that turnip renders in sysmem (``tu_cmd_render_sysmem``): the FDM is never
    sampled and no bin is rendered; every patchpoint keeps the value it was given at record
    time (``_tu_create_fdm_bin_patchpoint``, tu_cmd_buffer.h): frag area 1x1 for each of
    ``max(num_views, 1)`` views, bins ``(0, 0)-(16384, 16384)``, common bin start and HW offsets
    0.  So user viewports pass unchanged, scissors are clamped to ``[0, 16384)``, FragCoord is
    the hardware's and ``FragSizeEXT`` is 1x1: the pass renders at full rate.  A pass whose FDM
    ``tu_render_pass_disable_fdm`` turned off (``fdm_enabled`` false) records no patchpoint and
    its pipeline is not compiled for FDM: its slots are the user's viewports and scissors as
    given, one per user viewport (:func:`fdm.patch.viewport_state_without_fdm`)."""

    scenario: Scenario
    render_mode: Literal["sysmem"] = "sysmem"
    sysmem_reason: str
    fdm_enabled: bool                  # pass->has_fdm after tu_render_pass_disable_fdm
    fdm_disabled_reason: str | None
    binning_pass: bool = False         # no binning pass in sysmem
    gmem: GmemConfig
    tiling: TilingConfig | None       # the tiling turnip computed (None: no tile size fits)
    viewport_state: ViewportState
    shared_viewport: bool
    lrz: LrzPassState
    lrz_draw: LrzDrawState             # tu6_calculate_lrz_state: LRZ at the draws
    bin: Rect4                         # the dummy bin every view's patchpoints see
    frag_areas: tuple[Pair, ...]       # (1, 1) per view
    slots: tuple[ViewportPatch, ...]
    fs_params: tuple[FsParams, ...]
    tiles: tuple[TilePlan, ...] = ()   # none: nothing is rendered per bin

    @property
    def gmem_disable_reason(self) -> str:
        """``cmd->state.rp.gmem_disable_reason``: the sysmem reason (:func:`gmem_disable_reason`)."""
        return self.sysmem_reason


#: the bin of the record-time patchpoint application (``MAX_VIEWPORT_SIZE`` square at the origin)
SYSMEM_BIN: Rect4 = (0, 0, MAX_VIEWPORT_SIZE, MAX_VIEWPORT_SIZE)


def _lrz(sc: Scenario, fdm_enabled: bool) -> tuple[LrzPassState, LrzDrawState]:
    """``tu_lrz_init_state`` for the pass, then ``tu6_calculate_lrz_state`` at its draws with the
    fragment shader's ``TU_LRZ_FORCE_DISABLE_LRZ`` of an FDM pipeline on a6xx.  A stencil-only
    depth attachment (``S8_UINT``) has no LRZ buffer, which ``tu_lrz_init_state`` checks first
    (:func:`fdm.render_mode.depth_has_lrz`)."""
    if sc.depth_load_op != "none" and not depth_has_lrz(sc.attachments[-1].cpp):
        lrz = LrzPassState(valid=False, reason="the depth attachment is S8_UINT (stencil only): no LRZ buffer")
    else:
        lrz = tu_lrz_init_state(sc.gpu, sc.depth_load_op, sc.fdm_offset_create_flag)
    return lrz, tu6_calculate_lrz_state(sc.gpu, lrz, fs_forces_lrz_off(sc.gpu, fdm_enabled))


def _viewport_state(sc: Scenario, views: int, fdm: bool) -> ViewportState:
    """The pipeline's viewport routing: compiled for FDM (``fs.has_fdm``) exactly when the pass
    keeps its FDM (:func:`fdm.patch.viewport_state`), else :func:`fdm.patch.viewport_state_without_fdm`."""
    if not fdm:
        return viewport_state_without_fdm(views, len(sc.viewports), sc.writes_viewport_index,
                                          sc.multiview_per_view_viewports)
    return viewport_state(views, len(sc.viewports), sc.writes_viewport_index, sc.multiview_per_view_viewports,
                          sc.gpu.has_per_view_viewport, fdm_per_layer=sc.fdm_per_layer and sc.views == 1,
                          max_fdm_layers=sc.max_fdm_layers)


def _baked(sc: Scenario, vs: ViewportState, fdm: bool) -> bool:
    """Whether an FDM pass's pipeline bakes its static viewports unpatched
    (:func:`fdm.patch.bakes_static_viewport`, ``[driver] tu_pipeline_builder_emit_state``)."""
    return fdm and bakes_static_viewport(vs, sc.static_viewport, sc.driver.tu_pipeline_builder_emit_state)


def _sysmem_plan(sc: Scenario, gm: GmemConfig, tiling: TilingConfig | None, reason: str,
                 fdm_disabled_reason: str | None) -> SysmemPlan:
    fdm = fdm_disabled_reason is None
    # the record-time application sees MAX2(pass->num_views, 1) views, not tu_fdm_num_layers
    n = max(sc.views, 1)
    vs = _viewport_state(sc, n, fdm)
    baked = _baked(sc, vs, fdm)
    ones = ((1, 1),) * n
    bins = (SYSMEM_BIN,) * n
    zeros = ((0, 0),) * n
    lrz, lrz_draw = _lrz(sc, fdm)
    slots = (patch_slots(vs, sc.viewports, sc.scissors, ones, bins, (0, 0), zeros) if fdm and not baked
             else unpatched_slots(vs, sc.viewports, sc.scissors))
    return SysmemPlan(scenario=sc, sysmem_reason=reason, fdm_enabled=fdm,
                      fdm_disabled_reason=fdm_disabled_reason, gmem=gm, tiling=tiling, viewport_state=vs,
                      shared_viewport=vs.share_scale and not baked, lrz=lrz, lrz_draw=lrz_draw,
                      bin=SYSMEM_BIN, frag_areas=ones, slots=slots, fs_params=fs_params(ones, bins, (0, 0)))


@attrs.frozen(eq=False, kw_only=True)
class _GmemPass:
    """What ``tu_cmd_render_tiles`` sets up before its tile loop (shared by
    :func:`plan_render_pass` and :func:`plan_bins`)."""

    gm: GmemConfig
    tiling: TilingConfig
    vs: ViewportState
    grid: TileGrid
    st: PassState
    bin_offsets: tuple[Pair, ...]
    fdm_disabled_reason: str | None   # None: the FDM applies (pass->has_fdm)
    baked: bool = False               # static viewports baked unpatched (fdm.patch.bakes_static_viewport)


def _gmem_layout_avoid_ccu(sc: Scenario, fdm_enabled: bool) -> bool | None:
    """``tu_choose_gmem_layout`` (tu_clear_blit.cc, pop-os @ 4ff7b570) for the scenario
    (:func:`fdm.render_mode.tu_choose_gmem_layout`): an FDM pass always uses
    ``TU_GMEM_LAYOUT_AVOID_CCU``; a pass without FDM uses it when a stored attachment's render
    area is off ``gmem_align`` (not at the image edge) or a resolved attachment's format cannot be
    resolved by a blit event, else ``FULL``.  The attachments' images are the framebuffer's size;
    the store checks every per-view render area, or the first.  None: unknown (a resolved
    attachment of a ``cpp`` with no modelled format)."""
    areas = sc.render_areas if len(sc.render_areas) > 1 else sc.render_areas[:1]
    return tu_choose_gmem_layout(fdm_enabled, sc.attachments, sc.depth_load_op != "none",
                                 tuple(r.as_tuple() for r in areas), sc.framebuffer,
                                 (sc.gpu.gmem_align_w, sc.gpu.gmem_align_h))


def _gmem_and_tiling(sc: Scenario, fdm: bool, avoid_ccu: bool) -> tuple[GmemConfig, TilingConfig | None]:
    gm = gmem_config(tuple(a.cpp * a.samples for a in sc.attachments), sc.gpu.tile_align,
                     gmem_budget(sc.gpu, avoid_ccu=avoid_ccu), sc.gmem_layers)
    return gm, _tiling(sc, gm, fdm)


def _gmem_pass(sc: Scenario) -> _GmemPass | SysmemPlan:
    """The tile configuration of a GMEM pass, or the :class:`SysmemPlan` when
    ``use_sysmem_rendering`` decides for sysmem.  A pass whose FDM ``tu_render_pass_disable_fdm``
    turned off is planned as turnip plans a pass without FDM (``tu_cmd_render_tiles`` with
    ``has_fdm`` false): the FULL GMEM layout, no FDM-offset VSC, every cell of the grid rendered
    with frag area 1x1, no offsets, no patchpoints."""
    gpu: GpuProfile = sc.gpu
    layers = sc.gmem_layers
    disabled = tu_render_pass_disable_fdm(sc.attachments)
    fdm = disabled is None
    avoid_ccu = _gmem_layout_avoid_ccu(sc, fdm)
    gm, tiling_or_none = _gmem_and_tiling(sc, fdm, bool(avoid_ccu))
    reason = sysmem_reason(sc, tiling_or_none, fdm)
    if avoid_ccu is None:
        # the layout is unknown: the plan stands only where both layouts give the same sysmem
        # decision (its tile size and GMEM figures are then the FULL layout's)
        _, other = _gmem_and_tiling(sc, fdm, True)
        if reason is None or sysmem_reason(sc, other, fdm) != reason:
            raise NotModelled("tu_choose_gmem_layout", "a pass without FDM (tu_render_pass_disable_fdm) that "
                                                       "resolves an attachment of a cpp with no modelled format: "
                                                       "whether a blit event can resolve it decides its GMEM layout")
    if reason is not None:
        return _sysmem_plan(sc, gm, tiling_or_none, reason, disabled)
    assert tiling_or_none is not None  # sysmem_reason returns a reason for every None tiling
    tiling = tiling_or_none
    T = tiling.tile_size
    # tu_fdm_num_layers: views, or per-layer FDM layers (pass->has_layered_fdm is only set with the FDM)
    nv = sc.fdm_layers if fdm else max(sc.views, 1)
    vs = _viewport_state(sc, nv, fdm)
    if vs.per_layer_viewport and vs.slot_count > nv:
        # tu6_emit_tile_select hands the patchpoints bins[views] and frag areas of `views`
        # layers; the slots past them read bins[] out of bounds and a zeroed frag area
        # (tu_fdm_per_bin_offset divides by 0): undefined behaviour (docs/findings.md, finding p)
        raise DriverAssertion("fdm_apply_viewports", f"max_fdm_layers {vs.slot_count} > framebuffer layers {nv}: "
                                                     f"viewport slots {nv}..{vs.slot_count - 1} read bins[] past "
                                                     f"its {nv} entries and divide by a zero frag area")
    # a pipeline that bakes its static viewports never reaches tu6_emit_viewport_fdm, which sets
    # rp.shared_viewport (fdm.patch.bakes_static_viewport)
    baked = _baked(sc, vs, fdm)
    shared = vs.share_scale and not baked
    # "If not using FDM make sure not to accidentally apply the offsets" (tu_cmd_render_tiles)
    offsets = sc.fdm_offsets if fdm else None
    inp = FdmInputs(fb_size=sc.framebuffer, tile_size=T, views=nv, density=sc.density,
                    render_areas=sc.render_areas, fdm_offsets=offsets, shared_viewport=shared)
    if fdm:
        grid = calc_tile_config(inp, tiling.vsc, merging=choice("bin_merging", sc.bin_merging, MERGING_VARIANTS),
                                has_bin_mask=gpu.has_bin_mask, has_abs_bin_mask=gpu.has_abs_bin_mask)
    else:
        grid = identity_tile_config(inp, tiling.vsc)
    st = PassState(fb_size=sc.framebuffer, tile_size=T, views=nv, layers=layers, fdm_offsets=offsets,
                   shared_viewport=shared, has_hw_bin_scaling=gpu.has_hw_bin_scaling, chip=gpu.chip,
                   has_fdm_patchpoints=fdm)
    bin_offsets = tuple(tu_bin_offset(u, T) for u in offsets) if offsets else ((0, 0),) * nv
    return _GmemPass(gm=gm, tiling=tiling, vs=vs, grid=grid, st=st, bin_offsets=bin_offsets,
                     fdm_disabled_reason=disabled, baked=baked)


def _rendered_tiles(g: _GmemPass) -> list[TileConfig]:
    """The root tiles ``tu_cmd_render_tiles`` renders, in walk order: with the FDM those visible
    in some view; without it every cell (its visibility is computed, but nothing skips it)."""
    fdm = g.fdm_disabled_reason is None
    out = []
    for cell in walk_order(g.tiling.vsc):
        t = g.grid.cell(*cell)
        if t.is_root and (t.visible_views != 0 or not fdm):
            out.append(t)
    return out


def plan_render_pass(sc: Scenario) -> RenderPassPlan | SysmemPlan:
    """Model ``tu_cmd_render`` for an FDM render pass.  ``use_sysmem_rendering`` decides first
    (:func:`sysmem_reason`): a sysmem pass gives a :class:`SysmemPlan`.  A GMEM pass gives a
    :class:`RenderPassPlan` (``tu_cmd_render_tiles``): tile configuration, then for every rendered
    root tile in walk order what ``tu6_emit_tile_select`` and the patchpoints program."""
    g = _gmem_pass(sc)
    if isinstance(g, SysmemPlan):
        return g
    if g.fdm_disabled_reason is None:
        check_density_layers(sc.density, sc.fdm_layers)  # the tiles sample every FDM layer
    T, nv, vs, st, bin_offsets = g.tiling.tile_size, g.st.views, g.vs, g.st, g.bin_offsets
    shared = st.shared_viewport

    # binning pass
    shifted = st.fdm_offsets is not None and not shared
    bbins = tuple(binning_pass_bin(sc.framebuffer, bin_offsets[v] if shifted else None) for v in range(nv))
    has_off = st.fdm_offsets is not None
    bws = ((0, 0), (sc.framebuffer[0] + (T[0] if has_off else 0) - 1, sc.framebuffer[1] + (T[1] if has_off else 0) - 1))
    ones = ((1, 1),) * nv
    zeros = ((0, 0),) * nv
    bslots = (patch_slots(vs, sc.viewports, sc.scissors, ones, bbins, (0, 0), zeros)
              if st.has_fdm_patchpoints and not g.baked else unpatched_slots(vs, sc.viewports, sc.scissors))
    binning = BinningPlan(bins=bbins, window_scissor=bws, slots=bslots)

    lrz, lrz_draw = _lrz(sc, g.fdm_disabled_reason is None)
    tiles = [_tile_plan(i, t, st, vs, sc, bin_offsets, lrz_draw, g.baked) for i, t in enumerate(_rendered_tiles(g))]
    return RenderPassPlan(scenario=sc, gmem=g.gm, tiling=g.tiling, viewport_state=vs, shared_viewport=shared,
                          fdm_offsets=st.fdm_offsets, bin_offsets=bin_offsets, grid=g.grid, pass_state=st,
                          binning=binning, tiles=tuple(tiles), lrz=lrz, lrz_draw=lrz_draw,
                          fdm_enabled=g.fdm_disabled_reason is None,
                          fdm_disabled_reason=g.fdm_disabled_reason, binning_pass=use_hw_binning(g.tiling.vsc),
                          gmem_disable_reason=gmem_disable_reason(sc, g.tiling, g.fdm_disabled_reason is None))


@attrs.frozen(kw_only=True)
class TileBins:
    """The cells and the per-view bins and fragment areas of one rendered tile: the fields
    ``pos``, ``extent`` and ``views[v].bin`` / ``.frag_area`` / ``.visible`` of its
    :class:`TilePlan`, without the registers."""

    pos: Pair
    extent: Pair
    bins: tuple[Rect4, ...]
    frag_areas: tuple[Pair, ...]
    visible: tuple[bool, ...]


@attrs.frozen(kw_only=True)
class PassBins:
    """:func:`plan_bins`: the bins of every rendered tile in walk order."""

    bin_offsets: tuple[Pair, ...]
    tiles: tuple[TileBins, ...]


def plan_bins(sc: Scenario) -> PassBins | SysmemPlan:
    """The bins and fragment areas :func:`plan_render_pass` gives every rendered tile and view
    (the same values, and the same refusals), without patching viewports, scissors and
    registers: about half its time, for planning many offsets of one pass (the layout page's
    FDM-offset sweep).  Tested against :func:`plan_render_pass` on generated scenarios."""
    g = _gmem_pass(sc)
    if isinstance(g, SysmemPlan):
        return g
    nv = g.st.views
    zeros = ((0, 0),) * nv
    tiles = []
    for t in _rendered_tiles(g):
        bins = _view_bins(t, g.st)
        # the assertions of the per-tile programming that depend on bins and areas:
        # tu_fdm_per_bin_offset and fdm_apply_load_coords (hw_slots' o' cannot refuse here:
        # b_cs is a non-negative multiple of the tile size)
        b_cs = common_bin_start(t, g.st)
        for v in range(nv):
            tu_fdm_per_bin_offset(t.frag_areas[v], bins[v][:2], b_cs)
        blit_rects(t.frag_areas, bins, b_cs, zeros)
        tiles.append(TileBins(pos=t.pos, extent=t.extent, bins=tuple(bins[:nv]),
                              frag_areas=tuple(t.frag_areas[v] for v in range(nv)),
                              visible=tuple(t.visible(v) for v in range(nv))))
    return PassBins(bin_offsets=g.bin_offsets, tiles=tuple(tiles))


def _store_3d(sc: Scenario) -> bool:
    """Whether a bin of a pass without FDM stores a multisampled attachment with ``store_3d_blit``
    (:func:`fdm.patch.takes_store_3d_blit`): the scenario's attachments (a resolve destination is
    single-sampled: never the 3D path) and ``tu_attachment_store_unaligned`` over the render areas
    the store checks (every per-view one, or the first), on images of the framebuffer's size."""
    areas = sc.render_areas if len(sc.render_areas) > 1 else sc.render_areas[:1]
    unaligned = tu_attachment_store_unaligned(tuple(r.as_tuple() for r in areas), sc.framebuffer,
                                              (sc.gpu.gmem_align_w, sc.gpu.gmem_align_h))
    flags = [attachment_set_ops(a) for a in sc.attachments]
    return takes_store_3d_blit([(f.samples, f.store) for f in flags], unaligned, fdm_enabled=False)


def _view_bins(t: TileConfig, st: PassState) -> tuple[Rect4, ...]:
    """``bins[]`` of ``tu6_emit_tile_select``; without FDM (no patchpoints) none are computed and
    every view renders the tile's own rectangle ``b_cs``, ``T * E``."""
    if st.has_fdm_patchpoints:
        return view_bins(t, st)
    b_cs = common_bin_start(t, st)
    T = st.tile_size
    return ((b_cs[0], b_cs[1], T[0] * t.extent[0], T[1] * t.extent[1]),) * st.views


def _tile_plan(index: int, t: TileConfig, st: PassState, vs: ViewportState, sc: Scenario,
               bin_offsets: tuple[Pair, ...], lrz: LrzDrawState, baked: bool = False) -> TilePlan:
    b_cs = common_bin_start(t, st)
    _, hw_offs = hw_slots(t, st)
    view_hw = tuple(hw_offs[v] for v in range(st.views))
    shifted = st.fdm_offsets is not None and not st.shared_viewport
    if not st.has_fdm_patchpoints:
        # a pass without FDM: tu6_emit_tile_select computes no bins[] (no patchpoints); every view
        # renders the tile's own rectangle, frag area 1x1, and the user's viewports and scissors
        # are emitted unpatched (fdm.patch.unpatched_slots)
        bins = _view_bins(t, st)
        rect = bins[0]
        ones = ((1, 1),) * st.views
        areas = tuple(r.as_tuple() for r in sc.render_areas)
        blits = blit_rects_without_fdm(bins, b_cs, areas)
        views = tuple(ViewPlan(view=v, visible=t.visible(v), bin=rect, frag_area=(1, 1), offset=(0, 0),
                               hw_offset=(0, 0), bin_offset=(0, 0)) for v in range(st.views))
        return TilePlan(
            index=index, pos=t.pos, extent=t.extent, gmem_extent=t.gmem_extent, cell=t.cell, pipe=t.pipe,
            slot_mask=t.slot_mask, visible_views=t.visible_views, common_bin_start=b_cs, views=views,
            bin_is_scaled=False, bin_scale_en=False, foveat=foveat(t, st),
            lrz=lrz.enabled and not force_lrz_dis(t, st), force_lrz_dis=force_lrz_dis(t, st),
            window_scissor=window_scissor(t, st),
            fast_store=True,   # nothing is scaled: every store is the ordinary resolve blit
            slots=unpatched_slots(vs, sc.viewports, sc.scissors),
            fs_params=fs_params(ones, bins, b_cs),
            blits=with_store_3d(blits, areas) if _store_3d(sc) else blits)
    bins = view_bins(t, st)
    views = tuple(
        ViewPlan(view=v, visible=t.visible(v), bin=bins[v], frag_area=t.frag_areas[v],
                 offset=tu_fdm_per_bin_offset(t.frag_areas[v], bins[v][:2], b_cs), hw_offset=view_hw[v],
                 bin_offset=bin_offsets[v] if shifted else (0, 0))
        for v in range(st.views))
    return TilePlan(
        index=index, pos=t.pos, extent=t.extent, gmem_extent=t.gmem_extent, cell=t.cell, pipe=t.pipe,
        slot_mask=t.slot_mask, visible_views=t.visible_views, common_bin_start=b_cs, views=views,
        bin_is_scaled=bin_is_scaled(t, st), bin_scale_en=bin_scale_en(t, st), foveat=foveat(t, st),
        lrz=lrz.enabled and not force_lrz_dis(t, st), force_lrz_dis=force_lrz_dis(t, st),
        window_scissor=window_scissor(t, st),
        fast_store=use_fast_store(t, st),
        slots=(unpatched_slots(vs, sc.viewports, sc.scissors) if baked
               else patch_slots(vs, sc.viewports, sc.scissors, t.frag_areas, bins, b_cs, view_hw)),
        fs_params=fs_params(t.frag_areas, bins, b_cs),
        blits=blit_rects(t.frag_areas, bins, b_cs, view_hw))
