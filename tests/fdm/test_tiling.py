"""Tiling facts read from the driver (tu_util.cc, tu_pass.cc, fd6_gmem_cache.h), with the
numbers worked out by hand in the comments."""

from __future__ import annotations

import pytest

from fdm import make_scenario, plan_render_pass
from fdm.gpu import gmem_budget, gpu_profiles
from fdm.tiling import gmem_config, pipe_layout, select_tile_size, tile_count, vsc_config, walk_order

# AVOID_CCU budgets = config_gmem.color_ccu_offset: gmem - colour CCU share (num_ccu * 64K / 4
# on a6xx, / 8 on a7xx); a750 first loses num_ccu * 48K of VPC attribute buffer; a8xx carves the
# VPC buffers (bv_pos, attr, pos) and then the colour cache: the depth cache below it is *not*
# taken off (finding l).
BUDGETS = {"a618": 524288 - 16384, "a630": 1048576 - 32768, "a650": 1179648 - 49152,
           "a660": 1572864 - 49152, "a690": 4194304 - 131072, "a730": 2097152 - 32768,
           "a740": 3145728 - 49152, "a750": 3145728 - 6 * 49152 - 49152,
           "a810": 589824 - (20480 + 16384 + 12288 + 16384),
           "a830": 12582912 - 6 * (32768 + 49152 + 24576 + 16384)}


@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_gmem_budget_avoid_ccu(name):
    assert gmem_budget(gpu_profiles()[name]) == BUDGETS[name]


def test_a8xx_avoid_ccu_budget_regression():
    """Issue 8 item 1.  tu_render_pass_gmem_config (tu_pass.cc, pop-os @ c02c8b9f) budgets
    ``layout == TU_GMEM_LAYOUT_FULL ? usable_gmem_size_gmem : config_gmem.color_ccu_offset`` and
    tu_choose_gmem_layout (tu_clear_blit.cc, pop-os @ 4ff7b570) picks AVOID_CCU for every FDM
    pass; fd6_calc_gmem_cache_offsets (fd6_gmem_cache.h, sailfish @ 04f9a827) makes a810's
    color_ccu_offset 589824 - (20480 + 16384 + 12288) - 16384 = 524288 and its usable size
    (depth_ccu_offset) 524288 - 262144 = 262144.  The model budgeted 262144 before: a 1000x600
    pass with two 4-byte attachments got 256x128 tiles where the driver picks 256x208."""
    a810 = gpu_profiles()["a810"]
    assert gmem_budget(a810) == 524288 and gmem_budget(a810, avoid_ccu=False) == 262144
    # 524288 / (2 attachments * 4 bytes) = 65536 pixels; 1000x600 -> 256x208 (4x3 tiles)
    sc = make_scenario(gpu="a810", framebuffer=(1000, 600),
                       density={"views": [{"generator": "constant", "size": [32, 20], "density": 1.0}]})
    assert plan_render_pass(sc).tiling.tile_size == (256, 208)


def test_gmem_pixels_a740_two_rgba8():
    # 3096576 / (8*96*32) = 126 blocks, split 63/63; 63 * 24576 / 4 = 387072 pixels
    c = gmem_config((4, 4), (96, 32), BUDGETS["a740"], 1)
    assert c.gmem_pixels == 387072 and c.tile_align == (96, 32)


def test_gmem_one_byte_attachment_doubles_align_w():
    # R8 attachment on a 96-wide GPU: 96 is not a multiple of 64 -> 192, block shift 3 -> 2
    assert gmem_config((4, 1), (96, 32), BUDGETS["a740"], 1).tile_align == (192, 32)
    # on a 64-wide GPU nothing changes
    assert gmem_config((4, 1), (64, 32), BUDGETS["a730"], 1).tile_align == (64, 32)


def test_layer_stride_fixup_of_tile_align_h():
    # a630: 32*16*4 = 2048 bytes is not a multiple of 4096 -> tile_align_h <<= 1 for layered passes
    assert gmem_config((4, 4), (32, 16), BUDGETS["a630"], 2).tile_align == (32, 32)
    assert gmem_config((4, 4), (32, 16), BUDGETS["a630"], 1).tile_align == (32, 16)
    # a740: 96*32*4 = 12288 = 3 * 4096: unchanged
    assert gmem_config((4, 4), (96, 32), BUDGETS["a740"], 2).tile_align == (96, 32)


def test_tile_size_selection_a740():
    # candidates with 2 tiles: 576x608 (|576-608| = 32) wins; 1056x352 pays the FDM aspect penalty
    assert select_tile_size((1000, 600), (96, 32), (2016, 2032), 387072, 1, True) == (576, 608)


def test_tile_count_with_offset_adds_row_and_column():
    assert tile_count((1000, 600), (192, 160), False) == (6, 4)
    assert tile_count((1000, 600), (192, 160), True) == (7, 5)


def test_pipe_layout_growth_without_merging():
    # 6x4 tiles on 4 pipes: 1x1 -> 1x2 (6x2) -> 2x2 (3x2) -> 2x3 (3x2) -> 3x3 (2x2 pipes)
    assert pipe_layout((6, 4), 4, False) == ((3, 3), (2, 2), True)
    assert pipe_layout((6, 4), 32, False) == ((1, 1), (6, 4), True)


def test_pipe_layout_fdm_merging_is_4x8():
    assert pipe_layout((7, 5), 32, True) == ((4, 8), (2, 1), True)
    assert pipe_layout((40, 40), 32, True)[2] is False      # 10 x 5 pipes > 32


def test_walk_order_serpentine():
    vsc = vsc_config((6, 4), 32, True)     # two 4x8 pipes side by side: 4 and 2 columns wide
    order = walk_order(vsc)
    assert order[:8] == [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (2, 1), (1, 1), (0, 1)]
    assert order[16:20] == [(4, 0), (5, 0), (5, 1), (4, 1)]
    assert sorted(order) == sorted((x, y) for x in range(6) for y in range(4))
    # a second pipe row is walked right to left
    vsc = vsc_config((6, 10), 32, True)
    order = walk_order(vsc)
    assert order[48] == (4, 8) and order[52] == (0, 8)
