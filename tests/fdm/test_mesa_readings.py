"""The model's readings of Mesa releases (fdm.variants.MESA_READINGS) and the two variants of the
Mesa 26.2.2 fixes they select: ``tu_clear_gmem_attachment`` (the blit-event load-op clear without
its patchpoint) and ``tu_pipeline_builder_emit_state`` (static viewports baked unpatched)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

import fdm
from fdm.clears import gmem_clear_coords, load_op_clear_coords, tu6_emit_blit_scissor
from fdm.plan import RenderPassPlan
from fdm.variants import MESA_READINGS, UPSTREAM, DriverVariants, mesa_reading, parse_driver_variants, with_reading
from turnip_base.errors import ScenarioError
from turnip_box.cli import MODEL_RELEASES
from turnip_box.jobs import Unrecordable, job_of, model_scenario

ROOT = Path(__file__).resolve().parents[2]


def _plan(name: str, gpu: str, mesa: str | None) -> RenderPassPlan:
    sc = model_scenario(fdm.load_scenario(str(ROOT / "examples" / name)), gpu, mesa)
    plan = fdm.plan_render_pass(sc)
    assert isinstance(plan, RenderPassPlan)
    return plan


def test_readings() -> None:
    assert MESA_READINGS["26.2"] == UPSTREAM
    r = MESA_READINGS["26.1"]
    assert (r.tu_calc_tile_config, r.tu_clear_gmem_attachment, r.tu_pipeline_builder_emit_state) == (
        "sailfish-9429b474", "mesa-26.1", "mesa-26.1")
    assert r.tu_emit_subsampled == r.tu_calc_subsampled_aprons == "upstream"
    assert MESA_READINGS["26.2.0-rc1"] == attrs.evolve(r, tu_calc_subsampled_aprons="sailfish-9429b474")
    assert tuple(MESA_READINGS) == MODEL_RELEASES
    assert mesa_reading(None) == mesa_reading("25.0") == UPSTREAM


def test_the_scenarios_own_variant_overrides_the_reading() -> None:
    own = DriverVariants(tu_emit_subsampled="pop-os-4ff7b570")
    got = with_reading(own, MESA_READINGS["26.1"])
    assert got == attrs.evolve(MESA_READINGS["26.1"], tu_emit_subsampled="pop-os-4ff7b570")
    assert with_reading(UPSTREAM, UPSTREAM) == UPSTREAM


def test_the_new_variants_parse() -> None:
    d = parse_driver_variants({"tu_clear_gmem_attachment": "mesa-26.1", "tu_pipeline_builder_emit_state": "mesa-26.1"})
    assert (d.tu_clear_gmem_attachment, d.tu_pipeline_builder_emit_state) == ("mesa-26.1", "mesa-26.1")
    with pytest.raises(ScenarioError, match="tu_clear_gmem"):
        parse_driver_variants({"tu_clear_gmem_attachment": "rc1"})


def test_job_of_records_the_release_reading_only() -> None:
    sc = fdm.load_scenario(str(ROOT / "examples/static_viewport.toml"))
    job_of(model_scenario(sc, "a618", "26.1"), "x", "/tmp/x", "26.1")
    job_of(model_scenario(sc, "a618"), "x", "/tmp/x")
    # the 26.1 reading's variants reach every FDM pass: not the turnip of 26.2
    with pytest.raises(Unrecordable, match="tu_clear_gmem_attachment"):
        job_of(model_scenario(sc, "a618", "26.1"), "x", "/tmp/x", "26.2")


def test_blit_event_clear_before_the_fix_clears_the_render_area() -> None:
    """examples/gmem_clear_offset.toml: every bin of 26.1 clears (0, 0)-(1023, 1023) on a618/a730
    (the box's reading of 26.1.6 and rc1); a750 takes the generic clear, patched in both."""
    for gpu in ("a618", "a730"):
        plan = _plan("gmem_clear_offset.toml", gpu, "26.1")
        for t in plan.tiles:
            assert load_op_clear_coords(t, 0, (0, 0, 1024, 1024), plan.scenario.gpu, "mesa-26.1") == (
                (0, 0), (1023, 1023))
        t0 = plan.tiles[0]
        assert load_op_clear_coords(t0, 0, (0, 0, 1024, 1024), plan.scenario.gpu) == gmem_clear_coords(
            t0, 0, (0, 0, 1024, 1024)) != ((0, 0), (1023, 1023))
    plan = _plan("gmem_clear_offset.toml", "a750", "26.1")
    t0 = plan.tiles[0]
    assert load_op_clear_coords(t0, 0, (0, 0, 1024, 1024), plan.scenario.gpu, "mesa-26.1") == gmem_clear_coords(
        t0, 0, (0, 0, 1024, 1024))
    assert tu6_emit_blit_scissor((8, 4, 100, 50)) == ((8, 4), (107, 53))


@pytest.mark.parametrize(("name", "gpu", "baked"), [
    ("static_viewport.toml", "a618", True), ("static_viewport.toml", "a730", False),
    ("static_viewport_shared.toml", "a730", True), ("static_viewport_shared.toml", "a750", True)])
def test_static_viewport_before_the_fix_is_baked(name: str, gpu: str, baked: bool) -> None:
    """26.1 bakes a static viewport where the pipeline has no per-view viewport: every bin keeps
    the application's (512, 512, 512, 512) and the pass is not a shared-viewport one (a750 then
    scales its bins); elsewhere, and on 26.2, the plan is the dynamic one."""
    new, old = _plan(name, gpu, None), _plan(name, gpu, "26.1")
    if not baked:
        assert old.tiles == new.tiles
        return
    assert not old.shared_viewport and new.shared_viewport == (name == "static_viewport_shared.toml" or gpu == "a618")
    for t in old.tiles:
        assert [s.viewport for s in t.slots] == [(0.0, 0.0, 1024.0, 1024.0)]
    assert any(s.viewport != (0.0, 0.0, 1024.0, 1024.0) for t in new.tiles for s in t.slots)
    if gpu == "a750":
        assert any(t.foveat.binscaleen for t in old.tiles) and not any(t.foveat.binscaleen for t in new.tiles)


def test_the_box_device_judges_with_the_box_release_reading() -> None:
    """vk_tests.box.device: a pass recorded on the 26.1 box is planned with the 26.1 reading."""
    import tomllib

    from vk_tests.box.device import rendered_scenario

    mapping = tomllib.loads((ROOT / "examples/gmem_clear_offset.toml").read_text(encoding="utf-8"))
    scene = {"scenario": mapping}
    assert rendered_scenario(scene, {}, "a618", "26.1").driver == MESA_READINGS["26.1"]
    assert rendered_scenario(scene, {}, "a618").driver == UPSTREAM
