"""The base of every real FDM pass (:class:`FdmPass`) and what all of them share.

An FDM pass renders a scenario (:class:`fdm.Scenario`) on a device with
``VK_EXT_fragment_density_map`` enabled: the density map is an image of one layer per map layer
(:attr:`FdmPass.map`, with ``FRAGMENT_DENSITY_MAP_OFFSET`` when the scenario uses offsets) in the
format the device advertises ``VK_FORMAT_FEATURE_FRAGMENT_DENSITY_MAP_BIT_EXT`` for
(:func:`map_choice`: the scenario's own format, else ``R32G32_SFLOAT``, else ``R16G16_SFLOAT``,
holding the same densities: an R8G8_UNORM byte ``b`` becomes the float32 ``b * (1.0f/255)`` the
driver would have read).  When the format has the feature with ``LINEAR`` tiling the map is a
host-visible linear image written by the CPU at ``vkGetImageSubresourceLayout``'s
``rowPitch``/``arrayPitch`` (:class:`HostMap`: what a UMA driver reads with its CPU; under the box's
noop DRM shim GPU copies never execute) and never unmapped while the pass lives (turnip keeps the
pointer and reads it at ``vkCmdEndRenderPass2``); otherwise an optimal image uploaded by a staging
copy.  Either way a barrier moves it to ``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT`` in a submission that
completes before the pass is recorded (a static map is read by the host during
``vkCmdBeginRenderPass``, §1.6).  In a render pass 2
the map is the last attachment, ``LOAD``/``DONT_CARE`` and never stored (VUIDs 02550/02551),
referenced by ``VkRenderPassFragmentDensityMapCreateInfoEXT``; the pass ends with the scenario's
offsets in ``VkSubpassEndInfo.pNext``.  A subclass makes its colour (and depth, resolve)
attachments, render pass and pipeline, records the pass (:meth:`FdmPass.record_pass`) and reads
back; :func:`fdm_pipeline` is the full-screen-triangle pipeline they use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.density import DensityMap, unpack_density
from turnip_base.errors import NotSupported
from turnip_base.harness import Handle, Vulkan

from .passes import fullscreen_states, rect2d
from .shaders import load_spv
from .targets import LayeredImage

Pair = tuple[int, int]

#: values the binding (realitix/vulkan 1.3.275) lacks (docs/spec/vulkan-fdm-and-cts.md §4.1, §4.3)
IMAGE_CREATE_FDM_OFFSET_BIT = 0x8000
PIPELINE_CREATE_RENDERING_FDM_ATTACHMENT_BIT = 0x00400000
VK_FMT_RGBA16UI = 95   # VK_FORMAT_R16G16B16A16_UINT
VK_FMT_R8G8_UNORM = 16
VK_FMT_R16G16_SFLOAT = 83
VK_FMT_R32G32_SFLOAT = 103
#: VK_FORMAT_FEATURE_FRAGMENT_DENSITY_MAP_BIT_EXT
FORMAT_FEATURE_FDM = 0x01000000
#: the density-map formats an FDM device may advertise, by name, in the order they are tried after
#: the scenario's own (float32 first: it holds every R8G8 density exactly)
MAP_FORMATS = {"R8G8_UNORM": VK_FMT_R8G8_UNORM, "R32G32_SFLOAT": VK_FMT_R32G32_SFLOAT,
               "R16G16_SFLOAT": VK_FMT_R16G16_SFLOAT}
#: numpy dtype of each map format's two channels
MAP_DTYPES = {VK_FMT_R8G8_UNORM: np.uint8, VK_FMT_R32G32_SFLOAT: np.float32, VK_FMT_R16G16_SFLOAT: np.float16}


def density_format(sc: fdm.Scenario) -> int:
    """The VkFormat the scenario's density map is stored in."""
    return VK_FMT_R8G8_UNORM if sc.density.format == "R8G8_UNORM" else VK_FMT_R32G32_SFLOAT


def map_values(density: DensityMap, fmt: int) -> npt.NDArray[Any] | None:
    """The map's layers (``(layers, h, w, 2)``) as ``fmt`` holds the same float32 densities the
    driver reads from the stored format (an R8G8_UNORM byte ``b``: ``b * (1.0f/255)``); None when
    ``fmt`` cannot hold them exactly (float16)."""
    stored = np.stack([np.asarray(layer) for layer in density.layers])
    if fmt == density_format_of(density.format):
        return stored.astype(MAP_DTYPES[fmt])
    if fmt == VK_FMT_R8G8_UNORM:
        return None
    if density.format == "R8G8_UNORM":
        table = np.array([unpack_density("R8G8_UNORM", b, b)[0] for b in range(256)], dtype=np.float32)
        f32 = table[stored.astype(np.intp)]
    else:
        f32 = stored.astype(np.float32)
    out = f32.astype(MAP_DTYPES[fmt])
    return out if np.array_equal(out.astype(np.float32), f32) else None


def density_format_of(name: str) -> int:
    return VK_FMT_R8G8_UNORM if name == "R8G8_UNORM" else VK_FMT_R32G32_SFLOAT


def map_choice(density: DensityMap, optimal: Any, linear: Any) -> tuple[int, bool] | None:
    """``(VkFormat, linear)`` of the density map: the first of the scenario's own format,
    ``R32G32_SFLOAT``, ``R16G16_SFLOAT`` that has ``FRAGMENT_DENSITY_MAP`` with linear tiling
    (preferred: a host-written map, read by a UMA driver's CPU) or optimal tiling, and holds the
    map's densities exactly (:func:`map_values`); None when none does.  ``optimal``/``linear``:
    VkFormat -> the tiling's format features (mappings)."""
    order = [density_format_of(density.format)] + [f for f in MAP_FORMATS.values()
                                                   if f != density_format_of(density.format)]
    for fmt in order:
        tilings = [t for t, feats in ((True, linear), (False, optimal)) if int(feats.get(fmt, 0)) & FORMAT_FEATURE_FDM]
        if tilings and map_values(density, fmt) is not None:
            return fmt, tilings[0]
    return None


def uint_clear(vk: Any, value: Sequence[int]) -> Handle:
    """A ``VkClearValue`` of unsigned-integer colour ``value``."""
    return vk.VkClearValue(color=vk.VkClearColorValue(uint32=[int(v) for v in value]))


def fdm_pipeline(ctx: Vulkan, frag: str, *, push_bytes: int, attachments: int, render_pass: Handle | None = None,
              view_mask: int = 0, set_layout: Handle | None = None, dynrend_fdm: bool = False,
              vert: str = "fullscreen.vert.spv") -> tuple[Handle, Handle]:
    """A full-screen-triangle pipeline (``fullscreen.vert`` + ``frag``), dynamic viewport and
    scissor, fragment push constants; for ``render_pass`` None a dynamic-rendering pipeline
    (``VkPipelineRenderingCreateInfo``) with the FDM-attachment flag when ``dynrend_fdm``.
    Returns (pipeline, layout)."""
    vk = ctx.vk
    rngs = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, offset=0, size=push_bytes)]
    linfo = vk.VkPipelineLayoutCreateInfo(pSetLayouts=[set_layout] if set_layout is not None else None,
                                          pPushConstantRanges=rngs)
    layout = vk.vkCreatePipelineLayout(ctx.device, linfo, None)
    ctx.own(lambda: vk.vkDestroyPipelineLayout(ctx.device, layout, None))
    vert_m = ctx.shader_module(load_spv(vert))
    frag_m = ctx.shader_module(load_spv(frag))
    stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert_m, pName="main"),
              vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag_m, pName="main")]
    rendering = None
    flags = 0
    if render_pass is None:
        rendering = vk.VkPipelineRenderingCreateInfo(viewMask=view_mask,
                                                     pColorAttachmentFormats=[VK_FMT_RGBA16UI] * attachments)
        if dynrend_fdm:
            # the binding's VK_PIPELINE_RASTERIZATION_STATE_CREATE_..._BIT_EXT alias is None (§4.1)
            flags = PIPELINE_CREATE_RENDERING_FDM_ATTACHMENT_BIT
    info = vk.VkGraphicsPipelineCreateInfo(
        pNext=rendering, flags=flags, pStages=stages, layout=layout,
        renderPass=render_pass if render_pass is not None else vk.VK_NULL_HANDLE, subpass=0,
        **fullscreen_states(vk, 1, attachments))
    pipe = vk.vkCreateGraphicsPipelines(ctx.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
    ctx.own(lambda: vk.vkDestroyPipeline(ctx.device, pipe, None))
    return pipe, layout


class HostMap(LayeredImage):
    """A density map of ``LINEAR`` tiling in host-visible, coherent memory, written by the CPU
    (:meth:`write`) at ``vkGetImageSubresourceLayout``'s ``rowPitch`` and ``arrayPitch``, initially
    ``PREINITIALIZED``.  The memory stays mapped until it is freed with the image (the enclosing
    ``ctx.scope()``): turnip keeps the pointer and reads the map with the CPU at
    ``vkCmdEndRenderPass2``; an unmapped map crashes it."""

    def __init__(self, ctx: Vulkan, size: tuple[int, int], layers: int, fmt: int, usage: int, flags: int = 0,
                 view_flags: int = 0):
        vk = ctx.vk
        self.ctx, self.size, self.layers, self.format = ctx, size, layers, fmt
        self.aspect = vk.VK_IMAGE_ASPECT_COLOR_BIT
        info = vk.VkImageCreateInfo(
            flags=flags, imageType=vk.VK_IMAGE_TYPE_2D, format=fmt,
            extent=vk.VkExtent3D(width=size[0], height=size[1], depth=1), mipLevels=1, arrayLayers=layers,
            samples=vk.VK_SAMPLE_COUNT_1_BIT, tiling=vk.VK_IMAGE_TILING_LINEAR, usage=usage,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_PREINITIALIZED)
        image = vk.vkCreateImage(ctx.device, info, None)
        ctx.own(lambda: vk.vkDestroyImage(ctx.device, image, None))
        req = vk.vkGetImageMemoryRequirements(ctx.device, image)
        want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        memory = vk.vkAllocateMemory(ctx.device, vk.VkMemoryAllocateInfo(
            allocationSize=req.size, memoryTypeIndex=ctx.memory_type(req.memoryTypeBits, want)), None)
        ctx.own(lambda: vk.vkFreeMemory(ctx.device, memory, None))  # never unmapped before: freed mapped
        vk.vkBindImageMemory(ctx.device, image, memory, 0)
        self.handle = image
        self.pointer = vk.vkMapMemory(ctx.device, memory, 0, req.size, 0)
        vtype = vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if layers > 1 else vk.VK_IMAGE_VIEW_TYPE_2D
        self.view = ctx.image_view(image, fmt, view_type=vtype, layers=layers, flags=view_flags)
        self.layout = vk.VK_IMAGE_LAYOUT_PREINITIALIZED

    def write(self, values: npt.NDArray[Any]) -> None:
        """``values`` (``(layers, h, w, 2)`` of the format's dtype) row by row at the driver's pitches."""
        vk = self.ctx.vk
        for layer in range(self.layers):
            lay = vk.vkGetImageSubresourceLayout(self.ctx.device, self.handle, vk.VkImageSubresource(
                aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, arrayLayer=layer))
            for j, row in enumerate(np.ascontiguousarray(values[layer])):
                line = row.tobytes()
                off = int(lay.offset) + j * int(lay.rowPitch)
                self.pointer[off:off + len(line)] = line


#: called with ``("begin", pass)`` before an FDM pass is submitted and ``("end", pass)`` after it
#: completed (:meth:`FdmPass.render`): the box records which submit is the FDM pass
PASS_LISTENERS: list[Callable[[str, FdmPass], None]] = []


class FdmPass:
    """The density map of one FDM pass of ``sc`` on ``dev`` and what every such pass does with it
    (module docstring).  ``map_layers``: the layers of the map (default one per FDM layer);
    ``map_view_flags``: the map view's ``VkImageViewCreateFlags`` (deferred / dynamic maps)."""

    #: the pass's fragment shader reads ``gl_FragCoord`` (or the fragment size), so turnip patches
    #: its FDM constants per bin (``fdm_apply_fs_params``); False: there is nothing to patch
    fs_fdm_constants = True
    #: the pass has a subsampled attachment (``VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT``), stored to its
    #: subsampled layout
    subsampled = False

    def __init__(self, dev: Vulkan, sc: fdm.Scenario, map_layers: int | None = None, map_view_flags: int = 0):
        vk = dev.vk
        self.dev, self.sc = dev, sc
        #: the create flag every image of the pass carries when the scenario uses offsets
        self.offset_flag = IMAGE_CREATE_FDM_OFFSET_BIT if sc.fdm_offset_create_flag else 0
        self.map_layers = sc.fdm_layers if map_layers is None else map_layers
        fmt, linear = self._map_format()
        usage = vk.VK_IMAGE_USAGE_FRAGMENT_DENSITY_MAP_BIT_EXT
        if linear:
            self.map: LayeredImage = HostMap(dev, sc.density.size, self.map_layers, fmt, usage, self.offset_flag,
                                             view_flags=map_view_flags)
        else:
            self.map = LayeredImage(dev, sc.density.size, self.map_layers, fmt,
                                    usage | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT, self.offset_flag,
                                    view_flags=map_view_flags)

    def _map_format(self) -> tuple[int, bool]:
        """:func:`map_choice` on this device; a linear choice whose image (usage, offset flag) the
        device refuses falls back to optimal tiling."""
        vk, dev = self.dev.vk, self.dev
        props = {f: vk.vkGetPhysicalDeviceFormatProperties(dev.physical, f) for f in MAP_FORMATS.values()}
        optimal = {f: int(p.optimalTilingFeatures) for f, p in props.items()}
        linear = {f: int(p.linearTilingFeatures) for f, p in props.items()}
        usage = vk.VK_IMAGE_USAGE_FRAGMENT_DENSITY_MAP_BIT_EXT
        while True:
            got = map_choice(self.sc.density, optimal, linear)
            if got is None:
                raise NotSupported(f"device {dev.info.name}: no density-map format holding the map's densities "
                                   f"({self.sc.density.format}, R32G32_SFLOAT or R16G16_SFLOAT) has "
                                   "VK_FORMAT_FEATURE_FRAGMENT_DENSITY_MAP_BIT_EXT")
            fmt, lin = got
            if not lin:
                return got
            try:
                vk.vkGetPhysicalDeviceImageFormatProperties(dev.physical, fmt, vk.VK_IMAGE_TYPE_2D,
                                                            vk.VK_IMAGE_TILING_LINEAR, usage, self.offset_flag)
                return got
            except vk.VkErrorFormatNotSupported:
                linear[fmt] = 0

    # -- the map
    def map_bytes(self) -> npt.NDArray[Any]:
        """The map's layers as the map's format holds them (:func:`map_values`), one per map layer
        (a shared layer repeated)."""
        values = map_values(self.sc.density, self.map.format)
        assert values is not None  # map_choice picked a format that holds them
        return np.stack([values[i if len(values) > 1 else 0] for i in range(self.map_layers)])

    def record_upload(self, cb: Handle, staging: Any) -> None:
        """The map from ``staging`` (:meth:`map_bytes`; None: a :class:`HostMap` the host wrote),
        then ``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT``."""
        vk = self.dev.vk
        if staging is None:
            self.map.barrier(cb, vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT, vk.VK_ACCESS_HOST_WRITE_BIT,
                             vk.VK_ACCESS_FRAGMENT_DENSITY_MAP_READ_BIT_EXT, vk.VK_PIPELINE_STAGE_HOST_BIT,
                             vk.VK_PIPELINE_STAGE_FRAGMENT_DENSITY_PROCESS_BIT_EXT)
            self.record_prepare(cb)
            return
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
        self.record_prepare(cb)

    def record_prepare(self, cb: Handle) -> None:
        """After the map's upload, in the same submission (the base class does nothing)."""

    def render(self) -> None:
        """Upload the map (its own, completed, submission: a static map must be in place before
        the pass is recorded, §1.6), then record and submit :meth:`record_pass`, between the calls
        ``listener("begin", self)`` and ``listener("end", self)`` of every :data:`PASS_LISTENERS`."""
        vk = self.dev.vk
        data = np.ascontiguousarray(self.map_bytes())
        if isinstance(self.map, HostMap):
            self.map.write(data)
            self.dev.run(lambda cb: self.record_upload(cb, None))
        else:
            staging = self.dev.buffer(data.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host_visible=True)
            staging.write(data)
            self.dev.run(lambda cb: self.record_upload(cb, staging))
        for listen in PASS_LISTENERS:
            listen("begin", self)
        try:
            self.dev.run(self.record_pass)
        finally:
            for listen in PASS_LISTENERS:
                listen("end", self)

    def record_pass(self, cb: Handle) -> None:
        raise NotImplementedError

    def as_rendered(self) -> dict[str, Any]:
        """The scenario fields (file schema, docs/scenario.md) that describe this pass as recorded
        where its scenario does not: ``attachments`` (the pass's own, the map excluded),
        ``depth_load_op`` (``none``: no depth attachment) and ``draws``.  The box compares the
        recorded pass with the model's plan of the scenario with these fields."""
        raise NotImplementedError

    # -- render pass 2
    def map_attachment(self) -> Handle:
        """The map's ``VkAttachmentDescription2``: LOAD / DONT_CARE, never stored (VUIDs
        02550/02551), ``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT`` throughout."""
        vk = self.dev.vk
        layout = vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT
        return vk.VkAttachmentDescription2(
            format=self.map.format, samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=layout, finalLayout=layout)

    def map_info(self, index: int) -> Handle:
        """``VkRenderPassFragmentDensityMapCreateInfoEXT`` naming attachment ``index`` (a plain v1
        ``VkAttachmentReference``, even for render pass 2, §4.4)."""
        vk = self.dev.vk
        return vk.VkRenderPassFragmentDensityMapCreateInfoEXT(fragmentDensityMapAttachment=vk.VkAttachmentReference(
            attachment=index, layout=vk.VK_IMAGE_LAYOUT_FRAGMENT_DENSITY_MAP_OPTIMAL_EXT))

    def create_render_pass2(self, info: Handle) -> Handle:
        """``vkCreateRenderPass2`` of ``info``, owned."""
        vk, dev = self.dev.vk, self.dev
        rp = vk.vkCreateRenderPass2(dev.device, info, None)
        dev.own(lambda: vk.vkDestroyRenderPass(dev.device, rp, None))
        return rp

    def create_framebuffer(self, rp: Handle, views: Sequence[Handle]) -> Handle:
        """A framebuffer of ``rp`` over the framebuffer extent on ``views`` then the map's view."""
        vk, dev = self.dev.vk, self.dev
        w, h = self.sc.framebuffer
        info = vk.VkFramebufferCreateInfo(renderPass=rp, pAttachments=[*views, self.map.view], width=w, height=h,
                                          layers=1)
        fb = vk.vkCreateFramebuffer(dev.device, info, None)
        dev.own(lambda: vk.vkDestroyFramebuffer(dev.device, fb, None))
        return fb

    def offsets(self) -> list[Pair]:
        """The scenario's FDM offsets, one per layer (empty without)."""
        return [(int(o[0]), int(o[1])) for o in self.sc.fdm_offsets] if self.sc.fdm_offsets else []

    def begin_render_pass2(self, cb: Handle, rp: Handle, fb: Handle, area: tuple[int, int, int, int],
                           clears: Sequence[Handle]) -> None:
        """``vkCmdBeginRenderPass2`` over ``area`` with ``clears`` and the map's (unused) value."""
        vk = self.dev.vk
        begin = vk.VkRenderPassBeginInfo(renderPass=rp, framebuffer=fb, renderArea=rect2d(vk, area),
                                         pClearValues=[*clears, vk.VkClearValue()])
        vk.vkCmdBeginRenderPass2(cb, begin, vk.VkSubpassBeginInfo(contents=vk.VK_SUBPASS_CONTENTS_INLINE))

    def end_render_pass2(self, cb: Handle) -> None:
        """``vkCmdEndRenderPass2`` with the offsets in ``VkSubpassEndInfo.pNext`` (the QCOM struct,
        sType and layout equal to the EXT one)."""
        vk = self.dev.vk
        offsets = self.offsets()
        end_next = (vk.VkSubpassFragmentDensityMapOffsetEndInfoQCOM(
            pFragmentDensityOffsets=[vk.VkOffset2D(x=o[0], y=o[1]) for o in offsets]) if offsets else None)
        vk.vkCmdEndRenderPass2(cb, vk.VkSubpassEndInfo(pNext=end_next))
