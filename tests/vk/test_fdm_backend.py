"""The fdm backend (vk_tests/fdm_backend.py): its pure parts with planted bugs, its replay twins,
and, on lavapipe, NotSupported naming the extension for every case."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest

from fdm.density import encode_unorm8
from turnip_base.errors import NotSupported, ScenarioError
from vk_tests import registry
from vk_tests import scenes as scenes
from vk_tests import spec as spec
from vk_tests.fdm import cases as fdm_cases
from vk_tests.fdm import device as fdm_device
from vk_tests.fdm import expected as fdm_expected
from vk_tests.fdm import judge as fdm_judge
from vk_tests.fdm import scene as fdm_scene
from vk_tests.graphics import fdm_pass as graphics_fdm_pass
from vk_tests.replay import scene as replay_scene
from vk_tests.suite import selection as suite_selection
from vk_tests.suite.cases import CaseOutput

# ---- the map bytes (docs/spec/vulkan-fdm-and-cts.md §1.3) ------------------------------------


def table_problems(byte: Callable[[int], int]) -> list[str]:
    """Why a byte rule is wrong: 255/byte must reach n, and byte + 1 must not (the largest byte)."""
    out = []
    for n in (1, 2, 4, 8, 16):
        b = byte(n)
        if 255 < n * b:
            out.append(f"n={n}: byte {b} gives 1/density {255 / b:.4f} < {n}")
        if b < 255 and 255 >= n * (b + 1):
            out.append(f"n={n}: byte {b} is not the largest that allows {n}")
    return out


def test_area_bytes_are_floor_255_over_n() -> None:
    assert scenes.AREA_BYTES == {1: 255, 2: 127, 4: 63, 8: 31, 16: 15}
    assert table_problems(scenes.density_byte) == []
    # the scenario stores density_value(n) as exactly that byte
    for n, b in scenes.AREA_BYTES.items():
        assert int(encode_unorm8([scenes.density_value(n)])[0]) == b


def test_planted_naive_rounding_fails_the_table() -> None:
    problems = table_problems(lambda n: round(255 / n))
    assert [p.split(":")[0] for p in problems] == ["n=2", "n=4", "n=8", "n=16"]
    assert table_problems(lambda n: 255 // n - 1)  # too small a byte is caught too


# ---- texel size and map extent (§1.2, §1.4) -------------------------------------------------
SPEC_TABLE = [((64, 64), 4, 32), ((60, 60), 4, 32), ((33, 33), 2, 32), ((1025, 1025), 64, 64), ((31, 31), 1, 32)]


def texel_problems(fn: Callable[[Any, Any, Any, Any], tuple[int, int]]) -> list[str]:
    out = []
    for fbsize, want, want_tu in SPEC_TABLE:
        got = fn(fbsize, (16, 16), (1, 1), (1 << 20, 1 << 20))
        got_tu = fn(fbsize, (16, 16), (32, 32), (1024, 1024))
        if got != (want, want) or got_tu != (want_tu, want_tu):
            out.append(f"{fbsize}/16: {got}, {got_tu}; want {want}, {want_tu}")
    return out


def test_texel_size_follows_spec_v3() -> None:
    assert texel_problems(spec.spec_texel_size) == []


def test_planted_pre_v3_ceil_texel_size_is_caught() -> None:
    def ceil_variant(e: Any, f: Any, lo: Any, hi: Any) -> tuple[int, int]:
        out = []
        for a, b, mn, mx in zip(e, f, lo, hi, strict=True):
            t = 1 << max(0, (-(-a // b) - 1).bit_length())
            out.append(min(max(t, mn), mx))
        return (out[0], out[1])

    assert [p.split(":")[0] for p in texel_problems(ceil_variant)] == ["(33, 33)/16", "(1025, 1025)/16",
                                                                       "(31, 31)/16"]


def test_render_extent_and_map_extent_rp2_vs_dynrend() -> None:
    fbsize, ra = (256, 256), (0, 0, 100, 60)
    assert spec.render_extent("rp2", fbsize, ra) == (256, 256)
    assert spec.render_extent("dynrend", fbsize, ra) == (100, 60)
    assert spec.render_extent("dynrend", fbsize, (64, 32, 192, 224)) == (256, 256)
    assert spec.spec_texel_size(spec.render_extent("rp2", fbsize, ra), (16, 16), (1, 1), (64, 64)) == (16, 16)
    # floor(100/16) = 6 -> 8, floor(60/16) = 3 -> 4: the render area, not the image, decides
    assert spec.spec_texel_size(spec.render_extent("dynrend", fbsize, ra), (16, 16), (1, 1), (64, 64)) == (8, 4)
    assert spec.min_map_extent((1025, 600), (1024, 1024)) == (2, 1)
    assert spec.min_map_extent((288, 128), (32, 32)) == (9, 4)


# ---- what a device lacks (§2.6, §4.3) ---------------------------------------------------------
ALL = 0xFFFFFFFF
TURNIPISH = fdm_device.DeviceCaps(
    name="Turnip Adreno (TM) 750", driver_id=fdm_device.DRIVER_ID_MESA_TURNIP,
    extensions={fdm_device.FDM_EXT: 3, fdm_device.OFFSET_EXT: 1, fdm_device.OFFSET_QCOM: 3,
                fdm_device.DYNREND_EXT: 1, fdm_device.VPI_EXT: 1},
    features=frozenset({"fragmentDensityMap", "fragmentDensityMapNonSubsampledImages", "multiview",
                        "dynamicRendering", "fragmentDensityMapOffset"}),
    min_texel=(32, 32), max_texel=(1024, 1024), offset_granularity=(8, 8),
    format_features={graphics_fdm_pass.VK_FMT_RGBA16UI: ALL, graphics_fdm_pass.VK_FMT_R8G8_UNORM: ALL,
                     graphics_fdm_pass.VK_FMT_R32G32_SFLOAT: 0})
LAVAPIPEISH = fdm_device.DeviceCaps(name="llvmpipe", driver_id=13, extensions={fdm_device.DYNREND_EXT: 1},
                            features=frozenset({"multiview", "dynamicRendering"}),
                            format_features={graphics_fdm_pass.VK_FMT_RGBA16UI: ALL,
                                             graphics_fdm_pass.VK_FMT_R8G8_UNORM: 0x80})


def cases_named(pattern: str) -> list[Any]:
    return suite_selection.select(fdm_cases.cases(), ["fdm"], pattern)


def test_missing_names_the_extension_and_nothing_on_a_complete_device() -> None:
    cases = fdm_cases.cases()
    assert {fdm_device.missing(LAVAPIPEISH, c.scene) for c in cases} == {fdm_device.FDM_EXT}
    # B2's deferred and dynamic maps are NotSupported on turnip (no FDM2, no dynamic maps, §1.6)
    lacks = {"fdm.cts_histogram.deferred_subsampled_2_2.64.rp2": fdm_device.FDM2_EXT,
             "fdm.cts_histogram.dynamic_subsampled_2_2.64.rp2": "fragmentDensityMapDynamic"}
    assert {c.name: fdm_device.missing(TURNIPISH, c.scene) for c in cases} == {c.name: lacks.get(c.name) for c in cases}


@pytest.mark.parametrize(("change", "pattern", "want"), [
    ({"features": "multiview"}, "fdm.multiview.*", "multiview"),
    ({"features": "dynamicRendering"}, "*.dynrend", "dynamicRendering"),
    ({"features": "fragmentDensityMap"}, "*", "fragmentDensityMap"),
    ({"features": "fragmentDensityMapNonSubsampledImages"}, "fdm.subsampled.*",
     "fragmentDensityMapNonSubsampledImages"),
    ({"features": "fragmentDensityMapNonSubsampledImages"}, "fdm.load_op.*", fdm_device.FDM2_EXT),
    ({"features": "fragmentDensityMapOffset"}, "fdm.offset.*", "fragmentDensityMapOffset"),
    ({"extensions": fdm_device.OFFSET_EXT}, "fdm.offset.*.dynrend",
     fdm_device.OFFSET_EXT + " (offsets with dynamic rendering"),
    ({"extensions": fdm_device.DYNREND_EXT}, "*.dynrend", fdm_device.DYNREND_EXT),
    ({"granularity": (16, 16)}, "fdm.offset.both_axes.rp2", "fragmentDensityOffsetGranularity [16, 16]"),
    ({"max_texel": (16, 16)}, "fdm.uniform_area.2x2.rp2", "maxFragmentDensityTexelSize [16, 16]"),
])
def test_missing_feature_is_named(change: dict[str, Any], pattern: str, want: str) -> None:
    caps = TURNIPISH
    if "features" in change:
        caps = attrs.evolve(caps, features=caps.features - {change["features"]})
    if "extensions" in change:
        caps = attrs.evolve(caps, extensions={k: v for k, v in caps.extensions.items() if k != change["extensions"]})
    if "granularity" in change:
        caps = attrs.evolve(caps, offset_granularity=change["granularity"])
    if "max_texel" in change:
        caps = attrs.evolve(caps, max_texel=change["max_texel"])
    cases = cases_named(pattern)
    assert cases
    for c in cases:
        got = fdm_device.missing(caps, c.scene)
        assert got is not None and got.startswith(want), (c.name, got)
    # the other cases are not affected by a missing dynamic-rendering feature
    if change.get("features") == "dynamicRendering":
        static = [c for c in cases_named("*.rp2") if fdm_scene.map_timing(c.scene) == "static"]
        assert all(fdm_device.missing(caps, c.scene) is None for c in static)


def test_rp2_offsets_run_with_qcom_alone_and_zero_granularity_fails() -> None:
    qcom_only = attrs.evolve(TURNIPISH, extensions={k: v for k, v in TURNIPISH.extensions.items()
                                                     if k != fdm_device.OFFSET_EXT})
    assert all(fdm_device.missing(qcom_only, c.scene) is None for c in cases_named("fdm.offset.*.rp2"))
    zero = attrs.evolve(TURNIPISH, offset_granularity=(0, 0))
    case = cases_named("fdm.offset.both_axes.rp2")[0]
    with pytest.raises(ValueError, match="fragmentDensityOffsetGranularity"):
        fdm_device.check_granularity(zero, case.scene)
    fdm_device.check_granularity(zero, cases_named("fdm.offset.sweep_k00.rp2")[0].scene)  # all-zero offsets are fine


# ---- pNext chains without a device ------------------------------------------------------------
FSR_STYPES = {1000226003, 1000226004, 1000226000}  # FSR features, properties, attachment info


def test_feature_chain_links_and_no_fsr() -> None:
    vk = pytest.importorskip("vulkan")
    s = fdm_device.feature_chain(vk, {fdm_device.FDM_EXT: 3, fdm_device.FDM2_EXT: 1, fdm_device.OFFSET_QCOM: 3,
                                      fdm_device.DYNREND_EXT: 1})
    stypes = fdm_device.chain_stypes(vk, s["features2"])
    assert stypes == [vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                      1000425000,  # the offset features: EXT and QCOM share the sType
                      vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FRAGMENT_DENSITY_MAP_2_FEATURES_EXT,
                      vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FRAGMENT_DENSITY_MAP_FEATURES_EXT,
                      vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES,
                      vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTIVIEW_FEATURES]
    assert not FSR_STYPES & set(stypes)
    bare = fdm_device.feature_chain(vk, {"VK_KHR_fragment_shading_rate": 2})
    assert fdm_device.chain_stypes(vk, bare["features2"]) == [vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                                      vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTIVIEW_FEATURES]
    assert fdm_device.enabled_extensions({fdm_device.FDM_EXT: 3, fdm_device.OFFSET_QCOM: 3, fdm_device.OFFSET_EXT: 1,
                                          "VK_KHR_x": 1}) == [
        fdm_device.FDM_EXT, fdm_device.OFFSET_EXT]
    assert fdm_device.enabled_extensions({fdm_device.FDM_EXT: 3, fdm_device.OFFSET_QCOM: 3}) == [fdm_device.FDM_EXT,
                                                                                                 fdm_device.OFFSET_QCOM]


def test_end_rendering2_structs_layout() -> None:
    pytest.importorskip("cffi")
    x = fdm_device.side_ffi()
    end, keep = fdm_device.end_rendering2_structs([(8, -16), (-8, 24)])
    assert x.sizeof("XRenderPassFragmentDensityMapOffsetEndInfoEXT") == 32
    assert x.offsetof("XRenderPassFragmentDensityMapOffsetEndInfoEXT", "pFragmentDensityOffsets") == 24
    assert x.sizeof("XRenderingEndInfoEXT") == 16
    assert end.sType == fdm_device.STYPE_RENDERING_END_INFO_EXT == 1000619003
    off = x.cast("XRenderPassFragmentDensityMapOffsetEndInfoEXT*", end.pNext)
    assert off.sType == fdm_device.STYPE_RENDER_PASS_FDM_OFFSET_END_INFO_EXT == 1000425002
    assert off.fragmentDensityOffsetCount == 2
    assert [(off.pFragmentDensityOffsets[i].x, off.pFragmentDensityOffsets[i].y) for i in range(2)] == [
        (8, -16), (-8, 24)]
    assert len(keep) == 3


# ---- turnip detection and the judge -------------------------------------------------------------
def test_match_profile() -> None:
    t = fdm_device.DRIVER_ID_MESA_TURNIP
    assert fdm_expected.match_profile(t, "Turnip Adreno (TM) 750") == "a750"
    assert fdm_expected.match_profile(t, "FD730") == "a730"
    assert fdm_expected.match_profile(t, "Turnip Adreno (TM) 999") is None
    assert fdm_expected.match_profile(13, "Turnip Adreno (TM) 750") is None
    assert fdm_expected.match_profile(8, "Adreno (TM) 740") is None  # Qualcomm's own driver: not turnip


def device_info(turnip: bool) -> dict[str, Any]:
    if turnip:
        return {"driver_id": fdm_device.DRIVER_ID_MESA_TURNIP, "name": "Turnip Adreno (TM) 750", "profile": "a750",
                "min_texel": [32, 32], "max_texel": [1024, 1024]}
    return {"driver_id": 4, "name": "some FDM GPU", "profile": None, "min_texel": [16, 16],
            "max_texel": [256, 256]}


def output(images: list[np.ndarray], turnip: bool, readback: str = "nonsubsampled") -> CaseOutput:
    named = {n: img for v, img in enumerate(images) for n in replay_scene.image_names(v)}
    return CaseOutput(images=named, info={"device": device_info(turnip), "path": "rp2", "readback": readback})


def scene_of(name: str) -> dict[str, Any]:
    return dict(cases_named(name)[0].scene)


def with_density(scene: dict[str, Any], n: int) -> dict[str, Any]:
    s = dict(scene)
    s["scenario"] = {**s["scenario"], "density": scenes.constant_bytes(n, n, (9, 4))}
    return s


@pytest.mark.slow  # judges device-sized images (seconds each)
def test_judge_turnip_exact_and_spec_bounds() -> None:
    scene = scene_of("fdm.uniform_area.2x2.rp2")
    want = fdm_expected.turnip_expectation(scene, "a750", "rp2")
    v = fdm_judge.judge_fdm(scene, output(want, turnip=True))
    assert v.status == "Pass" and "equal to the model's plan for turnip a750" in v.message, v.message
    v = fdm_judge.judge_fdm(scene, output(want, turnip=False))
    assert v.status == "Pass" and "the spec bounds decide" in v.message, v.message
    # planted: one pixel of a 2x2 fragment holds its neighbour's value
    bad = want[0].copy()
    bad[10, 10] = bad[10, 12]
    for turnip in (True, False):
        v = fdm_judge.judge_fdm(scene, output([bad], turnip=turnip))
        assert v.status == "Fail" and "do not cover their whole block" in v.message, v.message
    # planted: FragCoord half a pixel right everywhere a fragment was drawn
    shifted = want[0].copy()
    shifted[..., 0] += 1
    v = fdm_judge.judge_fdm(scene, output([shifted], turnip=False))
    assert v.status == "Fail" and "nor a fragment that contains them" in v.message


@pytest.mark.slow  # judges device-sized images (seconds each)
def test_judge_spec_legal_but_not_turnip() -> None:
    """A 1x1 rendering of the 2x2 map is legal (area <= 4.03) but is not what turnip does: Fail on
    turnip, Pass (with the difference as information) elsewhere."""
    scene = scene_of("fdm.uniform_area.2x2.rp2")
    ones = fdm_expected.turnip_expectation(with_density(scene, 1), "a750", "rp2")
    v = fdm_judge.judge_fdm(scene, output(ones, turnip=True))
    assert v.status == "Fail" and "differ from the model's plan for turnip a750" in v.message, v.message
    v = fdm_judge.judge_fdm(scene, output(ones, turnip=False))
    assert v.status == "Pass" and "pixel(s) differ from turnip's plan for a750" in v.message, v.message


@pytest.mark.slow  # judges device-sized images (seconds each)
def test_judge_area_above_the_density_fails_everywhere() -> None:
    scene = scene_of("fdm.uniform_area.2x2.rp2")
    fours = fdm_expected.turnip_expectation(with_density(scene, 4), "a750", "rp2")
    for turnip in (True, False):
        v = fdm_judge.judge_fdm(scene, output(fours, turnip=turnip))
        assert v.status == "Fail" and "larger than the density allows" in v.message, v.message


def test_judge_subsampled_equivalence() -> None:
    scene = scene_of("fdm.subsampled.nearest_equivalence.rp2")
    want = fdm_expected.turnip_expectation(scene, "a750", "rp2")
    out = output(want, turnip=True, readback="both")
    images = dict(out.images)
    images.update({f"{k}_resampled": v for k, v in out.images.items()})
    assert fdm_judge.judge_fdm(scene, attrs.evolve(out, images=images)).status == "Pass"
    images["view0_resampled"] = np.roll(images["view0_resampled"], 1, axis=1)  # planted: resampled one pixel off
    v = fdm_judge.judge_fdm(scene, attrs.evolve(out, images=images))
    assert v.status == "Fail" and "resampled with NEAREST differs" in v.message


# ---- the replay twins -------------------------------------------------------------------------
def twin_problems(fdm_cases: list[Any], twins: list[Any]) -> list[str]:
    by_name = {t.name: t for t in twins}
    out = []
    for c in fdm_cases:
        if "twin" not in c.description:
            out.append(f"{c.name}: its description does not say whether it has a twin")
        if "no replay twin:" in c.description:  # the description says why (e.g. 2x MSAA)
            continue
        twin = by_name.get(fdm_scene.twin_of(c.name, c.scene))
        if twin is None:
            out.append(f"{c.name}: no replay twin")
        elif fdm_scene.replay_part(c.scene) != twin.scene:
            out.append(f"{c.name}: its scene differs from {twin.name}'s")
    return out


def test_every_fdm_case_has_a_replay_twin_with_the_same_scene() -> None:
    cases = registry.all_cases()
    fdm_cases = [c for c in cases if c.backend == "fdm"]
    twins = [c for c in cases if c.backend == "replay"]
    assert len(fdm_cases) >= 30
    assert twin_problems(fdm_cases, twins) == []
    assert {c.scene["fdm"]["path"] for c in fdm_cases} == {"rp2", "dynrend"}
    names = {c.name for c in fdm_cases}
    for must in ("fdm.uniform_area.1x1.rp2", "fdm.uniform_area.4x4.dynrend", "fdm.foveated.radial.rp2",
                 "fdm.invisible.density0.rp2", "fdm.multiview.per_view_density.dynrend", "fdm.scissor.unaligned.rp2",
                 "fdm.viewport.unaligned.rp2", "fdm.subsampled.nearest_equivalence.rp2", "fdm.offset.both_axes.rp2",
                 "fdm.offset.sweep_k50.rp2", "fdm.offset.per_view.dynrend"):
        assert must in names
    # planted: a twin whose scenario drifted, and a missing twin
    drifted = [attrs.evolve(t, scene={**t.scene, "load_op": "load"}) if t.name.endswith("uniform_area.2x2.a750")
               else t for t in twins]
    assert twin_problems(fdm_cases, drifted) == ["fdm.uniform_area.2x2.rp2: its scene differs from "
                                                 "replay.twin.uniform_area.2x2.a750's",
                                                 "fdm.uniform_area.2x2.dynrend: its scene differs from "
                                                 "replay.twin.uniform_area.2x2.a750's"]
    assert twin_problems(fdm_cases, [t for t in twins if "offset.per_view" not in t.name]) == [
        "fdm.offset.per_view.rp2: no replay twin", "fdm.offset.per_view.dynrend: no replay twin"]


# ---- on the device (lavapipe in CI) ---------------------------------------------------------------
@pytest.mark.vulkan
def test_every_fdm_case_is_not_supported_naming_the_extension(vk: Any) -> None:
    caps = fdm_device.probe(vk)
    if fdm_device.FDM_EXT in caps.extensions:
        pytest.skip(f"{caps.name} has {fdm_device.FDM_EXT}: this test is for devices without it")
    assert "fragmentDensityMap" not in caps.features
    for c in fdm_cases.cases():
        with pytest.raises(NotSupported, match=r"^VK_EXT_fragment_density_map \(device "):
            c.run(vk, c.scene)


@pytest.mark.vulkan
@pytest.mark.parametrize("twin", ["foveated.radial", "offset.per_view", "texel_size_floor.fb1025",
                                  "dynrend_render_area_offset.checker"])
def test_a_replayed_twin_is_within_the_spec_bounds(vk: Any, twin: str) -> None:
    """The twin's replay output read back on this device passes the fdm judge's spec bounds (and
    equals turnip's plan for its GPU, information); a planted one-pixel error fails it."""
    t = suite_selection.by_name(fdm_cases.replay_twins())[fdm_scene.twin_name(*twin.split("."))]
    out = t.run(vk, t.scene)
    assert t.judge(t.scene, out).status == "Pass"
    scene = fdm_scene.fdm_scene(t.scene, "rp2")
    fake = CaseOutput(images=out.images, info={"device": device_info(False), "readback": "nonsubsampled"})
    v = fdm_judge.judge_fdm(scene, fake)
    assert v.status == "Pass" and "information: equal to turnip's plan for a750" in v.message, v.message
    images = {k: np.array(a) for k, a in out.images.items()}
    images["view0_geometry"][100, 150, 0] += 2
    v = fdm_judge.judge_fdm(scene, attrs.evolve(fake, images=images))
    assert v.status == "Fail" and "view0_geometry: 1 pixel(s) differ from FragCoord" in v.message, v.message


# ---- device-sized scenes: turnip's own tiling ---------------------------------------------------
#: the core cases whose scenes are device-sized (1536x1024): many bins of several areas on turnip
CORE = ("fdm.uniform_area.", "fdm.foveated.radial.", "fdm.multiview.per_view_density.", "fdm.offset.both_axes.",
        "fdm.offset.sweep_k", "fdm.offset.per_view.", "fdm.depth_lrz.")


def test_core_scenes_give_many_bins_of_several_areas_on_turnips_own_tiling() -> None:
    """The exact check on turnip compares with the plan of turnip's own tile choice; at 384x256
    that was one or two bins (one fragment size). The core scenes must give at least 4 bins on
    a650, a730 and a750, and at least two distinct areas (B1: its one requested area)."""
    core = [c for c in fdm_cases.cases() if c.name.startswith(CORE)]
    assert len(core) >= 23
    for c in core:
        for profile, got in fdm_expected.turnip_bins(c.scene).items():
            assert "sysmem" not in got, (c.name, profile, got)
            assert got["bins"] >= 4, (c.name, profile, got)
            if c.name.startswith("fdm.uniform_area."):
                nx, ny = (int(n) for n in c.name.split(".")[2].split("x"))
                assert got["areas"] == [[nx, ny]], (c.name, profile, got)
            else:
                assert len(got["areas"]) >= 2, (c.name, profile, got)
    # planted: the old 384x256 radial scene (forced tile dropped) is one a750 bin of one area
    fov = {"format": "R8G8_UNORM", "views": [scenes.radial_bytes((12, 8), (176, 120), (48, 96), (1, 2, 4))]}
    small = fdm_scene.fdm_scene(replay_scene.replay_scene(fdm_cases._sc((384, 256), fov)), "rp2")
    assert fdm_expected.turnip_bins(small)["a750"] == {"bins": 1, "tile": [384, 256], "areas": [[1, 1]]}


@pytest.mark.slow  # judges device-sized images (seconds each)
def test_area_window_on_turnip_is_its_bin() -> None:
    """turnip fetches the map once per bin: in a device-sized scene its plan gives fragments
    coarser than the texels around them allow (a 3x3-texel window rejects them), which the spec's
    implementation-defined window permits; on turnip the window is the bin, and a fragment coarser
    than every texel of its bin still fails."""
    c = suite_selection.by_name(fdm_cases.cases())["fdm.foveated.radial.rp2"]
    wants = fdm_expected.turnip_expectation(c.scene, "a750", "rp2")
    images = {"view0": wants[0], "view0_geometry": wants[0]}
    info = {"device": {**device_info(True), "profile": "a750"}, "readback": "nonsubsampled"}
    v = fdm_judge.judge_fdm(c.scene, CaseOutput(images=images, info=info))
    assert v.status == "Pass" and "area window: turnip a750's 8 bin(s)" in v.message, v.message
    sc, _, _ = fdm_scene.parse(c.scene)
    narrow = fdm_judge.spec_bound_problems(sc, 0, images, load_op="clear", texel=(32, 32), readback="nonsubsampled")
    assert any("larger than the density allows" in p for p in narrow), narrow
    v = fdm_judge.judge_fdm(c.scene, CaseOutput(images=images, info={"device": device_info(False),
                                                                "readback": "nonsubsampled"}))
    assert v.status == "Pass" and "information: " in v.message and "with a 3x3-texel window" in v.message, v.message
    # planted: a 4x4 fragment in the top-left bin, all of whose texels ask for 1x1 (the centre is
    # far from it: a 2x2 map there would be wrong; use a map of 1x1 everywhere)
    ones = {**c.scene, "scenario": {**c.scene["scenario"], "density": {"format": "R8G8_UNORM", "views": [
        {"generator": "constant", "size": [48, 32], "density": 1.0}]}}}
    v = fdm_judge.judge_fdm(ones, CaseOutput(images=images, info=info))
    assert v.status == "Fail" and "larger than the density allows" in v.message, v.message


def _coarse_bins(scenario: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    import fdm

    p = fdm.plan_render_pass(fdm.parse_scenario(scenario))
    return [t.views[0].bin for t in p.tiles if t.views[0].visible and t.views[0].frag_area != (1, 1)]


def test_c3_cts_clones_are_one_by_one_but_turnips_shrunk_first_bins() -> None:
    """C3 (the CTS clamp_to_edge / oversized_fdm clones): the offset (fetch at p - offset) and the
    clamp make every texel fetched high density in the twin's plan; turnip's own tiling keeps a
    coarse area only in the shrunk first bin row or column (its density is taken at the centre
    of the whole shifted bin, partly outside the framebuffer). Planted: the opposite sign."""
    c3 = [c for c in fdm_cases.cases() if ".cts_clamp_and_oversized." in c.name]
    assert len(c3) == 4
    for c in c3:
        assert _coarse_bins(c.scene["scenario"]) == [], c.name
        for profile in ("a650", "a730", "a750"):
            for x, y, w, h in _coarse_bins(fdm_expected.device_scenario(c.scene, profile, "rp2")):
                assert (x == 0 and w <= 128) or (y == 0 and h <= 32), (c.name, profile, (x, y, w, h))
        flipped = {**c.scene["scenario"], "fdm_offsets": [[-o for o in c.scene["scenario"]["fdm_offsets"][0]]]}
        assert _coarse_bins(flipped), c.name


# ---- B2: the CTS histogram cases ---------------------------------------------------------------
def test_b2_cases_share_six_twins_and_deferred_dynamic_are_not_supported_on_turnip() -> None:
    b2 = {c.name: c for c in fdm_cases.cases() if c.name.startswith("fdm.cts_histogram.")}
    assert len(b2) == 14
    twins = {t.name for t in fdm_cases.replay_twins() if ".cts_histogram." in t.name}
    assert {fdm_scene.twin_of(n, c.scene) for n, c in b2.items()} == twins and len(twins) == 6
    assert fdm_device.missing(TURNIPISH, b2["fdm.cts_histogram.static_subsampled_2_2.64.rp2"].scene) is None
    assert fdm_device.missing(TURNIPISH,
                              b2["fdm.cts_histogram.deferred_subsampled_2_2.64.rp2"].scene) == fdm_device.FDM2_EXT
    fdm2 = attrs.evolve(TURNIPISH, extensions={**TURNIPISH.extensions, fdm_device.FDM2_EXT: 1})
    assert fdm_device.missing(fdm2, b2["fdm.cts_histogram.deferred_subsampled_2_2.64.rp2"].scene) == \
        "fragmentDensityMapDeferred"
    assert fdm_device.missing(TURNIPISH, b2["fdm.cts_histogram.dynamic_subsampled_2_2.64.rp2"].scene) == \
        "fragmentDensityMapDynamic"
    both = attrs.evolve(fdm2, features=fdm2.features | {"fragmentDensityMapDeferred", "fragmentDensityMapDynamic"})
    assert fdm_device.missing(both, b2["fdm.cts_histogram.dynamic_subsampled_2_2.64.rp2"].scene) is None
    with pytest.raises(ScenarioError, match="fdm.map_timing"):
        fdm_scene.map_timing({"fdm": {"map_timing": "later"}})


@pytest.mark.parametrize("name", ["fdm.cts_histogram.static_nonsubsampled_1_2.64.rp2",
                                  "fdm.cts_histogram.static_subsampled_2_2.60.rp2"])
def test_b2_judge_cts_bounds(name: str) -> None:
    c = suite_selection.by_name(fdm_cases.cases())[name]
    readback = c.scene["fdm"]["readback"]
    wants = fdm_expected.turnip_expectation(c.scene, "a750", "rp2")
    images = {"view0": wants[0], "view0_geometry": wants[0]}
    info = {"device": device_info(True), "readback": readback}
    v = fdm_judge.judge_fdm(c.scene, CaseOutput(images=images, info=info))
    assert v.status == "Pass" and "equal to the model's plan for turnip a750" in v.message, v.message
    sc, _, _ = fdm_scene.parse(c.scene)
    assert fdm_judge.cts_bound_problems(sc, 0, images, (32, 32)) == []
    # planted: every fragment 4x4 (area above the requested one): the CTS FragSize check fails
    big = wants[0].copy()
    ys, xs = np.mgrid[0:big.shape[0], 0:big.shape[1]]
    big[..., 0], big[..., 1] = (xs // 4) * 8 + 4, (ys // 4) * 8 + 4
    big[..., 2], big[..., 3] = 4, 4
    probs = fdm_judge.cts_bound_problems(sc, 0, {"view0": big}, (32, 32))
    assert any("CTS FragSize check" in p for p in probs), probs
    # planted: one fragment's value repeated in its neighbour: the histogram check fails
    dup = wants[0].copy()
    fa = (int(dup[0, 0, 2]), int(dup[0, 0, 3]))
    dup[0:fa[1], fa[0]:2 * fa[0]] = dup[0, 0]
    probs = fdm_judge.cts_bound_problems(sc, 0, {"view0": dup}, (32, 32))
    assert any("histogram" in p for p in probs), probs


def test_c6_suspend_resume_case_and_parts() -> None:
    c = suite_selection.by_name(fdm_cases.cases())["fdm.offset.dynrend_suspend_resume.dynrend"]
    assert fdm_scene.twin_of(c.name, c.scene) == "replay.twin.offset.both_axes.a750"
    assert fdm_scene.split_of(c.scene) == "suspend_resume"
    # the unsplit C1 scene: turnip's plan and so the expected images are the same
    c1 = suite_selection.by_name(fdm_cases.cases())["fdm.offset.both_axes.dynrend"]
    assert fdm_scene.replay_part(c.scene) == fdm_scene.replay_part(c1.scene)
    parts = fdm_scene.split_parts((0, 0, 1536, 1024), True)
    assert parts == [((0, 0, 768, 1024), fdm_scene.RENDERING_SUSPENDING_BIT),
                     ((768, 0, 768, 1024), fdm_scene.RENDERING_RESUMING_BIT)]
    assert fdm_scene.split_parts((3, 5, 100, 7), False) == [((3, 5, 100, 7), 0)]
    with pytest.raises(ScenarioError, match="fdm.split"):
        fdm_scene.parse({**c1.scene, "fdm": {**c1.scene["fdm"], "path": "rp2", "split": "suspend_resume"}})
    assert fdm_device.missing(TURNIPISH, c.scene) is None
    no_offset = attrs.evolve(TURNIPISH, extensions={k: v for k, v in TURNIPISH.extensions.items()
                                                    if k != fdm_device.OFFSET_EXT})
    assert fdm_device.missing(no_offset, c.scene).startswith(fdm_device.OFFSET_EXT)


def test_turnip_bins_of_every_case_plans() -> None:
    """run_fdm / the depth-MSAA run record turnip_bins after rendering: it must plan every scene
    (B18 records its own bins_summary)."""
    for c in fdm_cases.cases():
        if c.scene["fdm"].get("kind") == "subsampled_linear":
            continue
        got = fdm_expected.turnip_bins(c.scene)
        assert set(got) == set(fdm_expected.TURNIP_PROFILES), c.name
