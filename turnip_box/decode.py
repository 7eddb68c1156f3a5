"""What turnip programmed, decoded from a submit's stream into the model's plan quantities.

:func:`driver_pass` walks a dump (:mod:`turnip_box.pm4`) and cuts it at the render-mode
markers turnip emits (``CP_SET_MARKER``: ``RM6_BIN_VISIBILITY`` for the binning pass,
``RM6_BIN_RENDER_START`` for each rendered bin, ``RM6_DIRECT_RENDER`` for sysmem).  For each
phase it keeps the registers in effect at the phase's first application draw — after the
draw-state groups, whose memory turnip's FDM patchpoints rewrote for that bin, have run — the
registers it wrote before that draw (how many viewport slots), the bin's FS-constants patch, its
GMEM clears and loads before its first draw, its fast-store predicate and the stores after its
draws.  The result is a :class:`DriverPass` whose
fields carry the plan's names (``window_scissor``, ``common_bin_start``, ``foveat``, ``viewport``,
``viewport_scissor``, ``scissor``, ``force_lrz_dis``, ``fs_params``, ``fast_store``,
``tile_size``, ``tile_count``), so a comparison is field by field.

The registers are read at the chip's own offsets (:func:`turnip_box.registers.table`: a6xx/a7xx,
or a8xx, which moved most of them); the walk and the phases are the same on every generation
(turnip emits the same ``CP_SET_MARKER`` modes, patchpoints and store paths on a8xx).
"""

from __future__ import annotations

from typing import Any

import attrs

from . import registers as R
from .pm4 import (
    CP_BLIT,
    CP_DRAW_INDX_OFFSET,
    CP_LOAD_STATE6_GEOM,
    DI_PT_RECTLIST,
    PHASE_KINDS,
    RM6_ENDVIS,
    RM6_RESOLVE,
    Listener,
    walk,
)
from .rd import Dump


@attrs.frozen
class Slot:
    """One viewport slot as programmed: ``GRAS_CL_VIEWPORT[i]`` (offset/scale, float32 bits)
    and the two scissors."""

    slot: int
    viewport_regs: tuple[int, ...]
    viewport_scissor: tuple[tuple[int, int], tuple[int, int]]
    scissor: tuple[tuple[int, int], tuple[int, int]]


@attrs.frozen(kw_only=True)
class Phase:
    """A binning pass, a rendered bin or a sysmem pass as the stream programs it."""

    kind: str                                  # "binning", "gmem" or "sysmem"
    drawn: bool                                # the phase reached a draw
    window_scissor: tuple[tuple[int, int], tuple[int, int]]
    window_offset: tuple[int, int]
    bin_size: tuple[int, int]
    force_lrz_dis: bool
    lrz_enable: bool
    foveat: dict[str, Any] | None              # a7xx/a8xx: GRAS_BIN_FOVEAT and its offsets
    slots: tuple[Slot, ...]
    #: viewport slots the phase programmed before its draw (GRAS_CL_VIEWPORT[i] written)
    slot_count: int
    #: the stores after the bin's draws: ``("fast", rect)`` (a BLIT event of a store
    #: ``RB_RESOLVE_OPERATION``), ``("a2d", dst, src)`` (a ``CP_BLIT``: the scaled store) or
    #: ``("3d", coords)`` (``store_3d_blit``, a multisampled attachment's store: a rect-list draw
    #: whose VS constants ``r3d_coords`` loads from memory as for the 3D load, the 8 floats as
    #: loaded: dst x1, y1, src x1, y1, dst x2, y2, src x2, y2)
    stores: tuple[tuple[Any, ...], ...] = ()
    #: a7xx: the FAST_STORE predicate tile select set for this bin (None: none was set)
    fast_store_predicate: bool | None = None
    #: per view ``(frag_area, o)`` of the fragment shader's FDM constants as patched for this bin
    #: (``fdm_apply_fs_params``), when the bin's patches hold them
    fs_params: tuple[tuple[tuple[int, int], tuple[float, float]], ...] | None = None
    #: the bin's GMEM clears before its first draw, in stream order: ``RB_RESOLVE_CNTL_1/2``
    #: (0x88d1/0x88d2, inclusive corners) at each BLIT event whose ``RB_RESOLVE_OPERATION``
    #: (0x88e3) TYPE is 2, clear (a load-op clear or vkCmdClearAttachments through the resolve engine)
    clears: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = ()
    #: the bin's GMEM loads before its first draw, in stream order: ``("event", rect)`` (a BLIT
    #: event whose ``RB_RESOLVE_OPERATION`` TYPE is 3, load, over ``RB_RESOLVE_CNTL_1/2``: the
    #: load of a pass without FDM) or ``("3d", dst, src)`` (``load_3d_blit``: a rect-list draw whose
    #: VS constants ``r3d_coords_raw`` loads from memory, ``CP_LOAD_STATE6_GEOM`` ``SS6_INDIRECT``:
    #: float dst x1, y1, src x1, y1, dst x2, y2, src x2, y2, half-open, as ``fdm_apply_load_coords``
    #: patches them)
    loads: tuple[tuple[Any, ...], ...] = ()


@attrs.frozen(kw_only=True)
class DriverPass:
    """Everything decoded from one render pass's submit."""

    chip: int
    render_mode: str                           # "gmem" or "sysmem" (or "none": no pass found)
    tile_size: tuple[int, int] | None          # VSC_BIN_SIZE
    tile_count: tuple[int, int] | None         # VSC_EXPANDED_BIN_CNTL
    binning: Phase | None
    bins: tuple[Phase, ...]
    sysmem: Phase | None


#: the predicate bit of turnip's fast-store path (TU_PREDICATE_FAST_STORE; NO_FAST_STORE is the
#: next bit): tile select sets both with one CP_REG_TEST, the stores run under CP_COND_REG_EXEC
TU_PREDICATE_FAST_STORE = 6

#: CP_LOAD_STATE6_0 (adreno_pm4.xml): STATE_TYPE bits 14-15 (ST6_CONSTANTS 1), STATE_SRC 16-17
#: (SS6_INDIRECT 2), STATE_BLOCK 18-21 (SB6_VS_SHADER 8), NUM_UNIT 22-31 (vec4s)
ST6_CONSTANTS, SS6_INDIRECT, SB6_VS_SHADER = 1, 2, 8
#: RB_RESOLVE_OPERATION TYPE (a6xx.xml enum a6xx_blit_event_type): BLIT_EVENT_LOAD
BLIT_EVENT_LOAD = 3


@attrs.define
class _Phases(Listener):
    chip: int
    table: R.Table
    regs: dict[int, int] = attrs.field(factory=dict)
    phases: list[dict[str, Any]] = attrs.field(factory=list)
    current: dict[str, Any] | None = None
    #: the address of the last 3D-blit coordinates loaded (r3d_coords_raw), until a rect list draws
    coords: int | None = None

    def reg(self, reg: int, value: int) -> None:
        self.reg_block(reg, (value,))

    def reg_map(self, writes: dict[int, int]) -> None:
        self.regs.update(writes)
        cur = self.current
        if cur is not None and cur["at_draw"] is None:
            cur["written"].update(writes)

    def reg_block(self, reg: int, values: tuple[int, ...]) -> None:
        regs = self.regs
        if len(values) == 1:
            regs[reg] = values[0]
            written: Any = (reg,)
        else:
            written = range(reg, reg + len(values))
            regs.update(zip(written, values, strict=True))
        cur = self.current
        if cur is not None and cur["at_draw"] is None:
            cur["written"].update(written)

    def marker(self, mode: int) -> None:
        kind = PHASE_KINDS.get(mode)
        self.coords = None
        if kind is not None:
            self.current = {"kind": kind, "at_draw": None, "patches": [], "stores": [], "clears": [],
                            "loads": [], "resolving": False, "pred": None, "written": set()}
            self.phases.append(self.current)
        elif mode in (RM6_ENDVIS, RM6_RESOLVE) and self.current is not None:
            self.current["resolving"] = True

    def predicate(self, bits: int, mask: int) -> None:
        # only an update that sets the FAST_STORE bit says which store path the bin takes
        if self.current is not None and self.current["kind"] == "gmem" and self.current["at_draw"] is None \
                and mask >> TU_PREDICATE_FAST_STORE & 1:
            self.current["pred"] = bool(bits >> TU_PREDICATE_FAST_STORE & 1)

    def mem_write(self, addr: int, values: tuple[int, ...]) -> None:
        if self.current is not None and self.current["at_draw"] is None:
            self.current["patches"].append(values)

    def load_state(self, opcode: int, payload: tuple[int, ...], data: tuple[int, ...]) -> None:
        # r3d_coords_raw: the 3D blit's 2 vec4s of VS constants, loaded from memory
        if opcode == CP_LOAD_STATE6_GEOM and len(payload) >= 3:
            d0 = payload[0]
            if (d0 >> 14) & 3 == ST6_CONSTANTS and (d0 >> 16) & 3 == SS6_INDIRECT \
                    and (d0 >> 18) & 0xF == SB6_VS_SHADER and d0 >> 22 == 2 and d0 & 0x3FFF == 0:
                self.coords = payload[1] | payload[2] << 32

    def draw(self, opcode: int, payload: tuple[int, ...]) -> None:
        # turnip's own clears and 3D blits draw rect lists; the application's draws do not
        if opcode == CP_DRAW_INDX_OFFSET and payload and (payload[0] & 0x3F) == DI_PT_RECTLIST:
            cur = self.current
            if cur is not None and cur["kind"] == "gmem" and cur["at_draw"] is None and not cur["resolving"] \
                    and self.coords is not None:
                cur["loads"].append(("3d", self.coords))  # resolved from memory after the walk
            elif cur is not None and cur["kind"] == "gmem" and cur["resolving"] and self.coords is not None:
                # after the draws: store_3d_blit, the store of a multisampled attachment
                cur["stores"].append(("3d", self.coords))
            self.coords = None
            return
        if self.current is not None and self.current["at_draw"] is None:
            self.current["at_draw"] = dict(self.regs)

    def event(self, opcode: int, payload: tuple[int, ...]) -> None:
        # after the draws a bin stores each attachment: a BLIT event (CCU_RESOLVE, 0x1e) of a store
        # RB_RESOLVE_OPERATION over RB_RESOLVE_CNTL_1/2 (the fast store), or a CP_BLIT of the A2D
        # engine from GMEM to sysmem (the scaled store)
        cur = self.current
        g = self.regs.get
        t = self.table
        if cur is not None and cur["kind"] == "gmem" and cur["at_draw"] is None and not cur["resolving"] \
                and payload and (payload[0] & 0x7F) == 0x1E and g(t.rb_resolve_operation, 0) & 3 == 2:
            # before the draws: a clear of GMEM by the resolve engine over RB_RESOLVE_CNTL_1/2
            cur["clears"].append((R.reg_xy(g(t.rb_blit_scissor_tl, 0)), R.reg_xy(g(t.rb_blit_scissor_br, 0))))
            return
        if cur is not None and cur["kind"] == "gmem" and cur["at_draw"] is None and not cur["resolving"] \
                and payload and (payload[0] & 0x7F) == 0x1E and g(t.rb_resolve_operation, 0) & 3 == BLIT_EVENT_LOAD:
            # before the draws: a load of GMEM by the resolve engine (a pass without FDM)
            cur["loads"].append(("event", (R.reg_xy(g(t.rb_blit_scissor_tl, 0)),
                                           R.reg_xy(g(t.rb_blit_scissor_br, 0)))))
            return
        if cur is None or cur["kind"] != "gmem" or not cur["resolving"]:
            return
        if opcode == CP_BLIT:
            src = tuple(g(t.gras_a2d_src + k, 0) >> 8 for k in range(4))
            cur["stores"].append(("a2d", (R.reg_xy(g(t.gras_a2d_dest_tl, 0)), R.reg_xy(g(t.gras_a2d_dest_br, 0))),
                                  ((src[0], src[2]), (src[1], src[3]))))
        elif payload and (payload[0] & 0x7F) == 0x1E and g(t.rb_resolve_operation, 0) & 3 in (0, 1):
            cur["stores"].append(("fast", (R.reg_xy(g(t.rb_blit_scissor_tl, 0)), R.reg_xy(g(t.rb_blit_scissor_br, 0)))))


#: dwords per view of the FDM fragment-shader constants (fdm_apply_fs_params, tu_cmd_buffer.cc):
#: uint frag_area.w, .h; float offset.x, .y; float 1/gmem_area.w, .h; float gmem_offset.x, .y.  The
#: patch writes the constants themselves (no packet header) and stops after the last view's
#: offset: 8 * views - 4 dwords (the stream shows it on a6xx and a7xx), or 8 * views.
FS_PARAMS_STRIDE = 8


def fs_params_of(patches: list[tuple[int, ...]], views: int) -> Any:
    """The per-view ``(frag_area, o)`` of a bin's FS-constants patch, if the bin has one."""
    for values in patches:
        if len(values) not in (FS_PARAMS_STRIDE * views - 4, FS_PARAMS_STRIDE * views) or values[0] >> 28 in (4, 7):
            continue
        st = FS_PARAMS_STRIDE
        return tuple(((values[st * v], values[st * v + 1]), (R.f32(values[st * v + 2]), R.f32(values[st * v + 3])))
                     for v in range(views))
    return None


def _coords(memory: Any, addr: int) -> tuple[tuple[tuple[int, int], tuple[int, int]],
                                               tuple[tuple[int, int], tuple[int, int]]] | None:
    """``r3d_coords_raw``'s 8 floats at ``addr`` as ``(dst, src)`` corners (half-open), or None
    where the dump does not hold them."""
    try:
        c = [R.f32(v) for v in memory.dwords(addr, 8)]
    except KeyError:
        return None
    return ((int(c[0]), int(c[1])), (int(c[4]), int(c[5]))), ((int(c[2]), int(c[3])), (int(c[6]), int(c[7])))


def _raw_coords(memory: Any, addr: int) -> tuple[float, ...] | None:
    """The 8 float32 constants ``r3d_coords`` loaded from ``addr``, as loaded (None where the dump
    does not hold them)."""
    try:
        return tuple(R.f32(v) for v in memory.dwords(addr, 8))
    except KeyError:
        return None


def _stores(raw: list[tuple[Any, ...]], memory: Any) -> tuple[tuple[Any, ...], ...]:
    out: list[tuple[Any, ...]] = []
    for entry in raw:
        if entry[0] == "3d":
            c = _raw_coords(memory, entry[1]) if memory is not None else None
            if c is not None:
                out.append(("3d", c))
        else:
            out.append(entry)
    return tuple(out)


def _loads(raw: list[tuple[Any, ...]], memory: Any) -> tuple[tuple[Any, ...], ...]:
    out: list[tuple[Any, ...]] = []
    for entry in raw:
        if entry[0] == "3d":
            rects = _coords(memory, entry[1])
            if rects is not None:
                out.append(("3d", *rects))
        else:
            out.append(entry)
    return tuple(out)


def _phase(raw: dict[str, Any], chip: int, slots: int, end_regs: dict[int, int], views: int = 1,
           memory: Any = None) -> Phase:
    regs = raw["at_draw"] if raw["at_draw"] is not None else end_regs
    t = R.table(chip)

    def g(r: int) -> int:
        return regs.get(r, 0)

    bw, bh, lrz_dis = t.bin_cntl(g(t.gras_sc_bin_cntl))
    fov = t.foveat(g) if chip >= 7 else None
    out = []
    vp0, vs0, ss0 = t.gras_cl_viewport, t.gras_sc_viewport_scissor, t.gras_sc_screen_scissor
    for i in range(slots):
        vp = tuple(g(vp0 + 6 * i + k) for k in range(6))
        vs = (R.scissor_xy(g(vs0 + 2 * i)), R.scissor_xy(g(vs0 + 2 * i + 1)))
        ss = (R.scissor_xy(g(ss0 + 2 * i)), R.scissor_xy(g(ss0 + 2 * i + 1)))
        out.append(Slot(i, vp, vs, ss))
    return Phase(kind=raw["kind"], drawn=raw["at_draw"] is not None,
                 window_scissor=(R.reg_xy(g(t.gras_sc_window_scissor_tl)), R.reg_xy(g(t.gras_sc_window_scissor_br))),
                 window_offset=R.reg_xy(g(t.rb_window_offset)), bin_size=(bw, bh), force_lrz_dis=lrz_dis,
                 lrz_enable=bool(g(t.gras_lrz_cntl) & 1), foveat=fov, slots=tuple(out),
                 slot_count=max((i + 1 for i in range(R.MAX_VIEWPORTS) if vp0 + 6 * i in raw["written"]),
                                default=0),
                 stores=_stores(raw["stores"], memory), fast_store_predicate=raw["pred"],
                 fs_params=fs_params_of(raw["patches"], views), clears=tuple(raw["clears"]),
                 loads=_loads(raw["loads"], memory) if memory is not None else ())


def driver_pass(dump: Dump, slots: int, chip: int, views: int = 1) -> DriverPass:
    """Decode one render pass's submit of a ``chip``-generation GPU (6, 7 or 8: the GPU the box
    was asked to open; the dump's chip id encodes newer parts differently) with that generation's
    register table (:func:`turnip_box.registers.table`); ``slots`` viewport slots are read per
    phase."""
    t = R.table(chip)
    lis = _Phases(chip, t)
    w = walk(dump, lis)
    # each bin's patched load coordinates are an allocation of their own: read them (and the 3D
    # stores' unpatched ones) after the walk
    phases = [_phase(p, chip, slots, lis.regs, views, w.memory) for p in lis.phases]
    binning = next((p for p in phases if p.kind == "binning"), None)
    bins = tuple(p for p in phases if p.kind == "gmem")
    sysmem = next((p for p in phases if p.kind == "sysmem" and p.drawn), None)
    # a GMEM pass whose every tile is invisible runs its binning pass and renders no bin
    mode = "gmem" if bins or binning is not None else "sysmem" if sysmem is not None else "none"
    # VSC_BIN_SIZE / VSC_EXPANDED_BIN_CNTL are written by the binning pass only (update_vsc_pipe)
    tsize = t.bin_size(lis.regs[t.vsc_bin_size]) if binning is not None and t.vsc_bin_size in lis.regs else None
    tcount = R.vsc_bin_count(lis.regs[t.vsc_expanded_bin_cntl]) \
        if binning is not None and t.vsc_expanded_bin_cntl in lis.regs else None
    return DriverPass(chip=chip, render_mode=mode, tile_size=tsize, tile_count=tcount, binning=binning, bins=bins,
                      sysmem=sysmem)
