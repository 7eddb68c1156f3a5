"""The box's decoder of the subsampled stores, metadata and aprons (:mod:`turnip_box.subsampled`) on
a hand-made stream, no box needed: the packets are written out from tu_clear_blit.cc
(``tu_emit_blit``, ``store_cp_blit``, ``r3d_coords_multi``), tu_subsampled_image.cc
(``tu_emit_subsampled_metadata``), adreno_pm4.xml and a6xx.xml."""

from __future__ import annotations

from pathlib import Path

from turnip_box import subsampled as S
from turnip_box.rd import read_rd

from .streams import A750, f32bits, pkt4, pkt7, rd_file, xy

IB1, UBO = 0x1000, 0x8000












def test_decoder_reads_stores_metadata_and_aprons(tmp_path: Path) -> None:
    ib1 = pkt7(0x65, 4)                                              # CP_SET_MARKER RM6_BIN_RENDER_START
    ib1 += pkt7(0x38, 0x84, 1, 3)                                    # the application's draw
    ib1 += pkt7(0x65, 6)                                             # RM6_RESOLVE: the stores follow
    ib1 += pkt4(0x88D1, xy(0, 320), xy(255, 639)) + pkt4(0x88D4, xy(64, 320)) + pkt4(0x88E3, 0)
    ib1 += pkt7(0x46, 0x1E)                                          # CP_EVENT_WRITE BLIT (CCU_RESOLVE)
    ib1 += pkt4(0x8401, 0 << 8, 127 << 8, 0 << 8, 63 << 8) + pkt4(0x8405, xy(64, 320), xy(191, 383))
    ib1 += pkt4(0x840A, xy(0, 0), xy(1151, 639)) + pkt7(0x2C, 3)     # CP_BLIT
    header = [f32bits(2.4), f32bits(1.0), 0, 0, 3, 0, 0, 0]
    bins = [f32bits(1.0), f32bits(1.0), 0, 0] * 3
    ib1 += pkt7(0x3D, 0x9000, 0, *header, *bins)                     # CP_MEM_WRITE: the metadata
    ib1 += pkt7(0x3D, 0x9000, 0, 1, 2, 3)                            # not metadata-shaped
    blit = [f32bits(v) for v in (64.0, 0.0, 256.0, 0.0, 66.0, 80.0, 260.0, 80.0)]
    d0 = 0 | 2 << 14 | 0 << 16 | 8 << 18 | 1 << 22                   # ST6_UBO, SS6_DIRECT, SB6_VS_SHADER
    ib1 += pkt7(0x32, d0, 0, 0, UBO, 2 << 17)                        # a UBO of 2 vec4: one blit
    p = rd_file(tmp_path, {IB1: ib1, UBO: blit, 0x9000: [0] * 32}, IB1, len(ib1), gpu=A750)
    got = S.driver_subsampled(read_rd(p))
    (b,) = got.bins
    assert b.fast_store is None
    assert b.resolve == ((((0, 320), (255, 639)), (64, 320)),)
    assert b.a2d == ((((64, 320), (191, 383)), ((0, 0), (127, 63)), ((0, 0), (1151, 639))),)
    assert got.metadata == (tuple(header + bins),)
    assert got.aprons == ((tuple(blit),),)


def test_model_corners_are_packed_as_turnip_packs_them() -> None:
    """A negative A2D scissor X (uint32) fills Y's bits: turnip's packer does not mask (the box)."""
    assert S._corners(((2**32 - 32, 0), (159, 159))) == ((16352, 16383), (159, 159))
    assert S._corners(((8, 2**32 - 16), (295, 303))) == ((8, 16368), (295, 303))


def test_metadata_of_a_pass_with_no_marker(tmp_path: Path) -> None:
    """A GMEM pass whose every tile is invisible and that runs no binning pass emits no render-mode
    marker, yet tu_emit_subsampled writes its metadata: the decoder takes the writes of such a
    stream (and only of such a stream) from before any marker."""
    header = [f32bits(1.0), f32bits(1.0), 0, 0, 1, 0, 0, 0]
    bins = [f32bits(1.0), f32bits(1.0), 0, 0]
    ib1 = pkt7(0x3D, 0x9000, 0, *header, *bins)
    p = rd_file(tmp_path, {IB1: ib1, 0x9000: [0] * 16}, IB1, len(ib1), gpu=A750)
    got = S.driver_subsampled(read_rd(p))
    assert got.bins == () and got.metadata == (tuple(header + bins),) and got.aprons == ()
