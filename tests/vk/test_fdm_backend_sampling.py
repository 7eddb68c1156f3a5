"""B18 of the fdm backend (vk_tests/fdm_backend_sampling.py): the scene, the sample layout, the
judge (turnip exact + neighbourhood bound; planted: a missing apron, a foreign expanded image)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fdm
from vk_tests.fdm import cases as fdm_cases
from vk_tests.fdm import device as fdm_device
from vk_tests.fdm import sampling as fdm_sampling
from vk_tests.fdm import scene as fdm_scene
from vk_tests.replay import subsampled as replay_subsampled
from vk_tests.suite import selection as suite_selection
from vk_tests.suite.cases import CaseOutput

from .test_fdm_backend import device_info


def case() -> Any:
    return suite_selection.by_name(fdm_cases.cases())["fdm.subsampled_linear_apron_border.seams.rp2"]


def bilinear(img: np.ndarray, xs: np.ndarray, ys: np.ndarray, border: tuple[float, ...]) -> np.ndarray:
    """LINEAR CLAMP_TO_BORDER of an RGBA8 image at framebuffer positions (CPU, float64)."""
    h, w = img.shape[:2]
    f = img.astype(np.float64) / 255.0
    u, v = xs - 0.5, ys - 0.5
    x0, y0 = np.floor(u).astype(np.int64), np.floor(v).astype(np.int64)
    a, b = (u - x0)[:, None], (v - y0)[:, None]
    bc = np.asarray(border, dtype=np.float64)

    def texel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        inside = ((x >= 0) & (x < w) & (y >= 0) & (y < h))[:, None]
        return np.where(inside, f[np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)], bc)

    return ((1 - a) * (1 - b) * texel(x0, y0) + a * (1 - b) * texel(x0 + 1, y0)
            + (1 - a) * b * texel(x0, y0 + 1) + a * b * texel(x0 + 1, y0 + 1))


def turnip_output(scene: dict[str, Any], profile: str, expanded: np.ndarray | None = None,
                  turnip: bool = True) -> tuple[CaseOutput, np.ndarray, np.ndarray]:
    sc = fdm.parse_scenario(fdm_sampling.device_scenario_sampling(scene, profile))
    plan = fdm.plan_render_pass(sc)
    want, probs = replay_subsampled.oracle_colours(sc, plan, 0)
    assert probs == []
    exp = want if expanded is None else expanded
    xs, ys = fdm_sampling.sample_points(scene, profile if turnip else None)
    s = bilinear(exp, xs, ys, replay_subsampled.BORDERS["opaque_white"][1])
    samples = np.stack([s, s], axis=1).astype(np.float32)
    info = {"device": {**device_info(turnip), "profile": profile if turnip else None}, "readback": "sampled"}
    return CaseOutput(images={"view0_expanded": exp, "view0_samples": samples}, info=info), xs, ys


def test_scene_is_the_twins_and_device_sized() -> None:
    c = case()
    twin = suite_selection.by_name(fdm_cases.replay_twins())[fdm_sampling.b18_twin_name()]
    assert fdm_scene.replay_part(c.scene) == twin.scene
    assert c.scene["sampler"] == {"filter": "linear", "addressing": "clamp_to_border", "border": "opaque_white"}
    for profile, got in fdm_sampling.bins_summary(c.scene).items():
        assert got["bins"] >= 4 and len(got["areas"]) >= 2, (profile, got)


def test_samples_from_target_layout() -> None:
    n = 600
    samples = np.random.default_rng(1).integers(0, 65536, size=(n, 2, 4)).astype(np.float64)
    rows = -(-n // fdm_sampling.ROW)
    target = np.zeros((2 * rows, fdm_sampling.ROW, 4))
    for i in range(n):
        r, x = divmod(i, fdm_sampling.ROW)
        target[2 * r, x], target[2 * r + 1, x] = samples[i, 0], samples[i, 1]
    assert np.array_equal(fdm_sampling.samples_from_target(target, n), samples / fdm_sampling.Q)


@pytest.mark.parametrize("profile", ["a650"])
@pytest.mark.slow  # judges device-sized sampled images (seconds each)
def test_judge_passes_turnips_plan_and_fails_a_missing_apron(profile: str) -> None:
    scene = case().scene
    out, xs, ys = turnip_output(scene, profile)
    v = fdm_sampling.judge_sampling_fdm(scene, out)
    assert v.status == "Pass" and f"equal to the model's plan for turnip {profile}" in v.message, v.message
    # planted: a missing apron: samples within a pixel of a bin edge read half garbage (alpha 0)
    sc = fdm.parse_scenario(fdm_sampling.device_scenario_sampling(scene, profile))
    plan = fdm.plan_render_pass(sc)
    edges_x = {t.views[0].bin[0] for t in plan.tiles} - {0}
    near = np.zeros(len(xs), dtype=bool)
    for e in edges_x:
        near |= np.abs(xs - e) < 0.5
    assert near.any()
    s = np.array(out.images["view0_samples"])
    s[near, 0] = 0.5 * s[near, 0] + 0.5 * np.asarray(replay_subsampled.GARBAGE8, dtype=np.float32)
    v = fdm_sampling.judge_sampling_fdm(scene, CaseOutput(images={**out.images, "view0_samples": s}, info=out.info))
    assert v.status == "Fail" and "by more than the neighbourhood bound" in v.message, v.message


@pytest.mark.slow  # judges device-sized sampled images (seconds each)
def test_judge_foreign_expanded_image_fails_on_turnip_only() -> None:
    """A 1x1 rendering (legal) is not turnip's: Fail on turnip, information elsewhere."""
    scene = case().scene
    h, w = 1024, 1536
    ys, xs = np.mgrid[0:h, 0:w]
    ones = replay_subsampled.scene_colour(2 * xs + 1, 2 * ys + 1, (w, h))
    out, _, _ = turnip_output(scene, "a750", expanded=ones)
    v = fdm_sampling.judge_sampling_fdm(scene, out)
    assert v.status == "Fail" and "differ from the model's plan for turnip a750" in v.message, v.message
    out, _, _ = turnip_output(scene, "a750", expanded=ones, turnip=False)
    v = fdm_sampling.judge_sampling_fdm(scene, out)
    assert v.status == "Pass" and "pixel(s) differ from turnip's plan for a750" in v.message, v.message
    # planted: an undrawn pixel
    bad = ones.copy()
    bad[10, 10] = (255, 0, 255, 0)  # the clear colour (GARBAGE8): alpha 0
    v = fdm_sampling.judge_sampling_fdm(scene, CaseOutput(images={**out.images, "view0_expanded": bad}, info=out.info))
    assert v.status == "Fail" and "1 pixel(s) not drawn" in v.message, v.message


def test_missing_names_the_non_subsampled_feature_and_the_subsampled_format() -> None:
    import attrs

    from .test_fdm_backend import TURNIPISH

    scene = case().scene
    assert fdm_device.sampling_missing(TURNIPISH, scene, True) is None
    assert fdm_device.sampling_missing(TURNIPISH, scene, False).startswith("VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT")
    no_ns = attrs.evolve(TURNIPISH, features=TURNIPISH.features - {"fragmentDensityMapNonSubsampledImages"})
    assert fdm_device.sampling_missing(no_ns, scene, True) == "fragmentDensityMapNonSubsampledImages"


@pytest.mark.vulkan
def test_b18_twin_passes_through_the_runner(vk: Any, tmp_path: Any) -> None:
    from vk_tests.suite import runner

    result = runner.run_suite([suite_selection.by_name(fdm_cases.replay_twins())[fdm_sampling.b18_twin_name()]],
                              out_dir=str(tmp_path / "b"))
    (r,) = result.records
    assert r.verdict is not None and r.verdict.status == "Pass", r.verdict
