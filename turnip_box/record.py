"""The driver side of the box: records one render pass per job on Mesa's real turnip.

This module runs *inside* the box (``python -m turnip_box.record JOBS.json``), in a process
whose dynamic loader, ``libvulkan`` and turnip come from the box's Debian root and whose
``LD_PRELOAD`` is Mesa's freedreno noop DRM shim (:mod:`turnip_box.root` builds that
environment).  Turnip opens the GPU named by ``FD_GPU_ID`` and records real command streams;
the shim executes nothing.  For each job it builds the render pass the job describes, writes
the density map with the CPU, records the pass with its draws, submits it once and moves the
``.rd`` dump(s) that submit produced into the job's directory.  Everything that needs judging
happens outside, on the host, from those files.

The device comes up through the harness under the box's validation policy, and the dumps are
taken by :class:`turnip_box.inside.RdCapture`, as in the device suite's box worker
(:mod:`turnip_box.inside`): the Khronos validation layer is required unless the host set
``TURNIP_FDM_BOX_VALIDATION=0``; without it every job is NotSupported, naming the package.

Three facts of running under the shim shape the code (``docs/box.md``):

* GPU copies never execute, so the density map is a ``LINEAR`` host-visible image written by
  the CPU at the ``rowPitch``/``arrayPitch`` of ``vkGetImageSubresourceLayout``;
* turnip keeps a pointer into the density map's memory for its CPU-side FDM reads at
  ``vkCmdEndRenderPass2``: the memory is never unmapped while the device lives;
* ``.rd`` files are numbered by turnip's own submits, so each job waits for its submit and
  takes every new file in the dump folder.

A job file is JSON: ``{"jobs": [JOB, ...]}``; :func:`turnip_box.jobs.job_of` writes the JOB
records.  The process prints one JSON line per job to stdout (``{"name", "status", "why",
"rd", "validation", "seconds"}``, ``status`` one of Recorded, NotSupported, Error), so a crash
leaves the finished jobs readable.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import cffi
import vulkan as vk

from turnip_base.errors import NotSupported
from turnip_base.harness import Vulkan

from . import utrace
from .inside import RdCapture, die_with_parent, open_box_device

SPV = Path(__file__).resolve().parent / "spv"

#: density-map formats in the order the recorder prefers them (both hold float32-exact values)
DENSITY_FORMATS = {"R32G32_SFLOAT": vk.VK_FORMAT_R32G32_SFLOAT, "R16G16_SFLOAT": vk.VK_FORMAT_R16G16_SFLOAT,
                   "R8G8_UNORM": vk.VK_FORMAT_R8G8_UNORM}
LOAD_OPS = {"clear": vk.VK_ATTACHMENT_LOAD_OP_CLEAR, "load": vk.VK_ATTACHMENT_LOAD_OP_LOAD,
            "dont_care": vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, "none": 1000400000}  # VK_ATTACHMENT_LOAD_OP_NONE
STORE_OPS = {"store": vk.VK_ATTACHMENT_STORE_OP_STORE, "dont_care": vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
             "none": vk.VK_ATTACHMENT_STORE_OP_NONE}
VK_RENDER_PASS_CREATE_PER_LAYER_FRAGMENT_DENSITY_BIT_VALVE = 0x00000004
#: the device extensions the box enables where turnip has them (:func:`_features`)
WANTED_EXTENSIONS = ("VK_EXT_fragment_density_map", "VK_QCOM_fragment_density_map_offset",
                     "VK_KHR_load_store_op_none", "VK_QCOM_multiview_per_view_viewports",
                     "VK_QCOM_multiview_per_view_render_areas", "VK_VALVE_fragment_density_map_layered",
                     "VK_EXT_custom_resolve")
#: VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT
SUBSAMPLED_BIT = 0x00004000
#: colour attachments a job may have (one fragment shader per count: no output without attachment)
MAX_COLOURS = 8


#: VK_VALVE_fragment_density_map_layered's structures are newer than the Python binding: both are
#: ``{sType, pNext, uint32}`` and are built with an ffi of our own, chained by address
_RAW = cffi.FFI()
_RAW.cdef("typedef struct { uint32_t sType; const void* pNext; uint32_t value; } Ext32;")
STYPE_FDM_LAYERED_FEATURES_VALVE = 1000611000
STYPE_PIPELINE_FDM_LAYERED_CREATE_INFO_VALVE = 1000611002
#: VK_EXT_custom_resolve (extension 629, Vulkan registry xml/vk.xml) is newer than the binding too:
#: ``VkPhysicalDeviceCustomResolveFeaturesEXT`` is ``{sType, pNext, VkBool32 customResolve}``
STYPE_CUSTOM_RESOLVE_FEATURES_EXT = 1000628000
#: VK_SUBPASS_DESCRIPTION_CUSTOM_RESOLVE_BIT_EXT: the last subpass is a custom resolve (turnip's
#: ``subpass->custom_resolve``, tu_pass.cc); the render-pass path needs no other structure
#: (VkCustomResolveCreateInfoEXT is for dynamic rendering)
SUBPASS_CUSTOM_RESOLVE_BIT = 0x00000008


#: the validation layer's rule that the FDM attachment of a non-multiview pass has one layer does not
#: know VK_VALVE_fragment_density_map_layered (a per-layer pass reads one density layer per
#: framebuffer layer, which the extension allows): ignored for per-layer jobs only
VVL_NO_VALVE_LAYERED = ("VUID-VkFramebufferCreateInfo-renderPass-02746",
                        # an older layer (trixie's 1.4.309, the 26.1 box) knows neither the flag nor the
                        # extension's structures
                        "VUID-VkRenderPassCreateInfo2-flags-parameter",
                        f"unknown VkStructureType ({STYPE_PIPELINE_FDM_LAYERED_CREATE_INFO_VALVE})",
                        f"unknown VkStructureType ({STYPE_FDM_LAYERED_FEATURES_VALVE})")

#: the 26.1 box's validation layer (trixie's 1.4.309) predates VK_EXT_custom_resolve: it knows the
#: subpass flag's bit (0x8) only as VK_SUBPASS_DESCRIPTION_SHADER_RESOLVE_BIT_QCOM, its older alias,
#: and asks for VK_QCOM_render_pass_shader_resolve, which turnip does not expose; ignored for
#: custom-resolve jobs only (the 26.2 box's layer, 1.4.363, knows the extension and is silent)
VVL_NO_CUSTOM_RESOLVE = ("VUID-VkSubpassDescription2-flags-parameter",)


def ignored_message(job: dict[str, Any], message: str) -> bool:
    """A validation message of an old layer about an extension it predates, for a job that uses it
    (:data:`VVL_NO_VALVE_LAYERED`, :data:`VVL_NO_CUSTOM_RESOLVE`)."""
    return bool((job["fdm_per_layer"] and any(v in message for v in VVL_NO_VALVE_LAYERED))
                or (job.get("custom_resolve") and any(v in message for v in VVL_NO_CUSTOM_RESOLVE)))


def _ext32(stype: int, value: int, pnext: Any, keep: list[Any]) -> Any:
    """A ``{sType, pNext, uint32}`` structure chained before ``pnext`` (a binding cdata or NULL),
    as a ``void*`` the binding accepts in a ``pNext``; ``keep`` holds it alive."""
    nxt = 0
    if pnext is not None and pnext != vk.ffi.NULL:
        ptr = vk.ffi.addressof(pnext) if vk.ffi.typeof(pnext).kind == "struct" else pnext
        nxt = int(vk.ffi.cast("uintptr_t", ptr))
    raw = _RAW.new("Ext32*", {"sType": stype, "pNext": _RAW.cast("void*", nxt), "value": value})
    keep.append((raw, pnext))
    return vk.ffi.cast("void*", int(_RAW.cast("uintptr_t", raw)))


class Unsupported(NotSupported):
    """The box's turnip lacks what a job needs (the message names it)."""


def _spv(name: str) -> bytes:
    return (SPV / f"{name}.spv").read_bytes()


def _features(ctx: Vulkan, per_view_viewports: bool) -> tuple[list[str], Any]:
    """The :data:`turnip_base.harness.DeviceSetup` of the box's device: the FDM extensions turnip
    has (:data:`WANTED_EXTENSIONS`; ``VK_QCOM_multiview_per_view_viewports`` only when
    ``per_view_viewports``) and their features, multiview, ``shaderOutputViewportIndex``/``Layer``
    and ``multiViewport``."""
    have = ctx.device_extensions()
    enabled = [e for e in WANTED_EXTENSIONS if e in have
               and (per_view_viewports or e != "VK_QCOM_multiview_per_view_viewports")]
    if "VK_EXT_fragment_density_map" not in enabled:
        raise Unsupported(f"{ctx.info.name} has no VK_EXT_fragment_density_map")
    chain: Any = vk.VkPhysicalDeviceFragmentDensityMapFeaturesEXT(fragmentDensityMap=vk.VK_TRUE,
                                                                 fragmentDensityMapNonSubsampledImages=vk.VK_TRUE)
    if "VK_QCOM_fragment_density_map_offset" in enabled:
        chain = vk.VkPhysicalDeviceFragmentDensityMapOffsetFeaturesQCOM(fragmentDensityMapOffset=vk.VK_TRUE,
                                                                          pNext=chain)
    if "VK_QCOM_multiview_per_view_viewports" in enabled:
        chain = vk.VkPhysicalDeviceMultiviewPerViewViewportsFeaturesQCOM(multiviewPerViewViewports=vk.VK_TRUE,
                                                                           pNext=chain)
    if "VK_QCOM_multiview_per_view_render_areas" in enabled:
        chain = vk.VkPhysicalDeviceMultiviewPerViewRenderAreasFeaturesQCOM(
            multiviewPerViewRenderAreas=vk.VK_TRUE, pNext=chain)
    if "VK_VALVE_fragment_density_map_layered" in enabled:
        chain = _ext32(STYPE_FDM_LAYERED_FEATURES_VALVE, vk.VK_TRUE, chain, ctx.keep)
    if "VK_EXT_custom_resolve" in enabled:
        chain = _ext32(STYPE_CUSTOM_RESOLVE_FEATURES_EXT, vk.VK_TRUE, chain, ctx.keep)
    v11 = vk.VkPhysicalDeviceVulkan11Features(multiview=vk.VK_TRUE, pNext=chain)
    v12 = vk.VkPhysicalDeviceVulkan12Features(shaderOutputViewportIndex=vk.VK_TRUE, shaderOutputLayer=vk.VK_TRUE,
                                              pNext=v11)
    return enabled, vk.VkPhysicalDeviceFeatures2(features=vk.VkPhysicalDeviceFeatures(multiViewport=vk.VK_TRUE),
                                                 pNext=v12)


class Device:
    """One turnip device (one GPU id), brought up by :func:`turnip_box.inside.open_box_device`
    (the harness, under the box's validation policy) with :func:`_features`.  ``per_view_viewports``
    (``multiviewPerViewViewports``) is enabled only when asked: with it enabled, turnip takes each
    view's viewport from the application (VK_QCOM_multiview_per_view_viewports), which is a
    different pass."""

    def __init__(self, per_view_viewports: bool = False) -> None:
        self.ctx = ctx = open_box_device(lambda c: _features(c, per_view_viewports), api_version=(1, 3))
        self.validation = ctx.messenger is not None
        self.pd, self.device, self.queue, self.pool = ctx.physical, ctx.device, ctx.queue, ctx.pool
        self.name, self.driver_info = ctx.info.name, ctx.info.driver_info
        self.extensions = ctx.device_extensions()
        self.enabled = list(ctx.enabled_extensions)
        self.per_view_viewports = "VK_QCOM_multiview_per_view_viewports" in self.enabled
        names = ("box.vert", "box_vpi.vert", "box_layer.vert", "box_resolve.frag",
                 *(f"box{k}.frag" for k in range(MAX_COLOURS + 1)))
        self.shaders = {n: ctx.shader_module(_spv(n)) for n in names}
        self.fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        ctx.own(lambda: vk.vkDestroyFence(self.device, self.fence, None))
        #: host-visible density-map memory stays mapped for the device's life (turnip reads it)
        self.kept_mapped: list[Any] = []

    def take_messages(self) -> list[str]:
        """The validation messages since the last call."""
        out = list(self.ctx.messages)
        self.ctx.messages.clear()
        return out

    def memory_type(self, bits: int, want: int) -> int:
        return self.ctx.memory_type(bits, want)

    def format_features(self, fmt: int, linear: bool) -> int:
        p = vk.vkGetPhysicalDeviceFormatProperties(self.pd, fmt)
        return int(p.linearTilingFeatures if linear else p.optimalTilingFeatures)

    def close(self) -> None:
        self.ctx.close()


def _image(dev: Device, stack: ExitStack, *, fmt: int, extent: tuple[int, int], layers: int, samples: int,
           usage: int, linear: bool = False, flags: int = 0) -> tuple[Any, Any, int]:
    info = vk.VkImageCreateInfo(
        flags=flags, imageType=vk.VK_IMAGE_TYPE_2D, format=fmt,
        extent=vk.VkExtent3D(width=extent[0], height=extent[1], depth=1), mipLevels=1, arrayLayers=layers,
        samples=samples, tiling=vk.VK_IMAGE_TILING_LINEAR if linear else vk.VK_IMAGE_TILING_OPTIMAL,
        usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE,
        initialLayout=vk.VK_IMAGE_LAYOUT_PREINITIALIZED if linear else vk.VK_IMAGE_LAYOUT_UNDEFINED)
    try:
        vk.vkGetPhysicalDeviceImageFormatProperties(dev.pd, fmt, vk.VK_IMAGE_TYPE_2D, info.tiling, usage, flags)
    except vk.VkErrorFormatNotSupported as e:
        raise Unsupported(f"format {fmt} ({'linear' if linear else 'optimal'}, {samples}x, usage {usage:#x}) "
                          "is not supported as this job needs it") from e
    img = vk.vkCreateImage(dev.device, info, None)
    stack.callback(vk.vkDestroyImage, dev.device, img, None)
    req = vk.vkGetImageMemoryRequirements(dev.device, img)
    want = (vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) if linear else 0
    mem = vk.vkAllocateMemory(dev.device, vk.VkMemoryAllocateInfo(
        allocationSize=req.size, memoryTypeIndex=dev.memory_type(req.memoryTypeBits, want)), None)
    vk.vkBindImageMemory(dev.device, img, mem, 0)
    if not linear:
        stack.callback(vk.vkFreeMemory, dev.device, mem, None)
    return img, mem, int(req.size)


def _view(dev: Device, stack: ExitStack, img: Any, fmt: int, layers: int, aspect: int) -> Any:
    v = vk.vkCreateImageView(dev.device, vk.VkImageViewCreateInfo(
        image=img, viewType=vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY, format=fmt,
        subresourceRange=vk.VkImageSubresourceRange(aspectMask=aspect, baseMipLevel=0, levelCount=1,
                                                    baseArrayLayer=0, layerCount=layers)), None)
    stack.callback(vk.vkDestroyImageView, dev.device, v, None)
    return v


def _write_density(dev: Device, img: Any, mem: Any, size: int, fmt: str,
                   texels: list[list[list[list[float]]]]) -> None:
    """Write the density layers with the CPU at the driver's row and array pitches.  The memory
    stays mapped: turnip keeps a pointer to it and reads it at vkCmdEndRenderPass2."""
    ptr = vk.vkMapMemory(dev.device, mem, 0, size, 0)
    dev.kept_mapped.append(ptr)
    code = {"R32G32_SFLOAT": "f", "R16G16_SFLOAT": "e", "R8G8_UNORM": "B"}[fmt]
    for layer, rows in enumerate(texels):
        lay = vk.vkGetImageSubresourceLayout(dev.device, img, vk.VkImageSubresource(
            aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, arrayLayer=layer))
        for j, row in enumerate(rows):
            line = struct.pack(f"<{2 * len(row)}{code}", *(c for t in row for c in t))
            off = lay.offset + j * lay.rowPitch
            ptr[off:off + len(line)] = line


def _render_pass(dev: Device, stack: ExitStack, job: dict[str, Any]) -> tuple[Any, list[int]]:
    """The VkRenderPass2 of a job: its attachments (colour, then depth, then resolve targets),
    one subpass, and the density map as the last attachment."""
    atts: list[Any] = []
    colour: list[Any] = []
    resolve: list[Any] = []
    depth: Any = None
    if sum(a["kind"] != "depth" for a in job["attachments"]) > MAX_COLOURS:
        raise Unsupported(f"more than {MAX_COLOURS} colour attachments")
    samples = {a["samples"] for a in job["attachments"]}
    if len(samples) > 1:
        raise Unsupported(f"attachments of different sample counts {sorted(samples)} in one subpass")
    aspects = []
    for a in job["attachments"]:
        is_depth = a["kind"] == "depth"
        layout = (vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL if is_depth
                  else vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)
        idx = len(atts)
        load, store = LOAD_OPS[a["load_op"]], STORE_OPS[a["store_op"]]
        dont_load, dont_store = vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, vk.VK_ATTACHMENT_STORE_OP_DONT_CARE
        # a stencil-only attachment takes the job's ops as its stencil ops (turnip's attachment_set_ops
        # then uses them as the colour case does)
        stencil = _aspect(a) == vk.VK_IMAGE_ASPECT_STENCIL_BIT
        atts.append(vk.VkAttachmentDescription2(
            format=a["format"], samples=a["samples"], loadOp=dont_load if stencil else load,
            storeOp=dont_store if stencil else store, stencilLoadOp=load if stencil else dont_load,
            stencilStoreOp=store if stencil else dont_store,
            initialLayout=layout if a["load_op"] in ("load", "none") else vk.VK_IMAGE_LAYOUT_UNDEFINED,
            finalLayout=layout))
        aspects.append(_aspect(a))
        ref = vk.VkAttachmentReference2(attachment=idx, layout=layout, aspectMask=aspects[-1])
        if is_depth:
            depth = ref
        else:
            colour.append(ref)
    def add_destination(fmt: int, store_op: int) -> int:
        """A single-sampled colour attachment written by the pass only (a resolve or the
        custom-resolve subpass's destination): nothing loaded, ``store_op``; its index."""
        atts.append(vk.VkAttachmentDescription2(
            format=fmt, samples=1, loadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, storeOp=store_op,
            stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
            initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED, finalLayout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL))
        aspects.append(vk.VK_IMAGE_ASPECT_COLOR_BIT)
        return len(atts) - 1

    for a in [a for a in job["attachments"] if a["kind"] != "depth"]:
        if not a.get("resolve"):
            resolve.append(vk.VkAttachmentReference2(attachment=vk.VK_ATTACHMENT_UNUSED,
                                                     layout=vk.VK_IMAGE_LAYOUT_UNDEFINED))
            continue
        if a["samples"] == 1:
            raise Unsupported("a resolve of a single-sampled attachment")
        idx = add_destination(a["format"], vk.VK_ATTACHMENT_STORE_OP_STORE)
        resolve.append(vk.VkAttachmentReference2(attachment=idx, layout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                                                 aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT))
    cr = job.get("custom_resolve")
    if cr:
        # the custom-resolve subpass's destination: written by that subpass only, straight to sysmem
        # (turnip keeps an attachment out of GMEM when only a custom-resolve subpass uses it:
        # tu_subpass_use_attachment, tu_pass.cc); DONT_CARE store, so tu_emit_subsampled gives it no
        # metadata or aprons (it visits stored attachments only)
        cr_idx = add_destination(cr["format"], vk.VK_ATTACHMENT_STORE_OP_DONT_CARE)
    fdm_idx = len(atts)
    fdm_layout = vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT
    atts.append(vk.VkAttachmentDescription2(
        format=DENSITY_FORMATS[job["density"]["format"]], samples=1, loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
        storeOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
        stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=fdm_layout, finalLayout=fdm_layout))
    aspects.append(vk.VK_IMAGE_ASPECT_COLOR_BIT)
    views = job["views"]
    subpass = vk.VkSubpassDescription2(
        pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS, viewMask=(1 << views) - 1 if views > 1 else 0,
        pColorAttachments=colour or None, pResolveAttachments=resolve if any(
            r.attachment != vk.VK_ATTACHMENT_UNUSED for r in resolve) else None,
        pDepthStencilAttachment=depth)
    subpasses, deps = [subpass], None
    if cr:
        # the last subpass, VK_SUBPASS_DESCRIPTION_CUSTOM_RESOLVE_BIT_EXT: reads colour attachment
        # cr["input"] as an input attachment (from GMEM) and writes the destination
        subpasses.append(vk.VkSubpassDescription2(
            flags=SUBPASS_CUSTOM_RESOLVE_BIT, pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
            viewMask=(1 << views) - 1 if views > 1 else 0,
            pInputAttachments=[vk.VkAttachmentReference2(attachment=cr["input"],
                                                         layout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                                                         aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT)],
            pColorAttachments=[vk.VkAttachmentReference2(attachment=cr_idx,
                                                         layout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                                                         aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT)]))
        deps = [vk.VkSubpassDependency2(
            srcSubpass=0, dstSubpass=1, srcStageMask=vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
            dstStageMask=vk.VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
            srcAccessMask=vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, dstAccessMask=vk.VK_ACCESS_INPUT_ATTACHMENT_READ_BIT,
            dependencyFlags=vk.VK_DEPENDENCY_BY_REGION_BIT)]
    fdm_info = vk.VkRenderPassFragmentDensityMapCreateInfoEXT(
        fragmentDensityMapAttachment=vk.VkAttachmentReference(attachment=fdm_idx, layout=fdm_layout))
    flags = VK_RENDER_PASS_CREATE_PER_LAYER_FRAGMENT_DENSITY_BIT_VALVE if job["fdm_per_layer"] else 0
    rp = vk.vkCreateRenderPass2(dev.device, vk.VkRenderPassCreateInfo2(
        pNext=fdm_info, flags=flags, pAttachments=atts, pSubpasses=subpasses, pDependencies=deps,
        pCorrelatedViewMasks=[(1 << views) - 1] if views > 1 else None), None)
    stack.callback(vk.vkDestroyRenderPass, dev.device, rp, None)
    return rp, aspects


def _viewports(job: dict[str, Any]) -> list[Any]:
    return [vk.VkViewport(x=v[0], y=v[1], width=v[2], height=v[3], minDepth=v[4], maxDepth=v[5])
            for v in job["viewports"]]


def _scissors(job: dict[str, Any]) -> list[Any]:
    return [vk.VkRect2D(offset=vk.VkOffset2D(x=s[0], y=s[1]), extent=vk.VkExtent2D(width=s[2], height=s[3]))
            for s in job["scissors"]]


def _aspect(a: dict[str, Any]) -> int:
    """The aspect of a job attachment: colour, depth, or stencil for the stencil-only ``S8_UINT``
    (a depth attachment of 1 byte per texel, :data:`turnip_box.jobs.DEPTH_FORMATS`)."""
    if a["kind"] != "depth":
        return int(vk.VK_IMAGE_ASPECT_COLOR_BIT)
    return int(vk.VK_IMAGE_ASPECT_STENCIL_BIT if a["format"] == vk.VK_FORMAT_S8_UINT else vk.VK_IMAGE_ASPECT_DEPTH_BIT)


def _depth_stencil_state(job: dict[str, Any]) -> Any:
    """Depth test ``LESS`` with writes; for a stencil-only attachment no depth test (it has no depth)
    and a stencil test that always passes and writes, its counterpart; None without one."""
    depth = [a for a in job["attachments"] if a["kind"] == "depth"]
    if not depth:
        return None
    if _aspect(depth[0]) == vk.VK_IMAGE_ASPECT_STENCIL_BIT:
        op = vk.VkStencilOpState(failOp=vk.VK_STENCIL_OP_KEEP, passOp=vk.VK_STENCIL_OP_REPLACE,
                                 depthFailOp=vk.VK_STENCIL_OP_KEEP, compareOp=vk.VK_COMPARE_OP_ALWAYS,
                                 compareMask=0xFF, writeMask=0xFF, reference=1)
        return vk.VkPipelineDepthStencilStateCreateInfo(depthTestEnable=vk.VK_FALSE, depthWriteEnable=vk.VK_FALSE,
                                                        depthCompareOp=vk.VK_COMPARE_OP_ALWAYS,
                                                        stencilTestEnable=vk.VK_TRUE, front=op, back=op)
    return vk.VkPipelineDepthStencilStateCreateInfo(depthTestEnable=vk.VK_TRUE, depthWriteEnable=vk.VK_TRUE,
                                                    depthCompareOp=vk.VK_COMPARE_OP_LESS)


def _layered(job: dict[str, Any]) -> bool:
    return bool(job["views"] == 1 and job["layers"] > 1)


def _pipeline(dev: Device, stack: ExitStack, job: dict[str, Any], rp: Any, set_layout: Any = None) -> tuple[Any, Any]:
    """The pipeline of subpass 0, or with ``set_layout`` (the input attachment's) that of the
    custom-resolve subpass 1: ``box_resolve.frag``, one single-sampled colour output, no depth."""
    resolve = set_layout is not None
    colours = [None] if resolve else [a for a in job["attachments"] if a["kind"] != "depth"]
    layout = vk.vkCreatePipelineLayout(dev.device, vk.VkPipelineLayoutCreateInfo(
        pSetLayouts=[set_layout] if resolve else None), None)
    stack.callback(vk.vkDestroyPipelineLayout, dev.device, layout, None)
    # a layered pass draws one instance a layer and writes gl_Layer, as a layered application does
    vert = "box_vpi.vert" if job["writes_viewport_index"] else "box_layer.vert" if _layered(job) else "box.vert"
    stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=dev.shaders[vert],
                                                 pName="main"),
              vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT,
                                                 module=dev.shaders["box_resolve.frag" if resolve
                                                                    else f"box{len(colours)}.frag"], pName="main")]
    n_vp = len(job["viewports"])
    samples = job["attachments"][0]["samples"] if job["attachments"] and not resolve else 1
    blend = [vk.VkPipelineColorBlendAttachmentState(colorWriteMask=0xF) for _ in colours]
    keep: list[Any] = []
    layered = _ext32(STYPE_PIPELINE_FDM_LAYERED_CREATE_INFO_VALVE, job["max_fdm_layers"], None, keep) \
        if job["fdm_per_layer"] else None
    info = vk.VkGraphicsPipelineCreateInfo(
        pNext=layered, pStages=stages, pVertexInputState=vk.VkPipelineVertexInputStateCreateInfo(),
        pInputAssemblyState=vk.VkPipelineInputAssemblyStateCreateInfo(
            topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST),
        pViewportState=vk.VkPipelineViewportStateCreateInfo(
            viewportCount=n_vp, scissorCount=n_vp,
            pViewports=None if job.get("dynamic_viewport", True) else _viewports(job),
            pScissors=None if job.get("dynamic_viewport", True) else _scissors(job)),
        pRasterizationState=vk.VkPipelineRasterizationStateCreateInfo(
            polygonMode=vk.VK_POLYGON_MODE_FILL, cullMode=vk.VK_CULL_MODE_NONE, lineWidth=1.0),
        pMultisampleState=vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=samples),
        pDepthStencilState=None if resolve else _depth_stencil_state(job),
        pColorBlendState=vk.VkPipelineColorBlendStateCreateInfo(pAttachments=blend or None),
        pDynamicState=vk.VkPipelineDynamicStateCreateInfo(
            pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR])
        if job.get("dynamic_viewport", True) else None,
        layout=layout, renderPass=rp, subpass=1 if resolve else 0)
    pipe = vk.vkCreateGraphicsPipelines(dev.device, None, 1, [info], None)[0]
    stack.callback(vk.vkDestroyPipeline, dev.device, pipe, None)
    return pipe, layout


def _resolve_pipeline(dev: Device, stack: ExitStack, job: dict[str, Any], rp: Any, src_view: Any
                      ) -> tuple[Any, Any, Any]:
    """The custom-resolve subpass's pipeline, its layout and the descriptor set that binds colour
    attachment ``custom_resolve.input`` as its input attachment."""
    binding = vk.VkDescriptorSetLayoutBinding(binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT,
                                              descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT)
    set_layout = vk.vkCreateDescriptorSetLayout(dev.device, vk.VkDescriptorSetLayoutCreateInfo(
        pBindings=[binding]), None)
    stack.callback(vk.vkDestroyDescriptorSetLayout, dev.device, set_layout, None)
    pool = vk.vkCreateDescriptorPool(dev.device, vk.VkDescriptorPoolCreateInfo(
        maxSets=1, pPoolSizes=[vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT,
                                                       descriptorCount=1)]), None)
    stack.callback(vk.vkDestroyDescriptorPool, dev.device, pool, None)
    dset = vk.vkAllocateDescriptorSets(dev.device, vk.VkDescriptorSetAllocateInfo(
        descriptorPool=pool, pSetLayouts=[set_layout]))[0]
    vk.vkUpdateDescriptorSets(dev.device, 1, [vk.VkWriteDescriptorSet(
        dstSet=dset, dstBinding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT,
        pImageInfo=[vk.VkDescriptorImageInfo(imageView=src_view,
                                             imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)])], 0, None)
    pipe, layout = _pipeline(dev, stack, job, rp, set_layout)
    return pipe, layout, dset


def record(dev: Device, job: dict[str, Any], capture: RdCapture) -> list[str]:
    """Build, record and submit one job's render pass; returns the ``.rd`` files it produced
    (moved into the job's ``out`` folder)."""
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    w, h = job["framebuffer"]
    views, fb_layers = job["views"], job["layers"]
    img_layers = max(views, fb_layers)
    dens = job["density"]
    if job["fdm_offsets"] is not None and "VK_QCOM_fragment_density_map_offset" not in dev.enabled:
        raise Unsupported("VK_QCOM_fragment_density_map_offset")
    if job["per_view_viewports"] and not dev.per_view_viewports:
        raise Unsupported("VK_QCOM_multiview_per_view_viewports")
    if len(job["render_areas"]) > 1 and "VK_QCOM_multiview_per_view_render_areas" not in dev.enabled:
        raise Unsupported("VK_QCOM_multiview_per_view_render_areas")
    if job["fdm_per_layer"] and "VK_VALVE_fragment_density_map_layered" not in dev.enabled:
        raise Unsupported("VK_VALVE_fragment_density_map_layered")
    cr = job.get("custom_resolve")
    if cr and "VK_EXT_custom_resolve" not in dev.enabled:
        raise Unsupported(f"{dev.name} has no VK_EXT_custom_resolve (customResolve)")
    fmt = DENSITY_FORMATS[dens["format"]]
    if not dev.format_features(fmt, linear=True) & vk.VK_FORMAT_FEATURE_FRAGMENT_DENSITY_MAP_BIT_EXT:
        raise Unsupported(f"{dens['format']} has no linear FRAGMENT_DENSITY_MAP feature")
    with ExitStack() as stack:
        rp, aspects = _render_pass(dev, stack, job)
        views_list = []
        att_images: list[Any] = []
        att_specs: list[dict[str, Any]] = []
        # the scenario's fdm_offset_create_flag is the flag of every image of the pass (offsets need
        # it on all attachments, VUID-VkSubpassFragmentDensityMapOffsetEndInfoQCOM-
        # fragmentDensityOffsetCount-06504/06505; the depth image's flag changes LRZ and tile size)
        aflags = 0x00008000 if job["fdm_offset_flag"] else 0
        for a in job["attachments"]:
            usage = (vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT if a["kind"] == "depth"
                     else vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT)
            if cr and len(att_images) == cr["input"]:
                usage |= vk.VK_IMAGE_USAGE_INPUT_ATTACHMENT_BIT
            # a subsampled attachment's image carries VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT (turnip's
            # fdm_subsampled); it is 2D, optimal, one level, single-sampled (VUID-VkImageCreateInfo-flags-02050,
            # -02051, -02052) and is never sampled here, so it needs no sampler
            sflags = SUBSAMPLED_BIT if a.get("subsampled") else 0
            img, _, _ = _image(dev, stack, fmt=a["format"], extent=(w, h), layers=img_layers, samples=a["samples"],
                               usage=usage, flags=aflags | sflags)
            asp = _aspect(a)
            att_images.append(img)
            att_specs.append(a)
            views_list.append(_view(dev, stack, img, a["format"], img_layers, asp))
        for a in job["attachments"]:
            if a["kind"] != "depth" and a.get("resolve"):
                img, _, _ = _image(dev, stack, fmt=a["format"], extent=(w, h), layers=img_layers, samples=1,
                                   usage=vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, flags=aflags)
                views_list.append(_view(dev, stack, img, a["format"], img_layers, vk.VK_IMAGE_ASPECT_COLOR_BIT))
        if cr:
            # the custom-resolve destination; subsampled as the scenario's pass is (cr["subsampled"])
            img, _, _ = _image(dev, stack, fmt=cr["format"], extent=(w, h), layers=img_layers, samples=1,
                               usage=vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                               flags=aflags | (SUBSAMPLED_BIT if cr["subsampled"] else 0))
            views_list.append(_view(dev, stack, img, cr["format"], img_layers, vk.VK_IMAGE_ASPECT_COLOR_BIT))
        dflags = 0x00008000 if job["fdm_offset_flag"] else 0  # VK_IMAGE_CREATE_FRAGMENT_DENSITY_MAP_OFFSET_BIT_EXT
        dimg, dmem, dsize = _image(dev, stack, fmt=fmt, extent=tuple(dens["size"]), layers=len(dens["layers"]),
                            samples=1, usage=vk.VK_IMAGE_USAGE_FRAGMENT_DENSITY_MAP_BIT_EXT, linear=True,
                            flags=dflags)
        _write_density(dev, dimg, dmem, dsize, dens["format"], dens["layers"])
        views_list.append(_view(dev, stack, dimg, fmt, len(dens["layers"]), vk.VK_IMAGE_ASPECT_COLOR_BIT))
        fb = vk.vkCreateFramebuffer(dev.device, vk.VkFramebufferCreateInfo(
            renderPass=rp, pAttachments=views_list, width=w, height=h, layers=fb_layers), None)
        stack.callback(vk.vkDestroyFramebuffer, dev.device, fb, None)
        pipe, _layout = _pipeline(dev, stack, job, rp)
        resolve = _resolve_pipeline(dev, stack, job, rp, views_list[cr["input"]]) if cr else None
        cmd = vk.vkAllocateCommandBuffers(dev.device, vk.VkCommandBufferAllocateInfo(
            commandPool=dev.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1))[0]
        stack.callback(vk.vkFreeCommandBuffers, dev.device, dev.pool, 1, [cmd])
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(
            flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        # the host-written map moves to the layout the render pass expects (a no-op under the shim)
        vk.vkCmdPipelineBarrier(cmd, vk.VK_PIPELINE_STAGE_HOST_BIT,
                                vk.VK_PIPELINE_STAGE_FRAGMENT_DENSITY_PROCESS_BIT_EXT, 0, 0, None, 0, None, 1,
                                [vk.VkImageMemoryBarrier(
                                    srcAccessMask=vk.VK_ACCESS_HOST_WRITE_BIT,
                                    dstAccessMask=vk.VK_ACCESS_FRAGMENT_DENSITY_MAP_READ_BIT_EXT,
                                    oldLayout=vk.VK_IMAGE_LAYOUT_PREINITIALIZED,
                                    newLayout=vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT,
                                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=dimg,
                                    subresourceRange=vk.VkImageSubresourceRange(
                                        aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=0, levelCount=1,
                                        baseArrayLayer=0, layerCount=len(dens["layers"])))])
        # attachments the pass loads (or leaves alone: LOAD_OP_NONE) start in their attachment layout
        pre = []
        for img, a in zip(att_images, att_specs, strict=True):
            if a["load_op"] not in ("load", "none"):
                continue
            depth = a["kind"] == "depth"
            pre.append(vk.VkImageMemoryBarrier(
                srcAccessMask=0, dstAccessMask=vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT if depth
                else vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                oldLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                newLayout=vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL if depth
                else vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                image=img, subresourceRange=vk.VkImageSubresourceRange(
                    aspectMask=_aspect(a),
                    baseMipLevel=0, levelCount=1, baseArrayLayer=0, layerCount=img_layers)))
        if pre:
            vk.vkCmdPipelineBarrier(cmd, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                                    vk.VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT
                                    | vk.VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT
                                    | vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0, 0, None, 0, None,
                                    len(pre), pre)
        ra = job["render_areas"]
        area = vk.VkRect2D(offset=vk.VkOffset2D(x=ra[0][0], y=ra[0][1]),
                           extent=vk.VkExtent2D(width=ra[0][2], height=ra[0][3]))
        begin_next: Any = None
        if len(ra) > 1:
            # the pass's render area is the union of the per-view areas (VUID-...-perViewRenderAreaCount)
            x0, y0 = min(r[0] for r in ra), min(r[1] for r in ra)
            x1, y1 = max(r[0] + r[2] for r in ra), max(r[1] + r[3] for r in ra)
            area = vk.VkRect2D(offset=vk.VkOffset2D(x=x0, y=y0), extent=vk.VkExtent2D(width=x1 - x0, height=y1 - y0))
            begin_next = vk.VkMultiviewPerViewRenderAreasRenderPassBeginInfoQCOM(
                pPerViewRenderAreas=[vk.VkRect2D(offset=vk.VkOffset2D(x=r[0], y=r[1]),
                                                 extent=vk.VkExtent2D(width=r[2], height=r[3])) for r in ra])
        clears = [vk.VkClearValue(depthStencil=vk.VkClearDepthStencilValue(depth=1.0, stencil=0))
                  if asp != vk.VK_IMAGE_ASPECT_COLOR_BIT else vk.VkClearValue(color=vk.VkClearColorValue(
                      float32=[0.0, 0.0, 0.0, 1.0])) for asp in aspects]
        vk.vkCmdBeginRenderPass2(cmd, vk.VkRenderPassBeginInfo(
            pNext=begin_next, renderPass=rp, framebuffer=fb, renderArea=area, pClearValues=clears),
            vk.VkSubpassBeginInfo(contents=vk.VK_SUBPASS_CONTENTS_INLINE))
        vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
        if job.get("dynamic_viewport", True):
            vk.vkCmdSetViewport(cmd, 0, len(job["viewports"]), _viewports(job))
            vk.vkCmdSetScissor(cmd, 0, len(job["scissors"]), _scissors(job))
        for _ in range(job["draws"]):
            vk.vkCmdDraw(cmd, 3, job["layers"] if _layered(job) else 1, 0, 0)
        if resolve is not None:
            # the custom-resolve subpass: one draw (the viewports and scissors stay as set)
            vk.vkCmdNextSubpass2(cmd, vk.VkSubpassBeginInfo(contents=vk.VK_SUBPASS_CONTENTS_INLINE),
                                 vk.VkSubpassEndInfo())
            vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, resolve[0])
            vk.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, resolve[1], 0, 1, [resolve[2]], 0,
                                       None)
            vk.vkCmdDraw(cmd, 3, job["layers"] if _layered(job) else 1, 0, 0)
        end_next: Any = None
        if job["fdm_offsets"] is not None:
            end_next = vk.VkSubpassFragmentDensityMapOffsetEndInfoQCOM(
                pFragmentDensityOffsets=[vk.VkOffset2D(x=o[0], y=o[1]) for o in job["fdm_offsets"]])
        vk.vkCmdEndRenderPass2(cmd, vk.VkSubpassEndInfo(pNext=end_next))
        vk.vkEndCommandBuffer(cmd)
        capture.mark()
        vk.vkResetFences(dev.device, 1, [dev.fence])
        vk.vkQueueSubmit(dev.queue, 1, [vk.VkSubmitInfo(pCommandBuffers=[cmd])], dev.fence)
        vk.vkWaitForFences(dev.device, 1, [dev.fence], vk.VK_TRUE, 10_000_000_000)
        return capture.take(out)


def _jobs(path: Path) -> Iterator[dict[str, Any]]:
    yield from json.loads(path.read_text())["jobs"]


def info() -> dict[str, Any]:
    """What ``turnip-fdm box info`` prints of one GPU."""
    dev = Device()
    fdm_props = vk.VkPhysicalDeviceFragmentDensityMapPropertiesEXT()
    vk.vkGetPhysicalDeviceProperties2(dev.pd, vk.VkPhysicalDeviceProperties2(pNext=fdm_props))
    lo, hi = fdm_props.minFragmentDensityTexelSize, fdm_props.maxFragmentDensityTexelSize
    formats = [n for n, f in DENSITY_FORMATS.items()
               if dev.format_features(f, linear=True) & vk.VK_FORMAT_FEATURE_FRAGMENT_DENSITY_MAP_BIT_EXT]
    return {"device": dev.name, "driver": dev.driver_info,
            "fdm_extensions": sorted(e for e in dev.extensions if "density" in e.lower()),
            "texel_size": [[lo.width, lo.height], [hi.width, hi.height]], "fdm_formats": formats}


def main(argv: list[str]) -> int:
    die_with_parent()
    if argv == ["--info"]:
        try:
            print(json.dumps(info()), flush=True)
        except (NotSupported, vk.VkError) as e:
            print(json.dumps({"error": str(e) or type(e).__name__}), flush=True)
        return 0
    jobs_path = Path(argv[0])
    capture = RdCapture()
    # turnip's render_pass tracepoint (the render mode's reason), read per job (turnip_box.utrace)
    trace = utrace.TraceTail(capture.folder.parent / "u_trace.txt")
    utrace.enable(os.environ, trace.path)
    devices: dict[bool, Device | Exception] = {}
    for job in _jobs(jobs_path):
        t0 = time.perf_counter()
        pvv = bool(job["per_view_viewports"])
        if pvv not in devices:
            try:
                devices[pvv] = Device(per_view_viewports=pvv)
            except (NotSupported, vk.VkError) as e:
                devices[pvv] = e
        dev = devices[pvv]
        if isinstance(dev, Exception):
            # the device (or the validation layer it needs) is missing: every job says why
            print(json.dumps({"name": job["name"], "status": "NotSupported", "why": str(dev) or type(dev).__name__,
                              "rd": [], "validation": [], "seconds": 0.0}), flush=True)
            continue
        dev.take_messages()
        try:
            rd = record(dev, job, capture)
            got = trace.take()
            rec = {"name": job["name"], "status": "Recorded", "why": "", "rd": rd,
                   "u_trace": [p.as_json() for p in got] if isinstance(got, tuple) else got}
        except NotSupported as e:
            rec = {"name": job["name"], "status": "NotSupported", "why": str(e), "rd": []}
        except vk.VkError as e:
            rec = {"name": job["name"], "status": "Error", "why": f"{type(e).__name__}", "rd": []}
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        rec["validation"] = [m for m in dev.take_messages() if not ignored_message(job, m)]
        print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
