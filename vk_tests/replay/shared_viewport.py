"""The replay of scenes whose vertex shader writes ``gl_ViewportIndex`` (always 0: B9, C5's
twins): turnip then shares one viewport, so every view draws through slot 0 with the
application's viewport 0, which is what :class:`vk_tests.replay.render.Replayer` does when
``per_view_viewport`` is false."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled, ScenarioError
from turnip_base.harness import Vulkan

from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .judge import oracle_view
from .render import run_replay
from .scene import clear_rects, image_names, plan_scene


# ---- the replay twins of the shared-viewport scenes (B9, C5) ---------------------------------------
def plan_shared(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan]:
    """:func:`vk_tests.replay.scene.plan_scene` for a scenario whose vertex shader writes
    ``gl_ViewportIndex`` (always 0): every check of ``plan_scene`` but that refusal.  Turnip then
    shares one viewport (``per_view_viewport`` false, ``rp.shared_viewport``), so every view
    draws through slot 0 with the application's viewport 0, which is what
    :class:`vk_tests.replay.render.Replayer` does when ``per_view_viewport`` is false: the replay of the
    shader writing 0 is the base replay of the shared plan."""
    scenario = dict(scene["scenario"])
    if not scenario.pop("writes_viewport_index", False):
        raise ScenarioError("scenario.writes_viewport_index", "the shared-viewport twins write gl_ViewportIndex")
    plan_scene({**scene, "scenario": scenario})  # the other refusals (layered, sysmem, ...)
    sc = fdm.parse_scenario(scene["scenario"])
    plan = fdm.plan_render_pass(sc)
    if not isinstance(plan, RenderPassPlan):
        raise NotModelled("replay", f"the pass renders in sysmem ({plan.sysmem_reason}): nothing is binned")
    if plan.viewport_state.per_view_viewport or len(sc.viewports) != 1:
        raise NotModelled("replay", "gl_ViewportIndex = 0 with one application viewport and a shared viewport only")
    return sc, plan


def run_replay_shared(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """:func:`vk_tests.replay.render.run_replay` of a shared-viewport scene (:func:`plan_shared`),
    its info saying whether the plan shares the viewport."""
    out = run_replay(ctx, scene, plan_shared)
    shared = plan_shared(scene)[1].shared_viewport
    info = dict(out.info)
    stats = {k: v for k, v in info.items() if k not in ("device", "scratch")}
    return CaseOutput(images=out.images, info={"device": info["device"], "scratch": info["scratch"],
                                               "shared_viewport": shared, **stats})


def judge_replay_shared(scene: Scene, out: CaseOutput) -> Verdict:
    """:func:`vk_tests.replay.judge.judge_replay` of a shared-viewport scene: every view equals the
    large-fragment oracle of the shared plan's bins and areas, exactly."""
    sc, plan = plan_shared(scene)
    load_op = scene.get("load_op", "clear")
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    for v in range(sc.fdm_layers):
        want, probs = oracle_view(sc, plan, v, load_op, clear_rects=clear_rects(scene))
        problems += probs
        for name in image_names(v):
            got = out.images.get(name)
            if got is None:
                problems.append(f"{name}: no image read back")
                continue
            mm = first_mismatches(name, np.asarray(got), want)
            if mm:
                g = np.asarray(got)
                n = int(np.count_nonzero(np.any(g.astype(np.int64) != want, axis=2))) if g.shape == want.shape else -1
                problems.append(f"{name}: {n} pixel(s) differ from the oracle")
                mismatches += mm[:4]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems), mismatches=tuple(mismatches))
    areas = sorted({tuple(t.views[v].frag_area) for t in plan.tiles for v in range(sc.fdm_layers)
                    if t.views[v].visible})
    return Verdict(status="Pass", message=f"{sc.fdm_layers} view(s) of {len(plan.tiles)} tile(s) through the shared "
                                          f"viewport equal the large-fragment oracle (areas {areas})")
