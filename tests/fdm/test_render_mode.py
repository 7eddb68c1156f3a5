"""FDM on/off, sysmem or GMEM, binning pass or not (issue 17 item 4): the rules stated from the
driver and checked on the plan.

- ``tu_render_pass_disable_fdm`` (tu_pass.cc, pop-os @ c02c8b9f) with ``attachment_set_ops``:
  the FDM is off iff some attachment has ``samples > 1`` and ``loadOp == LOAD`` or
  ``storeOp == STORE``;
- ``use_sysmem_rendering`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570) ending in
  ``tu_autotune::get_optimal_mode`` (tu_autotune.cc, pop-os @ 025a3b4d) without history: an FDM
  pass is GMEM; a pass without FDM and fewer than 5 draws is sysmem ("Autotune selected
  sysmem"); with 5 or more, sysmem iff ``sysmem_bw <= gmem_bw * 11 / 10``;
- ``use_hw_binning``: ``binning_possible && tile_count.w * tile_count.h > 2`` on the VSC in use.

Without FDM the plan is turnip's plan of a pass without FDM: every cell rendered, frag area 1x1,
no offsets, no scaling, no extra row/column.  ``test_planted_*`` show the checks can fail.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdm.patch
import fdm.plan
import fdm.render_mode
from fdm import make_scenario, plan_render_pass
from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.render_mode import (
    FDM_DISABLED_LOAD,
    FDM_DISABLED_STORE,
    LOAD_OPS,
    STORE_OPS,
    tu_render_pass_bandwidth_config,
    tu_render_pass_disable_fdm,
)
from fdm.report import plan_json, plan_table
from fdm.scenario import Attachment
from turnip_base.errors import NotModelled, ScenarioError

CONST = {"format": "R32G32_SFLOAT", "views": [{"generator": "constant", "size": [60, 34], "density": 0.5}]}
MS4_STORED = {"cpp": 4, "samples": 4}                              # clear + store: turns the FDM off
MS4_TRANSIENT = {"cpp": 4, "samples": 4, "store_op": "dont_care"}  # clear, not stored: FDM stays


def _scenario(**kw: Any) -> Any:
    base: dict[str, Any] = {"gpu": "a750", "framebuffer": (1920, 1080), "density": CONST}
    base.update(kw)
    return make_scenario(**base)


# --- the rule, stated from the driver ------------------------------------------------------

def driver_rule(atts: list[dict[str, Any]]) -> str | None:
    """tu_render_pass_disable_fdm as the C reads: the first attachment with samples > 1 whose
    loadOp is LOAD or storeOp is STORE; its message says "load" if it is loaded."""
    for a in atts:
        if a.get("samples", 1) > 1 and (a.get("load_op", "clear") == "load" or a.get("store_op", "store") == "store"):
            return FDM_DISABLED_LOAD if a.get("load_op", "clear") == "load" else FDM_DISABLED_STORE
    return None


attachment = st.fixed_dictionaries({"cpp": st.sampled_from([1, 2, 4, 8]), "samples": st.sampled_from([1, 2, 4])},
                                   optional={"load_op": st.sampled_from(LOAD_OPS),
                                             "store_op": st.sampled_from(STORE_OPS)})


@settings(max_examples=300, deadline=None)
@given(st.lists(attachment, min_size=1, max_size=4))
def test_disable_fdm_follows_the_driver_rule(atts: list[dict[str, Any]]) -> None:
    objs = [Attachment(a["cpp"], a["samples"], load_op=a.get("load_op", "clear"), store_op=a.get("store_op", "store"))
            for a in atts]
    assert tu_render_pass_disable_fdm(objs) == driver_rule(atts)


def test_every_op_pair_on_one_4x_attachment() -> None:
    """The 12 load/store pairs: only LOAD or STORE turn the FDM off; clear, dont_care and none do not."""
    for load, store in itertools.product(LOAD_OPS, STORE_OPS):
        off = load == "load" or store == "store"
        p = plan_render_pass(_scenario(attachments=[{"cpp": 4, "samples": 4, "load_op": load, "store_op": store}],
                                       tu_debug=["gmem"], depth_load_op="none"))
        assert p.fdm_enabled is (not off), (load, store)
        assert p.fdm_disabled_reason == (None if not off else FDM_DISABLED_LOAD if load == "load"
                                         else FDM_DISABLED_STORE)
    # single-sampled attachments never turn it off
    for load, store in itertools.product(LOAD_OPS, STORE_OPS):
        assert plan_render_pass(_scenario(attachments=[{"cpp": 4, "load_op": load, "store_op": store}],
                                          depth_load_op="none")).fdm_enabled


def test_the_depth_attachment_loads_with_depth_load_op() -> None:
    """The last attachment is the depth attachment: a 4x depth loaded (depth_load_op) turns the FDM off."""
    p = plan_render_pass(_scenario(attachments=[{"cpp": 4}, {"cpp": 4, "samples": 4, "store_op": "dont_care"}],
                                   depth_load_op="load"))
    assert p.fdm_disabled_reason == FDM_DISABLED_LOAD
    p = plan_render_pass(_scenario(attachments=[{"cpp": 4}, {"cpp": 4, "samples": 4, "store_op": "dont_care"}]))
    assert p.fdm_enabled


# --- the plan of a pass without FDM ----------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(fb=st.tuples(st.integers(64, 3000), st.integers(64, 3000)), views=st.integers(1, 3),
       offsets=st.booleans(), gpu=st.sampled_from(["a618", "a650", "a730", "a750"]))
def test_without_fdm_the_plan_is_turnips_plan_without_fdm(fb: tuple[int, int], views: int, offsets: bool,
                                                          gpu: str) -> None:
    kw: dict[str, Any] = {"gpu": gpu, "framebuffer": fb, "views": views, "tu_debug": ["gmem"],
                          "attachments": [MS4_STORED, {"cpp": 4}]}
    if offsets:
        kw.update(fdm_offset_create_flag=True, fdm_offsets=[[40, -24]] * views)
    p = plan_render_pass(_scenario(**kw))
    assert isinstance(p, RenderPassPlan) and not p.fdm_enabled
    T = p.tiling.tile_size
    # no FDM-offset VSC: the grid covers the framebuffer, no extra row or column
    assert p.tiling.vsc.tile_count == (-(-fb[0] // T[0]), -(-fb[1] // T[1]))
    assert p.fdm_offsets is None and p.bin_offsets == ((0, 0),) * views
    # every cell rendered once, 1x1, no merging
    assert sorted(t.pos for t in p.tiles) == sorted(itertools.product(range(p.tiling.vsc.tile_count[0]),
                                                                      range(p.tiling.vsc.tile_count[1])))
    for t in p.tiles:
        assert t.extent == (1, 1) and not t.bin_is_scaled and not t.bin_scale_en and not t.foveat.binscaleen
        assert not t.force_lrz_dis
        for v in t.views:
            assert v.frag_area == (1, 1) and v.offset == (0, 0) and v.hw_offset == (0, 0) and v.bin_offset == (0, 0)
            assert v.bin == (t.common_bin_start[0], t.common_bin_start[1], T[0], T[1])
        assert all(f.frag_size == (1, 1) and f.frag_offset == (0, 0) for f in t.fs_params)
    # the square-tile penalty and the 4x8 merging pipes are FDM's only
    assert p.tiling.vsc.pipe0 != (4, 8)   # the growth from 1x1 never reaches 4x8


def test_without_fdm_the_full_gmem_layout_is_used() -> None:
    """tu_choose_gmem_layout: AVOID_CCU for FDM passes only.  a750, one 4x RGBA8 attachment
    (16 bytes a pixel): the FULL budget gives more GMEM pixels than the AVOID_CCU one."""
    on = plan_render_pass(_scenario(attachments=[MS4_TRANSIENT], tu_debug=["gmem"]))
    off = plan_render_pass(_scenario(attachments=[MS4_STORED], tu_debug=["gmem"]))
    assert on.fdm_enabled and not off.fdm_enabled
    assert off.gmem.gmem_pixels > on.gmem.gmem_pixels


def _avoid_ccu(**kw: Any) -> bool | None:
    """tu_choose_gmem_layout of a pass whose FDM is off (a stored 4x attachment)."""
    sc = _scenario(**kw)
    assert fdm.render_mode.tu_render_pass_disable_fdm(sc.attachments) is not None
    return fdm.plan._gmem_layout_avoid_ccu(sc, False)


@pytest.mark.parametrize("area, avoid", [
    ([0, 0, 1920, 1080], False),       # the whole framebuffer
    ([16, 4, 1904, 1076], False),      # aligned start (gmem_align 16x4), ends at the image edge
    ([16, 4, 96, 100], False),         # aligned both ends
    ([8, 8, 100, 100], True),          # x1 off gmem_align_w
    ([16, 6, 96, 100], True),          # y1 off gmem_align_h
    ([16, 4, 90, 100], True),          # x2 off gmem_align_w, not the image edge
])
def test_store_alignment_picks_the_gmem_layout_without_fdm(area: list[int], avoid: bool) -> None:
    """tu_choose_gmem_layout (tu_clear_blit.cc, pop-os @ 4ff7b570): without the FDM, a stored
    attachment whose render area is unaligned (tu_attachment_store_unaligned: x1/y1 off
    gmem_align, or x2/y2 off it and not the image's edge) moves the pass to AVOID_CCU.  (The
    model refused these passes as not modelled before.)"""
    assert _avoid_ccu(attachments=[MS4_STORED], render_areas=[area]) is avoid
    # an FDM pass is AVOID_CCU whatever its render area
    assert fdm.plan._gmem_layout_avoid_ccu(_scenario(render_areas=[area]), True) is True


@pytest.mark.parametrize("cpp, avoid", [(1, False), (2, True), (4, False), (8, True), (16, True)])
def test_resolve_format_picks_the_gmem_layout_without_fdm(cpp: int, avoid: bool) -> None:
    """tu_choose_gmem_layout: a resolved attachment whose format blit_can_resolve refuses
    (R8G8_UNORM; the float formats, first channel wider than 10 bits) moves a pass without FDM to
    AVOID_CCU.  The formats by cpp are the box's (fdm.render_mode.COLOUR_FORMATS)."""
    atts = [MS4_STORED, {"cpp": cpp, "samples": 4, "resolve": True}]
    assert _avoid_ccu(attachments=atts, depth_load_op="none") is avoid
    assert _avoid_ccu(attachments=[MS4_STORED, {"cpp": cpp, "samples": 4}], depth_load_op="none") is False


def test_box_gen2_00349_tiles_follow_the_avoid_ccu_layout() -> None:
    """The box (turnip 26.2.6, a618, generated scenario gen2-00349): a pass whose FDM a stored 4x
    attachment turned off, resolving a 4x R8G8_UNORM attachment, gets 64x128 tiles (the
    AVOID_CCU budget); the model gave 96x96 (the FULL layout's) before."""
    sc = make_scenario(gpu="a618", framebuffer=(1000, 1920), views=2, density=CONST, fdm_offset_create_flag=True,
                       fdm_offsets=[[48, 272], [16, -8]], draws=8,
                       attachments=[{"cpp": 2, "samples": 4, "resolve": True},
                                    {"cpp": 1, "samples": 4, "resolve": True}, {"cpp": 4, "samples": 4}])
    p = plan_render_pass(sc)
    assert isinstance(p, RenderPassPlan) and not p.fdm_enabled
    assert p.tiling.tile_size == (64, 128)


def test_a_one_byte_depth_attachment_is_stencil_only_s8() -> None:
    """A 1-byte depth attachment is S8_UINT (fdm.render_mode.DEPTH_FORMATS, as the box records it):
    no LRZ buffer, so LRZ off for the pass and no FDM-offset tile cap from it, and stored it asks
    for AVOID_CCU in a pass without FDM.  The box (turnip 26.2.6, a618..a750) agrees on each:
    a730 gives 512x64 tiles to a 3-view 1920x1080 pass with a stored 4x S8 attachment (the FULL
    layout gave 64x544), a750 288x160 to the same pass with the S8 not stored and its FDM on (a D32
    image's cap gave 192x192): tests/box/test_box.py S8_PASSES."""
    s8 = _scenario(attachments=[{"cpp": 4}, {"cpp": 1}])
    p = plan_render_pass(s8)
    assert isinstance(p, RenderPassPlan) and not p.lrz.valid and "S8_UINT" in p.lrz.reason
    assert plan_render_pass(_scenario(attachments=[{"cpp": 4}, {"cpp": 2}])).lrz.valid
    offset = dict(framebuffer=(1000, 600), fdm_offset_create_flag=True, fdm_offsets=[[96, -72]])
    assert fdm.plan.max_tile_size(_scenario(attachments=[{"cpp": 4}, {"cpp": 1}], **offset)) == (2016, 2032)
    assert fdm.plan.max_tile_size(_scenario(attachments=[{"cpp": 4}, {"cpp": 4}], **offset)) == (2016, 2016)
    assert _avoid_ccu(attachments=[MS4_STORED, {"cpp": 1, "samples": 4}]) is True
    assert _avoid_ccu(attachments=[MS4_STORED, {"cpp": 1, "samples": 4, "store_op": "dont_care"}]) is False
    assert _avoid_ccu(attachments=[MS4_STORED, {"cpp": 1, "samples": 4}], depth_load_op="none") is False  # R8


def test_unknown_resolve_format_is_not_modelled() -> None:
    """A resolved attachment of a cpp with no modelled format (3) leaves the layout unknown: a
    sysmem decision both layouts share stands; a GMEM one is refused as not modelled."""
    atts = [MS4_STORED, {"cpp": 3, "samples": 4, "resolve": True}]
    p = plan_render_pass(_scenario(attachments=atts, depth_load_op="none"))
    assert isinstance(p, SysmemPlan) and p.sysmem_reason == "Autotune selected sysmem"
    with pytest.raises(NotModelled, match="tu_choose_gmem_layout"):
        plan_render_pass(_scenario(attachments=atts, depth_load_op="none", tu_debug=["gmem"]))


def test_planted_layout_without_store_alignment_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted tu_choose_gmem_layout that ignores the store alignment is caught."""
    monkeypatch.setattr(fdm.render_mode, "tu_attachment_store_unaligned", lambda *a: False)
    with pytest.raises(AssertionError):
        test_store_alignment_picks_the_gmem_layout_without_fdm([8, 8, 100, 100], True)
    monkeypatch.undo()
    monkeypatch.setattr(fdm.render_mode, "blit_can_resolve", lambda fmt: True)
    with pytest.raises(AssertionError):
        test_box_gen2_00349_tiles_follow_the_avoid_ccu_layout()


# --- autotune --------------------------------------------------------------------------------

@pytest.mark.parametrize("draws", [0, 1, 4])
def test_few_draws_without_fdm_render_in_sysmem(draws: int) -> None:
    """The box's 119 differences: a stored 4x attachment turns the FDM off, then the autotuner
    leaves a pass with fewer than 5 draws in sysmem."""
    p = plan_render_pass(_scenario(attachments=[MS4_STORED, {"cpp": 4}], draws=draws))
    assert isinstance(p, SysmemPlan) and p.sysmem_reason == "Autotune selected sysmem"
    assert not p.fdm_enabled and p.fdm_disabled_reason == FDM_DISABLED_STORE and not p.binning_pass


def test_fdm_passes_are_gmem_whatever_the_draws() -> None:
    for draws in (0, 1, 4, 5, 1000):
        p = plan_render_pass(_scenario(attachments=[MS4_TRANSIENT, {"cpp": 4}], draws=draws))
        assert isinstance(p, RenderPassPlan) and p.fdm_enabled


def test_bandwidth_estimate_by_hand() -> None:
    """5 draws, FDM off, 1920x1080 (2,073,600 px), no history (samples passed 0):
    - 4x RGBA8 cleared and stored (cpp 16) + 4x depth cleared, not stored (cpp 16):
      sysmem 16 + 16 = 32 B/px, GMEM 16 (store): 32 P > (16 P * 11) / 10 -> GMEM;
    - the same with the depth stored too (FDM still off): sysmem 32, GMEM 32: 32 P <= 35.2 P -> sysmem;
    - 4x colour cleared, stored and resolved: sysmem 16 + (16 + 16/4) = 36, GMEM 16 + 4 (the
      resolve destination's store) = 20: 36 P > 22 P -> GMEM."""
    bw = tu_render_pass_bandwidth_config([Attachment(4, 4), Attachment(4, 4, store_op="dont_care")])
    assert (bw.sysmem_per_pixel, bw.gmem_per_pixel) == (32, 16)
    p = plan_render_pass(_scenario(attachments=[MS4_STORED, MS4_TRANSIENT], draws=5))
    assert isinstance(p, RenderPassPlan) and not p.fdm_enabled
    assert isinstance(plan_render_pass(_scenario(attachments=[MS4_STORED, MS4_TRANSIENT], draws=4)), SysmemPlan)
    p = plan_render_pass(_scenario(attachments=[MS4_STORED, MS4_STORED], draws=5))
    assert isinstance(p, SysmemPlan) and p.sysmem_reason == "Autotune selected sysmem"
    bw = tu_render_pass_bandwidth_config([Attachment(4, 4, resolve=True)])
    assert (bw.sysmem_per_pixel, bw.gmem_per_pixel) == (36, 20)
    assert isinstance(plan_render_pass(_scenario(attachments=[{**MS4_STORED, "resolve": True}], draws=5)),
                      RenderPassPlan)


@settings(max_examples=200, deadline=None)
@given(st.lists(attachment, min_size=1, max_size=3), st.integers(0, 8))
def test_render_mode_follows_get_optimal_mode(atts: list[dict[str, Any]], draws: int) -> None:
    """On a pass no earlier reason sends to sysmem (TU_DEBUG nothing, tiles fit, binning
    possible): GMEM iff FDM on, or >= 5 draws and sysmem_bw > gmem_bw * 11 / 10."""
    sc = _scenario(framebuffer=(512, 512), attachments=atts, draws=draws, depth_load_op="none")
    p = plan_render_pass(sc)
    if p.sysmem_reason not in (None, "Autotune selected sysmem"):
        return
    fdm_on = driver_rule(atts) is None
    pixels = 512 * 512
    sysmem = gmem = 0
    for a in atts:
        cpp = a["cpp"] * a["samples"]
        sysmem += cpp if a.get("load_op", "clear") == "clear" else 0
        gmem += cpp if a.get("load_op", "clear") == "load" else 0
        gmem += cpp if a.get("store_op", "store") == "store" else 0
    expect_gmem = fdm_on or (draws >= 5 and sysmem * pixels > gmem * pixels * 11 // 10)
    assert (p.render_mode == "gmem") is expect_gmem


# --- binning pass ----------------------------------------------------------------------------

@pytest.mark.parametrize(("width", "flag", "tiles", "binning"), [
    (480, False, 1, False), (960, False, 2, False), (1440, False, 3, True),
    # the FDM-offset VSC counts its extra row and column: (1 + 1) x (1 + 1) = 4 > 2
    (480, True, 4, True)])
def test_binning_pass_when_more_than_two_tiles(width: int, flag: bool, tiles: int, binning: bool) -> None:
    """a750 with a 480x320 tile: use_hw_binning = binning_possible && tile count > 2."""
    p = plan_render_pass(_scenario(framebuffer=(width, 320), tile_size=(480, 320), fdm_offset_create_flag=flag,
                                   density={"views": [{"generator": "constant", "size": [16, 10], "density": 1.0}]}))
    assert isinstance(p, RenderPassPlan)
    tc = p.tiling.vsc.tile_count
    assert tc[0] * tc[1] == tiles and p.binning_pass is binning


@settings(max_examples=60, deadline=None)
@given(fb=st.tuples(st.integers(32, 6000), st.integers(32, 6000)), flag=st.booleans(),
       gpu=st.sampled_from(["a618", "a650", "a730", "a750", "a830"]))
def test_binning_pass_rule(fb: tuple[int, int], flag: bool, gpu: str) -> None:
    p = plan_render_pass(_scenario(gpu=gpu, framebuffer=fb, fdm_offset_create_flag=flag, tu_debug=["gmem"]))
    assert isinstance(p, RenderPassPlan)
    vsc = p.tiling.vsc
    assert p.binning_pass is (vsc.binning_possible and vsc.tile_count[0] * vsc.tile_count[1] > 2)
    assert plan_json(p)["binning_pass"] is p.binning_pass


# --- outputs and validation ------------------------------------------------------------------

def test_json_and_table_say_why() -> None:
    p = plan_render_pass(_scenario(attachments=[MS4_STORED]))
    j = plan_json(p)
    assert j["fdm_enabled"] is False and j["fdm_disabled_reason"] == FDM_DISABLED_STORE
    assert j["render_mode"] == "sysmem" and j["sysmem_reason"] == "Autotune selected sysmem"
    assert j["binning_pass"] is False and j["draws"] == 1
    assert "FDM off: " + FDM_DISABLED_STORE in plan_table(p)
    g = plan_json(plan_render_pass(_scenario(tu_debug=["gmem"], attachments=[MS4_STORED])))
    assert g["fdm_enabled"] is False and isinstance(g["binning"]["bins"], list)


@pytest.mark.parametrize(("fields", "field", "rule"), [
    ({"attachments": [{"cpp": 4, "load_op": "keep"}]}, "attachments[0].load_op", "must be one of clear, load, "
                                                                                   "dont_care, none, got 'keep'"),
    ({"attachments": [{"cpp": 4, "store_op": "clear"}]}, "attachments[0].store_op", "must be one of store, "
                                                                                      "dont_care, none, got 'clear'"),
    ({"attachments": [{"cpp": 4, "resolve": 1}]}, "attachments[0].resolve", "must be true or false, got int"),
    ({"attachments": [{"cpp": 4, "resolve": True}]}, "attachments[0].resolve", "a resolve source must be "
                                                                                 "multisampled (samples > 1), "
                                                                                 "got samples = 1"),
    ({"attachments": [{"cpp": 4}, {"cpp": 4, "load_op": "load"}]}, "attachments[1].load_op",
     "the last attachment is the depth attachment, whose load op is depth_load_op ('clear'), got 'load'"),
    ({"draws": -1}, "draws", "must be >= 0, got -1"),
    ({"draws": 2.5}, "draws", "must be an integer, got float"),
    ({"draws": 1 << 40}, "draws", "must lie in the int32 range [-2147483648, 2147483647]"),
])
def test_bad_new_fields(fields: dict[str, Any], field: str, rule: str) -> None:
    with pytest.raises(ScenarioError) as e:
        _scenario(**fields)
    assert (e.value.field, e.value.rule) == (field, rule)


# --- the checks can fail ---------------------------------------------------------------------

def test_planted_stores_ignored_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted reading of the rule that forgets stores (only a loaded 4x attachment turns the
    FDM off) keeps the FDM on the box's 119 passes; the plan-level check sees it."""
    def loads_only(attachments: Any) -> str | None:
        return next((FDM_DISABLED_LOAD for a in attachments if a.samples > 1 and a.load_op == "load"), None)
    monkeypatch.setattr(fdm.plan, "tu_render_pass_disable_fdm", loads_only)
    with pytest.raises(AssertionError):
        test_few_draws_without_fdm_render_in_sysmem(1)
    with pytest.raises(AssertionError):
        test_every_op_pair_on_one_4x_attachment()


def test_planted_autotune_threshold_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted autotune that tunes passes from 4 draws on (not 5) is caught by the hand
    example (4 draws must stay in sysmem)."""
    real = fdm.render_mode.autotune_render_mode

    def four(fdm_enabled: bool, draws: int, *a: Any) -> Any:
        return real(fdm_enabled, draws + 1, *a)
    monkeypatch.setattr(fdm.plan, "autotune_render_mode", four)
    with pytest.raises(AssertionError):
        test_bandwidth_estimate_by_hand()


def test_planted_binning_without_useful_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``binning_possible`` alone (forgetting ``binning_useful``) gives a 1-tile pass a binning pass."""
    monkeypatch.setattr(fdm.plan, "use_hw_binning", lambda vsc: vsc.binning_possible)
    with pytest.raises(AssertionError):
        test_binning_pass_when_more_than_two_tiles(480, False, 1, False)


def test_bad_field_on_the_command_line_exits_2_with_one_line(tmp_path: Any) -> None:
    import subprocess
    import sys
    from pathlib import Path
    f = tmp_path / "bad.toml"
    f.write_text('gpu = "a750"\nframebuffer = [64, 64]\nattachments = [{ cpp = 4, samples = 4, store_op = "keep" }]\n'
                 '[density]\n[[density.views]]\ngenerator = "constant"\nsize = [2, 2]\ndensity = 1.0\n')
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-m", "turnip_fdm", "check", str(f)], capture_output=True, text=True,
                       cwd=root, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("turnip-fdm: error: attachments[0].store_op: must be one of store, dont_care, none, "
                        "got 'keep'\n")


# --- a pass whose FDM is off: no FDM key in its pipeline -----------------------------------

def _vp_regs(p: Any) -> list[tuple[float, ...]]:
    return [s.viewport for s in p]


@pytest.mark.parametrize("gmem", [False, True])
def test_fdm_off_slots_are_the_users_viewports(gmem: bool) -> None:
    """tu_CreateRenderPass2 (tu_pass.cc, pop-os @ c02c8b9f) leaves the FDM attachment unused when
    tu_render_pass_disable_fdm turns the FDM off, so the pipeline's shader has no FDM key:
    tu_emit_program_state's ``per_view_viewport`` needs the QCOM feature, and the viewports and
    scissors are emitted by tu6_emit_viewport/tu6_emit_scissor, not through the FDM patchpoints:
    one slot per user viewport, slot i = user viewport and scissor i, untransformed, in sysmem,
    the binning pass and every bin.  (The box, turnip 26.2.6: a750/a660 with 2 views and 1
    viewport program one slot; the model gave two, both from viewport 0, before.)"""
    kw: dict[str, Any] = dict(views=2, attachments=[MS4_STORED], viewports=[[6, 154, 286, 581]],
                              scissors=[[227, 361, 10, 80]])
    if gmem:
        kw["tu_debug"] = ["gmem"]
    p = plan_render_pass(_scenario(**kw))
    assert not p.fdm_enabled and p.render_mode == ("gmem" if gmem else "sysmem")
    assert not p.viewport_state.per_view_viewport and p.viewport_state.slot_count == 1
    slot_sets = [p.slots] if isinstance(p, SysmemPlan) else [p.binning.slots, *(t.slots for t in p.tiles)]
    for slots in slot_sets:
        assert len(slots) == 1
        assert slots[0].viewport == (6.0, 154.0, 286.0, 581.0)
        assert slots[0].scissor == ((227, 361), (236, 440))
    # with the QCOM feature each view takes its own viewport, still untransformed
    q = plan_render_pass(_scenario(**{**kw, "multiview_per_view_viewports": True,
                                      "viewports": [[0, 0, 960, 1080], [960, 0, 960, 1080]],
                                      "scissors": [[0, 0, 960, 1080], [960, 0, 960, 1080]]}))
    assert q.viewport_state.per_view_viewport and not q.viewport_state.fake_single_viewport
    qs = q.slots if isinstance(q, SysmemPlan) else q.tiles[-1].slots
    assert [s.viewport for s in qs] == [(0.0, 0.0, 960.0, 1080.0), (960.0, 0.0, 960.0, 1080.0)]


def test_fdm_off_a2d_store_covers_the_render_area() -> None:
    """tu_store_gmem_attachment (tu_clear_blit.cc, pop-os @ 4ff7b570) without FDM programs the A2D
    store with r2d_coords(render_area, render_area): the same rectangle as destination and
    source in every bin, per view with per-view render areas (the box: generated scenario
    gen2-00050, a740, two per-view render areas)."""
    areas = [[8, 8, 100, 100], [40, 20, 300, 200]]
    p = plan_render_pass(_scenario(views=2, attachments=[MS4_STORED], render_areas=areas, tu_debug=["gmem"]))
    assert isinstance(p, RenderPassPlan) and not p.fdm_enabled and p.tiles
    for t in p.tiles:
        assert [b.store_dst for b in t.blits] == [((8, 8), (107, 107)), ((40, 20), (339, 219))]
        assert [b.store_src for b in t.blits] == [b.store_dst for b in t.blits]


def test_planted_fdm_off_bugs_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the FDM routing for an FDM-off pass (the old model), the FDM store rectangles."""
    monkeypatch.setattr(fdm.plan, "viewport_state_without_fdm",
                        lambda views, n, w, q: fdm.patch.viewport_state(views, n, w, q, True))
    with pytest.raises((AssertionError, IndexError)):  # two slots over one user viewport
        test_fdm_off_slots_are_the_users_viewports(False)
    monkeypatch.undo()
    monkeypatch.setattr(fdm.plan, "blit_rects_without_fdm",
                        lambda bins, b_cs, areas: fdm.patch.blit_rects(((1, 1),) * len(bins), bins, b_cs,
                                                                       ((0, 0),) * len(bins)))
    with pytest.raises(AssertionError):
        test_fdm_off_a2d_store_covers_the_render_area()
