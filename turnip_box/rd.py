"""Reader of freedreno ``.rd`` command-stream dumps (what turnip writes with ``FD_RD_DUMP``).

A dump is a sequence of sections, each a little-endian ``u32`` type, a ``u32`` payload size and
the payload, optionally gzip-compressed as a whole.  The section types are those of Mesa's
``src/freedreno/common/redump.h`` and the kernel's ``msm_rd.c`` (``enum rd_sect_type``); the
layouts used here are the ones turnip's ``tu_dump_bo_list`` / ``fd_rd_output`` write in Mesa
26.2: ``RD_GPUADDR`` is ``(iova_lo, size, iova_hi)`` and is followed by ``RD_BUFFER_CONTENTS``
when the buffer is dumped; ``RD_CMDSTREAM_ADDR`` is ``(iova_lo, size_dwords, iova_hi)`` and
names one IB1 of the submit, in submit order.

:func:`read_rd` returns a :class:`Dump`: the GPU id, chip id, buffers and the IB1 entries;
:class:`Memory` gives dword reads and writes by GPU address over those buffers.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator
from pathlib import Path

import attrs

from turnip_base.errors import ScenarioError

RD_NONE, RD_TEST, RD_CMD, RD_GPUADDR, RD_CONTEXT, RD_CMDSTREAM = range(6)
RD_CMDSTREAM_ADDR, RD_PARAM, RD_FLUSH, RD_PROGRAM, RD_VERT_SHADER, RD_FRAG_SHADER = range(6, 12)
RD_BUFFER_CONTENTS, RD_GPU_ID, RD_CHIP_ID = 12, 13, 14

#: a dump larger than this (after decompression) is refused before it is decoded
MAX_DUMP_BYTES = 1 << 30


@attrs.frozen
class Buffer:
    """One GPU buffer of the dump: its address and, when dumped, its bytes."""

    iova: int
    size: int
    data: bytearray | None


@attrs.frozen
class Dump:
    """What one ``.rd`` file holds."""

    gpu_id: int | None
    chip_id: int | None
    buffers: tuple[Buffer, ...]
    #: the IB1s of the submit, in order: ``(iova, size in dwords)``
    cmdstreams: tuple[tuple[int, int], ...]


def sections(raw: bytes) -> Iterator[tuple[int, bytes]]:
    """``(type, payload)`` of every section; a truncated last section is an error."""
    pos = 0
    while pos < len(raw):
        if pos + 8 > len(raw):
            raise ScenarioError("rd", f"truncated section header at byte {pos}")
        typ, size = struct.unpack_from("<II", raw, pos)
        pos += 8
        if pos + size > len(raw):
            raise ScenarioError("rd", f"section of type {typ} at byte {pos - 8} claims {size} bytes, "
                                f"{len(raw) - pos} remain")
        yield typ, raw[pos:pos + size]
        pos += size


def load_bytes(path: Path) -> bytes:
    """The dump's bytes, gunzipped when the file is gzip (turnip writes ``.rd`` or ``.rd.gz``)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as f:
            raw = f.read(MAX_DUMP_BYTES + 1)
        if len(raw) > MAX_DUMP_BYTES:
            raise ScenarioError("rd", f"'{path}' decompresses to more than {MAX_DUMP_BYTES} bytes")
    return raw


def read_rd(path: Path) -> Dump:
    """Parse one dump (see the module docstring for the section layouts)."""
    gpu_id = chip_id = None
    buffers: list[Buffer] = []
    cmds: list[tuple[int, int]] = []
    pending: tuple[int, int] | None = None
    for typ, payload in sections(load_bytes(path)):
        if typ == RD_GPU_ID and len(payload) >= 4:
            gpu_id = struct.unpack_from("<I", payload)[0]
        elif typ == RD_CHIP_ID and len(payload) >= 8:
            chip_id = struct.unpack_from("<Q", payload)[0]
        elif typ == RD_GPUADDR:
            lo, size = struct.unpack_from("<II", payload)
            hi = struct.unpack_from("<I", payload, 8)[0] if len(payload) >= 12 else 0
            if pending is not None:
                buffers.append(Buffer(pending[0], pending[1], None))
            pending = ((hi << 32) | lo, size)
        elif typ == RD_BUFFER_CONTENTS:
            if pending is None:
                raise ScenarioError("rd", "buffer contents without a preceding GPU address")
            buffers.append(Buffer(pending[0], pending[1], bytearray(payload)))
            pending = None
        elif typ == RD_CMDSTREAM_ADDR:
            lo, dwords = struct.unpack_from("<II", payload)
            hi = struct.unpack_from("<I", payload, 8)[0] if len(payload) >= 12 else 0
            cmds.append(((hi << 32) | lo, dwords))
    if pending is not None:
        buffers.append(Buffer(pending[0], pending[1], None))
    return Dump(gpu_id, chip_id, tuple(buffers), tuple(cmds))


class Memory:
    """The GPU's memory as the dump shows it: dword reads and writes by address.  Reads of a
    buffer whose contents were not dumped, or of an unmapped address, raise ``KeyError``."""

    def __init__(self, buffers: tuple[Buffer, ...]) -> None:
        self._bufs = sorted((b for b in buffers if b.data is not None), key=lambda b: b.iova)
        self._starts = [b.iova for b in self._bufs]

    def _find(self, addr: int, nbytes: int) -> tuple[bytearray, int]:
        import bisect

        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0:
            b = self._bufs[i]
            assert b.data is not None
            off = addr - b.iova
            if off + nbytes <= len(b.data):
                return b.data, off
        raise KeyError(f"address {addr:#x} (+{nbytes}) is not in a dumped buffer")

    def dwords(self, addr: int, count: int) -> tuple[int, ...]:
        data, off = self._find(addr, 4 * count)
        return struct.unpack_from(f"<{count}I", data, off)

    def write(self, addr: int, values: tuple[int, ...]) -> None:
        data, off = self._find(addr, 4 * len(values))
        struct.pack_into(f"<{len(values)}I", data, off, *values)
