"""The model's plan beside what turnip programmed: one :class:`Difference` per disagreeing value.

Both sides are put in the register domain before they are compared, with the box's own reading
of the register fields (:mod:`turnip_box.registers`) and of how a ``VkViewport`` becomes
``GRAS_CL_VIEWPORT`` (``tu6_emit_viewport``: ``scale = width / 2``, ``offset = x + scale`` in
float32).  Nothing here calls the model's arithmetic: the model is read only through its plan.

Compared, per pass: the render mode and turnip's reason for it (its u_trace
``tilingDisableReason``), whether the FDM is on, tile size and count (``VSC_BIN_SIZE``,
``VSC_EXPANDED_BIN_CNTL``), whether a binning pass runs and its window scissor and viewport
slots; per rendered bin, in walk order: the window scissor, ``RB_WINDOW_OFFSET``
(``common_bin_start``), the bin size of ``GRAS_SC_BIN_CNTL`` (tile size x ``gmem_extent``),
``force_lrz_dis`` and LRZ in effect (a7xx and later), ``GRAS_BIN_FOVEAT`` (a7xx and later:
BINSCALEEN, per-slot scales, and ``hw_offset`` when scaling is on: a7xx
``GRAS_BIN_FOVEAT_OFFSET_0..3``, a8xx ``GRAS_BIN_FOVEAT_XY`` and the three arrays written with
the same values), and per viewport slot ``GRAS_CL_VIEWPORT`` offset/scale,
``GRAS_SC_VIEWPORT_SCISSOR`` and ``GRAS_SC_SCREEN_SCISSOR``; the GMEM clears, the fast-store
predicate, the rectangles of the scaled (A2D) and fast (resolve-engine) stores and of the GMEM
loads, where the stream has them, and the coordinates of the 3D-blit stores of multisampled
attachments where the stream or the plan has them; each at its chip's offsets (:func:`turnip_box.registers.table`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from fdm.clears import load_op_clear_coords, tu6_emit_blit_scissor
from fdm.patch import ViewportPatch
from fdm.plan import RenderPassPlan, SysmemPlan, TilePlan

from . import registers as R
from .decode import DriverPass, Phase, Slot
from .utrace import PassTrace

#: the fields in cause-before-effect order: the pass's configuration, then per bin where the bin
#: is and how big, then what the driver computes from the density map (fragment area and offsets
#: of the FS constants, the FOVEAT scales and o'), then what it derives from those (LRZ, the
#: viewports and scissors patched with them), then the stores
CAUSE_ORDER = (
    # why use_sysmem_rendering chose the render mode (turnip's u_trace tilingDisableReason), then the mode
    "render_mode.reason",
    "render_mode", "tile_size", "tile_count", "binning_pass", "binning.window_scissor", "binning.slot_count",
    "binning.slot", "binning.viewport", "binning.viewport_scissor", "binning.scissor", "bins",
    "window_scissor", "common_bin_start", "bin_size",
    "fs_params.patched", "fs_params", "fs_params.frag_area", "fs_params.offset",
    "foveat.binscaleen", "foveat.xscale", "foveat.yscale", "foveat.hw_offset",
    "foveat.hw_offset.RB_BIN_FOVEAT_XY", "foveat.hw_offset.GRAS_BIN_FOVEAT_XY_FDM",
    "foveat.hw_offset.RB_BIN_FOVEAT_XY_FDM",
    "force_lrz_dis", "lrz",
    "slot_count", "slot", "viewport", "viewport_scissor", "scissor",
    # the bin's GMEM clears (load-op clears through the resolve engine's BLIT event), mapped into
    # the bin's rendering space with the same frag area and offset as the viewports
    "gmem_clears",
    "sysmem.slot_count", "sysmem.slot", "sysmem.viewport", "sysmem.viewport_scissor", "sysmem.scissor",
    "fast_store", "store_rects",
    # the 3D-blit store of a multisampled attachment (store_3d_blit): its rect list's coordinates
    "store_3d_coords",
    # the resolve engine's rectangle of each fast store (RB_RESOLVE_CNTL_1/2 at its BLIT event), then
    # the bin's GMEM loads: the 3D blit's patched coordinates (FDM) or the load BLIT event's rectangle
    "fast_store_rects", "load_rects",
    # a pass ending with a custom-resolve subpass (turnip_box.custom_resolve): per bin its draw, the
    # window scissor and FOVEAT the subpass programs, its FS constants, then its viewports and scissors
    "custom_resolve.draws", "custom_resolve.window_scissor", "custom_resolve.foveat.binscaleen",
    "custom_resolve.fs_params", "custom_resolve.fs_params.frag_size", "custom_resolve.fs_params.frag_offset",
    "custom_resolve.fs_params.gmem_scale", "custom_resolve.fs_params.gmem_offset",
    "custom_resolve.slot", "custom_resolve.viewport", "custom_resolve.viewport_scissor", "custom_resolve.scissor",
    # a pass with a subsampled attachment (turnip_box.subsampled): per bin its store into the
    # subsampled layout, then after the bins the metadata and the apron blits
    "subsampled.fast_store", "subsampled.store_resolve", "subsampled.store_a2d",
    "subsampled.metadata.count", "subsampled.metadata.header", "subsampled.metadata.bins", "subsampled.metadata.bin",
    "subsampled.aprons", "subsampled.apron.count", "subsampled.apron",
)


def cause_rank(field: str) -> int:
    """The place of ``field`` in :data:`CAUSE_ORDER` (an unknown field comes last)."""
    try:
        return CAUSE_ORDER.index(field)
    except ValueError:
        return len(CAUSE_ORDER)


@attrs.frozen
class Difference:
    """One value on which the driver and the model disagree."""

    scenario: str
    gpu: str
    field: str
    bin: int | None
    view: int | None
    driver: Any
    model: Any

    def line(self, scenario: bool = True) -> str:
        where = "" if self.bin is None else f"bin {self.bin}"
        where += "" if self.view is None else f"{' ' if where else ''}slot {self.view}"
        head = f"{self.scenario} [{self.gpu}]" + (f" {where}" if where else "") if scenario else where
        return f"{head}{': ' if head else ''}{self.field}: driver {self.driver}, model {self.model}"

    def order(self) -> tuple[int, int, int]:
        """Sort key: the pass-wide values first, then by bin, cause before effect within a bin."""
        return (-1 if self.bin is None else self.bin, cause_rank(self.field),
                -1 if self.view is None else self.view)


def first_cause(diffs: Iterable[Difference]) -> Difference:
    """The difference to read first: the earliest cause (:data:`CAUSE_ORDER`), in the first bin
    where it occurs."""
    return min(diffs, key=lambda d: (cause_rank(d.field), -1 if d.bin is None else d.bin,
                                     -1 if d.view is None else d.view))


def viewport_regs(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    """``(XOFFSET, XSCALE, YOFFSET, YSCALE)`` as ``tu6_emit_viewport`` computes them in float32."""
    f = np.float32
    xs, ys = f(f(w) * f(0.5)), f(f(h) * f(0.5))
    return float(f(f(x) + xs)), float(xs), float(f(f(y) + ys)), float(ys)


def _pair(p: Sequence[int]) -> tuple[int, int]:
    return int(p[0]), int(p[1])


def _rect(r: Sequence[Sequence[int]]) -> tuple[tuple[int, int], tuple[int, int]]:
    return _pair(r[0]), _pair(r[1])


class _Diff:
    def __init__(self, scenario: str, gpu: str) -> None:
        self.scenario, self.gpu = scenario, gpu
        self.out: list[Difference] = []
        self.compared = 0

    def eq(self, field: str, driver: Any, model: Any, bin: int | None = None, view: int | None = None) -> bool:
        self.compared += 1
        if driver != model:
            self.out.append(Difference(self.scenario, self.gpu, field, bin, view, driver, model))
            return False
        return True


def _slots(d: _Diff, driver: Phase, model_slots: Sequence[ViewportPatch], where: int | None,
           prefix: str) -> None:
    if driver.drawn:
        d.eq(f"{prefix}slot_count", driver.slot_count, len(model_slots), where)
    by_slot: dict[int, Slot] = {s.slot: s for s in driver.slots}
    for ms in model_slots:
        ds = by_slot.get(ms.slot)
        if ds is None:
            d.eq(f"{prefix}slot", None, ms.slot, where, ms.slot)
            continue
        got = tuple(R.f32(v) for v in ds.viewport_regs[:4])
        d.eq(f"{prefix}viewport", got, viewport_regs(*ms.viewport), where, ms.slot)
        d.eq(f"{prefix}viewport_scissor", ds.viewport_scissor, _rect(ms.viewport_scissor), where, ms.slot)
        d.eq(f"{prefix}scissor", ds.scissor, _rect(ms.scissor), where, ms.slot)


def _stores(d: _Diff, i: int, b: Phase, t: TilePlan, plan: RenderPassPlan, chip: int) -> None:
    """The fast-store predicate of tile select (a7xx) and, for the
    scaled A2D stores, their rectangles: every stored attachment of every view blits the view's
    ``[b_cs, b_cs + B/fa)`` of GMEM onto ``B`` (``fdm_apply_store_coords``); for the fast stores
    the resolve engine's ``RB_RESOLVE_CNTL_1/2``: the aligned render area (:func:`_render_area_scissors`);
    for the 3D-blit stores of multisampled attachments (``store_3d_blit``) the 8 float32
    coordinates of each rect list, as a set over attachments and layers, against the plan's
    ``store_3d`` of each view - compared wherever either side has one, so a 3D store the model
    does not plan (or plans and the stream lacks) is a difference."""
    if chip >= 7 and b.fast_store_predicate is not None:
        d.eq("fast_store", b.fast_store_predicate, bool(t.fast_store), i)
    got3d = {s[1] for s in b.stores if s[0] == "3d"}
    want3d = {v.store_3d for v in t.blits if v.store_3d is not None}
    if got3d or want3d:
        d.eq("store_3d_coords", sorted(got3d), sorted(want3d), i)
    if not b.stores:
        return  # nothing stored
    # the path taken also depends on per-attachment conditions (an unaligned render area keeps
    # the blit): the rectangles of each path are compared where the stream takes it
    fast = any(s[0] == "fast" for s in b.stores)
    if fast:
        # tu6_emit_tile_store's tu6_emit_blit_scissor(align): every stored attachment and layer
        # resolves its render area aligned to gmem_align, unpatched (no subsampled attachment)
        d.eq("fast_store_rects", sorted({s[1] for s in b.stores if s[0] == "fast"}),
             sorted(_render_area_scissors(plan)), i)
    got = {(s[1], s[2]) for s in b.stores if s[0] == "a2d"}
    if got and not fast:
        # an empty view blits the empty rectangle (1,1)-(0,0), as the model says
        want = {(_rect(v.store_dst), _rect(v.store_src)) for v in t.blits}
        d.eq("store_rects", sorted(got), sorted(want), i)


def _render_area_scissors(plan: RenderPassPlan) -> set[tuple[tuple[int, int], tuple[int, int]]]:
    """``tu6_emit_blit_scissor`` with ``align`` of each layer's render area (``render_areas[v]``
    with per-view render areas, else ``render_areas[0]``), masked into ``a6xx_reg_xy``."""
    sc = plan.scenario
    areas = sc.render_areas
    layers = sc.views if sc.views > 1 else sc.layers
    out = set()
    for v in range(layers):
        r = areas[v] if len(areas) > 1 else areas[0]
        tl, br = tu6_emit_blit_scissor((r.x, r.y, r.w, r.h), (sc.gpu.gmem_align_w, sc.gpu.gmem_align_h))
        out.add((R.reg_xy(tl[0] | tl[1] << 16), R.reg_xy(br[0] | br[1] << 16)))
    return out


def _loads(d: _Diff, i: int, b: Phase, t: TilePlan, plan: RenderPassPlan) -> None:
    """The bin's GMEM loads, as a set over attachments and layers, where the stream has them: the
    3D blits of an FDM pass (``load_3d_blit``, coordinates patched by ``fdm_apply_load_coords``:
    GMEM ``[b_cs - o'_0, + B/fa)`` from sysmem ``B``) against the plan's ``load_dst``/``load_src``
    of each view, an empty bin (the driver's zero-area rectangle, the model's None) left out; the
    BLIT events of a pass without FDM against the aligned render area (``tu6_emit_blit_scissor``,
    not patched)."""
    got3d = {(x[1], x[2]) for x in b.loads if x[0] == "3d" and x[1][0][0] != x[1][1][0] and x[1][0][1] != x[1][1][1]}
    if got3d:
        want = set()
        for bl in t.blits:
            if bl.load_dst is None or bl.load_src is None:
                continue
            (dx, dy, dw, dh), (sx, sy, sw, sh) = bl.load_dst, bl.load_src
            want.add((((int(dx), int(dy)), (int(dx + dw), int(dy + dh))),
                      ((int(sx), int(sy)), (int(sx + sw), int(sy + sh)))))
        d.eq("load_rects", sorted(got3d), sorted(want), i)
    events = {x[1] for x in b.loads if x[0] == "event"}
    if events:
        d.eq("load_rects", sorted(events), sorted(_render_area_scissors(plan)), i)


def _clears(d: _Diff, i: int, b: Phase, t: TilePlan, plan: RenderPassPlan) -> None:
    """The bin's blit-event GMEM clears: each layer ``v`` of each cleared attachment clears
    ``fdm_apply_gmem_clear_coords`` of the render area (``render_areas[v]`` with per-view render
    areas, else ``render_areas[0]``) for view ``v`` of the tile, or the unmapped render area where
    the scenario's ``[driver] tu_clear_gmem_attachment`` is "mesa-26.1" on a GPU without the
    generic clear (:func:`fdm.clears.load_op_clear_coords`), masked into ``a6xx_reg_xy``.
    Compared as a set over attachments and layers, and only where the stream has such clears:
    which clears take the blit event rather than a 3D draw depends on turnip's per-attachment
    conditions the model does not follow."""
    if not b.clears or not plan.fdm_enabled:
        return
    sc = plan.scenario
    areas = sc.render_areas
    layers = sc.views if sc.views > 1 else sc.layers
    want = set()
    for v in range(layers):
        r = areas[v] if len(areas) > 1 else areas[0]
        tl, br = load_op_clear_coords(t, v, (r.x, r.y, r.w, r.h), sc.gpu, sc.driver.tu_clear_gmem_attachment)
        want.add((R.reg_xy(tl[0] | tl[1] << 16), R.reg_xy(br[0] | br[1] << 16)))
    d.eq("gmem_clears", sorted(set(b.clears)), sorted(want), i)


def _bin(d: _Diff, i: int, b: Phase, t: TilePlan, plan: RenderPassPlan, chip: int) -> None:
    d.eq("window_scissor", b.window_scissor, _rect(t.window_scissor), i)
    d.eq("common_bin_start", b.window_offset, _pair(t.common_bin_start), i)
    ts = plan.tiling.tile_size
    d.eq("bin_size", b.bin_size, (ts[0] * t.gmem_extent[0], ts[1] * t.gmem_extent[1]), i)
    # LRZ in effect: GRAS_LRZ_CNTL.ENABLE at the draw and, a7xx, no GRAS_SC_BIN_CNTL.FORCE_LRZ_DIS
    d.eq("lrz", b.lrz_enable and not b.force_lrz_dis, bool(t.lrz), i)
    if chip >= 7:
        d.eq("force_lrz_dis", b.force_lrz_dis, bool(t.force_lrz_dis), i)
        fov = b.foveat or {}
        mf = t.foveat
        d.eq("foveat.binscaleen", fov.get("binscaleen"), bool(mf.binscaleen), i)
        n = len(t.slots)
        d.eq("foveat.xscale", fov.get("xscale", [])[:n], list(mf.xscale)[:n], i)
        d.eq("foveat.yscale", fov.get("yscale", [])[:n], list(mf.yscale)[:n], i)
        if mf.binscaleen:
            # the programmed value: a7xx o' in a 10-bit field with shr 2 (a larger o' wraps; the
            # model warns of it, finding o); a8xx a 14-bit field, and three more arrays with it
            regs = R.table(chip)
            offs = [[regs.hw_offset(c) for c in o] for o in mf.hw_offsets][:n]
            d.eq("foveat.hw_offset", fov.get("offsets", [])[:n], offs, i)
            for name, copy in fov.get("copies", {}).items():
                d.eq(f"foveat.hw_offset.{name}", copy[:n], offs, i)
    _slots(d, b, t.slots, i, "")
    _clears(d, i, b, t, plan)
    _loads(d, i, b, t, plan)
    if not plan.scenario.subsampled:  # a subsampled pass's stores: turnip_box.subsampled
        _stores(d, i, b, t, plan, chip)
    if not plan.fdm_enabled:
        # no FDM, no patchpoint: the constants keep their record-time identity values
        d.eq("fs_params.patched", b.fs_params is not None, False, i)
    elif t.fs_params:
        got = b.fs_params
        want = tuple(((int(f.frag_size[0]), int(f.frag_size[1])), (float(f.frag_offset[0]), float(f.frag_offset[1])))
                     for f in t.fs_params)
        if got is None:
            d.eq("fs_params", None, want, i)
        else:
            for v, (g, m) in enumerate(zip(got, want, strict=True)):
                d.eq("fs_params.frag_area", g[0], m[0], i, v)
                d.eq("fs_params.offset", g[1], m[1], i, v)


def stream_mode(plan: RenderPassPlan | SysmemPlan) -> str:
    """The render mode a stream shows for ``plan``: a GMEM pass that renders no bin and runs no
    binning pass (every tile invisible, at most two bins: ``tu_cmd_render_tiles`` skips them all)
    emits no render-mode marker at all, so its stream reads as ``none`` - not sysmem, whose
    ``RM6_DIRECT_RENDER`` pass and draws would be there (box sweep seed 2611, gen2611-00183)."""
    if isinstance(plan, RenderPassPlan) and not plan.tiles and not plan.binning_pass:
        return "none"
    return plan.render_mode


def differences(name: str, gpu: str, driver: DriverPass, plan: RenderPassPlan | SysmemPlan,
                trace: PassTrace | None = None) -> tuple[list[Difference], int]:
    """Every difference between the decoded pass and the model's plan, and how many values were
    compared.  ``trace`` is turnip's own account of the pass (:mod:`turnip_box.utrace`, None: not
    read): its ``tilingDisableReason`` against the plan's ``gmem_disable_reason``."""
    d = _Diff(name, gpu)
    if trace is not None:
        d.eq("render_mode.reason", trace.reason, plan.gmem_disable_reason)
    d.eq("render_mode", driver.render_mode, stream_mode(plan))
    if isinstance(plan, SysmemPlan) or driver.render_mode != "gmem":
        if driver.sysmem is not None and isinstance(plan, SysmemPlan):
            _slots(d, driver.sysmem, plan.slots, None, "sysmem.")
        return d.out, d.compared
    if driver.tile_size is not None:  # without a binning pass the VSC registers are not written
        d.eq("tile_size", driver.tile_size, _pair(plan.tiling.tile_size))
        d.eq("tile_count", driver.tile_count, _pair(plan.tiling.vsc.tile_count))
    model_binning = plan.binning_pass
    d.eq("binning_pass", driver.binning is not None, model_binning)
    if driver.binning is not None and model_binning:
        d.eq("binning.window_scissor", driver.binning.window_scissor, _rect(plan.binning.window_scissor))
        _slots(d, driver.binning, plan.binning.slots, None, "binning.")
    d.eq("bins", len(driver.bins), len(plan.tiles))
    for i, (b, t) in enumerate(zip(driver.bins, plan.tiles, strict=False)):
        _bin(d, i, b, t, plan, driver.chip)
    return d.out, d.compared


def iter_lines(diffs: Sequence[Difference]) -> Iterator[str]:
    for x in diffs:
        yield x.line()
