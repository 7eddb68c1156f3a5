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
the replay adds ``TilePlan.foveat.hw_offsets[slot]`` to them, as the hardware would.

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

from collections.abc import Callable, Sequence
from typing import Any

import fdm
from fdm.clears import gmem_clear_coords
from fdm.plan import RenderPassPlan, TilePlan
from turnip_base.harness import Handle, Vulkan

from ..graphics.passes import (
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
    framebuffer,
    render_pass,
)
from ..graphics.shaders import load_spv
from ..graphics.targets import (
    color_image,
    read_image,
    require_graphics,
)
from ..suite.cases import CaseOutput, Scene
from .scene import (
    ATTACHMENTS,
    BG,
    CLEAR,
    CLEAR_RECT,
    FMT,
    GARBAGE,
    clear_rects,
    image_names,
    plan_scene,
    user_index,
    view_render_area,
)

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive ends)


# ---- run ----------------------------------------------------------------------------------
def inclusive_box(tl: Pair, br: Pair) -> Box | None:
    """Inclusive corners -> exclusive box; None when empty."""
    if br[0] < tl[0] or br[1] < tl[1]:
        return None
    return (tl[0], tl[1], br[0] + 1, br[1] + 1)


def rect_box(r: Rect4) -> Box | None:
    x, y, w, h = r
    return (x, y, x + w, y + h) if w > 0 and h > 0 else None


def _shift(b: Box, d: Pair) -> Box:
    return (b[0] + d[0], b[1] + d[1], b[2] + d[0], b[3] + d[1])


def _shift_opt(b: Box | None, d: Pair) -> Box | None:
    return None if b is None else _shift(b, d)


def intersect(*boxes: Box | None) -> Box | None:
    if any(b is None for b in boxes):
        return None
    bs = [b for b in boxes if b is not None]
    x0, y0 = max(b[0] for b in bs), max(b[1] for b in bs)
    x1, y1 = min(b[2] for b in bs), min(b[3] for b in bs)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def _inside(b: Box, size: Pair) -> bool:
    return 0 <= b[0] < b[2] <= size[0] and 0 <= b[1] < b[3] <= size[1]


def box_rect(b: Box) -> Rect4:
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
    return tile.foveat.hw_offsets[slot] if tile.foveat.binscaleen else (0, 0)


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
            src = self._fits(rect_box(blits.load_src))
            dst = self._fits(rect_box(blits.load_dst))
            if src is not None and dst is not None:
                for fbimg, g in zip(fbimgs, gmem, strict=True):
                    cmd_blit(ctx, cb, fbimg, src, g, _shift(dst, _hw_offset(tile, 0)))
                self.stats["loads"] += 1

    def gmem_clear(self, cb: Handle, tile: TilePlan, v: int, rect: Rect4, value: Sequence[float]) -> bool:
        """A GMEM clear of the framebuffer rectangle ``rect`` through ``fdm_apply_gmem_clear_coords``
        (the resolve engine is not behind the FOVEAT offset: no o'), inside the render pass."""
        tl, br = gmem_clear_coords(tile, v, rect)
        box = intersect(inclusive_box(tl, br), (0, 0, self.size[0], self.size[1]))
        if box is None:
            return False
        for i, g in enumerate(self.gmem):
            cmd_clear_rect(self.ctx, cb, g, box_rect(box), value, attachment=i)
        return True

    def tile_view(self, cb: Handle, tile: TilePlan, v: int) -> None:
        ctx, gmem = self.ctx, self.gmem
        self.stats["views_rendered"] += 1
        ra = view_render_area(self.sc, v)
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
            kept = self._fits(intersect(rect_box(tile.views[v].bin), rect_box(ra)))
            if kept is not None:
                for fbimg, g in zip(fbimgs, gmem, strict=True):
                    cmd_copy(ctx, cb, g, fbimg, box_rect(kept))
            self.stats["fast_stores"] += 1
            return
        src = self._fits(inclusive_box(*blits.store_src))
        dst = self._fits(inclusive_box(*blits.store_dst))
        if src is not None and dst is not None:
            kept = intersect(dst, rect_box(ra))  # the A2D scissor: the render area
            for fbimg, g in zip(fbimgs, gmem, strict=True):
                cmd_blit(ctx, cb, g, src, self.staging, dst)
                if kept is not None:
                    cmd_copy(ctx, cb, self.staging, fbimg, box_rect(kept))
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
        scissor = intersect(_shift_opt(inclusive_box(*patch.scissor), hw),
                             _shift_opt(inclusive_box(*patch.viewport_scissor), hw),
                             _shift_opt(inclusive_box(*tile.window_scissor), ws_off),
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
        return (x, y, w, h), box_rect(scissor)

    def draw(self, cb: Handle, tile: TilePlan, v: int) -> None:
        ctx = self.ctx
        state = self.draw_state(tile, v)
        if state is None:
            return
        (x, y, w, h), scissor = state
        fs = tile.fs_params[v]
        uv = self.sc.viewports[user_index(self.sc, v)]
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


def run_replay(ctx: Vulkan, scene: Scene,
               planner: Callable[[Scene], tuple[fdm.Scenario, RenderPassPlan]] = plan_scene) -> CaseOutput:
    """Replay the scene's pass, as ``planner`` plans it, on ``ctx``; images :func:`image_names`
    (``(H, W, 4)`` uint16)."""
    sc, plan = planner(scene)
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
