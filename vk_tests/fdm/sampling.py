"""B18 of the ``fdm`` backend: ``fdm.subsampled_linear_apron_border`` (issue 9; the suite's §3 B18).

LINEAR (min = mag) sampling with CLAMP_TO_BORDER of a subsampled attachment across the bin edges
of a pass whose bins have different scales: what turnip's subsampled layout (shifted or
un-subsampled bins, aprons, ``b_o'`` alignment, edge-stuck bins) must make look like the expanded
image.  The scene is a :mod:`vk_tests.replay.subsampled` scene (``sampler`` LINEAR,
CLAMP_TO_BORDER, opaque white), 1536x1024 with the D8 seam map scaled x4 as R8G8_UNORM
``floor(255/n)`` bytes; its replay twin ``replay.twin.subsampled_linear_apron_border.seams.a750``
runs :func:`vk_tests.replay.subsampled.run_subsampled` on the identical scene.

* **Pass** (render pass 2, one subpass): ``fdm_scene_colour.frag`` writes the replay's colour of
  the fragment's centre (``2·gl_FragCoord``; :func:`vk_tests.replay.subsampled.scene_colour`)
  into two RGBA8 attachments, one SUBSAMPLED and one not (so the device needs
  ``fragmentDensityMapNonSubsampledImages``, true on turnip), both left in
  ``SHADER_READ_ONLY_OPTIMAL``; the non-subsampled one is also copied back (``view0_expanded``).
* **Sampling** (a plain pass, ``fdm_sample_pair.frag``): at the points of
  :func:`vk_tests.replay.subsampled.points` (pixel centres and a dense band around every bin
  edge of the plan), normalized, each image is sampled with ``texture()`` through an immutable
  sampler of the scene's filter and addressing: the subsampled one with
  ``VK_SAMPLER_CREATE_SUBSAMPLED_BIT_EXT`` (§1.8: minFilter = magFilter, mipmap NEAREST, LOD 0,
  CLAMP_TO_EDGE / CLAMP_TO_BORDER, normalized), the other with a plain one; results in 1/65535
  (``view0_samples``: ``(N, 2, 4)``, subsampled then expanded).
* **Judge** (:func:`judge_sampling_fdm`, pure).  Everywhere: the expanded image is drawn
  everywhere (alpha 255), and ``|subsampled − expanded| ≤ bound + 1.5/255`` per channel, the
  bound being the value range of the device's *own* expanded image within ``F + 1`` pixels of
  the sample, the border colour included where that window leaves the framebuffer (the
  reconstruction package's neighbourhood bound, as :func:`vk_tests.replay.subsampled.linear_bound`
  applies it); ``F`` per axis is the largest fragment extent of turnip's plan on turnip, else the
  largest extent the map allows (:func:`vk_tests.fdm.geometry.max_extent`).  On turnip
  (a modelled profile) the expanded image must also equal the large-fragment oracle of the model's
  plan (:func:`vk_tests.replay.subsampled.oracle_colours` of :func:`device_scenario_sampling`),
  and the points are those of that plan's bins.

Not yet run on an FDM device (lavapipe and the H100 lack the extension).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled, NotSupported, ScenarioError
from turnip_base.harness import Handle, Vulkan

from ..graphics.fdm_pass import FdmPass, fdm_pipeline
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
from ..replay.subsampled import (
    BORDERS,
    GARBAGE8,
    LINEAR_TOL,
    SEAMS,
    oracle_colours,
    points,
    sampler_of,
    subsampled_scene,
    window_range,
)
from ..scenes import density_value
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .device import (
    DRIVER_ID_MESA_TURNIP,
    FDM_EXT,
    caps_json,
    check_granularity,
    open_fdm_device,
    probe,
    sampling_missing,
)
from .expected import TURNIP_PROFILES, match_profile
from .geometry import max_extent
from .scene import BIG, BIG_TILE, FMT, GPU, VK_FMT_RGBA8, parse

Pair = tuple[int, int]


GROUP = "subsampled_linear_apron_border"


VARIANT = "seams"


#: the D8 seam map (6x4 cells of 1x1 / 2x2 / 4x4) scaled to the device-sized scene: 24x16 texels
SCALE = 4


#: points per row of the sampling target (rows come in pairs: subsampled, expanded)
ROW = 256


#: the sampling target's quantum (RGBA16_UINT of round(v * 65535))
Q = 65535.0


KIND = "subsampled_linear"


# ---- the scene --------------------------------------------------------------------------------
def seams_map(scale: int = SCALE) -> dict[str, Any]:
    """:data:`vk_tests.replay.subsampled.SEAMS` as R8G8_UNORM ``floor(255/n)`` bytes (the one FDM
    format every device has), each cell ``scale``×``scale`` texels."""
    rows = [[density_value(round(1 / d)) for d in row for _ in range(scale)]
            for row in SEAMS for _ in range(scale)]
    return {"format": "R8G8_UNORM", "views": [{"values": rows}]}


def b18_scene() -> dict[str, Any]:
    """The replay scene of B18 (and of its twin): LINEAR, CLAMP_TO_BORDER, opaque white."""
    scenario = {"gpu": GPU, "framebuffer": list(BIG), "tile_size": list(BIG_TILE), "bin_merging": "off",
                "density": seams_map()}
    return subsampled_scene(scenario, "linear", "clamp_to_border", "opaque_white")


def b18_twin_name() -> str:
    return f"replay.twin.{GROUP}.{VARIANT}.{GPU}"


def device_scenario_sampling(scene: Scene, profile: str) -> dict[str, Any]:
    """What turnip renders on ``profile``: the scene's scenario with turnip's own tiling (no
    forced tile), upstream merging, the two 4-byte RGBA8 attachments, no depth."""
    s = dict(scene["scenario"])
    s["gpu"] = profile
    s.pop("tile_size", None)
    s["bin_merging"] = "upstream"
    s["attachments"] = [{"cpp": 4}, {"cpp": 4}]
    s["depth_load_op"] = "none"
    return s


def _plan(scenario: Mapping[str, Any]) -> tuple[fdm.Scenario, RenderPassPlan | None]:
    sc = fdm.parse_scenario(scenario)
    plan = fdm.plan_render_pass(sc)
    return sc, plan if isinstance(plan, RenderPassPlan) else None


def sample_points(scene: Scene, profile: str | None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The sampled framebuffer positions: around the bins of turnip's plan on ``profile``, else
    of the scene's own plan (the run and the judge compute the same)."""
    scenario = device_scenario_sampling(scene, profile) if profile else scene["scenario"]
    _, plan = _plan(scenario)
    if plan is None:
        _, plan = _plan(scene["scenario"])
    if plan is None:  # pragma: no cover - the scene's own forced tiles always plan in GMEM
        raise NotModelled("fdm", "the scene renders in sysmem")
    return points(scene, plan, 0)


def bins_summary(scene: Scene) -> dict[str, dict[str, Any]]:
    """Turnip's own tiling of the scene per GPU (as :func:`vk_tests.fdm.expected.turnip_bins`)."""
    out: dict[str, dict[str, Any]] = {}
    for profile in TURNIP_PROFILES:
        _, plan = _plan(device_scenario_sampling(scene, profile))
        if plan is None:
            out[profile] = {"sysmem": True}
            continue
        areas = sorted({v.frag_area for t in plan.tiles for v in t.views if v.visible})
        out[profile] = {"bins": len(plan.tiles), "tile": list(plan.tiling.tile_size),
                        "areas": [list(a) for a in areas]}
    return out


# ---- pure: the judge --------------------------------------------------------------------------
def samples_from_target(target: npt.NDArray[Any], n: int) -> npt.NDArray[np.float64]:
    """The ``(N, 2, 4)`` samples (subsampled, expanded; in [0, 1]) of the sampling target
    ``(2·rows, ROW, 4)`` (``fdm_sample_pair.frag``: point ``r·ROW + x`` at rows ``2r``, ``2r + 1``)."""
    t = np.asarray(target, dtype=np.float64)
    rows = t.shape[0] // 2
    pairs = t[:2 * rows].reshape(rows, 2, t.shape[1], 4).transpose(0, 2, 1, 3).reshape(rows * t.shape[1], 2, 4)
    out: npt.NDArray[np.float64] = pairs[:n] / Q
    return out


def neighbourhood_bound(img: npt.NDArray[Any], radius: Pair, xs: npt.NDArray[np.float64],
                        ys: npt.NDArray[np.float64], addressing: str, border: Sequence[float]
                        ) -> npt.NDArray[np.float64]:
    """Per sample and channel: the value range (in [0, 1]) of ``img`` within ``radius`` pixels of
    the pixel holding the sample, the border colour included where that window leaves the image
    under CLAMP_TO_BORDER (:func:`vk_tests.replay.subsampled.linear_bound` with an explicit
    radius: both LINEAR results are convex combinations of what lies there)."""
    H, W = img.shape[:2]
    hi, lo = window_range(np.asarray(img, dtype=np.float64) / 255.0, radius)
    px = np.clip(np.floor(xs).astype(np.int64), 0, W - 1)
    py = np.clip(np.floor(ys).astype(np.int64), 0, H - 1)
    h, low = hi[py, px], lo[py, px]
    if addressing == "clamp_to_border":
        out = ((px - radius[0] < 0) | (px + radius[0] >= W) | (py - radius[1] < 0) | (py + radius[1] >= H))[:, None]
        bc = np.asarray(border, dtype=np.float64)[None, :]
        h, low = np.where(out, np.maximum(h, bc), h), np.where(out, np.minimum(low, bc), low)
    return np.asarray(h - low, dtype=np.float64)


def judge_sampling_fdm(scene: Scene, out: CaseOutput) -> Verdict:
    """B18's judge (module docstring)."""
    sc = fdm.parse_scenario(scene["scenario"])
    w, h = sc.framebuffer
    _, addressing, border = sampler_of(scene)
    device = dict(out.info.get("device") or {})
    profile = device.get("profile")
    turnip = device.get("driver_id") == DRIVER_ID_MESA_TURNIP and profile is not None
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    exp = np.asarray(out.images.get("view0_expanded"))
    if exp.shape != (h, w, 4):
        return Verdict(status="Fail", message=f"view0_expanded: shape {list(exp.shape)}, want {[h, w, 4]}")
    undrawn = exp[..., 3] != 255
    if undrawn.any():
        problems.append(f"view0_expanded: {int(undrawn.sum())} pixel(s) not drawn (alpha != 255)")
    note = ""
    radius: Pair
    if turnip:
        sc_dev, plan = _plan(device_scenario_sampling(scene, str(profile)))
        if plan is None:
            note = f"; turnip {profile}: the model renders the pass in sysmem, no exact expectation"
            m = max_extent(sc)
            radius = (m + 1, m + 1)
        else:
            want, probs = oracle_colours(sc_dev, plan, 0)
            problems += probs
            n = int(np.count_nonzero(np.any(exp != want, axis=2)))
            if n:
                problems.append(f"view0_expanded: {n} pixel(s) differ from the model's plan for turnip {profile}")
                mismatches += list(first_mismatches("view0_expanded", exp, want, limit=4))
            else:
                note = f"; expanded image equal to the model's plan for turnip {profile} ({len(plan.tiles)} bins)"
            fas = [t.views[0].frag_area for t in plan.tiles if t.views[0].visible]
            radius = (max(f[0] for f in fas) + 1, max(f[1] for f in fas) + 1)
    else:
        m = max_extent(sc)
        radius = (m + 1, m + 1)
        who = f"driver {device.get('driver_id')} ({device.get('name', '?')})"
        try:
            sc0, plan0 = _plan(scene["scenario"])
            info = "the model renders the pass in sysmem"
            if plan0 is not None:
                n = int(np.count_nonzero(np.any(exp != oracle_colours(sc0, plan0, 0)[0], axis=2)))
                info = (f"{n} pixel(s) differ from turnip's plan for {sc.gpu.name}" if n
                        else f"equal to turnip's plan for {sc.gpu.name}")
        except (NotModelled, ScenarioError) as e:
            info = f"no turnip plan ({e})"
        note = f"; {who} is not a modelled turnip GPU: the bound decides; information: {info}"
    xs, ys = sample_points(scene, str(profile) if turnip else None)
    s = np.asarray(out.images.get("view0_samples"))
    if s.shape != (len(xs), 2, 4):
        problems.append(f"view0_samples: shape {list(s.shape)}, want {[len(xs), 2, 4]}")
    else:
        err = np.abs(s[:, 0].astype(np.float64) - s[:, 1])
        allowed = neighbourhood_bound(exp, radius, xs, ys, addressing, BORDERS[border][1]) + LINEAR_TOL
        bad = np.any(err > allowed, axis=1)
        if bad.any():
            idx = np.nonzero(bad)[0]
            problems.append(f"view0_samples: {len(idx)} of {len(xs)} subsampled LINEAR samples differ from the "
                            f"expanded ones by more than the neighbourhood bound + 1.5 LSB (radius {radius}); worst "
                            f"excess {float((err - allowed).max()):.4f}")
            mismatches += [{"image": "view0_samples", "x": float(xs[i]), "y": float(ys[i]),
                            "got": [round(float(t), 5) for t in s[i, 0]],
                            "want": [round(float(t), 5) for t in s[i, 1]]} for i in idx[:4]]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems) + note, mismatches=tuple(mismatches[:8]))
    return Verdict(status="Pass", message=f"{len(xs)} LINEAR {addressing} samples of the subsampled image within the "
                                          f"bound of the device's expanded image (radius {radius}){note}")


# ---- the device run (not yet run on an FDM device) -------------------------------------------
def _barrier(vk: Any, cb: Handle, image: Handle, old: int, new: int, src_access: int, dst_access: int,
             src_stage: int, dst_stage: int) -> None:
    rng = vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=0, levelCount=1,
                                     baseArrayLayer=0, layerCount=1)
    b = vk.VkImageMemoryBarrier(srcAccessMask=src_access, dstAccessMask=dst_access, oldLayout=old, newLayout=new,
                                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=image, subresourceRange=rng)
    vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, None, 0, None, 1, [b])


class ApronPass(FdmPass):
    """The FDM pass: a subsampled and a non-subsampled RGBA8 attachment, the R8G8 map."""

    def __init__(self, dev: Vulkan, sc: fdm.Scenario):
        super().__init__(dev, sc, map_layers=1)
        vk = dev.vk
        self.subsampled = True  # self.sub
        extra = self.offset_flag
        sampled = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT
        self.sub = LayeredImage(dev, sc.framebuffer, 1, VK_FMT_RGBA8, sampled,
                                flags=vk.VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT | extra)
        self.full = LayeredImage(dev, sc.framebuffer, 1, VK_FMT_RGBA8, sampled | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                                 flags=extra)
        self.rp = self._render_pass()
        self.fb = self.create_framebuffer(self.rp, [self.sub.view, self.full.view])
        self.pipe, self.layout = fdm_pipeline(dev, "fdm_scene_colour.frag.spv", push_bytes=8, attachments=2,
                                              render_pass=self.rp)

    def as_rendered(self) -> dict[str, Any]:
        """:meth:`FdmPass.as_rendered`: two RGBA8 colour attachments, cleared and stored, the first
        subsampled; one draw."""
        return {"attachments": [{"cpp": 4, "load_op": "clear", "store_op": "store", "subsampled": True},
                                {"cpp": 4, "load_op": "clear", "store_op": "store"}],
                "depth_load_op": "none", "draws": 1}

    def _render_pass(self) -> Handle:
        vk = self.dev.vk
        C, R = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
        dc_load, dc_store = vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, vk.VK_ATTACHMENT_STORE_OP_DONT_CARE
        colour = [vk.VkAttachmentDescription2(
            format=VK_FMT_RGBA8, samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE, stencilLoadOp=dc_load, stencilStoreOp=dc_store,
            initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED, finalLayout=R) for _ in range(2)]
        refs = [vk.VkAttachmentReference2(attachment=i, layout=C, aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT)
                for i in range(2)]
        sub = vk.VkSubpassDescription2(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS, viewMask=0,
                                       pColorAttachments=refs)
        out = vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT
        write = vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
        deps = [vk.VkSubpassDependency2(srcSubpass=vk.VK_SUBPASS_EXTERNAL, dstSubpass=0, srcStageMask=out,
                                        dstStageMask=out, srcAccessMask=0,
                                        dstAccessMask=write | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT),
                vk.VkSubpassDependency2(srcSubpass=0, dstSubpass=vk.VK_SUBPASS_EXTERNAL, srcStageMask=out,
                                        dstStageMask=vk.VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT
                                        | vk.VK_PIPELINE_STAGE_TRANSFER_BIT, srcAccessMask=write,
                                        dstAccessMask=vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_TRANSFER_READ_BIT)]
        info = vk.VkRenderPassCreateInfo2(pNext=self.map_info(2), pAttachments=[*colour, self.map_attachment()],
                                          pSubpasses=[sub], pDependencies=deps)
        return self.create_render_pass2(info)

    def record_pass(self, cb: Handle) -> None:
        vk = self.dev.vk
        w, h = self.sc.framebuffer
        garbage = vk.VkClearValue(color=vk.VkClearColorValue(float32=list(GARBAGE8)))
        self.begin_render_pass2(cb, self.rp, self.fb, (0, 0, w, h), [garbage, garbage])
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipe)
        vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=0.0, y=0.0, width=float(w), height=float(h), minDepth=0.0,
                                                     maxDepth=1.0)])
        vk.vkCmdSetScissor(cb, 0, 1, [rect2d(vk, (0, 0, w, h))])
        vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 8,
                              vk.ffi.new("float[]", [float(w), float(h)]))
        vk.vkCmdDraw(cb, 3, 1, 0, 0)
        self.end_render_pass2(cb)

    def read_expanded(self) -> npt.NDArray[np.uint8]:
        """The non-subsampled attachment, copied to a buffer (and back to shader-read)."""
        vk, dev = self.dev.vk, self.dev
        w, h = self.sc.framebuffer
        R, S = vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
        T = vk.VK_PIPELINE_STAGE_TRANSFER_BIT
        with dev.scope():
            buf = dev.buffer(w * h * 4, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_visible=True)

            def record(cb: Handle) -> None:
                _barrier(vk, cb, self.full.handle, R, S, 0, vk.VK_ACCESS_TRANSFER_READ_BIT, T, T)
                region = vk.VkBufferImageCopy(
                    bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                    imageSubresource=vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0,
                                                                 baseArrayLayer=0, layerCount=1),
                    imageOffset=vk.VkOffset3D(x=0, y=0, z=0), imageExtent=vk.VkExtent3D(width=w, height=h, depth=1))
                vk.vkCmdCopyImageToBuffer(cb, self.full.handle, S, buf.handle, 1, [region])
                _barrier(vk, cb, self.full.handle, S, R, vk.VK_ACCESS_TRANSFER_READ_BIT, vk.VK_ACCESS_SHADER_READ_BIT,
                         T, vk.VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT)
                dev.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT, T,
                                   vk.VK_PIPELINE_STAGE_HOST_BIT)

            dev.run(record)
            return buf.read(w * h * 4).reshape(h, w, 4).copy()

    def sample(self, scene: Scene, xs: npt.NDArray[np.float64], ys: npt.NDArray[np.float64]
               ) -> npt.NDArray[np.float64]:
        """Both images sampled at the points (``fdm_sample_pair.frag``): ``(N, 2, 4)``."""
        vk, dev = self.dev.vk, self.dev
        filt, addressing, border = sampler_of(scene)
        f = vk.VK_FILTER_LINEAR if filt == "linear" else vk.VK_FILTER_NEAREST
        mode = (vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER if addressing == "clamp_to_border"
                else vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE)
        w, h = self.sc.framebuffer
        n = len(xs)
        rows = -(-n // ROW)
        with dev.scope():
            samplers = []
            for flags in (vk.VK_SAMPLER_CREATE_SUBSAMPLED_BIT_EXT, 0):
                # subsampled: min = mag, mipmap NEAREST, LOD 0, U/V edge or border, no anisotropy
                # or compare, normalized (VUIDs 02574-02580); the plain one the same
                info = vk.VkSamplerCreateInfo(
                    flags=flags, magFilter=f, minFilter=f, mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                    addressModeU=mode, addressModeV=mode, addressModeW=vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
                    minLod=0.0, maxLod=0.0, anisotropyEnable=vk.VK_FALSE, compareEnable=vk.VK_FALSE,
                    borderColor=getattr(vk, BORDERS[border][0]), unnormalizedCoordinates=vk.VK_FALSE)
                s = vk.vkCreateSampler(dev.device, info, None)
                dev.own(functools.partial(vk.vkDestroySampler, dev.device, s, None))
                samplers.append(s)
            frag = vk.VK_SHADER_STAGE_FRAGMENT_BIT
            bindings = [vk.VkDescriptorSetLayoutBinding(
                binding=i, descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount=1,
                stageFlags=frag, pImmutableSamplers=[samplers[i]]) for i in range(2)]
            bindings.append(vk.VkDescriptorSetLayoutBinding(
                binding=2, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1, stageFlags=frag))
            set_layout = vk.vkCreateDescriptorSetLayout(dev.device,
                                                        vk.VkDescriptorSetLayoutCreateInfo(pBindings=bindings), None)
            dev.own(lambda: vk.vkDestroyDescriptorSetLayout(dev.device, set_layout, None))
            pool = dev.descriptor_pool([(vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 2),
                                        (vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1)], 1)
            dset = dev.allocate_set(pool, set_layout)
            pts = np.stack([(xs / w).astype(np.float32), (ys / h).astype(np.float32)], axis=1)
            buf = dev.buffer(max(pts.nbytes, 16), vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host_visible=True)
            buf.write(np.ascontiguousarray(pts))
            writes = [vk.VkWriteDescriptorSet(
                dstSet=dset, dstBinding=i, dstArrayElement=0,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                pImageInfo=[vk.VkDescriptorImageInfo(imageView=img.view,
                                                     imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)])
                for i, img in enumerate((self.sub, self.full))]
            writes.append(vk.VkWriteDescriptorSet(
                dstSet=dset, dstBinding=2, dstArrayElement=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                # the binding's VK_WHOLE_SIZE is -1, which cffi refuses for a VkDeviceSize: the size itself
                pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buf.handle, offset=0, range=max(pts.nbytes, 16))]))
            vk.vkUpdateDescriptorSets(dev.device, len(writes), writes, 0, None)
            rp = render_pass(dev, FMT, "load")
            pipe, layout = fdm_pipeline(dev, "fdm_sample_pair.frag.spv", push_bytes=4, attachments=1, render_pass=rp,
                                        set_layout=set_layout)
            target = color_image(dev, ROW, 2 * rows, FMT)
            fbo = framebuffer(dev, rp, target)

            def record(cb: Handle) -> None:
                cmd_begin_render_pass(dev, cb, rp, fbo, target, (0, 0, ROW, 2 * rows))
                vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
                vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, [dset], 0, None)
                vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=0.0, y=0.0, width=float(ROW), height=float(2 * rows),
                                                             minDepth=0.0, maxDepth=1.0)])
                vk.vkCmdSetScissor(cb, 0, 1, [rect2d(vk, (0, 0, ROW, 2 * rows))])
                vk.vkCmdPushConstants(cb, layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 4,
                                      vk.ffi.new("uint32_t[]", [n]))
                vk.vkCmdDraw(cb, 3, 1, 0, 0)
                cmd_end_render_pass(dev, cb)

            dev.run(record)
            return samples_from_target(read_image(dev, target), n)


def run_sampling_fdm(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """B18 on an FDM device (module docstring); NotSupported names what the device lacks."""
    vk = ctx.vk
    sc, _, _ = parse(scene)
    caps = probe(ctx)
    ok = True
    if FDM_EXT in caps.extensions:
        try:
            vk.vkGetPhysicalDeviceImageFormatProperties(
                ctx.physical, VK_FMT_RGBA8, vk.VK_IMAGE_TYPE_2D, vk.VK_IMAGE_TILING_OPTIMAL,
                vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT,
                vk.VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT)
        except vk.VkErrorFormatNotSupported:
            ok = False
    lack = sampling_missing(caps, scene, ok)
    if lack is not None:
        raise NotSupported(f"{lack} (device {caps.name})")
    check_granularity(caps, scene)
    profile = match_profile(caps.driver_id, caps.name)
    xs, ys = sample_points(scene, profile)
    dev = open_fdm_device(ctx, offset_ext=False)  # render pass 2 only
    try:
        with dev.scope():
            p = ApronPass(dev, sc)
            p.render()   # a static map: in place before the pass (§1.6)
            images: dict[str, npt.NDArray[Any]] = {"view0_expanded": p.read_expanded(),
                                                   "view0_samples": p.sample(scene, xs, ys).astype(np.float32)}
    finally:
        ctx.messages.extend(dev.messages)
        dev.close()
    info = {"device": {**caps_json(caps), "profile": profile}, "path": "rp2", "readback": "sampled",
            "kind": KIND, "turnip_bins": bins_summary(scene)}
    return CaseOutput(images=images, info=info)
