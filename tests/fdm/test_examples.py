"""The worked examples of the behavioural spec (docs/spec/turnip-fdm-spec.md §11.1-11.6, 11.11, 11.12),
with their exact numbers.  Unless noted: a740, 1000x600 framebuffer, tile 192x160, one view."""

from __future__ import annotations

import numpy as np
import pytest

from fdm.cmath import F32
from fdm.patch import lower_frag_coord
from fdm.plan import plan_render_pass
from fdm.scenario import parse_scenario
from fdm.turnip import fdm_texel_shift, tu_bin_offset, tu_calc_frag_area, tu_fdm_per_bin_offset, unorm8_to_float
from turnip_base.errors import DriverAssertion


def scenario(**kw):
    d = {"gpu": "a740", "framebuffer": [1000, 600], "tile_size": [192, 160], "bin_merging": "off",
         "density": {"format": "R32G32_SFLOAT",
                     "views": [{"generator": "constant", "size": [32, 20], "density": [0.5, 0.5]}]}}
    d.update(kw)
    return parse_scenario(d)


def tile(plan, pos):
    (t,) = [t for t in plan.tiles if t.pos == pos]
    return t


def ltrb(off, ext):
    return off + ext


# -- 11.1 ------------------------------------------------------------------------------------

def test_11_1_no_offset_scaled_tile():
    p = plan_render_pass(scenario())
    t = tile(p, (1, 1))
    v = t.views[0]
    assert t.common_bin_start == (192, 160)
    assert v.bin == (192, 160, 192, 160)
    assert v.offset == (96, 80) and v.hw_offset == (96, 80)
    assert t.bin_scale_en and t.lrz
    assert t.foveat.xscale == (1, 0, 0, 0, 0, 0) and t.foveat.yscale == (1, 0, 0, 0, 0, 0)
    assert t.foveat.hw_offsets[0] == (96, 80) and t.foveat.hw_offsets[1:] == ((0, 0),) * 5
    assert t.window_scissor == ((0, 0), (1192, 760))
    s = t.slots[0]
    assert s.viewport == (0.0, 0.0, 500.0, 300.0)
    assert (s.scissor_offset, s.scissor_extent) == ((96, 80), (96, 80))
    assert s.scissor == ((96, 80), (191, 159))
    # FS params and the FragCoord round trip
    fs = t.fs_params[0]
    assert fs.frag_size == (2, 2) and fs.frag_offset == (96, 80)
    hw = F32(200.5) / F32(2) + F32(96)
    assert hw == F32(196.25) and lower_frag_coord(hw, 2, 96) == F32(200.5)


def test_11_1_without_hw_scaling_a730():
    # a730 tile_align is 64x32: 192x160 is a multiple
    p = plan_render_pass(scenario(gpu="a730"))
    t = tile(p, (1, 1))
    assert not t.bin_scale_en and not t.lrz
    s = t.slots[0]
    assert s.viewport == (96.0, 80.0, 500.0, 300.0)
    assert (s.scissor_offset, s.scissor_extent) == ((192, 160), (96, 80))


def test_11_1_unaligned_scissor():
    p = plan_render_pass(scenario(scissors=[[101, 37, 300, 101]]))
    s11 = tile(p, (1, 1)).slots[0]
    assert s11.scissor_offset == (96, 80)
    assert s11.scissor_extent == (96, (-11) & 0xFFFFFFFF)
    assert s11.scissor == ((96, 80), (191, 68))   # empty: BR.y < TL.y
    s10 = tile(p, (1, 0)).slots[0]
    assert (s10.scissor_offset, s10.scissor_extent) == ((96, 18), (96, 51))
    assert s10.scissor == ((96, 18), (191, 68))


# -- 11.2 ------------------------------------------------------------------------------------

@pytest.mark.parametrize("u,b_o", [(0, 0), (8, 184), (40, 152), (184, 8), (192, 0), (232, 152),
                                   (-40, 40), (-192, 0), (-200, 8), (-232, 40)])
def test_11_2_bin_offset_wrap(u, b_o):
    assert tu_bin_offset((u, 0), (192, 160))[0] == b_o


# -- 11.3 ------------------------------------------------------------------------------------

OFFSET_CASES = [
    # pos, b_cs, B, o, o', viewport(HW), scissor(HW) offset+extent, lrz
    ((0, 0), (0, 0), (0, 0, 40, 144), (0, 0), (0, 0), (0, 0, 500, 300), (0, 0, 20, 72), False),
    ((1, 0), (192, 0), (40, 0, 192, 144), (172, 0), (96, 0), (76, 0, 500, 300), (96, 0, 96, 72), False),
    ((1, 1), (192, 160), (40, 144, 192, 160), (172, 88), (96, 80), (76, 8, 500, 300), (96, 80, 96, 80), True),
    ((5, 3), (960, 480), (808, 464, 192, 160), (556, 248), (480, 240), (76, 8, 500, 300), (480, 240, 96, 68), True),
]


@pytest.mark.parametrize("pos,b_cs,B,o,o_hw,vp,sc,lrz", OFFSET_CASES)
def test_11_3_offsets_first_row_interior(pos, b_cs, B, o, o_hw, vp, sc, lrz):
    p = plan_render_pass(scenario(fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]))
    assert p.bin_offsets == ((152, 16),)
    t = tile(p, pos)
    v = t.views[0]
    assert (t.common_bin_start, v.bin, v.offset, v.hw_offset, t.lrz) == (b_cs, B, o, o_hw, lrz)
    s = t.slots[0]
    assert s.viewport == tuple(float(c) for c in vp)
    assert s.scissor_offset + s.scissor_extent == sc


def test_11_3_without_hw_scaling():
    p = plan_render_pass(scenario(gpu="a730", fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]))
    s = tile(p, (1, 0)).slots[0]
    assert s.viewport[:2] == (172.0, 0.0)
    assert s.scissor_offset + s.scissor_extent == (192, 0, 96, 72)
    s = tile(p, (5, 3)).slots[0]
    assert s.viewport[:2] == (556.0, 248.0)
    assert s.scissor_offset + s.scissor_extent == (960, 480, 96, 68)


def test_11_3_visible_cells_and_binning_pass():
    p = plan_render_pass(scenario(fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]))
    assert p.tiling.vsc.tile_count == (7, 5)
    assert sorted(t.pos for t in p.tiles) == [(x, y) for x in range(6) for y in range(4)]
    b = p.binning
    assert b.bins == ((-152, -16, 1152, 616),)
    assert b.slots[0].viewport == (152.0, 16.0, 1000.0, 600.0)
    assert b.slots[0].scissor_offset + b.slots[0].scissor_extent == (152, 16, 1000, 600)
    assert b.window_scissor == ((0, 0), (1191, 759))


def test_11_3_sample_positions():
    from fdm.turnip import fdm_sample_position
    T, fb = (192, 160), (1000, 600)
    bo = (152, 16)
    u = (40, -16)
    assert fdm_sample_position((0, 0), T, fb, u, bo) == (-96, 80)
    assert fdm_sample_position((2, 1), T, fb, u, bo) == (288, 240)
    assert fdm_sample_position((5, 3), T, fb, u, bo) == (864, 560)
    assert fdm_sample_position((0, 0), T, fb, u, None) == (56, 96)
    assert fdm_sample_position((2, 1), T, fb, u, None) == (440, 256)
    assert fdm_sample_position((5, 3), T, fb, u, None) == (1016, 576)
    assert fdm_sample_position((0, 0), T, fb, None, None) == (96, 80)
    assert fdm_sample_position((2, 1), T, fb, None, None) == (480, 240)
    assert fdm_sample_position((5, 3), T, fb, None, None) == (980, 540)


# -- 11.4 ------------------------------------------------------------------------------------

def _fa(dx, dy, views=1, offsets=False):
    raw = (F32(F32(1) / F32(dx)) if dx else F32(np.inf), F32(F32(1) / F32(dy)) if dy else F32(np.inf))
    return tu_calc_frag_area(raw, (192, 160), has_fdm_offsets=offsets, num_views=views)


@pytest.mark.parametrize("d,fa", [((1.0, 1.0), (1, 1)), ((0.5, 0.25), (2, 4)), ((0.3, 0.6), (2, 1)),
                                  ((0.2, 1.0), (4, 1)), ((0.1, 0.1), (4, 4)), ((2.0, 2.0), (1, 1)),
                                  ((0.0, 0.5), None)])
def test_11_4_frag_area_float(d, fa):
    assert _fa(F32(d[0]), F32(d[1])) == fa


def test_11_4_frag_area_unorm8():
    d66 = unorm8_to_float(66)
    assert _fa(d66, d66) == (2, 4)          # equal fractions round y up: asymmetric
    assert _fa(unorm8_to_float(128), unorm8_to_float(64)) == (2, 2)


def test_11_4_texel_size():
    assert fdm_texel_shift(1000, 32) == 5
    assert fdm_texel_shift(1920, 15) == 7
    assert fdm_texel_shift(1920, 1) == 10


# -- 11.5 ------------------------------------------------------------------------------------

def _two_view(**kw):
    dens = {"format": "R32G32_SFLOAT", "views": [
        {"generator": "constant", "size": [32, 20], "density": [0.5, 0.5]},
        {"generator": "constant", "size": [32, 20], "density": [1.0, 1.0]}]}
    return scenario(views=2, density=dens, **kw)


def test_11_5_multiview_different_scales():
    p = plan_render_pass(_two_view())
    t = tile(p, (1, 1))
    assert [v.bin for v in t.views] == [(192, 160, 192, 160)] * 2
    assert [v.hw_offset for v in t.views] == [(96, 80), (0, 0)]
    s0, s1 = t.slots
    assert s0.viewport == (0.0, 0.0, 500.0, 300.0)
    assert s0.scissor_offset + s0.scissor_extent == (96, 80, 96, 80)
    assert s1.viewport == (0.0, 0.0, 1000.0, 600.0)
    assert s1.scissor_offset + s1.scissor_extent == (192, 160, 192, 160)
    assert t.foveat.xscale[:2] == (1, 0) and t.foveat.hw_offsets[:2] == ((96, 80), (0, 0))
    assert t.foveat.hw_offsets[2:] == ((0, 0),) * 4


def test_11_5_multiview_without_hw_scaling():
    p = plan_render_pass(_two_view(gpu="a730"))
    s0 = tile(p, (1, 1)).slots[0]
    assert s0.viewport == (96.0, 80.0, 500.0, 300.0)
    assert s0.scissor_offset + s0.scissor_extent == (192, 160, 96, 80)


def test_11_5_shared_viewport_min():
    p = plan_render_pass(_two_view(writes_viewport_index=True))
    t = tile(p, (1, 1))
    assert p.shared_viewport
    assert [v.frag_area for v in t.views] == [(1, 1), (1, 1)]
    dens = {"format": "R32G32_SFLOAT", "views": [
        {"generator": "constant", "size": [32, 20], "density": [0.5, 0.25]},
        {"generator": "constant", "size": [32, 20], "density": [0.25, 0.5]}]}
    p = plan_render_pass(scenario(views=2, density=dens, writes_viewport_index=True))
    t = tile(p, (1, 1))
    assert [v.frag_area for v in t.views] == [(2, 2), (2, 2)]
    assert t.bin_is_scaled and not t.bin_scale_en and not t.lrz
    assert all(s.viewport[:2] == (96.0, 80.0) for s in t.slots)
    assert all(s.view == 0 for s in t.slots)


def test_11_5_different_offsets_per_view():
    dens = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [32, 20], "density": [0.5, 0.5]}]}
    p = plan_render_pass(scenario(views=2, density=dens, fdm_offset_create_flag=True,
                                  fdm_offsets=[[40, 0], [-40, 0]]))
    assert [b[0] for b in p.bin_offsets] == [152, 40]
    t = tile(p, (1, 1))
    assert [v.bin for v in t.views] == [(40, 160, 192, 160), (152, 160, 192, 160)]
    assert [v.offset for v in t.views] == [(172, 80), (116, 80)]
    assert [s.viewport[0] for s in t.slots] == [76.0, 20.0]
    t = tile(p, (0, 1))
    assert [v.bin[2] for v in t.views] == [40, 152]
    assert [s.scissor_offset + s.scissor_extent for s in t.slots] == [(0, 80, 20, 80), (0, 80, 76, 80)]
    t = tile(p, (5, 1))
    assert t.views[1].bin == (920, 160, 192, 160)
    assert t.slots[1].scissor_offset + t.slots[1].scissor_extent == (480, 80, 40, 80)


# -- 11.6 bin merging ------------------------------------------------------------------------
# a730 (bin mask, no abs mask), tile 128x128 so that one 128-px FDM texel is one tile.

def _merge_scenario(rows, variant, views=1, render_areas=None, extra=None):
    h, w = len(rows), len(rows[0])
    dens = {"format": "R32G32_SFLOAT",
            "views": [{"values": [[[1.0 / fa[0], 1.0 / fa[1]] for fa in row] for row in rows]}] * views}
    d = dict(gpu="a730", framebuffer=[128 * w, 128 * h], tile_size=[128, 128], views=views, density=dens,
             bin_merging=variant)
    if render_areas:
        d["render_areas"] = render_areas
    d.update(extra or {})
    return parse_scenario(d)


def _groups(plan):
    return sorted((t.pos, t.extent, t.slot_mask) for t in plan.tiles)


def test_11_6_upstream_all_4x4():
    p = plan_render_pass(_merge_scenario([[(4, 4)] * 4] * 4, "upstream"))
    assert _groups(p) == [((0, 0), (2, 2), 0b110011), ((0, 2), (2, 2), 0b11001100000000),
                          ((2, 0), (2, 2), 0b11001100), ((2, 2), (2, 2), 0b1100110000000000)]
    assert sorted(t.cell for t in p.tiles) == [(1, 1), (1, 3), (3, 1), (3, 3)]


def test_11_6_fixed_all_4x4():
    p = plan_render_pass(_merge_scenario([[(4, 4)] * 4] * 4, "fixed"))
    assert _groups(p) == [((0, 0), (4, 4), 0xFFFF)]
    p = plan_render_pass(_merge_scenario([[(4, 4)] * 4] * 8, "fixed"))
    assert _groups(p) == [((0, 0), (4, 4), 0xFFFF), ((0, 4), (4, 4), 0xFFFF0000)]


def test_11_6_upstream_mixed():
    rows = [[(2, 2), (1, 1), (2, 2), (2, 2)], [(2, 2)] * 4]
    p = plan_render_pass(_merge_scenario(rows, "upstream"))
    got = sorted((t.pos, t.extent) for t in p.tiles)
    assert got == [((0, 0), (1, 2)), ((1, 0), (1, 1)), ((1, 1), (2, 1)), ((2, 0), (2, 1)), ((3, 1), (1, 1))]


def test_11_6_spare_view_gmem_rows():
    # column 0 sees only view 0; view 1's render area is column 1
    p = plan_render_pass(_merge_scenario([[(1, 1), (1, 1)]] * 3, "upstream", views=2,
                                         render_areas=[[0, 0, 256, 384], [128, 0, 128, 384]]))
    col0 = sorted((t.pos, t.extent, t.gmem_extent) for t in p.tiles if t.pos[0] == 0)
    assert col0 == [((0, 0), (1, 2), (1, 2)), ((0, 2), (1, 1), (1, 1))]
    t = tile(p, (0, 0))
    assert t.views[1].bin == (0, 0, 0, 0)
    assert t.window_scissor == ((0, 0), (127, 255))


def test_11_6_two_views_limited_by_view0():
    dens = {"format": "R32G32_SFLOAT", "views": [
        {"generator": "constant", "size": [4, 4], "density": [0.5, 0.5]},
        {"generator": "constant", "size": [4, 4], "density": [0.25, 0.5]}]}
    p = plan_render_pass(parse_scenario(dict(gpu="a730", framebuffer=[512, 512], tile_size=[128, 128], views=2,
                                             density=dens, bin_merging="fixed")))
    assert {t.extent for t in p.tiles} == {(2, 2)}


# -- 11.11 LRZ -------------------------------------------------------------------------------

def test_11_11_lrz_table():
    p = plan_render_pass(scenario())
    t = tile(p, (2, 1))
    assert (t.bin_is_scaled, t.bin_scale_en, t.views[0].hw_offset, t.lrz) == (True, True, (192, 80), True)
    p = plan_render_pass(scenario(fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]))
    t = tile(p, (2, 1))
    assert (t.views[0].hw_offset, t.lrz) == ((192, 80), True)
    # ideal o' = b_cs - (b_s + b_o)/2 equals the programmed value for interior tiles
    b_s, b_o = t.views[0].bin[0], 152
    assert 384 - (b_s + b_o) // 2 == 192
    t = tile(p, (0, 1))
    assert (t.views[0].hw_offset, t.lrz) == ((0, 80), False)
    dens = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [32, 20], "density": [1, 1]}]}
    p = plan_render_pass(scenario(density=dens, fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]))
    t = tile(p, (3, 0))
    assert (t.bin_is_scaled, t.bin_scale_en, t.views[0].hw_offset, t.lrz) == (False, False, (0, 0), False)
    p = plan_render_pass(scenario(writes_viewport_index=True))
    t = tile(p, (2, 1))
    assert (t.bin_is_scaled, t.bin_scale_en, t.views[0].hw_offset, t.lrz) == (True, False, (0, 0), False)
    p = plan_render_pass(scenario(gpu="a730"))
    t = tile(p, (2, 1))
    assert (t.bin_is_scaled, t.bin_scale_en, t.lrz, t.force_lrz_dis) == (True, False, False, True)
    p = plan_render_pass(scenario(gpu="a730", density=dens))
    assert all(t.lrz and not t.bin_is_scaled for t in p.tiles)


def test_11_11_a810_unaligned_hw_offset():
    dens = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [32, 32], "density": [1.0, 0.25]}]}
    p = plan_render_pass(parse_scenario(dict(gpu="a810", framebuffer=[96, 96], tile_size=[96, 48], density=dens,
                                             bin_merging="off")))
    t = tile(p, (0, 1))
    assert t.views[0].frag_area == (1, 4)
    assert (t.bin_scale_en, t.views[0].hw_offset, t.lrz) == (True, (0, 36), True)
    assert t.views[0].hw_offset[1] % 8 != 0


# -- 11.12 scissor wrap ------------------------------------------------------------------------

def test_11_12_scissor_wrap():
    p = plan_render_pass(scenario(scissors=[[0, 0, 0, 0]]))
    s = tile(p, (1, 0)).slots[0]
    assert s.scissor_offset == (96, 0) and s.scissor_extent[1] == 0
    assert s.scissor == ((1, 1), (0, 0))
    s = tile(p, (1, 1)).slots[0]
    assert s.scissor_offset == (96, 80)
    assert s.scissor == ((96, 80), (32767, 32767))   # non-empty: the driver finding
    p = plan_render_pass(scenario(gpu="a730", scissors=[[0, 0, 0, 0]]))
    s = tile(p, (1, 1)).slots[0]
    assert s.scissor_offset == (192, 160)
    assert s.scissor[1] == (95, 79)


def test_per_bin_offset_raises_on_misaligned_bin():
    with pytest.raises(DriverAssertion, match="not a multiple") as e:
        tu_fdm_per_bin_offset((4, 4), (6, 8), (0, 0))
    assert e.value.field == "tu_fdm_per_bin_offset"


def test_non_power_of_two_frag_area_is_refused():
    from fdm.turnip import hw_bin_offset
    with pytest.raises(DriverAssertion, match="powers of two"):
        tu_fdm_per_bin_offset((3, 1), (6, 8), (0, 0))
    with pytest.raises(DriverAssertion, match="powers of two"):
        hw_bin_offset((192, 160), (2, 6))


def test_11_1_load_and_store_rectangles():
    # fdm_apply_load_coords: GMEM destination in LRZ space [b_cs - o', + B/fa); source = the bin.
    # fdm_apply_store_coords: GMEM [b_cs, b_cs + B/fa) upscaled to the bin (inclusive corners).
    t = tile(plan_render_pass(scenario()), (1, 1))
    b = t.blits[0]
    assert b.load_dst == (96, 80, 96, 80) and b.load_src == (192, 160, 192, 160)
    assert b.store_src == ((192, 160), (287, 239)) and b.store_dst == ((192, 160), (383, 319))
    # with offsets, first column: bin (0, 144 .. ) of width 40 -> 20 GMEM pixels at b_cs - o' = (0, 80)
    p = plan_render_pass(scenario(fdm_offset_create_flag=True, fdm_offsets=[[40, -16]]))
    b = tile(p, (0, 1)).blits[0]
    assert b.load_dst == (0, 80, 20, 80) and b.load_src == (0, 144, 40, 160)
    assert b.store_src == ((0, 160), (19, 239)) and b.store_dst == ((0, 144), (39, 303))
