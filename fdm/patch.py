"""Per-bin patching of viewports, scissors, FragCoord parameters, loads and stores.

Models ``tu_emit_program_state``/``tu6_emit_viewport_fdm`` slot selection, ``fdm_apply_viewports``,
``fdm_apply_scissors``, ``tu6_emit_viewport``, ``tu6_emit_scissor`` (tu_pipeline.cc),
``fdm_apply_fs_params`` (tu_cmd_buffer.cc), ``fdm_apply_load_coords`` /
``fdm_apply_store_coords`` and the unpatched ``store_3d_blit`` / ``r3d_coords`` (tu_clear_blit.cc),
all in src/freedreno/vulkan/.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeAlias

import attrs
import numpy as np

from turnip_base.errors import DriverAssertion

from .geometry import Rect
from .turnip import (
    F32x4,
    fdm_apply_viewport,
    scissor_transform,
    tu6_emit_scissor,
    tu6_emit_viewport_scissor,
    tu_fdm_per_bin_offset,
)

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]


@attrs.frozen(kw_only=True)
class ViewportState:
    """Pipeline-time viewport routing (``tu_emit_program_state``)."""

    per_view_viewport: bool
    fake_single_viewport: bool
    share_scale: bool
    slot_count: int
    views: int
    per_layer_viewport: bool = False   # VALVE layered: gl_Layer copied to gl_ViewportIndex

    def slot_view(self, slot: int) -> int:
        """The view whose scale and bin a slot uses."""
        return 0 if (self.share_scale or self.views == 1) else slot

    def slot_user_index(self, slot: int) -> int:
        """Which user viewport/scissor a slot transforms."""
        return 0 if self.fake_single_viewport else slot


def viewport_state(views: int, user_viewports: int, writes_viewport_index: bool,
                   multiview_per_view_viewports: bool, has_per_view_viewport: bool, *,
                   fdm_per_layer: bool = False, max_fdm_layers: int = 1) -> ViewportState:
    """``tu_emit_program_state`` (tu_pipeline.cc, pop-os @ 26e5c1f9) with the fragment shader
    compiled for FDM.  ``views`` is ``tu_fdm_num_layers``.

    VK_VALVE_fragment_density_map_layered (``fdm_per_layer``, a non-multiview pass):
    ``tu_nir_lower_layered_fdm`` (tu_shader.cc, pop-os @ 025a3b4d) makes the last
    pre-rasterisation stage copy ``gl_Layer`` into ``gl_ViewportIndex`` unless it writes the
    viewport itself (``per_layer_viewport``); the shader then writes the viewport, so
    ``per_view_viewport = !writes_viewport && (QCOM per-view viewports || has_per_view_viewport)``
    is false, ``fake_single_viewport = (per_view_viewport && !QCOM) || per_layer_viewport``,
    ``share_scale = !per_view_viewport && !per_layer_viewport`` (it sets ``rp.shared_viewport``),
    and the slot count is ``max_fdm_layers`` per layer, ``num_views`` per view, else the user
    count (``tu6_emit_viewport_fdm``)."""
    per_layer_viewport = fdm_per_layer and not writes_viewport_index
    writes = writes_viewport_index or per_layer_viewport
    pvv = (not writes) and (multiview_per_view_viewports or has_per_view_viewport)
    fake = (pvv and not multiview_per_view_viewports) or per_layer_viewport
    if per_layer_viewport:
        slots = max_fdm_layers
    elif pvv:
        slots = max(views, 1)
    else:
        slots = user_viewports
    return ViewportState(per_view_viewport=pvv, fake_single_viewport=fake,
                         share_scale=not pvv and not per_layer_viewport, slot_count=slots, views=views,
                         per_layer_viewport=per_layer_viewport)


def viewport_state_without_fdm(views: int, user_viewports: int, writes_viewport_index: bool,
                               multiview_per_view_viewports: bool) -> ViewportState:
    """``tu_emit_program_state`` (tu_pipeline.cc, pop-os @ 26e5c1f9) for a pass whose FDM
    ``tu_render_pass_disable_fdm`` turned off.  ``tu_CreateRenderPass2`` (tu_pass.cc, pop-os @
    c02c8b9f) then leaves ``pass->fragment_density_map.attachment`` unused, so the pipeline gets
    no ``RENDERING_FRAGMENT_DENSITY_MAP_ATTACHMENT_BIT`` and its fragment shader no FDM key
    (``fs.has_fdm`` false, :func:`fdm.lrz.fs_forces_lrz_off`):
    ``per_view_viewport = !writes_viewport && multiviewPerViewViewports`` (the QCOM device feature
    only), ``fake_single_viewport = per_view_viewport && !multiviewPerViewViewports`` = false.
    ``cmd->state.has_fdm`` is false, so the viewports and scissors are not emitted through
    ``tu6_emit_viewport_fdm``/``tu6_emit_scissor_fdm`` (no patchpoint) but directly by
    ``tu6_emit_viewport``/``tu6_emit_scissor``: the user's ``viewport_count`` slots, slot ``i``
    the user's viewport and scissor ``i`` as given (:func:`unpatched_slots`).  (The VALVE
    per-layer lowering is taken as off with the FDM.)"""
    pvv = (not writes_viewport_index) and multiview_per_view_viewports
    return ViewportState(per_view_viewport=pvv, fake_single_viewport=False, share_scale=not pvv,
                         slot_count=user_viewports, views=views)


def bakes_static_viewport(vs: ViewportState, static_viewport: bool, variant: str = "upstream") -> bool:
    """Whether the pass's pipeline carries its static viewports and scissors as pipeline draw
    state that no bin patches: ``tu_pipeline_builder_emit_state`` (src/freedreno/vulkan/
    tu_pipeline.cc) before Mesa 26.2.2 (``variant`` "mesa-26.1": pop-os @ 26e5c1f9, 26.2.0-rc1
    leegao/mesa-26.2 @ 3c34d70f; Mesa 26.1.6 in the box) emits ``tu6_emit_viewport`` and
    ``tu6_emit_scissor`` of the application's viewports into the pipeline when it has all its
    shader state and ``!per_view_viewport && !per_layer_viewport`` (``vs``: every a6xx FDM
    pipeline, an a7xx/a8xx one under a shared viewport); ``tu_emit_draw_state`` then never calls
    ``tu6_emit_viewport_fdm``, so the slots are the user's (:func:`unpatched_slots`) in every bin
    and ``rp.shared_viewport`` is never set (the pass is tiled, scaled and offset as one without a
    shared viewport).  From Mesa 26.2.2 on ("tu: Do not bake static viewport/scissor when FDM is
    enabled", pop-os @ 9cad4086 docs/relnotes/26.2.2.rst; ``variant`` "upstream") static
    viewports take the FDM path like dynamic ones: never baked."""
    return (variant == "mesa-26.1" and static_viewport and not vs.per_view_viewport
            and not vs.per_layer_viewport)


@attrs.frozen(kw_only=True)
class ViewportPatch:
    slot: int
    view: int
    viewport: tuple[float, float, float, float]   # float32 values as emitted (x, y, w, h)
    viewport_scissor: tuple[Pair, Pair]           # GRAS_SC_VIEWPORT_SCISSOR TL, BR
    scissor_offset: Pair                          # fdm_apply_scissors result (offset)
    scissor_extent: Pair                          # ... and uint32 extent (wrapped)
    scissor: tuple[Pair, Pair]                    # GRAS_SC_SCREEN_SCISSOR TL, BR


class UserViewport(Protocol):
    """What the patchpoints read of a user viewport (``fdm.scenario.Viewport``)."""

    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def w(self) -> float: ...
    @property
    def h(self) -> float: ...


#: one slot's patch: (view, user viewport (x, y, w, h), user scissor) -> (patched viewport,
#: (scissor offset, uint32 scissor extent))
SlotPatch: TypeAlias = Callable[[int, tuple[float, float, float, float], Rect4], tuple[F32x4, tuple[Pair, Pair]]]


def _patch_each_slot(vs: ViewportState, user_viewports: Sequence[UserViewport], user_scissors: Sequence[Rect],
                     patch: SlotPatch) -> tuple[ViewportPatch, ...]:
    """The slot routing of ``tu6_emit_viewport_fdm`` / ``tu6_emit_scissor_fdm``: slot ``i`` takes
    view ``vs.slot_view(i)`` and user viewport/scissor ``vs.slot_user_index(i)``; ``patch``
    transforms them, and the registers follow (``tu6_emit_viewport_scissor``, ``tu6_emit_scissor``)."""
    out: list[ViewportPatch] = []
    for i in range(vs.slot_count):
        v = vs.slot_view(i)
        u = vs.slot_user_index(i)
        vp = user_viewports[u]
        pv, (off, ext) = patch(v, (vp.x, vp.y, vp.w, vp.h), user_scissors[u].as_tuple())
        out.append(ViewportPatch(slot=i, view=v, viewport=(float(pv[0]), float(pv[1]), float(pv[2]), float(pv[3])),
                                 viewport_scissor=tu6_emit_viewport_scissor(pv), scissor_offset=off,
                                 scissor_extent=ext, scissor=tu6_emit_scissor(off, ext)))
    return tuple(out)


def unpatched_slots(vs: ViewportState, user_viewports: Sequence[UserViewport],
                    user_scissors: Sequence[Rect]) -> tuple[ViewportPatch, ...]:
    """The slots of a pass without FDM patchpoints (:func:`viewport_state_without_fdm`):
    ``tu6_emit_viewport`` and ``tu6_emit_scissor`` (tu_pipeline.cc, pop-os @ 26e5c1f9) of user
    viewport and scissor ``i`` for slot ``i``, untransformed (the scissor is not intersected
    with any bin)."""
    out: list[ViewportPatch] = []
    for i in range(vs.slot_count):
        vp = user_viewports[i]
        pv = (np.float32(vp.x), np.float32(vp.y), np.float32(vp.w), np.float32(vp.h))
        x, y, w, h = user_scissors[i].as_tuple()
        off: Pair = (x, y)
        ext: Pair = (w, h)
        out.append(ViewportPatch(slot=i, view=vs.slot_view(i), viewport=(float(pv[0]), float(pv[1]), float(pv[2]),
                                                                            float(pv[3])),
                                 viewport_scissor=tu6_emit_viewport_scissor(pv), scissor_offset=off,
                                 scissor_extent=ext, scissor=tu6_emit_scissor(off, ext)))
    return tuple(out)


def patch_slots(vs: ViewportState, user_viewports: Sequence[UserViewport], user_scissors: Sequence[Rect],
                frag_areas: Sequence[Pair], bins: Sequence[Rect4], common_bin_start: Pair,
                hw_offsets: Sequence[Pair]) -> tuple[ViewportPatch, ...]:
    """Apply the viewport and scissor patchpoints for one bin (or the binning pass)."""
    def patch(v: int, vp: tuple[float, float, float, float], sc: Rect4) -> tuple[F32x4, tuple[Pair, Pair]]:
        fa: Pair = (frag_areas[v][0], frag_areas[v][1])
        b, hw = bins[v], hw_offsets[v]
        pv = fdm_apply_viewport(vp, fa, b, common_bin_start, hw)
        tile_start = (common_bin_start[0] - hw[0], common_bin_start[1] - hw[1])
        return pv, scissor_transform(sc, fa, b, tile_start)
    return _patch_each_slot(vs, user_viewports, user_scissors, patch)


@attrs.frozen(kw_only=True)
class FsParams:
    """Per-view fragment-shader driver constants (``fdm_apply_fs_params``): HW FragCoord is
    ``x / frag_size + frag_offset`` in rendering space; the GMEM transform is identity outside
    custom-resolve subpasses."""

    frag_size: Pair
    frag_offset: Pair
    gmem_scale: tuple[float, float] = (1.0, 1.0)
    gmem_offset: Pair = (0, 0)


def fs_params(frag_areas: Sequence[Pair], bins: Sequence[Rect4], common_bin_start: Pair) -> tuple[FsParams, ...]:
    """One :class:`FsParams` per view (``frag_areas`` and ``bins`` both have one entry per view)."""
    return tuple(FsParams(frag_size=(fa[0], fa[1]),
                          frag_offset=tu_fdm_per_bin_offset(fa, b[:2], common_bin_start))
                 for fa, b in zip(frag_areas, bins, strict=True))


def lower_frag_coord(hw_frag_coord: float, frag_size: int, frag_offset: int) -> np.float32:
    """``lower_fdm_instr`` (src/freedreno/vulkan/tu_shader.cc): ``(FragCoord_hw - offset) * size``."""
    c: np.float32 = np.float32(np.float32(np.float32(hw_frag_coord) - np.float32(frag_offset))
                               * np.float32(frag_size))  # (numpy's stubs make np.float32(...) Any)
    return c


#: the eight float32 VS constants of a 3D blit's rect list, as ``r3d_coords_raw`` loads them:
#: dst x1, y1, src x1, y1, dst x2, y2, src x2, y2 (half-open)
R3dCoords: TypeAlias = tuple[float, float, float, float, float, float, float, float]

#: ``blt_no_coord`` (tu_clear_blit.cc): ``{~0, ~0}``, the "no source" offset of ``r3d_coords``
BLT_NO_COORD: Pair = (-1, -1)


def r3d_coords(dst: Pair, src: Pair, extent: Pair) -> R3dCoords:
    """``r3d_coords`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda, the same in
    26.2.0-rc1): the rect list's coordinates, ``dst`` and ``src`` offsets (``int32_t``) and
    their ends ``offset + extent`` - a signed offset plus an unsigned extent, so the sum is
    ``uint32_t`` - each converted to float32; a ``src`` of :data:`BLT_NO_COORD` reads from 0."""
    sx, sy = src if src != BLT_NO_COORD else (0, 0)
    w, h = extent

    def f(v: int) -> float:
        return float(np.float32(v))
    return (f(dst[0]), f(dst[1]), f(sx), f(sy), f((dst[0] + w) & 0xFFFFFFFF), f((dst[1] + h) & 0xFFFFFFFF),
            f((sx + w) & 0xFFFFFFFF), f((sy + h) & 0xFFFFFFFF))


def store_3d_blit_coords(render_area: Rect4) -> R3dCoords:
    """``store_3d_blit`` (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda, the same in
    26.2.0-rc1): the store of a multisampled attachment draws one rect list per layer over
    ``r3d_coords(render_area.offset, render_area.offset, render_area.extent)`` - the layer's
    render area in framebuffer coordinates, GMEM and sysmem alike.  Nothing patches it per bin
    (``store_3d_blit`` creates no FDM patchpoint, unlike the A2D store's
    ``fdm_apply_store_coords``): every bin draws the same rectangle and the window scissor keeps
    the bin's part.  It is never scaled: a multisampled stored attachment turns the FDM off
    (``tu_render_pass_disable_fdm``), so no pass that reaches it has an FDM."""
    x, y, w, h = render_area
    return r3d_coords((x, y), (x, y), (w, h))


def takes_store_3d_blit(samples_stored: Sequence[tuple[int, bool]], store_unaligned: bool,
                        fdm_enabled: bool) -> bool:
    """Whether a bin's stores include ``store_3d_blit``: ``tu_store_gmem_attachment``
    (src/freedreno/vulkan/tu_clear_blit.cc, pop-os @ 05b96fda and 4ff7b570) stores an attachment
    whose destination has ``samples > 1`` (``samples_stored``: per pass attachment, its samples and
    ``store || store_stencil``) with the 3D blit wherever the fast path is not taken or is taken
    conditionally (an FDM pass on a7xx records both).  Such an attachment is its own GMEM source
    (``a == gmem_a``: no mutability mismatch, no D24S8-to-S8 resolve, no ``blit_can_resolve``
    test), so only ``tu_attachment_store_unaligned`` (``store_unaligned``) or an FDM refuses the fast
    path; and an FDM pass has no such attachment (``tu_render_pass_disable_fdm``)."""
    return any(s > 1 and stored for s, stored in samples_stored) and (store_unaligned or fdm_enabled)


@attrs.frozen(kw_only=True)
class BlitRects:
    """GMEM load (3D blit) and sysmem store (A2D) rectangles of one view, inclusive corners
    for the store, half-open for the load; ``None`` for an empty bin.  ``store_3d``: the
    coordinates of the view's multisampled store (:func:`store_3d_blit_coords`), where the pass
    stores a multisampled attachment through ``store_3d_blit``, else None."""

    load_dst: Rect4 | None   # GMEM (LRZ-space) rectangle x, y, w, h
    load_src: Rect4 | None   # sysmem rectangle
    store_dst: tuple[Pair, Pair]  # A2D destination TL, BR (sysmem)
    store_src: tuple[Pair, Pair]  # source TL, BR in GMEM (rendering space)
    store_3d: R3dCoords | None = None


def blit_rects(frag_areas: Sequence[Pair], bins: Sequence[Rect4], common_bin_start: Pair,
               hw_offsets: Sequence[Pair]) -> tuple[BlitRects, ...]:
    """``fdm_apply_load_coords`` uses ``o'`` of viewport 0 for every view (the blit uses
    viewport 0); ``fdm_apply_store_coords`` upscales GMEM ``[b_cs, b_cs + B.w/fa)`` to ``B``
    (non-subsampled images)."""
    out: list[BlitRects] = []
    cx, cy = common_bin_start
    h0 = hw_offsets[0]
    for fa, b in zip(frag_areas, bins, strict=True):
        x, y, w, h = b
        if w == 0 or h == 0:
            out.append(BlitRects(load_dst=None, load_src=None, store_dst=((1, 1), (0, 0)),
                                 store_src=((1, 1), (0, 0))))
            continue
        if w % fa[0] or h % fa[1]:
            raise DriverAssertion("fdm_apply_load_coords",
                                  f"asserts bin.extent % frag_area == 0: bin extent {(w, h)} is not a multiple of "
                                  f"frag area {tuple(fa)}")
        sw, sh = w // fa[0], h // fa[1]
        out.append(BlitRects(load_dst=(cx - h0[0], cy - h0[1], sw, sh), load_src=(x, y, w, h),
                             store_dst=((x, y), (x + w - 1, y + h - 1)),
                             store_src=((cx, cy), (cx + sw - 1, cy + sh - 1))))
    return tuple(out)


def blit_rects_without_fdm(bins: Sequence[Rect4], common_bin_start: Pair,
                           render_areas: Sequence[Rect4]) -> tuple[BlitRects, ...]:
    """The store rectangles of a pass without FDM: ``tu_store_gmem_attachment``
    (tu_clear_blit.cc, pop-os @ 4ff7b570) with ``!pass->has_fdm`` programs the A2D store (when it
    takes it) with ``r2d_coords(render_area.offset, render_area.offset, render_area.extent)``:
    destination and source are the render area of the view (its own with per-view render areas,
    else the first) in framebuffer coordinates, the same in every bin (no patchpoint; the
    hardware keeps the bin's part).  The load rectangles are :func:`blit_rects`' at frag area 1x1
    (the load is a blit event without FDM: no 3D blit coordinates are programmed)."""
    ones = ((1, 1),) * len(bins)
    out: list[BlitRects] = []
    for v, b in enumerate(blit_rects(ones, bins, common_bin_start, ((0, 0),) * len(bins))):
        x, y, w, h = render_areas[v] if len(render_areas) > 1 else render_areas[0]
        corners = ((x, y), (x + w - 1, y + h - 1))
        out.append(attrs.evolve(b, store_dst=corners, store_src=corners))
    return tuple(out)


def with_store_3d(blits: Sequence[BlitRects], render_areas: Sequence[Rect4]) -> tuple[BlitRects, ...]:
    """The views' rectangles of a pass whose bins store a multisampled attachment through
    ``store_3d_blit`` (:func:`takes_store_3d_blit`), each with that store's
    :func:`store_3d_blit_coords` of its render area (``tu_store_gmem_attachment``: its own with
    per-layer render areas, else the first)."""
    return tuple(attrs.evolve(b, store_3d=store_3d_blit_coords(render_areas[v] if len(render_areas) > 1
                                                               else render_areas[0]))
                 for v, b in enumerate(blits))


# --------------------------------------------------------------------------------------------
# custom-resolve subpasses (VK_EXT_custom_resolve)
#
# In a custom-resolve subpass the patchpoints captured ``custom_resolve = true`` at record time
# (``tu_emit_subpass_custom_resolve`` sets TU_CMD_DIRTY_FDM so they are re-emitted).  HW
# coordinates then live in the space of the attachment being written, whose origin for the bin
# is ``tile_start``: ``subsampled_pos[v].offset`` when the tile was placed by
# ``tu_calc_subsampled`` (``tile->subsampled``), else the framebuffer bin start ``B_v.offset``.
# A view that is not in ``tile->subsampled_views`` is rendered unscaled (fragment area 1).  The
# caller (``layout_solver.custom_resolve``) picks ``tile_start``; these functions are the
# arithmetic.  HW bin scaling is off in the subpass (``GRAS_BIN_FOVEAT``/``RB_BIN_FOVEAT``
# cleared), so no ``o'`` appears anywhere.


def custom_resolve_frag_areas(frag_area: Pair, view_subsampled: bool) -> tuple[Pair, Pair]:
    """``(rendering_frag_area, gmem_frag_area)`` of ``fdm_apply_fs_params``
    (src/freedreno/vulkan/tu_cmd_buffer.cc, pop-os @ 4ff7b570) in a custom-resolve subpass:
    ``(fa, (1,1))`` for a subsampled view (HW space = subsampled space, scaled like GMEM),
    ``((1,1), fa)`` otherwise (HW space unscaled; GMEM is ``fa`` times smaller)."""
    fa: Pair = (frag_area[0], frag_area[1])
    return (fa, (1, 1)) if view_subsampled else ((1, 1), fa)


def fs_params_custom_resolve(frag_area: Pair, bin_rect: Rect4, common_bin_start: Pair, tile_start: Pair,
                             view_subsampled: bool) -> FsParams:
    """One view of ``fdm_apply_fs_params`` (src/freedreno/vulkan/tu_cmd_buffer.cc, pop-os @
    4ff7b570) with ``state->custom_resolve`` set.

    ``frag_size = rendering_fa``, ``frag_offset = tile_start - B.offset / rendering_fa``
    (user FragCoord ``(hw - frag_offset) * frag_size`` is framebuffer space again);
    ``gmem_scale = 1 / gmem_fa`` (``fui(1. / gmem_frag_area)``: a double rounded to float) and
    ``gmem_offset = b_cs - tile_start / gmem_fa`` (GMEM FragCoord ``hw * gmem_scale + gmem_offset``
    in ``lower_fdm_instr``, tu_shader.cc, pop-os @ 025a3b4d, is rendering space: the GMEM bin
    starts at ``b_cs``).  Both offsets go through ``tu_fdm_per_bin_offset``, which asserts the
    exact divisions."""
    rfa, gfa = custom_resolve_frag_areas(frag_area, view_subsampled)
    offset = tu_fdm_per_bin_offset(rfa, bin_rect[:2], tile_start)
    gmem_offset = tu_fdm_per_bin_offset(gfa, tile_start, common_bin_start)
    scale = (float(np.float32(1.0 / gfa[0])), float(np.float32(1.0 / gfa[1])))
    return FsParams(frag_size=rfa, frag_offset=offset, gmem_scale=scale, gmem_offset=gmem_offset)


def viewport_early_out(frag_area: Pair, bin_rect: Rect4, common_bin_start: Pair) -> bool:
    """The first test of a slot in ``fdm_apply_viewports`` (src/freedreno/vulkan/tu_pipeline.cc,
    pop-os @ 26e5c1f9): ``fa == (1,1) && bin.offset == b_cs`` keeps the user viewport as it is.
    It reads the tile's ``fa`` and ``b_cs`` *before* the custom-resolve substitution of
    ``tile_start`` (docs/functions/custom_resolve.md, "Viewport left in framebuffer space")."""
    return tuple(frag_area) == (1, 1) and tuple(bin_rect[:2]) == tuple(common_bin_start)


def viewport_custom_resolve(viewport: tuple[float, float, float, float], frag_area: Pair, bin_rect: Rect4,
                            common_bin_start: Pair, tile_start: Pair, view_subsampled: bool
                            ) -> tuple[np.float32, np.float32, np.float32, np.float32]:
    """One slot of ``fdm_apply_viewports`` (src/freedreno/vulkan/tu_pipeline.cc, pop-os @
    26e5c1f9) with ``state->custom_resolve`` set, outside the binning pass, float32.

    :func:`viewport_early_out` first (user viewport unchanged); otherwise ``fa`` becomes
    ``(1,1)`` for a view that is not subsampled, ``scale = 1.0f / fa``,
    ``o = tu_fdm_per_bin_offset(fa, bin, tile_start)`` with no ``o'`` subtracted, ``x' = scale*x +
    o``, ``w' = w*scale``.  (Evaluated by :func:`fdm.turnip.fdm_apply_viewport` with
    ``b_cs := tile_start`` and ``o' = 0``; its own early-out then returns exactly the values the
    general formula gives.)"""
    vx, vy, vw, vh = viewport
    if viewport_early_out(frag_area, bin_rect, common_bin_start):
        return (np.float32(vx), np.float32(vy), np.float32(vw), np.float32(vh))
    rfa, _ = custom_resolve_frag_areas(frag_area, view_subsampled)
    return fdm_apply_viewport(viewport, rfa, bin_rect, tile_start, (0, 0))


def scissor_custom_resolve(user_scissor: Rect4, frag_area: Pair, bin_rect: Rect4, tile_start: Pair,
                           view_subsampled: bool) -> tuple[Pair, Pair]:
    """One slot of ``fdm_apply_scissors`` (src/freedreno/vulkan/tu_pipeline.cc, pop-os @
    26e5c1f9) with ``state->custom_resolve`` set, outside the binning pass: ``fa`` becomes
    ``(1,1)`` for a view that is not subsampled, ``tile_start`` is not reduced by ``o'``, and the
    user scissor is intersected with ``[tile_start, tile_start + B.extent / fa)``
    (:func:`fdm.turnip.scissor_transform`).  Returns ``(offset, uint32 extent)``."""
    rfa, _ = custom_resolve_frag_areas(frag_area, view_subsampled)
    return scissor_transform(user_scissor, rfa, bin_rect, tile_start)


def patch_slots_custom_resolve(vs: ViewportState, user_viewports: Sequence[UserViewport],
                               user_scissors: Sequence[Rect], frag_areas: Sequence[Pair], bins: Sequence[Rect4],
                               common_bin_start: Pair, tile_starts: Sequence[Pair],
                               subsampled_views: int) -> tuple[ViewportPatch, ...]:
    """The viewport and scissor patchpoints of one bin in a custom-resolve subpass (not the
    binning pass): :func:`viewport_custom_resolve` and :func:`scissor_custom_resolve` per slot,
    routed like :func:`patch_slots` (``tu6_emit_viewport_fdm``/``tu6_emit_scissor_fdm``,
    tu_pipeline.cc, pop-os @ 26e5c1f9).  ``tile_starts`` and ``frag_areas`` have one entry per
    view; ``subsampled_views`` is the tile's mask."""
    def patch(v: int, vp: tuple[float, float, float, float], sc: Rect4) -> tuple[F32x4, tuple[Pair, Pair]]:
        fa: Pair = (frag_areas[v][0], frag_areas[v][1])
        b, start = bins[v], tile_starts[v]
        sub = bool(subsampled_views >> v & 1)
        return (viewport_custom_resolve(vp, fa, b, common_bin_start, start, sub),
                scissor_custom_resolve(sc, fa, b, start, sub))
    return _patch_each_slot(vs, user_viewports, user_scissors, patch)
