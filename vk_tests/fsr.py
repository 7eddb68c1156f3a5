"""The ``fsr`` backend: the model's fragment areas as a VK_KHR_fragment_shading_rate attachment,
judged by the replay backend's large-fragment oracle (issue 9, design §3 group D).

No lent device has VK_EXT_fragment_density_map, but the NVIDIA H100 has attachment fragment
shading rates: a coarse fragment of ``w × h`` pixels shaded once.  A case plans an FDM scenario
with :func:`fdm.plan_render_pass` (GMEM passes, as the replay does), writes every rendered
bin's fragment area ``fa`` into the texels of a shading-rate attachment that the bin covers
(bins must fall on the device's attachment texel grid, 16 × 16 on the H100), and draws one
full-screen triangle through a pipeline whose rate is 1×1 with the combiner ops
``[KEEP, REPLACE]``: the pipeline rate is kept over the (unwritten) primitive rate, then
replaced by the attachment's.  The fragment shader (``vk_tests/shaders/fsr_coord.frag``)
writes ``(2·FragCoord.xy, w, h)`` with ``(w, h)`` decoded from ``gl_ShadingRateEXT``, the raw
rate and ``gl_ViewIndex``, and a UNORM8 gradient of FragCoord.

The judge (:func:`judge_fsr`) uses :func:`vk_tests.replay.oracle_view`, the same oracle as the
replay backend (bins and areas from the plan, nothing else of the model's arithmetic), on a
plan whose areas are the spec's clamp of ``fa`` to the device's supported rates
(:func:`clamp_rate`, ``primsrast.adoc`` "Combining the Fragment Shading Rates"; the supported
rates are recorded in the output's info so ``vk check`` repeats the judgement offline).
Where FSR and FDM semantics differ the judge follows FSR and says so (docs/fsr.md):

* the fragment grid: FSR aligns a ``w × h`` fragment to the framebuffer origin
  (``w·floor(x/w)``), FDM to its bin's start; the cases only use bins whose start is a
  multiple of ``fa`` (checked: :func:`rate_texels`), where both grids are the same;
* coverage: an FSR fragment has a sample set per pixel, so a partly covered fragment writes
  exactly the covered pixels (still with the fragment's shading: FragCoord = its centre); an
  FDM fragment has one scaled sample set and writes all its pixels iff its centre is covered.
  :func:`oracle_fsr` applies the user scissor per pixel (``fsr.coverage.*`` shows the
  difference); with full coverage they agree;
* MSAA: an FSR ``w × h`` fragment at ``s`` samples covers ``w·h·s`` samples (the device's
  ``maxFragmentShadingRateCoverageSamples`` bounds it), an FDM fragment ``s``; after a resolve
  of a fully covered fragment both give the fragment's value in every pixel;
* the size built-in: FDM has ``FragSizeEXT``, FSR ``ShadingRateKHR`` (log2 encoded); decoded
  they are the same pair.

Without the extension (lavapipe) every case is NotSupported naming what is missing.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

import fdm
from fdm.errors import NotModelled, ScenarioError
from fdm.geometry import Rect
from fdm.plan import RenderPassPlan

from .cases import Case, CaseOutput, Scene, Verdict, first_mismatches
from .graphics import load_spv, require_graphics
from .harness import Handle, NotSupported, Vulkan
from .replay import BG, CLEAR, oracle_view, plan_scene

__all__ = ["EXTENSION", "RATE_LAYOUT", "FsrCaps", "SupportedRate", "clamp_rate", "decode_rate", "encode_rate",
           "fsr_cases", "fsr_scene", "image_names", "judge_fsr", "missing", "oracle_fsr", "probe", "rate_texels",
           "run_fsr"]

Pair = tuple[int, int]

EXTENSION = "VK_KHR_fragment_shading_rate"
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
#: the gradient attachment may differ by one step from the exact value (UNORM rounding)
GRADIENT_TOLERANCE = 1
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


def _plan(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan, int]:
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


def _rates(info: Mapping[str, Any]) -> list[SupportedRate]:
    return [SupportedRate(width=int(r[0]), height=int(r[1]), sample_counts=int(r[2])) for r in info["rates"]]


def clamped_areas(plan: RenderPassPlan, view: int, rates: Sequence[SupportedRate], samples: int) -> list[Pair]:
    """Per tile, the area the device must shade view ``view``'s bin with (:func:`clamp_rate`
    of the plan's area); invisible bins keep theirs."""
    out = []
    for tile in plan.tiles:
        tv = tile.views[view]
        out.append(clamp_rate(tv.frag_area, rates, samples) if tv.visible else tv.frag_area)
    return out


def _with_areas(plan: RenderPassPlan, areas: Sequence[Sequence[Pair]]) -> RenderPassPlan:
    """``plan`` with the fragment area of tile ``i``, view ``v`` replaced by ``areas[v][i]``."""
    tiles = tuple(attrs.evolve(t, views=tuple(attrs.evolve(tv, frag_area=areas[v][i]) for v, tv in enumerate(t.views)))
                  for i, t in enumerate(plan.tiles))
    return attrs.evolve(plan, tiles=tiles)


# ---- the oracle ----------------------------------------------------------------------------
def _gradient(coord: npt.NDArray[np.uint16], size: Pair, view: int) -> npt.NDArray[np.uint8]:
    """The UNORM8 gradient of a coordinate image (``2·c`` in channels 0, 1): round(c/size·255)
    in red and green, round((0.25 + 0.5·view)·255) in blue, 255 in alpha."""
    out = np.empty(coord.shape[:2] + (4,), dtype=np.uint8)
    for ch in (0, 1):
        # c / size * 255 rounded half up, in integers: (2c·255 + size) // (2·size)
        out[..., ch] = (coord[..., ch].astype(np.int64) * 255 + size[ch]) // (2 * size[ch])
    out[..., 2] = round((0.25 + 0.5 * view) * 255)
    out[..., 3] = 255
    return out


def oracle_fsr(scene: Scene, info: Mapping[str, Any]) -> tuple[dict[str, npt.NDArray[Any]], list[str], list[str]]:
    """The images FSR must produce: per view, :func:`vk_tests.replay.oracle_view` with the
    plan's areas clamped to the recorded supported rates and the scissor lifted, then the
    scissor applied per pixel (FSR coverage: a sample set per pixel); the ids image
    ``(encoded rate, view, 0, 0)``; the gradient.  Undrawn pixels hold ``CLEAR`` (0 for the
    gradient).  Also the problems of the bins (from the oracle) and the notes where FSR's
    coverage differs from FDM's (pixels the FDM oracle would give otherwise)."""
    sc, plan, samples = _plan(scene)
    rates = _rates(info)
    areas = [clamped_areas(plan, v, rates, samples) for v in range(sc.fdm_layers)]
    fsr_plan = _with_areas(plan, areas)
    w, h = sc.framebuffer
    full = attrs.evolve(sc, scissors=(Rect(0, 0, w, h),))
    s = sc.scissors[0]
    inside = np.zeros((h, w), dtype=bool)
    inside[max(s.y, 0):min(s.y + s.h, h), max(s.x, 0):min(s.x + s.w, w)] = True
    wants: dict[str, npt.NDArray[Any]] = {}
    problems: list[str] = []
    notes: list[str] = []
    for v in range(sc.fdm_layers):
        want, probs = oracle_view(full, fsr_plan, v, "clear")
        problems += probs
        want[~inside] = CLEAR
        fdm_want, _ = oracle_view(sc, fsr_plan, v, "clear")
        differ = int(np.count_nonzero(np.any(fdm_want != want, axis=2)))
        if differ:
            notes.append(f"view{v}: {differ} pixel(s) where FSR's per-pixel coverage differs from FDM's per-fragment "
                         "coverage (the FSR rule is judged)")
        drawn = np.any(want != np.array(CLEAR, dtype=np.uint16), axis=2) & np.any(want != np.array(BG), axis=2)
        ids = np.zeros_like(want)
        ids[...] = CLEAR
        fw, fh = want[..., 2].astype(np.int64), want[..., 3].astype(np.int64)
        enc = np.where(fw == 4, 8, np.where(fw == 2, 4, 0)) | np.where(fh == 4, 2, np.where(fh == 2, 1, 0))
        ids[..., 0] = np.where(drawn, enc, CLEAR[0])
        ids[..., 1] = np.where(drawn, v, CLEAR[1])
        ids[..., 2] = np.where(drawn, 0, CLEAR[2])
        ids[..., 3] = np.where(drawn, 0, CLEAR[3])
        grad = _gradient(want, (w, h), v)
        grad[~drawn] = 0
        names = image_names(v)
        wants[names[0]], wants[names[1]], wants[names[2]] = want, ids, grad
    return wants, problems, notes


def judge_fsr(scene: Scene, out: CaseOutput) -> Verdict:
    """Every image against :func:`oracle_fsr`: exact, the gradient within one UNORM8 step.
    An output rendered without a shading-rate attachment fails."""
    if out.info.get("rate_attachment") is not True:
        return Verdict(status="Fail", message="rendered without a shading-rate attachment: nothing of FSR was checked")
    wants, problems, notes = oracle_fsr(scene, out.info)
    mismatches: list[Mapping[str, Any]] = []
    pixels = 0
    for name, want in wants.items():
        got = out.images.get(name)
        if got is None:
            problems.append(f"{name}: no image read back")
            continue
        tol = GRADIENT_TOLERANCE if name.endswith("_gradient") else 0
        mm = first_mismatches(name, np.asarray(got), want, tolerance=tol)
        pixels += want.shape[0] * want.shape[1]
        if mm:
            if got.shape == want.shape:
                diff = np.abs(np.asarray(got, dtype=np.int64) - want.astype(np.int64)).max(axis=2) > tol
                problems.append(f"{name}: {int(np.count_nonzero(diff))} of {want.shape[0] * want.shape[1]} pixels "
                                "differ from the oracle")
            else:
                problems.append(f"{name}: shape {list(got.shape)}, want {list(want.shape)}")
            mismatches += mm[:4]
    note = f"; {'; '.join(notes)}" if notes else ""
    if problems:
        return Verdict(status="Fail", message="; ".join(problems) + note, mismatches=tuple(mismatches))
    return Verdict(status="Pass", message=f"{pixels} pixels of {len(wants)} image(s) equal the large-fragment oracle "
                                          f"at the clamped shading rates{note}")


# ---- the device ---------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class FsrCaps:
    """What the device offers for the fsr cases (features, properties, supported rates)."""

    extension: bool
    pipeline: bool = False
    attachment: bool = False
    multiview: bool = False
    max_views: int = 1
    texel_min: Pair = (0, 0)
    texel_max: Pair = (0, 0)
    layered: bool = False
    max_fragment_size: Pair = (1, 1)
    max_rasterization_samples: int = 1
    max_coverage_samples: int = 0
    rates: tuple[SupportedRate, ...] = ()


def _supported_rates(ctx: Vulkan) -> tuple[SupportedRate, ...]:
    """``vkGetPhysicalDeviceFragmentShadingRatesKHR`` called directly: the binding's wrapper
    hands the driver output structs whose sType is 0 (VUID-VkPhysicalDeviceFragmentShadingRateKHR-
    sType-sType), so the array is allocated and typed here."""
    vk = ctx.vk
    name = b"vkGetPhysicalDeviceFragmentShadingRatesKHR"
    raw = vk.lib.vkGetInstanceProcAddr(ctx.instance, name)
    if raw == vk.ffi.NULL:
        raise NotSupported(f"device {ctx.info.name}: {name.decode()} not found")
    fn = vk.ffi.cast("PFN_vkGetPhysicalDeviceFragmentShadingRatesKHR", raw)
    count = vk.ffi.new("uint32_t*")
    fn(ctx.physical, count, vk.ffi.NULL)
    arr = vk.ffi.new("VkPhysicalDeviceFragmentShadingRateKHR[]", count[0])
    for i in range(count[0]):
        arr[i].sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FRAGMENT_SHADING_RATE_KHR
    res = fn(ctx.physical, count, arr)
    if res != vk.VK_SUCCESS:
        raise NotSupported(f"device {ctx.info.name}: {name.decode()} returned {res}")
    return tuple(SupportedRate(width=arr[i].fragmentSize.width, height=arr[i].fragmentSize.height,
                               sample_counts=arr[i].sampleCounts) for i in range(count[0]))


def probe(ctx: Vulkan) -> FsrCaps:
    """Query the extension, the FSR and multiview features and properties, and the rates."""
    vk = ctx.vk
    has = EXTENSION in ctx.device_extensions()
    # chains are built innermost-first and every link is kept (docs/spec/vulkan-fdm-and-cts.md §4.2)
    mv = vk.VkPhysicalDeviceMultiviewFeatures()
    ff = vk.VkPhysicalDeviceFragmentShadingRateFeaturesKHR(pNext=mv) if has else None
    f2 = vk.VkPhysicalDeviceFeatures2(pNext=ff if has else mv)
    vk.vkGetPhysicalDeviceFeatures2(ctx.physical, f2)
    mvp = vk.VkPhysicalDeviceMultiviewProperties()
    fp = vk.VkPhysicalDeviceFragmentShadingRatePropertiesKHR(pNext=mvp) if has else None
    p2 = vk.VkPhysicalDeviceProperties2(pNext=fp if has else mvp)
    vk.vkGetPhysicalDeviceProperties2(ctx.physical, p2)
    multiview = bool(mv.multiview)
    if not has or ff is None or fp is None:
        return FsrCaps(extension=False, multiview=multiview, max_views=int(mvp.maxMultiviewViewCount))
    return FsrCaps(
        extension=True, pipeline=bool(ff.pipelineFragmentShadingRate),
        attachment=bool(ff.attachmentFragmentShadingRate),
        multiview=multiview, max_views=int(mvp.maxMultiviewViewCount),
        texel_min=(fp.minFragmentShadingRateAttachmentTexelSize.width,
                   fp.minFragmentShadingRateAttachmentTexelSize.height),
        texel_max=(fp.maxFragmentShadingRateAttachmentTexelSize.width,
                   fp.maxFragmentShadingRateAttachmentTexelSize.height),
        layered=bool(fp.layeredShadingRateAttachments),
        max_fragment_size=(fp.maxFragmentSize.width, fp.maxFragmentSize.height),
        max_rasterization_samples=int(fp.maxFragmentShadingRateRasterizationSamples),
        max_coverage_samples=int(fp.maxFragmentShadingRateCoverageSamples), rates=_supported_rates(ctx))


def missing(caps: FsrCaps, views: int, samples: int, device: str = "the device") -> str | None:
    """The first thing the device lacks for a scene of ``views`` views at ``samples`` samples,
    named as the spec names it; None when nothing is missing."""
    if not caps.extension:
        return f"{device}: extension {EXTENSION} is not supported"
    if not caps.attachment:
        return f"{device}: feature VkPhysicalDeviceFragmentShadingRateFeaturesKHR::attachmentFragmentShadingRate " \
               "is not supported"
    # every case's fragment shader reads gl_ViewIndex (SPIR-V capability MultiView), which
    # needs the multiview feature enabled even for a single-view pass (VUID-01091)
    if not caps.multiview:
        return f"{device}: feature VkPhysicalDeviceMultiviewFeatures::multiview is not supported"
    if views > 1:
        if caps.max_views < views:
            return f"{device}: maxMultiviewViewCount {caps.max_views} < {views} views"
        if not caps.layered:
            return f"{device}: property VkPhysicalDeviceFragmentShadingRatePropertiesKHR::" \
                   "layeredShadingRateAttachments is VK_FALSE (a shading-rate layer per view)"
    if samples > 1 and caps.max_rasterization_samples < samples:
        return f"{device}: maxFragmentShadingRateRasterizationSamples {caps.max_rasterization_samples} < {samples}"
    return None


class _FsrDevice(Vulkan):
    """A second logical device on the run's physical device, with VK_KHR_fragment_shading_rate
    (attachment and pipeline rates) and multiview enabled: the suite's device enables no
    extension or feature.  It shares the instance, so the run's validation messenger records
    its messages (in the same list), and :meth:`close` destroys only the device."""

    def __init__(self, parent: Vulkan, rate: bool) -> None:
        self.vk = vk = parent.vk
        self.messages = parent.messages
        self._owned = []
        self.instance = None  # the parent's: not destroyed here
        self.messenger = None
        self.device = None
        self.physical, self.info = parent.physical, parent.info
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.info.queue_family, queueCount=1,
                                           pQueuePriorities=[1.0])
        mv = vk.VkPhysicalDeviceMultiviewFeatures(multiview=vk.VK_TRUE)  # the shader reads gl_ViewIndex
        ff = vk.VkPhysicalDeviceFragmentShadingRateFeaturesKHR(
            pNext=mv, pipelineFragmentShadingRate=vk.VK_TRUE, attachmentFragmentShadingRate=vk.VK_TRUE)
        f2 = vk.VkPhysicalDeviceFeatures2(pNext=ff if rate else mv)
        exts = [EXTENSION] if rate else []
        info = vk.VkDeviceCreateInfo(pNext=f2, pQueueCreateInfos=[qinfo], ppEnabledExtensionNames=exts)
        self.device = vk.vkCreateDevice(self.physical, info, None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.info.queue_family, 0)
        pinfo = vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.info.queue_family,
                                           flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)
        self.pool = vk.vkCreateCommandPool(self.device, pinfo, None)
        self._own(lambda: vk.vkDestroyCommandPool(self.device, self.pool, None))
        self.memory_props = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)


class _Target:
    """An image of ``layers`` layers and ``samples`` samples with one view over all layers."""

    def __init__(self, dev: Vulkan, size: Pair, fmt: int, layers: int, samples: int, usage: int) -> None:
        vk = dev.vk
        self.size, self.fmt, self.layers = size, fmt, layers
        info = vk.VkImageCreateInfo(
            imageType=vk.VK_IMAGE_TYPE_2D, format=fmt, extent=vk.VkExtent3D(width=size[0], height=size[1], depth=1),
            mipLevels=1, arrayLayers=layers, samples=samples, tiling=vk.VK_IMAGE_TILING_OPTIMAL, usage=usage,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED)
        self.handle = image = vk.vkCreateImage(dev.device, info, None)
        req = vk.vkGetImageMemoryRequirements(dev.device, image)
        alloc = vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=dev.memory_type(
            req.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        memory = vk.vkAllocateMemory(dev.device, alloc, None)
        vk.vkBindImageMemory(dev.device, image, memory, 0)
        dev._own(lambda: vk.vkDestroyImage(dev.device, image, None))
        dev._own(lambda: vk.vkFreeMemory(dev.device, memory, None))
        vinfo = vk.VkImageViewCreateInfo(
            image=image, viewType=vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if layers > 1 else vk.VK_IMAGE_VIEW_TYPE_2D,
            format=fmt, subresourceRange=self.range(vk))
        self.view = view = vk.vkCreateImageView(dev.device, vinfo, None)
        dev._own(lambda: vk.vkDestroyImageView(dev.device, view, None))

    def range(self, vk: Any) -> Handle:
        return vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=0, levelCount=1,
                                          baseArrayLayer=0, layerCount=self.layers)

    def layers_of(self, vk: Any) -> Handle:
        return vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0,
                                           layerCount=self.layers)

    def barrier(self, dev: Vulkan, cb: Handle, old: int, new: int, src: tuple[int, int], dst: tuple[int, int]) -> None:
        vk = dev.vk
        b = vk.VkImageMemoryBarrier(srcAccessMask=src[1], dstAccessMask=dst[1], oldLayout=old, newLayout=new,
                                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.handle,
                                    subresourceRange=self.range(vk))
        vk.vkCmdPipelineBarrier(cb, src[0], dst[0], 0, 0, None, 0, None, 1, [b])


def _render_pass(dev: Vulkan, fmts: Sequence[int], samples: int, views: int, rate_texel: Pair | None) -> Handle:
    """A render pass 2 with one subpass: the colour attachments (cleared; at ``samples``
    samples, resolved into single-sample attachments when ``samples > 1``), ``viewMask`` of
    ``views`` views (none for one view), and the shading-rate attachment (last) when
    ``rate_texel`` is given.  Attachments read back end in ``TRANSFER_SRC_OPTIMAL``."""
    vk = dev.vk
    color_layout = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
    src = vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
    dont = vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE

    def desc(fmt: int, n: int, load: int, store: int, initial: int, final: int) -> Handle:
        return vk.VkAttachmentDescription2(format=fmt, samples=n, loadOp=load, storeOp=store, stencilLoadOp=dont,
                                           stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=initial,
                                           finalLayout=final)

    msaa = samples > 1
    store = vk.VK_ATTACHMENT_STORE_OP_STORE
    atts = [desc(f, samples, vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
                 vk.VK_ATTACHMENT_STORE_OP_DONT_CARE if msaa else store, vk.VK_IMAGE_LAYOUT_UNDEFINED,
                 color_layout if msaa else src) for f in fmts]
    refs = [vk.VkAttachmentReference2(attachment=i, layout=color_layout, aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT)
            for i in range(len(fmts))]
    resolves = None
    if msaa:
        atts += [desc(f, vk.VK_SAMPLE_COUNT_1_BIT, dont, store, vk.VK_IMAGE_LAYOUT_UNDEFINED, src) for f in fmts]
        resolves = [vk.VkAttachmentReference2(attachment=len(fmts) + i, layout=color_layout,
                                              aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT) for i in range(len(fmts))]
    rate_info = None
    if rate_texel is not None:
        atts.append(desc(getattr(vk, RATE_FORMAT), vk.VK_SAMPLE_COUNT_1_BIT, vk.VK_ATTACHMENT_LOAD_OP_LOAD,
                         vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, RATE_LAYOUT, RATE_LAYOUT))
        rate_ref = vk.VkAttachmentReference2(attachment=len(atts) - 1, layout=RATE_LAYOUT)
        rate_info = vk.VkFragmentShadingRateAttachmentInfoKHR(
            pFragmentShadingRateAttachment=rate_ref,
            shadingRateAttachmentTexelSize=vk.VkExtent2D(width=rate_texel[0], height=rate_texel[1]))
    sub = vk.VkSubpassDescription2(pNext=rate_info, pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
                                   viewMask=(1 << views) - 1 if views > 1 else 0, pColorAttachments=refs,
                                   pResolveAttachments=resolves)
    # the pass's writes (colour and resolve) happen-before the copies that read them back
    dep = vk.VkSubpassDependency2(srcSubpass=0, dstSubpass=vk.VK_SUBPASS_EXTERNAL,
                                  srcStageMask=vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                                  dstStageMask=vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  srcAccessMask=vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                                  dstAccessMask=vk.VK_ACCESS_TRANSFER_READ_BIT)
    info = vk.VkRenderPassCreateInfo2(pAttachments=atts, pSubpasses=[sub], pDependencies=[dep])
    rp = vk.vkCreateRenderPass2(dev.device, info, None)
    dev._own(lambda: vk.vkDestroyRenderPass(dev.device, rp, None))
    return rp


def _pipeline(dev: Vulkan, rp: Handle, samples: int, rate: bool) -> tuple[Handle, Handle]:
    """The full-screen triangle with ``fsr_coord.frag`` (``fsr_coord_1x1.frag`` without
    ``rate``): three colour attachments, dynamic viewport and scissor, no sample shading
    (sample shading forces 1×1), and the rate state ``1×1, [KEEP, REPLACE]``."""
    vk = dev.vk
    rng = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, offset=0, size=8)
    linfo = vk.VkPipelineLayoutCreateInfo(pPushConstantRanges=[rng])
    layout = vk.vkCreatePipelineLayout(dev.device, linfo, None)
    dev._own(lambda: vk.vkDestroyPipelineLayout(dev.device, layout, None))
    vert = dev.shader_module(load_spv("fullscreen.vert.spv"))
    frag = dev.shader_module(load_spv("fsr_coord.frag.spv" if rate else "fsr_coord_1x1.frag.spv"))
    stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert, pName="main"),
              vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag, pName="main")]
    vertex_input = vk.VkPipelineVertexInputStateCreateInfo()
    assembly = vk.VkPipelineInputAssemblyStateCreateInfo(topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST)
    viewport = vk.VkPipelineViewportStateCreateInfo(viewportCount=1, scissorCount=1)
    raster = vk.VkPipelineRasterizationStateCreateInfo(polygonMode=vk.VK_POLYGON_MODE_FILL,
                                                       cullMode=vk.VK_CULL_MODE_NONE,
                                                       frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE, lineWidth=1.0)
    multisample = vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=samples,
                                                          sampleShadingEnable=vk.VK_FALSE)
    mask = (vk.VK_COLOR_COMPONENT_R_BIT | vk.VK_COLOR_COMPONENT_G_BIT | vk.VK_COLOR_COMPONENT_B_BIT
            | vk.VK_COLOR_COMPONENT_A_BIT)
    blend_att = vk.VkPipelineColorBlendAttachmentState(blendEnable=vk.VK_FALSE, colorWriteMask=mask)
    blend = vk.VkPipelineColorBlendStateCreateInfo(pAttachments=[blend_att] * len(ATTACHMENTS))
    dynamic = vk.VkPipelineDynamicStateCreateInfo(
        pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR])
    # combinerOps[0] KEEP: the pipeline's 1x1 over the primitive rate (not written);
    # combinerOps[1] REPLACE: the attachment's rate replaces it
    state = vk.VkPipelineFragmentShadingRateStateCreateInfoKHR(
        fragmentSize=vk.VkExtent2D(width=1, height=1),
        combinerOps=[vk.VK_FRAGMENT_SHADING_RATE_COMBINER_OP_KEEP_KHR,
                     vk.VK_FRAGMENT_SHADING_RATE_COMBINER_OP_REPLACE_KHR]) if rate else None
    info = vk.VkGraphicsPipelineCreateInfo(
        pNext=state, pStages=stages, pVertexInputState=vertex_input, pInputAssemblyState=assembly,
        pViewportState=viewport, pRasterizationState=raster, pMultisampleState=multisample, pColorBlendState=blend,
        pDynamicState=dynamic, layout=layout, renderPass=rp, subpass=0)
    pipe = vk.vkCreateGraphicsPipelines(dev.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
    dev._own(lambda: vk.vkDestroyPipeline(dev.device, pipe, None))
    return pipe, layout


def _require_formats(ctx: Vulkan, samples: int, rate: bool) -> None:
    vk = ctx.vk
    require_graphics(ctx, "rgba16ui", blit=False)
    require_graphics(ctx, "rgba8", blit=False)
    for _, attr, _ in ATTACHMENTS:
        fmt = getattr(vk, attr)
        props = vk.vkGetPhysicalDeviceImageFormatProperties(
            ctx.physical, fmt, vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_TILING_OPTIMAL,
            vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, 0)
        if not props.sampleCounts & samples:
            raise NotSupported(f"device {ctx.info.name}: {attr} colour attachments lack {samples} samples")
    if rate:
        ctx.require_format(getattr(vk, RATE_FORMAT), vk.VK_FORMAT_FEATURE_FRAGMENT_SHADING_RATE_ATTACHMENT_BIT_KHR,
                           "FRAGMENT_SHADING_RATE_ATTACHMENT")


def _render(ctx: Vulkan, scene: Scene, rate: bool, texel: Pair) -> dict[str, npt.NDArray[Any]]:
    """Render the scene on a second device (:class:`_FsrDevice`) and read every view back.
    With ``rate`` the model's areas are the shading-rate attachment; without it (devices
    without the extension, tests only) the same pass runs at 1×1."""
    sc, plan, samples = _plan(scene)
    vk = ctx.vk
    w, h = sc.framebuffer
    views = sc.fdm_layers
    fmts = [getattr(vk, attr) for _, attr, _ in ATTACHMENTS]
    with _FsrDevice(ctx, rate=rate) as dev:
        color_usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
        colors = [_Target(dev, (w, h), f, views, samples, vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT if samples > 1
                          else color_usage) for f in fmts]
        resolves = [_Target(dev, (w, h), f, views, 1, color_usage) for f in fmts] if samples > 1 else []
        reads = resolves or colors
        rate_img = None
        staging = None
        if rate:
            grid = np.stack([rate_texels(sc, plan, v, texel) for v in range(views)])
            rate_img = _Target(dev, (grid.shape[2], grid.shape[1]), getattr(vk, RATE_FORMAT), views, 1,
                               vk.VK_IMAGE_USAGE_FRAGMENT_SHADING_RATE_ATTACHMENT_BIT_KHR
                               | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
            staging = dev.buffer(grid.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host_visible=True)
            staging.write(np.ascontiguousarray(grid))
        rp = _render_pass(dev, fmts, samples, views, texel if rate else None)
        attachments = [t.view for t in colors + resolves] + ([rate_img.view] if rate_img is not None else [])
        finfo = vk.VkFramebufferCreateInfo(renderPass=rp, pAttachments=attachments, width=w, height=h, layers=1)
        fb = vk.vkCreateFramebuffer(dev.device, finfo, None)
        dev._own(lambda: vk.vkDestroyFramebuffer(dev.device, fb, None))
        pipe, layout = _pipeline(dev, rp, samples, rate)
        itemsizes = [4 * np.dtype(dt).itemsize for _, _, dt in ATTACHMENTS]
        bufs = [dev.buffer(w * h * views * n, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_visible=True)
                for n in itemsizes]
        s = sc.scissors[0]
        x0, y0 = max(s.x, 0), max(s.y, 0)
        scissor = (x0, y0, max(min(s.x + s.w, w) - x0, 0), max(min(s.y + s.h, h) - y0, 0))

        def record(cb: Handle) -> None:
            if rate_img is not None and staging is not None:
                rate_img.barrier(dev, cb, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                 (vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0),
                                 (vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_ACCESS_TRANSFER_WRITE_BIT))
                region = vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                                              imageSubresource=rate_img.layers_of(vk),
                                              imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                              imageExtent=vk.VkExtent3D(width=rate_img.size[0],
                                                                        height=rate_img.size[1], depth=1))
                vk.vkCmdCopyBufferToImage(cb, staging.handle, rate_img.handle,
                                          vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])
                rate_img.barrier(dev, cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, RATE_LAYOUT,
                                 (vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_ACCESS_TRANSFER_WRITE_BIT),
                                 (vk.VK_PIPELINE_STAGE_FRAGMENT_SHADING_RATE_ATTACHMENT_BIT_KHR,
                                  vk.VK_ACCESS_FRAGMENT_SHADING_RATE_ATTACHMENT_READ_BIT_KHR))
            clears = [vk.VkClearValue(color=vk.VkClearColorValue(uint32=list(CLEAR))),
                      vk.VkClearValue(color=vk.VkClearColorValue(uint32=list(CLEAR))),
                      vk.VkClearValue(color=vk.VkClearColorValue(float32=[0.0, 0.0, 0.0, 0.0]))]
            area = vk.VkRect2D(offset=vk.VkOffset2D(x=0, y=0), extent=vk.VkExtent2D(width=w, height=h))
            begin = vk.VkRenderPassBeginInfo(renderPass=rp, framebuffer=fb, renderArea=area, pClearValues=clears)
            vk.vkCmdBeginRenderPass(cb, begin, vk.VK_SUBPASS_CONTENTS_INLINE)
            vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
            vp = vk.VkViewport(x=0.0, y=0.0, width=float(w), height=float(h), minDepth=0.0, maxDepth=1.0)
            vk.vkCmdSetViewport(cb, 0, 1, [vp])
            rect = vk.VkRect2D(offset=vk.VkOffset2D(x=scissor[0], y=scissor[1]),
                               extent=vk.VkExtent2D(width=scissor[2], height=scissor[3]))
            vk.vkCmdSetScissor(cb, 0, 1, [rect])
            data = vk.ffi.new("float[]", [float(w), float(h)])
            vk.vkCmdPushConstants(cb, layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 8, data)
            vk.vkCmdDraw(cb, 3, 1, 0, 0)
            vk.vkCmdEndRenderPass(cb)
            for t, buf in zip(reads, bufs, strict=True):
                region = vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                                              imageSubresource=t.layers_of(vk),
                                              imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                              imageExtent=vk.VkExtent3D(width=w, height=h, depth=1))
                vk.vkCmdCopyImageToBuffer(cb, t.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle, 1,
                                          [region])
            dev.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                               vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

        dev.run(record)
        images: dict[str, npt.NDArray[Any]] = {}
        for (suffix, _, dtype), buf, n in zip(ATTACHMENTS, bufs, itemsizes, strict=True):
            data = buf.read(w * h * views * n).view(dtype).reshape(views, h, w, 4)
            for v in range(views):
                images[f"view{v}{suffix}"] = data[v].copy()
    return images


def choose_texel(caps: FsrCaps) -> Pair:
    """The attachment texel size: the device's smallest (the finest grid bins can fall on)."""
    return caps.texel_min


def run_fsr(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Render the scene with the model's areas as the shading-rate attachment (NotSupported
    naming what the device lacks); images :func:`image_names` of every view."""
    sc, plan, samples = _plan(scene)
    caps = probe(ctx)
    why = missing(caps, sc.fdm_layers, samples, f"device {ctx.info.name}")
    if why:
        raise NotSupported(why)
    _require_formats(ctx, samples, rate=True)
    texel = choose_texel(caps)
    rates = [[r.width, r.height, r.sample_counts] for r in caps.rates]
    info: dict[str, Any] = {"device": ctx.info.describe(), "rate_attachment": True, "texel_size": list(texel),
                            "rates": rates, "samples": samples, "views": sc.fdm_layers,
                            "max_coverage_samples": caps.max_coverage_samples}
    recs = _rates(info)
    for v in range(sc.fdm_layers):
        areas = clamped_areas(plan, v, recs, samples)  # NotSupported where the clamp is not exact
        rate_texels(sc, plan, v, texel)
        rate_texels(sc, plan, v, texel, areas)
        info[f"view{v}_areas"] = sorted({f"{a[0]}x{a[1]}->{b[0]}x{b[1]}" for a, b in
                                         zip((t.views[v].frag_area for t in plan.tiles), areas, strict=True)})
    images = _render(ctx, scene, rate=True, texel=texel)
    return CaseOutput(images=images, info=info)


# ---- the cases -------------------------------------------------------------------------------
def _constant(density: float, fmt: str = "R32G32_SFLOAT", views: int = 1) -> dict[str, Any]:
    return {"format": fmt, "views": [{"generator": "constant", "size": [8, 8], "density": density}] * views}


def _radial(size: Pair, center: Sequence[float], radii: Sequence[float] = (48, 96),
            densities: Sequence[float] = (1.0, 0.5, 0.25)) -> dict[str, Any]:
    return {"generator": "radial", "size": list(size), "center": list(center), "radii": list(radii),
            "densities": list(densities)}


#: per GPU profile: framebuffer and tile size (every bin edge on the 16-pixel grid)
_GPUS: dict[str, tuple[Pair, Pair]] = {"a730": ((256, 128), (64, 32)), "a750": ((288, 128), (96, 32))}


def _base(gpu: str, **fields: Any) -> dict[str, Any]:
    fb, tile = _GPUS[gpu]
    sc: dict[str, Any] = {"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile), "bin_merging": "off"}
    sc.update(fields)
    return sc


def _case(name: str, description: str, scene: dict[str, Any]) -> Case:
    return Case(name=name, backend="fsr", description=description, scene=scene, run=run_fsr, judge=judge_fsr)


def fsr_cases() -> list[Case]:
    """D1 ``fsr.attachment_grid``, D2 ``fsr.multiview_layer_select``, D3
    ``fsr.msaa_resolve_harness`` and ``fsr.coverage`` (where FSR's coverage differs from FDM's)."""
    cases: list[Case] = []
    for variant, gpu, d, fmt in (("uniform_1x1", "a730", 1.0, "R32G32_SFLOAT"),
                                 ("uniform_2x2", "a730", 0.5, "R32G32_SFLOAT"),
                                 ("uniform_4x4", "a750", 0.25, "R32G32_SFLOAT"),
                                 ("unorm8_half", "a750", 0.5, "R8G8_UNORM")):
        what = "fragment area (1,2) from R8G8_UNORM 0.5 (finding e)" if fmt == "R8G8_UNORM" else \
            f"one fragment area {variant[-3:]}"
        cases.append(_case(f"fsr.attachment_grid.{variant}.{gpu}",
                           f"D1: {what} on every bin as the shading-rate attachment: fragment grid, FragCoord "
                           "centres, ShadingRate", fsr_scene(_base(gpu, density=_constant(d, fmt)))))
    for gpu in ("a730", "a750"):
        fov = {"format": "R32G32_SFLOAT", "views": [_radial((12, 8), (176, 120))]}
        cases.append(_case(f"fsr.attachment_grid.foveated_radial.{gpu}",
                           "D1: a radial (foveated) map, areas 1x1 / 2x2 / 4x4 over many bins, as the shading-rate "
                           "attachment", fsr_scene(_base(gpu, framebuffer=[384, 256], density=fov))))
    mv = {"format": "R32G32_SFLOAT", "views": [_radial((12, 8), (64, 64), (40, 80)),
                                               _radial((12, 8), (192, 64), (40, 80))]}
    cases.append(_case("fsr.multiview_layer_select.per_view_radial.a730",
                       "D2: 2 views with their own radial maps: a 2-layer shading-rate attachment, the layer chosen "
                       "by ViewIndex (the views' areas differ on all 16 bins)",
                       fsr_scene(_base("a730", views=2, density=mv))))
    cases.append(_case("fsr.msaa_resolve_harness.4x_2x2.a730",
                       "D3: 4x MSAA with a 2x2 rate on every bin and a resolve (an FSR fragment has a sample set "
                       "per pixel: 16 coverage samples)", fsr_scene(_base("a730", density=_constant(0.5)), samples=4)))
    cases.append(_case("fsr.coverage.scissor_unaligned.a730",
                       "a scissor off the 4x4 fragment grid: FSR writes exactly the pixels inside it with the "
                       "fragment's shading, where FDM writes whole fragments whose centre is inside",
                       fsr_scene(_base("a730", density=_constant(0.25), scissors=[[3, 6, 226, 97]]))))
    return cases

