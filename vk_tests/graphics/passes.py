"""Render passes, pipelines and commands of the graphics cases (on :mod:`vk_tests.graphics.targets`).

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
  :func:`cmd_copy` (``vkCmdCopyImage``).

Everything created is owned by the :class:`~turnip_base.harness.Vulkan` context (destroyed on
``close`` or at the end of the enclosing ``ctx.scope()``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from turnip_base.harness import Handle, Vulkan

from .shaders import load_spv
from .targets import FORMATS, ColorTarget, Rect, subresource_layers, vk_format

__all__ = ["FullscreenPipeline", "cmd_begin_render_pass", "cmd_blit", "cmd_clear_image", "cmd_clear_rect",
           "cmd_copy", "cmd_draw_fullscreen", "cmd_end_render_pass", "cmd_push_constants", "cmd_set_scissor",
           "cmd_set_viewport", "framebuffer", "rect2d", "render_pass"]


def fullscreen_states(vk: Any, viewports: int, attachments: int) -> dict[str, Handle]:
    """The fixed-function state of the suite's full-screen-triangle pipelines, as
    ``VkGraphicsPipelineCreateInfo`` keywords: no vertex input, a triangle list, ``viewports``
    dynamic viewports and scissors, fill without culling, one sample, ``attachments`` colour
    attachments written without blending."""
    mask = (vk.VK_COLOR_COMPONENT_R_BIT | vk.VK_COLOR_COMPONENT_G_BIT | vk.VK_COLOR_COMPONENT_B_BIT
            | vk.VK_COLOR_COMPONENT_A_BIT)
    blend_att = vk.VkPipelineColorBlendAttachmentState(blendEnable=vk.VK_FALSE, colorWriteMask=mask)
    return {
        "pVertexInputState": vk.VkPipelineVertexInputStateCreateInfo(),
        "pInputAssemblyState": vk.VkPipelineInputAssemblyStateCreateInfo(
            topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, primitiveRestartEnable=vk.VK_FALSE),
        "pViewportState": vk.VkPipelineViewportStateCreateInfo(viewportCount=viewports, scissorCount=viewports),
        "pRasterizationState": vk.VkPipelineRasterizationStateCreateInfo(
            depthClampEnable=vk.VK_FALSE, rasterizerDiscardEnable=vk.VK_FALSE, polygonMode=vk.VK_POLYGON_MODE_FILL,
            cullMode=vk.VK_CULL_MODE_NONE, frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE, depthBiasEnable=vk.VK_FALSE,
            lineWidth=1.0),
        "pMultisampleState": vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT,
                                                                     sampleShadingEnable=vk.VK_FALSE),
        "pColorBlendState": vk.VkPipelineColorBlendStateCreateInfo(logicOpEnable=vk.VK_FALSE,
                                                                   pAttachments=[blend_att] * attachments),
        "pDynamicState": vk.VkPipelineDynamicStateCreateInfo(
            pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR]),
    }


def owned_render_pass(ctx: Vulkan, atts: Sequence[Handle], sub: Handle, access: int) -> Handle:
    """A one-subpass ``VkRenderPass`` of ``atts`` and ``sub``, owned by ``ctx``, whose external
    dependencies order every command before and after it against all its graphics work on
    ``access`` (the replay's depth and MSAA passes)."""
    vk = ctx.vk
    outer, inner = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk.VK_PIPELINE_STAGE_ALL_GRAPHICS_BIT
    deps = [vk.VkSubpassDependency(srcSubpass=vk.VK_SUBPASS_EXTERNAL, dstSubpass=0, srcStageMask=outer,
                                   dstStageMask=inner, srcAccessMask=access, dstAccessMask=access),
            vk.VkSubpassDependency(srcSubpass=0, dstSubpass=vk.VK_SUBPASS_EXTERNAL, srcStageMask=inner,
                                   dstStageMask=outer, srcAccessMask=access, dstAccessMask=access)]
    rp = vk.vkCreateRenderPass(ctx.device, vk.VkRenderPassCreateInfo(pAttachments=list(atts), pSubpasses=[sub],
                                                                      pDependencies=deps), None)
    ctx.own(lambda: vk.vkDestroyRenderPass(ctx.device, rp, None))
    return rp


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
    ctx.own(lambda: vk.vkDestroyRenderPass(ctx.device, rp, None))
    return rp


def framebuffer(ctx: Vulkan, rp: Handle, targets: ColorTarget | Sequence[ColorTarget]) -> Handle:
    """A framebuffer of ``rp`` on ``targets`` (one per colour attachment, all the same size)."""
    vk = ctx.vk
    ts = [targets] if isinstance(targets, ColorTarget) else list(targets)
    info = vk.VkFramebufferCreateInfo(renderPass=rp, pAttachments=[t.image.views[0] for t in ts], width=ts[0].width,
                                      height=ts[0].height, layers=1)
    fb = vk.vkCreateFramebuffer(ctx.device, info, None)
    ctx.own(lambda: vk.vkDestroyFramebuffer(ctx.device, fb, None))
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
        ctx.own(lambda: vk.vkDestroyPipelineLayout(ctx.device, layout, None))
        self.layout = layout
        vert = ctx.shader_module(load_spv("fullscreen.vert.spv"))
        frag = ctx.shader_module(frag_spv)
        stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert, pName="main"),
                  vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag,
                                                     pName="main")]
        info = vk.VkGraphicsPipelineCreateInfo(pStages=stages, layout=layout, renderPass=rp, subpass=0,
                                               **fullscreen_states(vk, viewports, attachments))
        pipe = vk.vkCreateGraphicsPipelines(ctx.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
        ctx.own(lambda: vk.vkDestroyPipeline(ctx.device, pipe, None))
        self.pipeline = pipe

    def bind(self, cb: Handle) -> None:
        vk = self.ctx.vk
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipeline)


# ---- commands -------------------------------------------------------------------------
def rect2d(vk: Any, r: Rect) -> Handle:
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
    info = vk.VkRenderPassBeginInfo(renderPass=rp, framebuffer=fb, renderArea=rect2d(vk, area),
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
    vk.vkCmdSetScissor(cb, index, 1, [rect2d(vk, rect)])


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
    crect = vk.VkClearRect(rect=rect2d(vk, rect), baseArrayLayer=0, layerCount=1)
    vk.vkCmdClearAttachments(cb, 1, [att], 1, [crect])


def cmd_blit(ctx: Vulkan, cb: Handle, src: ColorTarget, src_box: tuple[int, int, int, int], dst: ColorTarget,
             dst_box: tuple[int, int, int, int], linear: bool = False) -> None:
    """``vkCmdBlitImage`` of ``src_box`` onto ``dst_box``, each ``(x0, y0, x1, y1)`` with
    exclusive ends (a scaled blit when the sizes differ), NEAREST unless ``linear``."""
    vk = ctx.vk
    region = vk.VkImageBlit(
        srcSubresource=subresource_layers(vk),
        srcOffsets=[vk.VkOffset3D(x=src_box[0], y=src_box[1], z=0), vk.VkOffset3D(x=src_box[2], y=src_box[3], z=1)],
        dstSubresource=subresource_layers(vk),
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
    region = vk.VkImageCopy(srcSubresource=subresource_layers(vk), srcOffset=vk.VkOffset3D(x=x, y=y, z=0),
                            dstSubresource=subresource_layers(vk), dstOffset=vk.VkOffset3D(x=dx, y=dy, z=0),
                            extent=vk.VkExtent3D(width=w, height=h, depth=1))
    src.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
    dst.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
    vk.vkCmdCopyImage(cb, src.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.handle,
                      vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])
