"""turnip's own account of each render pass: its u_trace ``render_pass`` tracepoint, read in the box.

turnip's ``end_render_pass`` tracepoint (``src/freedreno/vulkan/tu_tracepoints.py``, pop-os/mesa
@ 4ff7b570, Mesa 26.2.0-rc3) carries ``tiledRender`` (the pass rendered in GMEM) and
``tilingDisableReason``: ``tu_trace_end_render_pass`` (tu_cmd_buffer.cc) passes
``cmd->state.rp.gmem_disable_reason``, the text ``use_sysmem_rendering`` set, or ``""`` where it
set none.  Mesa's u_trace (``src/util/perf/u_trace.c``) prints it when ``MESA_GPU_TRACES`` names a
printer (``print``: one text line per event) into ``MESA_GPU_TRACEFILE`` (opened once per process,
at the first device); ``TU_GPU_TRACEPOINT`` picks turnip's tracepoints (``-all,+render_pass``: that
one alone, so the only packets tracing adds to the stream are the two timestamp writes around the
pass).

The events are printed asynchronously: ``queue_submit`` (tu_queue.cc) flushes the submission's
trace and hands it to the context's ``traceq`` thread, which waits for the submission's fence (the
noop shim signals it at once) and prints into a C ``FILE`` that is flushed only when the context
is finished.  So :class:`TraceTail`, in the recording process, flushes the process's C streams
(``fflush(NULL)``) and reads the file on until the submission's ``end_render_pass`` line is there
(one render pass per submission): a job's reason is the one its own submission printed, whatever
the timing of the thread.

:func:`render_passes` is pure (the text in, the passes out); :class:`TraceTail` is the only part
that runs inside the box.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import attrs

#: the variables the recorder sets for itself before its first device (Mesa reads them once)
TRACES_ENV, TRACEFILE_ENV, TRACEPOINT_ENV = "MESA_GPU_TRACES", "MESA_GPU_TRACEFILE", "TU_GPU_TRACEPOINT"
#: u_trace's text printer; turnip's render_pass tracepoint alone
TRACES, TRACEPOINTS = "print", "-all,+render_pass"
#: how long a job waits for its pass's line before the recorder stops reading the trace
TIMEOUT_S = 5.0

#: the text printer's end_render_pass line (tu_tracepoints.py's end_args, in order); Mesa 26.1.6's
#: printer puts a colon after the tracepoint's name, 26.2.6's does not
_END = re.compile(r"end_render_pass:? tiledRender=(true|false), tilingDisableReason=(.*?), drawCount=")


@attrs.frozen
class PassTrace:
    """One render pass as its ``end_render_pass`` tracepoint printed it: ``tiled`` is
    ``tiledRender``; ``reason`` is ``tilingDisableReason`` as printed, None where it is empty."""

    tiled: bool
    reason: str | None

    def as_json(self) -> dict[str, Any]:
        return {"tiled": self.tiled, "reason": self.reason}

    @staticmethod
    def from_json(d: dict[str, Any]) -> PassTrace:
        return PassTrace(tiled=bool(d["tiled"]), reason=d["reason"])


def render_passes(text: str) -> tuple[PassTrace, ...]:
    """Every ``end_render_pass`` of u_trace's text output, in order."""
    return tuple(PassTrace(tiled=m.group(1) == "true", reason=m.group(2) or None) for m in _END.finditer(text))


def enable(environ: MutableMapping[str, str], path: Path) -> None:
    """Set the variables that make Mesa print turnip's render-pass tracepoint into ``path``."""
    environ[TRACES_ENV] = TRACES
    environ[TRACEFILE_ENV] = str(path)
    environ[TRACEPOINT_ENV] = TRACEPOINTS


@functools.cache
def _libc() -> tuple[Any, Any]:
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("int fflush(void *stream);")
    return ffi, ffi.dlopen(None)


def _flush_c_streams() -> None:
    """``fflush(NULL)`` of this process's C library: u_trace's ``FILE`` is flushed only at exit."""
    ffi, libc = _libc()
    libc.fflush(ffi.NULL)


class TraceTail:
    """The trace file of this process (:func:`enable` set before the first device), read on as
    the submissions print into it.  After one wait that timed out it reads nothing more (every
    later job says so: a late line could belong to an earlier submission)."""

    def __init__(self, path: Path, timeout_s: float = TIMEOUT_S) -> None:
        self.path, self.timeout_s = path, timeout_s
        self.offset = 0
        self.broken: str | None = None

    def take(self, passes: int = 1) -> tuple[PassTrace, ...] | str:
        """The next ``passes`` render passes printed since the last take, or why they could not
        be read."""
        if self.broken is not None:
            return self.broken
        deadline = time.monotonic() + self.timeout_s
        while True:
            _flush_c_streams()
            text = self.path.read_text(errors="replace")[self.offset:] if self.path.exists() else ""
            ends = list(_END.finditer(text))
            if len(ends) >= passes:
                nl = text.find("\n", ends[passes - 1].end())
                end = len(text) if nl < 0 else nl + 1
                self.offset += end
                return render_passes(text[:end])
            if time.monotonic() > deadline:
                self.broken = (f"u_trace printed no end_render_pass into {self.path} within {self.timeout_s:g} s "
                               f"({TRACES_ENV}={os.environ.get(TRACES_ENV, '')})")
                return self.broken
            time.sleep(0.001)
