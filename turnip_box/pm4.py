"""A PM4 command-processor walk over a turnip submit, as far as the FDM state needs it.

Packet formats are those of Mesa's ``src/freedreno/registers/adreno/adreno_pm4.xml`` for a5xx
and later: a type-4 header ``(4 << 28) | (reg << 8) | count`` writes ``count`` consecutive
registers from ``reg`` (parity bits 7 and 27 ignored); a type-7 header ``(7 << 28) |
(opcode << 16) | count`` carries ``count`` payload dwords (``count`` 0-14, opcode 16-22).

The walk starts at the submit's IB1s and, like the CP, follows:

* ``CP_INDIRECT_BUFFER`` (and ``_PFD``) into IB2s, ``CP_INDIRECT_BUFFER_CHAIN`` as a jump;
* ``CP_SET_DRAW_STATE``: groups are remembered and executed at the next draw (or at once with
  ``LOAD_IMMED``), reading their dwords from memory *at that moment*, so per-bin
  ``CP_MEM_WRITE`` patches of draw-state memory — turnip's FDM patchpoints — are in effect;
  groups whose BINNING/GMEM/SYSMEM mask excludes the current render mode are skipped;
* ``CP_MEM_WRITE`` into the dumped memory;
* ``CP_CONTEXT_REG_BUNCH`` (register/value pairs);
* ``CP_COND_REG_EXEC`` in ``RENDER_MODE`` mode by the current render mode, and in
  ``THREAD_MODE`` for the BR (render) thread — the stream's BV (concurrent binning) copy is
  skipped, as the binning pass is already walked on its own;
* ``CP_SET_MARKER`` render modes, ``CP_LOAD_STATE6*`` constants, ``CP_EVENT_WRITE*`` events and
  the draws, which it hands to a :class:`Listener`.

Anything else is skipped by its length.  The walk never executes a draw or a blit; it only
tracks what the CP would have programmed.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

import attrs

from .rd import Dump, Memory

CP_NOP = 0x10
CP_INDIRECT_BUFFER_PFD = 0x37
CP_INDIRECT_BUFFER = 0x3F
CP_INDIRECT_BUFFER_CHAIN = 0x57
CP_SET_DRAW_STATE = 0x43
CP_MEM_WRITE = 0x3D
CP_CONTEXT_REG_BUNCH = 0x5C
CP_COND_REG_EXEC = 0x47
CP_SET_MARKER = 0x65
CP_EVENT_WRITE = 0x46
CP_EVENT_WRITE7 = 0x46
CP_DRAW_INDX_OFFSET = 0x38
CP_DRAW_INDIRECT = 0x28
CP_DRAW_INDX_INDIRECT = 0x29
CP_DRAW_INDIRECT_MULTI = 0x2A
CP_DRAW_AUTO = 0x24
CP_LOAD_STATE6_GEOM = 0x32
CP_LOAD_STATE6_FRAG = 0x34
CP_LOAD_STATE6 = 0x36
CP_BLIT = 0x2C
CP_SET_BIN_DATA5 = 0x2F
CP_SET_BIN_DATA5_OFFSET = 0x2E
CP_REG_WRITE = 0x6D
CP_REG_TEST = 0x39
DRAWS = {CP_DRAW_INDX_OFFSET, CP_DRAW_INDIRECT, CP_DRAW_INDX_INDIRECT, CP_DRAW_INDIRECT_MULTI, CP_DRAW_AUTO}

OPCODE_NAMES = {v: k for k, v in list(globals().items()) if k.startswith("CP_") and isinstance(v, int)}

#: a6xx_marker / RM6 render modes of CP_SET_MARKER (adreno_pm4.xml, enum a6xx_marker)
RM6_BYPASS = 1       # RM6_DIRECT_RENDER: sysmem
RM6_BINNING = 2      # RM6_BIN_VISIBILITY
RM6_GMEM = 4         # RM6_BIN_RENDER_START: one bin
RM6_ENDVIS = 5
RM6_RESOLVE = 6
RM6_YIELD = 7
RM6_COMPUTE = 8
RM6_BLIT2DSCALE = 12

#: VGT_DRAW_INITIATOR primitive type (bits 0-5) of turnip's own 3D blits and clears
DI_PT_RECTLIST = 8

#: CP_SET_DRAW_STATE__0 bits (adreno_pm4.xml)
DS_COUNT_MASK = 0xFFFF
DS_DIRTY = 1 << 16
DS_DISABLE = 1 << 17
DS_DISABLE_ALL_GROUPS = 1 << 18
DS_LOAD_IMMED = 1 << 19
DS_BINNING = 1 << 20
DS_GMEM = 1 << 21
DS_SYSMEM = 1 << 22
DS_GROUP_ID_SHIFT = 24

#: CP_COND_REG_EXEC_0 (adreno_pm4.xml): MODE 28-31 (PRED_TEST 1, REG_COMPARE 2, RENDER_MODE 3,
#: REG_COMPARE_IMM 4, THREAD_MODE 5), BINNING 25, GMEM 26, SYSMEM 27 (RENDER_MODE); BV 25, BR 26, LPAC 27
#: (THREAD_MODE)
COND_MODE_SHIFT = 28
COND_RENDER_MODE = 3
COND_THREAD_MODE = 5
COND_BINNING = 1 << 25
COND_GMEM = 1 << 26
COND_SYSMEM = 1 << 27
COND_BV = 1 << 25
COND_BR = 1 << 26
COND_PRED_TEST = 1
COND_PRED_BIT_SHIFT = 18
#: CP_REG_TEST_0 (adreno_pm4.xml): PRED_UPDATE bit 31; then dword 1 is a mask of predicate bits
#: and dword 2 their values (turnip's tu7_set_pred_mask: FAST_STORE / NO_FAST_STORE per tile)
REG_TEST_PRED_UPDATE = 1 << 31

#: a walk stops after this many packets (a malformed stream must not spin)
MAX_PACKETS = 5_000_000
MAX_IB_DEPTH = 4


class StreamError(Exception):
    """The stream cannot be walked (an unknown packet type, a read outside the dump)."""


@attrs.define
class Listener:
    """What the walk reports; override the hooks you need."""

    def reg(self, reg: int, value: int) -> None:  # noqa: B027 - hooks default to nothing
        pass

    def reg_block(self, reg: int, values: tuple[int, ...]) -> None:
        """``values`` written to consecutive registers from ``reg`` (one type-4 packet); by
        default one :meth:`reg` each (a listener may take the block at once: the walk's hot path)."""
        for i, v in enumerate(values):
            self.reg(reg + i, v)

    def reg_map(self, writes: dict[int, int]) -> None:
        """The net effect of an IB that only writes registers (register -> last value, in the
        order first written); by default one :meth:`reg_block` each."""
        for r, v in writes.items():
            self.reg_block(r, (v,))

    def marker(self, mode: int) -> None:  # noqa: B027
        pass

    def mem_write(self, addr: int, values: tuple[int, ...]) -> None:  # noqa: B027
        pass

    def predicate(self, bits: int, mask: int) -> None:  # noqa: B027
        pass

    def draw(self, opcode: int, payload: tuple[int, ...]) -> None:  # noqa: B027
        pass

    def event(self, opcode: int, payload: tuple[int, ...]) -> None:  # noqa: B027
        pass

    def load_state(self, opcode: int, payload: tuple[int, ...], data: tuple[int, ...]) -> None:  # noqa: B027
        pass

    def packet(self, depth: int, opcode: int | None, reg: int | None, payload: tuple[int, ...]) -> None:  # noqa: B027
        pass


#: the render-mode markers that open a phase of the pass, by the name the decoders give it
PHASE_KINDS = {RM6_BINNING: "binning", RM6_GMEM: "gmem", RM6_BYPASS: "sysmem"}


@attrs.define
class BinPhases(Listener):
    """A listener that keeps the register file as the walk leaves it (register -> last value) and
    a record per rendered bin: each marker of :data:`PHASE_KINDS` opens a phase
    (:meth:`new_phase` makes its record; a GMEM one is appended to ``bins``), and
    ``RM6_ENDVIS``/``RM6_RESOLVE`` mark the phase's ``resolving`` part (the stores after the draws)."""

    regs: dict[int, int] = attrs.field(factory=dict)
    bins: list[dict[str, Any]] = attrs.field(factory=list)
    current: dict[str, Any] | None = None

    def new_phase(self, kind: str) -> dict[str, Any]:
        """The record of a phase that starts; it must hold ``resolving`` (False)."""
        return {"kind": kind, "resolving": False}

    def reg(self, reg: int, value: int) -> None:
        self.regs[reg] = value

    def reg_block(self, reg: int, values: tuple[int, ...]) -> None:
        self.regs.update(zip(range(reg, reg + len(values)), values, strict=True))

    def reg_map(self, writes: dict[int, int]) -> None:
        self.regs.update(writes)

    def marker(self, mode: int) -> None:
        kind = PHASE_KINDS.get(mode)
        if kind is not None:
            self.current = self.new_phase(kind)
            if kind == "gmem":
                self.bins.append(self.current)
        elif mode in (RM6_ENDVIS, RM6_RESOLVE) and self.current is not None:
            self.current["resolving"] = True


@attrs.frozen
class Program:
    """An IB compiled once for replay: runs of register writes (type-4 packets,
    ``CP_CONTEXT_REG_BUNCH`` and NOPs) as their net effect, and every other type-7 packet as it
    is, each step with the dword position it starts at (``CP_COND_REG_EXEC`` skips dwords)."""

    #: ``(writes, packets, start, end)`` for a run of register writes; ``(opcode, payload, start,
    #: end)`` for another type-7 packet
    steps: tuple[tuple[Any, Any, int, int], ...]
    starts: tuple[int, ...]
    words: tuple[int, ...]

    @property
    def pure(self) -> tuple[dict[int, int], int] | None:
        """``(writes, packets)`` when the IB does nothing but write registers."""
        if len(self.steps) == 1 and isinstance(self.steps[0][0], dict):
            return self.steps[0][0], self.steps[0][1]
        if not self.steps:
            return {}, 0
        return None


def compile_ib(words: tuple[int, ...]) -> Program | None:
    """The :class:`Program` of an IB; None when it holds a packet the walk must report itself
    (an unknown header, a packet that runs past the end)."""
    steps: list[tuple[Any, Any, int, int]] = []
    run: dict[int, int] | None = None
    run_packets = run_start = 0
    pos, n = 0, len(words)

    def close(end: int) -> None:
        nonlocal run
        if run is not None:
            steps.append((run, run_packets, run_start, end))
            run = None

    while pos < n:
        hdr = words[pos]
        typ = hdr >> 28
        if typ == 4 or hdr == 0 or typ == 2 or (typ == 7 and (hdr >> 16) & 0x7F == CP_CONTEXT_REG_BUNCH):
            if run is None:
                run, run_packets, run_start = {}, 0, pos
            run_packets += 1
            if typ == 4:
                count = hdr & 0x7F
                if pos + 1 + count > n:
                    return None
                reg = (hdr >> 8) & 0x7FFFF
                for k in range(count):
                    run[reg + k] = words[pos + 1 + k]
                pos += 1 + count
            elif typ == 7:
                count = hdr & 0x7FFF
                if pos + 1 + count > n:
                    return None
                p = words[pos + 1:pos + 1 + count]
                for k in range(0, len(p) - 1, 2):
                    run[p[k]] = p[k + 1]
                pos += 1 + count
            else:
                pos += 1
        elif typ == 7:
            close(pos)
            count = hdr & 0x7FFF
            if pos + 1 + count > n:
                return None
            steps.append(((hdr >> 16) & 0x7F, words[pos + 1:pos + 1 + count], pos, pos + 1 + count))
            pos += 1 + count
        else:
            return None
    close(pos)
    return Program(steps=tuple(steps), starts=tuple(st[2] for st in steps), words=words)


def register_writes(words: tuple[int, ...]) -> tuple[dict[int, int], int] | None:
    """The net register writes of an IB made only of type-4 packets, ``CP_CONTEXT_REG_BUNCH``
    and NOPs (and its packet count); None for any other IB."""
    prog = compile_ib(words)
    return prog.pure if prog is not None else None


@attrs.define
class Walk:
    """One walk of a dump's submit (see the module docstring)."""

    memory: Memory
    listener: Listener
    mode: int = 0
    #: the CP's predicate bits (CP_REG_TEST with PRED_UPDATE)
    predicate: int = 0
    groups: dict[int, tuple[int, int, int]] = attrs.field(factory=dict)
    packets: int = 0
    #: (iova, dwords) of an IB read before -> its :class:`Program` (None: walk it packet by
    #: packet); a CP_MEM_WRITE drops the IBs it overlaps
    compiled: dict[tuple[int, int], Program | None] = attrs.field(factory=dict)
    #: (render mode, the enabled groups) -> the combined register writes of a draw's groups
    draw_effects: dict[tuple[int, tuple[tuple[int, int, int, int], ...]],
                       list[tuple[dict[int, int], int] | tuple[int, int]]] = attrs.field(factory=dict)

    def run(self, dump: Dump) -> None:
        for iova, dwords in dump.cmdstreams:
            self.ib(iova, dwords, 1)

    def ib(self, iova: int, dwords: int, depth: int) -> None:
        if depth > MAX_IB_DEPTH:
            raise StreamError(f"IB nesting deeper than {MAX_IB_DEPTH} at {iova:#x}")
        # an IB is compiled once and replayed (the hot path: turnip's draw-state groups run again
        # at every draw, its draw IB again in every bin); a per-packet listener sees every packet
        if type(self.listener).packet is Listener.packet:
            prog = self._compiled(iova, dwords)
            if prog is not None:
                self.run_program(prog, depth)
                return
        try:
            words = self.memory.dwords(iova, dwords)
        except KeyError as e:
            raise StreamError(str(e)) from e
        self.words(words, depth)

    def run_program(self, prog: Program, depth: int) -> None:
        """Replay ``prog``: each run of register writes at once, each other packet as
        :meth:`words` would (a ``CP_COND_REG_EXEC`` skip continues at the step the skip lands on,
        or packet by packet from there when it lands inside a run)."""
        steps, k, m = prog.steps, 0, len(prog.steps)
        listener = self.listener
        while k < m:
            first, second, _start, end = steps[k]
            k += 1
            if isinstance(first, dict):
                self.packets += second
                if self.packets > MAX_PACKETS:
                    raise StreamError(f"more than {MAX_PACKETS} packets")
                listener.reg_map(first)
                continue
            self.packets += 1
            if self.packets > MAX_PACKETS:
                raise StreamError(f"more than {MAX_PACKETS} packets")
            skip = self.type7(first, second, depth)
            if skip:
                target = end + skip
                k = bisect.bisect_left(prog.starts, target)
                if k < m and prog.starts[k] != target or k == m and target < len(prog.words):
                    self.words(prog.words[target:], depth)
                    return

    def _replay(self, only: tuple[dict[int, int], int]) -> None:
        self.packets += only[1]
        if self.packets > MAX_PACKETS:
            raise StreamError(f"more than {MAX_PACKETS} packets")
        self.listener.reg_map(only[0])

    def words(self, words: tuple[int, ...], depth: int) -> None:
        pos = 0
        n = len(words)
        listener = self.listener
        # the per-packet hook only when a listener has one (the tracer): the walk's hot path
        packet = listener.packet if type(listener).packet is not Listener.packet else None
        reg_block = listener.reg_block
        while pos < n:
            self.packets += 1
            if self.packets > MAX_PACKETS:
                raise StreamError(f"more than {MAX_PACKETS} packets")
            hdr = words[pos]
            typ = hdr >> 28
            if typ == 4:
                count = hdr & 0x7F
                reg = (hdr >> 8) & 0x7FFFF
                vals = words[pos + 1:pos + 1 + count]
                if packet is not None:
                    packet(depth, None, reg, vals)
                reg_block(reg, vals)
                pos += 1 + count
            elif typ == 7:
                count = hdr & 0x7FFF
                op = (hdr >> 16) & 0x7F
                payload = words[pos + 1:pos + 1 + count]
                pos += 1 + count
                if packet is not None:
                    packet(depth, op, None, payload)
                pos += self.type7(op, payload, depth)
            elif hdr == 0 or typ == 2:  # type-2 NOP / padding
                pos += 1
            else:
                raise StreamError(f"unknown packet header {hdr:#010x}")

    def type7(self, op: int, p: tuple[int, ...], depth: int) -> int:
        """Handle one type-7 packet; returns how many following dwords to skip."""
        if op in (CP_INDIRECT_BUFFER, CP_INDIRECT_BUFFER_PFD) and len(p) >= 3:
            self.ib(p[0] | (p[1] << 32), p[2] & 0xFFFFF, depth + 1)
        elif op == CP_INDIRECT_BUFFER_CHAIN and len(p) >= 3:
            self.ib(p[0] | (p[1] << 32), p[2] & 0xFFFFF, depth)
        elif op == CP_SET_DRAW_STATE:
            for k in range(0, len(p) - 2, 3):
                d0, addr = p[k], p[k + 1] | (p[k + 2] << 32)
                if d0 & DS_DISABLE_ALL_GROUPS:
                    self.groups.clear()
                    continue
                gid = (d0 >> DS_GROUP_ID_SHIFT) & 0x1F
                if d0 & DS_DISABLE or (d0 & DS_COUNT_MASK) == 0:
                    self.groups.pop(gid, None)
                    continue
                if d0 & DS_LOAD_IMMED:
                    self.run_group(addr, d0, depth)
                else:
                    self.groups[gid] = (addr, d0 & DS_COUNT_MASK, d0)
        elif op == CP_MEM_WRITE and len(p) >= 2:
            self.forget(p[0] | (p[1] << 32), len(p) - 2)  # a patch may rewrite an IB read before
            self.listener.mem_write(p[0] | (p[1] << 32), p[2:])
            try:
                self.memory.write(p[0] | (p[1] << 32), p[2:])
            except KeyError:
                # a buffer the dump does not hold (a subsampled image's metadata): nothing the walk
                # reads can depend on it (a read of that address raises)
                pass
        elif op == CP_CONTEXT_REG_BUNCH:
            for k in range(0, len(p) - 1, 2):
                self.listener.reg_block(p[k], (p[k + 1],))
        elif op == CP_REG_TEST and len(p) >= 3 and p[0] & REG_TEST_PRED_UPDATE:
            self.predicate = (self.predicate & ~p[1]) | (p[2] & p[1])
            self.listener.predicate(self.predicate, p[1])
        elif op == CP_REG_TEST and p:
            # a plain register test (tu6_emit_cond_for_load_stores: VSC_STATE_REG(pipe) bit slot, the
            # binning pass's "this bin has geometry") sets predicate bit 0, which the conditional
            # GMEM loads and stores test; nothing executes here, so the bin is taken to have
            # geometry and its loads and stores are walked (the model plans them for every bin)
            self.predicate |= 1
        elif op == CP_COND_REG_EXEC and len(p) >= 2:
            return 0 if self.cond_true(p[0]) else p[1]
        elif op == CP_SET_MARKER and p:
            mode = p[0] & 0xF
            if mode in (RM6_BYPASS, RM6_BINNING, RM6_GMEM, RM6_COMPUTE, RM6_BLIT2DSCALE):
                self.mode = mode
            self.listener.marker(mode)
        elif op in DRAWS:
            self.run_groups(depth)
            self.listener.draw(op, p)
        elif op == CP_EVENT_WRITE or op == CP_BLIT:
            self.listener.event(op, p)
        elif op in (CP_LOAD_STATE6, CP_LOAD_STATE6_FRAG, CP_LOAD_STATE6_GEOM):
            self.listener.load_state(op, p, p[3:])
        return 0

    def forget(self, addr: int, count: int) -> None:
        """Drop the compiled IBs that ``count`` dwords written at ``addr`` overlap (and every
        draw's combined groups, which may hold one)."""
        end = addr + 4 * count
        for key in [k for k in self.compiled if k[0] < end and addr < k[0] + 4 * k[1]]:
            del self.compiled[key]
        self.draw_effects.clear()

    def group_enabled(self, d0: int) -> bool:
        masks = d0 & (DS_BINNING | DS_GMEM | DS_SYSMEM)
        if not masks:
            return True
        return bool((self.mode == RM6_BINNING and masks & DS_BINNING) or (self.mode == RM6_GMEM and masks & DS_GMEM)
                    or (self.mode == RM6_BYPASS and masks & DS_SYSMEM))

    def run_groups(self, depth: int) -> None:
        """The enabled draw-state groups at a draw, in group order.  Consecutive groups that only
        write registers are replayed as one combined effect; the steps are kept until the next
        CP_MEM_WRITE or a change of the groups or the render mode (a per-packet listener sees
        every packet instead)."""
        enabled = [(gid, *self.groups[gid]) for gid in sorted(self.groups) if self.group_enabled(self.groups[gid][2])]
        if type(self.listener).packet is not Listener.packet:
            for _gid, addr, _count, d0 in enabled:
                self.run_group(addr, d0, depth)
            return
        key = (self.mode, tuple(enabled))
        steps = self.draw_effects.get(key)
        if steps is None:
            steps = []
            for _gid, addr, _count, d0 in enabled:
                prog = self._compiled(addr, d0 & DS_COUNT_MASK)
                only = prog.pure if prog is not None else None
                if only is None:
                    steps.append((addr, d0))
                elif steps and isinstance(steps[-1][0], dict):
                    prev = steps[-1]
                    assert isinstance(prev[0], dict)
                    steps[-1] = ({**prev[0], **only[0]}, prev[1] + only[1])
                else:
                    steps.append(only)
            self.draw_effects[key] = steps
        for step in steps:
            if isinstance(step[0], dict):
                self._replay(step)
            else:
                self.run_group(step[0], step[1], depth)

    def _compiled(self, iova: int, dwords: int) -> Program | None:
        key = (iova, dwords)
        if key not in self.compiled:
            try:
                self.compiled[key] = compile_ib(self.memory.dwords(iova, dwords))
            except KeyError:
                self.compiled[key] = None  # the packet walk reports it
        return self.compiled[key]

    def run_group(self, addr: int, d0: int, depth: int) -> None:
        self.ib(addr, d0 & DS_COUNT_MASK, depth + 1)

    def cond_true(self, d0: int) -> bool:
        mode = d0 >> COND_MODE_SHIFT
        if mode == COND_RENDER_MODE:
            return bool((self.mode == RM6_BINNING and d0 & COND_BINNING) or (self.mode == RM6_GMEM and d0 & COND_GMEM)
                        or (self.mode == RM6_BYPASS and d0 & COND_SYSMEM))
        if mode == COND_THREAD_MODE:
            return bool(d0 & COND_BR)
        if mode == COND_PRED_TEST:
            return bool(self.predicate >> ((d0 >> COND_PRED_BIT_SHIFT) & 0x1F) & 1)
        return True


def walk(dump: Dump, listener: Listener) -> Walk:
    """Walk every IB1 of ``dump`` (on a copy of its memory: the dump itself is not changed)."""
    import copy

    w = Walk(Memory(copy.deepcopy(dump.buffers)), listener)
    w.run(dump)
    return w


def tracer(out: Callable[[str], None]) -> Listener:
    """A listener that prints every packet (for ``turnip-fdm box dump``)."""

    @attrs.define
    class _Trace(Listener):
        def packet(self, depth: int, opcode: int | None, reg: int | None, payload: tuple[int, ...]) -> None:
            pad = "  " * depth
            vals = " ".join(f"{v:08x}" for v in payload[:12]) + (" ..." if len(payload) > 12 else "")
            if opcode is None:
                assert reg is not None
                out(f"{pad}pkt4 {reg:#06x} x{len(payload)}: {vals}")
            else:
                out(f"{pad}{OPCODE_NAMES.get(opcode, hex(opcode))} x{len(payload)}: {vals}")

    return _Trace()
