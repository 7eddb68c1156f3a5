"""The store paths of a pass with a subsampled attachment (layout_solver/store_path.py:
``transform_render_area``, ``fdm_apply_blit_scissor``, ``fdm_apply_render_area``,
``fdm_apply_store_coords``): worked examples checked by hand, and Hypothesis properties over the
shared scenario strategy.  Scenarios: the fixtures of conftest.py (a740, 1000x600, T = 192x160,
gmem_align 16x4, one view, merging off unless noted)."""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings

from fdm.geometry import Rect
from fdm.patch import blit_rects
from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.scenario import parse_scenario
from fdm.strategies import scenario_dicts
from layout_solver import tu_calc_subsampled
from layout_solver.store_path import EMPTY, store_path, store_paths, transform_render_area
from turnip_base.errors import DriverAssertion, ScenarioError


def tile(plan, cell):
    (t,) = [t for t in plan.tiles if t.cell == cell]
    return t


def view0(layout, cell):
    (s,) = store_path(layout, tile(layout.plan, cell))
    return s


# -- worked examples ---------------------------------------------------------------------------

def test_subsampled_tile_unscaled_a2d_store(plan_11_7):
    """§11.7 tile (1,0): fa (2,2), B = (192,0,192,160), b_cs = (192,0), shifted by the solver to
    Rect(288, 0, 96, 80)."""
    L = tu_calc_subsampled(plan_11_7)
    assert L.tile(1, 0).subsampled_pos[0] == Rect(288, 0, 96, 80)
    s = view0(L, (1, 0))
    assert s.subsampled_tile and s.subsampled_view and s.fast_store
    # transform: off = (288 - 192/2, 0 - 0/2) = (192, 0); render area = the framebuffer
    # x1 = 0/2 + 192 = 192, x2 = ceil(1000/2) + 192 = 692; y1 = 0, y2 = ceil(600/2) + 0 = 300
    assert s.subsampled_render_area == (192, 0, 500, 300)
    # fast path: S = (192,0,500,300) ∩ (288,0,96,80) = (288, 0, 96, 80), already 16x4-aligned:
    # x [288 & ~15, align16(384) - 1] = [288, 383], y [0, align4(80) - 1] = [0, 79]; window at the position
    assert s.resolve_scissor == ((288, 0), (383, 79)) and s.resolve_window_offset == (288, 0)
    # slow path: A2D scissor (192,0)-(192+500-1, 0+300-1); B/fa = (96, 80) copied unscaled from GMEM b_cs
    assert s.a2d_scissor == ((192, 0), (691, 299))
    assert s.store_dst == ((288, 0), (383, 79)) and s.store_src == ((192, 0), (287, 79))
    assert s.unscaled and s.slow_store_rect == (288, 0, 96, 80)   # exactly the subsampled rectangle


def test_unscaled_column_and_stick_tile(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    # (0,0): fa (1,1), not subsampled, stored at U = B = (0,0,192,160); off = (0 - 0, 0 - 0)
    s = view0(L, (0, 0))
    assert not s.subsampled_view and s.fast_store
    assert s.subsampled_render_area == (0, 0, 1000, 600)
    assert s.resolve_scissor == ((0, 0), (191, 159)) and s.resolve_window_offset == (0, 0)
    assert s.store_dst == ((0, 0), (191, 159)) and s.store_src == ((0, 0), (191, 159)) and s.unscaled
    # (5,0): stick tile Rect(980, 0, 20, 80), B = (960,0,192,160): off = (980 - 480, 0) = (500, 0)
    s = view0(L, (5, 0))
    assert not s.fast_store                           # scaled border tile: slow path
    assert s.subsampled_render_area == (500, 0, 500, 300)
    # dst = [980, 980 + 96) runs past width0 = 1000; the A2D scissor [500, 999] clips it to the rectangle
    assert s.store_dst == ((980, 0), (1075, 79)) and s.store_src == ((960, 0), (1055, 79))
    assert s.a2d_scissor == ((500, 0), (999, 299)) and s.slow_store_rect == (980, 0, 20, 80)
    # fast path (emitted, not taken): S = [980, 1000) -> x [980 & ~15, align16(1000) - 1] = [976, 1007]
    assert s.resolve_scissor == ((976, 0), (1007, 79)) and s.resolve_window_offset == (980, 0)


def test_unsubsampled_scaled_tile_is_upscaled(make_plan, texel_values):
    """§11.8 (a): 962x160, tile 5 (fa (2,2)) is un-subsampled to U = Rect(960, 0, 2, 160)."""
    vals = texel_values((962, 160), (31, 5), lambda x, y: 0.5 if x >= 960 else 1.0)
    L = tu_calc_subsampled(make_plan(fb=(962, 160), values=vals, fdm_size=None))
    s = view0(L, (5, 0))
    assert s.subsampled_tile and not s.subsampled_view and not s.fast_store
    # fa_e = (1,1): off = (960 - 960, 0 - 0) = (0, 0): the render area unchanged
    assert s.subsampled_render_area == (0, 0, 962, 160) and s.a2d_scissor == ((0, 0), (961, 159))
    # upscaled: GMEM [960, 960 + 192/2) x [0, 160/2) onto [960, 960 + 192) x [0, 160)
    assert s.store_src == ((960, 0), (1055, 79)) and s.store_dst == ((960, 0), (1151, 159))
    assert not s.unscaled and s.slow_store_rect == (960, 0, 2, 160)   # U exactly
    # fast path patch: S = (0,0,962,160) ∩ (960,0,2,160) = (960,0,2,160): x [960, align16(962) - 1 = 975]
    assert s.resolve_scissor == ((960, 0), (975, 159)) and s.resolve_window_offset == (960, 0)


def test_unaligned_render_area_rounds_outward(make_plan):
    """Density 0.5 everywhere, render area (201, 10, 598, 401): visible tiles are columns 1-4 of
    rows 0-2, all at their default positions, all taking the fast path."""
    L = tu_calc_subsampled(make_plan(constant=0.5, render_areas=[[201, 10, 598, 401]]))
    assert sorted(t.cell for t in L.plan.tiles) == sorted((x, y) for x in range(1, 5) for y in range(3))
    assert all(t.fast_store and not t.subsampled_border for t in L.tiles)
    s = view0(L, (1, 0))
    assert L.tile(1, 0).subsampled_pos[0] == Rect(192, 0, 96, 80) and s.fast_store
    # off = (192 - 192/2, 0) = (96, 0); x1 = 201/2 + 96 = 196, x2 = ceil(799/2) + 96 = 496
    # y1 = 10/2 = 5, y2 = ceil(411/2) = 206
    assert s.subsampled_render_area == (196, 5, 300, 201)
    # S = ∩ (192,0,96,80): x [196, 288), y [5, 80); aligned outward: x1 = 196 & ~15 = 192, y1 = 5 & ~3 = 4
    assert s.resolve_scissor == ((192, 4), (287, 79))
    # the slow path writes only the transformed render area: x [196, 287], y [5, 79]
    assert s.a2d_scissor == ((196, 5), (495, 205)) and s.slow_store_rect == (196, 5, 92, 75)
    s = view0(L, (4, 2))
    # Rect(768, 320, 96, 80), off = (768 - 384, 320 - 160) = (384, 160): x [484, 784), y [165, 366)
    assert s.subsampled_render_area == (484, 165, 300, 201)
    # S = x [768, 784), y [320, 366): x2 = align16(784) - 1 = 783, y2 = align4(366) - 1 = 367
    assert s.resolve_scissor == ((768, 320), (783, 367))
    assert s.slow_store_rect == (768, 320, 16, 46)    # y [320, 365]


def test_a730_first_clause_sends_border_and_unsubsampled_tiles_to_the_fast_path(make_plan, texel_values):
    """a730 (no HW bin scaling), no FDM offsets: the predicate's first clause (!fdm_offsets &&
    !bin_scale_en) holds on every tile, so tiles the second clause keeps on the A2D path take the
    fast path (docs/findings.md, finding c, in a subsampled pass)."""
    L = tu_calc_subsampled(make_plan(gpu="a730", constant=0.5))
    s = view0(L, (5, 0))
    # stick tile Rect(980, 0, 20, 80): border, yet fast; the window offset 980 is not 16-aligned
    assert L.tile(5, 0).subsampled_border and s.fast_store
    assert s.resolve_window_offset == (980, 0) and s.resolve_scissor == ((976, 0), (1007, 79))
    # §11.8 (a) on a730: tile 5 is un-subsampled (U = Rect(960, 0, 2, 160)) with fa (2,2), fast:
    # the 96x80 GMEM bin is copied 1:1 to (960, 0) through the scissor (960,0)-(975,159) instead of
    # being upscaled 2x (the slow path's (960,0)-(1055,79) -> (960,0)-(1151,159))
    vals = texel_values((962, 160), (31, 5), lambda x, y: 0.5 if x >= 960 else 1.0)
    L = tu_calc_subsampled(make_plan(gpu="a730", fb=(962, 160), values=vals, fdm_size=None))
    s = view0(L, (5, 0))
    assert not s.subsampled_view and s.fast_store and not s.unscaled
    assert s.resolve_window_offset == (960, 0) and s.resolve_scissor == ((960, 0), (975, 159))


def test_empty_bin(make_plan):
    """Two views; view 1 renders only [0,192) x [0,160), so in tile (1,0) its bin is empty."""
    L = tu_calc_subsampled(make_plan(constant=0.5, views=2, render_areas=[[0, 0, 1000, 600], [0, 0, 192, 160]]))
    s0, s1 = store_path(L, tile(L.plan, (1, 0)))
    assert s0.store_dst == ((192, 0), (287, 79)) and s0.resolve_window_offset == (192, 0)
    assert s1.store_dst == EMPTY and s1.store_src == EMPTY == ((1, 1), (0, 0))
    assert s1.resolve_scissor == EMPTY and s1.resolve_window_offset == (0, 0)
    # the driver reads an unset subsampled_pos for the render area of that view: not modelled
    assert s1.subsampled_render_area is None and s1.a2d_scissor is None and s1.slow_store_rect is None


def test_layout_not_solved_is_the_plain_store(make_plan):
    """> 512 bins: the solver does not run, the tile stays at its framebuffer position:
    window offset b_cs, the render area aligned, and fdm_apply_store_coords = fdm.patch.blit_rects."""
    L = tu_calc_subsampled(make_plan(gpu="a810", fb=(768, 352), tile=(32, 16), constant=0.5, fdm_size=(24, 11)))
    assert not L.solved
    for t, paths in zip(L.plan.tiles, store_paths(L), strict=True):
        (s,) = paths
        (b,) = blit_rects([v.frag_area for v in t.views], [v.bin for v in t.views], t.common_bin_start,
                          [v.hw_offset for v in t.views])
        assert (s.store_dst, s.store_src) == (b.store_dst, b.store_src)
        assert s.resolve_window_offset == t.common_bin_start
        assert s.resolve_scissor == ((0, 0), (767, 351)) and s.a2d_scissor == ((0, 0), (767, 351))
        assert not s.subsampled_tile and not s.subsampled_view


def test_store_path_needs_a_rendered_tile(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    t = tile(plan_11_7, (1, 0))
    for cell in [(40, 40), (-1, 0)]:
        with pytest.raises(ScenarioError):
            store_path(L, attrs.evolve(t, cell=cell))


# -- properties --------------------------------------------------------------------------------

GPUS = ["a650", "a730", "a740", "a750", "a810"]
DENSITIES = [1.0, 0.5, 0.25, 0.3, 66 / 255, 0.6, 0.0]
SCENARIOS = scenario_dicts(gpus=GPUS, max_views=3, max_tiles=6, formats=["R32G32_SFLOAT"], densities=DENSITIES,
                           max_extra_texels=7)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])


def layout_of(d):
    try:
        p = plan_render_pass(parse_scenario(d))
    except (ScenarioError, DriverAssertion):
        assume(False)
    assume(isinstance(p, RenderPassPlan))
    assert isinstance(p, RenderPassPlan)
    return tu_calc_subsampled(p)


def render_area(layout, v):
    ras = layout.plan.scenario.render_areas
    return ras[min(v, len(ras) - 1)]


def written_axis(start, length, b0, fa, r0, r1):
    """Subsampled pixels j of [start, start + length) whose framebuffer footprint
    [b0 + (j - start)·fa, b0 + (j - start + 1)·fa) meets [r0, r1): (first, last) or None."""
    js = [j for j in range(start, start + length)
          if Fraction(b0 + (j - start) * fa) < r1 and Fraction(b0 + (j - start + 1) * fa) > r0]
    if not js:
        return None
    assert js == list(range(js[0], js[-1] + 1))
    return js[0], js[-1]


def expected_written(layout, st, vp, v):
    """The pixels of the view's stored rectangle whose footprint meets the render area, inclusive
    corners (None: none)."""
    sub = st.stored_pos(v)
    fa = st.frag_areas[v] if st.is_subsampled(v) else (1, 1)
    ra = render_area(layout, v)
    bx, by, _, _ = vp.bin
    ex = written_axis(sub.x, sub.w, bx, fa[0], ra.x, ra.x + ra.w)
    ey = written_axis(sub.y, sub.h, by, fa[1], ra.y, ra.y + ra.h)
    if ex is None or ey is None:
        return None
    return (ex[0], ey[0]), (ex[1], ey[1])


@SETTINGS
@given(d=SCENARIOS)
def test_slow_path_writes_the_stored_rectangle(d):
    """Slow path, placed tiles, visible views: the A2D store writes exactly the pixels of the
    view's stored rectangle (``subsampled_pos``) whose framebuffer footprint meets the render area
    (Fractions); a subsampled view is copied unscaled from GMEM [b_cs, b_cs + B/fa), any other view
    upscaled from there to B's size; with the whole framebuffer as render area it is the rectangle."""
    L = layout_of(d)
    assume(L.solved)
    W, H = L.fb_size
    for t, paths in zip(L.plan.tiles, store_paths(L), strict=True):
        st = L.tile(*t.cell)
        for v, (vp, s) in enumerate(zip(t.views, paths, strict=True)):
            if not vp.visible:
                assert s.store_dst == EMPTY and s.store_src == EMPTY
                continue
            sub = st.stored_pos(v)
            bx, by, bw, bh = vp.bin
            fw, fh = vp.frag_area
            cx, cy = t.common_bin_start
            assert s.store_src == ((cx, cy), (cx + bw // fw - 1, cy + bh // fh - 1))
            if st.is_subsampled(v):
                assert s.unscaled and s.store_dst == ((sub.x, sub.y), (sub.x + bw // fw - 1, sub.y + bh // fh - 1))
            else:
                assert s.store_dst == ((sub.x, sub.y), (sub.x + bw - 1, sub.y + bh - 1))
            want = expected_written(L, st, vp, v)
            got = s.slow_store_rect
            got_c = None if got is None else ((got[0], got[1]), (got[0] + got[2] - 1, got[1] + got[3] - 1))
            assert got_c == want, (t.cell, v)
            if render_area(L, v) == Rect(0, 0, W, H):
                assert got == sub.as_tuple(), (t.cell, v)


@SETTINGS
@given(d=SCENARIOS)
def test_fast_path_scissor_aligned_and_covers(d):
    """Fast path, placed tiles, visible views: the window offset is the stored position; the
    resolve scissor is gmem_align-aligned (TL a multiple, BR + 1 a multiple), contains every pixel
    of the stored rectangle whose footprint meets the render area (= transformed render area ∩
    rectangle, recomputed with Fractions) and stays inside the rectangle aligned outward."""
    L = layout_of(d)
    assume(L.solved)
    gpu = L.plan.scenario.gpu
    gw, gh = gpu.gmem_align_w, gpu.gmem_align_h
    for t, paths in zip(L.plan.tiles, store_paths(L), strict=True):
        st = L.tile(*t.cell)
        for v, (vp, s) in enumerate(zip(t.views, paths, strict=True)):
            if not vp.visible:
                assert s.resolve_scissor == EMPTY and s.resolve_window_offset == (0, 0)
                continue
            sub = st.stored_pos(v)
            assert s.resolve_window_offset == (sub.x, sub.y)
            want = expected_written(L, st, vp, v)
            if want is None:
                continue
            (x1, y1), (x2, y2) = s.resolve_scissor
            assert x1 % gw == 0 and y1 % gh == 0 and (x2 + 1) % gw == 0 and (y2 + 1) % gh == 0
            (wx1, wy1), (wx2, wy2) = want
            assert x1 <= wx1 and y1 <= wy1 and wx2 <= x2 and wy2 <= y2, (t.cell, v)
            assert x1 >= sub.x // gw * gw and y1 >= sub.y // gh * gh
            assert x2 < math.ceil(Fraction(sub.x + sub.w, gw)) * gw and y2 < math.ceil(Fraction(sub.y + sub.h, gh)) * gh


@SETTINGS
@given(d=SCENARIOS)
def test_transform_maps_the_render_area_conservatively(d):
    """transform_render_area is the conservative image of the render area under x ->
    pos + (x - B.x)/fa_e (the metadata's transform), for every visible view of a placed tile."""
    L = layout_of(d)
    assume(L.solved)
    for t in L.plan.tiles:
        st = L.tile(*t.cell)
        for v, vp in enumerate(t.views):
            if not vp.visible:
                continue
            sub = st.stored_pos(v)
            fa = st.effective_frag_area(v)
            ra = render_area(L, v)
            bx, by = vp.bin[0], vp.bin[1]
            x1 = sub.x + math.floor(Fraction(ra.x - bx, fa[0]))
            x2 = sub.x + math.ceil(Fraction(ra.x + ra.w - bx, fa[0]))
            y1 = sub.y + math.floor(Fraction(ra.y - by, fa[1]))
            y2 = sub.y + math.ceil(Fraction(ra.y + ra.h - by, fa[1]))
            assert transform_render_area(ra.as_tuple(), st, vp.bin, v) == (x1, y1, x2 - x1, y2 - y1)
