"""The ``fdm`` backend's scenes: a replay scene plus ``"fdm"`` options (path, readback, map timing,
split, map layers, kind, twin), parsed and checked (:func:`parse`), and the constants the cases,
the passes and the judges share (the scenes' GPU, the device-sized extent, formats, sample
positions)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import fdm
from turnip_base.errors import NotModelled, ScenarioError

from ..replay.msaa import SAMPLE_POSITIONS as MSAA4_POSITIONS
from ..replay.scene import CLEAR_RECT, LOAD_OPS, clear_rects
from ..suite.cases import Scene

Rect4 = tuple[int, int, int, int]


#: render paths: render pass 2, dynamic rendering
PATHS = ("rp2", "dynrend")


READBACKS = ("auto", "both", "subsampled", "nonsubsampled")


#: when the map is read (§1.6): static (host, vkCmdBeginRenderPass), deferred (host,
#: vkEndCommandBuffer: the view's DEFERRED bit), dynamic (device: the view's DYNAMIC bit)
MAP_TIMINGS = ("static", "deferred", "dynamic")


#: VK_IMAGE_VIEW_CREATE_FRAGMENT_DENSITY_MAP_{DYNAMIC,DEFERRED}_BIT_EXT
MAP_VIEW_FLAGS = {"static": 0, "dynamic": 0x1, "deferred": 0x2}


#: VK_RENDERING_SUSPENDING_BIT / VK_RENDERING_RESUMING_BIT (C6)
RENDERING_SUSPENDING_BIT = 0x2


RENDERING_RESUMING_BIT = 0x4


#: the colour attachments' format (exact integers: doubled centres and areas)
FMT = "rgba16ui"


# ---- the scene ------------------------------------------------------------------------------
def fdm_scene(replay_scene: Mapping[str, Any], path: str, readback: str = "auto", **extra: Any) -> dict[str, Any]:
    """An fdm scene: the replay scene and ``"fdm": {"path", "readback", **extra}`` (``extra``:
    ``map_layers``, ``kind`` and ``twin`` of the depth and MSAA cases, :mod:`vk_tests.fdm.geometry`)."""
    return {**replay_scene, "fdm": {"path": path, "readback": readback, **extra}}


def replay_part(scene: Scene) -> dict[str, Any]:
    """The replay scene inside an fdm scene (everything but ``"fdm"``)."""
    return {k: v for k, v in scene.items() if k != "fdm"}


def _fdm_options(scene: Scene) -> tuple[str, str]:
    opts = scene.get("fdm") or {}
    path, readback = opts.get("path", "rp2"), opts.get("readback", "auto")
    if path not in PATHS:
        raise ScenarioError("fdm.path", f"must be one of {', '.join(PATHS)}, got {path!r}")
    if readback not in READBACKS:
        raise ScenarioError("fdm.readback", f"must be one of {', '.join(READBACKS)}, got {readback!r}")
    return path, readback


def map_timing(scene: Scene) -> str:
    """``"fdm": {"map_timing"}``: static (default), deferred or dynamic (B2, §1.6)."""
    t = (scene.get("fdm") or {}).get("map_timing", "static")
    if t not in MAP_TIMINGS:
        raise ScenarioError("fdm.map_timing", f"must be one of {', '.join(MAP_TIMINGS)}, got {t!r}")
    return str(t)


def split_of(scene: Scene) -> str:
    """``"fdm": {"split"}``: ``none`` (default) or ``suspend_resume`` (C6: dynamic rendering in
    two instances, the first SUSPENDING, the second RESUMING)."""
    v = (scene.get("fdm") or {}).get("split", "none")
    if v not in ("none", "suspend_resume"):
        raise ScenarioError("fdm.split", f"must be none or suspend_resume, got {v!r}")
    if v == "suspend_resume" and (scene.get("fdm") or {}).get("path") != "dynrend":
        raise ScenarioError("fdm.split", "suspend_resume needs the dynrend path")
    return str(v)


def split_parts(scissor: Rect4, split: bool) -> list[tuple[Rect4, int]]:
    """The rendering instances of a pass: ``(scissor, VkRenderingFlags)``; one, or for C6 the
    left part SUSPENDING and the right part RESUMING (the cut on a multiple of 8: on the fragment
    grid of areas up to 8, and a fragment is drawn by the part holding its centre either way)."""
    if not split:
        return [(scissor, 0)]
    x, y, w, h = scissor
    half = (w // 2) // 8 * 8
    return [((x, y, half, h), RENDERING_SUSPENDING_BIT), ((x + half, y, w - half, h), RENDERING_RESUMING_BIT)]


def map_layers(scene: Scene, sc: fdm.Scenario) -> int:
    """The layers of the FDM view: ``"fdm": {"map_layers": 1}`` asks for a one-layer map shared
    by every view (B8: the fetch uses ``baseArrayLayer``, §1.2), else one per FDM layer."""
    n = (scene.get("fdm") or {}).get("map_layers")
    if n is None:
        return sc.fdm_layers
    if n != 1:
        raise ScenarioError("fdm.map_layers", f"must be 1 (a shared one-layer map) or absent, got {n!r}")
    return 1


def twin_of(case_name: str, scene: Scene) -> str:
    """The replay twin of an fdm case: ``"fdm": {"twin"}`` when the scene names one (scenes on
    other GPUs, other replay modules), else :func:`twin_name` of its group and variant."""
    named = (scene.get("fdm") or {}).get("twin")
    if named:
        return str(named)
    parts = case_name.split(".")
    return twin_name(parts[1], ".".join(parts[2:-1]))


def clear_rects_of(scene: Scene) -> tuple[Rect4, ...]:
    """The scene's ``clear_rects`` (:func:`vk_tests.replay.scene.clear_rects`: the replay's
    ``vkCmdClearAttachments`` after the draw), checked."""
    return clear_rects(scene) if scene.get("clear_rects") else ()


def clear_rect_colour() -> tuple[int, int, int, int]:
    """The colour of the ``clear_rects`` (:data:`vk_tests.replay.scene.CLEAR_RECT`)."""
    return (int(CLEAR_RECT[0]), int(CLEAR_RECT[1]), int(CLEAR_RECT[2]), int(CLEAR_RECT[3]))


def pass_render_area(sc: fdm.Scenario) -> Rect4:
    if not sc.render_areas:
        return (0, 0, sc.framebuffer[0], sc.framebuffer[1])
    return sc.render_areas[0].as_tuple()


def parse(scene: Scene) -> tuple[fdm.Scenario, str, str]:
    """The scene's scenario, path and readback; refuses what a real FDM pass of this backend
    does not express (NotModelled)."""
    path, readback = _fdm_options(scene)
    split_of(scene)
    map_timing(scene)
    load_op = scene.get("load_op", "clear")
    if load_op not in LOAD_OPS:
        raise ScenarioError("load_op", f"must be one of {', '.join(LOAD_OPS)}, got {load_op!r}")
    clear_rects_of(scene)
    sc = fdm.parse_scenario(scene["scenario"])
    if sc.layers != 1 or sc.fdm_per_layer or sc.custom_resolve:
        raise NotModelled("fdm", "layered (VALVE) passes and custom resolve are not cases of this backend yet")
    if map_layers(scene, sc) == 1 and sc.fdm_layers > 1 and path == "dynrend":
        # VUID-VkRenderingInfo-imageView-06108: with a viewMask the FDM view needs more layers
        # than the mask's highest bit; render pass 2 allows 1 (VUID-VkFramebufferCreateInfo-renderPass-02746)
        raise ScenarioError("fdm.map_layers", "a one-layer map with multiview needs render pass 2")
    if len(sc.render_areas) > 1:
        raise NotModelled("fdm", "per-view render areas (VK_QCOM_multiview_per_view_render_areas)")
    if sc.multiview_per_view_viewports:
        raise NotModelled("fdm", "VK_QCOM_multiview_per_view_viewports")
    return sc, path, readback


# ---- the cases --------------------------------------------------------------------------------
#: the GPU of the scenes and their replay twins (HW bin scaling: the replay carries o')
GPU = "a750"


#: the device-sized scenes of the core cases (B1, B5, B7, C1, C2, C4, B15):
#: large enough that turnip's own tiling (device_scenario) gives many bins with different areas on
#: a650/a730/a750 (at 384x256 it picked one or two bins, one fragment size: the exact check saw
#: little); their twins force coarser 192x128 tiles so that they stay fast on lavapipe
BIG = (1536, 1024)


BIG_TILE = (192, 128)


BIG_MAP = (48, 32)


def twin_name(group: str, variant: str) -> str:
    """The replay case that runs an fdm scene with turnip's per-bin scheme."""
    return f"replay.twin.{group}.{variant}.{GPU}"


KINDS = ("depth", "msaa")


VK_FMT_RGBA8 = 37        # VK_FORMAT_R8G8B8A8_UNORM


VK_FMT_D32 = 126         # VK_FORMAT_D32_SFLOAT


#: the standard sample locations (Vulkan "Standard sample locations") of the counts B10 uses
SAMPLE_POSITIONS: dict[int, tuple[tuple[Fraction, Fraction], ...]] = {
    2: ((Fraction(3, 4), Fraction(3, 4)), (Fraction(1, 4), Fraction(1, 4))),
    4: MSAA4_POSITIONS,
}


# ---- scenes ---------------------------------------------------------------------------------
def kind_of(scene: Scene) -> str:
    k = (scene.get("fdm") or {}).get("kind")
    if k not in KINDS:
        raise ScenarioError("fdm.kind", f"must be one of {', '.join(KINDS)}, got {k!r}")
    return str(k)


def samples_of(scene: Scene) -> int:
    n = int(fdm.parse_scenario(scene["scenario"]).attachments[0].samples)
    if n not in SAMPLE_POSITIONS:
        raise ScenarioError("scenario.attachments[0].samples", f"must be one of {sorted(SAMPLE_POSITIONS)}, got {n}")
    return n
