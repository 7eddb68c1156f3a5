"""The a6xx/a7xx registers the box reads back, by offset, with their fields.

Offsets and bitfields are Mesa's register database ``src/freedreno/registers/adreno/a6xx.xml``
(variants ``A6XX-A7XX``; the A7XX-only FOVEAT registers) as read for turnip 26.2; turnip writes
the per-bin ones in ``tu6_emit_tile_select`` and the FDM patchpoints (``fdm_apply_viewports``,
``fdm_apply_scissors``) of tu_cmd_buffer.cc / tu_pipeline.cc.  a8xx moved most of them
(``GRAS_SC_WINDOW_SCISSOR`` to 0x8235, ``GRAS_BIN_FOVEAT`` to 0x8206, ...): the box decodes
a6xx and a7xx streams only and says so for an a8xx.

The field decoders here are the box's own reading of the bits; they do not call the model.
"""

from __future__ import annotations

import struct

GRAS_BIN_FOVEAT = 0x8008            # A7XX: BINSCALEEN bit 6; XSCALE_i 8+4i..9+4i, YSCALE_i 10+4i..11+4i
GRAS_BIN_FOVEAT_OFFSET_0 = 0x8009   # A7XX: _0 XOFFSET_0..2, _1 XOFFSET_3..5, _2 YOFFSET_0..2, _3 YOFFSET_3..5
GRAS_CL_VIEWPORT = 0x8010           # [16] x 6 dwords: XOFFSET, XSCALE, YOFFSET, YSCALE, ZOFFSET, ZSCALE (float)
GRAS_SC_BIN_CNTL = 0x80A1           # BINW 0-5 shr 5, BINH 8-14 shr 4, FORCE_LRZ_DIS 27 (A7XX)
GRAS_SC_SCREEN_SCISSOR = 0x80B0     # [16] TL, BR: a6xx_scissor_xy X 0-15, Y 16-31
GRAS_SC_VIEWPORT_SCISSOR = 0x80D0   # [16] TL, BR: a6xx_scissor_xy
GRAS_SC_WINDOW_SCISSOR_TL = 0x80F0  # a6xx_reg_xy X 0-13, Y 16-29
GRAS_SC_WINDOW_SCISSOR_BR = 0x80F1
GRAS_LRZ_CNTL = 0x8100              # ENABLE bit 0
RB_WINDOW_OFFSET = 0x8890           # a6xx_reg_xy
RB_BLIT_SCISSOR_TL = 0x88D1         # (RB_RESOLVE_CNTL_1 in newer a6xx.xml) a6xx_reg_xy: the fast store's rectangle
RB_BLIT_SCISSOR_BR = 0x88D2         # (RB_RESOLVE_CNTL_2)
RB_RESOLVE_OPERATION = 0x88E3       # (RB_BLIT_INFO) TYPE 0-1: 0 store, 1 store and clear, 2 clear, 3 load
GRAS_A2D_SRC = 0x8401               # SRC_TL_X, SRC_BR_X, SRC_TL_Y, SRC_BR_Y: bits 8+ (24.8 fixed point)
GRAS_A2D_DEST_TL = 0x8405           # a6xx_reg_xy
GRAS_A2D_DEST_BR = 0x8406
VSC_BIN_SIZE = 0x0C02               # A6XX-A7XX: BINW 0-7 shr 5, BINH 8-16 shr 4
VSC_EXPANDED_BIN_CNTL = 0x0C06      # NX 1-10, NY 11-20

#: hardware bin-scaling slots (MAX_HW_SCALED_VIEWS)
HW_SLOTS = 6
#: viewports and scissors (MAX_VIEWPORTS)
MAX_VIEWPORTS = 16


def reg_xy(v: int) -> tuple[int, int]:
    """``a6xx_reg_xy``: X bits 0-13, Y bits 16-29."""
    return v & 0x3FFF, (v >> 16) & 0x3FFF


def scissor_xy(v: int) -> tuple[int, int]:
    """``a6xx_scissor_xy``: X bits 0-15, Y bits 16-31."""
    return v & 0xFFFF, (v >> 16) & 0xFFFF


def f32(v: int) -> float:
    """A register dword read as the float32 it holds."""
    return float(struct.unpack("<f", struct.pack("<I", v & 0xFFFFFFFF))[0])


def bin_cntl(v: int) -> tuple[int, int, bool]:
    """``GRAS_SC_BIN_CNTL`` (A6XX-A7XX): ``(bin width, bin height, FORCE_LRZ_DIS)``."""
    return (v & 0x3F) << 5, ((v >> 8) & 0x7F) << 4, bool(v >> 27 & 1)


def vsc_bin_size(v: int) -> tuple[int, int]:
    """``VSC_BIN_SIZE`` (A6XX-A7XX): BINW 0-7 shr 5, BINH 8-16 shr 4."""
    return (v & 0xFF) << 5, ((v >> 8) & 0x1FF) << 4


def vsc_bin_count(v: int) -> tuple[int, int]:
    """``VSC_EXPANDED_BIN_CNTL``: NX bits 1-10, NY bits 11-20."""
    return (v >> 1) & 0x3FF, (v >> 11) & 0x3FF


def foveat(v: int, offsets: tuple[int, int, int, int]) -> dict[str, object]:
    """``GRAS_BIN_FOVEAT`` and ``GRAS_BIN_FOVEAT_OFFSET_0..3`` (A7XX): BINSCALEEN, the 2-bit
    scale of each slot and its offset (10-bit fields, ``shr`` 2)."""
    xs = [(v >> (8 + 4 * i)) & 3 for i in range(HW_SLOTS)]
    ys = [(v >> (10 + 4 * i)) & 3 for i in range(HW_SLOTS)]
    offs = []
    for i in range(HW_SLOTS):
        k = 10 * (i % 3)
        ox = ((offsets[i // 3] >> k) & 0x3FF) << 2
        oy = ((offsets[2 + i // 3] >> k) & 0x3FF) << 2
        offs.append([ox, oy])
    return {"binscaleen": bool(v >> 6 & 1), "xscale": xs, "yscale": ys, "offsets": offs}
