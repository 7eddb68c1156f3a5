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

The judge (:func:`judge_fsr`) uses :func:`vk_tests.replay.judge.oracle_view`, the same oracle as the
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

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from turnip_base.errors import NotSupported
from turnip_base.harness import Handle, Vulkan

from ..graphics.shaders import load_spv
from ..replay.scene import CLEAR
from ..suite.cases import CaseOutput, Scene
from .device import FsrDevice, choose_texel, missing, probe, require_formats
from .scene import ATTACHMENTS, RATE_FORMAT, RATE_LAYOUT, clamped_areas, plan_fsr, rate_texels, rates_of

Pair = tuple[int, int]


class _Target:
    """An image of ``layers`` layers and ``samples`` samples with one view over all layers."""

    def __init__(self, dev: Vulkan, size: Pair, fmt: int, layers: int, samples: int, usage: int) -> None:
        vk = dev.vk
        self.size, self.fmt, self.layers = size, fmt, layers
        self.handle = dev.create_image(size, fmt, usage, layers=layers, samples=samples)
        self.view = dev.image_view(self.handle, fmt, layers=layers,
                                   view_type=vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY if layers > 1 else vk.VK_IMAGE_VIEW_TYPE_2D)

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
    dev.own(lambda: vk.vkDestroyRenderPass(dev.device, rp, None))
    return rp


def _pipeline(dev: Vulkan, rp: Handle, samples: int, rate: bool) -> tuple[Handle, Handle]:
    """The full-screen triangle with ``fsr_coord.frag`` (``fsr_coord_1x1.frag`` without
    ``rate``): three colour attachments, dynamic viewport and scissor, no sample shading
    (sample shading forces 1×1), and the rate state ``1×1, [KEEP, REPLACE]``."""
    vk = dev.vk
    rng = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, offset=0, size=8)
    linfo = vk.VkPipelineLayoutCreateInfo(pPushConstantRanges=[rng])
    layout = vk.vkCreatePipelineLayout(dev.device, linfo, None)
    dev.own(lambda: vk.vkDestroyPipelineLayout(dev.device, layout, None))
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
    dev.own(lambda: vk.vkDestroyPipeline(dev.device, pipe, None))
    return pipe, layout


def _render(ctx: Vulkan, scene: Scene, rate: bool, texel: Pair) -> dict[str, npt.NDArray[Any]]:
    """Render the scene on a second device (:class:`_FsrDevice`) and read every view back.
    With ``rate`` the model's areas are the shading-rate attachment; without it (devices
    without the extension, tests only) the same pass runs at 1×1."""
    sc, plan, samples = plan_fsr(scene)
    vk = ctx.vk
    w, h = sc.framebuffer
    views = sc.fdm_layers
    fmts = [getattr(vk, attr) for _, attr, _ in ATTACHMENTS]
    with FsrDevice(ctx, rate=rate) as dev:
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
        dev.own(lambda: vk.vkDestroyFramebuffer(dev.device, fb, None))
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


def run_fsr(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Render the scene with the model's areas as the shading-rate attachment (NotSupported
    naming what the device lacks); images :func:`image_names` of every view."""
    sc, plan, samples = plan_fsr(scene)
    caps = probe(ctx)
    why = missing(caps, sc.fdm_layers, samples, f"device {ctx.info.name}")
    if why:
        raise NotSupported(why)
    require_formats(ctx, samples, rate=True)
    texel = choose_texel(caps)
    rates = [[r.width, r.height, r.sample_counts] for r in caps.rates]
    info: dict[str, Any] = {"device": ctx.info.describe(), "rate_attachment": True, "texel_size": list(texel),
                            "rates": rates, "samples": samples, "views": sc.fdm_layers,
                            "max_coverage_samples": caps.max_coverage_samples}
    recs = rates_of(info)
    for v in range(sc.fdm_layers):
        areas = clamped_areas(plan, v, recs, samples)  # NotSupported where the clamp is not exact
        rate_texels(sc, plan, v, texel)
        rate_texels(sc, plan, v, texel, areas)
        info[f"view{v}_areas"] = sorted({f"{a[0]}x{a[1]}->{b[0]}x{b[1]}" for a, b in
                                         zip((t.views[v].frag_area for t in plan.tiles), areas, strict=True)})
    images = _render(ctx, scene, rate=True, texel=texel)
    return CaseOutput(images=images, info=info)
