"""The custom-resolve subpass (VK_EXT_custom_resolve): what turnip programmed beside the model.

A ``custom_resolve`` scenario is recorded with a last subpass flagged
``VK_SUBPASS_DESCRIPTION_CUSTOM_RESOLVE_BIT_EXT`` (:func:`turnip_box.jobs.job_of`) that draws once
per bin after the main subpass's draws.  ``tu_emit_subpass_custom_resolve`` (tu_cmd_buffer.cc,
pop-os @ 4ff7b570; the same in Mesa 26.2.6 and 26.1.6) switches the buffers to sysmem, clears
``GRAS_BIN_FOVEAT`` (a7xx and later), opens the window scissor when FDM offsets are enabled and
re-emits the FDM state, so each bin's ``CP_MEM_WRITE`` patches hold a second set of viewport,
scissor and FS-constant patchpoints recorded with ``custom_resolve = true``.  This module decodes,
per rendered bin, the registers in effect at the bin's last application draw (the custom-resolve
draw) and the bin's last FS-constants patch (``fdm_apply_fs_params``: per view ``uint frag_size.w,
.h; float frag_offset.x, .y`` and, where the shader reads GMEM through the input attachment,
``float gmem_scale.x, .y, gmem_offset.x, .y``), and compares them with
:func:`layout_solver.custom_resolve.custom_resolve_pass` (the ``custom_resolve.*`` fields of
:data:`turnip_box.compare.CAUSE_ORDER`).

Compared in GMEM bins of a pass with the FDM on; a sysmem pass, or one whose FDM turnip turned off,
has no per-bin custom-resolve patch to compare.
"""

from __future__ import annotations

from typing import Any

import attrs

from fdm.plan import RenderPassPlan, SysmemPlan
from layout_solver.custom_resolve import CustomResolvePatch, custom_resolve_pass, custom_resolve_window_scissor

from . import registers as R
from .compare import Difference, _Diff, _rect, _slots
from .decode import Phase, Slot
from .pm4 import (
    CP_DRAW_INDX_OFFSET,
    DI_PT_RECTLIST,
    BinPhases,
    walk,
)
from .rd import Dump

Corners = tuple[tuple[int, int], tuple[int, int]]


@attrs.frozen(kw_only=True)
class ResolveFs:
    """One view of the custom-resolve FS-constants patch (``fdm_apply_fs_params``)."""

    frag_size: tuple[int, int]
    frag_offset: tuple[float, float]
    #: None where the patch stops after the view's first vec4 pair (no GMEM FragCoord constants)
    gmem_scale: tuple[float, float] | None
    gmem_offset: tuple[float, float] | None


@attrs.frozen(kw_only=True)
class ResolveBin:
    """One rendered bin's custom-resolve draw as the stream programs it."""

    draws: int                                 # application draws in the bin (main subpass + 1)
    window_scissor: Corners
    binscaleen: bool | None                    # a7xx and later: GRAS_BIN_FOVEAT.BINSCALEEN
    slots: tuple[Slot, ...]
    fs: tuple[ResolveFs, ...] | None           # None: the bin has no second FS-constants patch


def _is_fs_params(values: tuple[int, ...]) -> bool:
    """An FS-constants patch: raw constants (no type-4/type-7 packet header), whole vec4s."""
    return len(values) >= 4 and len(values) % 4 == 0 and values[0] >> 28 not in (4, 7)


def fs_of(values: tuple[int, ...], views: int) -> tuple[ResolveFs, ...]:
    """The per-view constants of one ``fdm_apply_fs_params`` patch: 8 dwords a view (the second
    vec4 pair, GMEM scale and offset, only where the patch holds it)."""
    out = []
    for v in range(views):
        b = 8 * v
        if b + 4 > len(values):
            break
        gm = b + 8 <= len(values)
        out.append(ResolveFs(frag_size=(values[b], values[b + 1]),
                             frag_offset=(R.f32(values[b + 2]), R.f32(values[b + 3])),
                             gmem_scale=(R.f32(values[b + 4]), R.f32(values[b + 5])) if gm else None,
                             gmem_offset=(R.f32(values[b + 6]), R.f32(values[b + 7])) if gm else None))
    return tuple(out)


@attrs.define
class _Listener(BinPhases):
    table: R.Table = R.A6XX_A7XX

    def new_phase(self, kind: str) -> dict[str, Any]:
        return {"kind": kind, "draws": 0, "last": None, "patches": [], "resolving": False}

    def mem_write(self, addr: int, values: tuple[int, ...]) -> None:
        cur = self.current
        if cur is not None and cur["kind"] == "gmem" and not cur["resolving"]:
            cur["patches"].append(values)

    def draw(self, opcode: int, payload: tuple[int, ...]) -> None:
        if opcode == CP_DRAW_INDX_OFFSET and payload and (payload[0] & 0x3F) == DI_PT_RECTLIST:
            return  # turnip's own clears and blits
        cur = self.current
        if cur is not None and cur["kind"] == "gmem" and not cur["resolving"]:
            cur["draws"] += 1
            cur["last"] = dict(self.regs)


def _bin(raw: dict[str, Any], chip: int, slots: int, views: int) -> ResolveBin:
    t = R.table(chip)
    regs: dict[int, int] = raw["last"] or {}

    def g(r: int) -> int:
        return regs.get(r, 0)

    vp0, vs0, ss0 = t.gras_cl_viewport, t.gras_sc_viewport_scissor, t.gras_sc_screen_scissor
    out = []
    for i in range(slots):
        out.append(Slot(i, tuple(g(vp0 + 6 * i + k) for k in range(6)),
                        (R.scissor_xy(g(vs0 + 2 * i)), R.scissor_xy(g(vs0 + 2 * i + 1))),
                        (R.scissor_xy(g(ss0 + 2 * i)), R.scissor_xy(g(ss0 + 2 * i + 1)))))
    fs_patches = [p for p in raw["patches"] if _is_fs_params(p)]
    # the patchpoints run in record order: the main subpass's FS constants, then the custom resolve's
    fs = fs_of(fs_patches[-1], views) if len(fs_patches) >= 2 else None
    fov = t.foveat(g) if chip >= 7 else None
    ws = (R.reg_xy(g(t.gras_sc_window_scissor_tl)), R.reg_xy(g(t.gras_sc_window_scissor_br)))
    return ResolveBin(draws=raw["draws"], window_scissor=ws,
                      binscaleen=bool(fov["binscaleen"]) if fov is not None else None, slots=tuple(out), fs=fs)


def driver_resolve(dump: Dump, chip: int, slots: int, views: int) -> tuple[ResolveBin, ...]:
    """Per rendered bin, in walk order, the custom-resolve draw of one pass's submit (``slots``
    viewport slots, ``views`` views of FS constants) of a ``chip``-generation GPU."""
    lis = _Listener(table=R.table(chip))
    walk(dump, lis)
    return tuple(_bin(b, chip, slots, views) for b in lis.bins)


def _phase_of(b: ResolveBin) -> Phase:
    """The bin as a :class:`Phase` for :func:`turnip_box.compare._slots` (slots only; the slot
    count written before the custom-resolve draw is not compared)."""
    return Phase(kind="gmem", drawn=False, window_scissor=b.window_scissor, window_offset=(0, 0), bin_size=(0, 0),
                 force_lrz_dis=False, lrz_enable=False, foveat=None, slots=b.slots, slot_count=0)


def _fs(d: _Diff, i: int, got: tuple[ResolveFs, ...] | None, want: CustomResolvePatch) -> None:
    if got is None:
        d.eq("custom_resolve.fs_params", None, len(want.views), i)
        return
    for v, cv in enumerate(want.views):
        if v >= len(got):
            d.eq("custom_resolve.fs_params", len(got), len(want.views), i)
            break
        g, f = got[v], cv.fs
        d.eq("custom_resolve.fs_params.frag_size", g.frag_size, (int(f.frag_size[0]), int(f.frag_size[1])), i, v)
        d.eq("custom_resolve.fs_params.frag_offset", g.frag_offset,
             (float(f.frag_offset[0]), float(f.frag_offset[1])), i, v)
        if g.gmem_scale is not None and g.gmem_offset is not None:
            d.eq("custom_resolve.fs_params.gmem_scale", g.gmem_scale, (float(f.gmem_scale[0]), float(f.gmem_scale[1])),
                 i, v)
            d.eq("custom_resolve.fs_params.gmem_offset", g.gmem_offset,
                 (float(f.gmem_offset[0]), float(f.gmem_offset[1])), i, v)


def differences(name: str, gpu: str, bins: tuple[ResolveBin, ...], plan: RenderPassPlan | SysmemPlan,
                chip: int, draws: int) -> tuple[list[Difference], int]:
    """Every difference between the custom-resolve draws of the stream and the model's
    :func:`~layout_solver.custom_resolve.custom_resolve_pass` (``draws``: the main subpass's)."""
    d = _Diff(name, gpu)
    if isinstance(plan, SysmemPlan) or not plan.fdm_enabled or not plan.tiles:
        return d.out, d.compared
    model = custom_resolve_pass(plan)
    ws = custom_resolve_window_scissor(plan)
    for i, (b, t, m) in enumerate(zip(bins, plan.tiles, model, strict=False)):
        if not d.eq("custom_resolve.draws", b.draws, draws + 1, i):
            continue
        d.eq("custom_resolve.window_scissor", b.window_scissor, _rect(ws if ws is not None else t.window_scissor), i)
        if chip >= 7:
            # GRAS_BIN_FOVEAT cleared: no HW bin scaling (no o') in the subpass
            d.eq("custom_resolve.foveat.binscaleen", b.binscaleen, False, i)
        _fs(d, i, b.fs, m)
        _slots(d, _phase_of(b), m.slots, i, "custom_resolve.")
    return d.out, d.compared
