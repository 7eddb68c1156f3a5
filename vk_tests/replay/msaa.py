"""B10's twin in the replay backend: 4x MSAA colour with a resolve through turnip's per-bin
scheme (docs/replay.md, "MSAA resolve").

Every rendered tile and view: a 4-sample GMEM colour image (RGBA8) is filled with garbage, the
load-op clear goes through ``fdm_apply_gmem_clear_coords``, one flat-coloured triangle is drawn
with the slot's patched viewport and scissor (4 rasterization samples; the GMEM pixel is the
whole fragment, so its samples are the fragment's one sample set), the subpass resolves into a
1-sample GMEM image, and that is stored by the scaled A2D blit (NEAREST: every pixel of a
fragment gets the fragment's resolved value).

The rule the oracle (:func:`oracle_msaa`) judges by, spec §1.5 (primsrast.adoc 561-592,
fragops.adoc 1511-1518): an FDM fragment of area ``fa`` has exactly ``rasterizationSamples``
samples, at the standard locations of a 1x1 pixel scaled by the fragment area from the
fragment's top-left corner (``b + fa·pos_i``, ``pos`` = (0.375, 0.125), (0.875, 0.375),
(0.125, 0.625), (0.625, 0.875)); a sample is covered iff it lies inside the triangle (a sample on
an edge is refused as a scene problem); the resolved value of every pixel of the fragment is the
mean over the 4 samples of the colour (covered) or the clear colour (not covered).  Colours are
multiples of 4 so that every mean is an integer; the comparison allows 1 LSB (8-bit) for the
resolve's rounding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan, TilePlan
from turnip_base.errors import NotSupported, ScenarioError
from turnip_base.harness import Handle, Vulkan

from ..graphics.passes import (
    cmd_set_scissor,
    cmd_set_viewport,
    owned_render_pass,
)
from ..graphics.targets import (
    read_image,
    require_graphics,
    vk_format,
)
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .depth import GeometryPipeline
from .judge import oracle_view
from .render import Replayer, scratch_size
from .scene import plan_scene, user_index

FMT = "rgba8"


SAMPLES = 4


#: the standard 4x sample locations (Vulkan "Standard sample locations")
SAMPLE_POSITIONS: tuple[tuple[Fraction, Fraction], ...] = (
    (Fraction(3, 8), Fraction(1, 8)), (Fraction(7, 8), Fraction(3, 8)),
    (Fraction(1, 8), Fraction(5, 8)), (Fraction(5, 8), Fraction(7, 8)))


#: the clear colour (bytes) and the triangle's colour (bytes, multiples of 4)
CLEAR8: tuple[int, int, int, int] = (0, 0, 0, 0)


COLOUR8: tuple[int, int, int, int] = (200, 100, 48, 252)


GARBAGE8: tuple[float, float, float, float] = (1.0, 0.0, 1.0, 0.0)


#: a triangle in framebuffer pixels of the 384 x 256 scenes (multiples of 1/64: exact after the
#: patched viewport's 1/fa and the rasterizer's 1/256 grid), edges at odd slopes
TRIANGLE: tuple[tuple[float, float], ...] = ((10.265625, 7.546875), (370.078125, 60.015625),
                                             (120.109375, 250.140625))


def resolved_attachments(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario of the FDM pass an MSAA scene stands for: its multisampled colour is resolved
    in the pass and neither loaded nor stored (else ``tu_render_pass_disable_fdm`` turns the FDM
    off).  Attachments that give no ops get ``store_op = "dont_care"`` and ``resolve = true``;
    scenes recorded before attachments had ops (the H100 bundle) read the same."""
    sc = dict(scenario)
    atts = sc.get("attachments", [{"cpp": 4, "samples": SAMPLES}])
    sc["attachments"] = [{"store_op": "dont_care", "resolve": True, **a}
                         if isinstance(a, Mapping) and a.get("samples", 1) > 1 and "store_op" not in a
                         and "load_op" not in a and "resolve" not in a else a for a in atts]
    return sc


def msaa_scene(scenario: Mapping[str, Any], triangle: Sequence[Sequence[float]] = TRIANGLE) -> dict[str, Any]:
    """An MSAA scene: the scenario (its colour attachment 4-sample, resolved) and the triangle."""
    return {"scenario": resolved_attachments(scenario), "load_op": "clear", "store": "a2d",
            "triangle": [list(p) for p in triangle]}


def triangle_of(scene: Scene) -> list[tuple[Fraction, Fraction]]:
    t = scene.get("triangle", ())
    if len(t) != 3 or any(len(p) != 2 for p in t):
        raise ScenarioError("triangle", f"must be 3 points [x, y], got {t!r}")
    out = [(Fraction(p[0]), Fraction(p[1])) for p in t]
    if any((c * GRID).denominator != 1 for pt in out for c in pt):
        raise ScenarioError("triangle", f"vertices must be multiples of 1/{GRID} pixel, got {t!r}")
    return out


def plan_msaa(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan]:
    sc, plan = plan_scene({**scene, "scenario": resolved_attachments(scene["scenario"])})
    triangle_of(scene)
    return sc, plan


# ---- the device run ---------------------------------------------------------------------------
class MsaaImage:
    """A 4-sample RGBA8 colour attachment (transfer destination for the garbage fill)."""

    def __init__(self, ctx: Vulkan, width: int, height: int):
        vk = ctx.vk
        self.ctx = ctx
        f = vk_format(ctx, FMT)
        self.handle = ctx.create_image((width, height), f, vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
                                       | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT, samples=SAMPLES)
        self.rng = vk.VkImageSubresourceRange(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, baseMipLevel=0, levelCount=1,
                                              baseArrayLayer=0, layerCount=1)
        self.view = ctx.image_view(self.handle, f)
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    def use(self, cb: Handle, layout: int) -> None:
        vk = self.ctx.vk
        acc = (vk.VK_ACCESS_TRANSFER_WRITE_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT
               | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT)
        src = 0 if self.layout == vk.VK_IMAGE_LAYOUT_UNDEFINED else acc
        b = vk.VkImageMemoryBarrier(srcAccessMask=src, dstAccessMask=acc, oldLayout=self.layout, newLayout=layout,
                                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.handle,
                                    subresourceRange=self.rng)
        stages = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        vk.vkCmdPipelineBarrier(cb, stages, stages, 0, 0, None, 0, None, 1, [b])
        self.layout = layout

    def fill(self, cb: Handle, value: Sequence[float]) -> None:
        vk = self.ctx.vk
        self.use(cb, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        vk.vkCmdClearColorImage(cb, self.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                vk.VkClearColorValue(float32=[float(v) for v in value]), 1, [self.rng])
        self.use(cb, vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)


def _msaa_pass(ctx: Vulkan) -> Handle:
    """A 4-sample colour attachment resolved into a 1-sample one at the end of the subpass."""
    vk = ctx.vk
    C = vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
    f = vk_format(ctx, FMT)
    atts = [vk.VkAttachmentDescription(format=f, samples=n, loadOp=vk.VK_ATTACHMENT_LOAD_OP_LOAD,
                                       storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
                                       stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                       stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE, initialLayout=C,
                                       finalLayout=C)
            for n in (SAMPLES, vk.VK_SAMPLE_COUNT_1_BIT)]
    sub = vk.VkSubpassDescription(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
                                  pColorAttachments=[vk.VkAttachmentReference(attachment=0, layout=C)],
                                  pResolveAttachments=[vk.VkAttachmentReference(attachment=1, layout=C)])
    acc = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT
           | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT)
    return owned_render_pass(ctx, atts, sub, acc)


class MsaaReplayer(Replayer):
    """The base replay with a 4-sample GMEM colour image resolved into ``self.gmem[0]``."""

    fmt = FMT
    n_attachments = 1
    bg = (0.0, 0.0, 0.0, 0.0)
    clear = tuple(c / 255 for c in CLEAR8)
    garbage = GARBAGE8

    def __init__(self, ctx: Vulkan, sc: fdm.Scenario, plan: RenderPassPlan, triangle: Sequence[Sequence[Fraction]]):
        self.triangle = triangle
        self.msaa = MsaaImage(ctx, *scratch_size(plan))
        super().__init__(ctx, sc, plan, "clear", "a2d")

    def make_pass(self) -> None:
        self.rp = _msaa_pass(self.ctx)
        self.tpipe = GeometryPipeline(self.ctx, self.rp, "triangle.vert.spv", "flat_colour.frag.spv", 48,
                                      samples=SAMPLES, depth=False)

    def make_framebuffer(self) -> Handle:
        vk = self.ctx.vk
        views = [self.msaa.view, self.gmem[0].image.views[0]]
        info = vk.VkFramebufferCreateInfo(renderPass=self.rp, pAttachments=views,
                                          width=self.size[0], height=self.size[1], layers=1)
        fb = vk.vkCreateFramebuffer(self.ctx.device, info, None)
        self.ctx.own(lambda: vk.vkDestroyFramebuffer(self.ctx.device, fb, None))
        return fb

    def before_pass(self, cb: Handle, tile: TilePlan, v: int) -> None:
        self.msaa.fill(cb, GARBAGE8)

    def draw(self, cb: Handle, tile: TilePlan, v: int) -> None:
        vk = self.ctx.vk
        state = self.draw_state(tile, v)
        if state is None:
            return
        (x, y, w, h), scissor = state
        uv = self.sc.viewports[user_index(self.sc, v)]
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, self.tpipe.pipeline)
        cmd_set_viewport(self.ctx, cb, x, y, w, h)
        cmd_set_scissor(self.ctx, cb, scissor)
        # clip space of the application's viewport: the patched viewport maps it per bin
        ndc = [float(2 * (p[i] - Fraction(uv.x if i == 0 else uv.y)) / Fraction(uv.w if i == 0 else uv.h) - 1)
               for p in self.triangle for i in (0, 1)]
        data = vk.ffi.new("float[]", [*ndc[:4], *ndc[4:], 0.0, 0.0, *(c / 255 for c in COLOUR8)])
        vk.vkCmdPushConstants(cb, self.tpipe.layout, self.tpipe.stage_flags, 0, 48, data)
        vk.vkCmdDraw(cb, 3, 1, 0, 0)
        self.stats["draws"] += 1


def run_msaa(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Replay the MSAA scene; images ``view{v}`` (RGBA8, resolved)."""
    sc, plan = plan_msaa(scene)
    require_graphics(ctx, FMT)
    vk = ctx.vk
    lim = vk.vkGetPhysicalDeviceProperties(ctx.physical).limits
    if not lim.framebufferColorSampleCounts & SAMPLES:
        raise NotSupported(f"device {ctx.info.name}: framebufferColorSampleCounts lacks VK_SAMPLE_COUNT_4_BIT")
    if not lim.standardSampleLocations:
        raise NotSupported(f"device {ctx.info.name}: standardSampleLocations is false")
    W, H = sc.framebuffer
    with ctx.scope():
        r = MsaaReplayer(ctx, sc, plan, triangle_of(scene))
        ctx.run(r.record)
        images = {f"view{v}": read_image(ctx, r.views[v][0])[:H, :W].copy() for v in range(sc.fdm_layers)}
    return CaseOutput(images=images, info={"device": ctx.info.describe(), "scratch": list(r.size), **r.stats})


# ---- the oracle -------------------------------------------------------------------------------
#: the oracle works in integers of 1/GRID pixel: vertices on that grid, samples on 1/8
GRID = 64


def oracle_msaa(sc: fdm.Scenario, plan: RenderPassPlan, view: int, triangle: Sequence[tuple[Fraction, Fraction]],
                positions: Sequence[tuple[Fraction, Fraction]] = SAMPLE_POSITIONS
                ) -> tuple[npt.NDArray[np.uint8], list[str]]:
    """The resolved image of the module docstring's rule; fragment starts and areas from
    :func:`vk_tests.replay.judge.oracle_view`; one sample set (``positions``, the standard 4 by
    default) per fragment, scaled by its area, each pixel the mean (floor) of its samples.  Exact:
    positions in integers of 1/64 pixel (fragment starts are integers, samples multiples of 1/8,
    vertices multiples of 1/64), edge functions in int64."""
    base, problems = oracle_view(sc, plan, view, "clear")
    h, w = base.shape[:2]
    c2x, c2y = base[..., 0].astype(np.int64), base[..., 1].astype(np.int64)
    fw, fh = base[..., 2].astype(np.int64), base[..., 3].astype(np.int64)
    bx, by = (c2x - fw) // 2 * GRID, (c2y - fh) // 2 * GRID      # fragment starts (integers)
    tri = [(int(x * GRID), int(y * GRID)) for x, y in triangle]
    area = (tri[1][0] - tri[0][0]) * (tri[2][1] - tri[0][1]) - (tri[1][1] - tri[0][1]) * (tri[2][0] - tri[0][0])
    sign = 1 if area > 0 else -1
    covered = np.zeros((h, w), dtype=np.int64)
    ties = np.zeros((h, w), dtype=bool)
    samples = len(positions)
    for px, py in positions:
        sx, sy = bx + fw * int(px * GRID), by + fh * int(py * GRID)
        inside = np.ones((h, w), dtype=bool)
        for i in range(3):
            (ax, ay), (qx, qy) = tri[i], tri[(i + 1) % 3]
            e = sign * ((qx - ax) * (sy - ay) - (qy - ay) * (sx - ax))
            ties |= e == 0
            inside &= e > 0
        covered += inside
    drawn = fw > 0
    out = np.empty((h, w, 4), dtype=np.uint8)
    for ch in range(4):
        val = (covered * COLOUR8[ch] + (samples - covered) * CLEAR8[ch]) // samples
        out[..., ch] = np.where(drawn, val, CLEAR8[ch])
    if np.any(ties & drawn):
        problems.append(f"view{view}: {int(np.count_nonzero(ties & drawn))} pixel(s) have a sample on a triangle "
                        "edge (the scene must avoid ties)")
    return out, problems


def judge_msaa(scene: Scene, out: CaseOutput) -> Verdict:
    """Every view's resolved image equals :func:`oracle_msaa` within 1 LSB."""
    sc, plan = plan_msaa(scene)
    tri = triangle_of(scene)
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    partial = 0
    for v in range(sc.fdm_layers):
        want, probs = oracle_msaa(sc, plan, v, tri)
        problems += probs
        partial += int(np.count_nonzero(np.all(want != COLOUR8, axis=2) & np.any(want != CLEAR8, axis=2)))
        name = f"view{v}"
        got = out.images.get(name)
        if got is None:
            problems.append(f"{name}: no image read back")
            continue
        mm = first_mismatches(name, np.asarray(got), want, tolerance=1)
        if mm:
            problems.append(f"{name}: pixels differ from the one-sample-set-per-fragment resolve by more than 1 LSB")
            mismatches += mm[:4]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems), mismatches=tuple(mismatches))
    return Verdict(status="Pass", message=f"the resolved image equals the one-sample-set-per-fragment oracle within "
                                          f"1 LSB ({partial} partially covered pixels)")
