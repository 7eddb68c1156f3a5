"""Regression tests of the places where the model differed from turnip 26.2 (issue 8), each with
its minimal scenario and the C it follows.  (Item 1, the a8xx GMEM budget, is in
test_tiling.py::test_a8xx_avoid_ccu_budget_regression and finding l.)"""

from __future__ import annotations

import numpy as np
import pytest

from fdm import make_scenario, plan_render_pass
from fdm.gpu import gpu_profiles
from fdm.lrz import lrz_fc_size, max_fdm_extra_size, tu_lrz_init_state
from fdm.plan import max_tile_size

HALF = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [32, 20], "density": 0.5}]}


def _plan(gpu: str, **kw: object):  # type: ignore[no-untyped-def]
    d: dict[str, object] = dict(gpu=gpu, framebuffer=(1000, 600), bin_merging="off", density=HALF)
    d.update(kw)
    return plan_render_pass(make_scenario(**d))


@pytest.mark.parametrize("gpu", ["a618", "a630", "a650", "a660", "a690"])
def test_no_fast_store_in_a6xx_fdm_passes(gpu: str) -> None:
    """Item 2.  tu_store_gmem_attachment (tu_clear_blit.cc, pop-os @ 4ff7b570): ``use_fast_path``
    requires ``(!cmd->state.pass->has_fdm || CHIP >= A7XX)``, and tu6_emit_tile_select
    (tu_cmd_buffer.cc, pop-os @ 4ff7b570) sets the FAST_STORE predicate only ``if (CHIP >=
    A7XX)``.  The model said fast_store = true for a630/a660 FDM passes (a uniform 0.5 density,
    no offsets: ``!fdm_offsets && !bin_scale_en`` holds on every tile)."""
    p = _plan(gpu)
    assert p.tiles and all(not t.fast_store for t in p.tiles)
    # the same pass on a7xx without HW scaling takes the fast path on every tile
    assert all(t.fast_store for t in _plan("a730").tiles)


@pytest.mark.parametrize("density", [0.5, 1.0])
@pytest.mark.parametrize("gpu", ["a618", "a630", "a650", "a660"])
def test_a6xx_fdm_passes_have_no_lrz(gpu: str, density: float) -> None:
    """Finding m (revised; the box, turnip 26.2.6: GRAS_LRZ_CNTL = 0 at the draws of every bin of
    every a618/a660 FDM pass).  tu_shader_create (tu_shader.cc, pop-os @ 025a3b4d) marks the
    fragment shader of an FDM pipeline ``TU_LRZ_FORCE_DISABLE_LRZ`` when ``chip < 7``, and
    tu6_calculate_lrz_state (tu_lrz.cc, pop-os @ 4ff7b570) then turns LRZ off at every draw,
    scaled tile or not (density 1.0: fa 1x1): temporarily without LRZ direction tracking (a618,
    a630), for the rest of the pass with it (a650, a660).  The per-tile ``force_lrz_dis`` stays
    a7xx-only.  (The model said LRZ stayed on, from tu6_emit_tile_select alone.)"""
    dens = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [32, 20], "density": density}]}
    p = _plan(gpu, density=dens)
    g = gpu_profiles()[gpu]
    assert p.lrz.valid  # tu_lrz_init_state: depth cleared
    assert not p.lrz_draw.enabled and "TU_LRZ_FORCE_DISABLE_LRZ" in p.lrz_draw.reason
    assert p.lrz_draw.valid_after == (not g.has_lrz_dir_tracking)
    for t in p.tiles:
        assert t.views[0].frag_area == ((2, 2) if density == 0.5 else (1, 1))
        assert t.bin_is_scaled == (density == 0.5) and not t.bin_scale_en
        assert not t.force_lrz_dis and not t.lrz
    # a730 (a7xx, no HW scaling): no FS rule; only the scaled tiles get force_lrz_dis and LRZ off
    a730 = _plan("a730", density=dens)
    assert a730.lrz_draw.enabled
    assert all(t.force_lrz_dis == (density == 0.5) and t.lrz == (density != 0.5) for t in a730.tiles)


def test_a6xx_lrz_stays_on_when_the_fdm_is_turned_off() -> None:
    """A pass whose FDM tu_render_pass_disable_fdm turned off has no FDM key: tu_CreateRenderPass2
    (tu_pass.cc, pop-os @ c02c8b9f) leaves ``fragment_density_map.attachment`` unused, so the
    pipeline gets no ``RENDERING_FRAGMENT_DENSITY_MAP_ATTACHMENT_BIT`` and its a6xx shader no
    ``TU_LRZ_FORCE_DISABLE_LRZ``: LRZ is on in every bin (the box agrees, a618/a660)."""
    msaa = [{"cpp": 4, "samples": 4}, {"cpp": 4, "samples": 4, "store_op": "dont_care"}]
    p = _plan("a660", attachments=msaa, tu_debug=["gmem"])
    assert not p.fdm_enabled and p.render_mode == "gmem" and p.tiles
    assert p.lrz_draw.enabled and all(t.lrz for t in p.tiles)


def test_planted_lrz_rules_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: no shader rule (the old model), a shader rule blind to the FDM being turned off,
    and an LRZ cap that ignores the FDM being off: each is caught."""
    import fdm.plan
    monkeypatch.setattr(fdm.plan, "fs_forces_lrz_off", lambda gpu, fdm_pipeline: False)
    with pytest.raises(AssertionError):
        test_a6xx_fdm_passes_have_no_lrz("a660", 1.0)
    monkeypatch.setattr(fdm.plan, "fs_forces_lrz_off", lambda gpu, fdm_pipeline: gpu.chip < 7)
    with pytest.raises(AssertionError):
        test_a6xx_lrz_stays_on_when_the_fdm_is_turned_off()
    monkeypatch.undo()
    real = fdm.plan.max_tile_size
    monkeypatch.setattr(fdm.plan, "max_tile_size", lambda sc, fdm=True: real(sc))
    with pytest.raises(AssertionError):
        test_no_lrz_tile_cap_when_the_fdm_is_turned_off()


def test_lrz_init_state_rules() -> None:
    """Item 11.  tu_lrz_init_state (tu_lrz.cc, pop-os @ 8afad928), in the driver's order."""
    g = gpu_profiles()
    a630, a650, a750 = g["a630"], g["a650"], g["a750"]
    assert tu_lrz_init_state(a750, "clear", True).valid
    assert tu_lrz_init_state(a750, "load", False).valid
    # an image with the FDM-offset flag cannot reuse the previous pass's LRZ state
    s = tu_lrz_init_state(a750, "load", True)
    assert not s.valid and "FRAGMENT_DENSITY_MAP_OFFSET_BIT" in s.reason
    # without LRZ direction tracking (a6xx gen1) a pass that loads depth gets no LRZ at all
    assert not a630.has_lrz_dir_tracking and a650.has_lrz_dir_tracking
    assert not tu_lrz_init_state(a630, "load", False).valid
    assert tu_lrz_init_state(a650, "load", False).valid
    assert not tu_lrz_init_state(a750, "dont_care", False).valid
    assert not tu_lrz_init_state(a750, "none", False).valid


def test_offset_flag_without_depth_clear_turns_lrz_off_for_the_pass() -> None:
    """Item 11 in a plan: the same a740 pass, depth loaded, with and without the offset flag."""
    on = _plan("a740", depth_load_op="load")
    off = _plan("a740", depth_load_op="load", fdm_offset_create_flag=True)
    # a740 has HW bin scaling: no tile of the uniform 0.5 pass gets force_lrz_dis
    assert on.lrz.valid and all(t.lrz for t in on.tiles)
    assert not off.lrz.valid and not any(t.lrz for t in off.tiles)


def test_lrz_over_allocation_caps_the_tile_size() -> None:
    """Item 11.  fdl6_lrz_get_max_fdm_extra_size (freedreno_lrz_layout.h @ 3ebd859c), worked by
    hand for a 1000x600 single-sampled one-layer depth image on a750 (tile_max 2016x2032,
    gmem_align 16x4, fast-clear limit 1024 bytes on a7xx):
    fc(1000, 600): ceil(ceil(1000/8)/16) = 8 blocks x ceil(ceil(600/8)/4) = 19 -> ceil(152/8) =
    19 bytes: fast clear fits, so search e from min(2016, 2032) = 2016 down in steps of 4:
    fc(3016, 2616) = ceil(377/16) = 24 x ceil(327/4) = 82 -> ceil(1968/8) = 246 <= 1024: fits at
    once; e = 2016 rounded down to 16 and to 4 = (2016, 2016).  The tile walk is then capped at
    2016 in height too (tile_max_h was 2032)."""
    a750 = gpu_profiles()["a750"]
    assert lrz_fc_size(a750, 1000, 600, 1, 1) == 19
    assert lrz_fc_size(a750, 3016, 2616, 1, 1) == 246
    assert max_fdm_extra_size(a750, 1000, 600, 1, 1) == (2016, 2016)
    sc = make_scenario(gpu="a750", framebuffer=(1000, 600), density=HALF, fdm_offset_create_flag=True)
    assert max_tile_size(sc) == (2016, 2016)
    # a big multi-layer image loses fast clear at every e: the extra is tile_max
    # fc(8000, 8000, 6 layers) = ceil(1000/16)=63 x 250 -> ceil(15750/8) = 1969 * 6 > 1024 -> 0
    assert lrz_fc_size(a750, 8000, 8000, 1, 6) == 0
    assert max_fdm_extra_size(a750, 8000, 8000, 1, 6) == (2016, 2032)


def test_no_lrz_tile_cap_when_the_fdm_is_turned_off() -> None:
    """tu_CreateFramebuffer (tu_device.cc, pop-os @ 025a3b4d) sets ``max_tile_{w,h}_constraint``
    from the FDM-offset depth image only ``if (pass->has_fdm)``: a pass whose FDM
    tu_render_pass_disable_fdm turned off walks tile sizes up to tile_max.  The box (turnip
    26.2.6, a740, 1920x1080, 3 views, offset flag, a stored 4x colour attachment, TU_DEBUG=gmem)
    picks 480x64 tiles; the model capped them at (192, 200) and picked 192x160 before (generated
    scenario gen3-00311 the same way)."""
    kw: dict[str, object] = dict(gpu="a740", framebuffer=(1920, 1080), views=3, density=HALF,
                                 fdm_offset_create_flag=True, fdm_offsets=[[96, -72], [-168, 224], [-48, 144]])
    depth = {"cpp": 4, "samples": 4, "store_op": "dont_care"}
    on = plan_render_pass(make_scenario(attachments=[{"cpp": 4, "samples": 4, "store_op": "dont_care"}, depth],
                                        **kw))
    off = plan_render_pass(make_scenario(attachments=[{"cpp": 4, "samples": 4}, depth], tu_debug=["gmem"], **kw))
    assert on.fdm_enabled and not off.fdm_enabled
    assert max_tile_size(on.scenario) == (192, 200) and on.tiling.tile_size == (192, 160)
    assert max_tile_size(off.scenario, fdm=False) == (2016, 2032)
    assert off.tiling.tile_size == (480, 64)


def test_emit_subsampled_hands_the_real_offsets_under_a_shared_viewport() -> None:
    """Item 3 (finding n).  tu_cmd_render_tiles (tu_cmd_buffer.cc, pop-os @ 4ff7b570) nulls
    ``fdm_offsets`` only ``if (!has_fdm)`` and passes them to ``tu_emit_subsampled``, which hands
    them to ``tu_emit_subsampled_metadata`` and ``tu_calc_subsampled_aprons`` (both computing
    ``tu_bin_offset(fdm_offsets[view], tiling)``), while ``tu_calc_tile_config`` (tu_tile_config.cc,
    pop-os @ aee40d4a) gave ``tu_calc_subsampled`` ``shared_viewport ? NULL : fdm_offsets``.
    Minimal scenario: a740, 384x320, tile 192x160, 2 views writing gl_ViewportIndex, offsets
    (40, -16): b_o = (192 - 40, 16) = (152, 16).  That is the reading ``pop-os-4ff7b570``; the
    default (upstream: Mesa 26.2.6 as the box records it) and the tencentmalos
    reading (@ 16ad8431) hand the solver's (NULL -> (0, 0))."""
    from layout_solver import tu_calc_subsampled
    from layout_solver.metadata import layout_metadata

    base: dict[str, object] = dict(gpu="a740", framebuffer=(384, 320), tile_size=(192, 160), views=2,
                                   writes_viewport_index=True, bin_merging="off", fdm_offset_create_flag=True,
                                   fdm_offsets=((40, -16), (40, -16)),
                                   density={"format": "R32G32_SFLOAT",
                                            "views": [{"generator": "constant", "size": [12, 10], "density": 0.5}]})
    default = tu_calc_subsampled(plan_render_pass(make_scenario(**base)))
    assert default.bin_offsets is None and default.emit_bin_offset(0) == (0, 0)
    up = tu_calc_subsampled(plan_render_pass(make_scenario(**base, driver={"tu_emit_subsampled":
                                                                             "pop-os-4ff7b570"})))
    assert up.bin_offsets is None                       # the solver ran with NULL
    assert up.emit_bin_offset(0) == (152, 16)           # metadata and aprons get the real b_o
    # header offset = b_o / T = (152/192, 16/160)
    hdr = layout_metadata(up)[0].header
    assert (float(hdr.offset[0]), float(hdr.offset[1])) == (float(np.float32(152 / 192)), float(np.float32(0.1)))
    tm = tu_calc_subsampled(plan_render_pass(make_scenario(**base, driver={"tu_emit_subsampled":
                                                                             "tencentmalos-16ad8431"})))
    assert tm.emit_bin_offset(0) == (0, 0)
    assert layout_metadata(tm)[0].header.offset == (np.float32(0), np.float32(0))
