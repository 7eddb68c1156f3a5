"""The ``replay`` backend: turnip's per-bin FDM scheme replayed with ordinary Vulkan (issue 9).

A replay run plans the scenario with :func:`fdm.plan_render_pass` (GMEM passes only) and, for
every rendered tile and visible view in the driver's walk order, does what turnip programs:

1. GMEM, a scratch image in rendering space, is filled with a ``GARBAGE`` colour;
2. the load: ``LOAD_OP_CLEAR`` clears the rendering-space rectangle of the render area that
   ``fdm_apply_gmem_clear_coords`` gives (:mod:`fdm.clears`); ``LOAD_OP_LOAD`` blits
   (NEAREST) the framebuffer rectangle ``BlitRects.load_src`` onto ``BlitRects.load_dst``;
3. the draw: a full-screen triangle with the patched viewport and the scissor of the view's
   slot (``TilePlan.slots``: the viewport floats and the screen scissor, intersected with the
   viewport scissor and the window scissor, as the hardware does).  The fragment shader
   writes two colour attachments, each ``(2·p.x, 2·p.y, frag_size.x, frag_size.y)`` for a
   framebuffer position ``p`` of the fragment's centre measured two ways: ``fragcoord``
   lowers FragCoord like ``lower_fdm_instr`` with the plan's ``FsParams`` as push constants;
   ``geometry`` maps the triangle's interpolated viewport-relative position through the
   application's viewport, so it moves with the patched viewport;
4. the store: ``vkCmdBlitImage`` (NEAREST, scaled) of ``BlitRects.store_src`` onto
   ``BlitRects.store_dst``, of which the render area is kept (the A2D scissor).  With the
   scene's ``"store": "planned"`` a tile whose ``fast_store`` predicate is set is stored the
   fast way instead, a 1:1 copy of GMEM over the bin (the resolve engine cannot scale:
   docs/findings.md, finding c).

The images read back are ``view{v}`` (the ``fragcoord`` attachment) and ``view{v}_geometry``.

With HW bin scaling (a740+) turnip programs viewports, scissors, the window scissor and the
GMEM load in "LRZ space" and the hardware adds ``o'`` (``GRAS_BIN_FOVEAT_OFFSET`` of the slot):
the replay adds ``TilePlan.foveat.offsets[slot]`` to them, as the hardware would.

The judge (:func:`judge_replay`, :func:`oracle_view`) does not use the model's viewport,
scissor, offset, FS-parameter or blit arithmetic.  From the plan it takes only the bins
``B_v`` and fragment areas of the visible views (``TilePlan.views``, checked by other
oracles); the rest is the spec's large-fragment semantics (docs/spec/vulkan-fdm-and-cts.md
§1.5): a pixel ``(x, y)`` of ``B_v`` belongs to the fragment of size ``fa`` aligned to
``B_v``'s start, whose single sample is at its centre ``c = b + fa/2`` with
``b = B + fa·floor((p − B)/fa)`` (Fractions); the fragment is drawn iff ``c`` lies inside the
user viewport and the user scissor, and then all its pixels inside the render area hold
``(2·c.x, 2·c.y, fa.x, fa.y)``; the other pixels of the bin inside the render area hold the
clear colour (``LOAD_OP_CLEAR``) or what was there (``LOAD_OP_LOAD``); pixels outside the
render area or outside every rendered bin keep the background.  See docs/replay.md.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.clears import gmem_clear_coords
from fdm.errors import NotModelled, ScenarioError
from fdm.plan import RenderPassPlan, TilePlan

from .cases import Case, CaseOutput, Scene, Verdict, first_mismatches
from .graphics import (
    FullscreenPipeline,
    cmd_begin_render_pass,
    cmd_blit,
    cmd_clear_image,
    cmd_clear_rect,
    cmd_copy,
    cmd_draw_fullscreen,
    cmd_end_render_pass,
    cmd_push_constants,
    cmd_set_scissor,
    cmd_set_viewport,
    color_image,
    framebuffer,
    load_spv,
    read_image,
    render_pass,
    require_graphics,
)
from .harness import Handle, Vulkan

#: the colour attachments of the replay and the suffix of their image names
ATTACHMENTS: tuple[tuple[str, str], ...] = (("fragcoord", ""), ("geometry", "_geometry"))

__all__ = ["ATTACHMENTS", "BG", "CLEAR", "GARBAGE", "LOAD_OPS", "STORES", "finding_cases", "image_names",
           "judge_replay", "oracle_view", "plan_scene", "replay_cases", "replay_scene", "run_case", "run_replay",
           "scratch_size"]

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive ends)

FMT = "rgba16ui"
#: the framebuffer's content before the pass
BG: tuple[int, int, int, int] = (0xB0B0, 0xB0B0, 0, 0)
#: the colour attachment's clear value (``LOAD_OP_CLEAR``)
CLEAR: tuple[int, int, int, int] = (0xC1EA, 0xC1EA, 0, 0)
#: what GMEM holds before a tile's load or clear
GARBAGE: tuple[int, int, int, int] = (0xDEAD, 0xBEEF, 0, 0)
#: the colour of the scene's ``clear_rects`` (``vkCmdClearAttachments`` after the draw)
CLEAR_RECT: tuple[int, int, int, int] = (0xC2C2, 0xC2C2, 1, 1)
LOAD_OPS = ("clear", "load")
#: ``a2d``: every tile through the scaled A2D store; ``planned``: the fast (1:1) store where the
#: plan's ``fast_store`` predicate says so
STORES = ("a2d", "planned")


# ---- the scene --------------------------------------------------------------------------
def replay_scene(scenario: Mapping[str, Any], load_op: str = "clear", store: str = "a2d", *,
                 clear_rects: Sequence[Sequence[int]] = ()) -> dict[str, Any]:
    """A replay scene: the scenario mapping (the file schema, docs/scenario.md), the colour
    attachment's load op, the store path (:data:`STORES`) and the framebuffer rectangles
    ``(x, y, w, h)`` cleared to :data:`CLEAR_RECT` by ``vkCmdClearAttachments`` after the draw."""
    scene: dict[str, Any] = {"scenario": dict(scenario), "load_op": load_op, "store": store}
    if clear_rects:
        scene["clear_rects"] = [list(r) for r in clear_rects]
    return scene


def clear_rects(scene: Scene) -> tuple[Rect4, ...]:
    """The scene's ``clear_rects``, checked: ``(x, y, w, h)`` with non-negative integer offsets
    and positive extents (VUID-vkCmdClearAttachments-rect-02682/02683)."""
    out = []
    for i, r in enumerate(scene.get("clear_rects", ())):
        if (not isinstance(r, Sequence) or len(r) != 4 or not all(isinstance(v, int) for v in r)
                or r[0] < 0 or r[1] < 0 or r[2] <= 0 or r[3] <= 0):
            raise ScenarioError(f"clear_rects[{i}]", f"must be [x, y, w, h] with x, y >= 0 and w, h > 0, got {r!r}")
        out.append((r[0], r[1], r[2], r[3]))
    return tuple(out)


def plan_scene(scene: Scene) -> tuple[fdm.Scenario, RenderPassPlan]:
    """Parse and plan the scene's scenario; refuse what the replay does not cover."""
    load_op = scene.get("load_op", "clear")
    if load_op not in LOAD_OPS:
        raise ScenarioError("load_op", f"must be one of {', '.join(LOAD_OPS)}, got {load_op!r}")
    store = scene.get("store", "a2d")
    if store not in STORES:
        raise ScenarioError("store", f"must be one of {', '.join(STORES)}, got {store!r}")
    clear_rects(scene)
    sc = fdm.parse_scenario(scene["scenario"])
    if sc.layers != 1 or sc.fdm_per_layer:
        raise NotModelled("replay", "layered (VALVE) passes are not replayed: one framebuffer layer per view")
    if sc.writes_viewport_index:
        raise NotModelled("replay", "the replay's shaders do not write gl_ViewportIndex")
    if sc.custom_resolve:
        raise NotModelled("replay", "custom-resolve subpasses are not replayed")
    plan = fdm.plan_render_pass(sc)
    if not isinstance(plan, RenderPassPlan):
        raise NotModelled("replay", f"the pass renders in sysmem ({plan.sysmem_reason}): nothing is binned")
    return sc, plan


def _render_area(sc: fdm.Scenario, view: int) -> Rect4:
    if not sc.render_areas:
        return (0, 0, sc.framebuffer[0], sc.framebuffer[1])
    r = sc.render_areas[view] if len(sc.render_areas) > 1 else sc.render_areas[0]
    return r.as_tuple()


def _user_index(sc: fdm.Scenario, view: int) -> int:
    """The application's viewport/scissor index of a view's draws: ``view`` with
    VK_QCOM_multiview_per_view_viewports, else 0 (the shaders do not write the index)."""
    return view if sc.multiview_per_view_viewports else 0


# ---- run ----------------------------------------------------------------------------------
def _inclusive_box(tl: Pair, br: Pair) -> Box | None:
    """Inclusive corners -> exclusive box; None when empty."""
    if br[0] < tl[0] or br[1] < tl[1]:
        return None
    return (tl[0], tl[1], br[0] + 1, br[1] + 1)


def _rect_box(r: Rect4) -> Box | None:
    x, y, w, h = r
    return (x, y, x + w, y + h) if w > 0 and h > 0 else None


def _shift(b: Box, d: Pair) -> Box:
    return (b[0] + d[0], b[1] + d[1], b[2] + d[0], b[3] + d[1])


def _shift_opt(b: Box | None, d: Pair) -> Box | None:
    return None if b is None else _shift(b, d)


def _intersect(*boxes: Box | None) -> Box | None:
    if any(b is None for b in boxes):
        return None
    bs = [b for b in boxes if b is not None]
    x0, y0 = max(b[0] for b in bs), max(b[1] for b in bs)
    x1, y1 = min(b[2] for b in bs), min(b[3] for b in bs)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def _inside(b: Box, size: Pair) -> bool:
    return 0 <= b[0] < b[2] <= size[0] and 0 <= b[1] < b[3] <= size[1]


def _box_rect(b: Box) -> Rect4:
    return (b[0], b[1], b[2] - b[0], b[3] - b[1])


def scratch_size(plan: RenderPassPlan) -> Pair:
    """Images big enough for rendering space and for every bin: the framebuffer, every tile's
    ``b_cs + T·E`` and every bin's end."""
    sc = plan.scenario
    tw, th = plan.tiling.tile_size
    w, h = sc.framebuffer
    for t in plan.tiles:
        cx, cy = t.common_bin_start
        w = max(w, cx + tw * max(t.extent[0], t.gmem_extent[0]))
        h = max(h, cy + th * max(t.extent[1], t.gmem_extent[1]))
        for v in t.views:
            w = max(w, v.bin[0] + v.bin[2])
            h = max(h, v.bin[1] + v.bin[3])
    return (w, h)


def _slot(plan: RenderPassPlan, view: int) -> int:
    """The viewport slot the view's draws use: slot ``view`` with per-view viewports, else 0."""
    return view if plan.viewport_state.per_view_viewport else 0


def _hw_offset(tile: TilePlan, slot: int) -> Pair:
    """``o'`` the hardware adds behind LRZ for a slot (``GRAS_BIN_FOVEAT_OFFSET``), 0 without
    HW bin scaling."""
    return tile.foveat.offsets[slot] if tile.foveat.binscaleen else (0, 0)


class Replayer:
    """Turnip's per-bin scheme for one scene: for every rendered tile and visible view, fill GMEM
    with garbage, load or clear, draw with the slot's patched viewport and scissor, store.

    The base class draws the full-screen triangle of ``fdm_coord.frag`` into two RGBA16_UINT
    attachments and stores through the A2D path; the scenes of the ``replay_*`` modules subclass
    it (:attr:`fmt`, :attr:`frag`, :attr:`n_attachments`, the colours; :meth:`draw_geometry` for
    other geometry, :meth:`after_store` / :meth:`finish` for what happens after a tile's store
    and after the last tile)."""

    fmt: str = FMT
    frag: str = "fdm_coord.frag.spv"
    n_attachments: int = len(ATTACHMENTS)
    bg: tuple[float, ...] = BG
    clear: tuple[float, ...] = CLEAR
    garbage: tuple[float, ...] = GARBAGE
    #: fragment push-constant bytes: frag_size, frag_offset, the application's viewport, then
    #: :meth:`push_tail`
    push_bytes: int = 32

    def __init__(self, ctx: Vulkan, sc: fdm.Scenario, plan: RenderPassPlan, load_op: str, store: str,
                 clear_rects: Sequence[Rect4] = ()):
        self.ctx, self.sc, self.plan, self.load_op, self.store = ctx, sc, plan, load_op, store
        self.clear_rects = tuple(clear_rects)
        self.size = scratch_size(plan)
        lim = ctx.vk.vkGetPhysicalDeviceProperties(ctx.physical).limits
        self.bounds = (float(lim.viewportBoundsRange[0]), float(lim.viewportBoundsRange[1]))
        self.max_viewport = (int(lim.maxViewportDimensions[0]), int(lim.maxViewportDimensions[1]))
        n = self.n_attachments
        self.make_pass()
        self.gmem = [color_image(ctx, self.size[0], self.size[1], self.fmt) for _ in range(n)]
        self.gmem_fb = self.make_framebuffer()
        self.staging = color_image(ctx, self.size[0], self.size[1], self.fmt)
        #: views[v][a]: the framebuffer image of view v, attachment a
        self.views = [[color_image(ctx, self.size[0], self.size[1], self.fmt) for _ in range(n)]
                      for _ in range(sc.fdm_layers)]
        self.stats: dict[str, Any] = {
            "tiles": len(plan.tiles), "views_rendered": 0, "draws": 0, "empty_scissors": 0, "bad_viewports": 0,
            "loads": 0, "clears": 0, "clear_rects": 0, "stores": 0, "fast_stores": 0, "skipped_rects": 0}

    def make_pass(self) -> None:
        """The GMEM render pass and the pipeline (``self.rp``, ``self.pipe``)."""
        self.rp = render_pass(self.ctx, [self.fmt] * self.n_attachments, "load")
        self.pipe = FullscreenPipeline(self.ctx, self.rp, load_spv(self.frag), self.push_bytes,
                                       attachments=self.n_attachments)

    def make_framebuffer(self) -> Handle:
        """The framebuffer of the GMEM images (``self.gmem``) for ``self.rp``."""
        return framebuffer(self.ctx, self.rp, self.gmem)

    def push_tail(self) -> list[float]:
        """Push constants after the application's viewport (none in the base class)."""
        return []

    def record(self, cb: Handle) -> None:
        for imgs in self.views:
            for img in imgs:
                cmd_clear_image(self.ctx, cb, img, self.bg)
        for tile in self.plan.tiles:
            for v in range(self.sc.fdm_layers):
                if tile.views[v].visible:
                    self.tile_view(cb, tile, v)
        self.finish(cb)

    def finish(self, cb: Handle) -> None:
        """After the last tile (the base class does nothing)."""

    def _fits(self, b: Box | None) -> Box | None:
        return fits(b, self.size, self.stats)

    def load(self, cb: Handle, tile: TilePlan, v: int) -> None:
        """GMEM garbage, then ``LOAD_OP_LOAD``'s scaled blit (outside the render pass)."""
        ctx, gmem, fbimgs = self.ctx, self.gmem, self.views[v]
        blits = tile.blits[v]
        for g in gmem:
            cmd_clear_image(ctx, cb, g, self.garbage)
        if self.load_op == "load" and blits.load_src is not None and blits.load_dst is not None:
            # the 3D-blit load draws through viewport 0: the hardware adds slot 0's o'
            src = self._fits(_rect_box(blits.load_src))
            dst = self._fits(_rect_box(blits.load_dst))
            if src is not None and dst is not None:
                for fbimg, g in zip(fbimgs, gmem, strict=True):
                    cmd_blit(ctx, cb, fbimg, src, g, _shift(dst, _hw_offset(tile, 0)))
                self.stats["loads"] += 1

    def gmem_clear(self, cb: Handle, tile: TilePlan, v: int, rect: Rect4, value: Sequence[float]) -> bool:
        """A GMEM clear of the framebuffer rectangle ``rect`` through ``fdm_apply_gmem_clear_coords``
        (the resolve engine is not behind the FOVEAT offset: no o'), inside the render pass."""
        tl, br = gmem_clear_coords(tile, v, rect)
        box = _intersect(_inclusive_box(tl, br), (0, 0, self.size[0], self.size[1]))
        if box is None:
            return False
        for i, g in enumerate(self.gmem):
            cmd_clear_rect(self.ctx, cb, g, _box_rect(box), value, attachment=i)
        return True

    def tile_view(self, cb: Handle, tile: TilePlan, v: int) -> None:
        ctx, gmem = self.ctx, self.gmem
        self.stats["views_rendered"] += 1
        ra = _render_area(self.sc, v)
        self.load(cb, tile, v)
        self.before_pass(cb, tile, v)
        cmd_begin_render_pass(ctx, cb, self.rp, self.gmem_fb, gmem, (0, 0, self.size[0], self.size[1]))
        if self.load_op == "clear" and self.gmem_clear(cb, tile, v, ra, self.clear):
            self.stats["clears"] += 1
        self.draw(cb, tile, v)
        for rect in self.clear_rects:
            # vkCmdClearAttachments after the draw: the generic clear's patchpoint
            if self.gmem_clear(cb, tile, v, rect, CLEAR_RECT):
                self.stats["clear_rects"] += 1
        cmd_end_render_pass(ctx, cb)
        self.store_view(cb, tile, v, ra)
        self.after_store(cb, tile, v)

    def store_view(self, cb: Handle, tile: TilePlan, v: int, ra: Rect4) -> None:
        """The store of every attachment: the A2D scaled blit (or the fast 1:1 copy as planned)."""
        ctx, gmem, fbimgs = self.ctx, self.gmem, self.views[v]
        blits = tile.blits[v]
        if self.store == "planned" and tile.fast_store:
            # the resolve engine copies the GMEM window 1:1 onto the bin (window offset b_cs)
            kept = self._fits(_intersect(_rect_box(tile.views[v].bin), _rect_box(ra)))
            if kept is not None:
                for fbimg, g in zip(fbimgs, gmem, strict=True):
                    cmd_copy(ctx, cb, g, fbimg, _box_rect(kept))
            self.stats["fast_stores"] += 1
            return
        src = self._fits(_inclusive_box(*blits.store_src))
        dst = self._fits(_inclusive_box(*blits.store_dst))
        if src is not None and dst is not None:
            kept = _intersect(dst, _rect_box(ra))  # the A2D scissor: the render area
            for fbimg, g in zip(fbimgs, gmem, strict=True):
                cmd_blit(ctx, cb, g, src, self.staging, dst)
                if kept is not None:
                    cmd_copy(ctx, cb, self.staging, fbimg, _box_rect(kept))
            self.stats["stores"] += 1

    def before_pass(self, cb: Handle, tile: TilePlan, v: int) -> None:
        """After the load, before the render pass begins (the base class does nothing)."""

    def after_store(self, cb: Handle, tile: TilePlan, v: int) -> None:
        """After a tile's store of view ``v`` (the base class does nothing)."""

    def draw_state(self, tile: TilePlan, v: int) -> tuple[tuple[float, float, float, float], Rect4] | None:
        """The patched viewport ``(x, y, w, h)`` with ``o'`` and the scissor (the screen scissor ∩
        the viewport scissor ∩ the window scissor, each where the hardware applies it), or None
        when nothing can be drawn (counted)."""
        slot = _slot(self.plan, v)
        patch = tile.slots[slot]
        hw = _hw_offset(tile, slot)
        x, y, w, h = patch.viewport
        x, y = x + hw[0], y + hw[1]
        ws_off = hw if tile.bin_scale_en else (0, 0)
        scissor = _intersect(_shift_opt(_inclusive_box(*patch.scissor), hw),
                             _shift_opt(_inclusive_box(*patch.viewport_scissor), hw),
                             _shift_opt(_inclusive_box(*tile.window_scissor), ws_off),
                             (0, 0, self.size[0], self.size[1]))
        if scissor is None:
            self.stats["empty_scissors"] += 1
            return None
        lo, hi = self.bounds
        ys = sorted((y, y + h))
        if not (0 < w <= self.max_viewport[0] and 0 < abs(h) <= self.max_viewport[1]
                and lo <= x and x + w <= hi and lo <= ys[0] and ys[1] <= hi):
            self.stats["bad_viewports"] += 1
            return None
        return (x, y, w, h), _box_rect(scissor)

    def draw(self, cb: Handle, tile: TilePlan, v: int) -> None:
        ctx = self.ctx
        state = self.draw_state(tile, v)
        if state is None:
            return
        (x, y, w, h), scissor = state
        fs = tile.fs_params[v]
        uv = self.sc.viewports[_user_index(self.sc, v)]
        self.pipe.bind(cb)
        cmd_set_viewport(ctx, cb, x, y, w, h)
        cmd_set_scissor(ctx, cb, scissor)
        cmd_push_constants(ctx, cb, self.pipe, [fs.frag_size[0], fs.frag_size[1], fs.frag_offset[0],
                                                fs.frag_offset[1], uv.x, uv.y, uv.w, uv.h, *self.push_tail()])
        self.draw_geometry(cb, tile, v)

    def draw_geometry(self, cb: Handle, tile: TilePlan, v: int) -> None:
        """The draw calls, with the pipeline, viewport, scissor and FS parameters set."""
        cmd_draw_fullscreen(self.ctx, cb)
        self.stats["draws"] += 1


def fits(b: Box | None, size: Pair, stats: dict[str, Any]) -> Box | None:
    """``b`` when it lies inside an image of ``size``, else None (counted as a skipped rect)."""
    if b is None:
        return None
    if not _inside(b, size):
        stats["skipped_rects"] += 1
        return None
    return b


def image_names(view: int) -> list[str]:
    """The names of a view's read-back images, one per attachment of :data:`ATTACHMENTS`."""
    return [f"view{view}{suffix}" for _, suffix in ATTACHMENTS]


def run_replay(ctx: Vulkan, scene: Scene) -> CaseOutput:
    """Replay the scene's pass on ``ctx``; images :func:`image_names` (``(H, W, 4)`` uint16)."""
    sc, plan = plan_scene(scene)
    require_graphics(ctx, FMT)
    w, h = sc.framebuffer
    with ctx.scope():
        r = Replayer(ctx, sc, plan, scene.get("load_op", "clear"), scene.get("store", "a2d"),
                     clear_rects=clear_rects(scene))
        ctx.run(r.record)
        images = {name: read_image(ctx, img)[:h, :w].copy()
                  for v, imgs in enumerate(r.views) for name, img in zip(image_names(v), imgs, strict=True)}
    info: dict[str, Any] = {"device": ctx.info.describe(), "scratch": list(r.size), **r.stats}
    return CaseOutput(images=images, info=info)


# ---- the oracle -----------------------------------------------------------------------------
def _centres(start: int, end: int, origin: int, fa: int) -> list[Fraction]:
    """The centre of the fragment of size ``fa`` aligned to ``origin`` that covers each pixel
    ``p`` in ``[start, end)``: ``origin + fa·floor((p − origin)/fa) + fa/2``."""
    return [Fraction(origin + fa * ((p - origin) // fa)) + Fraction(fa, 2) for p in range(start, end)]


def _in_span(c: Fraction, lo: Fraction, hi: Fraction) -> bool:
    """A sample on the low edge is inside, on the high edge outside (``[lo, hi)``)."""
    return lo <= c < hi


def _density_positive(sc: fdm.Scenario, view: int) -> bool:
    layers = sc.density.layers
    layer = layers[view] if len(layers) > 1 else layers[0]
    values: npt.NDArray[Any] = np.asarray(layer)
    return bool(np.all(values > 0))


def oracle_view(sc: fdm.Scenario, plan: RenderPassPlan, view: int, load_op: str, *,
                clear_rects: Sequence[Rect4] = ()) -> tuple[npt.NDArray[np.uint16], list[str]]:
    """The framebuffer of ``view`` the spec's large-fragment semantics give for the plan's bins
    and fragment areas, and the problems of the bins themselves (overlaps; holes where the
    density map has no zero).  ``clear_rects`` (``vkCmdClearAttachments`` after the draw,
    clears.adoc: each rect is rasterized like a primitive): a fragment is cleared, all its pixels,
    iff its sample (the centre) lies in the rect, ``[x, x + w)`` per axis."""
    w, h = sc.framebuffer
    want = np.empty((h, w, 4), dtype=np.uint16)
    want[...] = BG
    cover = np.zeros((h, w), dtype=np.int32)
    ra = _render_area(sc, view)
    u = _user_index(sc, view)
    vp, sci = sc.viewports[u], sc.scissors[u]
    vx0, vx1 = Fraction(vp.x), Fraction(vp.x) + Fraction(vp.w)
    vy0, vy1 = sorted((Fraction(vp.y), Fraction(vp.y) + Fraction(vp.h)))
    sx0, sx1 = Fraction(sci.x), Fraction(sci.x + sci.w)
    sy0, sy1 = Fraction(sci.y), Fraction(sci.y + sci.h)
    undrawn = np.array(CLEAR if load_op == "clear" else BG, dtype=np.uint16)
    for tile in plan.tiles:
        tv = tile.views[view]
        bx, by, bw, bh = tv.bin
        if not tv.visible or bw <= 0 or bh <= 0:
            continue
        fw, fh = tv.frag_area
        x0, x1 = max(bx, ra[0], 0), min(bx + bw, ra[0] + ra[2], w)
        y0, y1 = max(by, ra[1], 0), min(by + bh, ra[1] + ra[3], h)
        if x0 >= x1 or y0 >= y1:
            continue
        cx = _centres(x0, x1, bx, fw)
        cy = _centres(y0, y1, by, fh)
        drawn_x = np.array([_in_span(c, vx0, vx1) and _in_span(c, sx0, sx1) for c in cx])
        drawn_y = np.array([_in_span(c, vy0, vy1) and _in_span(c, sy0, sy1) for c in cy])
        val = np.empty((y1 - y0, x1 - x0, 4), dtype=np.uint16)
        val[..., 0] = np.array([int(2 * c) for c in cx], dtype=np.uint16)[None, :]
        val[..., 1] = np.array([int(2 * c) for c in cy], dtype=np.uint16)[:, None]
        val[..., 2] = fw
        val[..., 3] = fh
        drawn = drawn_y[:, None] & drawn_x[None, :]
        want[y0:y1, x0:x1] = np.where(drawn[..., None], val, undrawn)
        for rx, ry, rw, rh in clear_rects:
            in_x = np.array([_in_span(c, Fraction(rx), Fraction(rx + rw)) for c in cx])
            in_y = np.array([_in_span(c, Fraction(ry), Fraction(ry + rh)) for c in cy])
            hit = in_y[:, None] & in_x[None, :]
            want[y0:y1, x0:x1][hit] = CLEAR_RECT
        cover[y0:y1, x0:x1] += 1
    problems = []
    over = int(np.count_nonzero(cover > 1))
    if over:
        problems.append(f"view{view}: {over} pixel(s) lie in more than one rendered bin")
    if _density_positive(sc, view):
        hole = cover[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] == 0
        holes = int(np.count_nonzero(hole))
        if holes:
            ys, xs = np.nonzero(hole)
            problems.append(f"view{view}: {holes} render-area pixel(s) lie in no rendered bin although the density "
                            f"map has no 0 (first at x={int(xs[0]) + ra[0]}, y={int(ys[0]) + ra[1]})")
    return want, problems


def judge_replay(scene: Scene, out: CaseOutput) -> Verdict:
    """Compare every view's framebuffer with :func:`oracle_view`, exactly."""
    sc, plan = plan_scene(scene)
    load_op = scene.get("load_op", "clear")
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    pixels = 0
    for v in range(sc.fdm_layers):
        want, probs = oracle_view(sc, plan, v, load_op, clear_rects=clear_rects(scene))
        problems += probs
        pixels += want.shape[0] * want.shape[1]
        for name in image_names(v):
            got = out.images.get(name)
            if got is None:
                problems.append(f"{name}: no image read back")
                continue
            mm = first_mismatches(name, np.asarray(got), want)
            if mm:
                if got.shape == want.shape:
                    n = int(np.count_nonzero(np.any(np.asarray(got, dtype=np.int64) != want, axis=2)))
                    problems.append(f"{name}: {n} of {want.shape[0] * want.shape[1]} pixels differ from the oracle")
                else:
                    problems.append(f"{name}: shape {list(got.shape)}, want {list(want.shape)}")
                mismatches += mm[:4]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems), mismatches=tuple(mismatches))
    return Verdict(status="Pass", message=f"{pixels} pixels in {sc.fdm_layers} view(s) of {len(plan.tiles)} "
                                          f"tile(s) equal the large-fragment oracle")


# ---- the cases --------------------------------------------------------------------------------
def _constant(density: float | Sequence[float], views: int = 1, fmt: str = "R32G32_SFLOAT",
              size: Pair = (8, 8)) -> dict[str, Any]:
    d: Any = list(density) if isinstance(density, Sequence) else density
    return {"format": fmt, "views": [{"generator": "constant", "size": list(size), "density": d}] * views}


def _radial(size: Pair, center: Sequence[float], radii: Sequence[float], densities: Sequence[float]
            ) -> dict[str, Any]:
    return {"generator": "radial", "size": list(size), "center": list(center), "radii": list(radii),
            "densities": list(densities)}


#: the modules of the other replay groups, each with ``cases()`` (imported when the cases are listed)
SCENE_MODULES: tuple[str, ...] = ("replay_subsampled", "replay_depth", "replay_msaa")

#: per GPU: a framebuffer of 4×4 tiles (3×4 on a750) and the tile size
_GPUS: dict[str, tuple[Pair, Pair]] = {"a650": ((288, 128), (96, 32)), "a730": ((256, 128), (64, 32)),
                                       "a750": ((288, 128), (96, 32))}
#: the profiles every group runs on: a6xx (no HW bin scaling, LRZ rule not emitted), a7xx gen1 (no
#: HW bin scaling), a7xx gen3 (HW bin scaling: o')
GPUS: tuple[str, ...] = ("a650", "a730", "a750")


def _hw(gpu: str) -> str:
    return "HW bin scaling: viewports and scissors carry o'" if gpu == "a750" else "no HW bin scaling"


def _base(gpu: str, **fields: Any) -> dict[str, Any]:
    fb, tile = _GPUS[gpu]
    sc: dict[str, Any] = {"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile), "bin_merging": "off"}
    sc.update(fields)
    return sc


def _case(name: str, description: str, scene: dict[str, Any]) -> Case:
    return Case(name=name, backend="replay", description=description, scene=scene, run=run_replay,
                judge=judge_replay)


def replay_cases() -> list[Case]:
    """The replay group: every case is small (a few hundred pixels a side) so that the group
    runs in seconds on lavapipe with the validation layer."""
    cases: list[Case] = []
    for gpu in GPUS:
        hw = _hw(gpu)
        for area, d in (("1x1", 1.0), ("2x2", 0.5), ("4x4", 0.25)):
            cases.append(_case(f"replay.uniform_area.{area}.{gpu}",
                               f"uniform fragment area {area} on every bin, merging off ({hw})",
                               replay_scene(_base(gpu, density=_constant(d)))))
    cases.append(_case("replay.uniform_area.unorm8_half.a750",
                       "R8G8_UNORM density 0.5 (stored 128): fragment area (1,2) on every bin (finding e)",
                       replay_scene(_base("a750", density=_constant(0.5, fmt="R8G8_UNORM")))))
    for gpu in GPUS:
        fb, tile = (384, 256), _GPUS[gpu][1]
        fov = {"format": "R32G32_SFLOAT",
               "views": [_radial((12, 8), (176, 120), (48, 96), (1.0, 0.5, 0.25))]}
        cases.append(_case(f"replay.foveated.radial.{gpu}",
                           "a radial (foveated) map: areas 1x1 in the centre, 2x2 and 4x4 outside, across "
                           "many bins",
                           replay_scene({"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile),
                                         "bin_merging": "off", "density": fov})))
    for gpu, variant, off in (("a750", "both_axes", (8, -16)), ("a730", "both_axes", (8, -16)),
                              ("a650", "both_axes", (8, -16)), ("a750", "wrap", (104, -40))):
        fov = {"format": "R32G32_SFLOAT", "views": [_radial((12, 8), (150, 70), (40, 80), (1.0, 0.5, 0.25))]}
        cases.append(_case(f"replay.fdm_offset.{variant}.{gpu}",
                           f"FDM offset {list(off)}: bins shifted by b_o, the extra row and column, the first "
                           "row and column shrunk" + (" (|u| larger than a tile: b_o wraps)" if variant == "wrap"
                                                       else ""),
                           replay_scene(_base(gpu, framebuffer=[256, 192] if gpu == "a730" else [288, 192],
                                              fdm_offset_create_flag=True, fdm_offsets=[list(off)],
                                              density=fov))))
    mv = {"format": "R32G32_SFLOAT",
          "views": [_radial((12, 8), (100, 64), (40, 80), (1.0, 0.5, 0.25)),
                    _radial((12, 8), (190, 64), (40, 80), (1.0, 0.5, 0.25))]}
    cases.append(_case("replay.multiview_offset.per_view.a750",
                       "2 views with their own FDM offsets (per-view bins, per-view viewports and o')",
                       replay_scene(_base("a750", framebuffer=[288, 192], views=2, fdm_offset_create_flag=True,
                                          fdm_offsets=[[40, -24], [-16, 16]], density=mv))))
    cases.append(_case("replay.merged_bins.upstream_4x4.a730",
                       "upstream bin merging with a uniform 4x4 map: 2x2 groups rendered as one bin",
                       replay_scene(_base("a730", bin_merging="upstream", density=_constant(0.25)))))
    for gpu in GPUS:
        fb = _GPUS[gpu][0]
        # edges where rounding outward and the fragment-centre rule agree for fa 4:
        # left/top edges 1 or 2 past a fragment start, right/bottom edges 3 past one
        cases.append(_case(f"replay.scissor.unaligned.{gpu}",
                           "a user scissor not aligned to the 4x4 fragments (edges where the outward rounding "
                           "and the spec's centre sample agree)",
                           replay_scene(_base(gpu, density=_constant(0.25),
                                              scissors=[[13, 6, fb[0] - 13 - 21, 97]]))))
    for gpu in GPUS:
        fb = (384, 256)
        fov = {"format": "R32G32_SFLOAT", "views": [_radial((12, 8), (176, 120), (48, 96), (1.0, 0.5, 0.25))]}
        # quarter-pixel edges: no fragment centre lies on one (no tie for the rasterisation rule)
        cases.append(_case(f"replay.viewport.unaligned.{gpu}",
                           "a user viewport smaller than the framebuffer with edges between fragment centres, "
                           "over a radial map: coverage by the centre sample and the geometry measure",
                           replay_scene({"gpu": gpu, "framebuffer": list(fb), "tile_size": list(_GPUS[gpu][1]),
                                         "bin_merging": "off", "density": fov,
                                         "viewports": [[37.25, 21.75, 290.5, 201.5]]})))
    cases.append(_case("replay.viewport.flipped.a750",
                       "a negative-height (y-flipped) viewport over the whole framebuffer, fragment area 2x2",
                       replay_scene(_base("a750", density=_constant(0.5), viewports=[[0, 128, 288, -128]]))))
    cases.append(_case("replay.render_area.partial.a750",
                       "a render area smaller than the framebuffer: bins outside it are skipped, stores are "
                       "clipped to it, the clear covers it",
                       replay_scene(_base("a750", density=_constant(0.5), render_areas=[[40, 20, 200, 84]],
                                          scissors=[[40, 20, 200, 84]]))))
    cases.append(_case("replay.load_op.load.a750",
                       "LOAD_OP_LOAD: the scaled GMEM load (through viewport 0, with o'), then the draw and store",
                       replay_scene(_base("a750", density=_constant(0.5)), load_op="load")))
    inv = {"format": "R32G32_SFLOAT", "views": [_radial((8, 4), (64, 32), (60, 100), (1.0, 0.5, 0.0))]}
    cases.append(_case("replay.invisible.density0.a730",
                       "density 0 far from the centre: those bins are not rendered and keep the background",
                       replay_scene(_base("a730", density=inv))))
    cases += baseline_cases() + clear_cases()
    for module in SCENE_MODULES:
        cases += importlib.import_module(f"{__package__}.{module}").cases()
    return cases


def baseline_cases() -> list[Case]:
    """D9: an all-1.0 map (single view and 2-view multiview) is the identity: 1x1 fragments,
    ``o = 0``, a plain render.  The oracle's values are distinct per pixel, so equality means
    every pixel shaded exactly once at its own centre."""
    cases = []
    for gpu in GPUS:
        for views in (1, 2):
            name = "single_view" if views == 1 else "multiview_2"
            cases.append(_case(f"replay.baseline.{name}.{gpu}",
                               f"D9: an all-1.0 density map, {views} view(s): identity (fa 1x1, o = 0), a plain "
                               f"render ({_hw(gpu)})",
                               replay_scene(_base(gpu, views=views, density=_constant(1.0, views=views)))))
    return cases


#: vkCmdClearAttachments rectangles whose edges the outward rounding of
#: ``fdm_apply_gmem_clear_coords`` and the spec's fragment-centre rule treat alike: for fa 2, odd
#: starts and even ends; for fa 4, starts 1 or 2 past a fragment start and ends 3 past one
_AGREEING_CLEARS: dict[str, list[list[int]]] = {
    "2x2": [[3, 5, 35, 37], [41, 1, 21, 23]],        # (3,5)-(38,42), (41,1)-(62,24)
    "4x4": [[5, 6, 34, 37], [42, 1, 25, 30]],        # (5,6)-(39,43), (42,1)-(67,31)
}


def clear_cases() -> list[Case]:
    """B13's twin: ``vkCmdClearAttachments`` of unaligned rectangles inside 2x2 and 4x4 passes
    through the model's clear path (:func:`fdm.clears.gmem_clear_coords`), judged by the spec
    oracle (clears.adoc: whole fragments, each cleared iff its centre lies in the rect)."""
    cases = []
    for gpu in GPUS:
        for area, d in (("2x2", 0.5), ("4x4", 0.25)):
            rects = _AGREEING_CLEARS[area]
            cases.append(_case(f"replay.clears.unaligned_{area}.{gpu}",
                               f"vkCmdClearAttachments of {rects} (unaligned, edges where the outward rounding and "
                               f"the fragment-centre rule agree) in a {area} pass after the draw ({_hw(gpu)})",
                               replay_scene(_base(gpu, density=_constant(d)), clear_rects=rects)))
    fov = {"format": "R32G32_SFLOAT", "views": [_radial((12, 8), (150, 70), (40, 80), (1.0, 0.5, 0.25))]}
    cases.append(_case("replay.clears.foveated_offset.a750",
                       "vkCmdClearAttachments of a rect on even framebuffer coordinates over a radial map with an "
                       "FDM offset (fa 1, 2 and 4; shifted bins; o' not applied to the resolve engine)",
                       replay_scene(_base("a750", framebuffer=[288, 192], fdm_offset_create_flag=True,
                                          fdm_offsets=[[8, -16]], density=fov),
                                    clear_rects=[[40, 24, 200, 128]])))
    return cases


def finding_cases() -> list[Case]:
    """Cases where the model's turnip and the spec's oracle disagree (docs/replay.md,
    "Disagreements"): they FAIL by design and the test checks the pixels they fail on."""
    return [_case("replay.scissor.outward_rounding.a750",
                  "a user scissor whose edges cut 4x4 fragments behind their centre: turnip rounds the scissor "
                  "outward and keeps fragments whose sample lies outside it",
                  replay_scene(_base("a750", density=_constant(0.25), scissors=[[3, 0, 96, 128]]))),
            _case("replay.fast_store.scaled.a730",
                  "the stores as planned: on a730 (no HW bin scaling, no offsets) the fast-store predicate is "
                  "set on scaled bins and the resolve engine copies the 2x2-scaled GMEM bin 1:1 (finding c)",
                  replay_scene(_base("a730", density=_constant(0.5)), store="planned")),
            _case("replay.clears.outward_rounding.a730",
                  "vkCmdClearAttachments of (3,5)-(37,41) in a 2x2 pass: fdm_apply_gmem_clear_coords "
                  "rounds the rect outward and clears fragments whose centre lies outside it",
                  replay_scene(_base("a730", density=_constant(0.5)), clear_rects=[[3, 5, 34, 36]])),
            _case("replay.clears.outward_rounding_4x4.a730",
                  "vkCmdClearAttachments of (3,5)-(37,41) in a 4x4 pass: the fragments over x 0..3, y 4..7 "
                  "(centres (2, 6)) and the last column and row are cleared although their centres lie outside",
                  replay_scene(_base("a730", density=_constant(0.25)), clear_rects=[[3, 5, 34, 36]]))]


def run_case(ctx: Vulkan | None, case: Case) -> tuple[CaseOutput, Verdict]:
    """Run and judge one case."""
    out = case.run(ctx, case.scene)
    return out, case.judge(case.scene, out)

