"""B15's twin in the replay backend: overlapping depth-tested quads through turnip's per-bin
scheme (docs/replay.md, "Depth and the LRZ rule").

Every rendered tile and view: GMEM colour (RGBA16_UINT) and depth (D32_SFLOAT) are filled with
garbage (depth 0.0: every fragment would fail ``LESS``), the load-op clear of both goes through
``fdm_apply_gmem_clear_coords`` (:func:`fdm.clears.gmem_clear_coords`, colour and depth alike),
then the quads are drawn in order with the slot's patched viewport and scissor (``o'`` added
as the hardware does, as in :class:`vk_tests.replay.render.Replayer`), depth test ``LESS`` with writes;
colour and depth are stored by the scaled A2D blit.  The fragment shader writes
``(quad id, 2·c.x, 2·c.y, 16·fa.x + fa.y)``.

LRZ is a hardware early-Z cache: it must never change the result.  The model's per-tile
``TilePlan.lrz`` (``force_lrz_dis``: scaled bins without HW bin scaling, the first row and
column with FDM offsets; docs/spec/turnip-fdm-spec.md §8.3) is reported in the case info;
the image must be the same whether or not it is on.

The oracle (:func:`oracle_depth`) knows the large-fragment rules only: a fragment (aligned to its
bin's start, size ``fa``) is covered by a quad iff its centre lies in ``[x0, x1) × [y0, y1)``;
the covering quad of least ``z`` wins (draw order breaks no tie: the quads have distinct
depths), all the fragment's pixels take its id, doubled centre and area, and its ``z`` as depth;
uncovered fragments keep the clear values (colour :data:`vk_tests.replay.scene.CLEAR`, depth 1.0).
A centre exactly on a quad edge is refused as a scene problem (no tie-breaking rule needed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.clears import gmem_clear_coords
from fdm.plan import RenderPassPlan, TilePlan
from turnip_base.errors import NotModelled, NotSupported, ScenarioError
from turnip_base.harness import Handle, Vulkan

from ..graphics.passes import (
    cmd_set_scissor,
    cmd_set_viewport,
    owned_render_pass,
)
from ..graphics.shaders import load_spv
from ..graphics.targets import (
    read_back,
    read_image,
    require_graphics,
)
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .judge import oracle_view
from .render import Replayer, box_rect, inclusive_box, intersect, rect_box, scratch_size
from .scene import CLEAR, FMT, plan_scene, user_index, view_render_area

Rect4 = tuple[int, int, int, int]


DEPTH_CLEAR = 1.0


#: GMEM depth before the clear: nearer than every quad, so a missing clear rejects them all
DEPTH_GARBAGE = 0.0


FMT = FMT


#: quads ``(x0, y0, x1, y1, z)`` in framebuffer pixels of the 384 x 256 scenes, in draw order, ids
#: 1.. (edges on multiples of 4: no fragment centre of fa 1, 2 or 4 lies on one)
QUADS: tuple[tuple[int, int, int, int, float], ...] = (
    (20, 16, 300, 200, 0.5),
    (100, 60, 360, 240, 0.25),
    (140, 40, 240, 232, 0.75),    # behind both: visible only where it is alone
    (0, 120, 128, 256, 0.125),
)


def depth_scene(scenario: Mapping[str, Any], quads: Sequence[Sequence[float]] = QUADS) -> dict[str, Any]:
    """A depth scene: the scenario (full viewport, load-op clear) and the quads in draw order."""
    return {"scenario": dict(scenario), "load_op": "clear", "store": "a2d", "quads": [list(q) for q in quads]}


def quads_of(scene: Scene) -> list[tuple[int, int, int, int, float]]:
    out = []
    for i, q in enumerate(scene.get("quads", ())):
        if len(q) != 5 or not all(isinstance(v, int) for v in q[:4]) or not 0.0 <= float(q[4]) <= 1.0:
            raise ScenarioError(f"quads[{i}]", f"must be [x0, y0, x1, y1, z] (integers, z in [0, 1]), got {q!r}")
        out.append((int(q[0]), int(q[1]), int(q[2]), int(q[3]), float(q[4])))
    if len({q[4] for q in out}) != len(out):
        raise ScenarioError("quads", "depths must be distinct (no tie for the LESS test)")
    return out


def plan_depth(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan]:
    sc, plan = plan_scene(scene)
    quads_of(scene)
    if scene.get("load_op", "clear") != "clear":
        raise NotModelled("replay", "the depth scenes clear colour and depth")
    return sc, plan


# ---- the device run ---------------------------------------------------------------------------
class DepthTarget:
    """A single-level D32_SFLOAT image (attachment, transfer source and destination) that knows
    its layout; :meth:`use` moves it behind a full barrier."""

    def __init__(self, ctx: Vulkan, width: int, height: int):
        vk = ctx.vk
        self.ctx, self.width, self.height = ctx, width, height
        self.format = vk.VK_FORMAT_D32_SFLOAT
        usage = (vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT)
        self.handle = ctx.create_image((width, height), self.format, usage)
        self.view = ctx.image_view(self.handle, self.format, aspect=vk.VK_IMAGE_ASPECT_DEPTH_BIT)
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    def range(self) -> Handle:
        vk = self.ctx.vk
        return vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, baseMipLevel=0, levelCount=1,
                                          baseArrayLayer=0, layerCount=1)

    def layers(self) -> Handle:
        vk = self.ctx.vk
        return vk.VkImageSubresourceLayers(aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, mipLevel=0, baseArrayLayer=0,
                                           layerCount=1)

    def use(self, cb: Handle, layout: int) -> None:
        vk = self.ctx.vk
        acc = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
               | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT)
        src = 0 if self.layout == vk.VK_IMAGE_LAYOUT_UNDEFINED else acc
        b = vk.VkImageMemoryBarrier(srcAccessMask=src, dstAccessMask=acc, oldLayout=self.layout, newLayout=layout,
                                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.handle,
                                    subresourceRange=self.range())
        stages = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        vk.vkCmdPipelineBarrier(cb, stages, stages, 0, 0, None, 0, None, 1, [b])
        self.layout = layout

    def clear(self, cb: Handle, value: float) -> None:
        vk = self.ctx.vk
        self.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        vk.vkCmdClearDepthStencilImage(cb, self.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                       vk.VkClearDepthStencilValue(depth=value, stencil=0), 1, [self.range()])

    def blit(self, cb: Handle, src_box: Rect4, dst: DepthTarget, dst_box: Rect4) -> None:
        """NEAREST ``vkCmdBlitImage`` (the only filter for depth) of ``src_box`` onto ``dst_box``."""
        vk = self.ctx.vk
        region = vk.VkImageBlit(
            srcSubresource=self.layers(), dstSubresource=dst.layers(),
            srcOffsets=[vk.VkOffset3D(x=src_box[0], y=src_box[1], z=0), vk.VkOffset3D(x=src_box[2], y=src_box[3], z=1)],
            dstOffsets=[vk.VkOffset3D(x=dst_box[0], y=dst_box[1], z=0), vk.VkOffset3D(x=dst_box[2], y=dst_box[3], z=1)])
        self.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
        dst.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        vk.vkCmdBlitImage(cb, self.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.handle,
                          vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region], vk.VK_FILTER_NEAREST)

    def copy(self, cb: Handle, dst: DepthTarget, rect: Rect4) -> None:
        vk = self.ctx.vk
        x, y, w, h = rect
        region = vk.VkImageCopy(srcSubresource=self.layers(), srcOffset=vk.VkOffset3D(x=x, y=y, z=0),
                                dstSubresource=dst.layers(), dstOffset=vk.VkOffset3D(x=x, y=y, z=0),
                                extent=vk.VkExtent3D(width=w, height=h, depth=1))
        self.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
        dst.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        vk.vkCmdCopyImage(cb, self.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.handle,
                          vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region])

    def read(self) -> npt.NDArray[np.float32]:
        raw = read_back(self.ctx, self.handle, self.use, self.layers(), self.width, self.height,
                        self.width * self.height * 4)
        return raw.view(np.float32).reshape(self.height, self.width).copy()


def _depth_pass(ctx: Vulkan) -> Handle:
    """Colour (RGBA16_UINT) + depth (D32_SFLOAT), both ``LOAD_OP_LOAD`` / ``STORE``."""
    vk = ctx.vk
    C, D = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
    load, store, dc = vk.VK_ATTACHMENT_LOAD_OP_LOAD, vk.VK_ATTACHMENT_STORE_OP_STORE, vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE
    atts = [vk.VkAttachmentDescription(format=f, samples=vk.VK_SAMPLE_COUNT_1_BIT, loadOp=load, storeOp=store,
                                       stencilLoadOp=dc, stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                       initialLayout=lay, finalLayout=lay)
            for f, lay in ((vk.VK_FORMAT_R16G16B16A16_UINT, C), (vk.VK_FORMAT_D32_SFLOAT, D))]
    sub = vk.VkSubpassDescription(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
                                  pColorAttachments=[vk.VkAttachmentReference(attachment=0, layout=C)],
                                  pDepthStencilAttachment=vk.VkAttachmentReference(attachment=1, layout=D))
    acc = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT
           | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT
           | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT)
    return owned_render_pass(ctx, atts, sub, acc)


class GeometryPipeline:
    """A pipeline without vertex buffers: ``vert`` + ``frag`` (default ``quad.vert`` +
    ``quad_id.frag``), depth test LESS with writes when ``depth``, ``samples`` rasterization
    samples, dynamic viewport and scissor, ``push`` bytes of vertex+fragment push constants."""

    PUSH = 40

    def __init__(self, ctx: Vulkan, rp: Handle, vert_spv: str = "quad.vert.spv", frag_spv: str = "quad_id.frag.spv",
                 push: int = PUSH, samples: int = 1, depth: bool = True):
        vk = ctx.vk
        self.ctx = ctx
        stages_flags = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT
        self.stage_flags = stages_flags
        rng = vk.VkPushConstantRange(stageFlags=stages_flags, offset=0, size=push)
        layout = vk.vkCreatePipelineLayout(ctx.device, vk.VkPipelineLayoutCreateInfo(pPushConstantRanges=[rng]), None)
        ctx.own(lambda: vk.vkDestroyPipelineLayout(ctx.device, layout, None))
        self.layout = layout
        vert, frag = ctx.shader_module(load_spv(vert_spv)), ctx.shader_module(load_spv(frag_spv))
        stages = [vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert, pName="main"),
                  vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag,
                                                     pName="main")]
        mask = (vk.VK_COLOR_COMPONENT_R_BIT | vk.VK_COLOR_COMPONENT_G_BIT | vk.VK_COLOR_COMPONENT_B_BIT
                | vk.VK_COLOR_COMPONENT_A_BIT)
        info = vk.VkGraphicsPipelineCreateInfo(
            pStages=stages, pVertexInputState=vk.VkPipelineVertexInputStateCreateInfo(),
            pInputAssemblyState=vk.VkPipelineInputAssemblyStateCreateInfo(
                topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, primitiveRestartEnable=vk.VK_FALSE),
            pViewportState=vk.VkPipelineViewportStateCreateInfo(viewportCount=1, scissorCount=1),
            pRasterizationState=vk.VkPipelineRasterizationStateCreateInfo(
                depthClampEnable=vk.VK_FALSE, rasterizerDiscardEnable=vk.VK_FALSE, polygonMode=vk.VK_POLYGON_MODE_FILL,
                cullMode=vk.VK_CULL_MODE_NONE, frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE,
                depthBiasEnable=vk.VK_FALSE, lineWidth=1.0),
            pMultisampleState=vk.VkPipelineMultisampleStateCreateInfo(rasterizationSamples=samples,
                                                                      sampleShadingEnable=vk.VK_FALSE),
            pDepthStencilState=vk.VkPipelineDepthStencilStateCreateInfo(
                depthTestEnable=vk.VK_TRUE, depthWriteEnable=vk.VK_TRUE, depthCompareOp=vk.VK_COMPARE_OP_LESS,
                depthBoundsTestEnable=vk.VK_FALSE, stencilTestEnable=vk.VK_FALSE, minDepthBounds=0.0,
                maxDepthBounds=1.0) if depth else None,
            pColorBlendState=vk.VkPipelineColorBlendStateCreateInfo(
                logicOpEnable=vk.VK_FALSE,
                pAttachments=[vk.VkPipelineColorBlendAttachmentState(blendEnable=vk.VK_FALSE, colorWriteMask=mask)]),
            pDynamicState=vk.VkPipelineDynamicStateCreateInfo(
                pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR]),
            layout=layout, renderPass=rp, subpass=0)
        pipe = vk.vkCreateGraphicsPipelines(ctx.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
        ctx.own(lambda: vk.vkDestroyPipeline(ctx.device, pipe, None))
        self.pipeline = pipe


class DepthReplayer(Replayer):
    """The base replay with a depth attachment and the scene's quads."""

    n_attachments = 1

    def __init__(self, ctx: Vulkan, sc: fdm.Scenario, plan: RenderPassPlan, quads: Sequence[Sequence[float]]):
        self.quads = list(quads)
        self._ctx = ctx
        size = scratch_size(plan)
        self.gmem_depth = DepthTarget(ctx, *size)
        self.depth_staging = DepthTarget(ctx, *size)
        self.depth_views = [DepthTarget(ctx, *size) for _ in range(sc.fdm_layers)]
        super().__init__(ctx, sc, plan, "clear", "a2d")
        self.stats["depth_stores"] = 0

    def make_pass(self) -> None:
        self.rp = _depth_pass(self.ctx)
        self.qpipe = GeometryPipeline(self.ctx, self.rp)

    def make_framebuffer(self) -> Handle:
        vk = self.ctx.vk
        info = vk.VkFramebufferCreateInfo(renderPass=self.rp, pAttachments=[self.gmem[0].image.views[0],
                                                                           self.gmem_depth.view],
                                          width=self.size[0], height=self.size[1], layers=1)
        fb = vk.vkCreateFramebuffer(self.ctx.device, info, None)
        self.ctx.own(lambda: vk.vkDestroyFramebuffer(self.ctx.device, fb, None))
        return fb

    def record(self, cb: Handle) -> None:
        for d in self.depth_views:
            d.clear(cb, DEPTH_CLEAR)
        super().record(cb)

    def before_pass(self, cb: Handle, tile: TilePlan, v: int) -> None:
        self.gmem_depth.clear(cb, DEPTH_GARBAGE)
        self.gmem_depth.use(cb, self.ctx.vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL)

    def gmem_clear(self, cb: Handle, tile: TilePlan, v: int, rect: Rect4, value: Sequence[float]) -> bool:
        """The load-op clear of colour and depth: both through ``fdm_apply_gmem_clear_coords``."""
        if not super().gmem_clear(cb, tile, v, rect, value):
            return False
        vk = self.ctx.vk
        tl, br = gmem_clear_coords(tile, v, rect)
        box = intersect(inclusive_box(tl, br), (0, 0, self.size[0], self.size[1]))
        if box is not None:
            att = vk.VkClearAttachment(aspectMask=vk.VK_IMAGE_ASPECT_DEPTH_BIT, colorAttachment=0,
                                       clearValue=vk.VkClearValue(
                                           depthStencil=vk.VkClearDepthStencilValue(depth=DEPTH_CLEAR, stencil=0)))
            x, y, w, h = box_rect(box)
            crect = vk.VkClearRect(rect=vk.VkRect2D(offset=vk.VkOffset2D(x=x, y=y),
                                                    extent=vk.VkExtent2D(width=w, height=h)),
                                   baseArrayLayer=0, layerCount=1)
            vk.vkCmdClearAttachments(cb, 1, [att], 1, [crect])
        return True

    def draw(self, cb: Handle, tile: TilePlan, v: int) -> None:
        vk = self.ctx.vk
        state = self.draw_state(tile, v)
        if state is None:
            return
        (x, y, w, h), scissor = state
        fs = tile.fs_params[v]
        uv = self.sc.viewports[user_index(self.sc, v)]
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.qpipe.pipeline)
        cmd_set_viewport(self.ctx, cb, x, y, w, h)
        cmd_set_scissor(self.ctx, cb, scissor)
        for i, (x0, y0, x1, y1, z) in enumerate(self.quads):
            # clip space of the application's viewport: the patched viewport maps it per bin
            ndc = [2 * (x0 - uv.x) / uv.w - 1, 2 * (y0 - uv.y) / uv.h - 1,
                   2 * (x1 - uv.x) / uv.w - 1, 2 * (y1 - uv.y) / uv.h - 1]
            data = vk.ffi.new("float[]", [fs.frag_size[0], fs.frag_size[1], fs.frag_offset[0], fs.frag_offset[1],
                                          *ndc, z, 0.0])
            vk.ffi.cast("uint32_t *", data)[9] = i + 1
            vk.vkCmdPushConstants(cb, self.qpipe.layout, self.qpipe.stage_flags, 0, GeometryPipeline.PUSH, data)
            vk.vkCmdDraw(cb, 6, 1, 0, 0)
            self.stats["draws"] += 1

    def after_store(self, cb: Handle, tile: TilePlan, v: int) -> None:
        """The depth attachment's store: the same scaled A2D blit, clipped to the render area."""
        blits = tile.blits[v]
        src = self._fits(inclusive_box(*blits.store_src))
        dst = self._fits(inclusive_box(*blits.store_dst))
        if src is None or dst is None:
            return
        kept = intersect(dst, rect_box(view_render_area(self.sc, v)))
        self.gmem_depth.blit(cb, src, self.depth_staging, dst)
        if kept is not None:
            self.depth_staging.copy(cb, self.depth_views[v], box_rect(kept))
        self.stats["depth_stores"] += 1


def _lrz_info(plan: RenderPassPlan) -> dict[str, Any]:
    return {"pass_lrz": plan.lrz.valid, "lrz_tiles": sum(t.lrz for t in plan.tiles),
            "lrz_off_tiles": [list(t.cell) for t in plan.tiles if not t.lrz],
            "force_lrz_dis_tiles": sum(t.force_lrz_dis for t in plan.tiles)}


def run_depth(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Replay the depth scene; images ``view{v}`` (RGBA16_UINT) and ``view{v}_depth`` (float32)."""
    sc, plan = plan_depth(scene)
    require_graphics(ctx, FMT)
    vk = ctx.vk
    need = (vk.VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT | vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT
            | vk.VK_FORMAT_FEATURE_BLIT_DST_BIT)
    if ctx.format_features(vk.VK_FORMAT_D32_SFLOAT) & need != need:
        raise NotSupported(f"device {ctx.info.name}: D32_SFLOAT is not a depth attachment and blit source and "
                           "destination with optimal tiling")
    W, H = sc.framebuffer
    with ctx.scope():
        r = DepthReplayer(ctx, sc, plan, quads_of(scene))
        ctx.run(r.record)
        images: dict[str, Any] = {}
        for v in range(sc.fdm_layers):
            images[f"view{v}"] = read_image(ctx, r.views[v][0])[:H, :W].copy()
            images[f"view{v}_depth"] = r.depth_views[v].read()[:H, :W].copy()
    return CaseOutput(images=images, info={"device": ctx.info.describe(), "scratch": list(r.size), **r.stats,
                                           **_lrz_info(plan)})


# ---- the oracle -------------------------------------------------------------------------------
def oracle_depth(sc: fdm.Scenario, plan: RenderPassPlan, view: int, quads: Sequence[Sequence[float]]
                 ) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.float32], list[str]]:
    """Colour and depth the large-fragment semantics give (module docstring); the fragment
    centres and areas come from :func:`vk_tests.replay.judge.oracle_view`."""
    base, problems = oracle_view(sc, plan, view, "clear")
    h, w = base.shape[:2]
    c2x, c2y = base[..., 0].astype(np.int64), base[..., 1].astype(np.int64)
    drawn = base[..., 2] > 0
    best = np.full((h, w), np.inf)
    ident = np.zeros((h, w), dtype=np.int64)
    for i, (x0, y0, x1, y1, z) in enumerate(quads):
        on_edge = drawn & ((c2x == 2 * x0) | (c2x == 2 * x1) | (c2y == 2 * y0) | (c2y == 2 * y1))
        inside = drawn & (2 * x0 <= c2x) & (c2x < 2 * x1) & (2 * y0 <= c2y) & (c2y < 2 * y1)
        if np.any(on_edge & (2 * x0 <= c2x) & (c2x <= 2 * x1) & (2 * y0 <= c2y) & (c2y <= 2 * y1)):
            problems.append(f"quad {i + 1}: a fragment centre lies on its edge (the scene must avoid ties)")
        nearer = inside & (float(z) < best)
        best = np.where(nearer, float(z), best)
        ident = np.where(nearer, i + 1, ident)
    hit = ident > 0
    colour = np.empty((h, w, 4), dtype=np.uint16)
    colour[...] = CLEAR
    colour[hit, 0] = ident[hit]
    colour[hit, 1] = c2x[hit]
    colour[hit, 2] = c2y[hit]
    colour[hit, 3] = 16 * base[..., 2][hit].astype(np.int64) + base[..., 3][hit].astype(np.int64)
    depth = np.where(hit, best, DEPTH_CLEAR).astype(np.float32)
    return colour, depth, problems


def judge_depth(scene: Scene, out: CaseOutput) -> Verdict:
    """Colour and depth of every view equal :func:`oracle_depth`, exactly."""
    sc, plan = plan_depth(scene)
    quads = quads_of(scene)
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    for v in range(sc.fdm_layers):
        colour, depth, probs = oracle_depth(sc, plan, v, quads)
        problems += probs
        for name, want in ((f"view{v}", colour), (f"view{v}_depth", depth)):
            got = out.images.get(name)
            if got is None:
                problems.append(f"{name}: no image read back")
                continue
            mm = first_mismatches(name, np.asarray(got), want)
            if mm:
                g = np.asarray(got)
                n = int(np.count_nonzero((g != want).reshape(g.shape[0], g.shape[1], -1).any(axis=2))) \
                    if g.shape == want.shape else -1
                problems.append(f"{name}: {n} pixel(s) differ from the oracle")
                mismatches += mm[:4]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems), mismatches=tuple(mismatches))
    lrz = _lrz_info(plan)
    return Verdict(status="Pass", message=f"colour and depth equal the oracle ({len(quads)} depth-tested quads, "
                                          f"{len(plan.tiles)} tiles, LRZ on in {lrz['lrz_tiles']})")
