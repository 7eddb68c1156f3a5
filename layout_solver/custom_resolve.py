"""What turnip programs per bin for a custom-resolve subpass (VK_EXT_custom_resolve) of an FDM pass.

A custom-resolve subpass (``subpass->custom_resolve``: the second dynamic subpass begun by
``vkCmdBeginCustomResolveEXT``, or a subpass with ``VK_SUBPASS_DESCRIPTION_CUSTOM_RESOLVE_BIT_EXT``)
renders straight into the resolve attachment in sysmem, bin by bin, while the bin's GMEM contents
stay readable as input attachments.  ``tu_emit_subpass_custom_resolve``
(src/freedreno/vulkan/tu_cmd_buffer.cc, pop-os @ 4ff7b570) switches the buffers to sysmem, clears
``GRAS_BIN_FOVEAT``/``RB_BIN_FOVEAT`` (no HW bin-scaling offset ``o'``) and re-emits the FDM
state, whose patchpoints then see ``custom_resolve = true``:

* ``fdm_apply_fs_params`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570) — FragCoord and GMEM FragCoord;
* ``fdm_apply_viewports``, ``fdm_apply_scissors`` (src/freedreno/vulkan/tu_pipeline.cc, pop-os @
  26e5c1f9) — viewport and scissor, outside the binning pass;
* the shader side: ``lower_fdm_instr`` (src/freedreno/vulkan/tu_shader.cc, pop-os @ 025a3b4d),
  ``adjust_gmem_fragcoord = fragment_density_map && custom_resolve``.

Every one of them uses, per view ``v``, the origin of the bin in the written image,
``tile_start = tile->subsampled ? tile->subsampled_pos[v].offset : bins[v].offset`` (subsampled
space when ``tu_calc_subsampled`` placed the tile, framebuffer space otherwise) in place of the
common bin start ``b_cs``; a view that is not in ``tile->subsampled_views`` is rendered with
fragment area 1.  ``tu_calc_tile_config`` (tu_tile_config.cc, pop-os @ aee40d4a) ``calloc``\\ s the
tile configs and ``tu_calc_subsampled`` places only visible views, so a view that is not visible
in a subsampled tile reads ``subsampled_pos[v] = {0, 0}`` (its bin is empty, ``(0,0,0,0)``).

The arithmetic lives in :mod:`fdm.patch` (``fs_params_custom_resolve``,
``patch_slots_custom_resolve``, ...); this module feeds it the subsampled positions of a
:class:`~layout_solver.solver.SubsampledLayout`.  Spec: docs/functions/custom_resolve.md.
"""

from __future__ import annotations

import attrs

from fdm.patch import (
    FsParams,
    ViewportPatch,
    bakes_static_viewport,
    custom_resolve_frag_areas,
    fs_params_custom_resolve,
    patch_slots_custom_resolve,
    unpatched_slots,
    viewport_early_out,
)
from fdm.plan import RenderPassPlan, TilePlan
from turnip_base.errors import ScenarioError

from .solver import SubsampledLayout, SubsampledTile, tu_calc_subsampled

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]


@attrs.frozen(kw_only=True)
class CustomResolveView:
    """One view of one bin in a custom-resolve subpass."""

    view: int
    visible: bool
    subsampled: bool              # the view's bit of tile->subsampled_views
    bin: Rect4                    # B_v, framebuffer space (as in the main subpasses)
    tile_start: Pair              # origin of the bin in the written image
    frag_area: Pair               # the tile's fa for the view
    rendering_frag_area: Pair     # fa of HW space in this subpass ((1,1) unless subsampled)
    gmem_frag_area: Pair          # how much smaller GMEM is than HW space (fa unless subsampled)
    fs: FsParams                  # frag_size, frag_offset, gmem_scale, gmem_offset as emitted


@attrs.frozen(kw_only=True)
class CustomResolvePatch:
    """What the FDM patchpoints of a custom-resolve subpass program for one rendered tile."""

    index: int                    # walk index (TilePlan.index)
    cell: Pair                    # root cell
    pos: Pair
    common_bin_start: Pair        # b_cs (the GMEM bin start; unchanged)
    subsampled: bool              # tile->subsampled: tu_calc_subsampled placed the tile
    views: tuple[CustomResolveView, ...]
    slots: tuple[ViewportPatch, ...]
    #: per slot: the viewport early-out of fdm_apply_viewports fired (user viewport unchanged)
    viewport_early_out: tuple[bool, ...]


def _layout_tile(layout: SubsampledLayout, tile: TilePlan) -> SubsampledTile:
    plan = layout.plan
    if not (0 <= tile.index < len(plan.tiles)) or plan.tiles[tile.index] != tile:
        raise ScenarioError("tile", f"tile {tile.cell} (walk index {tile.index}) is not a tile of the layout's plan")
    st = layout.tile(*tile.cell)
    if st is None:   # a TilePlan is a visible root, which the layout lists
        raise AssertionError(f"layout has no entry for rendered tile {tile.cell} (a bug of the model)")
    return st


def custom_resolve_tile_start(st: SubsampledTile, view: int, bin_rect: Rect4) -> Pair:
    """``tile_start`` of ``fdm_apply_fs_params`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570),
    ``fdm_apply_viewports`` and ``fdm_apply_scissors`` (tu_pipeline.cc, pop-os @ 26e5c1f9) in a
    custom-resolve subpass: ``tile->subsampled ? subsampled_pos[view].offset : bin.offset``
    (``(0, 0)`` for a view never placed in a subsampled tile: ``tu_calc_tile_config``,
    tu_tile_config.cc, pop-os @ aee40d4a, which ``calloc``'s the tile configs)."""
    if not st.subsampled:
        return (bin_rect[0], bin_rect[1])
    r = st.subsampled_pos[view]
    return (0, 0) if r is None else (r.x, r.y)


def custom_resolve_tile(layout: SubsampledLayout, tile: TilePlan) -> CustomResolvePatch:
    """The custom-resolve patchpoints of one rendered tile of ``layout.plan``:
    ``fdm_apply_fs_params`` (src/freedreno/vulkan/tu_cmd_buffer.cc, pop-os @ 4ff7b570) per view,
    ``fdm_apply_viewports`` and ``fdm_apply_scissors`` (src/freedreno/vulkan/tu_pipeline.cc,
    pop-os @ 26e5c1f9) per viewport slot, with ``tile_start`` from the layout
    (:func:`custom_resolve_tile_start`); the user's slots where the pipeline bakes its static
    viewports (:func:`fdm.patch.bakes_static_viewport`, the 26.1 reading)."""
    st = _layout_tile(layout, tile)
    b_cs = tile.common_bin_start
    views: list[CustomResolveView] = []
    for vp in tile.views:
        v = vp.view
        sub = st.is_subsampled(v)
        start = custom_resolve_tile_start(st, v, vp.bin)
        rfa, gfa = custom_resolve_frag_areas(vp.frag_area, sub)
        views.append(CustomResolveView(
            view=v, visible=vp.visible, subsampled=sub, bin=vp.bin, tile_start=start, frag_area=vp.frag_area,
            rendering_frag_area=rfa, gmem_frag_area=gfa,
            fs=fs_params_custom_resolve(vp.frag_area, vp.bin, b_cs, start, sub)))
    sc = layout.plan.scenario
    vs = layout.plan.viewport_state
    frag_areas = tuple(vp.frag_area for vp in tile.views)
    bins = tuple(vp.bin for vp in tile.views)
    if bakes_static_viewport(vs, sc.static_viewport, sc.driver.tu_pipeline_builder_emit_state):
        # before Mesa 26.2.2 the subpass's pipeline bakes its static viewports and scissors like the
        # main subpass's (tu_pipeline_builder_emit_state): no bin patches them, the user's stay
        # (Mesa 26.1.6 in the box: generated gen7-00402, -01312, -01837 and four more)
        slots = unpatched_slots(vs, sc.viewports, sc.scissors)
        early = tuple(False for _ in slots)
    else:
        slots = patch_slots_custom_resolve(vs, sc.viewports, sc.scissors, frag_areas, bins, b_cs,
                                           tuple(cv.tile_start for cv in views), st.subsampled_views)
        early = tuple(viewport_early_out(frag_areas[s.view], bins[s.view], b_cs) for s in slots)
    return CustomResolvePatch(index=tile.index, cell=tile.cell, pos=tile.pos, common_bin_start=b_cs,
                              subsampled=st.subsampled, views=tuple(views), slots=slots, viewport_early_out=early)


def custom_resolve_plan(layout: SubsampledLayout) -> tuple[CustomResolvePatch, ...]:
    """:func:`custom_resolve_tile` for every rendered tile of ``layout.plan``, in walk order."""
    return tuple(custom_resolve_tile(layout, t) for t in layout.plan.tiles)


def custom_resolve_window_scissor(plan: RenderPassPlan) -> tuple[Pair, Pair] | None:
    """The window scissor ``tu_emit_subpass_custom_resolve`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570)
    programs for the subpass, as inclusive corners: with ``tu_enable_fdm_offset`` (the pass has the
    FDM and its density image carries ``VK_IMAGE_CREATE_FRAGMENT_DENSITY_MAP_OFFSET_BIT_EXT``) the
    whole framebuffer plus one tile, ``(0, 0)-(W + T.w - 1, H + T.h - 1)`` (the window scissor is in
    rendering space, shifted against the framebuffer-space bin the subpass writes); otherwise None:
    the bin's own window scissor stays."""
    sc = plan.scenario
    if not (plan.fdm_enabled and sc.fdm_offset_create_flag):
        return None
    (w, h), (tw, th) = sc.framebuffer, plan.tiling.tile_size
    return (0, 0), (w + tw - 1, h + th - 1)


def unsolved_layout(layout: SubsampledLayout) -> SubsampledLayout:
    """``layout`` as the tile configs are when ``tu_calc_subsampled`` does not run: ``tu_calc_tile_config``
    (tu_tile_config.cc, pop-os @ aee40d4a) ``calloc``'s them and calls the solver only for a pass with
    ``fdm_subsampled`` and at most ``TU_SUBSAMPLED_MAX_BINS`` bins, so ``subsampled`` is false and
    ``subsampled_views`` 0: the custom-resolve subpass renders every view unscaled at its
    framebuffer-space bin (``tile_start = B.offset``)."""
    n = layout.plan.scenario.fdm_layers
    tiles = tuple(attrs.evolve(t, subsampled=False, subsampled_views=0, subsampled_border=False,
                               subsampled_pos=(None,) * n) for t in layout.tiles)
    return attrs.evolve(layout, solved=False, tiles=tiles, log=())


def custom_resolve_pass(plan: RenderPassPlan) -> tuple[CustomResolvePatch, ...]:
    """What the custom-resolve subpass of ``plan``'s pass programs per rendered bin, as turnip records
    it: :func:`custom_resolve_plan` of ``tu_calc_subsampled``'s layout when some attachment is subsampled
    (``cmd->state.fdm_subsampled``, ``tu_renderpass_begin``, tu_cmd_buffer.cc, pop-os @ 4ff7b570: the
    subpass writes subsampled space), else of :func:`unsolved_layout` (framebuffer space: "with custom
    resolve to non-subsampled images, framebuffer space", ``fdm_apply_fs_params``)."""
    layout = tu_calc_subsampled(plan)
    return custom_resolve_plan(layout if plan.scenario.subsampled else unsolved_layout(layout))


@attrs.frozen(kw_only=True)
class ViewportScissorMismatch:
    """A slot whose viewport stayed in framebuffer space (the early-out of
    ``fdm_apply_viewports``, tu_pipeline.cc, pop-os @ 26e5c1f9) while its scissor and
    FragCoord use a ``tile_start`` other than ``b_cs``: the geometry is drawn ``shift`` pixels
    up/left of where the scissor, the FragCoord constants and the subsampled metadata put the
    bin (docs/functions/custom_resolve.md)."""

    index: int
    cell: Pair
    slot: int
    view: int
    common_bin_start: Pair
    tile_start: Pair
    shift: Pair                   # tile_start - b_cs: the viewport translation the early-out dropped


def viewport_scissor_mismatches(patches: tuple[CustomResolvePatch, ...]) -> tuple[ViewportScissorMismatch, ...]:
    """Every slot of ``patches`` where the viewport early-out fired although
    ``tile_start != b_cs`` (then ``bin.offset == b_cs`` and ``fa = (1,1)``, so the viewport the
    other patchpoints imply is the user viewport translated by ``tile_start - b_cs``)."""
    out: list[ViewportScissorMismatch] = []
    for p in patches:
        for s, early in zip(p.slots, p.viewport_early_out, strict=True):
            start = p.views[s.view].tile_start
            if early and start != p.common_bin_start:
                out.append(ViewportScissorMismatch(
                    index=p.index, cell=p.cell, slot=s.slot, view=s.view, common_bin_start=p.common_bin_start,
                    tile_start=start, shift=(start[0] - p.common_bin_start[0], start[1] - p.common_bin_start[1])))
    return tuple(out)
