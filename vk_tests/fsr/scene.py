"""The ``fsr`` backend's scene and pure arithmetic: the scene (a replay scene plus ``samples``),
the shading-rate texel encoding, the rates a device supports and the clamp to them, and the
rate texels of the model's per-bin areas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled, NotSupported, ScenarioError

from ..replay.scene import plan_scene
from ..suite.cases import Scene

Pair = tuple[int, int]


#: VK_IMAGE_LAYOUT_FRAGMENT_SHADING_RATE_ATTACHMENT_OPTIMAL_KHR.  The `vulkan` binding
#: (1.3.275.1) defines it as 1000226003, which is the sType of
#: VkPhysicalDeviceFragmentShadingRateFeaturesKHR; vk.xml gives the layout the value of its
#: alias VK_IMAGE_LAYOUT_SHADING_RATE_OPTIMAL_NV (extension 165, offset 3).
RATE_LAYOUT = 1000164003


#: the shading-rate attachment's format (one byte per texel: log2 width << 2 | log2 height)
RATE_FORMAT = "VK_FORMAT_R8_UINT"


#: the colour attachments: (image name suffix, VkFormat attribute, numpy dtype)
ATTACHMENTS: tuple[tuple[str, str, Any], ...] = (("", "VK_FORMAT_R16G16B16A16_UINT", np.uint16),
                                                  ("_ids", "VK_FORMAT_R16G16B16A16_UINT", np.uint16),
                                                  ("_gradient", "VK_FORMAT_R8G8B8A8_UNORM", np.uint8))


SAMPLES = (1, 2, 4, 8)


def image_names(view: int) -> list[str]:
    """``view{v}`` (2·FragCoord, size), ``view{v}_ids`` (rate, view), ``view{v}_gradient``."""
    return [f"view{view}{suffix}" for suffix, _, _ in ATTACHMENTS]


# ---- rates: encoding and the spec's clamp ---------------------------------------------------
def encode_rate(size: Pair) -> int:
    """The attachment texel (and ``ShadingRateKHR``) of a fragment size:
    ``log2(w) << 2 | log2(h)`` (primsrast.adoc: ``size_w = 2^((texel/4)&3)``,
    ``size_h = 2^(texel&3)``); sizes are powers of two up to 4."""
    w, h = size
    if w not in (1, 2, 4) or h not in (1, 2, 4):
        raise ValueError(f"fragment size {w}x{h} cannot be encoded (powers of two up to 4)")
    return (w.bit_length() - 1) << 2 | (h.bit_length() - 1)


def decode_rate(texel: int) -> Pair:
    return (1 << ((texel >> 2) & 3), 1 << (texel & 3))


@attrs.frozen(kw_only=True)
class SupportedRate:
    """One entry of ``vkGetPhysicalDeviceFragmentShadingRatesKHR``."""

    width: int
    height: int
    sample_counts: int


def _best(cands: Sequence[SupportedRate]) -> set[Pair]:
    """Steps 2 and 3 of the clamp: the highest area, then the lowest ``w + h``."""
    if not cands:
        return set()
    area = max(r.width * r.height for r in cands)
    top = [r for r in cands if r.width * r.height == area]
    least = min(r.width + r.height for r in top)
    return {(r.width, r.height) for r in top if r.width + r.height == least}


def clamp_rate(want: Pair, rates: Sequence[SupportedRate], samples: int) -> Pair:
    """The fragment size the spec makes the device use for a combined rate ``want`` at
    ``samples`` samples (primsrast.adoc, "Combining the Fragment Shading Rates"): ``want`` if
    the device lists it for that sample count; else, from the listed rates, (1) those with
    ``R' ≤ R`` per axis (implementations may also keep ``R'x ≤ Ry, R'y ≤ Rx``), (2) the
    highest area, (3) the lowest ``R'x + R'y``, (4) a wide/tall tie is the implementation's
    choice.  Where those freedoms allow more than one result there is no exact expectation:
    NotSupported names the choices."""
    ok = [r for r in rates if r.sample_counts & samples]
    if any((r.width, r.height) == want for r in ok):
        return want
    strict = [r for r in ok if r.width <= want[0] and r.height <= want[1]]
    swapped = strict + [r for r in ok if r.width <= want[1] and r.height <= want[0]]
    a, b = _best(strict), _best(swapped)
    if len(a) == 1 and a == b:
        return next(iter(a))
    choices = sorted(a | b)
    if not choices:
        raise NotSupported(f"the device lists no fragment shading rate for {samples} sample(s)")
    raise NotSupported(f"the spec lets the device clamp fragment size {want[0]}x{want[1]} at {samples} sample(s) "
                       f"to any of {', '.join(f'{w}x{h}' for w, h in choices)}: no exact expectation")


# ---- the scene and the model's rate map --------------------------------------------------------
def fsr_scene(scenario: Mapping[str, Any], samples: int = 1) -> dict[str, Any]:
    """An fsr scene: the scenario mapping (docs/scenario.md) and the colour sample count."""
    return {"scenario": dict(scenario), "samples": samples}


def plan_fsr(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan, int]:
    """Plan the scene (as the replay does) and refuse what the fsr backend does not cover."""
    samples = scene.get("samples", 1)
    if samples not in SAMPLES:
        raise ScenarioError("samples", f"must be one of {', '.join(map(str, SAMPLES))}, got {samples!r}")
    if scene.get("load_op", "clear") != "clear":
        raise NotModelled("fsr", "only LOAD_OP_CLEAR: the fsr backend renders the pass directly, not per bin")
    sc, plan = plan_scene(scene)
    w, h = sc.framebuffer
    for i, r in enumerate(sc.render_areas):
        if r.as_tuple() != (0, 0, w, h):
            raise NotModelled("fsr", f"render_areas[{i}]: only the whole framebuffer")
    for i, vp in enumerate(sc.viewports):
        if (vp.x, vp.y, vp.w, vp.h) != (0, 0, w, h):
            raise NotModelled("fsr", f"viewports[{i}]: only the whole framebuffer (the coverage of a partly covered "
                                     "coarse fragment is checked with the scissor)")
    if len(sc.scissors) != 1:
        raise NotModelled("fsr", "one scissor for every view")
    return sc, plan, samples


def _texel_span(lo: int, hi: int, t: int, end: int, what: str) -> tuple[int, int]:
    if lo % t or (hi % t and hi != end):
        raise NotModelled("fsr", f"{what} [{lo}, {hi}) does not fall on the {t}-pixel shading-rate texel grid")
    return lo // t, -(-hi // t)


def rate_texels(sc: fdm.Scenario, plan: RenderPassPlan, view: int, texel: Pair,
                areas: Sequence[Pair] | None = None) -> npt.NDArray[np.uint8]:
    """The shading-rate attachment layer of ``view``: each texel (``texel`` pixels) holds the
    encoded fragment area of the rendered bin that covers it (``areas[i]`` for tile ``i``
    when given, else the plan's).  Every bin edge must lie on the texel grid (or the
    framebuffer's edge), every bin start must be a multiple of its area (so the FSR grid,
    aligned to the framebuffer origin, is the FDM grid, aligned to the bin), and every texel
    must lie in one rendered bin; else NotModelled."""
    w, h = sc.framebuffer
    tw, th = texel
    grid = np.full((-(-h // th), -(-w // tw)), 0xFF, dtype=np.uint8)
    for i, tile in enumerate(plan.tiles):
        tv = tile.views[view]
        bx, by, bw, bh = tv.bin
        x0, y0, x1, y1 = max(bx, 0), max(by, 0), min(bx + bw, w), min(by + bh, h)
        if not tv.visible or x0 >= x1 or y0 >= y1:
            continue
        fa = areas[i] if areas is not None else tv.frag_area
        if bx % fa[0] or by % fa[1]:
            raise NotModelled("fsr", f"view {view}: bin {list(tv.bin)} does not start on its {fa[0]}x{fa[1]} fragment "
                                     "grid: FSR aligns fragments to the framebuffer origin, FDM to the bin")
        cx0, cx1 = _texel_span(x0, x1, tw, w, f"view {view}: bin columns")
        cy0, cy1 = _texel_span(y0, y1, th, h, f"view {view}: bin rows")
        cell = grid[cy0:cy1, cx0:cx1]
        if np.any(cell != 0xFF):
            raise NotModelled("fsr", f"view {view}: bins overlap at bin {list(tv.bin)}")
        cell[...] = encode_rate(fa)
    if np.any(grid == 0xFF):
        ys, xs = np.nonzero(grid == 0xFF)
        raise NotModelled("fsr", f"view {view}: texel ({int(xs[0])}, {int(ys[0])}) lies in no rendered bin (density 0 "
                                 "bins are skipped by turnip but shaded by FSR)")
    return grid


def rates_of(info: Mapping[str, Any]) -> list[SupportedRate]:
    return [SupportedRate(width=int(r[0]), height=int(r[1]), sample_counts=int(r[2])) for r in info["rates"]]


def clamped_areas(plan: RenderPassPlan, view: int, rates: Sequence[SupportedRate], samples: int) -> list[Pair]:
    """Per tile, the area the device must shade view ``view``'s bin with (:func:`clamp_rate`
    of the plan's area); invisible bins keep theirs."""
    out = []
    for tile in plan.tiles:
        tv = tile.views[view]
        out.append(clamp_rate(tv.frag_area, rates, samples) if tv.visible else tv.frag_area)
    return out
