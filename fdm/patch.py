"""Per-bin patching of viewports, scissors, FragCoord parameters, loads and stores.

Models ``tu_emit_program_state``/``tu6_emit_viewport_fdm`` slot selection, ``fdm_apply_viewports``,
``fdm_apply_scissors``, ``tu6_emit_viewport``, ``tu6_emit_scissor`` (tu_pipeline.cc),
``fdm_apply_fs_params`` (tu_cmd_buffer.cc) and ``fdm_apply_load_coords`` /
``fdm_apply_store_coords`` (tu_clear_blit.cc), all in src/freedreno/vulkan/.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs
import numpy as np

from .errors import DriverAssertion
from .geometry import Rect
from .turnip import (
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

    def slot_view(self, slot: int) -> int:
        """The view whose scale and bin a slot uses."""
        return 0 if (self.share_scale or self.views == 1) else slot

    def slot_user_index(self, slot: int) -> int:
        """Which user viewport/scissor a slot transforms."""
        return 0 if self.fake_single_viewport else slot


def viewport_state(views: int, user_viewports: int, writes_viewport_index: bool,
                   multiview_per_view_viewports: bool, has_per_view_viewport: bool) -> ViewportState:
    """``per_view_viewport = !writes_viewport && (QCOM per-view viewports || has_per_view_viewport)``
    (the fragment shader is assumed compiled for FDM); ``share_scale`` is its negation (no VALVE
    layered lowering is modelled) and sets ``rp.shared_viewport``."""
    pvv = (not writes_viewport_index) and (multiview_per_view_viewports or has_per_view_viewport)
    fake = pvv and not multiview_per_view_viewports
    slots = max(views, 1) if pvv else user_viewports
    return ViewportState(per_view_viewport=pvv, fake_single_viewport=fake, share_scale=not pvv, slot_count=slots,
                         views=views)


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


def patch_slots(vs: ViewportState, user_viewports: Sequence[UserViewport], user_scissors: Sequence[Rect],
                frag_areas: Sequence[Pair], bins: Sequence[Rect4], common_bin_offset: Pair,
                hw_offsets: Sequence[Pair]) -> tuple[ViewportPatch, ...]:
    """Apply the viewport and scissor patchpoints for one bin (or the binning pass)."""
    out: list[ViewportPatch] = []
    for i in range(vs.slot_count):
        v = vs.slot_view(i)
        u = vs.slot_user_index(i)
        fa: Pair = (frag_areas[v][0], frag_areas[v][1])
        b, hw = bins[v], hw_offsets[v]
        vp = user_viewports[u]
        pv = fdm_apply_viewport((vp.x, vp.y, vp.w, vp.h), fa, b, common_bin_offset, hw)
        tile_start = (common_bin_offset[0] - hw[0], common_bin_offset[1] - hw[1])
        off, ext = scissor_transform(user_scissors[u].as_tuple(), fa, b, tile_start)
        out.append(ViewportPatch(slot=i, view=v, viewport=(float(pv[0]), float(pv[1]), float(pv[2]), float(pv[3])),
                                 viewport_scissor=tu6_emit_viewport_scissor(pv), scissor_offset=off,
                                 scissor_extent=ext, scissor=tu6_emit_scissor(off, ext)))
    return tuple(out)


@attrs.frozen(kw_only=True)
class FsParams:
    """Per-view fragment-shader driver constants (``fdm_apply_fs_params``): HW FragCoord is
    ``x / frag_size + frag_offset`` in rendering space; the GMEM transform is identity outside
    custom-resolve subpasses."""

    frag_size: Pair
    frag_offset: Pair
    gmem_scale: tuple[float, float] = (1.0, 1.0)
    gmem_offset: Pair = (0, 0)


def fs_params(frag_areas: Sequence[Pair], bins: Sequence[Rect4], common_bin_offset: Pair) -> tuple[FsParams, ...]:
    """One :class:`FsParams` per view (``frag_areas`` and ``bins`` both have one entry per view)."""
    return tuple(FsParams(frag_size=(fa[0], fa[1]),
                          frag_offset=tu_fdm_per_bin_offset(fa, b[:2], common_bin_offset))
                 for fa, b in zip(frag_areas, bins, strict=True))


def lower_frag_coord(hw_frag_coord: float, frag_size: int, frag_offset: int) -> np.float32:
    """``lower_fdm_instr`` (src/freedreno/vulkan/tu_shader.cc): ``(FragCoord_hw - offset) * size``."""
    c: np.float32 = np.float32(np.float32(np.float32(hw_frag_coord) - np.float32(frag_offset))
                               * np.float32(frag_size))  # (numpy's stubs make np.float32(...) Any)
    return c


@attrs.frozen(kw_only=True)
class BlitRects:
    """GMEM load (3D blit) and sysmem store (A2D) rectangles of one view, inclusive corners
    for the store, half-open for the load; ``None`` for an empty bin."""

    load_dst: Rect4 | None   # GMEM (LRZ-space) rectangle x, y, w, h
    load_src: Rect4 | None   # sysmem rectangle
    store_dst: tuple[Pair, Pair]  # A2D destination TL, BR (sysmem)
    store_src: tuple[Pair, Pair]  # source TL, BR in GMEM (rendering space)


def blit_rects(frag_areas: Sequence[Pair], bins: Sequence[Rect4], common_bin_offset: Pair,
               hw_offsets: Sequence[Pair]) -> tuple[BlitRects, ...]:
    """``fdm_apply_load_coords`` uses ``o'`` of viewport 0 for every view (the blit uses
    viewport 0); ``fdm_apply_store_coords`` upscales GMEM ``[b_cs, b_cs + B.w/fa)`` to ``B``
    (non-subsampled images)."""
    out: list[BlitRects] = []
    cx, cy = common_bin_offset
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
