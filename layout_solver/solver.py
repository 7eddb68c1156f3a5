"""Where each rendered tile is stored in a subsampled image.

Models ``get_default_tile_pos``, ``aprons_intersect``, ``make_non_subsampled`` and
``tu_calc_subsampled`` (src/freedreno/vulkan/tu_tile_config.cc) plus the image slop of
``tu_image_init`` (src/freedreno/vulkan/tu_image.cc).  Spec: docs/spec/turnip-fdm-spec.md §7.1-7.5.

Rectangles are :class:`fdm.geometry.Rect` in subsampled-image pixels.  Tiles are identified by
their *root cell* (the bottom-right cell of a merged group, ``TileConfig.cell`` of a root).
"""

from __future__ import annotations

from collections import deque
from typing import Literal

import attrs

from fdm.cmath import div_round_up
from fdm.geometry import Rect
from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.tile_select import use_fast_store
from fdm.tiles import TileConfig
from fdm.turnip import tu_bin_offset
from turnip_base.errors import ScenarioError

from .options import OffsetsUnderSharedViewport, as_offsets_mode

Pair = tuple[int, int]

#: tu_subsampled_image.h: pixels of neighbour content copied around a tile edge
APRON_SIZE = 2
#: tu_subsampled_image.h: more bins than this and the solver does not run
TU_SUBSAMPLED_MAX_BINS = 512


# --------------------------------------------------------------------------------------------
# get_default_tile_pos

def default_axis(p: int, e: int, f: int, size: int, t: int, align: int,
                 bin_offset: int | None) -> tuple[int, int, bool]:
    """One axis of ``get_default_tile_pos`` (tu_tile_config.cc): ``(start, end, stick)``.

    ``p``/``e``: tile position and extent in cells; ``f``: frag area on this axis; ``size``: the
    framebuffer size; ``t``: the tile size; ``align``: the device ``tile_align``;
    ``bin_offset``: ``b_o`` on this axis, or None when the solver got NULL offsets.

    * ``fb_start = max(p*t - b_o, 0)``, ``fb_end = (p + e)*t - b_o``;
    * stick (``fb_end >= size``): right/bottom-aligned to ``size + fo`` (``fo = align`` with
      offsets, else 0), width ``DIV_ROUND_UP(size - fb_start, f)``;
    * first column/row: ``[0, fb_end / f)``;
    * interior: starts at ``p*t - b_o'`` with ``b_o'`` = ``b_o`` aligned down to ``align``,
      width ``e*t / f``.
    """
    b_o = bin_offset if bin_offset is not None else 0
    b_o_aligned = (b_o // align) * align
    fb_start = max(p * t - b_o, 0)
    fb_end = (p + e) * t - b_o
    stick = fb_end >= size
    fo = align if bin_offset is not None else 0
    if stick:
        if fb_start >= size:
            # the driver places only visible tiles, which start inside the framebuffer
            raise ScenarioError("pos", f"tile at {p} starts at {fb_start} >= framebuffer size {size}: "
                                       "DIV_ROUND_UP(W - fb_start) underflows (only visible tiles are placed)")
        end = size + fo
        start = end - div_round_up(size - fb_start, f)
    elif p == 0:
        start = 0
        end = fb_end // f
    else:
        start = p * t - b_o_aligned
        end = start + (e * t) // f
    return start, end, stick


def get_default_tile_pos(pos: Pair, extent: Pair, frag_area: Pair, fb_size: Pair, tile_size: Pair,
                         tile_align: Pair, bin_offset: Pair | None) -> tuple[Rect, bool]:
    """``get_default_tile_pos`` (src/freedreno/vulkan/tu_tile_config.cc): the default rectangle of
    a (root) tile for one view in subsampled space, and whether the tile sticks to the right or
    bottom framebuffer edge (the driver ORs that into ``tile->subsampled_border`` as a side
    effect of every call).  ``frag_area = (1, 1)`` gives the *unsubsampled rectangle* ``U``."""
    x0, x1, sx = default_axis(pos[0], extent[0], frag_area[0], fb_size[0], tile_size[0], tile_align[0],
                              None if bin_offset is None else bin_offset[0])
    y0, y1, sy = default_axis(pos[1], extent[1], frag_area[1], fb_size[1], tile_size[1], tile_align[1],
                              None if bin_offset is None else bin_offset[1])
    return Rect(x0, y0, x1 - x0, y1 - y0), sx or sy


def aprons_intersect(a: Rect, b: Rect) -> bool:
    """``aprons_intersect`` (src/freedreno/vulkan/tu_tile_config.cc) on the two tiles'
    ``subsampled_pos[v]``: False iff they are at least ``2 * APRON_SIZE`` apart along x or y
    (touching tiles and tiles sharing a corner conflict)."""
    gap = 2 * APRON_SIZE
    if a.x + a.w + gap <= b.x or b.x + b.w + gap <= a.x:
        return False
    if a.y + a.h + gap <= b.y or b.y + b.h + gap <= a.y:
        return False
    return True


# --------------------------------------------------------------------------------------------
# results

@attrs.frozen(kw_only=True)
class SubsampledTile:
    """The subsampled fields of one root ``tu_tile_config`` after ``tu_calc_subsampled``."""

    cell: Pair                          # root cell (key)
    pos: Pair                           # top-left cell
    extent: Pair                        # E
    visible_views: int
    frag_areas: tuple[Pair, ...]
    subsampled_pos: tuple[Rect | None, ...]  # per view; None for views not visible in the tile
    subsampled_views: int
    subsampled_border: bool
    subsampled: bool
    fast_store: bool                    # the a7xx per-tile store predicate with these fields

    def visible(self, view: int) -> bool:
        return bool(self.visible_views >> view & 1)

    def is_subsampled(self, view: int) -> bool:
        return bool(self.subsampled_views >> view & 1)

    def effective_frag_area(self, view: int) -> Pair:
        """``get_effective_frag_area`` (tu_subsampled_image.cc): ``fa`` for a subsampled view,
        ``(1, 1)`` otherwise."""
        return self.frag_areas[view] if self.is_subsampled(view) else (1, 1)

    def stored_pos(self, view: int) -> Rect:
        """``subsampled_pos[view]``, which exists for the visible views of a tile of a solved
        layout; :class:`~turnip_base.errors.ScenarioError` for any other view."""
        r = self.subsampled_pos[view]
        if r is None:
            raise ScenarioError("view", f"tile {self.cell} has no subsampled position in view {view} "
                                        "(not visible there, or the solver did not run)")
        return r


SolverEventKind = Literal["shift", "unsubsample"]


@attrs.frozen
class SolverEvent:
    """One step of the solver: ``kind`` is ``"shift"`` or ``"unsubsample"``; ``axis`` 0 (x, a
    vertical edge) or 1 (y, a horizontal edge); ``rect`` the tile's new rectangle."""

    kind: SolverEventKind
    cell: Pair
    view: int
    axis: int
    rect: Rect
    neighbour: Pair


@attrs.frozen(eq=False, kw_only=True)
class SubsampledLayout:
    """What ``tu_calc_subsampled`` leaves in the tile configs, plus image facts."""

    plan: RenderPassPlan
    solved: bool                              # False: > TU_SUBSAMPLED_MAX_BINS, nothing subsampled
    fb_size: Pair
    tile_size: Pair
    tile_count: Pair
    tile_align: Pair                          # device tile_align_w/h
    bin_offsets: tuple[Pair, ...] | None   # b_o per view as the solver used them; None = NULL
    width0: int
    height0: int
    tiles: tuple[SubsampledTile, ...]         # roots with a visible view, raster order of root cells
    log: tuple[SolverEvent, ...]
    #: root cell -> tile, built from ``tiles`` for every instance (``attrs.evolve`` included)
    _by_cell: dict[Pair, SubsampledTile] = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_by_cell", {t.cell: t for t in self.tiles})

    def tile(self, x: int, y: int) -> SubsampledTile | None:
        """The entry of the root that covers cell ``(x, y)`` (None when it has no visible view)."""
        return self._by_cell.get(self.plan.grid.root(x, y).cell)

    def bin_offset(self, view: int) -> Pair:
        return self.bin_offsets[view] if self.bin_offsets is not None else (0, 0)

    def emit_bin_offset(self, view: int, offsets_under_shared_viewport: OffsetsUnderSharedViewport | None = None
                        ) -> Pair:
        """``b_o`` as ``tu_emit_subsampled`` hands it to the metadata and apron code.

        ``offsets_under_shared_viewport`` None follows the scenario's
        ``driver.tu_emit_subsampled``: upstream hands the solver's offsets (NULL under a shared
        viewport), as Mesa 26.2.6 does in the box (``tu_emit_subsampled`` /
        ``tu_emit_subsampled_metadata``, tu_cmd_buffer.cc / tu_subsampled_image.cc: the metadata
        header offset it writes is 0; Mesa 26.1.6 hands the real offsets to the solver too, which is
        ``driver.tu_calc_tile_config = "sailfish-9429b474"``), and so does
        ``tencentmalos-16ad8431``; ``pop-os-4ff7b570`` is that commit as read (26.2.0-rc3:
        ``tu_cmd_render_tiles`` nulls the offsets only without FDM, so the real ones reach the
        metadata and aprons where the solver ran with NULL; docs/findings.md, finding n).
        ``"real"`` / ``"null"`` select those offsets explicitly."""
        if offsets_under_shared_viewport is None:
            if self.plan.scenario.driver.tu_emit_subsampled == "pop-os-4ff7b570":
                offsets_under_shared_viewport = "real"
            else:
                return self.bin_offset(view)
        bo = solver_bin_offsets(self.plan, offsets_under_shared_viewport)
        return bo[view] if bo is not None else (0, 0)


def fb_bin_start(tile: SubsampledTile, tile_size: Pair, b_o: Pair) -> Pair:
    """The framebuffer-space start ``b_s`` of a stored tile: ``max(pos*T - b_o, 0)`` per axis
    (the first row/column is partial with an FDM offset)."""
    return (max(tile.pos[0] * tile_size[0] - b_o[0], 0), max(tile.pos[1] * tile_size[1] - b_o[1], 0))


def image_size0(plan: RenderPassPlan | SysmemPlan) -> Pair:
    """``width0 x height0`` of an image exactly covered by the framebuffer (``tu_image_init``):
    with both SUBSAMPLED and FDM_OFFSET create bits the layout gets ``tile_align`` of slop."""
    sc = plan.scenario
    w, h = sc.framebuffer
    if sc.fdm_offset_create_flag:
        return w + sc.gpu.tile_align_w, h + sc.gpu.tile_align_h
    return w, h


def tile_config_offsets_mode(plan: RenderPassPlan) -> OffsetsUnderSharedViewport:
    """The offsets ``tu_calc_tile_config`` hands the solver under a shared viewport, per the
    scenario's ``driver.tu_calc_tile_config``: NULL upstream, the real ones in sailfish @ 9429b474."""
    return "real" if plan.scenario.driver.tu_calc_tile_config == "sailfish-9429b474" else "null"


def solver_bin_offsets(plan: RenderPassPlan, offsets_under_shared_viewport: OffsetsUnderSharedViewport = "null"
                       ) -> tuple[Pair, ...] | None:
    """The offsets ``tu_calc_tile_config`` hands ``tu_calc_subsampled``: NULL without offsets,
    and NULL under a shared viewport (pop-os @ aee40d4a, tencentmalos); ``"real"`` models the
    older sailfish @ 9429b474, which passes the real offsets even then.  Returns ``b_o`` per view."""
    mode = as_offsets_mode(offsets_under_shared_viewport)
    if plan.fdm_offsets is None:
        return None
    if plan.shared_viewport and mode == "null":
        return None
    T = plan.tiling.tile_size
    return tuple(tu_bin_offset(u, T) for u in plan.fdm_offsets)


# --------------------------------------------------------------------------------------------
# tu_calc_subsampled

@attrs.define
class _Work:
    """Mutable per-root state while solving (the driver mutates ``tu_tile_config`` in place)."""

    cfg: TileConfig
    pos: list[Rect | None]
    views: int = 0        # subsampled_views
    border: bool = False

    def rect(self, view: int) -> Rect:
        """The rectangle of a view visible in the tile (set by ``init``)."""
        r = self.pos[view]
        if r is None:
            raise AssertionError(f"tile {self.cfg.cell}: view {view} has no rectangle (a bug of the model)")
        return r


class _Solver:
    def __init__(self, plan: RenderPassPlan, bin_offsets: tuple[Pair, ...] | None) -> None:
        self.plan = plan
        self.grid = plan.grid
        self.T = plan.tiling.tile_size
        self.TC = plan.grid.tile_count
        self.fb = plan.scenario.framebuffer
        self.A = plan.scenario.gpu.tile_align
        self.bo = bin_offsets
        self.views = plan.scenario.fdm_layers
        self.work: dict[Pair, _Work] = {}
        self.queue: deque[Pair] = deque()
        self.queued: set[Pair] = set()
        self.log: list[SolverEvent] = []

    def default_pos(self, w: _Work, view: int, fa: Pair) -> Rect:
        """``get_default_tile_pos`` with its sticky side effect on ``subsampled_border``."""
        rect, stick = get_default_tile_pos(w.cfg.pos, w.cfg.extent, fa, self.fb, self.T, self.A,
                                           None if self.bo is None else self.bo[view])
        w.border = w.border or stick
        return rect

    def push(self, cell: Pair) -> None:
        """``u_worklist_push_tail``: a no-op when the element is already queued."""
        if cell not in self.queued:
            self.queued.add(cell)
            self.queue.append(cell)

    def pop(self) -> _Work:
        cell = self.queue.popleft()
        self.queued.discard(cell)
        return self.work[cell]

    def root_work(self, x: int, y: int) -> tuple[TileConfig, _Work | None]:
        r = self.grid.root(x, y)
        return r, self.work.get(r.cell)

    def init(self) -> None:
        tcw, tch = self.TC
        for y in range(tch):
            for x in range(tcw):
                t = self.grid.cell(x, y)
                if not t.is_root or t.visible_views == 0:
                    continue
                w = _Work(cfg=t, pos=[None] * self.views)
                for v in range(self.views):
                    if not t.visible(v):
                        continue
                    fa = t.frag_areas[v]
                    w.pos[v] = self.default_pos(w, v, fa)
                    if tuple(fa) != (1, 1):
                        w.views |= 1 << v
                self.work[t.cell] = w
                self.push(t.cell)

    def make_non_subsampled(self, w: _Work, view: int, axis: int, other: _Work) -> None:
        """``make_non_subsampled``: drop the view from ``subsampled_views`` and move it back to
        its unsubsampled rectangle (undoing earlier shifts); requeue the tile."""
        w.views &= ~(1 << view)
        rect = w.pos[view] = self.default_pos(w, view, (1, 1))
        self.log.append(SolverEvent("unsubsample", w.cfg.cell, view, axis, rect, other.cfg.cell))
        self.push(w.cfg.cell)

    def resolve(self, t: _Work, o: _Work, first: _Work, second: _Work, axis: int) -> None:
        """One neighbour pair; ``second`` is the right (axis 0) / bottom (axis 1) tile."""
        common = t.cfg.visible_views & o.cfg.visible_views
        if common == 0 or ((t.views | o.views) & common) == 0:
            return
        fp, fe = first.cfg.pos[axis], first.cfg.extent[axis]
        if second.cfg.pos[axis] < fp + fe:
            return   # not strictly right of / below: the other sweep handles this pair
        amount = max(2 * APRON_SIZE, self.A[axis])
        for v in range(self.views):
            if not common >> v & 1 or not (t.views | o.views) >> v & 1:
                continue
            if not aprons_intersect(t.rect(v), o.rect(v)):
                continue
            if second.views >> v & 1:
                u = self.default_pos(second, v, (1, 1))
                r = second.rect(v)
                if axis == 0:
                    fits = r.x + r.w + amount <= u.x + u.w
                    moved = attrs.evolve(r, x=r.x + amount)
                else:
                    fits = r.y + r.h + amount <= u.y + u.h
                    moved = attrs.evolve(r, y=r.y + amount)
                if fits:
                    second.pos[v] = moved
                    self.log.append(SolverEvent("shift", second.cfg.cell, v, axis, moved, first.cfg.cell))
                    self.push(second.cfg.cell)
                    continue
            for w, other in ((t, o), (o, t)):
                if w.views >> v & 1:
                    self.make_non_subsampled(w, v, axis, other)

    def sweep(self, t: _Work, axis: int) -> None:
        """Neighbours across the left/right (axis 0) or top/bottom (axis 1) edges of ``t``,
        diagonal neighbours included."""
        tcw, tch = self.TC
        (px, py), (ew, eh) = t.cfg.pos, t.cfg.extent
        for i in (0, 1):
            if axis == 0:
                line = px - 1 if i == 0 else px + ew
                if not 0 <= line < tcw:
                    continue
                k, k_end = max(py - 1, 0), min(py + eh, tch - 1)
            else:
                line = py - 1 if i == 0 else py + eh
                if not 0 <= line < tch:
                    continue
                k, k_end = max(px - 1, 0), min(px + ew, tcw - 1)
            while k <= k_end:
                cfg, o = self.root_work(line, k) if axis == 0 else self.root_work(k, line)
                k = cfg.pos[1] + cfg.extent[1] if axis == 0 else cfg.pos[0] + cfg.extent[0]
                if o is None:
                    continue   # no visible view: never conflicts
                first, second = (o, t) if i == 0 else (t, o)
                self.resolve(t, o, first, second, axis)

    def run(self) -> None:
        self.init()
        while self.queue:
            t = self.pop()
            self.sweep(t, 0)
            self.sweep(t, 1)


def tu_calc_subsampled(plan: RenderPassPlan, offsets_under_shared_viewport: OffsetsUnderSharedViewport | None = None
                       ) -> SubsampledLayout:
    """``tu_calc_subsampled`` (src/freedreno/vulkan/tu_tile_config.cc) as ``tu_calc_tile_config``
    runs it for a pass with a subsampled attachment.

    Every visible root tile starts at its default rectangle per visible view (``fa != (1,1)``
    views marked subsampled) and is queued in raster order of root cells.  Popping a tile checks
    its left/right neighbours (vertical edges) then its top/bottom neighbours (horizontal edges),
    corners included; a conflicting pair (``aprons_intersect``) in a view where either is
    subsampled is resolved by shifting the right/bottom tile by ``max(2*APRON_SIZE,
    tile_align)`` if that tile is subsampled in the view and stays inside its unsubsampled
    rectangle, otherwise by un-subsampling both.  Changed tiles are requeued (FIFO,
    push-if-absent).  With more than ``TU_SUBSAMPLED_MAX_BINS`` cells the solver does not run.
    ``offsets_under_shared_viewport`` None follows the scenario's ``driver.tu_calc_tile_config``
    (upstream: ``"null"``; ``sailfish-9429b474``: ``"real"``).
    """
    if offsets_under_shared_viewport is None:
        offsets_under_shared_viewport = tile_config_offsets_mode(plan)
    bo = solver_bin_offsets(plan, offsets_under_shared_viewport)
    tcw, tch = plan.grid.tile_count
    solved = tcw * tch <= TU_SUBSAMPLED_MAX_BINS
    s = _Solver(plan, bo)
    if solved:
        s.run()
    w0, h0 = image_size0(plan)
    st = plan.pass_state
    tiles: list[SubsampledTile] = []
    for y in range(tch):
        for x in range(tcw):
            cfg = plan.grid.cell(x, y)
            if not cfg.is_root or cfg.visible_views == 0:
                continue
            w = s.work.get(cfg.cell)
            sv = w.views if w else 0
            border = w.border if w else False
            tiles.append(SubsampledTile(
                cell=cfg.cell, pos=cfg.pos, extent=cfg.extent, visible_views=cfg.visible_views,
                frag_areas=tuple(cfg.frag_areas),
                subsampled_pos=tuple(w.pos) if w else (None,) * plan.scenario.fdm_layers,
                subsampled_views=sv, subsampled_border=border, subsampled=w is not None,
                fast_store=use_fast_store(cfg, st, sv, border)))
    return SubsampledLayout(plan=plan, solved=solved, fb_size=plan.scenario.framebuffer,
                            tile_size=plan.tiling.tile_size, tile_count=(tcw, tch),
                            tile_align=plan.scenario.gpu.tile_align, bin_offsets=bo, width0=w0, height0=h0,
                            tiles=tuple(tiles), log=tuple(s.log))
