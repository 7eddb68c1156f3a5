"""Custom-resolve subpasses (VK_EXT_custom_resolve) of an FDM pass: ``fdm_apply_fs_params``,
``fdm_apply_viewports`` and ``fdm_apply_scissors`` with ``tile_start`` taken from the subsampled
layout (layout_solver/custom_resolve.py, docs/functions/custom_resolve.md).

Worked examples checked by hand (the arithmetic is in the comments), then a Hypothesis property
that restates, without the model's custom-resolve code, where the bin lands in the written image.
Scenarios: the fixtures of conftest.py (a740, 1000 x 600, T = 192 x 160, merging off unless said)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from fdm.cmath import F32, UINT32_MAX
from fdm.geometry import Rect
from fdm.patch import fs_params_custom_resolve, viewport_custom_resolve, viewport_early_out
from fdm.plan import plan_render_pass
from fdm.scenario import parse_scenario
from fdm.strategies import scenario_dicts
from layout_solver import tu_calc_subsampled
from layout_solver.custom_resolve import (
    custom_resolve_plan,
    custom_resolve_tile,
    viewport_scissor_mismatches,
)
from layout_solver.metadata import framebuffer_to_subsampled
from turnip_base.errors import DriverAssertion, ScenarioError


def tile_of(plan, cell):
    return next(t for t in plan.tiles if t.cell == cell)


def patch_of(layout, cell):
    return custom_resolve_tile(layout, tile_of(layout.plan, cell))


# -- a tile stored subsampled -------------------------------------------------------------------

def test_subsampled_stick_tile(make_plan):
    # density 0.5 everywhere: fa = 1/0.5 = (2, 2) in every tile; 6 x 4 tiles (5*192 = 960 < 1000,
    # 3*160 = 480 < 600); no FDM offsets.
    p = make_plan(constant=0.5)
    L = tu_calc_subsampled(p)
    assert L.log == ()
    c = patch_of(L, (5, 3))
    v = c.views[0]
    # b_cs = (5*192, 3*160) = (960, 480); B = the nominal tile (960, 480, 192, 160).
    assert c.common_bin_start == (960, 480) and v.bin == (960, 480, 192, 160) and v.frag_area == (2, 2)
    # get_default_tile_pos, both axes stick (6*192 = 1152 >= 1000, 4*160 = 640 >= 600):
    #   x: end = 1000, start = 1000 - ceil((1000 - 960) / 2) = 980;  y: end = 600, start = 600 - 120/2 = 540
    # -> S = (980, 540, 20, 60); column 4 ends at 768 + 96 = 864 and row 2 at 320 + 80 = 400: no conflict.
    assert L.tile(5, 3).subsampled_pos[0] == Rect(980, 540, 20, 60)
    # tile->subsampled and the view is subsampled: tile_start = S.offset, rendering fa (2,2), gmem fa (1,1)
    assert c.subsampled and v.subsampled and v.tile_start == (980, 540)
    assert (v.rendering_frag_area, v.gmem_frag_area) == ((2, 2), (1, 1))
    # frag_offset = tile_start - B.offset / 2 = (980 - 480, 540 - 240) = (500, 300)
    # gmem: scale 1/1, offset = b_cs - tile_start = (960 - 980, 480 - 540) = (-20, -60)
    assert v.fs.frag_size == (2, 2) and v.fs.frag_offset == (500, 300)
    assert v.fs.gmem_scale == (1.0, 1.0) and v.fs.gmem_offset == (-20, -60)
    # the main subpass had frag_offset = b_cs - B.offset / 2 = (480, 240) and the identity GMEM transform
    assert tile_of(p, (5, 3)).fs_params[0].frag_offset == (480, 240)
    # viewport (user (0, 0, 1000, 600)): fa != 1, no early-out; s = 1/2, o = (500, 300):
    #   (0/2 + 500, 0/2 + 300, 1000/2, 600/2) = (500, 300, 500, 300); GRAS_SC_VIEWPORT_SCISSOR (500,300)-(999,599)
    s = c.slots[0]
    assert c.viewport_early_out == (False,)
    assert s.viewport == (500.0, 300.0, 500.0, 300.0) and s.viewport_scissor == ((500, 300), (999, 599))
    # scissor (user (0, 0, 1000, 600)): min = (0 + 500, 0 + 300), max = (1000/2 + 500, 600/2 + 300) = (1000, 600);
    #   scaled bin (96, 80); offset = (max(500, 980), max(300, 540)) = (980, 540);
    #   extent = (min(1000, 980 + 96) - 980, min(600, 540 + 80) - 540) = (20, 60): exactly S
    assert (s.scissor_offset, s.scissor_extent) == ((980, 540), (20, 60))
    assert s.scissor == ((980, 540), (999, 599))
    # the last framebuffer pixel centre (999.5, 599.5): HW = x/2 + frag_offset = (999.75, 599.75), inside S;
    # user FragCoord (999.75 - 500)*2 = 999.5; GMEM 999.75*1 - 20 = 979.75 = b_cs.x + (999.5 - 960)/2
    x, y = Fraction(1999, 2), Fraction(1199, 2)
    h = (x / 2 + v.fs.frag_offset[0], y / 2 + v.fs.frag_offset[1])
    assert h == (Fraction(3999, 4), Fraction(2399, 4))                   # (999.75, 599.75)
    assert (h[0] - 500) * 2 == x and (h[1] - 300) * 2 == y
    assert h[0] + v.fs.gmem_offset[0] == Fraction(3919, 4) == 960 + (x - 960) / 2   # 979.75
    assert h[1] + v.fs.gmem_offset[1] == Fraction(2159, 4) == 480 + (y - 480) / 2   # 539.75
    # an interior tile: S = (192, 160, 96, 80) starts at b_cs, so only the scale differs from rendering space
    c11 = patch_of(L, (1, 1)).views[0]
    assert c11.tile_start == (192, 160) and c11.fs.frag_offset == (96, 80) and c11.fs.gmem_offset == (0, 0)


def test_subsampled_tile_with_fdm_offset(plan_11_9):
    # §11.9: FDM offset (40, -16): b_o = ((-40) mod 192, 16 mod 160) = (152, 16); fa (2, 2); 7 x 5 tiles.
    L = tu_calc_subsampled(plan_11_9)
    c = patch_of(L, (5, 3))
    v = c.views[0]
    # b_cs = (960, 480); B = (960 - 152, 480 - 16, 192, 160) = (808, 464, 192, 160)
    assert c.common_bin_start == (960, 480) and v.bin == (808, 464, 192, 160)
    # S (test_solver_examples::test_11_9_offset_layout) = (1000, 564, 96, 68): x sticks to 1000 + 96 slop
    assert v.tile_start == (1000, 564)
    # frag_offset = (1000 - 808/2, 564 - 464/2) = (596, 332)   (= the metadata bin's sub - b_s/fa, 596/1096)
    # gmem_offset = (960 - 1000, 480 - 564) = (-40, -84)
    assert v.fs.frag_offset == (596, 332) and v.fs.gmem_offset == (-40, -84) and v.fs.gmem_scale == (1.0, 1.0)
    s = c.slots[0]
    # viewport: (0/2 + 596, 0/2 + 332, 500, 300); no o' (HW bin scaling is off in the subpass)
    assert s.viewport == (596.0, 332.0, 500.0, 300.0)
    # scissor: min (596, 332), max (500 + 596, 300 + 332) = (1096, 632); offset (max(596, 1000), max(332, 564));
    #   extent (min(1096, 1000 + 96) - 1000, min(632, 564 + 80) - 564) = (96, 68) = S's extent
    assert (s.scissor_offset, s.scissor_extent) == ((1000, 564), (96, 68))


# -- views that are not subsampled --------------------------------------------------------------

def test_unsubsampled_view_keeps_framebuffer_scale(make_plan, texel_values):
    # §11.8 a: 962 x 160, column 5 fa (2, 2), columns 0-4 (1, 1); the solver un-subsamples (5, 0)
    # (its 1-pixel-wide default rectangle touches column 4): S = U = (960, 0, 2, 160).
    vals = texel_values((962, 160), (31, 5), lambda x, y: 0.5 if x >= 960 else 1.0)
    p = make_plan(fb=(962, 160), values=vals, fdm_size=None)
    L = tu_calc_subsampled(p)
    c = patch_of(L, (5, 0))
    v = c.views[0]
    # b_cs = (960, 0), B = (960, 0, 192, 160); tile_start = S.offset = (960, 0) = B.offset
    assert c.subsampled and not v.subsampled and v.frag_area == (2, 2)
    assert v.bin == (960, 0, 192, 160) and v.tile_start == (960, 0)
    # not subsampled: rendering fa (1, 1), gmem fa = the tile's (2, 2)
    # frag_offset = tile_start - B.offset/1 = (0, 0); gmem_scale = 1/2; gmem_offset = b_cs - tile_start/2 = (480, 0)
    assert (v.rendering_frag_area, v.gmem_frag_area) == ((1, 1), (2, 2))
    assert v.fs.frag_size == (1, 1) and v.fs.frag_offset == (0, 0)
    assert v.fs.gmem_scale == (0.5, 0.5) and v.fs.gmem_offset == (480, 0)
    # pixel centre (961.5, 159.5): HW = itself; GMEM = (961.5/2 + 480, 159.5/2) = (960.75, 79.75), i.e. GMEM pixel
    # (960, 79) = b_cs + ((961 - 960) // 2, 159 // 2): the 2x2 fragment the main subpass rendered it into
    assert 961.5 * v.fs.gmem_scale[0] + v.fs.gmem_offset[0] == 960.75
    assert 159.5 * v.fs.gmem_scale[1] + v.fs.gmem_offset[1] == 79.75
    # viewport: tile fa (2, 2), no early-out; fa := (1, 1), o = tile_start - B.offset = (0, 0): unchanged
    s = c.slots[0]
    assert c.viewport_early_out == (False,) and s.viewport == (0.0, 0.0, 962.0, 160.0)
    # scissor: min (0, 0), max (962, 160), bin (192, 160); offset (max(0, 960), 0) = (960, 0);
    #   extent (min(962, 960 + 192) - 960, min(160, 0 + 160) - 0) = (2, 160) = S
    assert (s.scissor_offset, s.scissor_extent) == ((960, 0), (2, 160))
    # (4, 0): fa (1, 1) and B.offset = b_cs = (768, 0): the early-out fires; S = (768, 0, 192, 160) starts
    # at b_cs, so the unchanged viewport agrees with the scissor
    c4 = patch_of(L, (4, 0))
    assert c4.viewport_early_out == (True,) and c4.views[0].tile_start == (768, 0)
    assert c4.slots[0].scissor == ((768, 0), (959, 159))
    assert viewport_scissor_mismatches(custom_resolve_plan(L)) == ()


def test_solver_not_run_uses_the_framebuffer_bin(make_plan):
    # a810, 768 x 352, T = 32 x 16: 24 x 22 = 528 bins > 512, tu_calc_subsampled does not run, so
    # tile->subsampled is false and subsampled_views is 0 everywhere; density 0.5: fa (2, 2).
    p = make_plan(gpu="a810", fb=(768, 352), tile=(32, 16), constant=0.5, fdm_size=(24, 11))
    L = tu_calc_subsampled(p)
    assert not L.solved
    c = patch_of(L, (3, 2))
    v = c.views[0]
    # b_cs = (96, 32) = B.offset; tile_start = B.offset = (96, 32); rendering fa (1, 1), gmem fa (2, 2)
    assert not c.subsampled and not v.subsampled and v.frag_area == (2, 2) and v.tile_start == (96, 32)
    # frag_offset = (96 - 96, 32 - 32) = (0, 0): FragCoord is the framebuffer position
    # gmem_offset = (96 - 96/2, 32 - 32/2) = (48, 16): GMEM = hw/2 + (48, 16), e.g. (127.5, 47.5) -> (111.75, 39.75)
    assert v.fs.frag_offset == (0, 0) and v.fs.gmem_scale == (0.5, 0.5) and v.fs.gmem_offset == (48, 16)
    s = c.slots[0]
    # viewport unchanged (o = 0, scale 1); scissor = the framebuffer bin (96, 32, 32, 16)
    assert s.viewport == (0.0, 0.0, 768.0, 352.0)
    assert (s.scissor_offset, s.scissor_extent) == ((96, 32), (32, 16))


def test_invisible_view_reads_the_zeroed_position(make_plan, texel_values):
    # two views; view 1 has density 0 right of x = 192, so it is invisible in tile (1, 0): its bin is
    # (0, 0, 0, 0), fa UINT32_MAX, and tu_calc_subsampled never placed it (subsampled_pos[1] stays at
    # the calloc'd {0, 0}): tile_start (0, 0).
    v0 = [[0.5] * 32 for _ in range(20)]
    v1 = texel_values((1000, 600), (32, 20), lambda x, y: 0.0 if x >= 192 else 0.5)
    p = make_plan(views=2, values=None, density={"format": "R32G32_SFLOAT", "views": [{"values": v0},
                                                                                       {"values": v1}]})
    L = tu_calc_subsampled(p)
    c = patch_of(L, (1, 0))
    v = c.views[1]
    assert not v.visible and v.bin == (0, 0, 0, 0) and v.tile_start == (0, 0)
    # rendering fa (1, 1): frag_offset = (0, 0); gmem fa UINT32_MAX: offset = b_cs - 0 = (192, 0)
    assert v.fs.frag_size == (1, 1) and v.fs.frag_offset == (0, 0) and v.fs.gmem_offset == (192, 0)
    assert v.fs.gmem_scale == (float(F32(1.0 / UINT32_MAX)),) * 2


# -- finding: the viewport early-out -----------------------------------------------------------

def test_viewport_left_in_framebuffer_space(make_plan):
    # density 1.0 (fa (1, 1) everywhere), FDM offset (0, 0): b_o = (0, 0), so every bin starts at b_cs and
    # fdm_apply_viewports' early-out (fa == 1 && bin.offset == b_cs) fires in every tile.  The solver got
    # non-NULL offsets, so stick tiles are placed at fb_end + tile_align (a740: 96 x 32):
    p = make_plan(constant=1.0, fdm_offset_create_flag=True, fdm_offsets=[[0, 0]])
    L = tu_calc_subsampled(p)
    c = patch_of(L, (5, 3))
    v = c.views[0]
    # b_cs = (960, 480) = B.offset; x: end = 1000 + 96 = 1096, start = 1096 - (1000 - 960) = 1056;
    # y: end = 600 + 32 = 632, start = 632 - (600 - 480) = 512  ->  S = (1056, 512, 40, 120)
    assert c.common_bin_start == (960, 480) and v.bin == (960, 480, 192, 160) and v.tile_start == (1056, 512)
    s = c.slots[0]
    assert c.viewport_early_out == (True,)
    assert s.viewport == (0.0, 0.0, 1000.0, 600.0)                      # framebuffer space
    # scissor: o = tile_start - B.offset = (96, 32): min (96, 32), max (1096, 632);
    #   offset (1056, 512), extent (min(1096, 1056 + 192) - 1056, min(632, 512 + 160) - 512) = (40, 120) = S
    assert (s.scissor_offset, s.scissor_extent) == ((1056, 512), (40, 120))
    # FragCoord: frag_offset = (96, 32) -- HW x maps back to framebuffer x - 96
    assert v.fs.frag_offset == (96, 32) and v.fs.gmem_offset == (-96, -32)
    # the geometry of the bin, framebuffer x in [960, 1000), is rasterised at HW x in [960, 1000), all left of
    # the scissor [1056, 1096): nothing of the corner tile is written.  Without the early-out the viewport
    # would be o + (x, y, w, h) = (96, 32, 1000, 600), matching the scissor and the FragCoord constants:
    assert viewport_custom_resolve((0.0, 0.0, 1000.0, 600.0), (2, 2), v.bin, (0, 0), v.tile_start, False) == (
        np.float32(96), np.float32(32), np.float32(1000), np.float32(600))
    # in the last row, (4, 3): S = (768, 512, 192, 120); the viewport draws framebuffer row 599 at HW row 599,
    # which the scissor [512, 632) keeps; the metadata reads framebuffer row 599 from subsampled row 631:
    assert patch_of(L, (4, 3)).slots[0].scissor == ((768, 512), (959, 631))
    assert framebuffer_to_subsampled(L, 0, 700, 599) == (700, 631)
    mm = viewport_scissor_mismatches(custom_resolve_plan(L))
    # the last column (x shifted by 96) and the last row (y shifted by 32): 4 + 6 - 1 tiles
    assert sorted(m.cell for m in mm) == sorted({(5, y) for y in range(4)} | {(x, 3) for x in range(6)})
    assert {m.cell: m.shift for m in mm}[(5, 3)] == (96, 32)
    assert {m.cell: m.shift for m in mm}[(5, 0)] == (96, 0) and {m.cell: m.shift for m in mm}[(0, 3)] == (0, 32)


def test_viewport_early_out_control_without_offsets(make_plan):
    # the same pass without FDM offsets: stick tiles start at b_s (no slop), tile_start == b_cs wherever
    # the early-out fires, and nothing disagrees
    L = tu_calc_subsampled(make_plan(constant=1.0))
    assert patch_of(L, (5, 3)).views[0].tile_start == (960, 480)
    assert viewport_scissor_mismatches(custom_resolve_plan(L)) == ()


def test_viewport_early_out_with_a_nonzero_offset(make_plan):
    # offset (40, 0): b_o = (152, 0).  Column 0 has B.x = max(0 - 152, 0) = 0 = b_cs.x and b_o.y = 0, so the
    # early-out fires there; its bottom tile (0, 3) sticks at y: S.y = 632 - (600 - 480) = 512 != 480
    L = tu_calc_subsampled(make_plan(constant=1.0, fdm_offset_create_flag=True, fdm_offsets=[[40, 0]]))
    mm = viewport_scissor_mismatches(custom_resolve_plan(L))
    assert [(m.cell, m.shift) for m in mm] == [((0, 3), (0, 32))]


# -- pure functions -----------------------------------------------------------------------------

def test_fs_params_custom_resolve_assertion():
    # a non-subsampled view whose tile_start is not a multiple of fa: tu_fdm_per_bin_offset asserts
    with pytest.raises(DriverAssertion):
        fs_params_custom_resolve((2, 2), (0, 0, 64, 64), (0, 0), (3, 0), False)
    assert viewport_early_out((1, 1), (8, 8, 16, 16), (8, 8)) and not viewport_early_out((1, 2), (8, 8, 16, 16), (8, 8))


def test_foreign_tile_is_rejected(make_plan):
    p, q = make_plan(constant=0.5), make_plan(constant=0.25)
    with pytest.raises(ScenarioError):
        custom_resolve_tile(tu_calc_subsampled(p), tile_of(q, (1, 1)))


# -- property: the bin lands on its place in the written image ----------------------------------

GPUS = ["a650", "a730", "a740", "a750", "a810"]
DENSITIES = [1.0, 0.5, 0.25, 0.3, 66 / 255, 0.6, 0.0]
SCENARIOS = scenario_dicts(gpus=GPUS, max_views=3, max_tiles=6, formats=["R32G32_SFLOAT"], densities=DENSITIES,
                           max_extra_texels=7)


def centres(start, end, step):
    """Pixel centres at the two ends and the middle of [start, end)."""
    mid = start + ((end - start) // 2 // step) * step
    return sorted({Fraction(2 * start + 1, 2), Fraction(2 * mid + 1, 2), Fraction(2 * end - 1, 2)})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(SCENARIOS)
def test_bin_lands_on_its_place_in_the_written_image(d):
    """For every visible view of every rendered tile, restated from the layout alone: framebuffer
    pixel x of the bin ``B`` is rendered at ``h = S.x + (x - B.x) / f`` (``S`` the stored rectangle,
    ``f`` = fa for a subsampled view, 1 otherwise; ``S.x = B.x`` when the solver did not run), which
    lies in ``S`` and is where the subsampled metadata looks for x.  The emitted constants must then
    send ``h`` back to ``x`` (user FragCoord) and to ``b_cs + (x - B.x) / fa`` (GMEM FragCoord: where
    the main subpasses stored x), and a viewport that was patched must send the user viewport through
    ``h`` (one that was not, only where ``S.x = b_cs``)."""
    try:
        plan = plan_render_pass(parse_scenario(d))
    except (ScenarioError, DriverAssertion):
        assume(False)
        return
    L = tu_calc_subsampled(plan)
    W, H = plan.scenario.framebuffer
    patches = custom_resolve_plan(L)
    mismatched = {(m.index, m.slot) for m in viewport_scissor_mismatches(patches)}
    for tp, cr in zip(plan.tiles, patches, strict=True):
        st = L.tile(*tp.cell)
        b_cs = tp.common_bin_start
        for vp in tp.views:
            if not vp.visible:
                continue
            bx, by, bw, bh = vp.bin
            fa = vp.frag_area
            sub_view = st.is_subsampled(vp.view)
            f = fa if sub_view else (1, 1)
            S = st.subsampled_pos[vp.view] if st.subsampled else Rect(bx, by, bw, bh)
            fs = cr.views[vp.view].fs
            for x in centres(bx, min(bx + bw, W), fa[0]):
                for y in centres(by, min(by + bh, H), fa[1]):
                    h = (S.x + (x - bx) / f[0], S.y + (y - by) / f[1])
                    assert S.x <= h[0] < S.x + S.w and S.y <= h[1] < S.y + S.h, (tp.cell, vp.view, x, y, S)
                    if L.solved:
                        assert framebuffer_to_subsampled(L, vp.view, x, y) == h
                    # user FragCoord: (hw - frag_offset) * frag_size
                    assert ((h[0] - fs.frag_offset[0]) * fs.frag_size[0],
                            (h[1] - fs.frag_offset[1]) * fs.frag_size[1]) == (x, y)
                    # GMEM FragCoord: hw * gmem_scale + gmem_offset, exact and in float32 (fmul, fadd)
                    g = (b_cs[0] + (x - bx) / fa[0], b_cs[1] + (y - by) / fa[1])
                    for a in (0, 1):
                        assert h[a] * Fraction(fs.gmem_scale[a]) + fs.gmem_offset[a] == g[a]
                        g32 = F32(F32(F32(float(h[a])) * F32(fs.gmem_scale[a])) + F32(fs.gmem_offset[a]))
                        assert Fraction(float(g32)) == g[a]
                        assert math.floor(g[a]) < b_cs[a] + (bw, bh)[a] // fa[a]
        sc = plan.scenario
        for slot, early in zip(cr.slots, cr.viewport_early_out, strict=True):
            v = slot.view
            vp = tp.views[v]
            user = sc.viewports[plan.viewport_state.slot_user_index(slot.slot)]
            start = cr.views[v].tile_start
            f = vp.frag_area if st.is_subsampled(v) else (1, 1)
            via_h = (Fraction(user.x) / f[0] + start[0] - Fraction(vp.bin[0], f[0]),
                     Fraction(user.y) / f[1] + start[1] - Fraction(vp.bin[1], f[1]),
                     Fraction(user.w) / f[0], Fraction(user.h) / f[1])
            got = tuple(Fraction(c) for c in slot.viewport)
            if (cr.index, slot.slot) in mismatched:
                assert early and start != b_cs and got == (user.x, user.y, user.w, user.h)
            else:
                assert got == via_h, (tp.cell, slot, via_h)
            us = sc.scissors[plan.viewport_state.slot_user_index(slot.slot)]
            ext = slot.scissor_extent
            if (vp.visible and us.w > 0 and us.h > 0 and us.x + us.w <= W and us.y + us.h <= H
                    and 0 < ext[0] < 2**31 and 0 < ext[1] < 2**31):
                S = st.subsampled_pos[v] if st.subsampled else Rect(*vp.bin)
                ox, oy = slot.scissor_offset
                assert S.x <= ox and ox + ext[0] <= S.x + S.w and S.y <= oy and oy + ext[1] <= S.y + S.h, \
                    (tp.cell, v, slot, S)
