"""What a graphics case needs on top of the compute harness (:mod:`vk_tests.harness`).

* :func:`color_image` (:class:`ColorTarget`): a single-level colour image usable as a render
  target and as a transfer source and destination (RGBA16_UINT / RGBA32_UINT for integer
  outputs, RGBA8_UNORM for a gradient) that knows its layout; each command helper moves it
  to the optimal layout behind a full barrier.
* :func:`render_pass` / :func:`framebuffer`: a one-subpass render pass with one or more colour
  attachments in ``COLOR_ATTACHMENT_OPTIMAL`` (``LOAD_OP_LOAD`` or ``LOAD_OP_CLEAR``).
  Render-pass objects are core Vulkan 1.0, so they work on every device the harness opens
  (the harness enables no features, and dynamic rendering would need one).
* :class:`FullscreenPipeline`: a graphics pipeline drawing a full-screen triangle without
  vertex buffers (``vk_tests/shaders/fullscreen.vert``, which also hands the fragment shader
  the position as a fraction of the viewport), dynamic viewport and scissor, and
  fragment-stage push constants.
* Commands: :func:`cmd_begin_render_pass`, :func:`cmd_set_viewport`, :func:`cmd_set_scissor`,
  :func:`cmd_push_constants`, :func:`cmd_draw_fullscreen`, :func:`cmd_clear_image`,
  :func:`cmd_clear_rect`, :func:`cmd_blit` (``vkCmdBlitImage``, NEAREST by default),
  :func:`cmd_copy` (``vkCmdCopyImage``); readback with :func:`read_image`.

Everything created is owned by the :class:`~vk_tests.harness.Vulkan` context (destroyed on
``close`` or at the end of the enclosing ``ctx.scope()``).  Shader modules are the committed
SPIR-V of ``vk_tests/spv`` (:func:`load_spv`; rebuild with ``python -m vk_tests.build_spirv``).
"""
from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .harness import Handle, NotSupported, Vulkan

__all__ = ["FORMATS", "ColorTarget", "FullscreenPipeline", "Rect", "cmd_begin_render_pass", "cmd_blit",
           "cmd_clear_image", "cmd_clear_rect", "cmd_copy", "cmd_draw_fullscreen", "cmd_end_render_pass",
           "cmd_push_constants", "cmd_set_scissor", "cmd_set_viewport", "color_image", "framebuffer", "load_spv",
           "read_image", "render_pass", "require_graphics"]

#: x, y, width, height (half-open, framebuffer pixels)
Rect = tuple[int, int, int, int]

#: name -> (VkFormat attribute, channels, numpy dtype, clear-value kind)
FORMATS: dict[str, tuple[str, int, Any, str]] = {
    "rgba16ui": ("VK_FORMAT_R16G16B16A16_UINT", 4, np.uint16, "uint32"),
    "rgba32ui": ("VK_FORMAT_R32G32B32A32_UINT", 4, np.uint32, "uint32"),
    "rgba8": ("VK_FORMAT_R8G8B8A8_UNORM", 4, np.uint8, "float32"),
}


#: Vulkan 1.1 core format features the binding leaves as None
FORMAT_FEATURE_TRANSFER_SRC = 0x4000
FORMAT_FEATURE_TRANSFER_DST = 0x8000


def load_spv(name: str) -> bytes:
    """A committed SPIR-V module of ``vk_tests/spv`` (e.g. ``fullscreen.vert.spv``)."""
    return resources.files("vk_tests").joinpath("spv").joinpath(name).read_bytes()


def vk_format(ctx: Vulkan, fmt: str) -> int:
    return int(getattr(ctx.vk, FORMATS[fmt][0]))


def require_graphics(ctx: Vulkan, fmt: str, blit: bool = True) -> None:
    """NotSupported unless the queue does graphics and ``fmt`` is a colour attachment (and a
    blit source and destination when ``blit``) with optimal tiling."""
    vk = ctx.vk
    if not ctx.info.queue_graphics:
        raise NotSupported(f"device {ctx.info.name}: no queue family with VK_QUEUE_GRAPHICS_BIT")
    need = vk.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT | FORMAT_FEATURE_TRANSFER_SRC | FORMAT_FEATURE_TRANSFER_DST
    what = "COLOR_ATTACHMENT, TRANSFER_SRC and TRANSFER_DST"
    if blit:
        need |= vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT | vk.VK_FORMAT_FEATURE_BLIT_DST_BIT
        what += ", BLIT_SRC and BLIT_DST"
    ctx.require_format(vk_format(ctx, fmt), need, what)


class ColorTarget:
    """A single-level colour image usable as a render target and a transfer source and
    destination, with the layout it is in.  :meth:`use` moves it to the layout the next
    command needs behind a full barrier (every earlier access happens-before the next one), so
    the helpers below need no other synchronisation and every layout is the optimal one (the
    validation layer warns about ``GENERAL``)."""

    def __init__(self, ctx: Vulkan, width: int, height: int, fmt: str):
        vk = ctx.vk
        self.ctx, self.fmt, self.width, self.height = ctx, fmt, width, height
        f = vk_format(ctx, fmt)
        usage = (vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        self.image = ctx.image(width, height, 1, f, f, usage)
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    @property
    def handle(self) -> Handle:
        return self.image.handle

    def use(self, cb: Handle, layout: int) -> None:
        vk = self.ctx.vk
        acc = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
               | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT)
        src = 0 if self.layout == vk.VK_IMAGE_LAYOUT_UNDEFINED else acc
        all_stages = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        self.image.barrier(cb, self.layout, layout, src, acc, all_stages, all_stages)
        self.layout = layout


def color_image(ctx: Vulkan, width: int, height: int, fmt: str) -> ColorTarget:
    """A render target + transfer source/destination (content undefined until cleared)."""
    return ColorTarget(ctx, width, height, fmt)


def render_pass(ctx: Vulkan, fmts: str | Sequence[str], load_op: str = "load") -> Handle:
    """One subpass with one colour attachment per format of ``fmts``, each in
    ``COLOR_ATTACHMENT_OPTIMAL`` throughout (:func:`cmd_begin_render_pass` moves the targets
    there); ``load_op`` is ``"load"`` or ``"clear"`` (the clear value is given at begin)."""
    vk = ctx.vk
    fmts = [fmts] if isinstance(fmts, str) else list(fmts)
    ATTACHMENT = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
    ops = {"load": vk.VK_ATTACHMENT_LOAD_OP_LOAD, "clear": vk.VK_ATTACHMENT_LOAD_OP_CLEAR}
    atts = [vk.VkAttachmentDescription(
        format=vk_format(ctx, fmt), samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=ops[load_op],
        storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE, stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
        stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=ATTACHMENT,
        finalLayout=ATTACHMENT) for fmt in fmts]
    refs = [vk.VkAttachmentReference(attachment=i, layout=ATTACHMENT) for i in range(len(fmts))]
    sub = vk.VkSubpassDescription(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pColorAttachments=refs)
    all_access = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
                  | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT)
    color = vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
    # transfers before the pass happen-before its attachment accesses, and the other way round
    deps = [vk.VkSubpassDependency(srcSubpass=vk.VK_SUBPASS_EXTERNAL, dstSubpass=0,
                                   srcStageMask=vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                   dstStageMask=vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                                   srcAccessMask=all_access, dstAccessMask=color),
            vk.VkSubpassDependency(srcSubpass=0, dstSubpass=vk.VK_SUBPASS_EXTERNAL,
                                   srcStageMask=vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                                   dstStageMask=vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                   srcAccessMask=vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, dstAccessMask=all_access)]
    info = vk.VkRenderPassCreateInfo(pAttachments=atts, pSubpasses=[sub], pDependencies=deps)
    rp = vk.vkCreateRenderPass(ctx.device, info, None)
    ctx._own(lambda: vk.vkDestroyRenderPass(ctx.device, rp, None))
    return rp


def framebuffer(ctx: Vulkan, rp: Handle, targets: ColorTarget | Sequence[ColorTarget]) -> Handle:
    """A framebuffer of ``rp`` on ``targets`` (one per colour attachment, all the same size)."""
    vk = ctx.vk
    ts = [targets] if isinstance(targets, ColorTarget) else list(targets)
    info = vk.VkFramebufferCreateInfo(renderPass=rp, pAttachments=[t.image.views[0] for t in ts], width=ts[0].width,
                                      height=ts[0].height, layers=1)
    fb = vk.vkCreateFramebuffer(ctx.device, info, None)
    ctx._own(lambda: vk.vkDestroyFramebuffer(ctx.device, fb, None))
    return fb


class FullscreenPipeline:
    """A full-screen triangle (three vertices from ``gl_VertexIndex``; the vertex shader passes
    the position as a fraction of the viewport at location 0) with ``frag_spv`` writing
    ``attachments`` colour attachments, dynamic viewport and scissor (``viewports`` of each;
    more than one needs the ``multiViewport`` feature) and ``push_bytes`` of fragment-stage
    push constants."""

    def __init__(self, ctx: Vulkan, rp: Handle, frag_spv: bytes, push_bytes: int, viewports: int = 1,
                 attachments: int = 1):
        vk = ctx.vk
        self.ctx = ctx
        if viewports > 1:
            ctx.require_feature("multiViewport")
        rngs = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, offset=0, size=push_bytes)]
        linfo = vk.VkPipelineLayoutCreateInfo(pSetLayouts=None, pPushConstantRanges=rngs if push_bytes else None)
        layout = vk.vkCreatePipelineLayout(ctx.device, linfo, None)
        ctx._own(lambda: vk.vkDestroyPipelineLayout(ctx.device, layout, None))
        self.layout = layout
        vert = ctx.shader_module(load_spv("fullscreen.vert.spv"))
        frag = ctx.shader_module(frag_spv)
        stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert, pName="main"),
                  vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag,
                                                     pName="main")]
        vertex_input = vk.VkPipelineVertexInputStateCreateInfo()
        assembly = vk.VkPipelineInputAssemblyStateCreateInfo(topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
                                                             primitiveRestartEnable=vk.VK_FALSE)
        viewport = vk.VkPipelineViewportStateCreateInfo(viewportCount=viewports, scissorCount=viewports)
        raster = vk.VkPipelineRasterizationStateCreateInfo(
            depthClampEnable=vk.VK_FALSE, rasterizerDiscardEnable=vk.VK_FALSE, polygonMode=vk.VK_POLYGON_MODE_FILL,
            cullMode=vk.VK_CULL_MODE_NONE, frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE, depthBiasEnable=vk.VK_FALSE,
            lineWidth=1.0)
        multisample = vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT,
                                                              sampleShadingEnable=vk.VK_FALSE)
        mask = (vk.VK_COLOR_COMPONENT_R_BIT | vk.VK_COLOR_COMPONENT_G_BIT | vk.VK_COLOR_COMPONENT_B_BIT
                | vk.VK_COLOR_COMPONENT_A_BIT)
        blend_att = vk.VkPipelineColorBlendAttachmentState(blendEnable=vk.VK_FALSE, colorWriteMask=mask)
        blend = vk.VkPipelineColorBlendStateCreateInfo(logicOpEnable=vk.VK_FALSE,
                                                       pAttachments=[blend_att] * attachments)
        dynamic = vk.VkPipelineDynamicStateCreateInfo(
            pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR])
        info = vk.VkGraphicsPipelineCreateInfo(
            pStages=stages, pVertexInputState=vertex_input, pInputAssemblyState=assembly,
            pViewportState=viewport, pRasterizationState=raster, pMultisampleState=multisample,
            pColorBlendState=blend, pDynamicState=dynamic, layout=layout, renderPass=rp, subpass=0)
        pipe = vk.vkCreateGraphicsPipelines(ctx.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
        ctx._own(lambda: vk.vkDestroyPipeline(ctx.device, pipe, None))
        self.pipeline = pipe

    def bind(self, cb: Handle) -> None:
        vk = self.ctx.vk
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipeline)


# ---- commands -------------------------------------------------------------------------
def _rect2d(vk: Any, r: Rect) -> Handle:
    return vk.VkRect2D(offset=vk.VkOffset2D(x=r[0], y=r[1]), extent=vk.VkExtent2D(width=r[2], height=r[3]))


def _clear_value(vk: Any, fmt: str, value: Sequence[float]) -> Handle:
    kind = FORMATS[fmt][3]
    if kind == "uint32":
        return vk.VkClearColorValue(uint32=[int(v) for v in value])
    return vk.VkClearColorValue(float32=[float(v) for v in value])


def cmd_begin_render_pass(ctx: Vulkan, cb: Handle, rp: Handle, fb: Handle,
                          targets: ColorTarget | Sequence[ColorTarget], area: Rect,
                          clear: Sequence[float] | None = None) -> None:
    """Begin ``rp`` on ``fb`` (whose attachments are ``targets``) over ``area``; ``clear`` is
    every attachment's clear value for ``LOAD_OP_CLEAR``."""
    vk = ctx.vk
    ts = [targets] if isinstance(targets, ColorTarget) else list(targets)
    for t in ts:
        t.use(cb, vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)
    values = [vk.VkClearValue(color=_clear_value(vk, t.fmt, clear)) for t in ts] if clear is not None else None
    info = vk.VkRenderPassBeginInfo(renderPass=rp, framebuffer=fb, renderArea=_rect2d(vk, area),
                                    pClearValues=values)
    vk.vkCmdBeginRenderPass(cb, info, vk.VK_SUBPASS_CONTENTS_INLINE)


def cmd_end_render_pass(ctx: Vulkan, cb: Handle) -> None:
    ctx.vk.vkCmdEndRenderPass(cb)


def cmd_set_viewport(ctx: Vulkan, cb: Handle, x: float, y: float, w: float, h: float, index: int = 0) -> None:
    vk = ctx.vk
    vp = vk.VkViewport(x=x, y=y, width=w, height=h, minDepth=0.0, maxDepth=1.0)
    vk.vkCmdSetViewport(cb, index, 1, [vp])


def cmd_set_scissor(ctx: Vulkan, cb: Handle, rect: Rect, index: int = 0) -> None:
    vk = ctx.vk
    vk.vkCmdSetScissor(cb, index, 1, [_rect2d(vk, rect)])


def cmd_push_constants(ctx: Vulkan, cb: Handle, pipe: FullscreenPipeline, floats: Sequence[float]) -> None:
    vk = ctx.vk
    data = vk.ffi.new("float[]", [float(v) for v in floats])
    vk.vkCmdPushConstants(cb, pipe.layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 4 * len(floats), data)


def cmd_draw_fullscreen(ctx: Vulkan, cb: Handle) -> None:
    ctx.vk.vkCmdDraw(cb, 3, 1, 0, 0)


def cmd_clear_image(ctx: Vulkan, cb: Handle, target: ColorTarget, value: Sequence[float]) -> None:
    """``vkCmdClearColorImage`` of the whole image (outside a render pass)."""
    vk = ctx.vk
    target.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
    vk.vkCmdClearColorImage(cb, target.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                            _clear_value(vk, target.fmt, value), 1, [target.image.subresource_range()])


def cmd_clear_rect(ctx: Vulkan, cb: Handle, target: ColorTarget, rect: Rect, value: Sequence[float],
                   attachment: int = 0) -> None:
    """``vkCmdClearAttachments`` of colour attachment ``attachment`` (``target``) over ``rect``
    (inside a render pass; the rectangle must lie inside the render area)."""
    vk = ctx.vk
    att = vk.VkClearAttachment(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, colorAttachment=attachment,
                               clearValue=vk.VkClearValue(color=_clear_value(vk, target.fmt, value)))
    crect = vk.VkClearRect(rect=_rect2d(vk, rect), baseArrayLayer=0, layerCount=1)
    vk.vkCmdClearAttachments(cb, 1, [att], 1, [crect])


def _layers(vk: Any) -> Handle:
    return vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0,
                                       layerCount=1)


def cmd_blit(ctx: Vulkan, cb: Handle, src: ColorTarget, src_box: tuple[int, int, int, int], dst: ColorTarget,
             dst_box: tuple[int, int, int, int], linear: bool = False) -> None:
    """``vkCmdBlitImage`` of ``src_box`` onto ``dst_box``, each ``(x0, y0, x1, y1)`` with
    exclusive ends (a scaled blit when the sizes differ), NEAREST unless ``linear``."""
    vk = ctx.vk
    region = vk.VkImageBlit(
        srcSubresource=_layers(vk),
        srcOffsets=[vk.VkOffset3D(x=src_box[0], y=src_box[1], z=0), vk.VkOffset3D(x=src_box[2], y=src_box[3], z=1)],
        dstSubresource=_layers(vk),
        dstOffsets=[vk.VkOffset3D(x=dst_box[0], y=dst_box[1], z=0), vk.VkOffset3D(x=dst_box[2], y=dst_box[3], z=1)])
    src.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
    dst.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
    vk.vkCmdBlitImage(cb, src.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.handle,
                      vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region],
                      vk.VK_FILTER_LINEAR if linear else vk.VK_FILTER_NEAREST)


def cmd_copy(ctx: Vulkan, cb: Handle, src: ColorTarget, dst: ColorTarget, rect: Rect,
             dst_offset: tuple[int, int] | None = None) -> None:
    """``vkCmdCopyImage`` of ``rect`` of ``src`` to ``dst_offset`` (default: the same place) of ``dst``."""
    vk = ctx.vk
    x, y, w, h = rect
    dx, dy = (x, y) if dst_offset is None else dst_offset
    region = vk.VkImageCopy(srcSubresource=_layers(vk), srcOffset=vk.VkOffset3D(x=x, y=y, z=0),
                            dstSubresource=_layers(vk), dstOffset=vk.VkOffset3D(x=dx, y=dy, z=0),
                            extent=vk.VkExtent3D(width=w, height=h, depth=1))
    src.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
    dst.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
    vk.vkCmdCopyImage(cb, src.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.handle,
                      vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])


def read_image(ctx: Vulkan, target: ColorTarget) -> NDArray[Any]:
    """The whole image as ``(height, width, channels)`` of the format's dtype (submits and
    waits)."""
    vk = ctx.vk
    image = target.image
    _, channels, dtype, _ = FORMATS[target.fmt]
    itemsize = np.dtype(dtype).itemsize
    nbytes = image.width * image.height * channels * itemsize
    with ctx.scope():
        buf = ctx.buffer(nbytes, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_visible=True)
        region = vk.VkBufferImageCopy(bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                                      imageSubresource=_layers(vk), imageOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                      imageExtent=vk.VkExtent3D(width=image.width, height=image.height, depth=1))

        def record(cb: Handle) -> None:
            target.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
            vk.vkCmdCopyImageToBuffer(cb, image.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buf.handle, 1,
                                      [region])
            ctx.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                               vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

        ctx.run(record)
        raw = buf.read(nbytes)
    return raw.view(dtype).reshape(image.height, image.width, channels).copy()
