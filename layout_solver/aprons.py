"""Apron blits of a subsampled image.

Models ``tu_calc_subsampled_aprons`` with ``calc_shared_vert_edge``/``calc_shared_horiz_edge``,
``calc_tile_vert_pos``/``calc_tile_horiz_pos`` and ``handle_vertical_corners``/
``handle_horizontal_corners`` (src/freedreno/vulkan/tu_subsampled_image.cc); the list is what
``tu_emit_subsampled`` hands ``tu_blit_subsampled_apron`` (tu_clear_blit.cc).
Spec: docs/spec/turnip-fdm-spec.md §7.8.

Where the driver asserts (``calc_shared_vert_edge``/``calc_shared_horiz_edge`` on the shared
edge range, ``tu_calc_subsampled_aprons`` on a negative destination offset) the model raises
:class:`~turnip_base.errors.DriverAssertion` naming that function.
"""

from __future__ import annotations

from typing import Literal

import attrs

from fdm.geometry import Rect
from turnip_base.errors import DriverAssertion

from .options import ApronRevision, OffsetsUnderSharedViewport, as_apron_revision
from .solver import APRON_SIZE, SubsampledLayout, SubsampledTile

Pair = tuple[int, int]
FRect = tuple[float, float, float, float]   # x0, y0, x1, y1 (half-open), source pixels
ApronEdge = Literal["vertical", "horizontal"]


@attrs.frozen
class AprBlit:
    """One blit: destination rectangle (integer, in the image) <- source rectangle (float).
    ``edge`` is ``"vertical"`` (left/right aprons) or ``"horizontal"`` (top/bottom);
    ``dst_tile``/``src_tile`` are root cells."""

    dst: Rect
    src: FRect
    edge: ApronEdge
    dst_tile: Pair
    src_tile: Pair


def _tile_edge_pos(a: SubsampledTile, view: int, k: int, axis: int, T: Pair, b_o: Pair) -> int:
    """``calc_tile_vert_pos`` (axis 1) / ``calc_tile_horiz_pos`` (axis 0): the subsampled
    coordinate of cell boundary ``k`` (cells from the tile's start) of tile ``a``, clamped to the
    tile's end.  The first row/column is partial: ``T - b_o`` pixels."""
    p = a.pos[axis]
    t = T[axis]
    px = (t - b_o[axis]) + t * (k - 1) if (p == 0 and k > 0) else t * k
    sub = a.stored_pos(view)
    start, size = (sub.x, sub.w) if axis == 0 else (sub.y, sub.h)
    fa = a.effective_frag_area(view)[axis]
    return min(start + px // fa, start + size)


def _shared_edge(a: SubsampledTile, b: SubsampledTile, view: int, axis: int, T: Pair, b_o: Pair) -> tuple[int, int]:
    """``calc_shared_vert_edge`` (axis 1) / ``calc_shared_horiz_edge`` (axis 0): the part of
    ``a``'s edge along ``axis`` that faces ``b``, in ``a``'s subsampled coordinates."""
    ap, ae = a.pos[axis], a.extent[axis]
    bp, be = b.pos[axis], b.extent[axis]
    k0 = max(bp - ap, 0)
    k1 = min(ap + ae, bp + be) - ap
    if k0 > ae or k1 < 0:
        raise DriverAssertion("calc_shared_vert_edge" if axis == 1 else "calc_shared_horiz_edge",
                              f"asserts other_start_tile <= extent and other_end_tile >= 0; shared edge of "
                              f"{a.cell} and {b.cell}: other_start_tile = {k0} (extent {ae}), other_end_tile = {k1}")
    return _tile_edge_pos(a, view, k0, axis, T, b_o), _tile_edge_pos(a, view, k1, axis, T, b_o)


def _u(v: float) -> int:
    """C ``(unsigned)`` of a non-negative float (truncation)."""
    return int(v)


def _vertical_pair(t: SubsampledTile, o: SubsampledTile, view: int, T: Pair, b_o: Pair) -> list[AprBlit]:
    """Right neighbour ``o`` of ``t``: o -> t's right apron, t -> o's left apron, each with
    ``handle_vertical_corners``."""
    R, Ro = t.stored_pos(view), o.stored_pos(view)
    f, g = t.effective_frag_area(view), o.effective_frag_area(view)
    ts, te = _shared_edge(t, o, view, 1, T, b_o)
    os_, oe = _shared_edge(o, t, view, 1, T, b_o)
    out = []
    for dst_t, src_t, dx, sx0, sx1, (ds, de), (ss, se), fd, fs in (
            (t, o, R.x + R.w, Ro.x, Ro.x + APRON_SIZE * f[0] / g[0], (ts, te), (os_, oe), f, g),
            (o, t, Ro.x - APRON_SIZE, R.x + R.w - APRON_SIZE * g[0] / f[0], R.x + R.w, (os_, oe), (ts, te), g, f)):
        dy, dh = ds, de - ds
        sy0, sy1 = float(ss), float(se)
        srcR = src_t.stored_pos(view)
        ah = APRON_SIZE * fd[1] / fs[1]
        if _u(sy0) > srcR.y:
            dy, dh, sy0 = dy - APRON_SIZE, dh + APRON_SIZE, sy0 - ah
        if _u(sy1) < srcR.y + srcR.h:
            dh, sy1 = dh + APRON_SIZE, sy1 + ah
        out.append(AprBlit(Rect(dx, dy, APRON_SIZE, dh), (float(sx0), sy0, float(sx1), sy1), "vertical",
                           dst_t.cell, src_t.cell))
    return out


def _horizontal_pair(t: SubsampledTile, o: SubsampledTile, view: int, T: Pair, b_o: Pair) -> list[AprBlit]:
    """Bottom neighbour ``o`` of ``t``: o -> t's bottom apron, t -> o's top apron, each with
    ``handle_horizontal_corners`` (its start test is a float comparison)."""
    R, Ro = t.stored_pos(view), o.stored_pos(view)
    f, g = t.effective_frag_area(view), o.effective_frag_area(view)
    ts, te = _shared_edge(t, o, view, 0, T, b_o)
    os_, oe = _shared_edge(o, t, view, 0, T, b_o)
    out = []
    for dst_t, src_t, dy, sy0, sy1, (ds, de), (ss, se), fd, fs in (
            (t, o, R.y + R.h, Ro.y, Ro.y + APRON_SIZE * f[1] / g[1], (ts, te), (os_, oe), f, g),
            (o, t, Ro.y - APRON_SIZE, R.y + R.h - APRON_SIZE * g[1] / f[1], R.y + R.h, (os_, oe), (ts, te), g, f)):
        dx, dw = ds, de - ds
        sx0, sx1 = float(ss), float(se)
        srcR = src_t.stored_pos(view)
        aw = APRON_SIZE * fd[0] / fs[0]
        if sx0 > srcR.x:
            dx, dw, sx0 = dx - APRON_SIZE, dw + APRON_SIZE, sx0 - aw
        if _u(sx1) < srcR.x + srcR.w:
            dw, sx1 = dw + APRON_SIZE, sx1 + aw
        if dx < 0 or dy < 0:
            raise DriverAssertion("tu_calc_subsampled_aprons",
                                  f"asserts tile_dst.offset >= 0 for a horizontal apron; got ({dx}, {dy})")
        out.append(AprBlit(Rect(dx, dy, dw, APRON_SIZE), (sx0, float(sy0), sx1, float(sy1)), "horizontal",
                           dst_t.cell, src_t.cell))
    return out


def apron_revision(layout: SubsampledLayout, revision: ApronRevision | None) -> ApronRevision:
    """``revision``, or the scenario's ``driver.tu_calc_subsampled_aprons`` when None."""
    if revision is None:
        return "older" if layout.plan.scenario.driver.tu_calc_subsampled_aprons == "sailfish-9429b474" else "newest"
    return as_apron_revision(revision)


def _adjacent(a: Rect, b: Rect, axis: int, revision: ApronRevision) -> bool:
    """The "adjacent in subsampled space" skip: ``a`` ends exactly where ``b`` starts along
    ``axis``; the newest revision also requires the other axis ranges to overlap or touch."""
    if axis == 0:
        if a.x + a.w != b.x:
            return False
        return revision == "older" or (a.y + a.h >= b.y and b.y + b.h >= a.y)
    if a.y + a.h != b.y:
        return False
    return revision == "older" or (a.x + a.w >= b.x and b.x + b.w >= a.x)


def tu_calc_subsampled_aprons(layout: SubsampledLayout, layer: int, *, revision: ApronRevision | None = None,
                              offsets_under_shared_viewport: OffsetsUnderSharedViewport | None = None
                              ) -> tuple[AprBlit, ...]:
    """``tu_calc_subsampled_aprons`` (src/freedreno/vulkan/tu_subsampled_image.cc): the
    (dst rect, float src rect) pairs blitted after the pass for one layer of a single-layer or
    multiview pass (``view = layer``).

    For every root tile ``t`` visible in the view, in raster order of cells: right neighbours
    (rows ``t.y - 1 .. t.y + E.h``, corners included) then bottom neighbours (columns of ``t``);
    invisible neighbours, neighbours adjacent in subsampled space (``revision``: ``"newest"`` =
    pop-os @ 4ff7b570, edge equality and overlap/touch of the other axis; ``"older"`` =
    sailfish @ 9429b474, edge equality only) and neighbours not strictly right/below are
    skipped; each remaining pair gives two blits with corner extension.  Without a solved
    layout (more than 512 bins) no tile has a subsampled position and nothing is listed
    (modelling choice).  Offsets: as :func:`layout_solver.metadata.tu_emit_subsampled_metadata`.
    ``revision`` None follows the scenario's ``driver.tu_calc_subsampled_aprons`` (upstream:
    ``"newest"``; ``sailfish-9429b474``: ``"older"``).
    """
    revision = apron_revision(layout, revision)
    if not layout.solved:
        return ()
    plan = layout.plan
    view = min(layer, plan.scenario.fdm_layers - 1)
    b_o = layout.emit_bin_offset(view, offsets_under_shared_viewport)
    T = layout.tile_size
    tcw, tch = layout.tile_count
    grid = plan.grid
    out: list[AprBlit] = []
    for cy in range(tch):
        for cx in range(tcw):
            cfg = grid.cell(cx, cy)
            if not cfg.is_root:
                continue
            t = layout.tile(cx, cy)
            if t is None or not t.visible(view):
                continue
            (px, py), (ew, eh) = t.pos, t.extent
            R = t.stored_pos(view)
            xn = px + ew
            if xn < tcw:
                y = max(py - 1, 0)
                while y <= min(py + eh, tch - 1):
                    ocfg = grid.root(xn, y)
                    y = ocfg.pos[1] + ocfg.extent[1]
                    o = layout.tile(xn, ocfg.pos[1]) if ocfg.visible_views else None
                    if o is None or not o.visible(view):
                        continue
                    if _adjacent(R, o.stored_pos(view), 0, revision):
                        continue
                    if o.pos[0] < px + ew:
                        continue
                    out.extend(_vertical_pair(t, o, view, T, b_o))
            yn = py + eh
            if yn < tch:
                x = px
                while x <= px + ew - 1:
                    ocfg = grid.root(x, yn)
                    x = ocfg.pos[0] + ocfg.extent[0]
                    o = layout.tile(ocfg.pos[0], yn) if ocfg.visible_views else None
                    if o is None or not o.visible(view):
                        continue
                    if _adjacent(R, o.stored_pos(view), 1, revision):
                        continue
                    if o.pos[1] < py + eh:
                        continue
                    out.extend(_horizontal_pair(t, o, view, T, b_o))
    return tuple(out)
