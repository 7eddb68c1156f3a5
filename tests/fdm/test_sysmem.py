"""Sysmem rendering of FDM passes (issue 8 item 7): the model plans them as turnip does instead
of refusing, and says why.  Worked examples checked by hand; the C followed:
``use_sysmem_rendering`` and ``tu6_sysmem_render_end`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570),
``_tu_create_fdm_bin_patchpoint`` (tu_cmd_buffer.h), ``fdm_apply_viewports`` /
``fdm_apply_scissors`` (tu_pipeline.cc, pop-os @ 26e5c1f9)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fdm import make_scenario, plan_render_pass
from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.report import plan_json, plan_table
from layout_solver.layout_json import sysmem_layout_json
from layout_solver.metadata import sysmem_metadata

CONST = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [32, 20], "density": 0.5}]}


def test_tu_debug_sysmem_keeps_user_viewports_and_clamps_scissors() -> None:
    """TU_DEBUG=sysmem on a740, 1000x600, 2 views writing gl_ViewportIndex, FDM offsets.
    Record-time patchpoint values: fa (1,1), bins (0,0)-(16384,16384), b_cs (0,0), o' 0.
    - viewport 1 (10.5, -4, 300, -200): fa 1 and b_cs == bin start, so fdm_apply_viewports
      takes its early-out and the user viewport is emitted unchanged;
    - scissor 1 (5, 5, 9, 9): o = 0, fa = 1: offset max(5, 0) = 5, extent min(5 + 9, 16384) - 5 = 9:
      TL (5, 5), BR (13, 13); scissor 0 (0, 0, 1000, 600): TL (0, 0), BR (999, 599);
    - FS params: frag_size (1, 1), frag_offset = b_cs - B/fa = (0, 0) - (0, 0) = (0, 0)."""
    sc = make_scenario(gpu="a740", framebuffer=(1000, 600), views=2, writes_viewport_index=True,
                       viewports=[[0, 0, 1000, 600], [10.5, -4, 300, -200]], scissors=[[0, 0, 1000, 600], [5, 5, 9, 9]],
                       fdm_offset_create_flag=True, fdm_offsets=[[40, -16], [-40, 0]], tu_debug=["sysmem"],
                       density=CONST)
    p = plan_render_pass(sc)
    assert isinstance(p, SysmemPlan) and p.sysmem_reason == "TU_DEBUG(SYSMEM)" and p.tiles == ()
    assert p.frag_areas == ((1, 1), (1, 1)) and p.bin == (0, 0, 16384, 16384)
    s0, s1 = p.slots
    assert s1.viewport == (10.5, -4.0, 300.0, -200.0)
    assert s0.scissor == ((0, 0), (999, 599)) and s1.scissor == ((5, 5), (13, 13))
    assert [(f.frag_size, f.frag_offset) for f in p.fs_params] == [((1, 1), (0, 0))] * 2
    doc = plan_json(p)
    assert doc["render_mode"] == "sysmem" and doc["tiles"] == [] and doc["sysmem"]["bin"] == [0, 0, 16384, 16384]
    assert "rendered in sysmem: TU_DEBUG(SYSMEM)" in plan_table(p)
    # tu6_sysmem_render_end: header scale 1, offset 0, stride 1; one bin scaling by extent/width0:
    # with SUBSAMPLED + FDM_OFFSET the image has tile_align slop: width0 = 1000 + 96 = 1096,
    # height0 = 600 + 32 = 632 -> (float)1000/1096, (float)600/632
    metas = sysmem_metadata(p)
    assert len(metas) == 2
    for m in metas:
        assert m.fallback and m.header.bin_stride == 1 and len(m.bins) == 1
        assert m.header.scale == (np.float32(1), np.float32(1)) and m.header.offset == (np.float32(0), np.float32(0))
        assert m.bins[0].scale == (np.float32(1000) / np.float32(1096), np.float32(600) / np.float32(632))
    lj = sysmem_layout_json(p)
    assert lj["render_mode"] == "sysmem" and lj["views"][0]["image"] == [1096, 632]
    assert json.loads(json.dumps(lj)) == lj


@pytest.mark.slow  # plans a 16384-tile GMEM pass (seconds)
def test_too_many_tiles_for_the_vsc_pipes() -> None:
    """a618 (32 VSC pipes, no bin mask), 4096x4096 with 32x32 tiles: 128 x 128 = 16384 tiles;
    the pipes grow until at most 32 are needed (pipe0 of 512 tiles), and a pipe holds at most
    32 tiles, so binning is impossible with more than 2 tiles: sysmem.  TU_DEBUG=gmem forces
    GMEM (use_sysmem_rendering returns before that check)."""
    d = dict(gpu="a618", framebuffer=(4096, 4096), tile_size=(32, 32), density=CONST, bin_merging="off")
    d["density"] = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [128, 128],
                                                           "density": 0.5}]}
    p = plan_render_pass(make_scenario(**d))
    assert isinstance(p, SysmemPlan) and p.sysmem_reason == "Too many tiles and HW binning is not possible"
    assert p.tiling is not None and p.tiling.vsc.tile_count == (128, 128) and not p.tiling.vsc.binning_possible
    forced = plan_render_pass(make_scenario(**d, tu_debug=["gmem"]))
    assert isinstance(forced, RenderPassPlan) and len(forced.tiles) == 128 * 128


def test_attachments_that_do_not_fit_gmem() -> None:
    """Eight 16-byte 8-sample attachments: 1024 bytes a pixel; one tile_align block of a650
    (96x16 = 1536 pixels) needs 1.5 MiB > the 1130496-byte budget: gmem_pixels = 0, sysmem."""
    sc = make_scenario(gpu="a650", framebuffer=(1000, 600), attachments=[{"cpp": 16, "samples": 8}] * 8,
                       density=CONST)
    p = plan_render_pass(sc)
    assert isinstance(p, SysmemPlan) and p.sysmem_reason == "Can't fit attachments into gmem"
    assert p.tiling is None and p.gmem.gmem_pixels == 0
