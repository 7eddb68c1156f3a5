"""Hypothesis properties for the subsampled layout: docs/spec/turnip-fdm-spec.md §10.1 items
22-29, over scenarios of the shared strategy :func:`fdm.strategies.scenario_dicts` (FDM offsets,
bin merging, multiview with a different fa per view, shared viewport, viewports, scissors and
render areas, framebuffers that are not a multiple of the tile size, density-0 holes)."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fdm.cmath import div_round_up
from fdm.plan import plan_render_pass
from fdm.scenario import parse_scenario
from fdm.strategies import scenario_dicts
from layout_solver import APRON_SIZE, aprons_intersect, get_default_tile_pos, tu_calc_subsampled
from layout_solver.aprons import tu_calc_subsampled_aprons
from layout_solver.metadata import (
    framebuffer_to_subsampled,
    layout_metadata,
    metadata_ubo,
    shader_pixel,
    subsampled_bin,
)
from turnip_base.errors import ScenarioError

#: device tile_align 96/64/32 wide, a6xx, a7xx and a8xx
GPUS = ["a650", "a730", "a740", "a750", "a810"]
#: exact powers of two, values that round (0.3, 66/255, 0.6) and holes (0)
DENSITIES = [1.0, 0.5, 0.25, 0.3, 66 / 255, 0.6, 0.0]
SCENARIOS = scenario_dicts(gpus=GPUS, max_views=3, max_tiles=6, formats=["R32G32_SFLOAT"], densities=DENSITIES,
                           max_extra_texels=7)  # up to 8 texels per axis: density changes within a row

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])


@st.composite
def layouts(draw, modes=("null", "real")):
    d = draw(SCENARIOS)
    mode = draw(st.sampled_from(modes))
    try:
        p = plan_render_pass(parse_scenario(d))
    except ScenarioError:
        assume(False)
    return tu_calc_subsampled(p, offsets_under_shared_viewport=mode)


def visible_views(layout, t):
    return [v for v in range(layout.plan.scenario.views) if t.visible(v)]


def unsubsampled(layout, t, v):
    bo = None if layout.bin_offsets is None else layout.bin_offsets[v]
    return get_default_tile_pos(t.pos, t.extent, (1, 1), layout.fb_size, layout.tile_size, layout.tile_align, bo)[0]


def rects_overlap(a, b):
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def stick_axis(layout, t, v, axis):
    """Independent restatement: the tile's framebuffer bin reaches the right/bottom edge."""
    b_o = layout.bin_offset(v)[axis]
    return (t.pos[axis] + t.extent[axis]) * layout.tile_size[axis] - b_o >= layout.fb_size[axis]


def cell_adjacent(a, b):
    """Root rectangles of the tile grid share an edge or a corner."""
    ax0, ay0, ax1, ay1 = a.pos[0], a.pos[1], a.pos[0] + a.extent[0], a.pos[1] + a.extent[1]
    bx0, by0, bx1, by1 = b.pos[0], b.pos[1], b.pos[0] + b.extent[0], b.pos[1] + b.extent[1]
    return ax0 <= bx1 and bx0 <= ax1 and ay0 <= by1 and by0 <= ay1


# -- 22 ------------------------------------------------------------------------------------------

@SETTINGS
@given(layouts())
def test_inv22_inside_unsubsampled_rect_and_disjoint(layout):
    if not layout.solved:
        return
    for v in range(layout.plan.scenario.views):
        tiles = [t for t in layout.tiles if t.visible(v)]
        us = [unsubsampled(layout, t, v) for t in tiles]
        for t, u in zip(tiles, us, strict=True):
            assert u.contains(t.subsampled_pos[v]), (t.cell, v, u, t.subsampled_pos[v])
        for i in range(len(tiles)):
            for j in range(i + 1, len(tiles)):
                assert not rects_overlap(us[i], us[j]), (tiles[i].cell, tiles[j].cell, v)
                assert not rects_overlap(tiles[i].subsampled_pos[v], tiles[j].subsampled_pos[v])


# -- 23 ------------------------------------------------------------------------------------------

@SETTINGS
@given(layouts())
def test_inv23_inside_image(layout):
    if not layout.solved:
        return
    W, H = layout.fb_size
    fo = layout.tile_align if layout.bin_offsets is not None else (0, 0)
    for t in layout.tiles:
        for v in visible_views(layout, t):
            r = t.subsampled_pos[v]
            assert r.x >= 0 and r.y >= 0 and r.w > 0 and r.h > 0
            assert r.x + r.w <= W + fo[0] and r.y + r.h <= H + fo[1]
            assert r.x + r.w <= layout.width0 and r.y + r.h <= layout.height0


# -- 24 ------------------------------------------------------------------------------------------

@SETTINGS
@given(layouts())
def test_inv24_alignment_and_first_row_column(layout):
    if not layout.solved:
        return
    A = layout.tile_align
    for t in layout.tiles:
        vis = visible_views(layout, t)
        sticks = {(v, a): stick_axis(layout, t, v, a) for v in vis for a in (0, 1)}
        assert t.subsampled_border == any(sticks.values())
        for v in vis:
            r = t.subsampled_pos[v]
            if not t.subsampled_border:
                assert r.x % A[0] == 0 and r.y % A[1] == 0, (t.cell, v, r)
            if t.pos[0] == 0 and not sticks[(v, 0)]:
                assert r.x == 0
            if t.pos[1] == 0 and not sticks[(v, 1)]:
                assert r.y == 0


# -- 25 ------------------------------------------------------------------------------------------

@SETTINGS
@given(layouts())
def test_inv25_no_apron_conflicts(layout):
    if not layout.solved:
        return
    tiles = layout.tiles
    for i in range(len(tiles)):
        for j in range(i + 1, len(tiles)):
            a, b = tiles[i], tiles[j]
            if not cell_adjacent(a, b):
                continue
            for v in range(layout.plan.scenario.views):
                if a.visible(v) and b.visible(v) and (a.is_subsampled(v) or b.is_subsampled(v)):
                    assert not aprons_intersect(a.subsampled_pos[v], b.subsampled_pos[v]), (a.cell, b.cell, v)


# -- 26 ------------------------------------------------------------------------------------------

@SETTINGS
@given(layouts())
def test_inv26_subsampled_views(layout):
    for t in layout.tiles:
        assert t.subsampled_views & ~t.visible_views == 0
        for v in range(layout.plan.scenario.views):
            if t.is_subsampled(v):
                assert tuple(t.frag_areas[v]) != (1, 1)
        if not layout.solved:
            assert t.subsampled_views == 0 and not t.subsampled


# -- 27 ------------------------------------------------------------------------------------------

@SETTINGS
@given(layouts())
def test_inv27_rect_sizes(layout):
    if not layout.solved:
        return
    T = layout.tile_size
    for t in layout.tiles:
        for v in visible_views(layout, t):
            f = t.effective_frag_area(v)
            r = t.subsampled_pos[v]
            for axis, size in ((0, r.w), (1, r.h)):
                b_o = layout.bin_offset(v)[axis]
                n = layout.fb_size[axis]
                p, e = t.pos[axis], t.extent[axis]
                b_s = max(p * T[axis] - b_o, 0)
                if stick_axis(layout, t, v, axis):
                    want = div_round_up(n - b_s, f[axis])
                elif p == 0:
                    want = (e * T[axis] - b_o) // f[axis]
                else:
                    want = (e * T[axis]) // f[axis]
                assert size == want, (t.cell, v, axis, size, want)


# -- 28 ------------------------------------------------------------------------------------------

def probe_points(lo, hi):
    """Pixel centres at both ends and the middle of ``[lo, hi)``."""
    return sorted({lo + 0.5, hi - 0.5, (lo + hi) // 2 + 0.5})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(layouts(modes=("null",)), st.booleans())
def test_inv28_metadata_round_trip(layout, fused):
    """For pixel centres of every rendered bin (taken from ``fdm``'s plan, i.e. the bins the
    tile really renders): the exact metadata mapping selects that tile and lands inside its
    rectangle; the float32 shader transform agrees to a fraction of a pixel.

    The metadata is written with the offsets the solver laid the image out with.  Upstream
    26.2 writes the real FDM offsets instead under a shared viewport, where the solver got
    NULL, and breaks this invariant there: that is finding n (docs/findings.md), asserted by
    tests/fdm/test_findings.py."""
    plan = layout.plan
    views = plan.scenario.views
    W, H = layout.fb_size
    solver_mode = "real" if layout.bin_offsets is not None else "null"
    ubo = metadata_ubo(layout_metadata(layout, offsets_under_shared_viewport=solver_mode))
    size0 = max(layout.width0, layout.height0)
    for tp in plan.tiles:
        for vp in tp.views:
            if not vp.visible:
                continue
            v = vp.view
            bx, by, bw, bh = vp.bin
            xs = probe_points(bx, min(bx + bw, W))
            ys = probe_points(by, min(by + bh, H))
            t = layout.tile(*tp.cell)
            r = t.subsampled_pos[v] if layout.solved else None
            b_o = layout.bin_offset(v)
            for x in xs:
                for y in ys:
                    if layout.solved:
                        cell = (math.floor((x + b_o[0]) / layout.tile_size[0]),
                                math.floor((y + b_o[1]) / layout.tile_size[1]))
                        assert plan.grid.root(*cell).cell == tp.cell
                    ex, ey = framebuffer_to_subsampled(layout, v, Fraction(x), Fraction(y))
                    if layout.solved:
                        assert r.x <= ex < r.x + r.w and r.y <= ey < r.y + r.h, (tp.cell, v, x, y, r)
                    layer = v if views > 1 else None
                    c = [x / W, y / H] + ([float(layer)] if layer is not None else [])
                    if layout.solved:
                        sbx, sby, _ = subsampled_bin(ubo, c, fused=fused)
                        assert plan.grid.root(sbx, sby).cell == tp.cell
                    sx, sy = shader_pixel(layout, ubo, x, y, layer, fused=fused)
                    tol = 2e-6 * size0
                    assert abs(sx - float(ex)) <= tol and abs(sy - float(ey)) <= tol, (sx, sy, ex, ey)


# -- 29 ------------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(layouts(), st.sampled_from(["newest", "older"]))
def test_inv29_apron_blits(layout, revision):
    """Thickness ``APRON_SIZE``; the destination hugs the destination tile's facing edge; the
    source strip starts at the source tile's facing edge and is ``2*f/g`` thick.  (Containment
    in ``width0 x height0`` does not hold: see §11.13 and test_11_13_apron_outside_the_image.)"""
    if not layout.solved:
        return
    for layer in range(layout.plan.scenario.views):
        for b in tu_calc_subsampled_aprons(layout, layer, revision=revision):
            dt, stile = layout.tile(*b.dst_tile), layout.tile(*b.src_tile)
            D, S = dt.subsampled_pos[layer], stile.subsampled_pos[layer]
            f, g = dt.effective_frag_area(layer), stile.effective_frag_area(layer)
            sx0, sy0, sx1, sy1 = b.src
            if b.edge == "vertical":
                assert b.dst.w == APRON_SIZE and b.dst.h >= 0
                thick = Fraction(APRON_SIZE * f[0], g[0])
                if b.dst.x == D.x + D.w:            # right apron of dst, from the left of src
                    assert sx0 == S.x and Fraction(sx1) - Fraction(sx0) == thick
                else:                               # left apron of dst, from the right of src
                    assert b.dst.x == D.x - APRON_SIZE
                    assert sx1 == S.x + S.w and Fraction(sx1) - Fraction(sx0) == thick
                assert D.y - APRON_SIZE <= b.dst.y and b.dst.y + b.dst.h <= D.y + D.h + APRON_SIZE
            else:
                assert b.dst.h == APRON_SIZE and b.dst.w >= 0
                thick = Fraction(APRON_SIZE * f[1], g[1])
                if b.dst.y == D.y + D.h:
                    assert sy0 == S.y and Fraction(sy1) - Fraction(sy0) == thick
                else:
                    assert b.dst.y == D.y - APRON_SIZE
                    assert sy1 == S.y + S.h and Fraction(sy1) - Fraction(sy0) == thick
                assert D.x - APRON_SIZE <= b.dst.x and b.dst.x + b.dst.w <= D.x + D.w + APRON_SIZE
