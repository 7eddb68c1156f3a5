"""The base of every real FDM pass (:class:`FdmPass`) and what all of them share.

An FDM pass renders a scenario (:class:`fdm.Scenario`) on a device with
``VK_EXT_fragment_density_map`` enabled: the density map is an R8G8_UNORM or R32G32_SFLOAT
image of one layer per map layer (:attr:`FdmPass.map`, with ``FRAGMENT_DENSITY_MAP_OFFSET`` when
the scenario uses offsets), uploaded by a staging copy and a barrier to
``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT`` in a submission that completes before the pass is recorded
(a static map is read by the host during ``vkCmdBeginRenderPass``, §1.6).  In a render pass 2
the map is the last attachment, ``LOAD``/``DONT_CARE`` and never stored (VUIDs 02550/02551),
referenced by ``VkRenderPassFragmentDensityMapCreateInfoEXT``; the pass ends with the scenario's
offsets in ``VkSubpassEndInfo.pNext``.  A subclass makes its colour (and depth, resolve)
attachments, render pass and pipeline, records the pass (:meth:`FdmPass.record_pass`) and reads
back; :func:`fdm_pipeline` is the full-screen-triangle pipeline they use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from turnip_base.harness import Handle, Vulkan

from .passes import rect2d
from .shaders import load_spv
from .targets import LayeredImage

Pair = tuple[int, int]

#: values the binding (realitix/vulkan 1.3.275) lacks (docs/spec/vulkan-fdm-and-cts.md §4.1, §4.3)
IMAGE_CREATE_FDM_OFFSET_BIT = 0x8000
PIPELINE_CREATE_RENDERING_FDM_ATTACHMENT_BIT = 0x00400000
VK_FMT_RGBA16UI = 95   # VK_FORMAT_R16G16B16A16_UINT
VK_FMT_R8G8_UNORM = 16
VK_FMT_R32G32_SFLOAT = 103


def density_format(sc: fdm.Scenario) -> int:
    """The VkFormat of the scenario's density map."""
    return VK_FMT_R8G8_UNORM if sc.density.format == "R8G8_UNORM" else VK_FMT_R32G32_SFLOAT


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
    ctx.own(lambda: vk.vkDestroyPipeline(ctx.device, pipe, None))
    return pipe, layout


class FdmPass:
    """The density map of one FDM pass of ``sc`` on ``dev`` and what every such pass does with it
    (module docstring).  ``map_layers``: the layers of the map (default one per FDM layer);
    ``map_view_flags``: the map view's ``VkImageViewCreateFlags`` (deferred / dynamic maps)."""

    def __init__(self, dev: Vulkan, sc: fdm.Scenario, map_layers: int | None = None, map_view_flags: int = 0):
        vk = dev.vk
        self.dev, self.sc = dev, sc
        #: the create flag every image of the pass carries when the scenario uses offsets
        self.offset_flag = IMAGE_CREATE_FDM_OFFSET_BIT if sc.fdm_offset_create_flag else 0
        self.map_layers = sc.fdm_layers if map_layers is None else map_layers
        self.map = LayeredImage(dev, sc.density.size, self.map_layers, density_format(sc),
                                vk.VK_IMAGE_USAGE_FRAGMENT_DENSITY_MAP_BIT_EXT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                self.offset_flag, view_flags=map_view_flags)

    # -- the map
    def map_bytes(self) -> npt.NDArray[Any]:
        """The map's layers as stored, one per map layer (a shared layer repeated)."""
        ls = self.sc.density.layers
        return np.stack([np.asarray(ls[i] if len(ls) > 1 else ls[0]) for i in range(self.map_layers)])

    def record_upload(self, cb: Handle, staging: Any) -> None:
        """The map from ``staging`` (:meth:`map_bytes`), then ``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT``."""
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
        self.record_prepare(cb)

    def record_prepare(self, cb: Handle) -> None:
        """After the map's upload, in the same submission (the base class does nothing)."""

    def render(self) -> None:
        """Upload the map (its own, completed, submission: a static map must be in place before
        the pass is recorded, §1.6), then record and submit :meth:`record_pass`."""
        vk = self.dev.vk
        data = np.ascontiguousarray(self.map_bytes())
        staging = self.dev.buffer(data.nbytes, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host_visible=True)
        staging.write(data)
        self.dev.run(lambda cb: self.record_upload(cb, staging))
        self.dev.run(self.record_pass)

    def record_pass(self, cb: Handle) -> None:
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
