"""The fdm backend's depth (B15), MSAA (B10), one-layer-map (B8) and shared-viewport (B9, C5) cases
(vk_tests/fdm_backend_more.py, vk_tests/fdm_backend.py): the judges with planted bugs, what a
device lacks, and on lavapipe the new replay twins through the runner."""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

import fdm
from turnip_base.errors import NotModelled, ScenarioError
from vk_tests import registry
from vk_tests.fdm import device as fdm_device
from vk_tests.fdm import expected as fdm_expected
from vk_tests.fdm import geometry as fdm_geometry
from vk_tests.fdm import judge as fdm_judge
from vk_tests.fdm import scene as fdm_scene
from vk_tests.replay import depth as replay_depth
from vk_tests.replay import judge as replay_judge
from vk_tests.replay import msaa as replay_msaa
from vk_tests.replay import scene as replay_scene
from vk_tests.replay import shared_viewport as replay_shared_viewport
from vk_tests.suite import selection as suite_selection
from vk_tests.suite.cases import CaseOutput

from .test_fdm_backend import ALL, TURNIPISH, device_info

NEW_FDM = ("fdm.depth_lrz.*", "fdm.msaa_resolve.*", "fdm.multiview.single_layer_map.*",
           "fdm.multiview.viewport_index_shared.*", "fdm.offset.shared_viewport_fallback.*")
NEW_TWINS = ("replay.twin.depth_lrz.*", "replay.twin.msaa_resolve.*", "replay.twin.multiview.single_layer_map.*",
             "replay.twin.multiview.viewport_index_shared.*", "replay.twin.offset.shared_viewport_fallback.*")


def named(patterns: tuple[str, ...], backend: str) -> list[Any]:
    cases = registry.all_cases()
    return [c for p in patterns for c in suite_selection.select(cases, [backend], p)]


def case(name: str) -> Any:
    return suite_selection.by_name(registry.all_cases())[name]


def out(images: dict[str, np.ndarray], turnip: bool, profile: str = "a750") -> CaseOutput:
    dev = device_info(turnip)
    if turnip:
        dev = {**dev, "profile": profile, "name": f"Turnip Adreno (TM) {profile[1:]}"}
    return CaseOutput(images=images, info={"device": dev, "path": "rp2", "readback": "nonsubsampled"})


def test_the_new_cases_and_their_twins_exist() -> None:
    fdm_names = {c.name for c in named(NEW_FDM, "fdm")}
    assert fdm_names == {
        "fdm.depth_lrz.a6xx_lowres.rp2", "fdm.depth_lrz.a7xx_scaled.rp2", "fdm.depth_lrz.offset_first_rowcol.rp2",
        "fdm.msaa_resolve.2x.rp2", "fdm.msaa_resolve.4x.rp2", "fdm.multiview.single_layer_map.rp2",
        "fdm.multiview.viewport_index_shared.rp2", "fdm.multiview.viewport_index_shared.dynrend",
        "fdm.offset.shared_viewport_fallback.rp2"}
    twins = suite_selection.by_name(named(NEW_TWINS, "replay"))
    assert len(twins) == 7
    for c in named(NEW_FDM, "fdm"):
        if c.name == "fdm.msaa_resolve.2x.rp2":
            assert "no replay twin: vk_tests.replay.msaa replays 4 samples only" in c.description
            continue
        t = twins[fdm_scene.twin_of(c.name, c.scene)]
        assert fdm_scene.replay_part(c.scene) == t.scene, c.name
    # the depth twin of a6xx runs on a650, like replay.depth_lrz.a6xx_lowres.a650 (with an R8G8 map)
    assert case("replay.twin.depth_lrz.a6xx_lowres.a650").scene["scenario"]["gpu"] == "a650"


# ---- depth (B15) -------------------------------------------------------------------------------------
def depth_images(scene: dict[str, Any], profile: str | None) -> dict[str, np.ndarray]:
    scenario = fdm_expected.device_scenario_kind(scene, profile) if profile else scene["scenario"]
    sc = fdm.parse_scenario(scenario)
    plan = fdm.plan_render_pass(sc)
    colour, depth, probs = replay_depth.oracle_depth(sc, plan, 0, replay_depth.quads_of(scene))
    assert probs == []
    return {"view0": colour, "view0_depth": depth}


@pytest.mark.parametrize("name", ["fdm.depth_lrz.a6xx_lowres.rp2", "fdm.depth_lrz.offset_first_rowcol.rp2"])
@pytest.mark.slow  # judges device-sized depth images (seconds each)
def test_depth_judge_passes_turnips_plan_and_fails_planted_bugs(name: str) -> None:
    scene = dict(case(name).scene)
    good = depth_images(scene, "a750")
    v = fdm_geometry.judge_depth_fdm(scene, out(good, turnip=True))
    assert v.status == "Pass" and "equal to the model's plan for turnip a750" in v.message, v.message
    v = fdm_geometry.judge_depth_fdm(scene, out(good, turnip=False))
    assert v.status == "Pass" and "the spec bounds decide" in v.message, v.message
    # planted: the farthest quad wins (depth test GREATER instead of LESS): ids and depths wrong
    far = [(x0, y0, x1, y1, 1.0 - z) for x0, y0, x1, y1, z in replay_depth.quads_of(scene)]
    sc = fdm.parse_scenario(fdm_expected.device_scenario_kind(scene, "a750"))
    colour, depth, _ = replay_depth.oracle_depth(sc, fdm.plan_render_pass(sc), 0, far)
    for turnip in (True, False):
        v = fdm_geometry.judge_depth_fdm(scene, out({"view0": colour, "view0_depth": 1.0 - depth}, turnip=turnip))
        assert v.status == "Fail" and "another quad than the nearest one" in v.message, v.message
    # planted: the depth of the drawn pixels is left at the clear value (depth writes off)
    flat = {"view0": good["view0"], "view0_depth": np.full_like(good["view0_depth"], 1.0)}
    v = fdm_geometry.judge_depth_fdm(scene, out(flat, turnip=False))
    assert v.status == "Fail" and "do not hold the nearest quad's depth" in v.message, v.message


@pytest.mark.slow  # judges device-sized depth images (seconds each)
def test_depth_judge_spec_legal_but_not_turnip() -> None:
    """Every fragment 1x1 is legal under any density but is not what turnip a650 does (its 20
    bins of the 1536x1024 scene have 1x1, 2x2 and 4x4 areas): Fail on a turnip a650, Pass
    elsewhere."""
    scene = dict(case("fdm.depth_lrz.a6xx_lowres.rp2").scene)
    ones = dict(scene, scenario={**scene["scenario"],
                                 "density": {"format": "R8G8_UNORM",
                                             "views": [{"generator": "constant", "size": [48, 32], "density": 1.0}]}})
    images = depth_images(ones, "a650")
    assert fdm_geometry.judge_depth_fdm(scene, out(depth_images(scene, "a650"), True, "a650")).status == "Pass"
    v = fdm_geometry.judge_depth_fdm(scene, out(images, turnip=True, profile="a650"))
    assert v.status == "Fail" and "differ from the model's plan for turnip a650" in v.message, v.message
    v = fdm_geometry.judge_depth_fdm(scene, out(images, turnip=False))
    assert v.status == "Pass" and "pixel(s) differ from turnip's plan for a650" in v.message, v.message


@pytest.mark.slow  # judges device-sized depth images (seconds each)
def test_depth_judge_catches_a_fragment_split_and_an_undrawn_hole() -> None:
    scene = dict(case("fdm.depth_lrz.a7xx_scaled.rp2").scene)
    good = depth_images(scene, None)   # the scene's own 96x32 bins: 1x1, 2x2 and 4x4 fragments
    # a 4x4 fragment (ring 3, far from the centre) with one pixel of its right neighbour
    c = good["view0"].copy()
    y, x = 1000, 8
    assert c[y, x, 3] == 16 * 4 + 4
    c[y, x] = c[y, x + 4]
    v = fdm_geometry.judge_depth_fdm(scene, out({**good, "view0": c}, turnip=False))
    assert v.status == "Fail" and "do not cover their whole block" in v.message, v.message
    # a block deep inside quad 1 left undrawn (clear colour and depth)
    c = good["view0"].copy()
    d = good["view0_depth"].copy()
    c[300:308, 300:308] = replay_scene.CLEAR
    d[300:308, 300:308] = 1.0
    v = fdm_geometry.judge_depth_fdm(scene, out({"view0": c, "view0_depth": d}, turnip=False))
    assert v.status == "Fail" and "deep inside a quad were not drawn" in v.message, v.message


# ---- MSAA (B10) ---------------------------------------------------------------------------------------
def test_oracle_resolve_equals_the_replays_4x_oracle() -> None:
    scene = case("replay.twin.msaa_resolve.4x.a750").scene
    sc, plan = replay_msaa.plan_msaa(scene)
    tri = replay_msaa.triangle_of(scene)
    got, probs = fdm_geometry.oracle_resolve(sc, plan, 0, tri, 4)
    want, probs2 = replay_msaa.oracle_msaa(sc, plan, 0, tri)
    assert probs == probs2 == [] and np.array_equal(got, want)


def msaa_image(scene: dict[str, Any], profile: str | None, samples: int) -> np.ndarray:
    scenario = fdm_expected.device_scenario_kind(scene, profile) if profile else scene["scenario"]
    sc = fdm.parse_scenario(scenario)
    img, probs = fdm_geometry.oracle_resolve(sc, fdm.plan_render_pass(sc), 0, replay_msaa.triangle_of(scene), samples)
    assert probs == []
    return img


@pytest.mark.parametrize("n", [2, 4])
def test_msaa_judge_passes_turnips_plan_and_fails_per_pixel_samples(n: int) -> None:
    """On a650 turnip's own tiling gives 2x2 and 4x4 bins for this scene (on a750 one 1x1 bin)."""
    scene = dict(case(f"fdm.msaa_resolve.{n}x.rp2").scene)
    good = msaa_image(scene, "a650", n)
    v = fdm_geometry.judge_msaa_fdm(scene, out({"view0": good}, True, "a650"))
    assert v.status == "Pass" and "equal to the model's plan for turnip a650" in v.message, v.message
    # within 1 LSB (the resolve's rounding)
    v = fdm_geometry.judge_msaa_fdm(scene, out({"view0": (good.astype(np.int64) + (good < 255)).astype(np.uint8)}, True,
                                       "a650"))
    assert v.status == "Pass", v.message
    # planted: one sample set per pixel (as FSR does), not per fragment: the same map at 1x1
    ones = dict(scene, scenario={**scene["scenario"],
                                 "density": {"format": "R8G8_UNORM",
                                             "views": [{"generator": "constant", "size": [48, 32], "density": 1.0}]}})
    per_pixel = msaa_image(ones, "a650", n)
    tiles = len(fdm.plan_render_pass(fdm.parse_scenario(fdm_expected.device_scenario_kind(scene, "a650"))).tiles)
    v = fdm_geometry.judge_msaa_fdm(scene, out({"view0": per_pixel}, True, "a650"))
    if n == 4:
        assert tiles == 2
        assert v.status == "Fail" and "differ from the model's plan for turnip a650" in v.message, v.message
    else:
        # 2x: 8 bytes a pixel fit the whole 384x256 pass in one a650 bin, sampled at its centre
        # (1x1): per-pixel and per-fragment samples are the same there (docs/fdm-backend.md)
        assert tiles == 1 and v.status == "Pass"
    # the scene's own 96x32 bins (the twin's plan): the difference is information elsewhere
    v = fdm_geometry.judge_msaa_fdm(scene, out({"view0": msaa_image(ones, None, n)}, turnip=False))
    assert v.status == "Pass" and "pixel(s) differ from turnip's plan for a750" in v.message, v.message


def test_msaa_spec_bounds_fail_planted_bugs() -> None:
    scene = dict(case("fdm.msaa_resolve.4x.rp2").scene)
    good = msaa_image(scene, None, 4)
    # planted: a resolve that averages with the wrong weight (a value no 4-sample mean gives)
    bad = good.copy()
    bad[120, 150] = (150, 30, 5, 60)
    v = fdm_geometry.judge_msaa_fdm(scene, out({"view0": bad}, turnip=False))
    assert v.status == "Fail" and "are no mean of 4" in v.message, v.message
    # planted: the triangle drawn 20 pixels right (a viewport without its offset)
    shifted = np.roll(good, 20, axis=1)
    v = fdm_geometry.judge_msaa_fdm(scene, out({"view0": shifted}, turnip=False))
    assert v.status == "Fail" and "farther than the largest fragment" in v.message, v.message


# ---- B8, B9, C5 -------------------------------------------------------------------------------------
def test_shared_viewport_twins_follow_the_shared_plan() -> None:
    """The twin judge uses the plan with gl_ViewportIndex written (areas: the per-axis minimum
    over the views); the images of the per-view plan (no shared viewport) fail it."""
    t = case("replay.twin.multiview.viewport_index_shared.a750")
    sc, plan = replay_shared_viewport.plan_shared(t.scene)
    assert plan.shared_viewport and not plan.viewport_state.per_view_viewport
    for v in range(2):
        assert all(tl.views[v].frag_area == tl.views[0].frag_area for tl in plan.tiles)
    shared = {n: replay_judge.oracle_view(sc, plan, v,
                                          "clear")[0] for v in range(2) for n in replay_scene.image_names(v)}
    assert replay_shared_viewport.judge_replay_shared(t.scene, CaseOutput(images=shared)).status == "Pass"
    sc2 = fdm.parse_scenario({**t.scene["scenario"], "writes_viewport_index": False})
    plan2 = fdm.plan_render_pass(sc2)
    per_view = {n: replay_judge.oracle_view(sc2, plan2, v,
                                            "clear")[0] for v in range(2) for n in replay_scene.image_names(v)}
    v = replay_shared_viewport.judge_replay_shared(t.scene, CaseOutput(images=per_view))
    assert v.status == "Fail" and "differ from the oracle" in v.message, v.message
    with pytest.raises(ScenarioError):
        replay_shared_viewport.plan_shared({**t.scene, "scenario": sc2_dict(t.scene)})
    # the fdm judge of B9 on turnip: the shared plan is exact, the per-view one is not
    c = case("fdm.multiview.viewport_index_shared.rp2")
    want = fdm_expected.turnip_expectation(c.scene, "a750", "rp2")
    images = {n: want[v] for v in range(2) for n in replay_scene.image_names(v)}
    assert fdm_judge.judge_fdm(c.scene, out(images, turnip=True)).status == "Pass"


def sc2_dict(scene: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in scene["scenario"].items() if k != "writes_viewport_index"}


def test_one_layer_map_and_viewport_index_options() -> None:
    c = case("fdm.multiview.single_layer_map.rp2")
    sc = fdm.parse_scenario(c.scene["scenario"])
    assert fdm_scene.map_layers(c.scene, sc) == 1 and sc.fdm_layers == 2
    assert fdm_scene.map_layers(case("fdm.multiview.per_view_density.rp2").scene, sc) == 2
    with pytest.raises(ScenarioError, match="render pass 2"):
        fdm_scene.parse({**c.scene, "fdm": {**c.scene["fdm"], "path": "dynrend"}})
    with pytest.raises(ScenarioError, match="map_layers"):
        fdm_scene.map_layers({**c.scene, "fdm": {**c.scene["fdm"], "map_layers": 2}}, sc)
    # gl_ViewportIndex needs VK_EXT_shader_viewport_index_layer; nothing else does
    no_vpi = attrs.evolve(TURNIPISH, extensions={k: v for k,
                                                 v in TURNIPISH.extensions.items() if k != fdm_device.VPI_EXT})
    for name in ("fdm.multiview.viewport_index_shared.rp2", "fdm.multiview.viewport_index_shared.dynrend",
                 "fdm.offset.shared_viewport_fallback.rp2"):
        got = fdm_device.missing(no_vpi, case(name).scene)
        assert got is not None and got.startswith(fdm_device.VPI_EXT), (name, got)
    assert fdm_device.missing(no_vpi, c.scene) is None
    assert fdm_device.VPI_EXT in fdm_device.enabled_extensions({fdm_device.FDM_EXT: 3, fdm_device.VPI_EXT: 1})


def test_kind_missing_names_what_depth_and_msaa_need() -> None:
    fmts = {fdm_scene.VK_FMT_RGBA8: ALL, fdm_scene.VK_FMT_D32: ALL}
    depth = case("fdm.depth_lrz.a7xx_scaled.rp2").scene
    msaa2 = case("fdm.msaa_resolve.2x.rp2").scene
    assert fdm_device.kind_missing(TURNIPISH, depth, fmts, 0x7, True) is None
    assert fdm_device.kind_missing(TURNIPISH, msaa2, fmts, 0x7, True) is None
    subsampled_only = attrs.evolve(TURNIPISH, features=TURNIPISH.features - {"fragmentDensityMapNonSubsampledImages"})
    assert fdm_device.kind_missing(subsampled_only, depth, fmts, 0x7, True).startswith(
        "fragmentDensityMapNonSubsampledImages")
    assert fdm_device.kind_missing(TURNIPISH, depth, {fdm_scene.VK_FMT_D32: 0x200}, 0x7, True).startswith("D32_SFLOAT")
    assert fdm_device.kind_missing(TURNIPISH, msaa2, fmts, 0x5, True).startswith("VK_SAMPLE_COUNT_2_BIT")
    assert fdm_device.kind_missing(TURNIPISH, msaa2, fmts, 0x7, False) == "standardSampleLocations"
    lavapipe = attrs.evolve(TURNIPISH, extensions={}, features=frozenset())
    assert fdm_device.kind_missing(lavapipe, depth, fmts, 0x7, True) == fdm_device.FDM_EXT
    with pytest.raises(ScenarioError, match="fdm.kind"):
        fdm_expected.device_scenario_kind({**depth, "fdm": {"kind": "stencil"}}, "a750")


def test_device_scenarios_plan_on_every_profile() -> None:
    for c in named(NEW_FDM, "fdm"):
        for profile in ("a650", "a730", "a750"):
            if c.scene["fdm"].get("kind"):
                sc = fdm.parse_scenario(fdm_expected.device_scenario_kind(c.scene, profile))
            else:
                sc = fdm.parse_scenario(fdm_expected.device_scenario(c.scene, profile, c.scene["fdm"]["path"]))
            try:
                fdm.plan_render_pass(sc)
            except NotModelled as e:  # pragma: no cover - a case the model cannot plan is a bug of the case
                pytest.fail(f"{c.name} on {profile}: {e}")


# ---- on lavapipe ------------------------------------------------------------------------------------
@pytest.mark.vulkan
def test_new_twins_pass_through_the_runner(vk: Any, tmp_path: Any) -> None:
    from vk_tests.suite import runner

    twins = named(NEW_TWINS, "replay")
    result = runner.run_suite(twins, out_dir=str(tmp_path / "b"))
    got = {r.name: (r.verdict.status if r.verdict else None, r.verdict.message if r.verdict else "")
           for r in result.records}
    assert {k: s for k, (s, _) in got.items()} == {t.name: "Pass" for t in twins}, got
