"""The registers the box reads back, by offset, with their fields: one table per chip generation
(:func:`table`), a6xx/a7xx and a8xx.

Offsets and bitfields are Mesa's register database ``src/freedreno/registers/adreno/a6xx.xml``
(pop-os/mesa @ 26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41, the project's a6xx.xml baseline), which
describes all three generations in one domain with ``variants``: :data:`A6XX_A7XX` takes the
registers of variants ``A6XX-A7XX`` (the A7XX-only FOVEAT registers), :data:`A8XX` those of
``A8XX-`` / ``A8XX`` and the registers without variants, each named in a comment; no a8xx offset
is taken by analogy with a7xx.  Turnip writes the per-bin ones in ``tu6_emit_tile_select``
(``tu6_emit_bin_size``, ``tu6_emit_window_scissor``, ``tu6_emit_window_offset``, the FOVEAT
registers) and the FDM patchpoints (``fdm_apply_viewports``, ``fdm_apply_scissors``,
``fdm_apply_store_coords``) of tu_cmd_buffer.cc / tu_pipeline.cc / tu_clear_blit.cc, through the
``CHIP``-templated register builders, so the same code writes each generation's offsets.

The module-level constants and field readers are the a6xx/a7xx ones (the :data:`A6XX_A7XX`
table's); the field decoders are the box's own reading of the bits; they do not call the model.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import attrs

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


def _scales(v: int) -> dict[str, Any]:
    """``a6xx_gras_bin_foveat`` (GRAS_BIN_FOVEAT, A7XX and A8XX-): BINSCALEEN bit 6, the 2-bit
    ``a7xx_bin_scale`` of each slot, XSCALE_i bits 8+4i..9+4i, YSCALE_i 10+4i..11+4i."""
    return {"binscaleen": bool(v >> 6 & 1), "xscale": [(v >> (8 + 4 * i)) & 3 for i in range(HW_SLOTS)],
            "yscale": [(v >> (10 + 4 * i)) & 3 for i in range(HW_SLOTS)]}


def foveat(v: int, offsets: tuple[int, int, int, int]) -> dict[str, object]:
    """``GRAS_BIN_FOVEAT`` and ``GRAS_BIN_FOVEAT_OFFSET_0..3`` (A7XX): BINSCALEEN, the 2-bit
    scale of each slot and its offset (10-bit fields, ``shr`` 2)."""
    offs = []
    for i in range(HW_SLOTS):
        k = 10 * (i % 3)
        ox = ((offsets[i // 3] >> k) & 0x3FF) << 2
        oy = ((offsets[2 + i // 3] >> k) & 0x3FF) << 2
        offs.append([ox, oy])
    return {**_scales(v), "offsets": offs}


def bin_foveat_xy(v: int) -> list[int]:
    """``a8xx_bin_foveat_xy`` (GRAS/RB_BIN_FOVEAT_XY[_FDM][i], A8XX-): XOFFSET bits 0-13, YOFFSET
    bits 16-29, uint (no ``shr``)."""
    return [v & 0x3FFF, (v >> 16) & 0x3FFF]


def a8xx_bin_cntl(v: int) -> tuple[int, int, bool]:
    """``GRAS_SC_BIN_CNTL`` (A8XX-, bitset ``a8xx_bin_cntl`` plus its own fields): BINW bits 0-9
    shr 5, BINH bits 16-26 shr 4, FORCE_LRZ_DIS bit 15."""
    return (v & 0x3FF) << 5, ((v >> 16) & 0x7FF) << 4, bool(v >> 15 & 1)


def a8xx_bin_size(v: int) -> tuple[int, int]:
    """``VSC_BIN_SIZE`` (A8XX, bitset ``a8xx_bin_size``): BINW bits 0-9 shr 5, BINH bits 16-26
    shr 4."""
    return (v & 0x3FF) << 5, ((v >> 16) & 0x7FF) << 4


Getter = Callable[[int], int]


@attrs.frozen(kw_only=True)
class Table:
    """One chip generation's offsets of the registers the box reads, and its field readers.

    ``foveat_offsets`` are the registers whose offsets :attr:`foveat` decodes: a7xx the four
    ``GRAS_BIN_FOVEAT_OFFSET_0..3``; a8xx the ``GRAS_BIN_FOVEAT_XY[6]`` array and, in
    ``foveat_copies``, the three arrays turnip writes with the same ``o'``."""

    name: str
    chips: tuple[int, ...]
    gras_bin_foveat: int
    foveat_offsets: tuple[int, ...]
    foveat_copies: tuple[tuple[str, int], ...]
    gras_cl_viewport: int
    gras_sc_bin_cntl: int
    gras_sc_screen_scissor: int
    gras_sc_viewport_scissor: int
    gras_sc_window_scissor_tl: int
    gras_sc_window_scissor_br: int
    gras_lrz_cntl: int
    rb_window_offset: int
    rb_blit_scissor_tl: int
    rb_blit_scissor_br: int
    rb_resolve_operation: int
    gras_a2d_src: int
    gras_a2d_dest_tl: int
    gras_a2d_dest_br: int
    gras_a2d_scissor_tl: int
    gras_a2d_scissor_br: int
    rb_resolve_window_offset: int
    vsc_bin_size: int
    vsc_expanded_bin_cntl: int
    bin_cntl: Callable[[int], tuple[int, int, bool]]
    bin_size: Callable[[int], tuple[int, int]]

    @property
    def a8xx(self) -> bool:
        return 8 in self.chips

    def foveat(self, g: Getter) -> dict[str, Any]:
        """BINSCALEEN, the scale of each slot and its offset ``[x, y]`` as programmed (a8xx: also
        ``copies``, each other array's offsets by name)."""
        if not self.a8xx:
            return foveat(g(self.gras_bin_foveat), tuple(g(r) for r in self.foveat_offsets))  # type: ignore[arg-type]
        out = _scales(g(self.gras_bin_foveat))
        out["offsets"] = [bin_foveat_xy(g(r)) for r in self.foveat_offsets]
        out["copies"] = {name: [bin_foveat_xy(g(base + i)) for i in range(HW_SLOTS)]
                         for name, base in self.foveat_copies}
        return out

    def hw_offset(self, c: int) -> int:
        """An ``o'`` coordinate as its field holds it: a7xx 10 bits ``shr`` 2 (a larger ``o'``
        wraps), a8xx 14 bits, no shift."""
        return c & 0x3FFF if self.a8xx else (c >> 2 & 0x3FF) << 2


#: a6xx.xml variants ``A6XX-A7XX`` (and ``A7XX`` for the FOVEAT registers): the constants above
A6XX_A7XX = Table(
    name="a6xx/a7xx", chips=(6, 7),
    gras_bin_foveat=GRAS_BIN_FOVEAT,
    foveat_offsets=tuple(GRAS_BIN_FOVEAT_OFFSET_0 + k for k in range(4)), foveat_copies=(),
    gras_cl_viewport=GRAS_CL_VIEWPORT, gras_sc_bin_cntl=GRAS_SC_BIN_CNTL,
    gras_sc_screen_scissor=GRAS_SC_SCREEN_SCISSOR, gras_sc_viewport_scissor=GRAS_SC_VIEWPORT_SCISSOR,
    gras_sc_window_scissor_tl=GRAS_SC_WINDOW_SCISSOR_TL, gras_sc_window_scissor_br=GRAS_SC_WINDOW_SCISSOR_BR,
    gras_lrz_cntl=GRAS_LRZ_CNTL, rb_window_offset=RB_WINDOW_OFFSET,
    rb_blit_scissor_tl=RB_BLIT_SCISSOR_TL, rb_blit_scissor_br=RB_BLIT_SCISSOR_BR,
    rb_resolve_operation=RB_RESOLVE_OPERATION,
    gras_a2d_src=GRAS_A2D_SRC, gras_a2d_dest_tl=GRAS_A2D_DEST_TL, gras_a2d_dest_br=GRAS_A2D_DEST_BR,
    # GRAS_A2D_SCISSOR_TL / _BR 0x840a / 0x840b; RB_RESOLVE_WINDOW_OFFSET 0x88d4 (a6xx_reg_xy)
    gras_a2d_scissor_tl=0x840A, gras_a2d_scissor_br=0x840B, rb_resolve_window_offset=0x88D4,
    vsc_bin_size=VSC_BIN_SIZE, vsc_expanded_bin_cntl=VSC_EXPANDED_BIN_CNTL,
    bin_cntl=bin_cntl, bin_size=vsc_bin_size,
)

#: a8xx (a6xx.xml @ 26e5c1f9; every offset is the a8xx variant's own, none by analogy):
A8XX = Table(
    name="a8xx", chips=(8,),
    # GRAS_BIN_FOVEAT variants="A8XX-" 0x8206 (type a6xx_gras_bin_foveat, plus FDM_OFFSET_EN bit 7)
    gras_bin_foveat=0x8206,
    # GRAS_BIN_FOVEAT_XY variants="A8XX-": array 0x8220, stride 1, length 6, a8xx_bin_foveat_xy
    foveat_offsets=tuple(0x8220 + i for i in range(HW_SLOTS)),
    # RB_BIN_FOVEAT_XY 0x8950, GRAS_BIN_FOVEAT_XY_FDM 0x8228, RB_BIN_FOVEAT_XY_FDM 0x8960 (arrays of 6,
    # variants="A8XX-", a8xx_bin_foveat_xy): tu6_emit_tile_select writes all four with frag_offsets[i]
    foveat_copies=(("RB_BIN_FOVEAT_XY", 0x8950), ("GRAS_BIN_FOVEAT_XY_FDM", 0x8228),
                   ("RB_BIN_FOVEAT_XY_FDM", 0x8960)),
    # GRAS_CL_VIEWPORT variants="A8XX-": array 0x82d0, stride 6, length 16 (XOFFSET .. ZSCALE, float)
    gras_cl_viewport=0x82D0,
    # GRAS_SC_BIN_CNTL variants="A8XX-" 0x8231 (a8xx_bin_cntl; FORCE_LRZ_DIS bit 15)
    gras_sc_bin_cntl=0x8231,
    # GRAS_SC_SCREEN_SCISSOR variants="A8XX-": array 0x8240, stride 2, length 16 (TL, BR a6xx_scissor_xy)
    gras_sc_screen_scissor=0x8240,
    # GRAS_SC_VIEWPORT_SCISSOR variants="A8XX-": array 0x8270, stride 2, length 16
    gras_sc_viewport_scissor=0x8270,
    # GRAS_SC_WINDOW_SCISSOR_TL / _BR variants="A8XX-": 0x8235 / 0x8236 (a6xx_reg_xy)
    gras_sc_window_scissor_tl=0x8235, gras_sc_window_scissor_br=0x8236,
    # GRAS_LRZ_CNTL variants="A8XX-" 0x8212 (a6xx_gras_lrz_cntl: ENABLE bit 0)
    gras_lrz_cntl=0x8212,
    # RB_WINDOW_OFFSET 0x8890 (no variants: every generation; tu6_emit_window_offset writes
    # A6XX_RB_WINDOW_OFFSET on a8xx too)
    rb_window_offset=0x8890,
    # RB_RESOLVE_CNTL_1 / _2 0x88d1 / 0x88d2 and RB_RESOLVE_OPERATION 0x88e3 (no variants)
    rb_blit_scissor_tl=0x88D1, rb_blit_scissor_br=0x88D2, rb_resolve_operation=0x88E3,
    # GRAS_A2D_SRC_XMIN/XMAX/YMIN/YMAX variants="A8XX-" 0x8501-0x8504 (bits 8-24);
    # GRAS_A2D_DEST_TL / _BR variants="A8XX-" 0x8505 / 0x8506 (a6xx_reg_xy)
    gras_a2d_src=0x8501, gras_a2d_dest_tl=0x8505, gras_a2d_dest_br=0x8506,
    # GRAS_A2D_SCISSOR_TL / _BR variants="A8XX-" 0x8507 / 0x8508; RB_RESOLVE_WINDOW_OFFSET 0x88d4
    # keeps its offset (the a830 stream's patches write 0x88d1 x2 and 0x88d4)
    gras_a2d_scissor_tl=0x8507, gras_a2d_scissor_br=0x8508, rb_resolve_window_offset=0x88D4,
    # VSC_BIN_SIZE variants="A8XX" 0x0c02 (a8xx_bin_size); VSC_EXPANDED_BIN_CNTL 0x0c06 (no variants)
    vsc_bin_size=0x0C02, vsc_expanded_bin_cntl=0x0C06,
    bin_cntl=a8xx_bin_cntl, bin_size=a8xx_bin_size,
)

TABLES = {6: A6XX_A7XX, 7: A6XX_A7XX, 8: A8XX}


def table(chip: int) -> Table:
    """The register table of chip generation ``chip`` (6, 7 or 8; KeyError for another)."""
    return TABLES[chip]
