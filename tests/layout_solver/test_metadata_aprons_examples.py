"""Worked examples of docs/spec/turnip-fdm-spec.md §11.7, 11.9, 11.10 and 11.13 for the metadata,
the shader transform and the apron blits, with their exact numbers.  The scenarios: fixtures of
conftest.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fdm.cmath import F32
from fdm.geometry import Rect
from layout_solver import tu_calc_subsampled
from layout_solver.aprons import AprBlit, _shared_edge, tu_calc_subsampled_aprons
from layout_solver.metadata import (
    LAYER_BYTES,
    LAYER_VEC4S,
    UndefinedMetadataRead,
    f2u16,
    fallback_metadata,
    ffma,
    framebuffer_to_subsampled,
    metadata_ubo,
    shader_pixel,
    tu_emit_subsampled_metadata,
    tu_get_subsampled_coordinates,
)
from turnip_base.errors import DriverAssertion, ScenarioError


def f32(x):
    return F32(x)


# -- metadata -----------------------------------------------------------------------------------

def test_layer_size():
    assert LAYER_VEC4S == 514 and LAYER_BYTES == 8224


def test_11_7_metadata(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    m = tu_emit_subsampled_metadata(L, 0)
    assert not m.fallback
    assert m.header.scale == (F32(1000) / F32(192), F32(3.75))
    assert m.header.scale[0] == f32(5.2083335)
    assert m.header.offset == (F32(0), F32(0)) and m.header.bin_stride == 6
    assert len(m.bins) == 24
    b10 = m.bin(1, 0)
    assert b10.scale == (F32(0.5), F32(0.5)) and b10.offset == (F32(192) / F32(1000), F32(0))
    assert b10.offset[0] == f32(0.192)
    b11 = m.bin(1, 1)
    assert b11.offset == (f32(0.192), F32(80) / F32(600)) and b11.offset[1] == f32(0.13333334)
    b00 = m.bin(0, 0)
    assert b00.scale == (F32(1), F32(1)) and b00.offset == (F32(0), F32(0))
    # check of the spec: fb x = 200 -> 200 * 0.5 + 192 = 292 = 288 + (200 - 192) / 2
    assert framebuffer_to_subsampled(L, 0, 200, 0) == (292, 0)


def test_11_9_metadata(plan_11_9):
    L = tu_calc_subsampled(plan_11_9)
    m = tu_emit_subsampled_metadata(L, 0)
    assert m.header.scale == (f32(5.2083335), f32(3.75))
    assert m.header.offset == (F32(152) / F32(192), F32(16) / F32(160))
    assert m.header.offset == (f32(0.7916667), f32(0.1)) and m.header.bin_stride == 7
    assert len(m.bins) == 35
    ratio = (F32(1000) / F32(1096), F32(600) / F32(632))
    assert ratio == (f32(0.91240877), f32(0.9493671))
    b10 = m.bin(1, 0)
    assert b10.scale == (F32(ratio[0] / F32(2)), F32(ratio[1] / F32(2))) == (f32(0.45620438), f32(0.47468355))
    assert b10.offset == (F32(76) / F32(1096), F32(0)) and b10.offset[0] == f32(0.06934307)
    b51 = m.bin(5, 1)
    assert b51.offset == (F32(596) / F32(1096), F32(88) / F32(632))
    assert b51.offset == (f32(0.54379565), f32(0.1392405))
    # the extra (invisible) column/row of the FDM-offset VSC is identity
    assert m.bin(6, 0).scale == (F32(1), F32(1)) and m.bin(0, 4).offset == (F32(0), F32(0))


@pytest.mark.parametrize("fused", [True, False])
def test_11_9_shader_round_trip(fused, plan_11_9):
    L = tu_calc_subsampled(plan_11_9)
    ubo = metadata_ubo([tu_emit_subsampled_metadata(L, 0)])
    cases = [((500.5, 300.5), (3, 1), (Fraction(2073, 4), Fraction(953, 4))),     # (518.25, 238.25)
             ((40.5, 143.5), (1, 0), (Fraction(385, 4), Fraction(287, 4))),       # (96.25, 71.75)
             ((999.5, 599.5), (5, 3), (Fraction(4383, 4), Fraction(2527, 4)))]    # (1095.75, 631.75)
    hdr = ubo[0]
    for (x, y), cell, exact in cases:
        u, v = F32(x / 1000), F32(y / 600)
        assert (f2u16(ffma(u, hdr[0], hdr[2], fused)), f2u16(ffma(v, hdr[1], hdr[3], fused))) == cell
        assert framebuffer_to_subsampled(L, 0, Fraction(x), Fraction(y)) == exact
        sx, sy = shader_pixel(L, ubo, x, y, fused=fused)
        assert abs(sx - float(exact[0])) < 1e-3 and abs(sy - float(exact[1])) < 1e-3
        assert (int(sx), int(sy)) == (int(exact[0]), int(exact[1]))
    # last pixel of the allocated image
    sx, sy = shader_pixel(L, ubo, 999.5, 599.5, fused=fused)
    assert (int(sx), int(sy)) == (L.width0 - 1, L.height0 - 1)


def test_11_9_float32_results_pinned(plan_11_9):
    """The float32 outputs of the transform for (999.5, 599.5): fused and unfused differ in x."""
    L = tu_calc_subsampled(plan_11_9)
    ubo = metadata_ubo([tu_emit_subsampled_metadata(L, 0)])
    c = (F32(999.5 / 1000), F32(599.5 / 600))
    fu = tu_get_subsampled_coordinates(ubo, c, fused=True)
    un = tu_get_subsampled_coordinates(ubo, c, fused=False)
    assert fu[1] == un[1]
    assert fu[0] != un[0] and abs(float(fu[0]) - float(un[0])) <= 2 * float(np.spacing(fu[0]))


def test_ffma_single_rounding():
    # 1 + 2^-24 is not a float32: fused keeps the tiny product, unfused loses it in the product
    a, b = F32(1 + 2 ** -12), F32(1 + 2 ** -12)   # a*b = 1 + 2^-11 + 2^-24
    c = F32(-1)
    assert ffma(a, b, c, fused=True) == F32(2 ** -11 + 2 ** -24)
    assert ffma(a, b, c, fused=False) == F32(2 ** -11)


def test_ffma_no_double_rounding():
    """a*b + c = 1 + 2^-24 + 2^-60: float64 rounds to the float32 midpoint 1 + 2^-24, whose
    ties-to-even rounding gives 1.0; the single rounding of the exact value gives 1 + 2^-23."""
    a, b, c = F32(-(2 ** -24) * (1 + 2 ** -18)), F32(1 - 2 ** -18), F32(1 + 2 ** -23)
    assert F32(float(a) * float(b) + float(c)) == F32(1.0)
    assert ffma(a, b, c, fused=True) == F32(1 + 2 ** -23)
    # exact ties go to even
    assert ffma(F32(1), F32(1), F32(2 ** -24), fused=True) == F32(1)
    assert ffma(F32(1), F32(1 + 2 ** -23), F32(2 ** -24), fused=True) == F32(1 + 2 ** -22)


def test_fallback_metadata():
    m = fallback_metadata((1000, 600), (1096, 632))
    assert m.fallback and m.header.bin_stride == 1 and len(m.bins) == 1
    assert m.header.scale == (F32(1), F32(1)) and m.header.offset == (F32(0), F32(0))
    assert m.bins[0].scale == (F32(1000) / F32(1096), F32(600) / F32(632))
    ubo = metadata_ubo([m])
    u, v = tu_get_subsampled_coordinates(ubo, (F32(0.5), F32(0.5)))
    assert (u, v) == (F32(0.5) * m.bins[0].scale[0], F32(0.5) * m.bins[0].scale[1])
    with pytest.raises(UndefinedMetadataRead):
        tu_get_subsampled_coordinates(ubo, (F32(1.0), F32(0.5)))   # bin 1 was never written


def test_undefined_shader_behaviour_is_a_driver_assertion(plan_11_9):
    """``f2u16`` outside [0, 65536) and reads of unwritten metadata are undefined in the shader
    (DriverAssertion); a framebuffer position the pass does not render is a bad argument."""
    for x in (-1.0, 65536.0, float("nan")):
        with pytest.raises(DriverAssertion, match="^f2u16: is undefined outside"):
            f2u16(F32(x))
    assert issubclass(UndefinedMetadataRead, DriverAssertion)
    L = tu_calc_subsampled(plan_11_9)
    with pytest.raises(ScenarioError, match=r"^x, y: must lie in a cell rendered for view 0"):
        framebuffer_to_subsampled(L, 0, Fraction(2001, 2), 0)   # the invisible extra column (6, 0)


def test_fallback_over_512_bins(make_plan):
    p = make_plan(gpu="a810", fb=(768, 352), tile=(32, 16), constant=0.5, fdm_size=(24, 11))
    m = tu_emit_subsampled_metadata(tu_calc_subsampled(p), 0)
    assert m.fallback and m.bins[0].scale == (F32(1), F32(1))


# -- aprons -------------------------------------------------------------------------------------

def blit(L, dst_tile, src_tile):
    return [a for a in tu_calc_subsampled_aprons(L, 0) if a.dst_tile == dst_tile and a.src_tile == src_tile]


def test_11_10_apron_blits(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    A = tu_calc_subsampled_aprons(L, 0)
    assert len(A) == 130
    assert blit(L, (0, 0), (1, 0)) == [AprBlit(Rect(192, 0, 2, 160), (288, 0, 289, 80), "vertical", (0, 0), (1, 0))]
    assert blit(L, (1, 0), (0, 0)) == [AprBlit(Rect(286, 0, 2, 80), (188, 0, 192, 160), "vertical", (1, 0), (0, 0))]
    # diagonal (0,0) / (1,1): empty edge ranges grown to 2x2 by the corner extension
    assert blit(L, (0, 0), (1, 1)) == [AprBlit(Rect(192, 160, 2, 2), (288, 160, 289, 161), "vertical", (0, 0), (1, 1))]
    assert blit(L, (1, 1), (0, 0)) == [AprBlit(Rect(286, 158, 2, 2), (188, 156, 192, 160), "vertical", (1, 1), (0, 0))]
    assert blit(L, (1, 0), (2, 0)) == [AprBlit(Rect(384, 0, 2, 80), (480, 0, 482, 80), "vertical", (1, 0), (2, 0))]
    assert blit(L, (2, 0), (1, 0)) == [AprBlit(Rect(478, 0, 2, 80), (382, 0, 384, 80), "vertical", (2, 0), (1, 0))]
    assert blit(L, (1, 0), (1, 1)) == [
        AprBlit(Rect(288, 80, 96, 2), (288, 160, 384, 162), "horizontal", (1, 0), (1, 1))]
    assert blit(L, (1, 1), (1, 0)) == [
        AprBlit(Rect(288, 158, 96, 2), (288, 78, 384, 80), "horizontal", (1, 1), (1, 0))]
    # (0,0) and (0,1) are adjacent in subsampled space (both unsubsampled): no blit
    assert blit(L, (0, 0), (0, 1)) == [] and blit(L, (0, 1), (0, 0)) == []


def test_11_10_with_offset(plan_11_9):
    L = tu_calc_subsampled(plan_11_9)
    assert blit(L, (0, 0), (1, 0)) == [AprBlit(Rect(20, 0, 2, 72), (96, 0, 98, 72), "vertical", (0, 0), (1, 0))]
    assert blit(L, (1, 0), (0, 0)) == [AprBlit(Rect(94, 0, 2, 72), (18, 0, 20, 72), "vertical", (1, 0), (0, 0))]
    assert blit(L, (4, 0), (5, 0)) == [AprBlit(Rect(768, 0, 2, 72), (1000, 0, 1002, 72), "vertical", (4, 0), (5, 0))]


def test_shared_edge_of_tiles_that_do_not_touch_asserts(plan_11_7):
    """``calc_shared_vert_edge``/``calc_shared_horiz_edge`` assert that the other tile's range
    starts within the tile's extent; the model raises DriverAssertion naming the function."""
    L = tu_calc_subsampled(plan_11_7)
    a, far = L.tile(0, 0), L.tile(0, 3)
    T, b_o = L.tile_size, L.bin_offset(0)
    with pytest.raises(DriverAssertion, match="^calc_shared_vert_edge: "):
        _shared_edge(a, far, 0, 1, T, b_o)
    with pytest.raises(DriverAssertion, match="^calc_shared_horiz_edge: "):
        _shared_edge(a, L.tile(3, 0), 0, 0, T, b_o)


def test_11_13_apron_outside_the_image(plan_11_13):
    """Driver finding (spec §11.13, SUSPECT): a corner apron next to a 1-px last column lies
    outside ``width0``; ``blit_subsampled_apron`` asserts on it.  The model reproduces it."""
    p = plan_11_13
    assert [p.grid.cell(x, 2).frag_areas[0] for x in range(2)] == [(2, 2), (1, 4)]
    L = tu_calc_subsampled(p)
    assert (L.width0, L.height0) == (97, 94) and L.log == ()
    assert L.tile(0, 1).subsampled_pos[0] == Rect(0, 32, 96, 32)
    assert L.tile(1, 2).subsampled_pos[0] == Rect(96, 86, 1, 8)
    assert L.tile(0, 2).subsampled_pos[0] == Rect(0, 79, 48, 15)
    (b,) = blit(L, (0, 1), (1, 2))
    assert b.dst == Rect(96, 64, 2, 2)
    assert b.dst.x + b.dst.w > L.width0          # [96, 98) exceeds width0 = 97
    (r,) = blit(L, (0, 2), (1, 1))
    assert (r.src[0], r.src[2]) == (96, 100)     # reads x [96, 100) beyond the image
    outside = [a for a in tu_calc_subsampled_aprons(L, 0)
               if a.dst.x + a.dst.w > L.width0 or a.dst.y + a.dst.h > L.height0]
    assert b in outside


def test_apron_revision_older_equality_only(plan_11_13):
    """In 11.13, (0,1) ends at x = 96 where the diagonal (1,2) starts, but their y ranges
    [32,64) and [86,94) are apart: the newest revision (equality and overlap/touch) emits the
    corner blits, the older one (equality only) skips the pair, so it has no out-of-image dst."""
    L = tu_calc_subsampled(plan_11_13)
    new = tu_calc_subsampled_aprons(L, 0)
    old = tu_calc_subsampled_aprons(L, 0, revision="older")
    assert set(old) < set(new)
    pair = {(0, 1), (1, 2)}
    assert {frozenset((a.dst_tile, a.src_tile)) for a in set(new) - set(old)} == {frozenset(pair)}
    assert not [a for a in old if {a.dst_tile, a.src_tile} == pair]
    with pytest.raises(ScenarioError, match="revision: must be one of newest, older"):
        tu_calc_subsampled_aprons(L, 0, revision="bogus")
