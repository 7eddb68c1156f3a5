"""Where the two paths are compared: pixel centres (all, or a regular subset) plus a dense set
of points around every rendered bin's edges, where a layout's mistakes show."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fdm.plan import RenderPassPlan

from ._types import FloatArray

#: the pixel offsets around every bin edge that are always sampled besides pixel centres
EDGE_OFFSETS = (-0.25, 0.25)


def bin_edges(plan: RenderPassPlan, view: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Framebuffer-space x and y coordinates of the rendered bins' edges in ``view`` (clipped to
    the framebuffer, its borders included)."""
    W, H = plan.scenario.framebuffer
    xs, ys = {0, W}, {0, H}
    for tp in plan.tiles:
        vp = tp.views[view]
        if vp.visible:
            bx, by, bw, bh = vp.bin
            xs.update(min(max(e, 0), W) for e in (bx, bx + bw))
            ys.update(min(max(e, 0), H) for e in (by, by + bh))
    return tuple(sorted(xs)), tuple(sorted(ys))


def _near(edges: Sequence[int], band: int, size: int) -> FloatArray:
    """Coordinates within ``band`` pixels of the edges: pixel centres and ``EDGE_OFFSETS``."""
    d = np.array(list(EDGE_OFFSETS) + [k + 0.5 for k in range(-band, band)])
    c = (np.asarray(edges, dtype=np.float64)[:, None] + d[None, :]).ravel()
    return np.unique(c[(c > 0) & (c < size)])


def sample_points(plan: RenderPassPlan, view: int, *, band: int = 4, samples: int | None = None
                  ) -> tuple[FloatArray, FloatArray]:
    """Framebuffer positions to compare: pixel centres (all, or a regular strided subset of
    about ``samples`` of them) plus every point within ``band`` pixels of a bin edge (pixel
    centres and ``EDGE_OFFSETS`` around each edge), corners included."""
    W, H = plan.scenario.framebuffer
    ex, ey = bin_edges(plan, view)
    px, py = np.arange(W) + 0.5, np.arange(H) + 0.5
    k = 1 if samples is None or W * H <= samples else math.ceil(math.sqrt(W * H / samples))
    gx, gy = px[k // 2::k], py[k // 2::k]
    ox, oy = _near(ex, band, W), _near(ey, band, H)
    ax, ay = np.union1d(px, ox), np.union1d(py, oy)
    parts = [np.meshgrid(gx, gy), np.meshgrid(ox, ay), np.meshgrid(ax, oy)]
    xs = np.concatenate([p[0].ravel() for p in parts])
    ys = np.concatenate([p[1].ravel() for p in parts])
    key = np.unique(np.round(ys * 4).astype(np.int64) * (4 * W + 8) + np.round(xs * 4).astype(np.int64))
    return (key % (4 * W + 8)) / 4.0, (key // (4 * W + 8)) / 4.0
