"""The ``replay`` backend's scene: a scenario mapping, the load op, the store path and the
``clear_rects`` (:func:`replay_scene`), parsed and planned (:func:`plan_scene`); the colours
and image names every replay module shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled, ScenarioError

from ..suite.cases import Scene

Rect4 = tuple[int, int, int, int]


#: the colour attachments of the replay and the suffix of their image names
ATTACHMENTS: tuple[tuple[str, str], ...] = (("fragcoord", ""), ("geometry", "_geometry"))


FMT = "rgba16ui"


#: the framebuffer's content before the pass
BG: tuple[int, int, int, int] = (0xB0B0, 0xB0B0, 0, 0)


#: the colour attachment's clear value (``LOAD_OP_CLEAR``)
CLEAR: tuple[int, int, int, int] = (0xC1EA, 0xC1EA, 0, 0)


#: what GMEM holds before a tile's load or clear
GARBAGE: tuple[int, int, int, int] = (0xDEAD, 0xBEEF, 0, 0)


#: the colour of the scene's ``clear_rects`` (``vkCmdClearAttachments`` after the draw)
CLEAR_RECT: tuple[int, int, int, int] = (0xC2C2, 0xC2C2, 1, 1)


LOAD_OPS = ("clear", "load")


#: ``a2d``: every tile through the scaled A2D store; ``planned``: the fast (1:1) store where the
#: plan's ``fast_store`` predicate says so
STORES = ("a2d", "planned")


# ---- the scene --------------------------------------------------------------------------
def replay_scene(scenario: Mapping[str, Any], load_op: str = "clear", store: str = "a2d", *,
                 clear_rects: Sequence[Sequence[int]] = ()) -> dict[str, Any]:
    """A replay scene: the scenario mapping (the file schema, docs/scenario.md), the colour
    attachment's load op, the store path (:data:`STORES`) and the framebuffer rectangles
    ``(x, y, w, h)`` cleared to :data:`CLEAR_RECT` by ``vkCmdClearAttachments`` after the draw."""
    scene: dict[str, Any] = {"scenario": dict(scenario), "load_op": load_op, "store": store}
    if clear_rects:
        scene["clear_rects"] = [list(r) for r in clear_rects]
    return scene


def clear_rects(scene: Scene) -> tuple[Rect4, ...]:
    """The scene's ``clear_rects``, checked: ``(x, y, w, h)`` with non-negative integer offsets
    and positive extents (VUID-vkCmdClearAttachments-rect-02682/02683)."""
    out = []
    for i, r in enumerate(scene.get("clear_rects", ())):
        if (not isinstance(r, Sequence) or len(r) != 4 or not all(isinstance(v, int) for v in r)
                or r[0] < 0 or r[1] < 0 or r[2] <= 0 or r[3] <= 0):
            raise ScenarioError(f"clear_rects[{i}]", f"must be [x, y, w, h] with x, y >= 0 and w, h > 0, got {r!r}")
        out.append((r[0], r[1], r[2], r[3]))
    return tuple(out)


def plan_scene(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan]:
    """Parse and plan the scene's scenario; refuse what the replay does not cover."""
    load_op = scene.get("load_op", "clear")
    if load_op not in LOAD_OPS:
        raise ScenarioError("load_op", f"must be one of {', '.join(LOAD_OPS)}, got {load_op!r}")
    store = scene.get("store", "a2d")
    if store not in STORES:
        raise ScenarioError("store", f"must be one of {', '.join(STORES)}, got {store!r}")
    clear_rects(scene)
    sc = fdm.parse_scenario(scene["scenario"])
    if sc.layers != 1 or sc.fdm_per_layer:
        raise NotModelled("replay", "layered (VALVE) passes are not replayed: one framebuffer layer per view")
    if sc.writes_viewport_index:
        raise NotModelled("replay", "the replay's shaders do not write gl_ViewportIndex")
    if sc.custom_resolve:
        raise NotModelled("replay", "custom-resolve subpasses are not replayed")
    plan = fdm.plan_render_pass(sc)
    if not isinstance(plan, RenderPassPlan):
        raise NotModelled("replay", f"the pass renders in sysmem ({plan.sysmem_reason}): nothing is binned")
    return sc, plan


def view_render_area(sc: fdm.Scenario, view: int) -> Rect4:
    if not sc.render_areas:
        return (0, 0, sc.framebuffer[0], sc.framebuffer[1])
    r = sc.render_areas[view] if len(sc.render_areas) > 1 else sc.render_areas[0]
    return r.as_tuple()


def user_index(sc: fdm.Scenario, view: int) -> int:
    """The application's viewport/scissor index of a view's draws: ``view`` with
    VK_QCOM_multiview_per_view_viewports, else 0 (the shaders do not write the index)."""
    return view if sc.multiview_per_view_viewports else 0


def image_names(view: int) -> list[str]:
    """The names of a view's read-back images, one per attachment of :data:`ATTACHMENTS`."""
    return [f"view{view}{suffix}" for _, suffix in ATTACHMENTS]
