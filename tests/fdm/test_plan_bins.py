"""``plan_bins`` (the bins and areas of every rendered tile, without the registers) gives what
``plan_render_pass`` gives, and refuses what it refuses, on generated scenarios with and without
FDM offsets (drawn past the valid range too, so refusals occur)."""

from __future__ import annotations

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fdm.strategies as S
from fdm.plan import PassBins, RenderPassPlan, SysmemPlan, plan_bins, plan_render_pass
from fdm.scenario import parse_scenario
from turnip_base.errors import TurnipFdmError

PLAN = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(f, sc):
    try:
        return f(sc)
    except TurnipFdmError as e:
        return (type(e).__name__, str(e))


@PLAN
@given(S.scenario_dicts(offsets=None), st.integers(-600, 600), st.integers(-600, 600))
def test_plan_bins_is_the_plans_projection(d, dx, dy):
    sc = parse_scenario(d)
    if sc.fdm_offsets is not None:   # move every view's offset: steps of the page's sweep
        sc = attrs.evolve(sc, fdm_offsets=tuple((u[0] + dx, u[1] + dy) for u in sc.fdm_offsets))
    full, light = _outcome(plan_render_pass, sc), _outcome(plan_bins, sc)
    if isinstance(full, tuple) or isinstance(light, tuple):
        assert light == full
        return
    if isinstance(full, SysmemPlan):
        assert isinstance(light, SysmemPlan) and light.sysmem_reason == full.sysmem_reason
        return
    assert isinstance(full, RenderPassPlan) and isinstance(light, PassBins)
    assert light.bin_offsets == full.bin_offsets
    assert [(t.pos, t.extent) for t in light.tiles] == [(t.pos, t.extent) for t in full.tiles]
    for lt, ft in zip(light.tiles, full.tiles, strict=True):
        assert lt.bins == tuple(v.bin for v in ft.views)
        assert lt.frag_areas == tuple(v.frag_area for v in ft.views)
        assert lt.visible == tuple(v.visible for v in ft.views)
