"""Generated scenarios for ``turnip-fdm box check --generated N --seed S``.

A seeded draw (``numpy.random.default_rng(seed)``: the same ``N`` and ``S`` give the same
scenarios on every machine) over what a pass can vary: the seven GPUs the shim opens (a618, a660,
a730, a740, a750 and the a8xx a810, a830: two of seven, ~29% of the scenarios), framebuffer
sizes (unaligned ones included), 1-4 views with one density layer each, constant, radial,
anisotropic and random (non-uniform) maps, FDM offsets per view, bin merging on or off,
viewports and scissors (several, offset, partly outside), per-view render areas, the shared
viewport (``writes_viewport_index``), QCOM per-view viewports, depth with every load op (LRZ),
MSAA attachments with every load and store op and resolves, a subsampled colour attachment (every
odd-indexed single-sampled scenario, ~30%: the subsampled stores, metadata and aprons), a custom-resolve
subpass (every fifth single-sampled scenario, ~12%), viewports and scissors baked into the
pipeline (every seventh scenario, ~14%), draw counts, and the sysmem
triggers (``TU_DEBUG=sysmem`` / ``gmem``, FDM turned off by a multisampled load or store).
Every dict goes through the scenario parser; one it refuses is drawn again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fdm.scenario import Scenario, parse_scenario
from turnip_base.errors import TurnipFdmError

GPUS = ("a618", "a660", "a730", "a740", "a750", "a810", "a830")
LOAD = ("clear", "load", "dont_care", "none")
STORE = ("store", "dont_care", "none")
DENSITIES = (1.0, 0.5, 0.25, 0.125, 0.75, 0.3)


def _density_layer(rng: np.random.Generator, fb: tuple[int, int], size: tuple[int, int]) -> dict[str, Any]:
    kind = rng.choice(["constant", "radial", "values"], p=[0.25, 0.45, 0.3])
    if kind == "constant":
        d = float(rng.choice(DENSITIES))
        aniso = rng.random() < 0.4
        return {"generator": "constant", "size": list(size),
                "density": [d, float(rng.choice(DENSITIES))] if aniso else d}
    if kind == "radial":
        r0 = int(rng.integers(32, max(33, min(fb) // 2)))
        radii = sorted({r0, r0 + int(rng.integers(16, 400)), r0 + int(rng.integers(400, 1200))})
        dens: list[Any] = []
        for _ in range(len(radii) + 1):
            d = float(rng.choice(DENSITIES))
            dens.append([d, float(rng.choice(DENSITIES))] if rng.random() < 0.3 else d)
        return {"generator": "radial", "size": list(size), "radii": radii, "densities": dens,
                "center": [int(rng.integers(0, fb[0])), int(rng.integers(0, fb[1]))]}
    vals = rng.choice(np.array(DENSITIES + (0.0,)), size=(size[1], size[0]),
                      p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05])
    return {"values": [[float(v) for v in row] for row in vals]}


def scenario_dict(rng: np.random.Generator, index: int) -> dict[str, Any]:
    """One scenario mapping (see the module docstring)."""
    gpu = str(rng.choice(GPUS))
    w = int(rng.choice([int(rng.integers(64, 2200)), 1920, 1000, 1024, 2048]))
    h = int(rng.choice([int(rng.integers(64, 2200)), 1080, 600, 1024, 1920]))
    views = int(rng.choice([1, 1, 2, 2, 3, 4]))
    texel = int(rng.choice([32, 64, 128, 256]))
    size = (-(-w // texel), -(-h // texel))
    d: dict[str, Any] = {"name": f"generated-{index}", "gpu": gpu, "framebuffer": [w, h], "views": views,
                         "density": {"format": str(rng.choice(["R8G8_UNORM", "R32G32_SFLOAT"]))}}
    per_view = views > 1 and rng.random() < 0.6
    d["density"]["views"] = [_density_layer(rng, (w, h), size) for _ in range(views if per_view else 1)]
    if rng.random() < 0.4:
        d["fdm_offset_create_flag"] = True
        if rng.random() < 0.8:
            d["fdm_offsets"] = [[8 * int(rng.integers(-40, 41)), 8 * int(rng.integers(-40, 41))]
                                for _ in range(views)]
    d["bin_merging"] = str(rng.choice(["upstream", "upstream", "off"]))
    samples = int(rng.choice([1, 1, 1, 2, 4]))
    n_col = int(rng.choice([1, 1, 2, 3]))
    atts = []
    for _ in range(n_col):
        a: dict[str, Any] = {"cpp": int(rng.choice([4, 4, 8, 2, 1, 16])), "samples": samples}
        if rng.random() < 0.5:
            a["load_op"] = str(rng.choice(LOAD))
            a["store_op"] = str(rng.choice(STORE))
        if samples > 1 and rng.random() < 0.4:
            a["resolve"] = True
        atts.append(a)
    if samples == 1 and index % 2 == 1:
        # every odd-indexed scenario's first colour attachment is subsampled (VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT),
        # chosen by the index so that the seeded draw of every other field stays what it was
        atts[0]["subsampled"] = True
    if samples == 1 and index % 5 == 2:
        # every fifth scenario (~12%: the single-sampled ones) ends with a custom-resolve subpass
        # (VK_EXT_custom_resolve), half of them in a subsampled pass; chosen by the index, as above
        d["custom_resolve"] = True
    depth = str(rng.choice(["clear", "clear", "load", "dont_care", "none"]))
    d["depth_load_op"] = depth
    if depth != "none":
        atts.append({"cpp": int(rng.choice([4, 4, 2])), "samples": samples})
    d["attachments"] = atts
    n_vp = 1
    if views > 1 and gpu != "a618" and rng.random() < 0.25:  # VK_QCOM_multiview_per_view_viewports: a660+
        d["multiview_per_view_viewports"] = True
        n_vp = views
    elif rng.random() < 0.15:
        d["writes_viewport_index"] = True
        n_vp = int(rng.integers(1, 4))
    vps, scs = [], []
    for _ in range(n_vp):
        if rng.random() < 0.5:
            vps.append([0, 0, w, h])
            scs.append([0, 0, w, h])
        else:
            x, y = int(rng.integers(-64, w // 2)), int(rng.integers(-64, h // 2))
            vw, vh = int(rng.integers(16, w + 64)), int(rng.integers(16, h + 64))
            vps.append([x, y, vw, vh])
            sx, sy = int(rng.integers(0, w)), int(rng.integers(0, h))
            scs.append([sx, sy, int(rng.integers(0, w - sx + 1)), int(rng.integers(0, h - sy + 1))])
    d["viewports"], d["scissors"] = vps, scs
    if rng.random() < 0.2:
        areas = []
        for _ in range(views if views > 1 and rng.random() < 0.5 else 1):
            x, y = int(rng.integers(0, w // 2)), int(rng.integers(0, h // 2))
            areas.append([x, y, int(rng.integers(1, w - x + 1)), int(rng.integers(1, h - y + 1))])
        d["render_areas"] = areas
    r = rng.random()
    if r < 0.06:
        d["tu_debug"] = ["sysmem"]
    elif r < 0.1:
        d["tu_debug"] = ["gmem"]
    d["draws"] = int(rng.choice([1, 1, 2, 5, 8]))
    if index % 7 == 3:
        # every seventh scenario bakes its viewports and scissors into the pipeline (the path of
        # 26.2.2's "do not bake static viewport/scissor when FDM is enabled"); by the index, as above
        d["static_viewport"] = True
    return d


def generated(n: int, seed: int) -> list[tuple[str, Scenario, dict[str, Any]]]:
    """``n`` valid scenarios drawn with ``seed`` (named ``gen<seed>-<index>``), each with the
    mapping it was parsed from (``box check --keep`` writes it as TOML)."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, Scenario, dict[str, Any]]] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 20 * n + 100:
            raise RuntimeError("the scenario generator keeps drawing invalid scenarios")
        d = scenario_dict(rng, len(out))
        try:
            sc = parse_scenario(d)
        except TurnipFdmError:
            continue
        name = f"gen{seed}-{len(out):05d}"
        out.append((name, sc, {**d, "name": name}))
    return out


def generated_scenarios(n: int, seed: int) -> list[tuple[str, Scenario]]:
    """``n`` valid scenarios drawn with ``seed`` (:func:`generated` without the mappings)."""
    return [(name, sc) for name, sc, _ in generated(n, seed)]
