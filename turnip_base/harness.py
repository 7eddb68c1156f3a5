"""A small Vulkan compute harness on the `vulkan` Python package (realitix/vulkan).

* :func:`open_device` creates an instance (optionally with the Khronos validation layer and
  a debug messenger that records every warning and error), selects a physical device by
  index or by a substring of its name (argument, else ``TURNIP_FDM_DEVICE``) and creates a
  logical device with one queue (graphics + compute when the device has one).
* Anything the machine lacks (the loader, a device, the layer, a format feature) raises
  :class:`turnip_base.errors.NotSupported` whose message names the missing piece.
* Buffers, images with per-level views, descriptor sets, compute pipelines, one-shot
  command buffers and timestamp queries are thin wrappers that the :class:`Vulkan` object
  destroys in reverse order on :meth:`Vulkan.close`; whatever else a caller creates it hands
  over with :meth:`Vulkan.own`.
* :meth:`Vulkan.create_image` is the one place an image is created, given device-local memory
  and bound (every image class of the suites calls it), :meth:`Vulkan.image_view` the one
  place a view is made.

Every create-info struct is bound to a local name until the call that uses it returns:
the binding can free a temporary struct (and the strings it points to) early
(realitix/vulkan issue #94).
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

from .errors import NotSupported

__all__ = ["API_VERSION", "DEVICE_ENV", "VALIDATION_LAYER", "Buffer", "DeviceInfo", "DeviceSetup", "Handle", "Image",
           "Vulkan", "import_vulkan", "list_devices", "open_device", "parse_selector", "select_device"]

VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
#: the instance's ``apiVersion`` (major, minor) unless the caller asks for another
API_VERSION = (1, 2)
DEVICE_ENV = "TURNIP_FDM_DEVICE"

#: a handle or struct of the `vulkan` binding (a cffi object; the binding has no types)
Handle = Any
#: how a device is chosen: an index, a case-insensitive name substring, or None (the default)
Selector = int | str | None
#: called with the :class:`Vulkan` once the physical device is chosen, before ``vkCreateDevice``:
#: returns the device extensions to enable and a ``VkPhysicalDeviceFeatures2`` chain (queried
#: with ``vkGetPhysicalDeviceFeatures2``, passed as ``VkDeviceCreateInfo.pNext``), or None to
#: enable no feature (the default device)
DeviceSetup = Callable[["Vulkan"], tuple[Sequence[str], Any]]


def import_vulkan() -> ModuleType:
    """The `vulkan` module, or NotSupported when the package or the loader is missing."""
    try:
        import vulkan
    except ImportError as e:
        raise NotSupported(f"Python package 'vulkan' is not installed ({e})") from None
    except OSError as e:  # raised by the package when libvulkan.so.1 cannot be loaded
        raise NotSupported(f"no Vulkan loader (libvulkan.so.1): {e}") from None
    return vulkan


def _version_str(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


def _driver_version_str(vendor_id: int, v: int) -> str:
    if vendor_id == 0x10DE:  # NVIDIA packs 10.8.8.6 bits
        return f"{v >> 22}.{(v >> 14) & 0xFF}.{(v >> 6) & 0xFF}.{v & 0x3F}"
    return _version_str(v)


@attrs.frozen
class DeviceInfo:
    index: int
    name: str
    vendor_id: int
    device_type: int
    api_version: str
    driver_version: str
    driver_name: str
    driver_info: str
    subgroup_size: int
    subgroup_shuffle: bool
    subgroup_compute: bool
    timestamp_period: float
    timestamp_valid_bits: int
    max_image_dimension_2d: int
    max_workgroup_count: tuple[int, ...]
    queue_family: int
    queue_graphics: bool

    def describe(self) -> str:
        return (f"{self.name} (driver {self.driver_name} {self.driver_info}, version {self.driver_version}, "
                f"Vulkan {self.api_version}, subgroup {self.subgroup_size}"
                f"{' +shuffle' if self.subgroup_shuffle else ''})")


def parse_selector(selector: Selector) -> int | str | None:
    if selector is None or selector == "":
        return None
    if isinstance(selector, int):
        return selector
    s = str(selector).strip()
    return int(s) if s.isdigit() else s


def select_device(names: Sequence[str], selector: Selector) -> int:
    """Index of the device chosen by an index or a case-insensitive name substring."""
    if not names:
        raise NotSupported("no Vulkan physical device found")
    sel = parse_selector(selector)
    if sel is None:
        return 0
    if isinstance(sel, int):
        if sel >= len(names):
            raise NotSupported(f"device: index {sel} out of range, {len(names)} device(s): {', '.join(names)}")
        return sel
    hits = [i for i, n in enumerate(names) if sel.lower() in n.lower()]
    if not hits:
        raise NotSupported(f"device: no device name contains {sel!r}; devices: {', '.join(names)}")
    return hits[0]


class Buffer:
    def __init__(self, ctx: Vulkan, size: int, usage: int, host_visible: bool):
        vk = ctx.vk
        self.ctx, self.size = ctx, size
        info = vk.VkBufferCreateInfo(size=size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE)
        self.handle = vk.vkCreateBuffer(ctx.device, info, None)
        req = vk.vkGetBufferMemoryRequirements(ctx.device, self.handle)
        props = (vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                 if host_visible else vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
        alloc = vk.VkMemoryAllocateInfo(allocationSize=req.size,
                                        memoryTypeIndex=ctx.memory_type(req.memoryTypeBits, props))
        self.memory = vk.vkAllocateMemory(ctx.device, alloc, None)
        vk.vkBindBufferMemory(ctx.device, self.handle, self.memory, 0)
        ctx.own(lambda: vk.vkDestroyBuffer(ctx.device, self.handle, None))
        ctx.own(lambda: vk.vkFreeMemory(ctx.device, self.memory, None))

    def write(self, data: NDArray[Any], offset: int = 0) -> None:
        vk = self.ctx.vk
        import numpy as np  # here, not at the top: the box's recorder opens devices without numpy

        raw = np.ascontiguousarray(data).view(np.uint8).ravel()
        mapped = vk.vkMapMemory(self.ctx.device, self.memory, offset, raw.size, 0)
        np.frombuffer(mapped, np.uint8, raw.size)[:] = raw
        vk.vkUnmapMemory(self.ctx.device, self.memory)

    def read(self, nbytes: int, offset: int = 0) -> NDArray[np.uint8]:
        vk = self.ctx.vk
        import numpy as np

        mapped = vk.vkMapMemory(self.ctx.device, self.memory, offset, nbytes, 0)
        out = np.frombuffer(mapped, np.uint8, nbytes).copy()
        vk.vkUnmapMemory(self.ctx.device, self.memory)
        return out


class Image:
    """A 2D image with a full or partial mip chain and one view per level."""

    def __init__(self, ctx: Vulkan, width: int, height: int, levels: int, fmt: int, view_fmt: int,
                 usage: int, flags: int = 0):
        self.ctx, self.width, self.height, self.levels, self.format = ctx, width, height, levels, fmt
        self.handle = ctx.create_image((width, height), fmt, usage, levels=levels, flags=flags)
        self.views: list[Handle] = [ctx.image_view(self.handle, view_fmt, base_level=level, levels=1)
                                    for level in range(levels)]

    def level_size(self, level: int) -> tuple[int, int]:
        return max(1, self.width >> level), max(1, self.height >> level)

    def subresource_range(self, base: int = 0, count: int | None = None) -> Handle:
        vk = self.ctx.vk
        return vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=base,
                                          levelCount=self.levels - base if count is None else count,
                                          baseArrayLayer=0, layerCount=1)

    def barrier(self, cb: Handle, old: int, new: int, src_access: int, dst_access: int, src_stage: int,
                dst_stage: int, base: int = 0, count: int | None = None) -> None:
        vk = self.ctx.vk
        rng = self.subresource_range(base, count)
        b = vk.VkImageMemoryBarrier(srcAccessMask=src_access, dstAccessMask=dst_access, oldLayout=old, newLayout=new,
                                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.handle,
                                    subresourceRange=rng)
        vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, None, 0, None, 1, [b])


class Vulkan:
    """Instance, device, queue, command pool; owns what it creates."""

    def __init__(self, device: Selector = None, validation: bool = False, setup: DeviceSetup | None = None,
                 api_version: tuple[int, int] = API_VERSION):
        self.vk = vk = import_vulkan()
        self._setup = setup
        self.api_version = api_version
        #: the extensions and the features chain ``setup`` asked for (kept alive with the device)
        self.enabled_extensions: tuple[str, ...] = ()
        self.features_chain: Handle | None = None
        #: whatever must live as long as the device and nothing else holds: a ``setup`` appends the
        #: structures it chained by address (a cdata of an ffi of its own, which the binding does not
        #: keep alive through a ``pNext``)
        self.keep: list[Any] = []
        self.messages: list[str] = []
        self._owned: list[Callable[[], None]] = []
        self.instance: Handle | None = None
        self.device: Handle | None = None
        self.messenger: Handle | None = None
        try:
            self._create_instance(validation)
            self._pick_device(device if device is not None else os.environ.get(DEVICE_ENV))
            self._create_device()
        except vk.VkError as e:
            self.close()
            raise NotSupported(f"Vulkan call failed while opening the device: {type(e).__name__}") from None
        except Exception:
            self.close()
            raise

    # ---- creation -------------------------------------------------------------------
    def _create_instance(self, validation: bool) -> None:
        vk = self.vk
        layers, exts = [], []
        if validation:
            available = [p.layerName for p in vk.vkEnumerateInstanceLayerProperties()]
            if VALIDATION_LAYER not in available:
                raise NotSupported(f"validation layer {VALIDATION_LAYER} is not installed "
                                   "(Debian package vulkan-validationlayers)")
            layers = [VALIDATION_LAYER]
            exts = ["VK_EXT_debug_utils"]
        app = vk.VkApplicationInfo(pApplicationName="turnip-fdm", applicationVersion=1, pEngineName="turnip-fdm",
                                   engineVersion=1, apiVersion=vk.VK_MAKE_VERSION(*self.api_version, 0))
        info = vk.VkInstanceCreateInfo(pApplicationInfo=app, ppEnabledLayerNames=layers,
                                       ppEnabledExtensionNames=exts)
        try:
            self.instance = vk.vkCreateInstance(info, None)
        except vk.VkErrorIncompatibleDriver:
            raise NotSupported("no Vulkan driver (VK_ERROR_INCOMPATIBLE_DRIVER)") from None
        if validation:
            self._callback = self._on_message  # keep the Python callable alive
            dbg = vk.VkDebugUtilsMessengerCreateInfoEXT(
                messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                pfnUserCallback=self._callback)
            create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
            self._destroy_messenger = vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugUtilsMessengerEXT")
            self.messenger = create(self.instance, dbg, None)

    def _on_message(self, severity: int, types: int, data: Handle, user: Handle) -> int:
        msg = self.vk.ffi.string(data.pMessage).decode(errors="replace")
        self.messages.append(msg)
        return 0

    def _pick_device(self, selector: Selector) -> None:
        vk = self.vk
        phys = vk.vkEnumeratePhysicalDevices(self.instance)
        names = [vk.vkGetPhysicalDeviceProperties(p).deviceName for p in phys]
        idx = select_device(names, selector)
        self.physical = phys[idx]
        self.info = self._query(idx)

    def _query(self, idx: int) -> DeviceInfo:
        vk = self.vk
        p = vk.vkGetPhysicalDeviceProperties(self.physical)
        sub = vk.VkPhysicalDeviceSubgroupProperties()
        props2 = vk.VkPhysicalDeviceProperties2(pNext=sub)
        vk.vkGetPhysicalDeviceProperties2(self.physical, props2)
        drv = vk.VkPhysicalDeviceDriverProperties()
        props2b = vk.VkPhysicalDeviceProperties2(pNext=drv)
        vk.vkGetPhysicalDeviceProperties2(self.physical, props2b)
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.physical)
        both = vk.VK_QUEUE_GRAPHICS_BIT | vk.VK_QUEUE_COMPUTE_BIT
        fam = next((i for i, q in enumerate(families) if q.queueFlags & both == both), None)
        if fam is None:
            fam = next((i for i, q in enumerate(families) if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT), None)
        if fam is None:
            raise NotSupported(f"device {p.deviceName}: no queue family with VK_QUEUE_COMPUTE_BIT")
        lim = p.limits
        return DeviceInfo(
            index=idx, name=p.deviceName, vendor_id=p.vendorID, device_type=p.deviceType,
            api_version=_version_str(p.apiVersion), driver_version=_driver_version_str(p.vendorID, p.driverVersion),
            driver_name=vk.ffi.string(drv.driverName).decode(errors="replace"),
            driver_info=vk.ffi.string(drv.driverInfo).decode(errors="replace"),
            subgroup_size=sub.subgroupSize,
            subgroup_shuffle=bool(sub.supportedOperations & vk.VK_SUBGROUP_FEATURE_SHUFFLE_BIT),
            subgroup_compute=bool(sub.supportedStages & vk.VK_SHADER_STAGE_COMPUTE_BIT),
            timestamp_period=float(lim.timestampPeriod),
            timestamp_valid_bits=families[fam].timestampValidBits,
            max_image_dimension_2d=lim.maxImageDimension2D,
            max_workgroup_count=tuple(lim.maxComputeWorkGroupCount),
            queue_family=fam, queue_graphics=bool(families[fam].queueFlags & vk.VK_QUEUE_GRAPHICS_BIT))

    def _create_device(self) -> None:
        features = self.vk.VkPhysicalDeviceFeatures()
        if self._setup is not None:
            exts, self.features_chain = self._setup(self)
            self.enabled_extensions = tuple(exts)
        # with a VkPhysicalDeviceFeatures2 in pNext, pEnabledFeatures must be NULL
        self.open_logical(self.features_chain, None if self.features_chain is not None else features,
                          list(self.enabled_extensions))

    def open_logical(self, features_chain: Handle, features: Handle, extensions: list[str]) -> None:
        """Create the logical device on :attr:`physical` with one queue of the chosen family, the
        features (a ``VkPhysicalDeviceFeatures2`` chain, or plain ``features``) and extensions, and
        its command pool; sets :attr:`device`, :attr:`queue`, :attr:`pool`, :attr:`memory_props`."""
        vk = self.vk
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.info.queue_family, queueCount=1,
                                           pQueuePriorities=[1.0])
        info = vk.VkDeviceCreateInfo(pNext=features_chain, pQueueCreateInfos=[qinfo], pEnabledFeatures=features,
                                     ppEnabledExtensionNames=extensions)
        self.device = vk.vkCreateDevice(self.physical, info, None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.info.queue_family, 0)
        pinfo = vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.info.queue_family,
                                           flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)
        self.pool = vk.vkCreateCommandPool(self.device, pinfo, None)
        self.own(lambda: vk.vkDestroyCommandPool(self.device, self.pool, None))
        self.memory_props = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)

    # ---- queries ----------------------------------------------------------------------
    def device_extensions(self) -> set[str]:
        vk = self.vk
        return {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(self.physical, None)}

    def require_extension(self, name: str) -> None:
        if name not in self.device_extensions():
            raise NotSupported(f"device {self.info.name}: extension {name} is not supported")

    def features(self) -> Handle:
        """VkPhysicalDeviceFeatures of the device (attributes named as in the spec)."""
        return self.vk.vkGetPhysicalDeviceFeatures(self.physical)

    def require_feature(self, name: str) -> None:
        if not getattr(self.features(), name):
            raise NotSupported(f"device {self.info.name}: feature {name} is not supported")

    def format_features(self, fmt: int) -> int:
        return self.vk.vkGetPhysicalDeviceFormatProperties(self.physical, fmt).optimalTilingFeatures

    def require_format(self, fmt: int, feature: int, what: str) -> None:
        if not self.format_features(fmt) & feature:
            raise NotSupported(f"device {self.info.name}: format {self.format_name(fmt)} lacks {what}")

    def format_name(self, fmt: int) -> str:
        for k, v in vars(self.vk).items():
            if k.startswith("VK_FORMAT_") and v == fmt and not k.endswith("_KHR"):
                return k
        return str(fmt)

    def memory_type(self, bits: int, props: int) -> int:
        """A memory type with `props`; host-visible requests prefer system memory (not device-local)."""
        vk = self.vk
        fits = [i for i in range(self.memory_props.memoryTypeCount)
                if bits & (1 << i) and (self.memory_props.memoryTypes[i].propertyFlags & props) == props]
        if props & vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT:
            fits.sort(key=lambda i: bool(self.memory_props.memoryTypes[i].propertyFlags
                                         & vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        if fits:
            return fits[0]
        raise NotSupported(f"device {self.info.name}: no memory type with property flags {props:#x}")

    # ---- objects ----------------------------------------------------------------------
    def own(self, destroy: Callable[[], None]) -> None:
        """Destroy with ``destroy()`` what the caller just created: at :meth:`close`, or when the
        enclosing :meth:`scope` ends, in reverse order of creation."""
        self._owned.append(destroy)

    def create_image(self, size: tuple[int, int], fmt: int, usage: int, *, levels: int = 1, layers: int = 1,
                     samples: int = 1, flags: int = 0) -> Handle:
        """A 2D optimal-tiling image (exclusive, initially UNDEFINED) with device-local memory
        bound to it; both are owned (:meth:`own`).  ``samples`` is a ``VkSampleCountFlagBits``."""
        vk = self.vk
        info = vk.VkImageCreateInfo(
            flags=flags, imageType=vk.VK_IMAGE_TYPE_2D, format=fmt,
            extent=vk.VkExtent3D(width=size[0], height=size[1], depth=1), mipLevels=levels, arrayLayers=layers,
            samples=samples, tiling=vk.VK_IMAGE_TILING_OPTIMAL, usage=usage,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED)
        image = vk.vkCreateImage(self.device, info, None)
        self.own(lambda: vk.vkDestroyImage(self.device, image, None))
        req = vk.vkGetImageMemoryRequirements(self.device, image)
        alloc = vk.VkMemoryAllocateInfo(
            allocationSize=req.size,
            memoryTypeIndex=self.memory_type(req.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        memory = vk.vkAllocateMemory(self.device, alloc, None)
        self.own(lambda: vk.vkFreeMemory(self.device, memory, None))
        vk.vkBindImageMemory(self.device, image, memory, 0)
        return image

    def image_view(self, image: Handle, fmt: int, *, view_type: int | None = None, aspect: int | None = None,
                   base_level: int = 0, levels: int = 1, layers: int = 1, flags: int = 0,
                   usage: int | None = None) -> Handle:
        """An owned view of ``levels`` mip levels from ``base_level`` and ``layers`` array layers
        (default: 2D, colour aspect); ``usage`` narrows the image's usage for this view
        (VkImageViewUsageCreateInfo, e.g. sampled only where the view's format cannot be stored)."""
        vk = self.vk
        rng = vk.VkImageSubresourceRange(
            aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT if aspect is None else aspect, baseMipLevel=base_level,
            levelCount=levels, baseArrayLayer=0, layerCount=layers)
        pnext = vk.VkImageViewUsageCreateInfo(usage=usage) if usage is not None else None
        info = vk.VkImageViewCreateInfo(pNext=pnext, flags=flags, image=image,
                                        viewType=vk.VK_IMAGE_VIEW_TYPE_2D if view_type is None else view_type,
                                        format=fmt, subresourceRange=rng)
        view = vk.vkCreateImageView(self.device, info, None)
        self.own(lambda: vk.vkDestroyImageView(self.device, view, None))
        return view

    @contextlib.contextmanager
    def scope(self) -> Iterator[Vulkan]:
        """Objects created inside the block are destroyed (after a device wait) when it ends."""
        mark = len(self._owned)
        try:
            yield self
        finally:
            self.vk.vkDeviceWaitIdle(self.device)
            while len(self._owned) > mark:
                self._owned.pop()()

    def buffer(self, size: int, usage: int, host_visible: bool = False) -> Buffer:
        return Buffer(self, size, usage, host_visible)

    def image(self, width: int, height: int, levels: int, fmt: int, view_fmt: int, usage: int,
              flags: int = 0) -> Image:
        return Image(self, width, height, levels, fmt, view_fmt, usage, flags)

    def shader_module(self, spv: bytes) -> Handle:
        vk = self.vk
        info = vk.VkShaderModuleCreateInfo(codeSize=len(spv), pCode=spv)
        module = vk.vkCreateShaderModule(self.device, info, None)
        self.own(lambda: vk.vkDestroyShaderModule(self.device, module, None))
        return module

    def descriptor_set_layout(self, bindings: Sequence[tuple[int, int, int]]) -> Handle:
        """bindings: (binding, descriptor type, count), all visible to compute."""
        vk = self.vk
        entries = [vk.VkDescriptorSetLayoutBinding(binding=b, descriptorType=t, descriptorCount=n,
                                                   stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
                   for b, t, n in bindings]
        info = vk.VkDescriptorSetLayoutCreateInfo(pBindings=entries)
        layout = vk.vkCreateDescriptorSetLayout(self.device, info, None)
        self.own(lambda: vk.vkDestroyDescriptorSetLayout(self.device, layout, None))
        return layout

    def pipeline_layout(self, set_layout: Handle, push_bytes: int) -> Handle:
        vk = self.vk
        rng = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=push_bytes)
        # a range of size 0 is invalid: no range when the shaders push nothing
        info = vk.VkPipelineLayoutCreateInfo(pSetLayouts=[set_layout], pPushConstantRanges=[rng] if push_bytes else [])
        layout = vk.vkCreatePipelineLayout(self.device, info, None)
        self.own(lambda: vk.vkDestroyPipelineLayout(self.device, layout, None))
        return layout

    def compute_pipeline(self, spv: bytes, layout: Handle, spec_u32: Sequence[int] = ()) -> Handle:
        vk = self.vk
        module = self.shader_module(spv)
        data = vk.ffi.new("uint32_t[]", list(spec_u32) or [0])
        entries = [vk.VkSpecializationMapEntry(constantID=i, offset=4 * i, size=4) for i in range(len(spec_u32))]
        spec = (vk.VkSpecializationInfo(pMapEntries=entries, dataSize=4 * len(spec_u32), pData=data)
                if spec_u32 else None)
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module,
                                                   pName="main", pSpecializationInfo=spec)
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=layout)
        pipe = vk.vkCreateComputePipelines(self.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
        self.own(lambda: vk.vkDestroyPipeline(self.device, pipe, None))
        return pipe

    def descriptor_pool(self, sizes: Sequence[tuple[int, int]], max_sets: int) -> Handle:
        vk = self.vk
        ps = [vk.VkDescriptorPoolSize(type=t, descriptorCount=n) for t, n in sizes]
        info = vk.VkDescriptorPoolCreateInfo(flags=vk.VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT,
                                             maxSets=max_sets, pPoolSizes=ps)
        pool = vk.vkCreateDescriptorPool(self.device, info, None)
        self.own(lambda: vk.vkDestroyDescriptorPool(self.device, pool, None))
        return pool

    def allocate_set(self, pool: Handle, layout: Handle) -> Handle:
        vk = self.vk
        info = vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, pSetLayouts=[layout])
        dset = vk.vkAllocateDescriptorSets(self.device, info)[0]
        self.own(lambda: vk.vkFreeDescriptorSets(self.device, pool, 1, [dset]))
        return dset

    def query_pool(self, count: int) -> Handle:
        vk = self.vk
        info = vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=count)
        pool = vk.vkCreateQueryPool(self.device, info, None)
        self.own(lambda: vk.vkDestroyQueryPool(self.device, pool, None))
        return pool

    def timestamps_ns(self, pool: Handle, count: int) -> NDArray[np.float64]:
        """Read `count` timestamps (waiting), masked to the valid bits, in nanoseconds."""
        vk = self.vk
        data = vk.ffi.new(f"uint64_t[{count}]")
        vk.vkGetQueryPoolResults(self.device, pool, 0, count, vk.ffi.sizeof(data), data, 8,
                                 vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT)
        import numpy as np

        ticks = np.array(list(data), dtype=np.uint64)
        bits = self.info.timestamp_valid_bits
        if 0 < bits < 64:
            ticks &= np.uint64((1 << bits) - 1)
        return ticks.astype(np.float64) * self.info.timestamp_period

    # ---- submission -------------------------------------------------------------------
    def run(self, record: Callable[[Handle], None]) -> None:
        """Record a one-shot command buffer with `record(cb)`, submit it and wait."""
        vk = self.vk
        ainfo = vk.VkCommandBufferAllocateInfo(commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                               commandBufferCount=1)
        cb = vk.vkAllocateCommandBuffers(self.device, ainfo)[0]
        begin = vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT)
        vk.vkBeginCommandBuffer(cb, begin)
        record(cb)
        vk.vkEndCommandBuffer(cb)
        submit = vk.VkSubmitInfo(pCommandBuffers=[cb])
        finfo = vk.VkFenceCreateInfo()
        fence = vk.vkCreateFence(self.device, finfo, None)
        try:
            vk.vkQueueSubmit(self.queue, 1, [submit], fence)
            vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, 600 * 10**9)
        finally:
            vk.vkDestroyFence(self.device, fence, None)
            vk.vkFreeCommandBuffers(self.device, self.pool, 1, [cb])

    def memory_barrier(self, cb: Handle, src_access: int, dst_access: int, src_stage: int, dst_stage: int) -> None:
        vk = self.vk
        b = vk.VkMemoryBarrier(srcAccessMask=src_access, dstAccessMask=dst_access)
        vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, [b], 0, None, 0, None)

    def close(self) -> None:
        vk = self.vk
        if self.device is not None:
            vk.vkDeviceWaitIdle(self.device)
            for destroy in reversed(self._owned):
                destroy()
            self._owned.clear()
            vk.vkDestroyDevice(self.device, None)
            self.device = None
            self.keep.clear()
        if self.messenger is not None:
            self._destroy_messenger(self.instance, self.messenger, None)
            self.messenger = None
        if self.instance is not None:
            vk.vkDestroyInstance(self.instance, None)
            self.instance = None

    def __enter__(self) -> Vulkan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def list_devices() -> list[str]:
    """Names of the physical devices, in enumeration order."""
    vk = import_vulkan()
    app = vk.VkApplicationInfo(pApplicationName="turnip-fdm", apiVersion=vk.VK_MAKE_VERSION(1, 2, 0))
    info = vk.VkInstanceCreateInfo(pApplicationInfo=app)
    try:
        instance = vk.vkCreateInstance(info, None)
    except vk.VkErrorIncompatibleDriver:
        raise NotSupported("no Vulkan driver (VK_ERROR_INCOMPATIBLE_DRIVER)") from None
    try:
        return [vk.vkGetPhysicalDeviceProperties(p).deviceName for p in vk.vkEnumeratePhysicalDevices(instance)]
    finally:
        vk.vkDestroyInstance(instance, None)


def open_device(device: Selector = None, validation: bool = False, setup: DeviceSetup | None = None,
                api_version: tuple[int, int] = API_VERSION) -> Vulkan:
    """A :class:`Vulkan` context on the chosen device (see :func:`select_device`); ``setup``
    chooses extensions and features (:data:`DeviceSetup`; default none); ``api_version`` is the
    instance's ``apiVersion`` (default :data:`API_VERSION`)."""
    return Vulkan(device=device, validation=validation, setup=setup, api_version=api_version)
