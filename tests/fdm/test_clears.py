"""GMEM clear rectangles per bin (``fdm_apply_gmem_clear_coords``, fdm/clears.py): worked
examples checked by hand, and a Hypothesis property over the shared scenario strategy.
Unless noted: a740, 1000x600, tile 192x160, one view, density 0.5 (fa (2,2)), merging off."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fdm.clears import EMPTY_CLEAR, fdm_apply_gmem_clear_coords, gmem_clear_coords, gmem_clear_coords_all
from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.scenario import parse_scenario
from fdm.strategies import scenario_dicts
from turnip_base.errors import DriverAssertion, ScenarioError


def plan(**kw):
    d = {"gpu": "a740", "framebuffer": [1000, 600], "tile_size": [192, 160], "bin_merging": "off",
         "density": {"format": "R32G32_SFLOAT",
                     "views": [{"generator": "constant", "size": [32, 20], "density": [0.5, 0.5]}]}}
    d.update(kw)
    p = plan_render_pass(parse_scenario(d))
    assert isinstance(p, RenderPassPlan)
    return p


def tile(p, cell):
    (t,) = [t for t in p.tiles if t.cell == cell]
    return t


# -- worked examples ---------------------------------------------------------------------------

def test_render_area_clear_fa2_no_offsets():
    t = tile(plan(), (1, 1))
    # b_cs = (192,160), B = (192,160,192,160), fa (2,2): o = (192 - 192/2, 160 - 160/2) = (96, 80)
    assert t.common_bin_start == (192, 160) and t.views[0].bin == (192, 160, 192, 160)
    # x1 = 0/2 + 96 = 96, x2 = ceil(1000/2) + 96 - 1 = 595; y1 = 0/2 + 80 = 80, y2 = ceil(600/2) + 80 - 1 = 379
    assert gmem_clear_coords(t, 0, (0, 0, 1000, 600)) == ((96, 80), (595, 379))
    # the bin itself, [192, 384) x [160, 320), lands on [b_cs, b_cs + B/fa) = [192, 287] x [160, 239]
    assert gmem_clear_coords(t, 0, (192, 160, 192, 160)) == ((192, 160), (287, 239))


def test_odd_rect_rounds_outward():
    t = tile(plan(), (1, 0))
    # o = (192 - 96, 0 - 0) = (96, 0); rect x [201, 799), y [10, 411)
    # x1 = 201/2 + 96 = 100 + 96 = 196 (fb 200-201 is half inside), x2 = ceil(799/2) + 96 - 1 = 400 + 95 = 495
    # y1 = 10/2 + 0 = 5, y2 = ceil(411/2) + 0 - 1 = 206 - 1 = 205
    assert gmem_clear_coords(t, 0, (201, 10, 598, 401)) == ((196, 5), (495, 205))


def test_clear_with_fdm_offset():
    # spec §11.9: u = (40, -16) => b_o = (152, 16); tile (1,1): b_cs = (192,160), B = (40,144,192,160)
    t = tile(plan(fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]), (1, 1))
    assert t.views[0].bin == (40, 144, 192, 160)
    # o = (192 - 40/2, 160 - 144/2) = (172, 88)
    # rect (45,150,101,31): x1 = 45/2 + 172 = 22 + 172 = 194; x2 = ceil(146/2) + 172 - 1 = 73 + 171 = 244
    #                       y1 = 150/2 + 88 = 75 + 88 = 163;  y2 = ceil(181/2) + 88 - 1 = 91 + 87 = 178
    # check: fb x 45 -> 192 + (45 - 40)/2 = 194.5 (pixel 194); fb x 145 -> 192 + 105/2 = 244.5 (pixel 244)
    #        fb y 150 -> 160 + 6/2 = 163; fb y 180 -> 160 + 36/2 = 178
    assert gmem_clear_coords(t, 0, (45, 150, 101, 31)) == ((194, 163), (244, 178))
    # custom resolve: o = 0, fa = 1: the rectangle as it is, inclusive
    assert gmem_clear_coords(t, 0, (45, 150, 101, 31), custom_resolve=True) == ((45, 150), (145, 180))
    # no o' although HW bin scaling is on (o' = b_cs - b_cs/fa = (96, 80))
    assert t.views[0].hw_offset == (96, 80)


def test_empty_bin_of_an_invisible_view():
    # view 1 renders only [0,192) x [0,160): in tile (1,0) its bin is empty
    p = plan(views=2, render_areas=[[0, 0, 1000, 600], [0, 0, 192, 160]])
    t = tile(p, (1, 0))
    assert t.views[1].bin == (0, 0, 0, 0) and not t.views[1].visible
    # view 0: o = (96, 0) -> x [96, 595], y [0, 299]; view 1: "clear a 0 area rectangle"
    assert gmem_clear_coords_all(t, (0, 0, 1000, 600)) == (((96, 0), (595, 299)), ((1, 1), (0, 0)))
    assert EMPTY_CLEAR == ((1, 1), (0, 0))
    # the driver reads MIN2(view, views - 1): layer 5 uses view 1
    assert gmem_clear_coords(t, 5, (0, 0, 1000, 600)) == EMPTY_CLEAR
    with pytest.raises(ScenarioError):
        gmem_clear_coords(t, -1, (0, 0, 1000, 600))


def test_per_bin_offset_asserted_before_custom_resolve_and_empty_bin():
    # tu_fdm_per_bin_offset runs first and asserts B.offset % fa == 0, whatever follows
    with pytest.raises(DriverAssertion):
        fdm_apply_gmem_clear_coords((0, 0, 10, 10), (2, 2), (3, 0, 4, 4), (0, 0), custom_resolve=True)


def test_unsigned_wrap():
    # a zero-width rectangle at x = 0 with o = 0: x2 = DIV_ROUND_UP(0, 1) + 0 - 1 wraps to UINT32_MAX
    assert fdm_apply_gmem_clear_coords((0, 0, 0, 0), (1, 1), (0, 0, 16, 16), (0, 0)) == \
        ((0, 0), (0xFFFFFFFF, 0xFFFFFFFF))


# -- property ----------------------------------------------------------------------------------

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])


def rendering_range(r0: int, r1: int, b_x: int, fa: int, b_cs: int) -> tuple[int, int] | None:
    """Rendering-space pixels (x_r = b_cs + (x - B.x)/fa) whose footprint meets [r0, r1), exactly."""
    if r1 <= r0:
        return None
    lo = b_cs + math.floor(Fraction(r0 - b_x, fa))
    hi = b_cs + math.ceil(Fraction(r1 - b_x, fa)) - 1
    return lo, hi


@SETTINGS
@given(d=scenario_dicts(max_tiles=5), data=st.data())
def test_clear_rect_covers_the_cleared_pixels_of_the_bin(d, data):
    """For every rendered tile and visible view: the clear rectangle is exactly the set of
    rendering-space pixels whose framebuffer footprint meets the cleared rectangle, so it covers
    every cleared framebuffer pixel that falls in the bin, mapped into rendering space (pixel
    centres, Fractions); with custom resolve it is the rectangle itself; empty bins get (1,1),(0,0)."""
    try:
        p = plan_render_pass(parse_scenario(d))
    except (ScenarioError, DriverAssertion):
        assume(False)
    assume(isinstance(p, RenderPassPlan))
    W, H = p.scenario.framebuffer
    x = data.draw(st.integers(0, W - 1))
    y = data.draw(st.integers(0, H - 1))
    rect = (x, y, data.draw(st.integers(1, W - x)), data.draw(st.integers(1, H - y)))
    for t in p.tiles:
        cx, cy = t.common_bin_start
        for v, vp in enumerate(t.views):
            got = gmem_clear_coords(t, v, rect)
            bx, by, bw, bh = vp.bin
            if bw == 0 and bh == 0:
                assert got == EMPTY_CLEAR
                continue
            fw, fh = vp.frag_area
            ex = rendering_range(rect[0], rect[0] + rect[2], bx, fw, cx)
            ey = rendering_range(rect[1], rect[1] + rect[3], by, fh, cy)
            assert ex is not None and ey is not None
            assert got == ((ex[0], ey[0]), (ex[1], ey[1])), (t.cell, v)
            (x1, y1), (x2, y2) = got
            # every framebuffer pixel of rect in the bin: its centre maps inside the rectangle
            for px in range(max(rect[0], bx), min(rect[0] + rect[2], bx + bw)):
                assert x1 <= math.floor(cx + (Fraction(px) + Fraction(1, 2) - bx) / fw) <= x2
            for py in range(max(rect[1], by), min(rect[1] + rect[3], by + bh)):
                assert y1 <= math.floor(cy + (Fraction(py) + Fraction(1, 2) - by) / fh) <= y2
            assert gmem_clear_coords(t, v, rect, custom_resolve=True) == \
                ((rect[0], rect[1]), (rect[0] + rect[2] - 1, rect[1] + rect[3] - 1))
