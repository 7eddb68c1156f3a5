"""Hand-made command streams for the decoder's tests: PM4 packets and ``.rd`` files.

The encodings are the facts the decoder reads (adreno_pm4.xml's type-4 and type-7 headers;
Mesa's ``.rd`` sections, ``turnip_box.rd``), written out here independently of the code under
test, once for every ``tests/box/test_stream*.py``."""
from __future__ import annotations

import gzip
import struct
from pathlib import Path

from turnip_box.rd import RD_BUFFER_CONTENTS, RD_CHIP_ID, RD_CMDSTREAM_ADDR, RD_GPU_ID, RD_GPUADDR

#: (GPU id, chip id) of the streams the tests make: a730 unless a test names another
A730 = (730, 0x07030001)
A750 = (750, 0x07030001)
A830 = (830, 0x44050000)


def pkt4(reg: int, *vals: int) -> list[int]:
    """A type-4 packet: ``vals`` into consecutive registers from ``reg``."""
    return [(4 << 28) | (reg << 8) | len(vals), *vals]


def pkt7(op: int, *payload: int) -> list[int]:
    """A type-7 packet: opcode ``op`` and its payload."""
    return [(7 << 28) | (op << 16) | len(payload), *payload]


def bunch(*pairs: tuple[int, int]) -> list[int]:
    """CP_CONTEXT_REG_BUNCH (0x5c): register/value pairs, as turnip's ``tu_crb`` emits them."""
    return pkt7(0x5C, *(w for p in pairs for w in p))


def f32bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def xy(x: int, y: int) -> int:
    """``a6xx_reg_xy``: X bits 0-13, Y bits 16-29."""
    return x | y << 16


def section(typ: int, payload: bytes) -> bytes:
    """One ``.rd`` section: type, length, payload."""
    return struct.pack("<II", typ, len(payload)) + payload


def rd_file(tmp: Path, buffers: dict[int, list[int]], ib1: int, ib1_len: int, *, gpu: tuple[int, int] = A730,
            gz: bool = True) -> Path:
    """An ``.rd`` of one submit: the GPU and chip ids, the buffers at their addresses, and ``ib1``
    (``ib1_len`` dwords) as the command stream."""
    raw = section(RD_GPU_ID, struct.pack("<I", gpu[0])) + section(RD_CHIP_ID, struct.pack("<Q", gpu[1]))
    for addr, words in buffers.items():
        data = struct.pack(f"<{len(words)}I", *words)
        raw += section(RD_GPUADDR, struct.pack("<III", addr & 0xFFFFFFFF, len(data), addr >> 32))
        raw += section(RD_BUFFER_CONTENTS, data)
    raw += section(RD_CMDSTREAM_ADDR, struct.pack("<III", ib1, ib1_len, 0))
    p = tmp / ("s.rd" + (".gz" if gz else ""))
    p.write_bytes(gzip.compress(raw) if gz else raw)
    return p
