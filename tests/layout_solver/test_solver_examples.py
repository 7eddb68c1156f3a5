"""Worked examples of docs/spec/turnip-fdm-spec.md §11.7-11.9 for the subsampled layout solver
(``tu_calc_subsampled``), with their exact numbers.  The scenarios: fixtures of conftest.py."""

from __future__ import annotations

import attrs

from fdm.geometry import Rect
from fdm.plan import plan_render_pass
from fdm.scenario import parse_scenario
from layout_solver import (
    APRON_SIZE,
    TU_SUBSAMPLED_MAX_BINS,
    SubsampledLayout,
    aprons_intersect,
    get_default_tile_pos,
    tu_calc_subsampled,
)


def xs(layout, row):
    """View-0 rectangles of the visible tiles of one row, left to right."""
    tiles = [layout.tile(x, row) for x in range(layout.tile_count[0])]
    return [t.subsampled_pos[0] for t in tiles if t is not None]


# -- 7.2 / 7.3 building blocks ---------------------------------------------------------------

def test_default_tile_pos_11_7_row0():
    T, A, fb = (192, 160), (96, 32), (1000, 600)
    assert get_default_tile_pos((1, 0), (1, 1), (2, 2), fb, T, A, None) == (Rect(192, 0, 96, 80), False)
    # stick column: end = W, start = 1000 - ceil(40/2)
    assert get_default_tile_pos((5, 0), (1, 1), (2, 2), fb, T, A, None) == (Rect(980, 0, 20, 80), True)
    # stick row: 600 - ceil(120/2)
    assert get_default_tile_pos((1, 3), (1, 1), (2, 2), fb, T, A, None) == (Rect(192, 540, 96, 60), True)
    # unsubsampled rectangle of (1,0)
    assert get_default_tile_pos((1, 0), (1, 1), (1, 1), fb, T, A, None)[0] == Rect(192, 0, 192, 160)


def test_default_tile_pos_with_offset_slop():
    T, A, fb, bo = (192, 160), (96, 32), (1000, 600), (152, 16)
    assert get_default_tile_pos((0, 0), (1, 1), (2, 2), fb, T, A, bo)[0] == Rect(0, 0, 20, 72)
    assert get_default_tile_pos((1, 1), (1, 1), (2, 2), fb, T, A, bo)[0] == Rect(96, 160, 96, 80)
    r, stick = get_default_tile_pos((5, 3), (1, 1), (2, 2), fb, T, A, bo)
    assert stick and r == Rect(1000, 564, 96, 68)   # right/bottom aligned to W + 96, H + 32


def test_aprons_intersect_gap_of_four():
    a = Rect(0, 0, 10, 10)
    assert aprons_intersect(a, Rect(10, 0, 5, 5))           # touching
    assert aprons_intersect(a, Rect(13, 0, 5, 5))           # 3 px apart
    assert not aprons_intersect(a, Rect(14, 0, 5, 5))       # 2 * APRON_SIZE apart
    assert not aprons_intersect(Rect(14, 0, 5, 5), a)
    assert aprons_intersect(a, Rect(10, 10, 5, 5))          # corner only
    assert not aprons_intersect(a, Rect(0, 10 + 2 * APRON_SIZE, 5, 5))


# -- 11.7 --------------------------------------------------------------------------------------

def test_11_7_final_layout(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    assert L.solved and L.tile_count == (6, 4) and (L.width0, L.height0) == (1000, 600)
    for row in range(3):
        r = xs(L, row)
        assert [q.x for q in r] == [0, 288, 480, 672, 864, 980]
        assert [q.w for q in r] == [192, 96, 96, 96, 96, 20]
        assert [q.y for q in r] == [160 * row] * 6
        assert [q.h for q in r] == [160] + [80] * 5
    r3 = xs(L, 3)
    assert [q.x for q in r3] == [0, 288, 480, 672, 864, 980]
    assert [(q.y, q.h) for q in r3[1:]] == [(540, 60)] * 5
    assert (r3[0].y, r3[0].h) == (480, 120)        # column 0 not subsampled: stick with fa 1
    for t in L.tiles:
        x, y = t.cell
        assert t.subsampled
        assert t.subsampled_views == (0 if x == 0 else 1)
        assert t.subsampled_border == (x == 5 or y == 3)
        if not t.subsampled_border:
            assert t.subsampled_pos[0].x % 96 == 0 and t.subsampled_pos[0].y % 32 == 0


def test_11_7_solver_log_order(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    assert all(e.kind == "shift" and e.axis == 0 for e in L.log)
    first = [(e.cell, e.rect.x) for e in L.log[:5]]
    assert first == [((1, 0), 288), ((1, 1), 288), ((2, 0), 480), ((3, 0), 672), ((4, 0), 864)]
    # every subsampled column 1-4 tile is shifted exactly once, column 5 never
    assert sorted(e.cell for e in L.log) == sorted((x, y) for x in range(1, 5) for y in range(4))


def test_11_7_fast_store(plan_11_7):
    L = tu_calc_subsampled(plan_11_7)
    for t in L.tiles:
        x, y = t.cell
        # column 0 via the first clause (no offsets, bin unscaled); columns 1-4 of rows 0-2 via
        # the second; column 5 and row 3 are scaled border tiles
        assert t.fast_store == (x == 0 or (x < 5 and y < 3)), t.cell


# -- 11.8 --------------------------------------------------------------------------------------

def test_11_8_a_stick_tile_unsubsampled(make_plan, texel_values):
    vals = texel_values((962, 160), (31, 5), lambda x, y: 0.5 if x >= 960 else 1.0)
    p = make_plan(fb=(962, 160), values=vals, fdm_size=None)
    assert [p.grid.cell(x, 0).frag_areas[0] for x in range(6)] == [(1, 1)] * 5 + [(2, 2)]
    L = tu_calc_subsampled(p)
    t4, t5 = L.tile(4, 0), L.tile(5, 0)
    assert t4.subsampled_pos[0] == Rect(768, 0, 192, 160)
    assert t5.subsampled_views == 0 and t5.subsampled_border
    assert t5.subsampled_pos[0] == Rect(960, 0, 2, 160)
    assert [(e.kind, e.cell) for e in L.log] == [("unsubsample", (5, 0))]


def test_11_8_b_shift_impossible_chain(make_plan, texel_values):
    vals = texel_values((384, 64), (12, 2), lambda x, y: 0.5 if 96 <= x < 288 else 1.0)
    p = make_plan(fb=(384, 64), tile=(96, 64), values=vals)
    assert [p.grid.cell(x, 0).frag_areas[0] for x in range(4)] == [(1, 1), (2, 2), (2, 2), (1, 1)]
    L = tu_calc_subsampled(p)
    assert [L.tile(x, 0).subsampled_pos[0].x for x in range(4)] == [0, 96, 192, 288]
    assert [L.tile(x, 0).subsampled_pos[0].w for x in range(4)] == [96, 96, 96, 96]
    assert all(t.subsampled_views == 0 for t in L.tiles)
    assert [(e.kind, e.cell) for e in L.log] == [("unsubsample", (1, 0)), ("unsubsample", (2, 0))]


# -- 11.9 --------------------------------------------------------------------------------------

def test_11_9_offset_layout(plan_11_9):
    L = tu_calc_subsampled(plan_11_9)
    assert L.tile_count == (7, 5) and L.bin_offsets == ((152, 16),)
    assert (L.width0, L.height0) == (1096, 632)
    assert L.log == ()   # no conflicts
    assert [(q.x, q.w) for q in xs(L, 1)] == [(0, 20), (96, 96), (288, 96), (480, 96), (672, 96), (1000, 96)]
    ys = [L.tile(1, y).subsampled_pos[0] for y in range(4)]
    assert [(q.y, q.h) for q in ys] == [(0, 72), (160, 80), (320, 80), (564, 68)]
    # the extra column/row of the FDM-offset VSC is invisible
    assert L.tile(6, 0) is None and L.tile(0, 4) is None
    assert L.tile(5, 3).subsampled_pos[0] == Rect(1000, 564, 96, 68)
    assert L.tile(5, 3).subsampled_pos[0].x + 96 == L.width0


def test_shared_viewport_offsets_version_skew(make_plan):
    p = make_plan(constant=0.5, fdm_offset_create_flag=True, fdm_offsets=[[40, -16]], writes_viewport_index=True)
    assert p.shared_viewport
    new = tu_calc_subsampled(p)                       # offsets treated as NULL
    old = tu_calc_subsampled(p, offsets_under_shared_viewport="real")
    assert new.bin_offsets is None and old.bin_offsets == ((152, 16),)
    assert new.tile(1, 1).subsampled_pos[0] == Rect(192, 160, 96, 80)
    assert old.tile(1, 1).subsampled_pos[0] == Rect(96, 160, 96, 80)


def test_more_than_512_bins_no_subsampling(make_plan):
    # a810: tile_align 32x16; 768x352 with 32x16 tiles = 24 x 22 = 528 bins
    p = make_plan(gpu="a810", fb=(768, 352), tile=(32, 16), constant=0.5, fdm_size=(24, 11))
    assert p.grid.tile_count[0] * p.grid.tile_count[1] > TU_SUBSAMPLED_MAX_BINS
    L = tu_calc_subsampled(p)
    assert not L.solved and L.log == ()
    assert all(not t.subsampled and t.subsampled_views == 0 and not t.subsampled_border for t in L.tiles)
    assert all(t.subsampled_pos == (None,) for t in L.tiles)


# -- hand-derived: shifts along y, diagonal first ----------------------------------------------

def test_row0_unscaled_shifts_both_axes(make_plan, texel_values):
    """Row 0 fa (1,1), rows 1-3 (2,2).  Popping (0,0): the diagonal (1,1) touches its corner, the
    vertical-edge sweep comes first and shifts it right by 96; the horizontal sweep shifts (0,1)
    down by 32.  Each row-1 tile ends shifted right (by its diagonal upper-left neighbour) and
    down (by its upper neighbour); row 2 keeps its defaults (gap 48 below row 1)."""
    vals = texel_values((1000, 600), (32, 20), lambda x, y: 1.0 if y < 160 else 0.5)
    L = tu_calc_subsampled(make_plan(values=vals))
    assert [L.tile(x, 1).subsampled_pos[0] for x in range(6)] == [
        Rect(0, 192, 96, 80), Rect(288, 192, 96, 80), Rect(480, 192, 96, 80), Rect(672, 192, 96, 80),
        Rect(864, 192, 96, 80), Rect(980, 192, 20, 80)]
    assert [L.tile(x, 2).subsampled_pos[0].x for x in range(6)] == [0, 192, 384, 576, 768, 980]
    assert [L.tile(x, 2).subsampled_pos[0].y for x in range(6)] == [320] * 6
    assert [(e.kind, e.cell, e.axis) for e in L.log[:4]] == [
        ("shift", (1, 1), 0), ("shift", (0, 1), 1), ("shift", (2, 1), 0), ("shift", (1, 1), 1)]
    assert len(L.log) == 10


def test_multiview_views_independent(texel_values):
    """Two views: view 0 as in 11.7, view 1 unscaled everywhere.  Only view 0 is subsampled and
    shifted; view 1 keeps the unsubsampled rectangles; no tile with a scaled view qualifies for
    the fast store (subsampled_views != visible_views, HW bin scaling on)."""
    vals0 = texel_values((1000, 600), (32, 20), lambda x, y: 1.0 if x < 192 else 0.5)
    vals1 = texel_values((1000, 600), (32, 20), lambda x, y: 1.0)
    p = plan_render_pass(parse_scenario({
        "gpu": "a740", "framebuffer": [1000, 600], "tile_size": [192, 160], "bin_merging": "off", "views": 2,
        "density": {"format": "R32G32_SFLOAT", "views": [{"values": vals0}, {"values": vals1}]}}))
    L = tu_calc_subsampled(p)
    assert [q.x for q in (L.tile(x, 0).subsampled_pos[0] for x in range(6))] == [0, 288, 480, 672, 864, 980]
    assert [q.x for q in (L.tile(x, 0).subsampled_pos[1] for x in range(6))] == [0, 192, 384, 576, 768, 960]
    for t in L.tiles:
        assert t.subsampled_views == (0 if t.cell[0] == 0 else 1)
        assert t.fast_store == (t.cell[0] == 0)


# -- the layout's cell index -------------------------------------------------------------------

def test_evolved_layout_does_not_change_the_original(plan_11_7):
    """``attrs.evolve`` with other tiles gives a layout whose ``tile(x, y)`` returns the new
    tiles, and the original still returns its own (the cell index is built per instance, not
    shared between the two)."""
    L = tu_calc_subsampled(plan_11_7)
    old = L.tile(1, 0)
    assert old is not None
    moved = attrs.evolve(old, subsampled_pos=(Rect(0, 0, 1, 1),))
    E = attrs.evolve(L, tiles=tuple(moved if t.cell == old.cell else t for t in L.tiles))
    assert isinstance(E, SubsampledLayout)
    assert E.tile(1, 0) is moved
    assert L.tile(1, 0) is old and L.tile(1, 0).subsampled_pos[0] == Rect(288, 0, 96, 80)
    assert all(L.tile(*t.cell) is t for t in L.tiles)
