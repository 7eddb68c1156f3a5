"""What an ``fsr`` case needs of the device: ``VK_KHR_fragment_shading_rate``'s capabilities
(:func:`probe`), the first thing missing (:func:`missing`), and the second device with the
extension and multiview enabled (:class:`FsrDevice`)."""

from __future__ import annotations

import attrs

from turnip_base.errors import NotSupported
from turnip_base.harness import Vulkan

from ..graphics.targets import (
    require_graphics,
)
from .scene import ATTACHMENTS, RATE_FORMAT, SupportedRate

Pair = tuple[int, int]


EXTENSION = "VK_KHR_fragment_shading_rate"


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


class FsrDevice(Vulkan):
    """A second logical device on the run's physical device, with VK_KHR_fragment_shading_rate
    (attachment and pipeline rates) and multiview enabled: the suite's device enables no
    extension or feature.  It shares the instance, so the run's validation messenger records
    its messages (in the same list), and :meth:`close` destroys only the device."""

    def __init__(self, parent: Vulkan, rate: bool) -> None:
        self.vk = vk = parent.vk
        self.messages = parent.messages
        self._owned = []
        self.keep = []
        self.instance = None  # the parent's: not destroyed here
        self.messenger = None
        self.device = None
        self.physical, self.info = parent.physical, parent.info
        mv = vk.VkPhysicalDeviceMultiviewFeatures(multiview=vk.VK_TRUE)  # the shader reads gl_ViewIndex
        ff = vk.VkPhysicalDeviceFragmentShadingRateFeaturesKHR(
            pNext=mv, pipelineFragmentShadingRate=vk.VK_TRUE, attachmentFragmentShadingRate=vk.VK_TRUE)
        self.open_logical(vk.VkPhysicalDeviceFeatures2(pNext=ff if rate else mv), None, [EXTENSION] if rate else [])


def require_formats(ctx: Vulkan, samples: int, rate: bool) -> None:
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


def choose_texel(caps: FsrCaps) -> Pair:
    """The attachment texel size: the device's smallest (the finest grid bins can fall on)."""
    return caps.texel_min
