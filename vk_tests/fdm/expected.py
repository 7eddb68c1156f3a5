"""What turnip itself must produce for an fdm scene: the scenario it renders on a profile
(:func:`device_scenario`, :func:`device_scenario_kind`), its bins (:func:`turnip_bins`), the
profile of a device (:func:`match_profile`) and the oracle images (:func:`turnip_expectation`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled

from ..replay.judge import oracle_view
from ..replay.scene import BG
from ..spec import render_extent
from ..suite.cases import Scene
from .device import DRIVER_ID_MESA_TURNIP
from .scene import clear_rects_of, kind_of, parse, pass_render_area, samples_of

Pair = tuple[int, int]


TURNIP_PROFILES = ("a650", "a730", "a750")


def turnip_bins(scene: Scene) -> dict[str, dict[str, Any]]:
    """What turnip's own tiling makes of the scene on each GPU (the plan of
    :func:`device_scenario`, or ``device_scenario_kind`` for depth / MSAA):
    ``{profile: {"bins", "tile", "areas"}}`` (the visible views' distinct areas; ``"sysmem"``
    when the model renders the pass in sysmem).  How much the exact check sees: one bin has one
    fragment size."""
    path = (scene.get("fdm") or {}).get("path", "rp2")
    out: dict[str, dict[str, Any]] = {}
    for profile in TURNIP_PROFILES:
        s = (device_scenario_kind(scene, profile) if (scene.get("fdm") or {}).get("kind")
             else device_scenario(scene, profile, path))
        plan = fdm.plan_render_pass(fdm.parse_scenario(s))
        if not isinstance(plan, RenderPassPlan):
            out[profile] = {"sysmem": plan.sysmem_reason}
            continue
        areas = sorted({v.frag_area for t in plan.tiles for v in t.views if v.visible})
        out[profile] = {"bins": len(plan.tiles), "tile": list(plan.tiling.tile_size),
                        "areas": [list(a) for a in areas]}
    return out


# ---- pure: the judge --------------------------------------------------------------------------
_NAME_RE = re.compile(r"(?:Adreno[^0-9]*|FD)(\d{3})\b", re.IGNORECASE)


def match_profile(driver_id: int, name: str) -> str | None:
    """The :mod:`fdm.gpu` profile of a turnip device (``driverID == MESA_TURNIP`` and a name like
    ``Turnip Adreno (TM) 750`` or ``FD750``), else None."""
    if driver_id != DRIVER_ID_MESA_TURNIP:
        return None
    m = _NAME_RE.search(name)
    if m is None:
        return None
    key = f"a{m.group(1)}"
    return key if key in fdm.gpu_profiles() else None


def device_scenario(scene: Scene, profile: str, path: str) -> dict[str, Any]:
    """The scenario turnip renders on a ``profile`` GPU for this scene: the scene's scenario with
    that GPU, the tiling turnip selects (no forced ``tile_size``), upstream bin merging, the two
    8-byte RGBA16_UINT attachments and no depth; for dynamic rendering the framebuffer is the
    render area's end (``tu_CmdBeginRendering`` sizes its framebuffer so)."""
    s = dict(scene["scenario"])
    s["gpu"] = profile
    s.pop("tile_size", None)
    s["bin_merging"] = "upstream"
    s["attachments"] = [{"cpp": 8}, {"cpp": 8}]
    s["depth_load_op"] = "none"
    if path == "dynrend":
        sc = fdm.parse_scenario(scene["scenario"])
        ra = pass_render_area(sc)
        s["framebuffer"] = list(render_extent(path, sc.framebuffer, ra))
    return s


def oracle_images(scenario: Mapping[str, Any], scene: Scene, size: Pair) -> tuple[list[npt.NDArray[np.uint16]],
                                                                                    list[str], str]:
    """The large-fragment oracle of the model's plan of ``scenario``, padded to ``size`` with the
    background; ('' or why there is no plan)."""
    sc = fdm.parse_scenario(scenario)
    plan = fdm.plan_render_pass(sc)
    if not isinstance(plan, RenderPassPlan):
        return [], [], f"the model renders the pass in sysmem ({plan.sysmem_reason})"
    load_op = scene.get("load_op", "clear")
    rects = clear_rects_of(scene)
    wants, problems = [], []
    for v in range(sc.fdm_layers):
        # clear_rects: the replay's oracle of vkCmdClearAttachments (only passed when used)
        oracle: Any = oracle_view
        want, probs = oracle(sc, plan, v, load_op, clear_rects=rects) if rects else oracle(sc, plan, v, load_op)
        full = np.empty((size[1], size[0], 4), dtype=np.uint16)
        full[...] = BG
        full[:want.shape[0], :want.shape[1]] = want[:size[1], :size[0]]
        wants.append(full)
        problems += probs
    return wants, problems, ""


def turnip_expectation(scene: Scene, profile: str, path: str) -> list[npt.NDArray[np.uint16]]:
    """What turnip on a ``profile`` GPU must read back for the scene: one image per view (both
    attachments hold it), the large-fragment oracle of the model's plan of
    :func:`device_scenario`; NotModelled when the model renders the pass in sysmem."""
    sc, _, _ = parse(scene)
    wants, _, why = oracle_images(device_scenario(scene, profile, path), scene, sc.framebuffer)
    if why:
        raise NotModelled("fdm", why)
    return wants


def device_scenario_kind(scene: Scene, profile: str) -> dict[str, Any]:
    """What turnip on a ``profile`` GPU renders for a depth or MSAA scene: the scene's scenario
    with that GPU, the tiling turnip selects, upstream merging, and the GMEM attachments of this
    backend's pass: RGBA16_UINT (8 bytes) + D32_SFLOAT (4 bytes, cleared) for depth; the
    ``N``-sample RGBA8 colour alone for MSAA (the resolve attachment is written by the store, not
    allocated in GMEM) and no depth."""
    s = dict(scene["scenario"])
    s["gpu"] = profile
    s.pop("tile_size", None)
    s["bin_merging"] = "upstream"
    if kind_of(scene) == "depth":
        s["attachments"] = [{"cpp": 8}, {"cpp": 4}]
        s["depth_load_op"] = "clear"
    else:
        n = samples_of(scene)
        # a multisampled colour is resolved, not stored: tu_render_pass_disable_fdm keeps the FDM
        s["attachments"] = [{"cpp": 4, "samples": n} if n == 1 else
                            {"cpp": 4, "samples": n, "store_op": "dont_care", "resolve": True}]
        s["depth_load_op"] = "none"
    return s
