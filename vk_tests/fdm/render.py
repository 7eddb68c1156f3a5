"""The ``fdm`` backend: real ``VK_EXT_fragment_density_map`` render passes (issue 9, groups B and C).

A case renders the scene of a replay case (:func:`vk_tests.replay.scene.replay_scene`: a scenario, the
load op, the store path, optional ``clear_rects``) with the device's own FDM implementation, plus
one key of its own, ``"fdm"``: ``{"path": "rp2" | "dynrend", "readback": "auto" | "both" |
"subsampled" | "nonsubsampled"}`` (B2 adds ``"map_timing"`` and ``"cts"``).

* **Device.**  The physical device's extensions, features and properties are queried through one
  ``VkPhysicalDeviceFeatures2`` chain (:func:`feature_chain`) and that same chain is passed to
  ``vkCreateDevice`` (:func:`open_fdm_device`, via :data:`turnip_base.harness.DeviceSetup`); no
  fragment-shading-rate struct is ever chained (VUID-VkDeviceCreateInfo-fragmentDensityMap-04481..
  04483).  The suite's device (``ctx``) has no extension enabled, so each case opens its own device
  on the same physical device, with the validation layer when ``ctx`` has it; its messages are
  appended to ``ctx.messages`` so that the runner fails the case on any of them.
* **Support.**  :func:`missing` names the first thing the device lacks, with the CTS conditions of
  docs/spec/vulkan-fdm-and-cts.md §2.6 and the binding gaps of §4.3 (e.g.
  ``VK_EXT_fragment_density_map``, ``multiview``, ``fragmentDensityMapNonSubsampledImages``,
  ``VK_EXT_fragment_density_map_offset``); the case raises :class:`turnip_base.errors.NotSupported` with it
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
  (:func:`vk_tests.replay.judge.oracle_view`) of the model's plan for that GPU (:func:`device_scenario`).
  On other vendors the exact comparison with turnip's plan for the scene's GPU is information in
  the message, never a failure.

B8 (``"map_layers": 1``: a one-layer FDM view for two views), B9 and C5 (the scenario's
``writes_viewport_index``: ``fullscreen_vpi.vert`` writes ``gl_ViewportIndex = 0``, which needs
``VK_EXT_shader_viewport_index_layer``; their twins replay through
:func:`vk_tests.replay.shared_viewport.run_replay_shared`) are cases here; the depth (B15) and MSAA
(B10) cases are in :mod:`vk_tests.fdm.geometry` and listed by :func:`fdm_cases`.

None of this has run on an FDM device yet (lavapipe and the NVIDIA H100 lack the extension); see
docs/fdm-backend.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from turnip_base.errors import NotSupported
from turnip_base.harness import Handle, Vulkan

from ..graphics.fdm_pass import (
    VK_FMT_RGBA16UI,
    FdmPass,
    fdm_pipeline,
    uint_clear,
)
from ..graphics.passes import (
    cmd_begin_render_pass,
    cmd_end_render_pass,
    framebuffer,
    rect2d,
    render_pass,
)
from ..graphics.targets import (
    LayeredImage,
    color_image,
    read_image,
)
from ..replay.scene import BG, CLEAR, image_names
from ..suite.cases import CaseOutput, Scene
from .device import caps_json, check_granularity, cmd_end_rendering2, missing, open_fdm_device, probe, readback_kind
from .expected import match_profile, turnip_bins
from .scene import (
    FMT,
    MAP_VIEW_FLAGS,
    clear_rect_colour,
    clear_rects_of,
    map_layers,
    map_timing,
    parse,
    pass_render_area,
    split_of,
    split_parts,
)

Rect4 = tuple[int, int, int, int]


class CorePass(FdmPass):
    """One real FDM pass of a scene on an FDM device (see the module docstring)."""

    ATT = 2  # the colour attachments of fdm_real.frag

    def __init__(self, dev: Vulkan, sc: fdm.Scenario, path: str, load_op: str, subsampled: bool,
                 clear_rects: Sequence[Rect4], n_map_layers: int | None = None, map_view_flags: int = 0,
                 split: bool = False):
        super().__init__(dev, sc, n_map_layers, map_view_flags)
        vk = dev.vk
        self.path, self.load_op, self.subsampled = path, load_op, subsampled
        self.clear_rects = tuple(clear_rects)
        self.split = split
        self.layers = sc.fdm_layers  # one colour layer per view (multiview) and one map layer per FDM layer
        self.view_mask = (1 << sc.views) - 1 if sc.views > 1 else 0
        extra = self.offset_flag
        usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
        if subsampled:
            usage |= vk.VK_IMAGE_USAGE_SAMPLED_BIT
            flags = vk.VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT | extra
        else:
            usage |= vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
            flags = extra
        self.colour = [LayeredImage(dev, sc.framebuffer, self.layers, VK_FMT_RGBA16UI, usage, flags,
                                    array_view=subsampled) for _ in range(self.ATT)]
        self.render_area = pass_render_area(sc)
        vert = "fullscreen_vpi.vert.spv" if sc.writes_viewport_index else "fullscreen.vert.spv"
        if path == "rp2":
            self.rp = self._render_pass()
            self.fb = self.create_framebuffer(self.rp, [c.view for c in self.colour])
            self.pipe, self.layout = fdm_pipeline(dev, "fdm_real.frag.spv", push_bytes=16, attachments=self.ATT,
                                               render_pass=self.rp, vert=vert)
        else:
            self.rp = self.fb = None
            self.pipe, self.layout = fdm_pipeline(dev, "fdm_real.frag.spv", push_bytes=16, attachments=self.ATT,
                                               view_mask=self.view_mask, dynrend_fdm=True, vert=vert)

    def as_rendered(self) -> dict[str, Any]:
        """:meth:`FdmPass.as_rendered`: ``ATT`` RGBA16_UINT colour attachments (8 bytes), loaded
        or cleared, stored; no depth; one draw per part.  A split pass (C6: turnip merges the
        suspended and resumed instances into one pass) has the first part's scissor: the stream is
        read at each bin's first draw."""
        load = "load" if self.load_op == "load" else "clear"
        parts = self.parts()
        att: dict[str, Any] = {"cpp": 8, "load_op": load, "store_op": "store"}
        if self.subsampled:  # every target is created with VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT
            att["subsampled"] = True
        out: dict[str, Any] = {"attachments": [dict(att) for _ in range(self.ATT)], "depth_load_op": "none",
                               "draws": len(parts)}
        if len(parts) > 1:
            out["scissors"] = [list(parts[0][0])]
        return out

    # -- objects
    def _render_pass(self) -> Handle:
        vk = self.dev.vk
        att_layout = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
        load = vk.VK_ATTACHMENT_LOAD_OP_LOAD if self.load_op == "load" else vk.VK_ATTACHMENT_LOAD_OP_CLEAR
        colour = [vk.VkAttachmentDescription2(
            format=VK_FMT_RGBA16UI, samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=load,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE, stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=att_layout, finalLayout=att_layout)
            for _ in range(self.ATT)]
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
        info = vk.VkRenderPassCreateInfo2(pNext=self.map_info(self.ATT), pAttachments=[*colour, self.map_attachment()],
                                          pSubpasses=[sub], pDependencies=deps)
        return self.create_render_pass2(info)

    # -- commands
    def record_prepare(self, cb: Handle) -> None:
        """After the map's upload: the colour attachments cleared to the background (or, when
        subsampled, only moved to the attachment layout)."""
        vk = self.dev.vk
        colour_acc = vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
        out_stage = vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT
        for c in self.colour:
            if not self.subsampled:
                c.barrier(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                          vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT)
                vk.vkCmdClearColorImage(cb, c.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                        vk.VkClearColorValue(uint32=list(BG)), 1, [c.range()])
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
        area = rect2d(vk, self.render_area)
        clear = [uint_clear(vk, CLEAR) for _ in range(self.ATT)]
        parts = self.parts()
        for i, (scissor, rflags) in enumerate(parts):
            if self.path == "rp2":
                self.begin_render_pass2(cb, self.rp, self.fb, self.render_area, clear)
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
            vk.vkCmdSetScissor(cb, 0, 1, [rect2d(vk, scissor)])
            data = vk.ffi.new("float[]", [float(vp.x), float(vp.y), float(vp.w), float(vp.h)])
            vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 16, data)
            vk.vkCmdDraw(cb, 3, 1, 0, 0)
            if self.clear_rects and i == len(parts) - 1:
                value = uint_clear(vk, clear_rect_colour())
                atts_c = [vk.VkClearAttachment(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, colorAttachment=k,
                                               clearValue=value) for k in range(self.ATT)]
                # multiview: baseArrayLayer 0, layerCount 1 (VUID-vkCmdClearAttachments-baseArrayLayer-00018)
                rects = [vk.VkClearRect(rect=rect2d(vk, r), baseArrayLayer=0, layerCount=1)
                         for r in self.clear_rects]
                vk.vkCmdClearAttachments(cb, len(atts_c), atts_c, len(rects), rects)
            offsets = self.offsets()
            if self.path == "rp2":
                self.end_render_pass2(cb)
            elif offsets:
                # C6: the same offsets at the suspending and the resuming end (the spec requires them equal)
                cmd_end_rendering2(dev, cb, offsets)
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
            for a, name in enumerate(image_names(v)):
                i = a * self.layers + v
                out[name] = raw[i * w * h * 4:(i + 1) * w * h * 4].reshape(h, w, 4).copy()
        return out

    def read_subsampled(self) -> dict[str, npt.NDArray[np.uint16]]:
        """Readback path (b): each attachment and view resampled at every pixel centre through an
        immutable NEAREST / CLAMP_TO_EDGE subsampled sampler into a plain RGBA16_UINT target."""

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
            dev.own(lambda: vk.vkDestroySampler(dev.device, sampler, None))
            binding = vk.VkDescriptorSetLayoutBinding(
                binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, pImmutableSamplers=[sampler])
            linfo = vk.VkDescriptorSetLayoutCreateInfo(pBindings=[binding])
            set_layout = vk.vkCreateDescriptorSetLayout(dev.device, linfo, None)
            dev.own(lambda: vk.vkDestroyDescriptorSetLayout(dev.device, set_layout, None))
            pool = dev.descriptor_pool([(vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, self.ATT)], self.ATT)
            rp = render_pass(dev, FMT, "load")
            pipe, layout = fdm_pipeline(dev, "fdm_resample.frag.spv", push_bytes=12, attachments=1, render_pass=rp,
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
                    vk.vkCmdSetScissor(cb, 0, 1, [rect2d(vk, (0, 0, w, h))])
                    data = vk.ffi.new("float[]", [float(w), float(h), float(v)])
                    vk.vkCmdPushConstants(cb, layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 12, data)
                    vk.vkCmdDraw(cb, 3, 1, 0, 0)
                    cmd_end_render_pass(dev, cb)

            dev.run(record)
            for (a, v), t in targets.items():
                out[image_names(v)[a]] = read_image(dev, t)
        return out


def _render(dev: Vulkan, sc: fdm.Scenario, path: str, load_op: str, subsampled: bool,
            clear_rects: Sequence[Rect4], n_map_layers: int | None = None, map_view_flags: int = 0,
            split: bool = False) -> dict[str, npt.NDArray[np.uint16]]:
    with dev.scope():
        # deferred / dynamic maps (B2) are uploaded the same way: in place before recording, so
        # that every reading time (§1.6) sees the same contents
        p = CorePass(dev, sc, path, load_op, subsampled, clear_rects, n_map_layers, map_view_flags, split)
        p.render()
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
    rects = clear_rects_of(scene)
    load_op = scene.get("load_op", "clear")
    # the EXT offset extension only where vkCmdEndRendering2EXT ends the pass: dynamic rendering with offsets
    offsets = sc.fdm_offsets is not None or sc.fdm_offset_create_flag
    dev = open_fdm_device(ctx, offset_ext=path == "dynrend" and offsets)
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
