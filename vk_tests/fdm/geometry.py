"""More cases of the ``fdm`` backend (issue 9): depth with LRZ (B15), MSAA resolves (B10), and the
replay twins of the shared-viewport scenes (B9, C5).

The cases and scenes follow :mod:`vk_tests.fdm` (a replay scene plus ``"fdm"`` options)
with two more option keys: ``kind`` (``depth``: :mod:`vk_tests.replay.depth`'s quads; ``msaa``:
:mod:`vk_tests.replay.msaa`'s triangle) and ``twin`` (the replay case that runs the same scene:
``replay.twin.<group>.<variant>.<gpu>``, run by the depth / MSAA replayers).

* **Device.**  As in :mod:`vk_tests.fdm` (:func:`~vk_tests.fdm.device.probe`,
  :func:`~vk_tests.fdm.device.missing`, a second device with the queried chain), plus what the
  kind needs: ``fragmentDensityMapNonSubsampledImages`` (the depth and MSAA images are read back
  by copies; a subsampled depth or multisampled image cannot be resampled by the NEAREST pass),
  D32_SFLOAT as a depth attachment and transfer source, the sample count in
  ``framebufferColorSampleCounts`` and in the RGBA8 image format's ``sampleCounts``, and
  ``standardSampleLocations`` (the judge's sample positions).
* **Pass.**  Render pass 2, one subpass: colour (RGBA16_UINT for depth scenes; RGBA8 with
  ``samples`` samples and a 1-sample RGBA8 resolve attachment for MSAA), D32_SFLOAT depth
  (``LOAD_OP_CLEAR`` 1.0, test ``LESS`` with writes), the FDM (``LOAD``/``DONT_CARE``,
  ``FRAGMENT_DENSITY_MAP_OPTIMAL_EXT``); every non-map image non-subsampled, with
  ``FRAGMENT_DENSITY_MAP_OFFSET_BIT`` when the scenario uses offsets, final layout
  ``TRANSFER_SRC_OPTIMAL`` for what is read back.  Geometry: ``quad.vert`` + ``fdm_quad_id.frag``
  (real ``gl_FragCoord`` and ``gl_FragSizeEXT``) or ``triangle.vert`` + ``flat_colour.frag``, the
  replay modules' push constants and clip-space mapping through the application's viewport.
* **Judges** (pure).  Everywhere the spec: for depth, each drawn pixel holds a fragment
  ``(id, 2·c, 16·fa.x + fa.y)`` whose block contains it (uniform, area within the density bound:
  :func:`vk_tests.fdm.judge.fragment_block_problems`), ``id`` is the quad of least ``z`` whose
  rectangle holds the centre ``c`` and the depth is its ``z`` (§1.5: one sample, at the centre;
  all pixels of a covered fragment updated), undrawn pixels keep the clear values and none lies
  deeper inside a quad than the largest fragment; for MSAA, every resolved pixel is a mean of
  ``k`` triangle samples and ``N − k`` clear samples (±1 LSB), and pixels farther than the
  largest allowed fragment from the triangle's edges are all triangle or all clear.  On turnip
  (a modelled profile) also exact equality (MSAA: ±1 LSB) with the replay module's oracle of the
  model's plan for that GPU (:func:`device_scenario_kind`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled, NotSupported, ScenarioError
from turnip_base.harness import Handle, Vulkan

from ..graphics.fdm_pass import (
    VK_FMT_RGBA16UI,
    FdmPass,
    uint_clear,
)
from ..graphics.passes import (
    rect2d,
)
from ..graphics.targets import (
    LayeredImage,
)
from ..replay.depth import DEPTH_CLEAR, GeometryPipeline, oracle_depth, quads_of
from ..replay.msaa import CLEAR8, COLOUR8, GRID, oracle_msaa, triangle_of
from ..replay.scene import CLEAR
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .device import DRIVER_ID_MESA_TURNIP, caps_json, check_granularity, kind_missing, missing, open_fdm_device, probe
from .expected import device_scenario_kind, match_profile, turnip_bins
from .judge import area_windows, fragment_block_problems, texel_size_for, texel_table, zero_density_near
from .scene import SAMPLE_POSITIONS, VK_FMT_D32, VK_FMT_RGBA8, kind_of, parse, pass_render_area, samples_of

Pair = tuple[int, int]


class GeometryPass(FdmPass):
    """One render-pass-2 FDM pass of a depth or MSAA scene (module docstring)."""

    def __init__(self, dev: Vulkan, sc: fdm.Scenario, scene: Scene):
        super().__init__(dev, sc, map_layers=1)
        vk = dev.vk
        self.scene = scene
        self.kind = kind_of(scene)
        self.fs_fdm_constants = self.kind == "depth"  # flat_colour.frag (MSAA) reads no gl_FragCoord
        self.samples = 1 if self.kind == "depth" else samples_of(scene)
        extra = self.offset_flag
        size = sc.framebuffer
        colour_usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
        color = vk.VK_IMAGE_ASPECT_COLOR_BIT
        if self.kind == "depth":
            self.colour = LayeredImage(dev, size, 1, VK_FMT_RGBA16UI, colour_usage, flags=extra, aspect=color)
            self.depth: LayeredImage | None = LayeredImage(
                dev, size, 1, VK_FMT_D32, vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
                | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT, flags=extra, aspect=vk.VK_IMAGE_ASPECT_DEPTH_BIT)
            self.resolve: LayeredImage | None = None
            self.readback = self.colour
        else:
            self.colour = LayeredImage(dev, size, 1, VK_FMT_RGBA8, vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                                       flags=extra, samples=self.samples, aspect=color)
            self.resolve = LayeredImage(dev, size, 1, VK_FMT_RGBA8, colour_usage, flags=extra, aspect=color)
            self.depth = None
            self.readback = self.resolve
        self.rp = self._render_pass()
        self.fb = self.create_framebuffer(self.rp, [self.colour.view] + ([self.resolve.view] if self.resolve else [])
                                          + ([self.depth.view] if self.depth else []))
        if self.kind == "depth":
            self.pipe = GeometryPipeline(dev, self.rp, "quad.vert.spv", "fdm_quad_id.frag.spv")
        else:
            self.pipe = GeometryPipeline(dev, self.rp, "triangle.vert.spv", "flat_colour.frag.spv", 48,
                                         samples=self.samples, depth=False)

    def as_rendered(self) -> dict[str, Any]:
        """:meth:`FdmPass.as_rendered`: depth, an RGBA16_UINT colour and a D32_SFLOAT depth
        attachment, both cleared and stored, one draw per quad; MSAA, an RGBA8 colour of
        ``samples`` samples, cleared, not stored, resolved, one draw."""
        if self.kind == "depth":
            return {"attachments": [{"cpp": 8, "load_op": "clear", "store_op": "store"},
                                    {"cpp": 4, "store_op": "store"}],
                    "depth_load_op": "clear", "draws": len(quads_of(self.scene))}
        return {"attachments": [{"cpp": 4, "samples": self.samples, "load_op": "clear", "store_op": "dont_care",
                                 "resolve": True}], "depth_load_op": "none", "draws": 1}

    def _render_pass(self) -> Handle:
        vk = self.dev.vk
        C, D = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
        SRC, U = vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, vk.VK_IMAGE_LAYOUT_UNDEFINED
        clear = vk.VK_ATTACHMENT_LOAD_OP_CLEAR
        dc_load, dc_store = vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, vk.VK_ATTACHMENT_STORE_OP_DONT_CARE
        store = vk.VK_ATTACHMENT_STORE_OP_STORE

        def desc(fmt: int, samples: int, load_op: int, store_op: int, initial: int, final: int) -> Handle:
            return vk.VkAttachmentDescription2(format=fmt, samples=samples, loadOp=load_op, storeOp=store_op,
                                               stencilLoadOp=dc_load, stencilStoreOp=dc_store, initialLayout=initial,
                                               finalLayout=final)

        descs, colour_refs, resolve_refs, depth_ref = [], [], None, None
        aspect_c = vk.VK_IMAGE_ASPECT_COLOR_BIT
        if self.kind == "depth":
            descs.append(desc(VK_FMT_RGBA16UI, 1, clear, store, U, SRC))
            colour_refs.append(vk.VkAttachmentReference2(attachment=0, layout=C, aspectMask=aspect_c))
            descs.append(desc(VK_FMT_D32, 1, clear, store, U, SRC))
            depth_ref = vk.VkAttachmentReference2(attachment=1, layout=D, aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT)
        else:
            # the multisampled image is never read: only its resolve is stored
            descs.append(desc(VK_FMT_RGBA8, self.samples, clear, vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, U, C))
            colour_refs.append(vk.VkAttachmentReference2(attachment=0, layout=C, aspectMask=aspect_c))
            descs.append(desc(VK_FMT_RGBA8, 1, dc_load, store, U, SRC))
            resolve_refs = [vk.VkAttachmentReference2(attachment=1, layout=C, aspectMask=aspect_c)]
        fdm_info = self.map_info(len(descs))
        descs.append(self.map_attachment())
        sub = vk.VkSubpassDescription2(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS, viewMask=0,
                                       pColorAttachments=colour_refs, pResolveAttachments=resolve_refs,
                                       pDepthStencilAttachment=depth_ref)
        out = vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT
        tests = vk.VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT | vk.VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT
        writes = vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT
        reads = vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT
        deps = [vk.VkSubpassDependency2(srcSubpass=vk.VK_SUBPASS_EXTERNAL, dstSubpass=0, srcStageMask=out | tests,
                                        dstStageMask=out | tests, srcAccessMask=0, dstAccessMask=reads | writes),
                vk.VkSubpassDependency2(srcSubpass=0, dstSubpass=vk.VK_SUBPASS_EXTERNAL, srcStageMask=out | tests,
                                        dstStageMask=vk.VK_PIPELINE_STAGE_TRANSFER_BIT, srcAccessMask=writes,
                                        dstAccessMask=vk.VK_ACCESS_TRANSFER_READ_BIT)]
        info = vk.VkRenderPassCreateInfo2(pNext=fdm_info, pAttachments=descs, pSubpasses=[sub], pDependencies=deps)
        return self.create_render_pass2(info)

    def record_pass(self, cb: Handle) -> None:
        vk, sc = self.dev.vk, self.sc
        w, h = sc.framebuffer
        if self.kind == "depth":
            clears = [uint_clear(vk, CLEAR),
                      vk.VkClearValue(depthStencil=vk.VkClearDepthStencilValue(depth=DEPTH_CLEAR,
                                                                               stencil=0))]
        else:
            clears = [vk.VkClearValue(color=vk.VkClearColorValue(float32=[c / 255 for c in CLEAR8])),
                      vk.VkClearValue()]
        self.begin_render_pass2(cb, self.rp, self.fb, (0, 0, w, h), clears)
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.pipe.pipeline)
        uv, sci = sc.viewports[0], sc.scissors[0]
        vk.vkCmdSetViewport(cb, 0, 1, [vk.VkViewport(x=float(uv.x), y=float(uv.y), width=float(uv.w),
                                                     height=float(uv.h), minDepth=0.0, maxDepth=1.0)])
        vk.vkCmdSetScissor(cb, 0, 1, [rect2d(vk, sci.as_tuple())])
        if self.kind == "depth":
            for i, (x0, y0, x1, y1, z) in enumerate(quads_of(self.scene)):
                # the replay's push constants (frag_size, frag_offset unused by fdm_quad_id.frag)
                ndc = [2 * (x0 - uv.x) / uv.w - 1, 2 * (y0 - uv.y) / uv.h - 1,
                       2 * (x1 - uv.x) / uv.w - 1, 2 * (y1 - uv.y) / uv.h - 1]
                data = vk.ffi.new("float[]", [1.0, 1.0, 0.0, 0.0, *ndc, z, 0.0])
                vk.ffi.cast("uint32_t *", data)[9] = i + 1
                vk.vkCmdPushConstants(cb, self.pipe.layout, self.pipe.stage_flags, 0,
                                      GeometryPipeline.PUSH, data)
                vk.vkCmdDraw(cb, 6, 1, 0, 0)
        else:
            tri = triangle_of(self.scene)
            ndc = [float(2 * (p[i] - Fraction(uv.x if i == 0 else uv.y)) / Fraction(uv.w if i == 0 else uv.h) - 1)
                   for p in tri for i in (0, 1)]
            data = vk.ffi.new("float[]", [*ndc[:4], *ndc[4:], 0.0, 0.0, *(c / 255 for c in COLOUR8)])
            vk.vkCmdPushConstants(cb, self.pipe.layout, self.pipe.stage_flags, 0, 48, data)
            vk.vkCmdDraw(cb, 3, 1, 0, 0)
        self.end_render_pass2(cb)

    def read(self) -> dict[str, npt.NDArray[Any]]:
        """The colour (or resolve) image and the depth, copied to a buffer (both are in
        ``TRANSFER_SRC_OPTIMAL`` after the pass)."""
        vk, dev = self.dev.vk, self.dev
        w, h = self.sc.framebuffer
        colour_bytes = w * h * (8 if self.kind == "depth" else 4)
        depth_bytes = w * h * 4 if self.depth else 0
        with dev.scope():
            buf = dev.buffer(colour_bytes + depth_bytes, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_visible=True)

            def region(offset: int, aspect: int) -> Handle:
                return vk.VkBufferImageCopy(
                    bufferOffset=offset, bufferRowLength=0, bufferImageHeight=0,
                    imageSubresource=vk.VkImageSubresourceLayers(aspectMask=aspect, mipLevel=0, baseArrayLayer=0,
                                                                 layerCount=1),
                    imageOffset=vk.VkOffset3D(x=0, y=0, z=0), imageExtent=vk.VkExtent3D(width=w, height=h, depth=1))

            def record(cb: Handle) -> None:
                src = vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
                vk.vkCmdCopyImageToBuffer(cb, self.readback.handle, src, buf.handle, 1,
                                          [region(0, vk.VK_IMAGE_ASPECT_COLOR_BIT)])
                if self.depth is not None:
                    vk.vkCmdCopyImageToBuffer(cb, self.depth.handle, src, buf.handle, 1,
                                              [region(colour_bytes, vk.VK_IMAGE_ASPECT_DEPTH_BIT)])
                dev.memory_barrier(cb, vk.VK_ACCESS_TRANSFER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                                   vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

            dev.run(record)
            raw = buf.read(colour_bytes + depth_bytes)
        if self.kind == "depth":
            return {"view0": raw[:colour_bytes].view(np.uint16).reshape(h, w, 4).copy(),
                    "view0_depth": raw[colour_bytes:].view(np.float32).reshape(h, w).copy()}
        return {"view0": raw[:colour_bytes].reshape(h, w, 4).copy()}


def _run_kind(ctx: Vulkan, scene: Scene) -> CaseOutput:
    vk = ctx.vk
    sc, path, _ = parse(scene)
    kind = kind_of(scene)
    caps = probe(ctx)
    lack = missing(caps, scene)
    if lack is None:
        fmts = {f: int(ctx.format_features(f)) for f in (VK_FMT_RGBA8, VK_FMT_D32)}
        limits = vk.vkGetPhysicalDeviceProperties(ctx.physical).limits
        counts = int(limits.framebufferColorSampleCounts)
        if kind == "msaa":
            usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
            props = vk.vkGetPhysicalDeviceImageFormatProperties(ctx.physical, VK_FMT_RGBA8, vk.VK_IMAGE_TYPE_2D,
                                                                vk.VK_IMAGE_TILING_OPTIMAL, usage, 0)
            counts &= int(props.sampleCounts)
        lack = kind_missing(caps, scene, fmts, counts, bool(limits.standardSampleLocations))
    if lack is not None:
        raise NotSupported(f"{lack} (device {caps.name})")
    check_granularity(caps, scene)
    dev = open_fdm_device(ctx, offset_ext=False)  # render pass 2 only
    try:
        with dev.scope():
            p = GeometryPass(dev, sc, scene)
            p.render()   # a static map: in place before the pass (§1.6)
            images = p.read()
    finally:
        ctx.messages.extend(dev.messages)
        dev.close()
    info = {"device": {**caps_json(caps), "profile": match_profile(caps.driver_id, caps.name)},
            "path": path, "readback": "nonsubsampled", "kind": kind, "turnip_bins": turnip_bins(scene)}
    return CaseOutput(images=images, info=info)


def run_depth_fdm(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """B15 on an FDM device: images ``view0`` (RGBA16_UINT) and ``view0_depth`` (float32)."""
    return _run_kind(ctx, scene)


def run_msaa_fdm(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """B10 on an FDM device: image ``view0`` (RGBA8, the resolve)."""
    return _run_kind(ctx, scene)


# ---- pure: the judges ---------------------------------------------------------------------------
def _checked(sc: fdm.Scenario, texel: Pair) -> npt.NDArray[np.bool_]:
    w, h = sc.framebuffer
    ra = pass_render_area(sc)
    inside = np.zeros((h, w), dtype=bool)
    inside[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] = True
    out: npt.NDArray[np.bool_] = inside & ~zero_density_near(sc, 0, texel)
    return out


def depth_spec_problems(sc: fdm.Scenario, quads: Sequence[tuple[int, int, int, int, float]],
                        images: Mapping[str, npt.NDArray[Any]], texel: Pair,
                        window: npt.NDArray[np.float64] | None = None) -> list[str]:
    """The spec bounds of a depth scene's images (module docstring), independent of any bins
    (``window``: the driver's filter window of the area bound, :func:`vk_tests.fdm.judge.area_windows`)."""
    w, h = sc.framebuffer
    colour, depth = np.asarray(images.get("view0")), np.asarray(images.get("view0_depth"))
    if colour.shape != (h, w, 4) or depth.shape != (h, w):
        return [f"view0 / view0_depth: shapes {list(colour.shape)} / {list(depth.shape)}, want {[h, w, 4]} / {[h, w]}"]
    c = colour.astype(np.int64)
    checked = _checked(sc, texel)
    undrawn = np.all(c == np.array(CLEAR, dtype=np.int64), axis=2)
    drawn = checked & ~undrawn
    a = c[..., 3]
    v = np.stack([c[..., 1], c[..., 2], a // 16, a % 16], axis=2)
    problems, good, max_dim = fragment_block_problems("view0", v, drawn, checked, sc, 0, texel, window)
    # the quad the centre sample sees: least z among the rectangles holding it (ties on an edge:
    # the rasterization rule decides, either quad is accepted)
    cx2, cy2 = v[..., 0], v[..., 1]
    best = np.full((h, w), np.inf)
    ident = np.zeros((h, w), dtype=np.int64)
    tie = np.zeros((h, w), dtype=bool)
    for i, (x0, y0, x1, y1, z) in enumerate(quads):
        inside = (2 * x0 < cx2) & (cx2 < 2 * x1) & (2 * y0 < cy2) & (cy2 < 2 * y1)
        edge = ((2 * x0 <= cx2) & (cx2 <= 2 * x1) & (2 * y0 <= cy2) & (cy2 <= 2 * y1)) & ~inside
        tie |= edge
        nearer = inside & (z < best)
        best = np.where(nearer, z, best)
        ident = np.where(nearer, i + 1, ident)
    judged = good & ~tie
    wrong_id = judged & (c[..., 0] != ident)
    if wrong_id.any():
        yy, xx = np.nonzero(wrong_id)
        problems.append(f"view0: {int(wrong_id.sum())} pixel(s) hold another quad than the nearest one covering "
                        f"their fragment's centre (first x={int(xx[0])}, y={int(yy[0])}: id {int(c[yy[0], xx[0], 0])}, "
                        f"want {int(ident[yy[0], xx[0]])})")
    wrong_z = judged & (ident > 0) & (depth.astype(np.float64) != best)
    if wrong_z.any():
        problems.append(f"view0_depth: {int(wrong_z.sum())} drawn pixel(s) do not hold the nearest quad's depth")
    cleared_depth = checked & undrawn & (depth != np.float32(DEPTH_CLEAR))
    if cleared_depth.any():
        problems.append(f"view0_depth: {int(cleared_depth.sum())} undrawn pixel(s) do not hold the clear depth")
    # no pixel deeper inside a quad than the largest fragment is undrawn
    m = max_dim
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    deep = np.zeros((h, w), dtype=bool)
    for x0, y0, x1, y1, _ in quads:
        deep |= (xs >= x0 + m) & (xs + 1 <= x1 - m) & (ys >= y0 + m) & (ys + 1 <= y1 - m)
    missed = checked & undrawn & deep
    if missed.any():
        yy, xx = np.nonzero(missed)
        problems.append(f"view0: {int(missed.sum())} pixel(s) deep inside a quad were not drawn (first "
                        f"x={int(xx[0])}, y={int(yy[0])})")
    return problems


def max_extent(sc: fdm.Scenario) -> int:
    """The largest fragment extent any texel of the map allows: ``floor`` of the largest finite
    density product (an area ``w·h`` within it, ``h ≥ 1``)."""
    t = texel_table(sc, 0)
    finite = t[np.isfinite(t)]
    return max(1, int(np.floor(finite.max() * (1 + 1e-9)))) if finite.size else 1


def msaa_spec_problems(sc: fdm.Scenario, triangle: Sequence[tuple[Fraction, Fraction]], samples: int,
                       images: Mapping[str, npt.NDArray[Any]], texel: Pair) -> list[str]:
    """The spec bounds of a resolved MSAA image (module docstring)."""
    w, h = sc.framebuffer
    got = np.asarray(images.get("view0"))
    if got.shape != (h, w, 4):
        return [f"view0: shape {list(got.shape)}, want {[h, w, 4]}"]
    g = got.astype(np.int64)
    col = np.array(COLOUR8, dtype=np.int64)
    clr = np.array(CLEAR8, dtype=np.int64)
    checked = _checked(sc, texel)
    mixes = np.stack([(k * col + (samples - k) * clr) // samples for k in range(samples + 1)])
    near = np.zeros((h, w), dtype=bool)
    for m in mixes:
        near |= np.all(np.abs(g - m) <= 1, axis=2)
    problems = []
    odd = checked & ~near
    if odd.any():
        yy, xx = np.nonzero(odd)
        problems.append(f"view0: {int(odd.sum())} pixel(s) are no mean of {samples} triangle and clear samples (first "
                        f"x={int(xx[0])}, y={int(yy[0])}: {got[yy[0], xx[0]].tolist()})")
    # pixels whose window of the largest allowed fragment lies wholly inside or outside the triangle
    f = max_extent(sc)
    grid = GRID
    tri = [(int(x * grid), int(y * grid)) for x, y in triangle]
    area = (tri[1][0] - tri[0][0]) * (tri[2][1] - tri[0][1]) - (tri[1][1] - tri[0][1]) * (tri[2][0] - tri[0][0])
    sign = 1 if area > 0 else -1
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    corners = [((xs - f) * grid, (ys - f) * grid), ((xs + 1 + f) * grid, (ys - f) * grid),
               ((xs - f) * grid, (ys + 1 + f) * grid), ((xs + 1 + f) * grid, (ys + 1 + f) * grid)]
    all_in = np.ones((h, w), dtype=bool)
    out_any = np.zeros((h, w), dtype=bool)
    for i in range(3):
        (ax, ay), (qx, qy) = tri[i], tri[(i + 1) % 3]
        es = [sign * ((qx - ax) * (cy - ay) - (qy - ay) * (cx - ax)) for cx, cy in corners]
        all_in &= np.logical_and.reduce([e > 0 for e in es])
        out_any |= np.logical_and.reduce([e < 0 for e in es])
    for mask, want, what in ((all_in, col, "triangle"), (out_any, clr, "clear")):
        bad = checked & mask & np.any(np.abs(g - want) > 1, axis=2)
        if bad.any():
            yy, xx = np.nonzero(bad)
            problems.append(f"view0: {int(bad.sum())} pixel(s) farther than the largest fragment ({f}) from the "
                            f"triangle's edges are not all {what} (first x={int(xx[0])}, y={int(yy[0])})")
    return problems


def oracle_resolve(sc: fdm.Scenario, plan: RenderPassPlan, view: int, triangle: Sequence[tuple[Fraction, Fraction]],
                   samples: int) -> tuple[npt.NDArray[np.uint8], list[str]]:
    """:func:`vk_tests.replay.msaa.oracle_msaa` for ``samples`` standard locations (2 or 4)."""
    return oracle_msaa(sc, plan, view, triangle, SAMPLE_POSITIONS[samples])


def _turnip_wants(scene: Scene, scenario: Mapping[str, Any]) -> tuple[dict[str, npt.NDArray[Any]], list[str], str]:
    """The exact images of the kind's oracle for ``scenario``'s plan ('' or why there is none)."""
    sc = fdm.parse_scenario(scenario)
    plan = fdm.plan_render_pass(sc)
    if not isinstance(plan, RenderPassPlan):
        return {}, [], f"the model renders the pass in sysmem ({plan.sysmem_reason})"
    if kind_of(scene) == "depth":
        colour, depth, probs = oracle_depth(sc, plan, 0, quads_of(scene))
        return {"view0": colour, "view0_depth": depth}, probs, ""
    out, probs = oracle_resolve(sc, plan, 0, triangle_of(scene), samples_of(scene))
    return {"view0": out}, probs, ""


def _count_diff(wants: Mapping[str, npt.NDArray[Any]], images: Mapping[str, npt.NDArray[Any]], tolerance: int
                ) -> tuple[int, list[Mapping[str, Any]]]:
    n, mm = 0, []
    for name, want in wants.items():
        got = np.asarray(images.get(name))
        if got.shape != want.shape:
            n += want.shape[0] * want.shape[1]
            continue
        d = np.abs(got.astype(np.float64) - want.astype(np.float64)) > tolerance
        n += int(np.count_nonzero(d.reshape(d.shape[0], d.shape[1], -1).any(axis=2)))
        mm += list(first_mismatches(name, got, want, tolerance=tolerance, limit=2))
    return n, mm


def _judge_kind(scene: Scene, out: CaseOutput) -> Verdict:
    sc, path, _ = parse(scene)
    kind = kind_of(scene)
    device = dict(out.info.get("device") or {})
    profile = device.get("profile")
    turnip = device.get("driver_id") == DRIVER_ID_MESA_TURNIP and profile is not None
    texel = texel_size_for(sc, path, device)
    if kind == "depth":
        windows, window_note = area_windows(scene, sc, texel, str(profile) if turnip else None, path,
                                               device_scenario_kind(scene, str(profile)) if turnip else None)
        problems = depth_spec_problems(sc, quads_of(scene), out.images, texel, windows[0])
        if not turnip:  # information: what a 3x3-texel window would reject
            narrow = [p for p in depth_spec_problems(sc, quads_of(scene), out.images, texel)
                      if "larger than the density" in p]
            window_note += "".join(f"; information: with a 3x3-texel window: {p}" for p in narrow)
    else:
        window_note = ""
        problems = msaa_spec_problems(sc, triangle_of(scene), samples_of(scene), out.images, texel)
    tolerance = 0 if kind == "depth" else 1
    mismatches: list[Mapping[str, Any]] = []
    if turnip:
        wants, probs, why = _turnip_wants(scene, device_scenario_kind(scene, str(profile)))
        if why:
            note = f"; turnip {profile}: {why}, no exact expectation"
        else:
            problems += probs
            n, mismatches = _count_diff(wants, out.images, tolerance)
            if n:
                problems.append(f"{n} pixel(s) differ from the model's plan for turnip {profile}")
            note = "" if n else f"; equal to the model's plan for turnip {profile}"
    else:
        who = f"driver {device.get('driver_id')} ({device.get('name', '?')})"
        try:
            wants, _, why = _turnip_wants(scene, scene["scenario"])
            n = _count_diff(wants, out.images, tolerance)[0] if not why else -1
            info = why or (f"{n} pixel(s) differ from turnip's plan for {sc.gpu.name}" if n
                           else f"equal to turnip's plan for {sc.gpu.name}")
        except (NotModelled, ScenarioError) as e:
            info = f"no turnip plan ({e})"
        note = f"; {who} is not a modelled turnip GPU: the spec bounds decide; information: {info}"
    note = window_note + note
    if problems:
        return Verdict(status="Fail", message="; ".join(problems) + note, mismatches=tuple(mismatches[:8]))
    what = "depth-tested quads" if kind == "depth" else f"{samples_of(scene)}x MSAA resolve"
    return Verdict(status="Pass", message=f"{what} within the spec bounds (texel {texel[0]}x{texel[1]}){note}")


def judge_depth_fdm(scene: Scene, out: CaseOutput) -> Verdict:
    """B15's judge: the spec bounds of :func:`depth_spec_problems`; on turnip exact equality of
    colour and depth with :func:`vk_tests.replay.depth.oracle_depth` of the device's plan."""
    return _judge_kind(scene, out)


def judge_msaa_fdm(scene: Scene, out: CaseOutput) -> Verdict:
    """B10's judge: :func:`msaa_spec_problems`; on turnip :func:`oracle_resolve` of the device's
    plan within 1 LSB."""
    return _judge_kind(scene, out)
