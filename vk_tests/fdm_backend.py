"""The ``fdm`` backend: real ``VK_EXT_fragment_density_map`` render passes (issue 9, groups B and C).

A case renders the scene of a replay case (:func:`vk_tests.replay.replay_scene`: a scenario, the
load op, the store path, optional ``clear_rects``) with the device's own FDM implementation, plus
one key of its own, ``"fdm"``: ``{"path": "rp2" | "dynrend", "readback": "auto" | "both" |
"subsampled" | "nonsubsampled"}`` (B2 adds ``"map_timing"`` and ``"cts"``).

* **Device.**  The physical device's extensions, features and properties are queried through one
  ``VkPhysicalDeviceFeatures2`` chain (:func:`feature_chain`) and that same chain is passed to
  ``vkCreateDevice`` (:func:`open_fdm_device`, via :data:`vk_tests.harness.DeviceSetup`); no
  fragment-shading-rate struct is ever chained (VUID-VkDeviceCreateInfo-fragmentDensityMap-04481..
  04483).  The suite's device (``ctx``) has no extension enabled, so each case opens its own device
  on the same physical device, with the validation layer when ``ctx`` has it; its messages are
  appended to ``ctx.messages`` so that the runner fails the case on any of them.
* **Support.**  :func:`missing` names the first thing the device lacks, with the CTS conditions of
  docs/spec/vulkan-fdm-and-cts.md §2.6 and the binding gaps of §4.3 (e.g.
  ``VK_EXT_fragment_density_map``, ``multiview``, ``fragmentDensityMapNonSubsampledImages``,
  ``VK_EXT_fragment_density_map_offset``); the case raises :class:`fdm.errors.NotSupported` with it
  and never passes without rendering.
* **Map.**  R8G8_UNORM bytes from the scene's scenario (the cases use the ``floor(255/n)`` bytes of
  §1.3, :func:`density_byte`), one layer per FDM layer, uploaded by a staging copy and a barrier to
  ``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT`` (``FRAGMENT_DENSITY_PROCESS`` / ``FRAGMENT_DENSITY_MAP_READ``)
  in a submission that completes before the pass is recorded (a static map is read by the host
  during ``vkCmdBeginRenderPass``, §1.6).
* **Pass.**  ``rp2``: ``vkCreateRenderPass2`` with ``VkRenderPassFragmentDensityMapCreateInfoEXT``;
  offsets in ``VkSubpassEndInfo.pNext`` (the QCOM struct, sType and layout equal to the EXT one).
  ``dynrend``: ``vkCmdBeginRenderingKHR`` with ``VkRenderingFragmentDensityMapAttachmentInfoEXT``, a
  pipeline with ``VK_PIPELINE_CREATE_RENDERING_FRAGMENT_DENSITY_MAP_ATTACHMENT_BIT_EXT``; offsets
  through ``vkCmdEndRendering2EXT``, which the binding lacks: declared in a side ``cffi.FFI``
  (:func:`end_rendering2_structs`).  One full-screen triangle with the application's viewport and
  scissor; ``fdm_real.frag`` writes the replay's two attachments from ``gl_FragCoord`` and
  ``gl_FragSizeEXT``; then ``vkCmdClearAttachments`` of the scene's ``clear_rects``.
* **Readback.**  (a) ``fragmentDensityMapNonSubsampledImages``: plain colour attachments, copied to
  a buffer; (b) otherwise subsampled attachments resampled at every pixel centre by a plain pass
  through an immutable NEAREST ``VK_SAMPLER_CREATE_SUBSAMPLED_BIT_EXT`` sampler (the only way to
  read a subsampled image, §1.8).  ``"readback": "both"`` (B17) renders twice and keeps both.
* **Judge** (:func:`judge_fdm`, pure).  Everywhere: the spec bounds (:func:`spec_bound_problems`:
  blocks uniform and holding their own centre, area ≤ the density product of the texels around
  them, coverage by the centre sample, the geometry measure equal to FragCoord, pixels outside the
  render area untouched).  On turnip (``driverID`` ``MESA_TURNIP`` and a device name matched to a
  profile of :mod:`fdm.gpu`): also exact equality with the large-fragment oracle
  (:func:`vk_tests.replay.oracle_view`) of the model's plan for that GPU (:func:`device_scenario`).
  On other vendors the exact comparison with turnip's plan for the scene's GPU is information in
  the message, never a failure.

B8 (``"map_layers": 1``: a one-layer FDM view for two views), B9 and C5 (the scenario's
``writes_viewport_index``: ``fullscreen_vpi.vert`` writes ``gl_ViewportIndex = 0``, which needs
``VK_EXT_shader_viewport_index_layer``; their twins replay through
:func:`vk_tests.fdm_backend_more.run_replay_shared`) are cases here; the depth (B15) and MSAA
(B10) cases are in :mod:`vk_tests.fdm_backend_more` and listed by :func:`fdm_cases`.

None of this has run on an FDM device yet (lavapipe and the NVIDIA H100 lack the extension); see
docs/fdm-backend.md.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

import fdm
from fdm.errors import NotModelled, NotSupported, ScenarioError
from fdm.plan import RenderPassPlan

from . import replay
from .cases import Case, CaseOutput, Scene, Verdict, first_mismatches
from .harness import Handle, Vulkan

__all__ = ["AREA_BYTES", "DRIVER_ID_MESA_TURNIP", "PATHS", "DeviceCaps", "density_byte", "density_value",
           "device_scenario", "end_rendering2_structs", "fdm_cases", "fdm_scene", "feature_chain", "judge_fdm",
           "match_profile", "min_map_extent", "missing", "open_fdm_device", "probe", "render_extent",
           "replay_twins", "run_fdm", "spec_bound_problems", "spec_texel_size", "turnip_bins", "turnip_expectation",
           "twin_name"]

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]

FDM_EXT = "VK_EXT_fragment_density_map"
FDM2_EXT = "VK_EXT_fragment_density_map2"
OFFSET_EXT = "VK_EXT_fragment_density_map_offset"
OFFSET_QCOM = "VK_QCOM_fragment_density_map_offset"
DYNREND_EXT = "VK_KHR_dynamic_rendering"
#: what a vertex shader writing gl_ViewportIndex needs (ShaderViewportIndexLayerEXT; the CTS
#: multiviewport cases require it too, §2.6)
VPI_EXT = "VK_EXT_shader_viewport_index_layer"
#: VkDriverId of turnip (VK_DRIVER_ID_MESA_TURNIP)
DRIVER_ID_MESA_TURNIP = 18
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
#: values the binding (realitix/vulkan 1.3.275) lacks (docs/spec/vulkan-fdm-and-cts.md §4.1, §4.3)
STYPE_RENDER_PASS_FDM_OFFSET_END_INFO_EXT = 1000425002
STYPE_RENDERING_END_INFO_EXT = 1000619003
IMAGE_CREATE_FDM_OFFSET_BIT = 0x8000
PIPELINE_CREATE_RENDERING_FDM_ATTACHMENT_BIT = 0x00400000
#: the colour attachments' format (exact integers: doubled centres and areas)
FMT = "rgba16ui"
VK_FMT_RGBA16UI = 95   # VK_FORMAT_R16G16B16A16_UINT
VK_FMT_R8G8_UNORM = 16
VK_FMT_R32G32_SFLOAT = 103

#: docs/spec/vulkan-fdm-and-cts.md §1.3: the largest UNORM8 byte whose 1/density is at least n
#: (a (2,2) area needs 255/b >= 2: b = 127, not the naive round(255/2) = 128)
AREA_BYTES: dict[int, int] = {n: 255 // n for n in (1, 2, 4, 8, 16)}


def density_byte(n: int) -> int:
    """The R8G8_UNORM byte for a requested fragment extent ``n`` along an axis:
    ``floor(255/n)``, so that ``255/byte >= n`` (§1.3; CTS commit 2f2a73364)."""
    if n < 1:
        raise ScenarioError("n", f"must be >= 1, got {n}")
    return 255 // n


def density_value(n: int) -> float:
    """The density the scenario stores as :func:`density_byte` (``round_half_even(d·255)`` of
    docs/scenario.md gives the byte back)."""
    return density_byte(n) / 255


# ---- pure: texel size and map extent (docs/spec/vulkan-fdm-and-cts.md §1.2, §1.4) -------------
def render_extent(path: str, framebuffer: Pair, render_area: Rect4) -> Pair:
    """The extent the texel size is computed from: the framebuffer for a render pass; for
    ``vkCmdBeginRendering`` ``renderArea.offset + renderArea.extent`` (fragmentdensitymapops.adoc
    :100-112)."""
    if path == "dynrend":
        return (render_area[0] + render_area[2], render_area[1] + render_area[3])
    return framebuffer


def _ceil_log2(q: int) -> int:
    return 0 if q <= 1 else (q - 1).bit_length()


def spec_texel_size(extent: Pair, fdm_extent: Pair, min_texel: Pair, max_texel: Pair) -> Pair:
    """``T = clamp(2^ceil(log2(floor(extent/fdm))), min, max)`` per axis (spec revision ≥ 3, with
    the floor; a map larger than the extent gives ``T' = 1``)."""
    out = []
    for e, f, lo, hi in zip(extent, fdm_extent, min_texel, max_texel, strict=True):
        t = 1 << _ceil_log2(e // f) if e >= f else 1
        out.append(min(max(t, lo), hi))
    return (out[0], out[1])


def min_map_extent(extent: Pair, max_texel: Pair) -> Pair:
    """The smallest map the pass may use: ``ceil(extent / maxFragmentDensityTexelSize)``
    (VUID-VkFramebufferCreateInfo-renderPass-02555/02556; dynamic rendering 06112/06114)."""
    return (-(-extent[0] // max_texel[0]), -(-extent[1] // max_texel[1]))


# ---- the scene ------------------------------------------------------------------------------
def fdm_scene(replay_scene: Mapping[str, Any], path: str, readback: str = "auto", **extra: Any) -> dict[str, Any]:
    """An fdm scene: the replay scene and ``"fdm": {"path", "readback", **extra}`` (``extra``:
    ``map_layers``, ``kind`` and ``twin`` of the cases of :mod:`vk_tests.fdm_backend_more`)."""
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


def _clear_rects(scene: Scene) -> tuple[Rect4, ...]:
    if not scene.get("clear_rects"):
        return ()
    fn = getattr(replay, "clear_rects", None)
    if fn is None:
        raise NotModelled("fdm", "clear_rects need vk_tests.replay.clear_rects (the replay's vkCmdClearAttachments)")
    return tuple(fn(scene))


def _clear_rect_colour() -> tuple[int, int, int, int]:
    value = getattr(replay, "CLEAR_RECT", None)
    if value is None:
        raise NotModelled("fdm", "clear_rects need vk_tests.replay.CLEAR_RECT")
    return (int(value[0]), int(value[1]), int(value[2]), int(value[3]))


def _render_area(sc: fdm.Scenario) -> Rect4:
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
    if load_op not in replay.LOAD_OPS:
        raise ScenarioError("load_op", f"must be one of {', '.join(replay.LOAD_OPS)}, got {load_op!r}")
    _clear_rects(scene)
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


# ---- pure: what the device must have ---------------------------------------------------------
@attrs.frozen(kw_only=True)
class DeviceCaps:
    """What :func:`missing` and the judge need to know of a device (JSON-able via
    :func:`caps_json`; read on the device by :func:`probe`)."""

    name: str
    driver_id: int
    #: extension name -> specVersion
    extensions: Mapping[str, int]
    #: the features of the chain that are VK_TRUE (names as in the spec)
    features: frozenset[str]
    min_texel: Pair = (1, 1)
    max_texel: Pair = (1, 1)
    #: fragmentDensityOffsetGranularity (None without an offset extension)
    offset_granularity: Pair | None = None
    #: maxSubsampledArrayLayers (None without VK_EXT_fragment_density_map2)
    max_subsampled_array_layers: int | None = None
    #: optimalTilingFeatures of the formats the backend uses, by VkFormat
    format_features: Mapping[int, int] = attrs.field(factory=dict)


def caps_json(c: DeviceCaps) -> dict[str, Any]:
    return {"name": c.name, "driver_id": c.driver_id, "extensions": dict(sorted(c.extensions.items())),
            "features": sorted(c.features), "min_texel": list(c.min_texel), "max_texel": list(c.max_texel),
            "offset_granularity": None if c.offset_granularity is None else list(c.offset_granularity),
            "max_subsampled_array_layers": c.max_subsampled_array_layers,
            "format_features": {str(k): v for k, v in sorted(c.format_features.items())}}


FORMAT_FEATURE_COLOR_ATTACHMENT = 0x80
FORMAT_FEATURE_SAMPLED_IMAGE = 0x1
FORMAT_FEATURE_TRANSFER_SRC = 0x4000
FORMAT_FEATURE_TRANSFER_DST = 0x8000
FORMAT_FEATURE_FDM = 0x01000000


def readback_kind(caps: DeviceCaps, readback: str) -> str:
    """``nonsubsampled`` (path a), ``subsampled`` (path b) or ``both``; ``auto`` picks a when the
    device can."""
    if readback in ("both", "subsampled", "nonsubsampled"):
        return readback
    return "nonsubsampled" if "fragmentDensityMapNonSubsampledImages" in caps.features else "subsampled"


def missing(caps: DeviceCaps, scene: Scene) -> str | None:
    """The first thing the device lacks for the scene, CTS order (§2.6) then the binding's gaps
    (§4.3) and the scene's limits; None when it can run."""
    sc, path, readback = parse(scene)
    ext = caps.extensions
    if FDM_EXT not in ext:
        return FDM_EXT
    if "fragmentDensityMap" not in caps.features:
        return "fragmentDensityMap"
    if path == "dynrend":
        if DYNREND_EXT not in ext:
            return DYNREND_EXT
        if "dynamicRendering" not in caps.features:
            return "dynamicRendering"
    timing = map_timing(scene)
    if timing == "deferred":
        if FDM2_EXT not in ext:
            return FDM2_EXT
        if "fragmentDensityMapDeferred" not in caps.features:
            return "fragmentDensityMapDeferred"
    if timing == "dynamic" and "fragmentDensityMapDynamic" not in caps.features:
        return "fragmentDensityMapDynamic"
    kind = readback_kind(caps, readback)
    if kind in ("both", "nonsubsampled") and "fragmentDensityMapNonSubsampledImages" not in caps.features:
        return "fragmentDensityMapNonSubsampledImages"
    if sc.views > 1 and "multiview" not in caps.features:
        return "multiview"
    if sc.writes_viewport_index and VPI_EXT not in ext:
        return f"{VPI_EXT} (the vertex shader writes gl_ViewportIndex)"
    if sc.views > 2 and kind != "nonsubsampled":
        if FDM2_EXT not in ext:
            return FDM2_EXT
        if (caps.max_subsampled_array_layers or 0) < sc.views:
            return f"maxSubsampledArrayLayers >= {sc.views}"
    if kind != "nonsubsampled" and scene.get("load_op", "clear") == "load":
        # loads of a subsampled attachment are undefined without subsampledLoads (§1.4)
        if FDM2_EXT not in ext:
            return FDM2_EXT
        if "subsampledLoads" not in caps.features:
            return "subsampledLoads"
    if sc.fdm_offsets is not None or sc.fdm_offset_create_flag:
        if path == "dynrend" and OFFSET_EXT not in ext:
            return f"{OFFSET_EXT} (offsets with dynamic rendering need vkCmdEndRendering2EXT)"
        if OFFSET_EXT not in ext and OFFSET_QCOM not in ext:
            return OFFSET_EXT
        if "fragmentDensityMapOffset" not in caps.features:
            return "fragmentDensityMapOffset"
        g = caps.offset_granularity or (0, 0)
        for i, o in enumerate(sc.fdm_offsets or ()):
            for c in (0, 1):
                if o[c] and g[c] and o[c] % g[c]:
                    return f"fragmentDensityOffsetGranularity {list(g)} (offset {list(o)} of layer {i})"
    dmap_fmt = VK_FMT_R8G8_UNORM if sc.density.format == "R8G8_UNORM" else VK_FMT_R32G32_SFLOAT
    if not caps.format_features.get(dmap_fmt, 0) & FORMAT_FEATURE_FDM:
        return f"{sc.density.format} with VK_FORMAT_FEATURE_FRAGMENT_DENSITY_MAP_BIT_EXT"
    need = FORMAT_FEATURE_COLOR_ATTACHMENT | FORMAT_FEATURE_TRANSFER_SRC | FORMAT_FEATURE_TRANSFER_DST
    if kind != "nonsubsampled":
        need |= FORMAT_FEATURE_SAMPLED_IMAGE
    if caps.format_features.get(VK_FMT_RGBA16UI, 0) & need != need:
        return "R16G16B16A16_UINT as a colour attachment, transfer source/destination (and sampled image)"
    extent = render_extent(path, sc.framebuffer, _render_area(sc))
    least = min_map_extent(extent, caps.max_texel)
    if sc.density.size[0] < least[0] or sc.density.size[1] < least[1]:
        return (f"maxFragmentDensityTexelSize {list(caps.max_texel)}: the {list(sc.density.size)} map is smaller "
                f"than {list(least)} for {list(extent)}")
    return None


def check_granularity(caps: DeviceCaps, scene: Scene) -> None:
    """A device exposing offsets with a zero granularity and a non-zero offset fails (the CTS
    grades this Fail, not NotSupported, §2.6): raises ``ValueError``."""
    sc, _, _ = parse(scene)
    g = caps.offset_granularity
    if g is None or not sc.fdm_offsets:
        return
    if any(o[c] and not g[c] for o in sc.fdm_offsets for c in (0, 1)):
        raise ValueError(f"fragmentDensityOffsetGranularity is {list(g)} but the offsets {sc.fdm_offsets} are not 0")


# ---- pNext chains -------------------------------------------------------------------------
def feature_chain(vk: Any, extensions: Mapping[str, int]) -> dict[str, Any]:
    """The features chain for the device's ``extensions``, innermost first (the binding keeps
    only weak references to pNext targets: every link is kept in the returned dict).  Keys:
    ``multiview`` always; ``fdm``, ``fdm2``, ``offset`` (the QCOM struct: its sType is the EXT
    one), ``dynrend`` when the extension is exposed; ``features2`` is the head.  No
    fragment-shading-rate struct (§1.4)."""
    s: dict[str, Any] = {"multiview": vk.VkPhysicalDeviceMultiviewFeatures()}
    tail = s["multiview"]
    if DYNREND_EXT in extensions:
        s["dynrend"] = tail = vk.VkPhysicalDeviceDynamicRenderingFeatures(pNext=tail)
    if FDM_EXT in extensions:
        s["fdm"] = tail = vk.VkPhysicalDeviceFragmentDensityMapFeaturesEXT(pNext=tail)
    if FDM2_EXT in extensions:
        s["fdm2"] = tail = vk.VkPhysicalDeviceFragmentDensityMap2FeaturesEXT(pNext=tail)
    if OFFSET_EXT in extensions or OFFSET_QCOM in extensions:
        s["offset"] = tail = vk.VkPhysicalDeviceFragmentDensityMapOffsetFeaturesQCOM(pNext=tail)
    s["features2"] = vk.VkPhysicalDeviceFeatures2(pNext=tail)
    return s


#: the feature fields read from each link of :func:`feature_chain`
FEATURE_FIELDS: dict[str, tuple[str, ...]] = {
    "multiview": ("multiview",),
    "dynrend": ("dynamicRendering",),
    "fdm": ("fragmentDensityMap", "fragmentDensityMapDynamic", "fragmentDensityMapNonSubsampledImages"),
    "fdm2": ("fragmentDensityMapDeferred",),
    "offset": ("fragmentDensityMapOffset",),
}


def enabled_extensions(extensions: Mapping[str, int]) -> list[str]:
    """The extensions an FDM device enables: FDM, FDM2, the EXT offset extension (else QCOM's),
    dynamic rendering; whichever the device exposes."""
    out = [e for e in (FDM_EXT, FDM2_EXT, DYNREND_EXT, VPI_EXT) if e in extensions]
    if OFFSET_EXT in extensions:
        out.append(OFFSET_EXT)
    elif OFFSET_QCOM in extensions:
        out.append(OFFSET_QCOM)
    return out


def chain_stypes(vk: Any, head: Any) -> list[int]:
    """The sTypes of a pNext chain, head first (walked as ``VkBaseOutStructure``)."""
    out = [int(head.sType)]
    p = vk.ffi.cast("VkBaseOutStructure*", head.pNext)
    while p != vk.ffi.NULL:
        out.append(int(p.sType))
        p = p.pNext
    return out


def _query_chain(ctx: Vulkan) -> tuple[dict[str, int], dict[str, Any]]:
    vk = ctx.vk
    # read the fields while iterating: the generator's backing array dies with it (§4.2)
    exts = {e.extensionName: int(e.specVersion) for e in vk.vkEnumerateDeviceExtensionProperties(ctx.physical, None)}
    s = feature_chain(vk, exts)
    vk.vkGetPhysicalDeviceFeatures2(ctx.physical, s["features2"])
    # as the CTS: every supported feature of the chain stays enabled, robustBufferAccess off
    s["features2"].features.robustBufferAccess = vk.VK_FALSE
    return exts, s


def probe(ctx: Vulkan) -> DeviceCaps:
    """The device's FDM capabilities (physical-device queries only)."""
    vk = ctx.vk
    exts, s = _query_chain(ctx)
    feats = {"sampleRateShading"} if s["features2"].features.sampleRateShading else set()
    for key, fields in FEATURE_FIELDS.items():
        if key in s:
            feats |= {f for f in fields if getattr(s[key], f)}
    drv = vk.VkPhysicalDeviceDriverProperties()
    tail: Any = drv
    props: dict[str, Any] = {"driver": drv}
    if FDM_EXT in exts:
        props["fdm"] = tail = vk.VkPhysicalDeviceFragmentDensityMapPropertiesEXT(pNext=tail)
    if FDM2_EXT in exts:
        props["fdm2"] = tail = vk.VkPhysicalDeviceFragmentDensityMap2PropertiesEXT(pNext=tail)
    if OFFSET_EXT in exts or OFFSET_QCOM in exts:
        props["offset"] = tail = vk.VkPhysicalDeviceFragmentDensityMapOffsetPropertiesQCOM(pNext=tail)
    props2 = vk.VkPhysicalDeviceProperties2(pNext=tail)
    vk.vkGetPhysicalDeviceProperties2(ctx.physical, props2)
    if "fdm2" in props and props["fdm2"].subsampledLoads:
        feats.add("subsampledLoads")
    fmts = {f: int(ctx.format_features(f)) for f in (VK_FMT_RGBA16UI, VK_FMT_R8G8_UNORM, VK_FMT_R32G32_SFLOAT)}
    kw: dict[str, Any] = {}
    if "fdm" in props:
        p = props["fdm"]
        kw["min_texel"] = (int(p.minFragmentDensityTexelSize.width), int(p.minFragmentDensityTexelSize.height))
        kw["max_texel"] = (int(p.maxFragmentDensityTexelSize.width), int(p.maxFragmentDensityTexelSize.height))
    if "fdm2" in props:
        kw["max_subsampled_array_layers"] = int(props["fdm2"].maxSubsampledArrayLayers)
    if "offset" in props:
        g = props["offset"].fragmentDensityOffsetGranularity
        kw["offset_granularity"] = (int(g.width), int(g.height))
    return DeviceCaps(name=ctx.info.name, driver_id=int(drv.driverID), extensions=exts, features=frozenset(feats),
                      format_features=fmts, **kw)


def open_fdm_device(ctx: Vulkan) -> Vulkan:
    """A device on ``ctx``'s physical device with the FDM extensions and the queried features
    chain enabled (validation on when ``ctx`` has it)."""
    def setup(dev: Vulkan) -> tuple[list[str], Any]:
        exts, s = _query_chain(dev)
        dev._fdm_chain = s  # type: ignore[attr-defined]  # keep every link alive with the device
        return enabled_extensions(exts), s["features2"]

    return Vulkan(device=ctx.info.index, validation=ctx.messenger is not None, setup=setup)


# ---- the binding's gap: vkCmdEndRendering2EXT (§4.3) -------------------------------------------
_XFFI: Any = None
_XCDEF = """
typedef struct { int32_t x; int32_t y; } XOffset2D;
typedef struct { uint32_t sType; const void* pNext; uint32_t fragmentDensityOffsetCount;
                 const XOffset2D* pFragmentDensityOffsets; } XRenderPassFragmentDensityMapOffsetEndInfoEXT;
typedef struct { uint32_t sType; const void* pNext; } XRenderingEndInfoEXT;
typedef void (*PFN_vkCmdEndRendering2EXT)(void* commandBuffer, const XRenderingEndInfoEXT* pRenderingEndInfo);
"""


def side_ffi() -> Any:
    """A ``cffi.FFI`` declaring what the binding lacks (created once)."""
    global _XFFI
    if _XFFI is None:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(_XCDEF)
        _XFFI = ffi
    return _XFFI


def end_rendering2_structs(offsets: Sequence[Pair]) -> tuple[Any, list[Any]]:
    """``VkRenderingEndInfoEXT`` whose pNext is a ``VkRenderPassFragmentDensityMapOffsetEndInfoEXT``
    with ``offsets``; returns the head and every object that must outlive the call."""
    x = side_ffi()
    arr = x.new("XOffset2D[]", [{"x": o[0], "y": o[1]} for o in offsets] or 1)
    off = x.new("XRenderPassFragmentDensityMapOffsetEndInfoEXT*",
                {"sType": STYPE_RENDER_PASS_FDM_OFFSET_END_INFO_EXT, "pNext": x.NULL,
                 "fragmentDensityOffsetCount": len(offsets), "pFragmentDensityOffsets": arr})
    end = x.new("XRenderingEndInfoEXT*", {"sType": STYPE_RENDERING_END_INFO_EXT, "pNext": off})
    return end, [arr, off, end]


def _cmd_end_rendering2(ctx: Vulkan, cb: Handle, offsets: Sequence[Pair]) -> None:
    vk, x = ctx.vk, side_ffi()
    raw = vk.ffi.NULL
    for name in (b"vkCmdEndRendering2EXT", b"vkCmdEndRendering2KHR"):
        raw = vk.lib.vkGetDeviceProcAddr(ctx.device, name)
        if raw != vk.ffi.NULL:
            break
    if raw == vk.ffi.NULL:
        raise NotSupported("vkCmdEndRendering2EXT (vkGetDeviceProcAddr returned NULL)")
    fn = x.cast("PFN_vkCmdEndRendering2EXT", int(vk.ffi.cast("uintptr_t", raw)))
    end, keep = end_rendering2_structs(offsets)
    fn(x.cast("void*", int(vk.ffi.cast("uintptr_t", cb))), end)
    del keep


# ---- device objects ---------------------------------------------------------------------------
class _Image:
    """A 2D image with ``layers`` array layers, one view of all of them (2D_ARRAY when
    ``array_view`` or ``layers > 1``), in a tracked layout."""

    def __init__(self, ctx: Vulkan, size: Pair, layers: int, fmt: int, usage: int, flags: int = 0,
                 array_view: bool = False, view_flags: int = 0):
        vk = ctx.vk
        self.ctx, self.size, self.layers, self.format = ctx, size, layers, fmt
        info = vk.VkImageCreateInfo(
            flags=flags, imageType=vk.VK_IMAGE_TYPE_2D, format=fmt,
            extent=vk.VkExtent3D(width=size[0], height=size[1], depth=1), mipLevels=1, arrayLayers=layers,
            samples=vk.VK_SAMPLE_COUNT_1_BIT, tiling=vk.VK_IMAGE_TILING_OPTIMAL, usage=usage,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED)
        self.handle = vk.vkCreateImage(ctx.device, info, None)
        req = vk.vkGetImageMemoryRequirements(ctx.device, self.handle)
        alloc = vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=ctx.memory_type(
            req.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        self.memory = vk.vkAllocateMemory(ctx.device, alloc, None)
        vk.vkBindImageMemory(ctx.device, self.handle, self.memory, 0)
        ctx._own(lambda: vk.vkDestroyImage(ctx.device, self.handle, None))
        ctx._own(lambda: vk.vkFreeMemory(ctx.device, self.memory, None))
        vtype = vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if (array_view or layers > 1) else vk.VK_IMAGE_VIEW_TYPE_2D
        vinfo = vk.VkImageViewCreateInfo(flags=view_flags, image=self.handle, viewType=vtype, format=fmt,
                                         subresourceRange=self.range())
        self.view = vk.vkCreateImageView(ctx.device, vinfo, None)
        ctx._own(lambda: vk.vkDestroyImageView(ctx.device, self.view, None))
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    def range(self) -> Handle:
        vk = self.ctx.vk
        return vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=0, levelCount=1,
                                          baseArrayLayer=0, layerCount=self.layers)

    def barrier(self, cb: Handle, layout: int, src_access: int, dst_access: int, src_stage: int,
                dst_stage: int) -> None:
        vk = self.ctx.vk
        b = vk.VkImageMemoryBarrier(srcAccessMask=src_access, dstAccessMask=dst_access, oldLayout=self.layout,
                                    newLayout=layout, srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.handle,
                                    subresourceRange=self.range())
        vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, None, 0, None, 1, [b])
        self.layout = layout


def _pipeline(ctx: Vulkan, frag: str, *, push_bytes: int, attachments: int, render_pass: Handle | None = None,
              view_mask: int = 0, set_layout: Handle | None = None, dynrend_fdm: bool = False,
              vert: str = "fullscreen.vert.spv") -> tuple[Handle, Handle]:
    """A full-screen-triangle pipeline (``fullscreen.vert`` + ``frag``), dynamic viewport and
    scissor, fragment push constants; for ``render_pass`` None a dynamic-rendering pipeline
    (``VkPipelineRenderingCreateInfo``) with the FDM-attachment flag when ``dynrend_fdm``.
    Returns (pipeline, layout)."""
    from .graphics import load_spv

    vk = ctx.vk
    rngs = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, offset=0, size=push_bytes)]
    linfo = vk.VkPipelineLayoutCreateInfo(pSetLayouts=[set_layout] if set_layout is not None else None,
                                          pPushConstantRanges=rngs)
    layout = vk.vkCreatePipelineLayout(ctx.device, linfo, None)
    ctx._own(lambda: vk.vkDestroyPipelineLayout(ctx.device, layout, None))
    vert_m = ctx.shader_module(load_spv(vert))
    frag_m = ctx.shader_module(load_spv(frag))
    stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert_m, pName="main"),
              vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag_m, pName="main")]
    vertex_input = vk.VkPipelineVertexInputStateCreateInfo()
    assembly = vk.VkPipelineInputAssemblyStateCreateInfo(topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
                                                         primitiveRestartEnable=vk.VK_FALSE)
    viewport = vk.VkPipelineViewportStateCreateInfo(viewportCount=1, scissorCount=1)
    raster = vk.VkPipelineRasterizationStateCreateInfo(
        depthClampEnable=vk.VK_FALSE, rasterizerDiscardEnable=vk.VK_FALSE, polygonMode=vk.VK_POLYGON_MODE_FILL,
        cullMode=vk.VK_CULL_MODE_NONE, frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE, depthBiasEnable=vk.VK_FALSE,
        lineWidth=1.0)
    multisample = vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT,
                                                          sampleShadingEnable=vk.VK_FALSE)
    mask = (vk.VK_COLOR_COMPONENT_R_BIT | vk.VK_COLOR_COMPONENT_G_BIT | vk.VK_COLOR_COMPONENT_B_BIT
            | vk.VK_COLOR_COMPONENT_A_BIT)
    blend_att = vk.VkPipelineColorBlendAttachmentState(blendEnable=vk.VK_FALSE, colorWriteMask=mask)
    blend = vk.VkPipelineColorBlendStateCreateInfo(logicOpEnable=vk.VK_FALSE, pAttachments=[blend_att] * attachments)
    dynamic = vk.VkPipelineDynamicStateCreateInfo(
        pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR])
    rendering = None
    flags = 0
    if render_pass is None:
        rendering = vk.VkPipelineRenderingCreateInfo(viewMask=view_mask,
                                                     pColorAttachmentFormats=[VK_FMT_RGBA16UI] * attachments)
        if dynrend_fdm:
            # the binding's VK_PIPELINE_RASTERIZATION_STATE_CREATE_..._BIT_EXT alias is None (§4.1)
            flags = PIPELINE_CREATE_RENDERING_FDM_ATTACHMENT_BIT
    info = vk.VkGraphicsPipelineCreateInfo(
        pNext=rendering, flags=flags, pStages=stages, pVertexInputState=vertex_input,
        pInputAssemblyState=assembly, pViewportState=viewport, pRasterizationState=raster,
        pMultisampleState=multisample, pColorBlendState=blend, pDynamicState=dynamic, layout=layout,
        renderPass=render_pass if render_pass is not None else vk.VK_NULL_HANDLE, subpass=0)
    pipe = vk.vkCreateGraphicsPipelines(ctx.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
    ctx._own(lambda: vk.vkDestroyPipeline(ctx.device, pipe, None))
    return pipe, layout


def _rect2d(vk: Any, r: Rect4) -> Handle:
    return vk.VkRect2D(offset=vk.VkOffset2D(x=r[0], y=r[1]), extent=vk.VkExtent2D(width=r[2], height=r[3]))


def _uint_clear(vk: Any, value: Sequence[int]) -> Handle:
    return vk.VkClearValue(color=vk.VkClearColorValue(uint32=[int(v) for v in value]))


class _FdmPass:
    """One real FDM pass of a scene on an FDM device (see the module docstring)."""

    ATT = 2  # the colour attachments of fdm_real.frag

    def __init__(self, dev: Vulkan, sc: fdm.Scenario, path: str, load_op: str, subsampled: bool,
                 clear_rects: Sequence[Rect4], n_map_layers: int | None = None, map_view_flags: int = 0,
                 split: bool = False):
        vk = dev.vk
        self.dev, self.sc, self.path, self.load_op, self.subsampled = dev, sc, path, load_op, subsampled
        self.clear_rects = tuple(clear_rects)
        self.split = split
        self.layers = sc.fdm_layers  # one colour layer per view (multiview) and one map layer per FDM layer
        self.view_mask = (1 << sc.views) - 1 if sc.views > 1 else 0
        self.offsets = sc.fdm_offset_create_flag
        extra = IMAGE_CREATE_FDM_OFFSET_BIT if self.offsets else 0
        usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
        if subsampled:
            usage |= vk.VK_IMAGE_USAGE_SAMPLED_BIT
            flags = vk.VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT | extra
        else:
            usage |= vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
            flags = extra
        self.colour = [_Image(dev, sc.framebuffer, self.layers, VK_FMT_RGBA16UI, usage, flags, array_view=subsampled)
                       for _ in range(self.ATT)]
        dfmt = VK_FMT_R8G8_UNORM if sc.density.format == "R8G8_UNORM" else VK_FMT_R32G32_SFLOAT
        self.map_layers = self.layers if n_map_layers is None else n_map_layers
        self.map = _Image(dev, sc.density.size, self.map_layers, dfmt,
                          vk.VK_IMAGE_USAGE_FRAGMENT_DENSITY_MAP_BIT_EXT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT, extra,
                          view_flags=map_view_flags)
        self.render_area = _render_area(sc)
        vert = "fullscreen_vpi.vert.spv" if sc.writes_viewport_index else "fullscreen.vert.spv"
        if path == "rp2":
            self.rp = self._render_pass()
            self.fb = self._framebuffer()
            self.pipe, self.layout = _pipeline(dev, "fdm_real.frag.spv", push_bytes=16, attachments=self.ATT,
                                               render_pass=self.rp, vert=vert)
        else:
            self.rp = self.fb = None
            self.pipe, self.layout = _pipeline(dev, "fdm_real.frag.spv", push_bytes=16, attachments=self.ATT,
                                               view_mask=self.view_mask, dynrend_fdm=True, vert=vert)

    # -- objects
    def _render_pass(self) -> Handle:
        vk, dev = self.dev.vk, self.dev
        att_layout = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
        fdm_layout = vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT
        load = vk.VK_ATTACHMENT_LOAD_OP_LOAD if self.load_op == "load" else vk.VK_ATTACHMENT_LOAD_OP_CLEAR
        colour = [vk.VkAttachmentDescription2(
            format=VK_FMT_RGBA16UI, samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=load,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE, stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=att_layout, finalLayout=att_layout)
            for _ in range(self.ATT)]
        # the map: LOAD (or DONT_CARE) / DONT_CARE, never stored (VUIDs 02550/02551)
        dmap = vk.VkAttachmentDescription2(
            format=self.map.format, samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=fdm_layout, finalLayout=fdm_layout)
        # a plain v1 VkAttachmentReference, even for render pass 2 (§4.4)
        fdm_info = vk.VkRenderPassFragmentDensityMapCreateInfoEXT(
            fragmentDensityMapAttachment=vk.VkAttachmentReference(attachment=self.ATT, layout=fdm_layout))
        refs = [vk.VkAttachmentReference2(attachment=i, layout=att_layout, aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT)
                for i in range(self.ATT)]
        sub = vk.VkSubpassDescription2(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS, viewMask=self.view_mask,
                                       pColorAttachments=refs)
        colour_acc = vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
        out_stage = vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT
        deps = [vk.VkSubpassDependency2(srcSubpass=vk.VK_SUBPASS_EXTERNAL, dstSubpass=0,
                                        srcStageMask=out_stage | vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                                        dstStageMask=out_stage,
                                        srcAccessMask=colour_acc | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                                        dstAccessMask=colour_acc),
                vk.VkSubpassDependency2(srcSubpass=0, dstSubpass=vk.VK_SUBPASS_EXTERNAL, srcStageMask=out_stage,
                                        dstStageMask=out_stage, srcAccessMask=vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                                        dstAccessMask=colour_acc)]
        info = vk.VkRenderPassCreateInfo2(pNext=fdm_info, pAttachments=colour + [dmap], pSubpasses=[sub],
                                          pDependencies=deps)
        rp = vk.vkCreateRenderPass2(dev.device, info, None)
        dev._own(lambda: vk.vkDestroyRenderPass(dev.device, rp, None))
        return rp

    def _framebuffer(self) -> Handle:
        vk, dev = self.dev.vk, self.dev
        info = vk.VkFramebufferCreateInfo(renderPass=self.rp, pAttachments=[c.view for c in self.colour]
                                          + [self.map.view], width=self.sc.framebuffer[0],
                                          height=self.sc.framebuffer[1], layers=1)
        fb = vk.vkCreateFramebuffer(dev.device, info, None)
        dev._own(lambda: vk.vkDestroyFramebuffer(dev.device, fb, None))
        return fb

    # -- commands
    def map_bytes(self) -> npt.NDArray[Any]:
        """The map's layers as stored, one per map layer (a shared layer repeated)."""
        ls = self.sc.density.layers
        return np.stack([np.asarray(ls[i] if len(ls) > 1 else ls[0]) for i in range(self.map_layers)])

    def record_upload(self, cb: Handle, staging: Any) -> None:
        vk = self.dev.vk
        w, h = self.sc.density.size
        texel = self.map_bytes()[0].dtype.itemsize * 2
        self.map.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                         vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
        regions = [vk.VkBufferImageCopy(
            bufferOffset=i * w * h * texel, bufferRowLength=0, bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0,
                                                         baseArrayLayer=i, layerCount=1),
            imageOffset=vk.VkOffset3D(x=0, y=0, z=0), imageExtent=vk.VkExtent3D(width=w, height=h, depth=1))
            for i in range(self.map_layers)]
        vk.vkCmdCopyBufferToImage(cb, staging.handle, self.map.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  len(regions), regions)
        self.map.barrier(cb, vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                         vk.VK_ACCESS_FRAGMENT_DENSITY_MAP_READ_BIT_EXT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                         vk.VK_PIPELINE_STAGE_FRAGMENT_DENSITY_PROCESS_BIT_EXT)
        colour_acc = vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
        out_stage = vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT
        for c in self.colour:
            if not self.subsampled:
                c.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                          vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
                vk.vkCmdClearColorImage(cb, c.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                        vk.VkClearColorValue(uint32=list(replay.BG)), 1, [c.range()])
                c.barrier(cb, vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, vk.VK_ACCESS_TRANSFER_WRITE_BIT, colour_acc,
                          vk.VK_PIPELINE_STAGE_TRANSFER_BIT, out_stage)
            else:
                # a subsampled image cannot be a transfer destination; its pixels outside the
                # render area are undefined anyway (§1.8)
                c.barrier(cb, vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0, colour_acc,
                          vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, out_stage)

    def parts(self) -> list[tuple[Rect4, int]]:
        return split_parts(self.sc.scissors[0].as_tuple(), self.split)

    def record_pass(self, cb: Handle) -> None:
        vk, dev, sc = self.dev.vk, self.dev, self.sc
        area = _rect2d(vk, self.render_area)
        clear = [_uint_clear(vk, replay.CLEAR) for _ in range(self.ATT)]
        parts = self.parts()
        for i, (scissor, rflags) in enumerate(parts):
            if self.path == "rp2":
                begin = vk.VkRenderPassBeginInfo(renderPass=self.rp, framebuffer=self.fb, renderArea=area,
                                                 pClearValues=clear + [vk.VkClearValue()])
                vk.vkCmdBeginRenderPass2(cb, begin, vk.VkSubpassBeginInfo(contents=vk.VK_SUBPASS_CONTENTS_INLINE))
            else:
                load = vk.VK_ATTACHMENT_LOAD_OP_LOAD if self.load_op == "load" else vk.VK_ATTACHMENT_LOAD_OP_CLEAR
                atts = [vk.VkRenderingAttachmentInfo(imageView=c.view,
                                                     imageLayout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                                                     loadOp=load, storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
                                                     clearValue=clear[k]) for k, c in enumerate(self.colour)]
                fdm_att = vk.VkRenderingFragmentDensityMapAttachmentInfoEXT(
                    imageView=self.map.view, imageLayout=vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT)
                # C6: a resumed instance must match the suspended one (same attachments, area,
                # FDM attachment: VUID-vkCmdBeginRendering-pRenderingInfo-06089 ff.)
                rinfo = vk.VkRenderingInfo(pNext=fdm_att, flags=rflags, renderArea=area, layerCount=1,
                                           viewMask=self.view_mask, pColorAttachments=atts)
                begin_rendering = vk.vkGetDeviceProcAddr(dev.device, "vkCmdBeginRenderingKHR")
                begin_rendering(cb, rinfo)
            vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipe)
            vp = sc.viewports[0]
            vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=float(vp.x), y=float(vp.y), width=float(vp.w),
                                                         height=float(vp.h), minDepth=0.0, maxDepth=1.0)])
            vk.vkCmdSetScissor(cb, 0, 1, [_rect2d(vk, scissor)])
            data = vk.ffi.new("float[]", [float(vp.x), float(vp.y), float(vp.w), float(vp.h)])
            vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 16, data)
            vk.vkCmdDraw(cb, 3, 1, 0, 0)
            if self.clear_rects and i == len(parts) - 1:
                value = _uint_clear(vk, _clear_rect_colour())
                atts_c = [vk.VkClearAttachment(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, colorAttachment=k,
                                               clearValue=value) for k in range(self.ATT)]
                # multiview: baseArrayLayer 0, layerCount 1 (VUID-vkCmdClearAttachments-baseArrayLayer-00018)
                rects = [vk.VkClearRect(rect=_rect2d(vk, r), baseArrayLayer=0, layerCount=1)
                         for r in self.clear_rects]
                vk.vkCmdClearAttachments(cb, len(atts_c), atts_c, len(rects), rects)
            offsets = [(int(o[0]), int(o[1])) for o in sc.fdm_offsets] if sc.fdm_offsets else []
            if self.path == "rp2":
                end_next = (vk.VkSubpassFragmentDensityMapOffsetEndInfoQCOM(
                    pFragmentDensityOffsets=[vk.VkOffset2D(x=o[0], y=o[1]) for o in offsets]) if offsets else None)
                end = vk.VkSubpassEndInfo(pNext=end_next)
                vk.vkCmdEndRenderPass2(cb, end)
            elif offsets:
                # C6: the same offsets at the suspending and the resuming end (the spec requires them equal)
                _cmd_end_rendering2(dev, cb, offsets)
            else:
                end_rendering = vk.vkGetDeviceProcAddr(dev.device, "vkCmdEndRenderingKHR")
                end_rendering(cb)

    def read_nonsubsampled(self) -> dict[str, npt.NDArray[np.uint16]]:
        vk, dev = self.dev.vk, self.dev
        w, h = self.sc.framebuffer
        layer_bytes = w * h * 8
        out: dict[str, npt.NDArray[np.uint16]] = {}
        with dev.scope():
            buf = dev.buffer(layer_bytes * self.layers * self.ATT, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             host_visible=True)

            def record(cb: Handle) -> None:
                for a, c in enumerate(self.colour):
                    c.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                              vk.VK_ACCESS_TRANSFER_READ_BIT, vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                              vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
                    regions = [vk.VkBufferImageCopy(
                        bufferOffset=(a * self.layers + v) * layer_bytes, bufferRowLength=0, bufferImageHeight=0,
                        imageSubresource=vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT,
                                                                     mipLevel=0, baseArrayLayer=v, layerCount=1),
                        imageOffset=vk.VkOffset3D(x=0, y=0, z=0), imageExtent=vk.VkExtent3D(width=w, height=h, depth=1))
                        for v in range(self.layers)]
                    vk.vkCmdCopyImageToBuffer(cb, c.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle,
                                              len(regions), regions)
                dev.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                                   vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

            dev.run(record)
            raw = buf.read(layer_bytes * self.layers * self.ATT).view(np.uint16)
        for v in range(self.layers):
            for a, name in enumerate(replay.image_names(v)):
                i = a * self.layers + v
                out[name] = raw[i * w * h * 4:(i + 1) * w * h * 4].reshape(h, w, 4).copy()
        return out

    def read_subsampled(self) -> dict[str, npt.NDArray[np.uint16]]:
        """Readback path (b): each attachment and view resampled at every pixel centre through an
        immutable NEAREST / CLAMP_TO_EDGE subsampled sampler into a plain RGBA16_UINT target."""
        from .graphics import (
            cmd_begin_render_pass,
            cmd_end_render_pass,
            color_image,
            framebuffer,
            read_image,
            render_pass,
        )

        vk, dev = self.dev.vk, self.dev
        w, h = self.sc.framebuffer
        out: dict[str, npt.NDArray[np.uint16]] = {}
        with dev.scope():
            sinfo = vk.VkSamplerCreateInfo(
                flags=vk.VK_SAMPLER_CREATE_SUBSAMPLED_BIT_EXT, magFilter=vk.VK_FILTER_NEAREST,
                minFilter=vk.VK_FILTER_NEAREST, mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                addressModeU=vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
                addressModeV=vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
                addressModeW=vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE, minLod=0.0, maxLod=0.0,
                anisotropyEnable=vk.VK_FALSE, compareEnable=vk.VK_FALSE, unnormalizedCoordinates=vk.VK_FALSE)
            sampler = vk.vkCreateSampler(dev.device, sinfo, None)
            dev._own(lambda: vk.vkDestroySampler(dev.device, sampler, None))
            binding = vk.VkDescriptorSetLayoutBinding(
                binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, pImmutableSamplers=[sampler])
            linfo = vk.VkDescriptorSetLayoutCreateInfo(pBindings=[binding])
            set_layout = vk.vkCreateDescriptorSetLayout(dev.device, linfo, None)
            dev._own(lambda: vk.vkDestroyDescriptorSetLayout(dev.device, set_layout, None))
            pool = dev.descriptor_pool([(vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, self.ATT)], self.ATT)
            rp = render_pass(dev, FMT, "load")
            pipe, layout = _pipeline(dev, "fdm_resample.frag.spv", push_bytes=12, attachments=1, render_pass=rp,
                                     set_layout=set_layout)
            sets = []
            for c in self.colour:
                dset = dev.allocate_set(pool, set_layout)
                img = vk.VkDescriptorImageInfo(imageView=c.view,
                                               imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
                write = vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=0, dstArrayElement=0,
                                                descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                pImageInfo=[img])
                vk.vkUpdateDescriptorSets(dev.device, 1, [write], 0, None)
                sets.append(dset)
            targets = {(a, v): color_image(dev, w, h, FMT) for a in range(self.ATT) for v in range(self.layers)}
            fbs = {k: framebuffer(dev, rp, t) for k, t in targets.items()}

            def record(cb: Handle) -> None:
                for c in self.colour:
                    c.barrier(cb, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                              vk.VK_ACCESS_SHADER_READ_BIT, vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                              vk.VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT)
                for (a, v), t in targets.items():
                    cmd_begin_render_pass(dev, cb, rp, fbs[(a, v)], t, (0, 0, w, h))
                    vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
                    vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, [sets[a]], 0,
                                               None)
                    vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=0.0, y=0.0, width=float(w), height=float(h),
                                                                 minDepth=0.0, maxDepth=1.0)])
                    vk.vkCmdSetScissor(cb, 0, 1, [_rect2d(vk, (0, 0, w, h))])
                    data = vk.ffi.new("float[]", [float(w), float(h), float(v)])
                    vk.vkCmdPushConstants(cb, layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 12, data)
                    vk.vkCmdDraw(cb, 3, 1, 0, 0)
                    cmd_end_render_pass(dev, cb)

            dev.run(record)
            for (a, v), t in targets.items():
                out[replay.image_names(v)[a]] = read_image(dev, t)
        return out


def _render(dev: Vulkan, sc: fdm.Scenario, path: str, load_op: str, subsampled: bool,
            clear_rects: Sequence[Rect4], n_map_layers: int | None = None, map_view_flags: int = 0,
            split: bool = False) -> dict[str, npt.NDArray[np.uint16]]:
    vk = dev.vk
    with dev.scope():
        # deferred / dynamic maps (B2) are uploaded the same way: in place before recording, so
        # that every reading time (§1.6) sees the same contents
        p = _FdmPass(dev, sc, path, load_op, subsampled, clear_rects, n_map_layers, map_view_flags, split)
        data = np.ascontiguousarray(p.map_bytes())
        staging = dev.buffer(data.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host_visible=True)
        staging.write(data)
        # a static map is read by the host at vkCmdBeginRenderPass: it must be in place before the
        # pass is recorded (§1.6), so the upload is its own, completed, submission
        dev.run(lambda cb: p.record_upload(cb, staging))
        dev.run(p.record_pass)
        return p.read_subsampled() if subsampled else p.read_nonsubsampled()


def run_fdm(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Render the scene with the device's FDM (see the module docstring); NotSupported names
    what the device lacks."""
    sc, path, readback = parse(scene)
    caps = probe(ctx)
    lack = missing(caps, scene)
    if lack is not None:
        raise NotSupported(f"{lack} (device {caps.name})")
    check_granularity(caps, scene)
    kind = readback_kind(caps, readback)
    rects = _clear_rects(scene)
    load_op = scene.get("load_op", "clear")
    dev = open_fdm_device(ctx)
    try:
        images: dict[str, npt.NDArray[np.uint16]] = {}
        vflags = MAP_VIEW_FLAGS[map_timing(scene)]
        split = split_of(scene) == "suspend_resume"
        if kind in ("nonsubsampled", "both"):
            images.update(_render(dev, sc, path, load_op, False, rects, map_layers(scene, sc), vflags, split))
        if kind in ("subsampled", "both"):
            sub = _render(dev, sc, path, load_op, True, rects, map_layers(scene, sc), vflags, split)
            images.update(sub if kind == "subsampled" else {f"{k}_resampled": v for k, v in sub.items()})
    finally:
        ctx.messages.extend(dev.messages)
        dev.close()
    info = {"device": {**caps_json(caps), "profile": match_profile(caps.driver_id, caps.name)},
            "path": path, "readback": kind, "turnip_bins": turnip_bins(scene)}
    return CaseOutput(images=images, info=info)


TURNIP_PROFILES = ("a650", "a730", "a750")


def turnip_bins(scene: Scene) -> dict[str, dict[str, Any]]:
    """What turnip's own tiling makes of the scene on each GPU (the plan of
    :func:`device_scenario`, or ``fdm_backend_more.device_scenario_kind`` for depth / MSAA):
    ``{profile: {"bins", "tile", "areas"}}`` (the visible views' distinct areas; ``"sysmem"``
    when the model renders the pass in sysmem).  How much the exact check sees: one bin has one
    fragment size."""
    from . import fdm_backend_more

    path = (scene.get("fdm") or {}).get("path", "rp2")
    out: dict[str, dict[str, Any]] = {}
    for profile in TURNIP_PROFILES:
        s = (fdm_backend_more.device_scenario_kind(scene, profile) if (scene.get("fdm") or {}).get("kind")
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
        ra = _render_area(sc)
        s["framebuffer"] = list(render_extent(path, sc.framebuffer, ra))
    return s


def _oracle_images(scenario: Mapping[str, Any], scene: Scene, size: Pair) -> tuple[list[npt.NDArray[np.uint16]],
                                                                                    list[str], str]:
    """The large-fragment oracle of the model's plan of ``scenario``, padded to ``size`` with the
    background; ('' or why there is no plan)."""
    sc = fdm.parse_scenario(scenario)
    plan = fdm.plan_render_pass(sc)
    if not isinstance(plan, RenderPassPlan):
        return [], [], f"the model renders the pass in sysmem ({plan.sysmem_reason})"
    load_op = scene.get("load_op", "clear")
    rects = _clear_rects(scene)
    wants, problems = [], []
    for v in range(sc.fdm_layers):
        # clear_rects: the replay's oracle of vkCmdClearAttachments (only passed when used)
        oracle: Any = replay.oracle_view
        want, probs = oracle(sc, plan, v, load_op, clear_rects=rects) if rects else oracle(sc, plan, v, load_op)
        full = np.empty((size[1], size[0], 4), dtype=np.uint16)
        full[...] = replay.BG
        full[:want.shape[0], :want.shape[1]] = want[:size[1], :size[0]]
        wants.append(full)
        problems += probs
    return wants, problems, ""


def turnip_expectation(scene: Scene, profile: str, path: str) -> list[npt.NDArray[np.uint16]]:
    """What turnip on a ``profile`` GPU must read back for the scene: one image per view (both
    attachments hold it), the large-fragment oracle of the model's plan of
    :func:`device_scenario`; NotModelled when the model renders the pass in sysmem."""
    sc, _, _ = parse(scene)
    wants, _, why = _oracle_images(device_scenario(scene, profile, path), scene, sc.framebuffer)
    if why:
        raise NotModelled("fdm", why)
    return wants


def _texel_table(sc: fdm.Scenario, layer: int) -> npt.NDArray[np.float64]:
    """``(1/dx)·(1/dy)`` of each texel of a layer (inf where a density is 0: the area is
    undefined there, §1.3), from the stored bytes or floats exactly as the device reads them."""
    raw = np.asarray(sc.density.layers[layer if len(sc.density.layers) > 1 else 0], dtype=np.float64)
    d = raw / 255.0 if sc.density.format == "R8G8_UNORM" else raw
    with np.errstate(divide="ignore"):
        return 1.0 / (d[..., 0] * d[..., 1])


def _max3(a: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The maximum over each texel's 3×3 neighbourhood (the filter allowance of §1.3)."""
    p = np.pad(a, 1, mode="edge")
    h, w = a.shape
    return np.max(np.stack([p[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)]), axis=0)


def zero_density_near(sc: fdm.Scenario, layer: int, texel: Pair) -> npt.NDArray[np.bool_]:
    """The framebuffer pixels within one texel (a 3×3 window) of a zero-density texel: the area
    is undefined there (§1.3; turnip skips a whole bin whose centre texel is 0), not checked."""
    w, h = sc.framebuffer
    table = _texel_table(sc, layer)
    fh_, fw_ = table.shape
    off = tuple(sc.fdm_offsets[layer]) if sc.fdm_offsets else (0, 0)
    tx = np.clip((np.arange(w) - off[0]) // texel[0], 0, fw_ - 1)
    ty = np.clip((np.arange(h) - off[1]) // texel[1], 0, fh_ - 1)
    out: npt.NDArray[np.bool_] = ~np.isfinite(_max3(table)[ty[:, None], tx[None, :]])
    return out


def _texel_index(px: npt.NDArray[np.int64], off: int, t: int, n: int) -> npt.NDArray[np.int64]:
    out: npt.NDArray[np.int64] = np.clip((px - off) // t, 0, n - 1)
    return out


def bin_window(sc: fdm.Scenario, layer: int, texel: Pair, bins: Sequence[Rect4]) -> npt.NDArray[np.float64]:
    """The filter window of a driver that fetches the map once per bin (turnip: one texel at the
    bin's centre for every fragment of the bin, ``tu_calc_frag_area``): per pixel, the largest
    density product of the texels (3×3 window, offsets, clamp-to-edge) that the bin holding the
    pixel covers; 0 outside every bin.  The spec leaves the window implementation-defined and asks
    only that the area lie within the fetched set's (§1.3), so on turnip this is the bound."""
    w, h = sc.framebuffer
    out = np.zeros((h, w), dtype=np.float64)
    bound = _max3(_texel_table(sc, layer))
    fh_, fw_ = bound.shape
    off = tuple(sc.fdm_offsets[layer]) if sc.fdm_offsets else (0, 0)
    for x, y, bw, bh in bins:
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + bw, w), min(y + bh, h)
        if x1 <= x0 or y1 <= y0:
            continue
        tx0, tx1 = (min(max((p - off[0]) // texel[0], 0), fw_ - 1) for p in (x0, x1 - 1))
        ty0, ty1 = (min(max((p - off[1]) // texel[1], 0), fh_ - 1) for p in (y0, y1 - 1))
        b = bound[ty0:ty1 + 1, tx0:tx1 + 1]
        fin = b[np.isfinite(b)]
        out[y0:y1, x0:x1] = np.maximum(out[y0:y1, x0:x1], float(fin.max()) if fin.size else 0.0)
    return out


def plan_bins(plan: RenderPassPlan, view: int) -> list[Rect4]:
    """The framebuffer-space bins ``B_v`` of ``view`` in which the view is visible."""
    return [t.views[view].bin for t in plan.tiles if t.views[view].visible]


def map_window(sc: fdm.Scenario, layer: int) -> npt.NDArray[np.float64]:
    """The widest window the spec allows (the whole map, §1.3): per pixel the largest finite
    density product of the layer, for drivers whose window is unknown."""
    t = _texel_table(sc, layer)
    fin = t[np.isfinite(t)]
    w, h = sc.framebuffer
    return np.full((h, w), float(fin.max()) if fin.size else 0.0)


def fragment_block_problems(name: str, v: npt.NDArray[np.int64], drawn: npt.NDArray[np.bool_],
                            checked: npt.NDArray[np.bool_], sc: fdm.Scenario, layer: int, texel: Pair,
                            window: npt.NDArray[np.float64] | None = None
                            ) -> tuple[list[str], npt.NDArray[np.bool_], int]:
    """The per-fragment spec bounds of :func:`spec_bound_problems` on an ``(H, W, 4)`` image of
    ``(2·c.x, 2·c.y, fa.x, fa.y)`` (the other backends' images are turned into this form): a
    ``drawn`` pixel holds a fragment whose block contains it, every ``checked`` pixel of that
    block holds the same value, and the area is at most the density product of the texels the
    block fetches (3×3 filter window, offsets and clamp-to-edge of §1.2), or of ``window`` at the
    block's first pixel where that is larger (the driver's own window: :func:`bin_window`,
    :func:`map_window`).  Returns the problems, the pixels that hold a well-formed fragment, and
    the largest fragment extent seen."""
    h, w = v.shape[:2]
    problems: list[str] = []
    table = _texel_table(sc, layer)
    fh_, fw_ = table.shape
    off = tuple(sc.fdm_offsets[layer]) if sc.fdm_offsets else (0, 0)
    x2, y2, fw, fh = v[..., 0], v[..., 1], v[..., 2], v[..., 3]
    bx2, by2 = x2 - fw, y2 - fh  # twice the block start
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    ok = ((fw >= 1) & (fh >= 1) & (bx2 % 2 == 0) & (by2 % 2 == 0) & (bx2 >= 0) & (by2 >= 0)
          & (bx2 // 2 <= xs) & (xs < bx2 // 2 + fw) & (by2 // 2 <= ys) & (ys < by2 // 2 + fh))
    bad = drawn & ~ok
    if bad.any():
        yy, xx = np.nonzero(bad)
        problems.append(f"{name}: {int(bad.sum())} pixel(s) hold neither the undrawn value nor a fragment that "
                        f"contains them (first x={int(xx[0])}, y={int(yy[0])}: {v[yy[0], xx[0]].tolist()})")
    good = drawn & ok
    max_dim = int(max(fw[good].max(initial=1), fh[good].max(initial=1)))
    if good.any():
        # uniform blocks: the checked pixels of each value's block all hold that value
        key = (x2 << 40) | (y2 << 20) | (fw << 10) | fh
        keys, first, counts = np.unique(key[good], return_index=True, return_counts=True)
        gy, gx = np.nonzero(good)
        fy, fx = gy[first], gx[first]
        sat = np.zeros((h + 1, w + 1), dtype=np.int64)
        sat[1:, 1:] = checked.astype(np.int64).cumsum(0).cumsum(1)
        bx0, by0 = bx2[fy, fx] // 2, by2[fy, fx] // 2
        bx1 = np.minimum(bx0 + fw[fy, fx], w)
        by1 = np.minimum(by0 + fh[fy, fx], h)
        in_block = sat[by1, bx1] - sat[by0, bx1] - sat[by1, bx0] + sat[by0, bx0]
        split = counts != in_block
        if split.any():
            i = int(np.argmax(split))
            problems.append(f"{name}: {int(split.sum())} fragment(s) do not cover their whole block (first at "
                            f"x={int(bx0[i])}, y={int(by0[i])}, size {int(fw[fy[i], fx[i]])}x{int(fh[fy[i], fx[i]])}: "
                            f"{int(counts[i])} of {int(in_block[i])} pixels)")
        # the area bound with the 3x3 filter window around the texels the block fetches
        bound = _max3(table)
        t0x, t1x = _texel_index(bx0, off[0], texel[0], fw_), _texel_index(bx1 - 1, off[0], texel[0], fw_)
        t0y, t1y = _texel_index(by0, off[1], texel[1], fh_), _texel_index(by1 - 1, off[1], texel[1], fh_)
        area = (fw[fy, fx] * fh[fy, fx]).astype(np.float64)
        # a block spans at most two texels per axis when it is no wider than a texel: the range
        # maximum is that of its corners (vectorized); wider blocks one by one
        b = np.maximum(np.maximum(bound[t0y, t0x], bound[t0y, t1x]), np.maximum(bound[t1y, t0x], bound[t1y, t1x]))
        for k in np.nonzero((t1x - t0x > 1) | (t1y - t0y > 1))[0]:
            b[k] = float(bound[t0y[k]:t1y[k] + 1, t0x[k]:t1x[k] + 1].max())
        if window is not None:
            b = np.maximum(b, window[np.minimum(by0, h - 1), np.minimum(bx0, w - 1)])
        over_mask = area > b * (1 + 1e-9)
        over = int(over_mask.sum())
        if over:
            i = int(np.argmax(over_mask))
            problems.append(f"{name}: {over} fragment(s) larger than the density allows (first at x={int(bx0[i])}, "
                            f"y={int(by0[i])}: area {int(area[i])} > {float(b[i]):.4g})")
    return problems, good, max_dim


def spec_bound_problems(sc: fdm.Scenario, view: int, images: Mapping[str, npt.NDArray[Any]], *, load_op: str,
                        texel: Pair, readback: str, clear_rects: Sequence[Rect4] = (), suffix: str = "",
                        window: npt.NDArray[np.float64] | None = None) -> list[str]:
    """What the spec requires of a view's images, independent of any driver's bins
    (docs/spec/vulkan-fdm-and-cts.md §1.2, §1.3, §1.5):

    * inside the render area, farther than one texel from a zero-density texel (undefined there),
      a pixel holds the
      undrawn value (``CLEAR`` or, for ``LOAD_OP_LOAD``, the background) or a fragment
      ``(2·c, fa)`` with ``fa ≥ 1`` whose block ``[c − fa/2, c + fa/2)`` contains the pixel, and
      every checked pixel of that block holds the same value (one fragment, one shading);
    * the area is at most the density product of the texels the block's regions fetch
      (``T`` = ``texel``, offsets and clamp-to-edge of §1.2), with a 3×3-texel filter window or
      the driver's ``window`` (:func:`fragment_block_problems`);
    * a drawn fragment's centre lies in the viewport and the scissor (the sample is the centre);
      an undrawn pixel does not lie farther than the largest fragment extent inside both;
    * the geometry image equals the FragCoord image (one sample at the centre: the interpolated
      position is the centre);
    * pixels outside the render area keep the background (non-subsampled readback only: a
      subsampled image is undefined there, §1.8);
    * ``clear_rects`` (``vkCmdClearAttachments``, clears.adoc:265-273): the cleared colour covers
      every pixel at least the largest fragment extent inside a rectangle and none farther than
      that outside one; cleared pixels are exempt from the fragment checks.
    """
    w, h = sc.framebuffer
    fc = np.asarray(images.get(f"view{view}{suffix}"))
    geo = images.get(f"view{view}_geometry{suffix}")
    name = f"view{view}{suffix}"
    if fc.shape != (h, w, 4):
        return [f"{name}: shape {list(fc.shape)}, want {[h, w, 4]}"]
    problems: list[str] = []
    if geo is None or np.asarray(geo).shape != fc.shape:
        problems.append(f"view{view}_geometry{suffix}: missing or of another shape")
    ra = _render_area(sc)
    inside = np.zeros((h, w), dtype=bool)
    inside[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] = True
    layer = view if sc.fdm_layers > 1 else 0
    checked = inside & ~zero_density_near(sc, layer, texel)
    v = fc.astype(np.int64)
    undrawn = np.array(replay.CLEAR if load_op == "clear" else replay.BG, dtype=np.int64)
    is_undrawn = np.all(v == undrawn, axis=2)
    cleared = np.zeros((h, w), dtype=bool)
    if clear_rects:
        cleared = np.all(v == np.array(_clear_rect_colour(), dtype=np.int64), axis=2)
    drawn = checked & ~is_undrawn & ~cleared
    fragment_problems, good, max_dim = fragment_block_problems(name, v, drawn, checked, sc, layer, texel, window)
    problems += fragment_problems
    x2, y2 = v[..., 0], v[..., 1]
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    vp, sci = sc.viewports[0], sc.scissors[0]
    vx0, vx1 = Fraction(vp.x), Fraction(vp.x) + Fraction(vp.w)
    vy0, vy1 = sorted((Fraction(vp.y), Fraction(vp.y) + Fraction(vp.h)))
    lo_x, hi_x = max(vx0, Fraction(sci.x)), min(vx1, Fraction(sci.x + sci.w))
    lo_y, hi_y = max(vy0, Fraction(sci.y)), min(vy1, Fraction(sci.y + sci.h))
    if good.any():
        # coverage by the centre sample
        cx2, cy2 = x2[good], y2[good]
        outside = ((cx2 < float(2 * lo_x)) | (cx2 >= float(2 * hi_x)) | (cy2 < float(2 * lo_y))
                   | (cy2 >= float(2 * hi_y)))
        if outside.any():
            problems.append(f"{name}: {int(outside.sum())} pixel(s) of fragments whose centre lies outside the "
                            "viewport or scissor")
    m = max_dim
    # the edges are quarter pixels at worst: exact as floats
    deep = ((xs >= float(lo_x + m)) & (xs + 1 <= float(hi_x - m)) & (ys >= float(lo_y + m))
            & (ys + 1 <= float(hi_y - m)))
    missed = checked & is_undrawn & deep & ~cleared
    if missed.any():
        yy, xx = np.nonzero(missed)
        problems.append(f"{name}: {int(missed.sum())} pixel(s) deep inside the viewport and scissor were not drawn "
                        f"(first x={int(xx[0])}, y={int(yy[0])})")
    for r in clear_rects:
        must = np.zeros((h, w), dtype=bool)
        must[max(r[1] + m, 0):max(r[1] + r[3] - m, 0), max(r[0] + m, 0):max(r[0] + r[2] - m, 0)] = True
        if (must & checked & ~cleared).any():
            problems.append(f"{name}: pixels well inside clear rect {list(r)} are not cleared")
    if clear_rects:
        near = np.zeros((h, w), dtype=bool)
        for r in clear_rects:
            near[max(r[1] - m, 0):r[1] + r[3] + m, max(r[0] - m, 0):r[0] + r[2] + m] = True
        if (cleared & ~near).any():
            problems.append(f"{name}: pixels farther than a fragment from every clear rect are cleared")
    if geo is not None and np.asarray(geo).shape == fc.shape:
        g = np.asarray(geo).astype(np.int64)
        diff = checked & np.any(g != v, axis=2)
        if diff.any():
            yy, xx = np.nonzero(diff)
            problems.append(f"view{view}_geometry{suffix}: {int(diff.sum())} pixel(s) differ from FragCoord (first "
                            f"x={int(xx[0])}, y={int(yy[0])}: {g[yy[0], xx[0]].tolist()} vs "
                            f"{v[yy[0], xx[0]].tolist()})")
    if readback != "subsampled" and not suffix:
        outside_ra = ~inside & np.any(v != np.array(replay.BG, dtype=np.int64), axis=2)
        if outside_ra.any():
            problems.append(f"{name}: {int(outside_ra.sum())} pixel(s) outside the render area changed")
    return problems


def _exact(wants: Sequence[npt.NDArray[np.uint16]], images: Mapping[str, npt.NDArray[Any]], suffix: str,
           mask_outside: Rect4 | None) -> tuple[int, list[Mapping[str, Any]]]:
    """Pixels that differ from the oracle (over every attachment of every view); the first ones."""
    n, mm = 0, []
    for v, want in enumerate(wants):
        for base in replay.image_names(v):
            got = np.asarray(images.get(base + suffix))
            if got.shape != want.shape:
                n += want.shape[0] * want.shape[1]
                mm += list(first_mismatches(base + suffix, got, want, limit=2))
                continue
            g, wnt = got, want
            if mask_outside is not None:  # subsampled readback: outside the render area is undefined
                x, y, rw, rh = mask_outside
                g, wnt = got[y:y + rh, x:x + rw], want[y:y + rh, x:x + rw]
            n += int(np.count_nonzero(np.any(g.astype(np.int64) != wnt, axis=2)))
            mm += list(first_mismatches(base + suffix, g, wnt, limit=2))
    return n, mm


def texel_size_for(sc: fdm.Scenario, path: str, device: Mapping[str, Any]) -> Pair:
    """The spec's texel size on the recorded device (its min/max texel size; (1,1)..(∞) when
    unknown)."""
    lo = tuple(device.get("min_texel") or (1, 1))
    hi = tuple(device.get("max_texel") or (1 << 30, 1 << 30))
    extent = render_extent(path, sc.framebuffer, _render_area(sc))
    return spec_texel_size(extent, sc.density.size, (int(lo[0]), int(lo[1])), (int(hi[0]), int(hi[1])))


def cts_bound_problems(sc: fdm.Scenario, view: int, images: Mapping[str, npt.NDArray[Any]], texel: Pair,
                       suffix: str = "", load_op: str = "clear") -> list[str]:
    """The CTS's checks of a main-tree case (docs/spec/vulkan-fdm-and-cts.md §2.4), on the
    ``(2·c, fa)`` image: per drawn pixel ``B·A + 0.01 ≥ dx·dy`` with ``B·A = 1/(fa.x·fa.y)`` and
    ``dx·dy`` the density of the texel the pixel fetches ("Wrong value of FragSizeEXT variable"),
    and every distinct value at most ``fa.x·fa.y`` times in the view ("Wrong color count"; the
    CTS's views side by side give ``viewCount·area`` over the image)."""
    v = np.asarray(images.get(f"view{view}{suffix}")).astype(np.int64)
    w, h = sc.framebuffer
    if v.shape != (h, w, 4):
        return [f"view{view}{suffix}: shape {list(v.shape)}, want {[h, w, 4]}"]
    undrawn = np.array(replay.CLEAR if load_op == "clear" else replay.BG, dtype=np.int64)
    ra = _render_area(sc)
    drawn = np.zeros((h, w), dtype=bool)
    drawn[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] = True
    drawn &= ~np.all(v == undrawn, axis=2) & (v[..., 2] >= 1) & (v[..., 3] >= 1)
    problems: list[str] = []
    table = _texel_table(sc, view if sc.fdm_layers > 1 else 0)
    th, tw = table.shape
    off = tuple(sc.fdm_offsets[view]) if sc.fdm_offsets else (0, 0)
    xs = np.clip((np.arange(w) - off[0]) // texel[0], 0, tw - 1)
    ys = np.clip((np.arange(h) - off[1]) // texel[1], 0, th - 1)
    with np.errstate(divide="ignore"):
        dens = 1.0 / table[ys[:, None], xs[None, :]]
    area = (v[..., 2] * v[..., 3]).astype(np.float64)
    bad = drawn & (1.0 / np.maximum(area, 1.0) + 0.01 < dens)
    if bad.any():
        yy, xx = np.nonzero(bad)
        problems.append(f"view{view}{suffix}: {int(bad.sum())} pixel(s) fail the CTS FragSize check B*A + 0.01 >= "
                        f"dx*dy (first x={int(xx[0])}, y={int(yy[0])}: area {int(area[yy[0], xx[0]])})")
    if drawn.any():
        key = (v[..., 0] << 40) | (v[..., 1] << 20) | (v[..., 2] << 10) | v[..., 3]
        keys, first, counts = np.unique(key[drawn], return_index=True, return_counts=True)
        over = counts > area[drawn][first]
        if over.any():
            problems.append(f"view{view}{suffix}: {int(over.sum())} colour(s) appear more often than their area "
                            "(the CTS histogram check)")
    return problems


def area_windows(scene: Scene, sc: fdm.Scenario, texel: Pair, profile: str | None, path: str,
                 scenario: Mapping[str, Any] | None = None) -> tuple[list[npt.NDArray[np.float64]], str]:
    """The area bound's filter window per view (§1.3: implementation-defined): on turnip
    (``profile``) its bins in the model's plan of :func:`device_scenario` (or ``scenario``) —
    one fetch per bin, so a large bin may take a coarser area than the texels around a pixel
    allow; elsewhere the whole map (:func:`map_window`: the window is unknown, a 3×3 excess is
    information).  With the note for the message."""
    if profile is None:
        return [map_window(sc, v if sc.fdm_layers > 1 else 0) for v in range(sc.fdm_layers)], ""
    try:
        plan = fdm.plan_render_pass(fdm.parse_scenario(scenario or device_scenario(scene, profile, path)))
    except (NotModelled, ScenarioError) as e:
        return [map_window(sc, v if sc.fdm_layers > 1 else 0) for v in range(sc.fdm_layers)], \
            f"; area window: the whole map (no turnip plan: {e})"
    if not isinstance(plan, RenderPassPlan):
        return [map_window(sc, v if sc.fdm_layers > 1 else 0) for v in range(sc.fdm_layers)], ""
    return [bin_window(sc, v if sc.fdm_layers > 1 else 0, texel, plan_bins(plan, v)) for v in range(sc.fdm_layers)], \
        f"; area window: turnip {profile}'s {len(plan.tiles)} bin(s)"


def judge_fdm(scene: Scene, out: CaseOutput) -> Verdict:
    """The spec bounds everywhere; on turnip with a known profile also exact equality with the
    large-fragment oracle of the model's plan for that GPU; elsewhere exact agreement with
    turnip's plan for the scene's GPU is reported as information."""
    sc, path, _ = parse(scene)
    device = dict(out.info.get("device") or {})
    readback = str(out.info.get("readback", "nonsubsampled"))
    profile = device.get("profile")
    turnip = device.get("driver_id") == DRIVER_ID_MESA_TURNIP and profile is not None
    load_op = scene.get("load_op", "clear")
    rects = _clear_rects(scene)
    texel = texel_size_for(sc, path, device)
    suffixes = [""] + (["_resampled"] if readback == "both" else [])
    problems: list[str] = []
    windows, window_note = area_windows(scene, sc, texel, str(profile) if turnip else None, path)
    narrow: list[str] = []
    for suffix in suffixes:
        for v in range(sc.fdm_layers):
            kw: dict[str, Any] = {"load_op": load_op, "texel": texel, "clear_rects": rects, "suffix": suffix,
                                  "readback": "subsampled" if suffix or readback == "subsampled" else readback}
            problems += spec_bound_problems(sc, v, out.images, window=windows[v], **kw)
            if not turnip:  # information: what a 3x3-texel window would reject
                narrow += [p for p in spec_bound_problems(sc, v, out.images, **kw) if "larger than the density" in p]
    mismatches: list[Mapping[str, Any]] = []
    ra = _render_area(sc)
    if readback == "both":
        for v in range(sc.fdm_layers):
            for base in replay.image_names(v):
                a, b = np.asarray(out.images.get(base)), np.asarray(out.images.get(base + "_resampled"))
                x, y, rw, rh = ra
                if a.shape != b.shape or np.any(a[y:y + rh, x:x + rw] != b[y:y + rh, x:x + rw]):
                    problems.append(f"{base}_resampled: the subsampled image resampled with NEAREST differs from the "
                                    "non-subsampled one")
                    mismatches += list(first_mismatches(base + "_resampled", b[y:y + rh, x:x + rw],
                                                        a[y:y + rh, x:x + rw], limit=2))
    if (scene.get("fdm") or {}).get("cts"):
        for suffix in suffixes:
            for v in range(sc.fdm_layers):
                problems += cts_bound_problems(sc, v, out.images, texel, suffix, load_op)
    mask = ra if readback == "subsampled" else None
    note = ""
    if turnip:
        wants, probs, why = _oracle_images(device_scenario(scene, str(profile), path), scene, sc.framebuffer)
        if why:
            note = f"; turnip {profile}: {why}, no exact expectation"
        else:
            problems += probs
            n, mm = _exact(wants, out.images, "", mask)
            if n:
                problems.append(f"{n} pixel(s) differ from the model's plan for turnip {profile}")
                mismatches += mm
            else:
                note = f"; equal to the model's plan for turnip {profile}"
    else:
        who = f"driver {device.get('driver_id')} ({device.get('name', '?')})"
        try:
            wants, _, why = _oracle_images(scene["scenario"], scene, sc.framebuffer)
            n, _ = _exact(wants, out.images, "", mask) if not why else (-1, [])
            info = why or (f"{n} pixel(s) differ from turnip's plan for {sc.gpu.name}" if n
                           else f"equal to turnip's plan for {sc.gpu.name}")
        except (NotModelled, ScenarioError) as e:
            info = f"no turnip plan ({e})"
        if narrow:
            info += "; with a 3x3-texel window: " + "; ".join(narrow)
        note = f"; {who} is not a modelled turnip GPU: the spec bounds decide; information: {info}"
    note = window_note + note
    if problems:
        return Verdict(status="Fail", message="; ".join(problems) + note, mismatches=tuple(mismatches[:8]))
    views = sc.fdm_layers
    return Verdict(status="Pass", message=f"{views} view(s) within the spec bounds ({readback} readback, texel "
                                          f"{texel[0]}x{texel[1]}){note}")


# ---- the cases --------------------------------------------------------------------------------
#: the GPU of the scenes and their replay twins (HW bin scaling: the replay carries o')
GPU = "a750"
TILE = (96, 32)
#: the device-sized scenes of the core cases (B1, B5, B7, C1, C2, C4; B15 in fdm_backend_more):
#: large enough that turnip's own tiling (device_scenario) gives many bins with different areas on
#: a650/a730/a750 (at 384x256 it picked one or two bins, one fragment size: the exact check saw
#: little); their twins force coarser 192x128 tiles so that they stay fast on lavapipe
BIG = (1536, 1024)
BIG_TILE = (192, 128)
BIG_MAP = (48, 32)
#: C2's wrap-around sweep: k of offsets (8k, -8k) around a whole tile crossed by the twin (192:
#: k = 24) and by turnip's own tiles (a650 192 -> 24, a730 320 -> 40, a750 384 -> 48)
SWEEP_K = (0, 5, 24, 25, 40, 41, 48, 50)


def _bytes_density(nx: int, ny: int | None = None) -> float | list[float]:
    """The scenario density whose stored R8G8 bytes are ``floor(255/n)`` per axis."""
    if ny is None or ny == nx:
        return density_value(nx)
    return [density_value(nx), density_value(ny)]


def _constant_map(nx: int, ny: int, size: Pair, views: int = 1) -> dict[str, Any]:
    return {"format": "R8G8_UNORM",
            "views": [{"generator": "constant", "size": list(size), "density": _bytes_density(nx, ny)}] * views}


def _radial(size: Pair, center: Sequence[float], radii: Sequence[float], areas: Sequence[int | None]
            ) -> dict[str, Any]:
    """A radial layer with rings of ``floor(255/n)`` bytes (None: density 0)."""
    return {"generator": "radial", "size": list(size), "center": list(center), "radii": list(radii),
            "densities": [0.0 if n is None else density_value(n) for n in areas]}


def _sc(fb: Pair, density: dict[str, Any], **fields: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"gpu": GPU, "framebuffer": list(fb), "tile_size": list(TILE), "bin_merging": "off",
                         "density": density}
    s.update(fields)
    return s


def _checker(w: int, h: int) -> dict[str, Any]:
    """A ``w``×``h`` map of bytes 255 / 63 (areas 1x1 / 4x4) alternating per texel."""
    rows = [[density_value(1 if (i + j) % 2 == 0 else 4) for i in range(w)] for j in range(h)]
    return {"format": "R8G8_UNORM", "views": [{"values": rows}]}


def _big(density: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A device-sized scenario (:data:`BIG`, the twin's tile :data:`BIG_TILE`)."""
    return _sc(BIG, density, tile_size=list(BIG_TILE), **fields)


def _big_radial(center: Sequence[float], radii: Sequence[float]) -> dict[str, Any]:
    """A radial layer of the :data:`BIG` scenes, centre and radii in fractions of its width and
    height (radii of the width), rings 1x1 / 2x2 / 4x4."""
    w, h = BIG
    return _radial(BIG_MAP, (center[0] * w, center[1] * h), [r * w for r in radii], (1, 2, 4))


@attrs.frozen(kw_only=True)
class _Spec:
    group: str
    variant: str
    description: str
    scene: dict[str, Any]  # the replay scene
    paths: tuple[str, ...] = ("rp2",)
    readback: str = "auto"
    #: more keys of the scene's ``"fdm"`` options (``map_layers``, B2's ``cts``, ``map_timing``, ``twin``)
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    #: the variant of the replay twin when several specs share one scene (B2); None: ``variant``
    twin_variant: str | None = None


def twin_name(group: str, variant: str) -> str:
    """The replay case that runs an fdm scene with turnip's per-bin scheme."""
    return f"replay.twin.{group}.{variant}.{GPU}"


def _specs() -> list[_Spec]:
    both = ("rp2", "dynrend")
    specs: list[_Spec] = []
    fb, size = (288, 128), (9, 4)
    for nx, ny in ((1, 1), (1, 2), (2, 1), (2, 2), (4, 4)):
        specs.append(_Spec(group="uniform_area", variant=f"{nx}x{ny}", paths=both,
                           description=f"B1: a constant map of bytes floor(255/n) for area {nx}x{ny} on every bin "
                                       f"({BIG[0]}x{BIG[1]}: many device bins)",
                           scene=replay.replay_scene(_big(_constant_map(nx, ny, BIG_MAP)))))
    fov = {"format": "R8G8_UNORM", "views": [_radial((12, 8), (176, 120), (48, 96), (1, 2, 4))]}
    big_fov = {"format": "R8G8_UNORM", "views": [_big_radial((0.46, 0.47), (0.125, 0.25))]}
    specs.append(_Spec(group="foveated", variant="radial", paths=both,
                       description=f"B5: a radial map (bytes 255/127/63 in rings) across many bins ({BIG[0]}x{BIG[1]})",
                       scene=replay.replay_scene(_big(big_fov))))
    inv = {"format": "R8G8_UNORM", "views": [_radial((9, 4), (64, 32), (60, 100), (1, 2, None))]}
    specs.append(_Spec(group="invisible", variant="density0",
                       description="B6: density 0 far from the centre (undefined by the spec; turnip skips the bins, "
                                   "the pixels keep the background)",
                       scene=replay.replay_scene(_sc(fb, inv))))
    mv = {"format": "R8G8_UNORM",
          "views": [{"generator": "constant", "size": list(BIG_MAP), "density": density_value(n)} for n in (1, 2)]}
    specs.append(_Spec(group="multiview", variant="per_view_density", paths=both,
                       description=f"B7: 2 views, a 2-layer map: view 0 at 1x1, view 1 at 2x2 ({BIG[0]}x{BIG[1]})",
                       scene=replay.replay_scene(_big(mv, views=2))))
    specs.append(_Spec(group="scissor", variant="unaligned",
                       description="B14: a scissor not aligned to the 4x4 fragments (edges where turnip's outward "
                                   "rounding and the centre sample agree)",
                       scene=replay.replay_scene(_sc(fb, _constant_map(4, 4, size),
                                                     scissors=[[13, 6, fb[0] - 13 - 21, 97]]))))
    specs.append(_Spec(group="viewport", variant="unaligned",
                       description="B14: a viewport with edges between fragment centres over the radial map",
                       scene=replay.replay_scene(_sc((384, 256), fov, viewports=[[37.25, 21.75, 290.5, 201.5]]))))
    specs.append(_Spec(group="render_area", variant="partial",
                       description="a render area smaller than the framebuffer: outside keeps the background",
                       scene=replay.replay_scene(_sc(fb, _constant_map(2, 2, size), render_areas=[[40, 20, 200, 84]],
                                                     scissors=[[40, 20, 200, 84]]))))
    specs.append(_Spec(group="load_op", variant="load",
                       description="LOAD_OP_LOAD of the background, area 2x2",
                       scene=replay.replay_scene(_sc(fb, _constant_map(2, 2, size)), load_op="load")))
    specs.append(_Spec(group="subsampled", variant="nearest_equivalence", readback="both",
                       description="B17: the radial scene into a subsampled and a non-subsampled target; the "
                                   "subsampled one resampled with NEAREST must equal the other",
                       scene=replay.replay_scene(_sc((384, 256), fov))))
    if hasattr(replay, "clear_rects"):
        make_scene: Any = replay.replay_scene  # with clear_rects where the replay has them
        specs.append(_Spec(group="clear_attachments", variant="unaligned",
                           description="B13: vkCmdClearAttachments of rectangles not aligned to the 4x4 fragments "
                                       "(edges where turnip's outward rounding and the centre sample agree)",
                           scene=make_scene(_sc(fb, _constant_map(4, 4, size)),
                                            clear_rects=[[13, 6, 34, 41], [150, 66, 61, 45]])))
    big_off = {"format": "R8G8_UNORM", "views": [_big_radial((0.52, 0.36), (0.14, 0.28))]}
    specs.append(_Spec(group="offset", variant="both_axes", paths=both,
                       description=f"C1: FDM offset (8, -16): bins shifted, the extra row and column "
                                   f"({BIG[0]}x{BIG[1]})",
                       scene=replay.replay_scene(_big(big_off, fdm_offset_create_flag=True, fdm_offsets=[[8, -16]]))))
    for k in SWEEP_K:
        specs.append(_Spec(group="offset", variant=f"sweep_k{k:02d}",
                           description=f"C2: offset k*g = ({8 * k}, {-8 * k}) of the wrap-around sweep "
                                       f"(k in {', '.join(map(str, SWEEP_K))}: b_o wraps once a tile is crossed, "
                                       f"{BIG[0]}x{BIG[1]})",
                           scene=replay.replay_scene(_big(big_off, fdm_offset_create_flag=True,
                                                          fdm_offsets=[[8 * k, -8 * k]]))))
    specs.append(_Spec(group="offset", variant="dynrend_suspend_resume", paths=("dynrend",),
                       extra={"split": "suspend_resume", "twin": twin_name("offset", "both_axes")},
                       twin_variant="both_axes",
                       description="C6: C1's scene in two dynamic-rendering instances (left half SUSPENDING, right "
                                   "half RESUMING), the same offsets at both vkCmdEndRendering2EXT: the unsplit image",
                       scene=replay.replay_scene(_big(big_off, fdm_offset_create_flag=True, fdm_offsets=[[8, -16]]))))
    pv = {"format": "R8G8_UNORM", "views": [_radial((12, 8), (100, 64), (40, 80), (1, 2, 4)),
                                            _radial((12, 8), (190, 64), (40, 80), (1, 2, 4))]}
    big_pv = {"format": "R8G8_UNORM", "views": [_big_radial((0.35, 0.33), (0.14, 0.28)),
                                                _big_radial((0.66, 0.33), (0.14, 0.28))]}
    specs.append(_Spec(group="offset", variant="per_view", paths=both,
                       description=f"C4: 2 views with offsets (+8, +8) and (-8, -8): per-view bins and b_o "
                                   f"({BIG[0]}x{BIG[1]})",
                       scene=replay.replay_scene(_big(big_pv, views=2, fdm_offset_create_flag=True,
                                                      fdm_offsets=[[8, 8], [-8, -8]]))))
    one = {"format": "R8G8_UNORM", "views": [_radial((12, 8), (150, 70), (40, 80), (1, 2, 4))]}
    # B3: the spec-v3 texel size with the floor: 1025/16 gives T = 64 (the pre-v3 ceil: 128);
    # 33/16 gives T = 2, clamped to the device's minimum (turnip: 32)
    for n in (33, 1025):
        specs.append(_Spec(group="texel_size_floor", variant=f"fb{n}",
                           description=f"B3: a 16x16 checkerboard map (bytes 255/63 per texel) for a {n}x{n} "
                                       f"framebuffer: T = 2^ceil(log2(floor({n}/16))) decides which bins see which "
                                       "texel",
                           scene=replay.replay_scene(_sc((n, n), _checker(16, 16), tile_size=list(BIG_TILE)))))
    # B4: dynamic rendering, render area (64, 32, 192, 224) in a 256x256 image: T from the render
    # area's end, the outside keeps the background
    ra = [64, 32, 192, 224]
    specs.append(_Spec(group="dynrend_render_area_offset", variant="checker", paths=("dynrend",),
                       description="B4: render area (64, 32) + (192, 224) in a 256x256 image over an 8x8 checkerboard "
                                   "map: the texel size from offset + extent (dynamic rendering), outside untouched",
                       scene=replay.replay_scene(_sc((256, 256), _checker(8, 8), render_areas=[ra], scissors=[ra]))))
    # C3: clones of the CTS offset cases clamp_to_edge and oversized_fdm (§2.5), one view, 1024x1024,
    # low density 3/255 ("any large area") except where only the offset (fetch at p - offset) and the
    # clamp to the edge land: every fragment 1x1
    lo, hi = 3 / 255, density_value(1)
    for variant, (mw, mh), high, off in (
            ("clamp_x_pos", (32, 32), lambda i, j: i == 0, (1024, 0)),
            ("clamp_y_neg", (32, 32), lambda i, j: j == 31, (0, -1024)),
            ("oversized_x", (64, 32), lambda i, j: i >= 32, (-1024, 0)),
            ("oversized_y", (32, 64), lambda i, j: j >= 32, (0, -1024))):
        rows = [[hi if high(i, j) else lo for i in range(mw)] for j in range(mh)]
        cts = "clamp_to_edge" if variant.startswith("clamp") else "oversized_fdm"
        what = ("the one edge texel line the clamp lands on is high density" if variant.startswith("clamp")
                else "a map twice the size along the axis, high only in the half the offset brings in")
        specs.append(_Spec(group="offset", variant=f"cts_clamp_and_oversized.{variant}",
                           description=f"C3: the CTS {cts} clone, offset {list(off)} on 1024x1024: {what}; 1x1 "
                                       "fragments (turnip's plan: a shrunk first bin row or column may be coarser)",
                           scene=replay.replay_scene(_sc((1024, 1024), {"format": "R8G8_UNORM",
                                                                        "views": [{"values": rows}]},
                                                         tile_size=list(BIG_TILE), fdm_offset_create_flag=True,
                                                         fdm_offsets=[list(off)]))))
    # B2: the CTS main tree's 1-view scene (§2.3) as this backend renders it: a constant 16x16 map
    # of the requested area, render size 64 (x4.0) or 60 (x3.75); the full-screen triangle covers
    # the edges the CTS's 9 mirrored quads were added for; readback through the subsampled NEAREST
    # pass (the CTS's output pass) or a non-subsampled copy; the CTS bounds (§2.4) on top
    for n in (64, 60):
        for ax, ay in ((1, 2), (2, 1), (2, 2)):
            scene = replay.replay_scene(_sc((n, n), _constant_map(ax, ay, (16, 16))))
            twin_variant = f"area_{ax}_{ay}.{n}"
            for timing in MAP_TIMINGS:
                for sub in ("subsampled", "nonsubsampled"):
                    if timing != "static" and (sub != "subsampled" or (ax, ay, n) != (2, 2, 64)):
                        continue
                    specs.append(_Spec(
                        group="cts_histogram", variant=f"{timing}_{sub}_{ax}_{ay}.{n}", readback=sub,
                        extra={"cts": True, "map_timing": timing, "twin": twin_name("cts_histogram", twin_variant)},
                        description=f"B2: the CTS {timing}_{sub}_{ax}_{ay} case at render size {n} (1 view): "
                                    "FragSize and histogram bounds, exact on turnip",
                        scene=scene, twin_variant=twin_variant))
    specs.append(_Spec(group="multiview", variant="single_layer_map", extra={"map_layers": 1},
                       description="B8: 2 views and a one-layer map: both views fetch layer baseArrayLayer (render "
                                   "pass 2: a one-layer FDM view with a view mask)",
                       scene=replay.replay_scene(_sc((288, 192), one, views=2))))
    specs.append(_Spec(group="multiview", variant="viewport_index_shared", paths=both,
                       description="B9: B7's per-view densities with a vertex shader writing gl_ViewportIndex: turnip "
                                   "shares one viewport, each axis the minimum area over the views",
                       scene=replay.replay_scene(_sc((288, 192), pv, views=2, writes_viewport_index=True))))
    specs.append(_Spec(group="offset", variant="shared_viewport_fallback",
                       description="C5: C4's per-view offsets with gl_ViewportIndex written: the shared viewport "
                                   "cannot follow per-view offsets (turnip's fallback)",
                       scene=replay.replay_scene(_sc((288, 192), pv, views=2, writes_viewport_index=True,
                                                     fdm_offset_create_flag=True, fdm_offsets=[[8, 8], [-8, -8]]))))
    return specs


def fdm_cases() -> list[Case]:
    """``fdm.<group>.<variant>.<path>``: each a scene of :func:`replay_twins` with its render path."""
    cases = []
    for s in _specs():
        for path in s.paths:
            how = "render pass 2" if path == "rp2" else "dynamic rendering"
            cases.append(Case(name=f"fdm.{s.group}.{s.variant}.{path}", backend="fdm",
                              description=f"{s.description} ({how}; replay twin "
                                          f"{twin_name(s.group, s.twin_variant or s.variant)})",
                              scene=fdm_scene(s.scene, path, s.readback, **s.extra), run=run_fdm,
                              judge=judge_fdm))
    from . import fdm_backend_more, fdm_backend_sampling

    return cases + fdm_backend_more.fdm_cases() + fdm_backend_sampling.fdm_cases()


def replay_twins() -> list[Case]:
    """The replay cases of the fdm scenes (the same replay scene, run by turnip's per-bin scheme
    on any device: CI exercises the scenes, the oracle and the comparison on lavapipe)."""
    from . import fdm_backend_more

    out = []
    seen = set()
    for s in _specs():
        name = twin_name(s.group, s.twin_variant or s.variant)
        if name in seen:  # B2: several cases (readback, map timing) share one scene
            continue
        seen.add(name)
        shared = bool(s.scene["scenario"].get("writes_viewport_index"))
        # the replay refuses scenarios writing gl_ViewportIndex; its Replayer draws them through
        # slot 0 as turnip's shared viewport does (fdm_backend_more.run_replay_shared)
        run = fdm_backend_more.run_replay_shared if shared else replay.run_replay
        judge = fdm_backend_more.judge_replay_shared if shared else replay.judge_replay
        out.append(Case(name=name, backend="replay",
                        description=f"{s.description} (the replay twin of fdm.{s.group}.{s.variant})",
                        scene=s.scene, run=run, judge=judge))
    from . import fdm_backend_sampling

    return out + fdm_backend_more.replay_twins() + fdm_backend_sampling.replay_twins()

