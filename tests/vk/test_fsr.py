"""The fsr backend (vk_tests/fsr.py): its judge has teeth on synthetic images, the spec's rate
clamp, and every case is NotSupported (naming what is missing) on a device without attachment
shading rates; the render pass, multiview, MSAA resolve and readback run on lavapipe at 1x1."""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

from turnip_base.errors import NotSupported
from vk_tests import registry
from vk_tests.fsr import cases as fsr_cases
from vk_tests.fsr import device as fsr_device
from vk_tests.fsr import judge as fsr_judge
from vk_tests.fsr import render as fsr_render
from vk_tests.fsr import scene as fsr_scene
from vk_tests.replay.scene import CLEAR
from vk_tests.suite.cases import CaseOutput

#: what an NVIDIA-like device lists (w, h, sample-count mask): 4x4 only up to 2 samples
RATES = [(4, 4, 0b11), (4, 2, 0b111), (2, 4, 0b111), (2, 2, 0b1111), (2, 1, 0b1111), (1, 2, 0b1111), (1, 1, 0x7F)]
INFO: dict[str, Any] = {"rate_attachment": True, "rates": [list(r) for r in RATES], "texel_size": [16, 16]}


def case(name: str) -> Any:
    return next(c for c in fsr_cases.cases() if c.name == name)


def simulate(scene: Any, *, shift: int = 0, half: int = 0, rate: Any = None) -> dict[str, np.ndarray]:
    """What a device doing FSR renders, computed directly (not through the oracle): the rate of
    each pixel is its attachment texel's (clamped with ``rate`` when given, else the spec's
    clamp); the fragment is ``w·floor((x + shift)/w)`` wide; the shader writes
    ``2·FragCoord + half``; pixels outside the scissor keep the clear colour."""
    sc, plan, samples = fsr_scene.plan_fsr(scene)
    rates = fsr_scene.rates_of(INFO)
    w, h = sc.framebuffer
    s = sc.scissors[0]
    out: dict[str, np.ndarray] = {}
    for v in range(sc.fdm_layers):
        grid = fsr_scene.rate_texels(sc, plan, v, (16, 16))
        coord = np.zeros((h, w, 4), np.uint16)
        ids = np.zeros((h, w, 4), np.uint16)
        grad = np.zeros((h, w, 4), np.uint8)
        for y in range(h):
            for x in range(w):
                fa = fsr_scene.decode_rate(int(grid[y // 16, x // 16]))
                fw, fh = rate(fa) if rate else fsr_scene.clamp_rate(fa, rates, samples)
                if not (s.x <= x < s.x + s.w and s.y <= y < s.y + s.h):
                    coord[y, x] = ids[y, x] = CLEAR
                    continue
                cx2 = 2 * fw * ((x + shift) // fw) + fw + half
                cy2 = 2 * fh * (y // fh) + fh
                coord[y, x] = (cx2, cy2, fw, fh)
                ids[y, x] = (fsr_scene.encode_rate((fw, fh)), v, 0, 0)
                grad[y, x] = (min(255, round(cx2 / 2 / w * 255)), min(255, round(cy2 / 2 / h * 255)),
                              round((0.25 + 0.5 * v) * 255), 255)
        out.update(zip(fsr_scene.image_names(v), (coord, ids, grad), strict=True))
    return out


@pytest.mark.parametrize("name", ["fsr.attachment_grid.foveated_radial.a730", "fsr.attachment_grid.unorm8_half.a750",
                                  "fsr.multiview_layer_select.per_view_radial.a730",
                                  "fsr.msaa_resolve_harness.4x_2x2.a730", "fsr.coverage.scissor_unaligned.a730"])
def test_judge_accepts_what_fsr_renders(name: str) -> None:
    c = case(name)
    verdict = fsr_judge.judge_fsr(c.scene, CaseOutput(images=simulate(c.scene), info=INFO))
    assert verdict.status == "Pass", verdict.message


@pytest.mark.parametrize("bug, kw, image", [
    ("fragment grid one pixel off the framebuffer origin", {"shift": 1}, "view0"),
    ("FragCoord offset by half a pixel", {"half": 1}, "view0"),
    ("every 4x4 rate shaded 4x2", {"rate": lambda fa: (4, 2) if fa == (4, 4) else fa}, "view0_ids"),
])
def test_judge_catches(bug: str, kw: dict[str, Any], image: str) -> None:
    c = case("fsr.attachment_grid.foveated_radial.a730")
    verdict = fsr_judge.judge_fsr(c.scene, CaseOutput(images=simulate(c.scene, **kw), info=INFO))
    assert verdict.status == "Fail", bug
    assert any(m["image"] == image for m in verdict.mismatches), verdict.message


def test_msaa_clamp_is_per_sample_count() -> None:
    # 4x4 is listed for 1-2 samples only: a 4x4 request at 4 samples clamps to 4x2 or 2x4 (a tie)
    with pytest.raises(NotSupported, match="4x4 at 4 sample.*2x4, 4x2"):
        fsr_scene.clamp_rate((4, 4), fsr_scene.rates_of(INFO), 4)
    assert fsr_scene.clamp_rate((4, 4), fsr_scene.rates_of(INFO), 2) == (4, 4)
    assert fsr_scene.clamp_rate((2, 2), fsr_scene.rates_of(INFO), 4) == (2, 2)


def test_clamp_follows_the_spec_steps() -> None:
    r = [fsr_scene.SupportedRate(width=w, height=h, sample_counts=1) for w, h in [(2, 2), (2, 1), (1, 2), (1, 1)]]
    assert fsr_scene.clamp_rate((4, 4), r, 1) == (2, 2)            # highest area
    with pytest.raises(NotSupported, match="4x1 .* any of 1x2, 2x1"):  # 1x2 from the swapped axes
        fsr_scene.clamp_rate((4, 1), r, 1)
    wide = [fsr_scene.SupportedRate(width=w, height=h, sample_counts=1) for w, h in [(4, 1), (2, 1), (1, 1)]]
    assert fsr_scene.clamp_rate((2, 2), wide, 1) == (2, 1)         # R' <= R per axis: not 4x1
    tall = [fsr_scene.SupportedRate(width=w, height=h, sample_counts=1) for w, h in [(1, 4), (2, 1), (1, 1)]]
    with pytest.raises(NotSupported, match="4x1 .* any of 1x4, 2x1"):  # may keep swapped rates: 1x4
        fsr_scene.clamp_rate((4, 1), tall, 1)
    # a device whose 4x4 is missing: the judge expects the clamped rate, and a device that
    # shades the unclamped rate fails
    c = case("fsr.attachment_grid.uniform_4x4.a750")
    info = {**INFO, "rates": [[2, 2, 1], [1, 1, 1]]}
    good = simulate(c.scene, rate=lambda fa: (2, 2))
    assert fsr_judge.judge_fsr(c.scene, CaseOutput(images=good, info=info)).status == "Pass"
    assert fsr_judge.judge_fsr(c.scene, CaseOutput(images=simulate(c.scene), info=info)).status == "Fail"


def test_coverage_differs_from_fdm_where_the_scissor_cuts_fragments() -> None:
    c = case("fsr.coverage.scissor_unaligned.a730")
    wants, problems, notes = fsr_judge.oracle_fsr(c.scene, INFO)
    assert not problems and notes and "per-pixel coverage" in notes[0]
    coord = wants["view0"]
    # scissor x 3..229: column 3 is drawn with the centre of the fragment [0, 4) (x = 2)
    assert coord[20, 3].tolist() == [4, 44, 4, 4] and coord[20, 2].tolist() == list(CLEAR)


def test_rate_map_and_refusals() -> None:
    c = case("fsr.attachment_grid.foveated_radial.a750")
    sc, plan, _ = fsr_scene.plan_fsr(c.scene)
    grid = fsr_scene.rate_texels(sc, plan, 0, (16, 16))
    assert grid.shape == (16, 24) and set(np.unique(grid)) == {0, 5, 10}   # 1x1, 2x2, 4x4
    with pytest.raises(Exception, match="does not fall on the 64-pixel"):
        fsr_scene.rate_texels(sc, plan, 0, (64, 64))        # a750 bins are 96 wide
    assert verdict_without_rate(c.scene).status == "Fail"


def verdict_without_rate(scene: Any) -> Any:
    return fsr_judge.judge_fsr(scene, CaseOutput(images=simulate(scene), info={**INFO, "rate_attachment": False}))


def test_registered() -> None:
    names = [c.name for c in registry.all_cases() if c.backend == "fsr"]
    assert names == [c.name for c in fsr_cases.cases()] and len(names) >= 9


@pytest.mark.vulkan
def test_not_supported_without_attachment_shading_rates(vk: Any) -> None:
    caps = fsr_device.probe(vk)
    if caps.extension and caps.attachment:
        pytest.skip(f"{vk.info.name} has attachment shading rates")
    for c in fsr_cases.cases():
        with pytest.raises(NotSupported) as e:
            c.run(vk, c.scene)
        assert "VK_KHR_fragment_shading_rate" in str(e.value) or "attachmentFragmentShadingRate" in str(e.value)


@pytest.mark.vulkan
@pytest.mark.parametrize("views, samples, scissor", [(1, 1, None), (1, 4, None), (1, 1, [3, 6, 226, 97]),
                                                     (2, 1, None)])
def test_the_pass_runs_at_1x1(vk: Any, views: int, samples: int, scissor: Any) -> None:
    """Without the extension the same render pass 2 (multiview, MSAA resolve, scissor) runs with
    ``fsr_coord_1x1.frag`` and no rate attachment: on a 1x1 map it must equal the oracle."""
    assert fsr_device.probe(vk).multiview  # the pass enables it (the shader reads gl_ViewIndex)
    sc: dict[str, Any] = {"gpu": "a730", "framebuffer": [256, 128], "tile_size": [64, 32], "bin_merging": "off",
                          "density": {"format": "R32G32_SFLOAT",
                                      "views": [{"generator": "constant", "size": [8, 8], "density": 1.0}] * views}}
    if views > 1:
        sc["views"] = views
    if scissor:
        sc["scissors"] = [scissor]
    scene = fsr_scene.fsr_scene(sc, samples)
    images = fsr_render._render(vk, scene, rate=False, texel=(16, 16))
    wants, _, _ = fsr_judge.oracle_fsr(scene, {"rates": [[1, 1, 0x7F]]})
    checked = fsr_scene.image_names(0)
    # lavapipe 22.3 leaves the second view of a multiview draw as cleared (the clear reaches
    # both layers, the draw only view 0); devices with FSR run D2 for real
    for name in checked:
        tol = 1 if name.endswith("_gradient") else 0
        diff = np.abs(images[name].astype(np.int64) - wants[name].astype(np.int64)).max(axis=2)
        assert int(np.count_nonzero(diff > tol)) == 0, name
    assert len(images) == 3 * views


def test_single_view_cases_need_the_multiview_feature() -> None:
    """Every fsr shader reads ``gl_ViewIndex`` (SPIR-V capability MultiView), so even a
    single-view case needs ``multiview``: on the H100 the first run, without it, failed 8 cases on
    VUID-VkShaderModuleCreateInfo-pCode-01091.  A device without the feature is NotSupported."""
    full = fsr_device.FsrCaps(extension=True, attachment=True, multiview=True, max_views=6, layered=True,
                       max_fragment_size=(4, 4), max_rasterization_samples=8, max_coverage_samples=16,
                       rates=())
    assert fsr_device.missing(full, views=1, samples=1) is None
    no_mv = attrs.evolve(full, multiview=False)
    reason = fsr_device.missing(no_mv, views=1, samples=1)
    assert reason is not None and "VkPhysicalDeviceMultiviewFeatures::multiview" in reason
