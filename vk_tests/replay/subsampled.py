"""D8 of the replay backend: turnip's subsampled image built on the device and sampled through the
metadata transform (docs/replay.md, "The subsampled layout").

The model's programming, from :mod:`layout_solver` (src/freedreno/vulkan/tu_tile_config.cc,
tu_subsampled_image.cc, tu_clear_blit.cc; revisions in the functions' docstrings):

1. ``tu_calc_subsampled`` places every rendered tile in the subsampled image (shifted or
   un-subsampled by the solver);
2. the bins are rendered as the base replay does (:class:`vk_tests.replay.render.Replayer`), colouring
   every fragment with :func:`scene_colour` of its centre (``scene_color.frag``), and each tile is
   stored twice: through the ordinary A2D store into the expanded (non-subsampled) framebuffer
   image, and through the subsampled slow store (``fdm_apply_store_coords`` /
   ``fdm_apply_render_area``, :func:`layout_solver.store_path`): a real ``vkCmdBlitImage`` of the
   GMEM rectangle onto the tile's subsampled position (1:1 for a view subsampled in the tile,
   upscaled otherwise), clipped to the transformed render area;
3. the apron blits of ``tu_calc_subsampled_aprons``, in order, each as real ``vkCmdBlitImage``
   regions that pick exactly the texels the driver's float-rectangle NEAREST blit picks
   (:func:`nearest_regions`; the source is first copied aside, since a blit may read what an
   earlier apron wrote);
4. the metadata of ``tu_emit_subsampled_metadata`` (float32, as written) in a uniform buffer, and
   a compute shader (``subsampled_sample.comp``) doing ``tu_get_subsampled_coordinates`` then
   ``texture()`` of the subsampled image, and ``texture()`` of the expanded image at the untouched
   coordinate, with the scene's sampler (NEAREST or LINEAR, CLAMP_TO_EDGE or CLAMP_TO_BORDER and a
   border colour), at the points :func:`layout_solver.reconstruct.sample_points` lists (every
   pixel centre or a regular subset, plus a dense band around every bin edge).

The judge (:func:`judge_subsampled`) uses none of the layout, store, apron or metadata
arithmetic: from the plan it takes the bins and fragment areas only.

* the expanded image must equal the large-fragment oracle: every pixel the colour of its
  fragment's centre (:func:`oracle_colours`), exactly;
* NEAREST: the subsampled sample must equal the expanded sample exactly (a correct layout maps a
  pixel centre inside its fragment's texel);
* LINEAR: ``|subsampled - expanded| <= bound + 1.5/255`` per channel, where the bound is the
  value range of the oracle image within ``F + 1`` pixels of the sample (``F`` the view's largest
  fragment area per axis), the border colour included when that window leaves the framebuffer
  under CLAMP_TO_BORDER: both results are convex combinations of fragments that lie there
  (layout_solver/reconstruct/bound.py explains the bound).  A missing apron reads the garbage
  the image was filled with (alpha 0, where every fragment has alpha 1) and breaks it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan, TilePlan
from layout_solver import (
    LAYER_VEC4S,
    SubsampledLayout,
    layout_metadata,
    metadata_ubo,
    store_path,
    tu_calc_subsampled,
    tu_calc_subsampled_aprons,
)
from layout_solver.reconstruct import sample_points
from turnip_base.errors import NotModelled, NotSupported, ScenarioError
from turnip_base.harness import Handle, Vulkan

from ..graphics.passes import (
    cmd_blit,
    cmd_clear_image,
    cmd_copy,
)
from ..graphics.shaders import load_spv
from ..graphics.targets import (
    ColorTarget,
    read_image,
    require_graphics,
    vk_format,
)
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .judge import oracle_view
from .render import Replayer, box_rect, fits, inclusive_box, intersect, rect_box
from .scene import plan_scene

Pair = tuple[int, int]
Box = tuple[int, int, int, int]


U8Image = npt.NDArray[np.uint8]


FMT = "rgba8"


#: what the subsampled image and GMEM hold before anything is stored (alpha 0: no fragment has it)
GARBAGE8: tuple[float, float, float, float] = (1.0, 0.0, 1.0, 0.0)


FILTERS = ("nearest", "linear")


ADDRESSING = ("clamp_to_edge", "clamp_to_border")


#: name -> (VkBorderColor attribute, RGBA in [0, 1])
BORDERS: dict[str, tuple[str, tuple[float, float, float, float]]] = {
    "transparent_black": ("VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK", (0.0, 0.0, 0.0, 0.0)),
    "opaque_white": ("VK_BORDER_COLOR_FLOAT_OPAQUE_WHITE", (1.0, 1.0, 1.0, 1.0)),
}


#: layers the metadata buffer of the shader holds (``vec4 md[2 * 514]``)
MAX_LAYERS = 2


#: about how many pixel centres are compared besides the bin-edge bands
SAMPLES = 3000


#: the bin-edge band of sample_points (pixels)
BAND = 4


#: LINEAR slack on top of the bound: 1 LSB at 8 bits and the filter's rounding
LINEAR_TOL = 1.5 / 255


# ---- the scene --------------------------------------------------------------------------------
def subsampled_scene(scenario: Mapping[str, Any], filter: str, addressing: str, border: str = "transparent_black",
                     samples: int = SAMPLES) -> dict[str, Any]:
    """A subsampled-layout scene: the scenario, the sampler (``filter``, ``addressing``,
    ``border`` colour name of :data:`BORDERS`) and about how many pixel centres to sample."""
    return {"scenario": dict(scenario), "load_op": "clear", "store": "a2d",
            "sampler": {"filter": filter, "addressing": addressing, "border": border}, "samples": samples}


def sampler_of(scene: Scene) -> tuple[str, str, str]:
    s = scene.get("sampler", {})
    f, a, b = s.get("filter"), s.get("addressing"), s.get("border", "transparent_black")
    if f not in FILTERS:
        raise ScenarioError("sampler.filter", f"must be one of {', '.join(FILTERS)}, got {f!r}")
    if a not in ADDRESSING:
        raise ScenarioError("sampler.addressing", f"must be one of {', '.join(ADDRESSING)}, got {a!r}")
    if b not in BORDERS:
        raise ScenarioError("sampler.border", f"must be one of {', '.join(BORDERS)}, got {b!r}")
    return f, a, b


def plan_subsampled(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan]:
    """Plan the scene (as :func:`vk_tests.replay.scene.plan_scene`) and refuse what D8 does not cover."""
    sc, plan = plan_scene(scene)
    sampler_of(scene)
    if sc.fdm_layers > MAX_LAYERS:
        raise NotModelled("replay", f"the sampling shader holds metadata for {MAX_LAYERS} layers")
    if sc.render_areas and any(r.as_tuple() != (0, 0, *sc.framebuffer) for r in sc.render_areas):
        raise NotModelled("replay", "the subsampled scenes render the whole framebuffer")
    return sc, plan


def points(scene: Scene, plan: RenderPassPlan, view: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The framebuffer positions sampled (:func:`layout_solver.reconstruct.sample_points`)."""
    return sample_points(plan, view, band=BAND, samples=int(scene.get("samples", SAMPLES)))


def normalized(plan: RenderPassPlan, xs: npt.NDArray[np.float64], ys: npt.NDArray[np.float64]
               ) -> npt.NDArray[np.float32]:
    """``(float32(x / W), float32(y / H))`` per point, as the reconstruction normalizes."""
    W, H = plan.scenario.framebuffer
    return np.stack([(xs / W).astype(np.float32), (ys / H).astype(np.float32)], axis=1)


# ---- the colour scene (CPU twin of scene_color.frag) -------------------------------------------
def scene_colour(c2x: npt.NDArray[np.int64], c2y: npt.NDArray[np.int64], fb: Pair) -> U8Image:
    """The RGBA8 colour of fragments centred at ``(c2x / 2, c2y / 2)`` (integer arithmetic, the
    shader's: C division truncates, all values non-negative)."""
    wx, wy = 2 * fb[0], 2 * fb[1]
    c2x, c2y = np.broadcast_arrays(np.asarray(c2x, dtype=np.int64), np.asarray(c2y, dtype=np.int64))
    r = 16 + c2x * 224 // wx
    g = 16 + c2y * 224 // wy
    dx, dy, rr = c2x - wx * 5 // 8, c2y - wy * 3 // 8, wy // 4
    b = 40 + 140 * (dx * dx + dy * dy < rr * rr) + 60 * ((c2x >= wx * 3 // 10) & (c2x < wx * 3 // 10 + wx // 30))
    return np.stack([r, g, b, np.full_like(r, 255)], axis=-1).astype(np.uint8)


def oracle_colours(sc: fdm.Scenario, plan: RenderPassPlan, view: int) -> tuple[U8Image, list[str]]:
    """The expanded image the large-fragment semantics give: every pixel of a rendered bin holds
    :func:`scene_colour` of its fragment's centre (fragments aligned to the bin's start); the
    doubled centres come from :func:`vk_tests.replay.judge.oracle_view` (which also checks the bins)."""
    want16, problems = oracle_view(sc, plan, view, "clear")
    c2x, c2y = want16[..., 0].astype(np.int64), want16[..., 1].astype(np.int64)
    out = scene_colour(c2x, c2y, sc.framebuffer)
    drawn = want16[..., 2] > 0
    if not drawn.all():
        problems.append(f"view{view}: {int((~drawn).sum())} pixel(s) are not drawn (the scene must cover the "
                        "framebuffer)")
    return out, problems


# ---- the apron blits as vkCmdBlitImage regions ------------------------------------------------
def nearest_indices(s0: float, s1: float, n: int, size: int) -> list[int]:
    """The source texel each of ``n`` destination pixels reads in turnip's NEAREST apron blit of
    the float range ``[s0, s1)`` (the pixel centre mapped linearly, ``floor``, clamped to the
    image: :func:`layout_solver.reconstruct.blit_nearest`)."""
    k = (s1 - s0) / n
    return [min(max(math.floor(s0 + (d + 0.5) * k), 0), size - 1) for d in range(n)]


def _blit_picks(a: int, b: int, m: int) -> list[int]:
    """What ``vkCmdBlitImage`` NEAREST of source ``[a, b)`` onto ``m`` pixels reads (the spec's
    ``u = (x + 0.5) · (b − a)/m + a``, ``floor``)."""
    return [math.floor(a + (d + 0.5) * (b - a) / m) for d in range(m)]


def nearest_runs(idx: Sequence[int], size: int) -> list[tuple[int, int, int, int]]:
    """Integer blit ranges ``(dst_start, dst_len, src_a, src_b)`` (relative destination, absolute
    source) whose ``vkCmdBlitImage`` NEAREST picks are exactly ``idx``: runs of one texel
    (replicated) or of a constant integer step ``st`` (``[p − st//2, p − st//2 + m·st)``), the
    longest first; every run is checked against :func:`_blit_picks`."""
    out: list[tuple[int, int, int, int]] = []
    i, n = 0, len(idx)
    while i < n:
        j = i + 1
        while j < n and idx[j] == idx[i]:
            j += 1
        best = (j - i, idx[i], idx[i] + 1)
        if i + 1 < n and idx[i + 1] > idx[i]:
            st = idx[i + 1] - idx[i]
            j = i + 2
            while j < n and idx[j] - idx[j - 1] == st:
                j += 1
            while j - i > best[0]:
                a = idx[i] - st // 2
                if a >= 0 and a + (j - i) * st <= size:
                    best = (j - i, a, a + (j - i) * st)
                    break
                j -= 1
        m, a, b = best
        if _blit_picks(a, b, m) != list(idx[i:i + m]):
            raise AssertionError(f"blit [{a}, {b}) -> {m} does not pick {idx[i:i + m]} (a bug of the suite)")
        out.append((i, m, a, b))
        i += m
    return out


def nearest_regions(dst: tuple[int, int, int, int], src: tuple[float, float, float, float], image: Pair
                    ) -> tuple[list[tuple[Box, Box]], Box | None]:
    """One apron blit (``dst`` integer ``(x, y, w, h)`` <- ``src`` float ``(x0, y0, x1, y1)``) as
    ``vkCmdBlitImage`` regions ``(src_box, dst_box)`` (exclusive ends) that pick the same texels,
    the destination clipped to the image; and the source hull they read (None: nothing drawn)."""
    dx, dy, dw, dh = dst
    w, h = image
    if dw <= 0 or dh <= 0:
        return [], None
    ix = nearest_indices(src[0], src[2], dw, w)
    iy = nearest_indices(src[1], src[3], dh, h)
    keep_x = [d for d in range(dw) if 0 <= dx + d < w]
    keep_y = [d for d in range(dh) if 0 <= dy + d < h]
    if not keep_x or not keep_y:
        return [], None
    x0, y0 = keep_x[0], keep_y[0]
    runs_x = nearest_runs(ix[x0:keep_x[-1] + 1], w)
    runs_y = nearest_runs(iy[y0:keep_y[-1] + 1], h)
    regions = [((ax, ay, bx, by), (dx + x0 + sx, dy + y0 + sy, dx + x0 + sx + mx, dy + y0 + sy + my))
               for sy, my, ay, by in runs_y for sx, mx, ax, bx in runs_x]
    hull = (min(r[0][0] for r in regions), min(r[0][1] for r in regions),
            max(r[0][2] for r in regions), max(r[0][3] for r in regions))
    return regions, hull


# ---- the device run ---------------------------------------------------------------------------
class SampledTarget(ColorTarget):
    """A :class:`~vk_tests.graphics.targets.ColorTarget` that can also be sampled."""

    def __init__(self, ctx: Vulkan, width: int, height: int, fmt: str):
        vk = ctx.vk
        self.ctx, self.fmt, self.width, self.height = ctx, fmt, width, height
        f = vk_format(ctx, fmt)
        usage = (vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT)
        self.image = ctx.image(width, height, 1, f, f, usage)
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    def to_shader_read(self, cb: Handle) -> None:
        vk = self.ctx.vk
        src = (vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
               | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT)
        self.image.barrier(cb, self.layout, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, src,
                           vk.VK_ACCESS_SHADER_READ_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                           vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)
        self.layout = vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL


def metadata_floats(layout: SubsampledLayout) -> npt.NDArray[np.float32]:
    """The metadata of every layer as the shader's uniform buffer holds it: ``MAX_LAYERS · 514``
    vec4 of float32, the bin stride stored as a uint's bits, unwritten bins NaN."""
    ubo = metadata_ubo(layout_metadata(layout))
    out = np.full((MAX_LAYERS * LAYER_VEC4S, 4), np.nan, dtype=np.float32)
    for i, v in enumerate(ubo):
        if v is None:
            continue
        if i % LAYER_VEC4S == 1:   # (bin_stride, pad[3]): a uint32
            out[i].view(np.uint32)[:] = [int(v[0]), 0, 0, 0]
        else:
            out[i] = np.array([float(t) for t in v], dtype=np.float32)
    return out


class SubsampledReplayer(Replayer):
    """The base replay with the colour scene, plus the subsampled store, the aprons and the
    sampling pass."""

    fmt = FMT
    frag = "scene_color.frag.spv"
    n_attachments = 1
    bg = (0.0, 0.0, 0.0, 0.0)
    clear = (0.0, 0.0, 0.0, 1.0)
    garbage = GARBAGE8
    push_bytes = 40

    def __init__(self, ctx: Vulkan, sc: fdm.Scenario, plan: RenderPassPlan, scene: Scene):
        super().__init__(ctx, sc, plan, "clear", "a2d")
        self.scene = scene
        self.layout = tu_calc_subsampled(plan)
        if not self.layout.solved:
            raise NotModelled("replay", "more than 512 bins: the solver does not run (fallback metadata)")
        lay = self.layout
        self.size0 = (lay.width0, lay.height0)
        W, H = sc.framebuffer
        self.sub = [SampledTarget(ctx, lay.width0, lay.height0, FMT) for _ in range(sc.fdm_layers)]
        # a store destination may reach past the image (a bin past the framebuffer edge, stored from
        # its end-aligned start): the A2D scissor clips it, so the staging image has room for it
        self.staging_size = (max(self.size[0], lay.width0 + max(t.views[v].bin[2] for t in plan.tiles
                                                                for v in range(sc.fdm_layers))),
                             max(self.size[1], lay.height0 + max(t.views[v].bin[3] for t in plan.tiles
                                                                 for v in range(sc.fdm_layers))))
        self.sub_staging = ColorTarget(ctx, self.staging_size[0], self.staging_size[1], FMT)
        self.apron_src = ColorTarget(ctx, lay.width0, lay.height0, FMT)
        self.expanded = [SampledTarget(ctx, W, H, FMT) for _ in range(sc.fdm_layers)]
        self.stats.update({"subsampled_stores": 0, "subsampled_views": 0, "aprons": 0, "apron_regions": 0,
                           "solver_shifts": sum(e.kind == "shift" for e in lay.log),
                           "solver_unsubsamples": sum(e.kind == "unsubsample" for e in lay.log),
                           "subsampled_size": list(self.size0)})

    def push_tail(self) -> list[float]:
        return [float(self.sc.framebuffer[0]), float(self.sc.framebuffer[1])]

    def record(self, cb: Handle) -> None:
        for img in self.sub:
            cmd_clear_image(self.ctx, cb, img, GARBAGE8)
        super().record(cb)

    def after_store(self, cb: Handle, tile: TilePlan, v: int) -> None:
        """The subsampled slow store of the tile's view: ``fdm_apply_store_coords`` blitted and
        clipped to ``fdm_apply_render_area`` (``store_dst ∩ a2d_scissor``)."""
        sp = store_path(self.layout, tile)[v]
        rect = sp.slow_store_rect
        src = fits(inclusive_box(*sp.store_src), self.size, self.stats)
        dst = fits(inclusive_box(*sp.store_dst), self.staging_size, self.stats)
        if rect is None or src is None or dst is None:
            return
        kept = intersect(dst, rect_box(rect), (0, 0, *self.size0))
        if kept is None:
            return
        cmd_blit(self.ctx, cb, self.gmem[0], src, self.sub_staging, dst)
        cmd_copy(self.ctx, cb, self.sub_staging, self.sub[v], box_rect(kept))
        self.stats["subsampled_stores"] += 1
        self.stats["subsampled_views"] += int(sp.subsampled_view)

    def finish(self, cb: Handle) -> None:
        ctx, (W, H) = self.ctx, self.sc.framebuffer
        for v in range(self.sc.fdm_layers):
            for a in tu_calc_subsampled_aprons(self.layout, v):
                regions, hull = nearest_regions((a.dst.x, a.dst.y, a.dst.w, a.dst.h), a.src, self.size0)
                if hull is None:
                    continue
                # the blit reads the image as it is now (earlier aprons included): copy the source aside
                cmd_copy(ctx, cb, self.sub[v], self.apron_src, box_rect(hull))
                for s, d in regions:
                    cmd_blit(ctx, cb, self.apron_src, s, self.sub[v], d)
                self.stats["aprons"] += 1
                self.stats["apron_regions"] += len(regions)
            cmd_copy(ctx, cb, self.views[v][0], self.expanded[v], (0, 0, W, H))


def _sampler_handle(ctx: Vulkan, filter: str, addressing: str, border: str) -> Handle:
    vk = ctx.vk
    f = vk.VK_FILTER_LINEAR if filter == "linear" else vk.VK_FILTER_NEAREST
    mode = (vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER if addressing == "clamp_to_border"
            else vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE)
    # the subsampled-sampler rules (samplers.adoc 02574-02580): min = mag, mipmap NEAREST, lod 0,
    # clamp modes only, no anisotropy or compare, normalized coordinates
    info = vk.VkSamplerCreateInfo(magFilter=f, minFilter=f, mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
                                  addressModeU=mode, addressModeV=mode, addressModeW=mode, mipLodBias=0.0,
                                  anisotropyEnable=vk.VK_FALSE, maxAnisotropy=1.0, compareEnable=vk.VK_FALSE,
                                  compareOp=vk.VK_COMPARE_OP_ALWAYS, minLod=0.0, maxLod=0.0,
                                  borderColor=getattr(vk, BORDERS[border][0]),
                                  unnormalizedCoordinates=vk.VK_FALSE)
    sampler = vk.vkCreateSampler(ctx.device, info, None)
    ctx.own(lambda: vk.vkDestroySampler(ctx.device, sampler, None))
    return sampler


def _sample(ctx: Vulkan, r: SubsampledReplayer, scene: Scene, view: int) -> npt.NDArray[np.float32]:
    """Run ``subsampled_sample.comp`` for one view: ``(N, 2, 4)`` float32 (subsampled, expanded)."""
    vk = ctx.vk
    filter, addressing, border = sampler_of(scene)
    xs, ys = points(scene, r.plan, view)
    pts = normalized(r.plan, xs, ys)
    n = len(pts)
    md = metadata_floats(r.layout)
    SB, UB, CIS = (vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                   vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER)
    set_layout = ctx.descriptor_set_layout([(0, CIS, 1), (1, CIS, 1), (2, UB, 1), (3, SB, 1), (4, SB, 1)])
    pipe_layout = ctx.pipeline_layout(set_layout, 8)
    pipe = ctx.compute_pipeline(load_spv("subsampled_sample.comp.spv"), pipe_layout)
    pool = ctx.descriptor_pool([(CIS, 2), (UB, 1), (SB, 2)], 1)
    dset = ctx.allocate_set(pool, set_layout)
    mbuf = ctx.buffer(md.nbytes, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, host_visible=True)
    mbuf.write(md)
    pbuf = ctx.buffer(pts.nbytes, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host_visible=True)
    pbuf.write(pts)
    out_bytes = n * 2 * 16
    obuf = ctx.buffer(out_bytes, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host_visible=True)
    sampler = _sampler_handle(ctx, filter, addressing, border)
    READ = vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
    images = [vk.VkDescriptorImageInfo(sampler=sampler, imageView=t.image.views[0], imageLayout=READ)
              for t in (r.sub[view], r.expanded[view])]
    whole = 0xFFFFFFFFFFFFFFFF
    writes = [vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=i, descriptorType=CIS, pImageInfo=[images[i]])
              for i in (0, 1)]
    for b, t, buf in ((2, UB, mbuf), (3, SB, pbuf), (4, SB, obuf)):
        binfo = vk.VkDescriptorBufferInfo(buffer=buf.handle, offset=0, range=whole)
        writes.append(vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=b, descriptorType=t, pBufferInfo=[binfo]))
    vk.vkUpdateDescriptorSets(ctx.device, len(writes), writes, 0, None)

    def record(cb: Handle) -> None:
        for t in (r.sub[view], r.expanded[view]):
            t.to_shader_read(cb)
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe_layout, 0, 1, [dset], 0, None)
        data = vk.ffi.new("uint32_t[]", [n, view])
        vk.vkCmdPushConstants(cb, pipe_layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, data)
        vk.vkCmdDispatch(cb, -(-n // 64), 1, 1)
        ctx.memory_barrier(cb, vk.VK_ACCESS_SHADER_WRITE_BIT, vk.VK_ACCESS_HOST_READ_BIT,
                           vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT)

    ctx.run(record)
    return obuf.read(out_bytes).view(np.float32).reshape(n, 2, 4).copy()


def run_subsampled(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Render, store both ways, run the aprons, sample; images ``view{v}_expanded`` (H, W, 4),
    ``view{v}_subsampled`` (height0, width0, 4) uint8 and ``view{v}_samples`` (N, 2, 4) float32."""
    sc, plan = plan_subsampled(scene)
    require_graphics(ctx, FMT)
    vk = ctx.vk
    ctx.require_format(vk_format(ctx, FMT), vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT,
                       "SAMPLED_IMAGE_FILTER_LINEAR")
    if not ctx.info.queue_graphics:
        raise NotSupported(f"device {ctx.info.name}: no graphics queue")
    W, H = sc.framebuffer
    images: dict[str, Any] = {}
    with ctx.scope():
        r = SubsampledReplayer(ctx, sc, plan, scene)
        ctx.run(r.record)
        for v in range(sc.fdm_layers):
            images[f"view{v}_expanded"] = read_image(ctx, r.expanded[v])[:H, :W].copy()
            images[f"view{v}_subsampled"] = read_image(ctx, r.sub[v]).copy()
            images[f"view{v}_samples"] = _sample(ctx, r, scene, v)
    info: dict[str, Any] = {"device": ctx.info.describe(), "scratch": list(r.size), **r.stats}
    return CaseOutput(images=images, info=info)


# ---- the judge --------------------------------------------------------------------------------
def window_range(img: npt.NDArray[np.float64], radius: Pair) -> tuple[npt.NDArray[np.float64],
                                                                          npt.NDArray[np.float64]]:
    """Per pixel and channel: max and min of ``img`` (H, W, C) over ``[p − r, p + r]`` (clipped)."""
    rx, ry = radius
    sw = np.lib.stride_tricks.sliding_window_view

    def extreme(fill: float, op: Any) -> npt.NDArray[np.float64]:
        # separable: along x, then along y
        p = np.pad(img, ((0, 0), (rx, rx), (0, 0)), constant_values=fill)
        t = op(sw(p, 2 * rx + 1, axis=1), axis=-1)
        p = np.pad(t, ((ry, ry), (0, 0), (0, 0)), constant_values=fill)
        return np.asarray(op(sw(p, 2 * ry + 1, axis=0), axis=-1), dtype=np.float64)

    return extreme(-np.inf, np.max), extreme(np.inf, np.min)


def linear_bound(want: U8Image, plan: RenderPassPlan, view: int, xs: npt.NDArray[np.float64],
                 ys: npt.NDArray[np.float64], addressing: str, border: Sequence[float]) -> npt.NDArray[np.float64]:
    """Per sample and channel: the value range (in [0, 1]) of the oracle image within ``F + 1``
    pixels of the pixel holding the sample, the border colour included where that window leaves
    the framebuffer under CLAMP_TO_BORDER (layout_solver.reconstruct.neighbourhood_bound's rule)."""
    H, W = want.shape[:2]
    fas = [t.views[view].frag_area for t in plan.tiles if t.views[view].visible]
    r = (max(f[0] for f in fas) + 1, max(f[1] for f in fas) + 1)
    hi, lo = window_range(want.astype(np.float64) / 255.0, r)
    px = np.clip(np.floor(xs).astype(np.int64), 0, W - 1)
    py = np.clip(np.floor(ys).astype(np.int64), 0, H - 1)
    h, low = hi[py, px], lo[py, px]
    if addressing == "clamp_to_border":
        out = ((px - r[0] < 0) | (px + r[0] >= W) | (py - r[1] < 0) | (py + r[1] >= H))[:, None]
        bc = np.asarray(border, dtype=np.float64)[None, :]
        h, low = np.where(out, np.maximum(h, bc), h), np.where(out, np.minimum(low, bc), low)
    return np.asarray(h - low, dtype=np.float64)


def judge_subsampled(scene: Scene, out: CaseOutput) -> Verdict:
    """The expanded image against the large-fragment oracle (exact), then the subsampled samples
    against the expanded ones: exact for NEAREST, within the neighbourhood bound for LINEAR."""
    sc, plan = plan_subsampled(scene)
    filter, addressing, border = sampler_of(scene)
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    total = 0
    for v in range(sc.fdm_layers):
        want, probs = oracle_colours(sc, plan, v)
        problems += probs
        name = f"view{v}_expanded"
        got = out.images.get(name)
        if got is None:
            problems.append(f"{name}: no image read back")
        else:
            mm = first_mismatches(name, np.asarray(got), want)
            if mm:
                n = (int(np.count_nonzero(np.any(np.asarray(got) != want, axis=2))) if got.shape == want.shape
                     else -1)
                problems.append(f"{name}: {n} pixel(s) differ from the large-fragment oracle")
                mismatches += mm[:4]
        sname = f"view{v}_samples"
        samples = out.images.get(sname)
        xs, ys = points(scene, plan, v)
        if samples is None or np.asarray(samples).shape != (len(xs), 2, 4):
            problems.append(f"{sname}: want {len(xs)} samples of (subsampled, expanded) RGBA")
            continue
        s = np.asarray(samples, dtype=np.float64)
        err = np.abs(s[:, 0] - s[:, 1])
        total += len(xs)
        if filter == "nearest":
            allowed = np.zeros_like(err)
            rule = "exactly"
        else:
            allowed = linear_bound(want, plan, v, xs, ys, addressing, BORDERS[border][1]) + LINEAR_TOL
            rule = "within the neighbourhood bound + 1.5 LSB"
        bad = np.any(err > allowed, axis=1)
        if bad.any():
            idx = np.nonzero(bad)[0]
            problems.append(f"{sname}: {len(idx)} of {len(xs)} subsampled samples differ from the expanded ones "
                            f"(not {rule}); worst excess {float((err - allowed).max()):.4f}")
            mismatches += [{"image": sname, "x": float(xs[i]), "y": float(ys[i]),
                            "got": [round(float(t), 5) for t in s[i, 0]],
                            "want": [round(float(t), 5) for t in s[i, 1]],
                            "allowed": [round(float(t), 5) for t in allowed[i]]} for i in idx[:4]]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems), mismatches=tuple(mismatches))
    return Verdict(status="Pass", message=f"expanded image equals the large-fragment oracle; {total} samples of the "
                                          f"subsampled image through the metadata agree with the expanded image "
                                          f"({filter}, {addressing}, border {border})")


#: a 6 x 4 density map (64 x 64 texels on 384 x 256): 1x1 in the middle, 2x2 and 4x4 around,
#: so 1x1 bins sit next to subsampled ones (the solver shifts or un-subsamples) and scales differ
#: across many seams
SEAMS = ((0.25, 0.5, 0.5, 0.5, 0.25, 0.25),
         (0.5, 1.0, 1.0, 0.5, 0.5, 0.25),
         (0.5, 1.0, 0.5, 0.5, 0.25, 0.5),
         (0.25, 0.5, 0.5, 0.25, 0.25, 1.0))
