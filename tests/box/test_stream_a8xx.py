"""The box's a8xx register table without a box: hand-made a8xx streams whose answers are written
out from a6xx.xml's ``A8XX-`` variants (pop-os/mesa @ 26e5c1f9), not from the code under test.

The a8xx offsets checked here: GRAS_SC_WINDOW_SCISSOR_TL/BR 0x8235/0x8236, GRAS_SC_BIN_CNTL
0x8231 (BINW 0-9 shr 5, BINH 16-26 shr 4, FORCE_LRZ_DIS 15), RB_WINDOW_OFFSET 0x8890,
GRAS_LRZ_CNTL 0x8212, GRAS_BIN_FOVEAT 0x8206, GRAS_BIN_FOVEAT_XY[6] 0x8220 (XOFFSET 0-13, YOFFSET
16-29), RB_BIN_FOVEAT_XY 0x8950, GRAS_BIN_FOVEAT_XY_FDM 0x8228, RB_BIN_FOVEAT_XY_FDM 0x8960,
GRAS_CL_VIEWPORT[16] 0x82d0 (stride 6), GRAS_SC_SCREEN_SCISSOR[16] 0x8240 and
GRAS_SC_VIEWPORT_SCISSOR[16] 0x8270 (stride 2), GRAS_A2D_SRC_XMIN..YMAX 0x8501-0x8504,
GRAS_A2D_DEST_TL/BR 0x8505/0x8506, VSC_BIN_SIZE 0x0c02 (a8xx_bin_size), VSC_EXPANDED_BIN_CNTL
0x0c06.  Each stream also writes the a7xx offsets with other values: an a8xx reading must not
see them.
"""

from __future__ import annotations

from pathlib import Path

from turnip_box import registers as R
from turnip_box.decode import driver_pass
from turnip_box.jobs import DECODED_CHIPS
from turnip_box.rd import read_rd

from .streams import A830, bunch, f32bits, pkt4, pkt7, xy
from .streams import rd_file as _rd_file

IB1, IB2, DS = 0x1000, 0x2000, 0x3000














def _a8xx_pass(tmp: Path) -> Path:
    """A binning pass and two bins as turnip 26.2 emits them on a8xx (CP_SET_MARKER mode in bits
    0-6, USES_GMEM bit 7): each bin programs its window, bin size, FOVEAT and offsets, patches the
    viewport group with CP_MEM_WRITE, draws, then stores with a CP_BLIT of the A2D engine."""
    def vp_group(x_off: float, x_scale: float, y_off: float, y_scale: float) -> list[int]:
        return (bunch((0x82D0, f32bits(x_off)), (0x82D1, f32bits(x_scale)), (0x82D2, f32bits(y_off)),
                      (0x82D3, f32bits(y_scale)))
                + bunch((0x8270, xy(0, 0)), (0x8271, xy(383, 191)), (0x8240, xy(8, 4)), (0x8241, xy(300, 150))))

    group = vp_group(0.0, 0.0, 0.0, 0.0)
    draw = pkt7(0x38, 0x84, 1, 3)  # CP_DRAW_INDX_OFFSET, a triangle list
    ib1: list[int] = []
    ib1 += pkt7(0x43, len(group) | (3 << 24), DS, 0)               # SET_DRAW_STATE group 3
    # the binning pass (RM6_BIN_VISIBILITY): VSC_BIN_SIZE 192x96 -> BINW 6, BINH 6 << 16; 5x7 bins
    ib1 += pkt7(0x65, 0x02)
    ib1 += pkt4(0x0C02, 6 | (6 << 16))
    ib1 += pkt4(0x0C06, (5 << 1) | (7 << 11))
    ib1 += pkt4(0x8235, xy(0, 0), xy(959, 671))
    ib1 += pkt4(0x80F0, xy(1, 1), xy(2, 2))                       # a7xx offset: another meaning on a8xx
    ib1 += pkt7(0x3F, IB2, 0, len(draw))
    ib1 += pkt7(0x65, 0x0F)                                       # RM7_BIN_VISIBILITY_END
    bins = ((xy(768, 96), 1.0, (256, 0)), (xy(576, 96), 0.5, (300, 40)))
    for b, (offset, scale, (ox, oy)) in enumerate(bins):
        ib1 += pkt7(0x65, 0x84)                                   # RM6_BIN_RENDER_START | USES_GMEM
        # GRAS_SC_BIN_CNTL: 192 x 96 (BINW 6, BINH 6 << 16), FORCE_LRZ_DIS (bit 15) on bin 1
        ib1 += pkt4(0x8231, 6 | (6 << 16) | ((1 << 15) if b else 0))
        ib1 += pkt4(0x80A1, 0x3F | (0x7F << 8) | (1 << 27))       # a7xx GRAS_SC_BIN_CNTL offset: decoy
        ib1 += pkt4(0x8235, xy(0, 0), xy(1151, 767))              # window scissor (bin scaling on)
        ib1 += pkt4(0x8212, 1)                                    # GRAS_LRZ_CNTL.ENABLE
        ib1 += bunch((0x8890, offset), (0x88D4, offset))          # RB_WINDOW_OFFSET (and the resolve one)
        # GRAS_BIN_FOVEAT: BINSCALEEN, XSCALE_0 = 1, YSCALE_0 = 2 (bin 1 only)
        ib1 += pkt4(0x8206, (1 << 6) | ((1 << 8) | (2 << 10) if b else 0))
        ib1 += pkt4(0x8008, 0xFFFFFFFF)                           # a7xx GRAS_BIN_FOVEAT offset: decoy
        ib1 += bunch(*((base, xy(ox, oy)) for base in (0x8220, 0x8950, 0x8228, 0x8960)))
        ib1 += pkt7(0x3D, DS, 0, *vp_group(100.0 + b, 50.0, 48.0, 48.0 * scale))  # the patchpoint
        ib1 += pkt7(0x3F, IB2, 0, len(draw))
        ib1 += pkt7(0x65, 0x05)                                   # RM6_BIN_END_OF_DRAWS
        # the scaled store: GRAS_A2D_DEST_TL/BR, GRAS_A2D_SRC_XMIN..YMAX (24.8), then CP_BLIT
        ib1 += pkt4(0x8505, xy(768, 96), xy(959, 191))
        ib1 += pkt4(0x8501, 768 << 8, 863 << 8, 96 << 8, 143 << 8)
        ib1 += pkt4(0x8405, xy(1, 2), xy(3, 4))                   # a7xx GRAS_A2D_DEST offset: decoy
        ib1 += pkt7(0x2C, 0x3F)                                   # CP_BLIT
    return _rd_file(tmp, {IB1: ib1, IB2: draw, DS: group}, IB1, len(ib1), gpu=A830)


def test_a8xx_is_decoded() -> None:
    assert 8 in DECODED_CHIPS and R.table(8) is R.A8XX and R.table(7) is R.table(6) is R.A6XX_A7XX


def test_a8xx_fields() -> None:
    # a8xx_bin_cntl: BINW 0-9 shr 5, BINH 16-26 shr 4; FORCE_LRZ_DIS bit 15 (GRAS_SC_BIN_CNTL A8XX-)
    assert R.A8XX.bin_cntl((1023) | (2047 << 16) | (1 << 15)) == (1023 * 32, 2047 * 16, True)
    assert R.A8XX.bin_cntl(1 << 27) == (0, 0, False)               # bit 27 is BIN_VRS_DIS there
    # a8xx_bin_size: BINW 0-9 shr 5, BINH 16-26 shr 4
    assert R.A8XX.bin_size(6 | (6 << 16)) == (192, 96)
    assert R.A6XX_A7XX.bin_size(6 | (6 << 8)) == (192, 96)
    # a8xx_bin_foveat_xy: XOFFSET 0-13, YOFFSET 16-29, no shift: o' up to 16383 is held exactly
    assert R.bin_foveat_xy(xy(4103, 16383)) == [4103, 16383]
    assert R.A8XX.hw_offset(4103) == 4103 and R.A6XX_A7XX.hw_offset(4103) == 4
    offsets = dict(R.A8XX.foveat_copies)
    assert (R.A8XX.gras_bin_foveat, R.A8XX.foveat_offsets[0], offsets["GRAS_BIN_FOVEAT_XY_FDM"],
            offsets["RB_BIN_FOVEAT_XY"], offsets["RB_BIN_FOVEAT_XY_FDM"]) == (0x8206, 0x8220, 0x8228, 0x8950, 0x8960)


def test_a8xx_pass_is_read_at_the_a8xx_offsets(tmp_path: Path) -> None:
    dp = driver_pass(read_rd(_a8xx_pass(tmp_path)), slots=1, chip=8)
    assert dp.render_mode == "gmem" and len(dp.bins) == 2 and dp.binning is not None
    assert dp.tile_size == (192, 96) and dp.tile_count == (5, 7)
    assert dp.binning.window_scissor == ((0, 0), (959, 671))
    b0, b1 = dp.bins
    assert [b.window_scissor for b in dp.bins] == [((0, 0), (1151, 767))] * 2
    assert [b.window_offset for b in dp.bins] == [(768, 96), (576, 96)]
    assert [b.bin_size for b in dp.bins] == [(192, 96), (192, 96)]
    assert [(b.lrz_enable, b.force_lrz_dis) for b in dp.bins] == [(True, False), (True, True)]
    assert b0.foveat is not None and b1.foveat is not None
    assert b0.foveat["binscaleen"] and b0.foveat["xscale"][0] == 0 and b0.foveat["yscale"][0] == 0
    assert (b1.foveat["xscale"][0], b1.foveat["yscale"][0]) == (1, 2)
    assert b0.foveat["offsets"][0] == [256, 0] and b1.foveat["offsets"][0] == [300, 40]
    assert all(c[0] == [300, 40] for c in b1.foveat["copies"].values()) and len(b1.foveat["copies"]) == 3
    # the patched viewport group (GRAS_CL_VIEWPORT[0] at 0x82d0) and the two scissors
    assert [tuple(R.f32(v) for v in b.slots[0].viewport_regs[:4]) for b in dp.bins] == \
        [(100.0, 50.0, 48.0, 48.0), (101.0, 50.0, 48.0, 24.0)]
    assert b1.slot_count == 1
    assert b1.slots[0].viewport_scissor == ((0, 0), (383, 191)) and b1.slots[0].scissor == ((8, 4), (300, 150))
    assert b1.stores == (("a2d", ((768, 96), (959, 191)), ((768, 96), (863, 143))),)


def test_the_same_stream_read_as_a7xx_sees_other_registers(tmp_path: Path) -> None:
    # the decoys at the a7xx offsets are what an a7xx reading finds: the table decides
    dp = driver_pass(read_rd(_a8xx_pass(tmp_path)), slots=1, chip=7)
    assert dp.binning is not None and dp.binning.window_scissor == ((1, 1), (2, 2))
    assert dp.bins[0].bin_size == (0x3F << 5, 0x7F << 4) and dp.bins[0].force_lrz_dis
    assert dp.bins[0].stores == (("a2d", ((1, 2), (3, 4)), ((0, 0), (0, 0))),)
    assert dp.bins[0].slots[0].viewport_regs[:4] == (0, 0, 0, 0)
