"""The comparison of the two paths and its error bound.

:func:`compare` - the subsampled image sampled through the metadata against the expanded image
sampled at the same normalized coordinate with the same filter and addressing
(:func:`~layout_solver.reconstruct.sample_both`), at :func:`~layout_solver.reconstruct.sample_points`.

The bound ("what the fragment area alone explains").  Both LINEAR results are convex combinations
(non-negative weights summing to 1) of fragment values: the expanded image's 2x2 footprint lies
within 1 pixel of the sample, and a correct subsampled layout's 2x2 footprint holds fragments (of
the sampled tile, or neighbour fragments copied into its apron) whose framebuffer positions lie
within one texel, i.e. at most ``F`` framebuffer pixels (``F`` = largest fragment area of the view
on that axis), of the sample.  Each sample's bound is therefore the value range (max - min) of
the expanded image over the window of ``F + 1`` pixels around it on each axis (border colour
included when the window leaves the framebuffer under CLAMP_TO_BORDER): :func:`neighbourhood_bound`.
A layout that makes the sampler read memory that no nearby fragment wrote (a missing apron reads
:data:`~layout_solver.reconstruct.EMPTY`, far away content, wrong metadata) exceeds it.  NEAREST
reads the texel of the fragment that contains the sample in both paths, so its bound is 0 except
within ``tie_tol`` texels of a texel boundary, where float32 rounding may pick either neighbour
(those "ties" get the LINEAR bound).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

from fdm.plan import RenderPassPlan

from ..options import Addressing, ApronRevision, Filter
from ..solver import SubsampledLayout
from ._types import BoolArray, FloatArray, Pair
from .apron_blits import ApronDrop, ApronStats
from .points import bin_edges, sample_points
from .render import EMPTY
from .sampler import BORDER
from .view import ViewReconstruction, reconstruct_view, sample_both

#: ``np.max`` or ``np.min`` along an axis
Reduction = Callable[..., FloatArray]


def _window_extreme(img: FloatArray, radius: Pair, op: Reduction) -> FloatArray:
    """Max or min of ``img`` over the window ``[i - r, i + r]`` (clipped to the image)."""
    fill = -np.inf if op is np.max else np.inf
    rx, ry = radius
    p = np.pad(img.astype(np.float64), ((0, 0), (rx, rx)), constant_values=fill)
    t = op(np.lib.stride_tricks.sliding_window_view(p, 2 * rx + 1, axis=1), axis=-1)
    p = np.pad(t, ((ry, ry), (0, 0)), constant_values=fill)
    return op(np.lib.stride_tricks.sliding_window_view(p, 2 * ry + 1, axis=0), axis=-1)


def neighbourhood_bound(rec: ViewReconstruction, xs: FloatArray, ys: FloatArray, addressing: Addressing,
                        border: float = BORDER, radius: Pair | None = None) -> tuple[FloatArray, BoolArray]:
    """Per sample: the value range of the expanded image within ``radius`` pixels (default
    ``F + 1`` per axis) of the pixel containing it, with the border colour when the window
    leaves the framebuffer under CLAMP_TO_BORDER; and whether the window touches unrendered
    (:data:`~layout_solver.reconstruct.EMPTY`) pixels."""
    W, H = rec.plan.scenario.framebuffer
    r = radius if radius is not None else (rec.frag_max[0] + 1, rec.frag_max[1] + 1)
    img = rec.expanded.astype(np.float64)
    hole = rec.expanded == EMPTY
    hi = _window_extreme(np.where(hole, -np.inf, img), r, np.max)
    lo = _window_extreme(np.where(hole, np.inf, img), r, np.min)
    holes = _window_extreme(hole.astype(np.float64), r, np.max) > 0
    px = np.clip(np.floor(xs).astype(np.int64), 0, W - 1)
    py = np.clip(np.floor(ys).astype(np.int64), 0, H - 1)
    h, lo_, bad = hi[py, px], lo[py, px], holes[py, px]
    if addressing == "clamp_to_border":
        out = (px - r[0] < 0) | (px + r[0] >= W) | (py - r[1] < 0) | (py + r[1] >= H)
        h = np.where(out, np.maximum(h, border), h)
        lo_ = np.where(out, np.minimum(lo_, border), lo_)
    return h - lo_, bad


def footprint_touches(mask: BoolArray, tx: FloatArray, ty: FloatArray, filter: Filter) -> BoolArray:
    """Whether the texels a sample at texel coordinates ``(tx, ty)`` reads include a pixel of
    ``mask`` (NEAREST: one texel; LINEAR: the 2x2 footprint; indices clamped to the image)."""
    h, w = mask.shape
    offs: tuple[int, ...]
    if filter == "nearest":
        offs, i0, j0 = (0,), np.floor(tx).astype(np.int64), np.floor(ty).astype(np.int64)
    else:
        offs, i0, j0 = (0, 1), np.floor(tx - 0.5).astype(np.int64), np.floor(ty - 0.5).astype(np.int64)
    out = np.zeros(len(tx), dtype=bool)
    for dj in offs:
        for di in offs:
            out |= mask[np.clip(j0 + dj, 0, h - 1), np.clip(i0 + di, 0, w - 1)]
    return out


@attrs.frozen(kw_only=True)
class ErrorReport:
    """Subsampled path vs expanded path for one view, filter and addressing mode."""

    view: int
    filter: Filter
    addressing: Addressing
    samples: int                 # points compared
    edge_samples: int            # of which within ``band`` pixels of a bin edge
    skipped: int                 # points whose neighbourhood reaches unrendered pixels (not compared)
    excluded: int                # points left out because they read contested pixels
    ties: int                    # NEAREST points within ``tie_tol`` of a texel boundary (LINEAR bound)
    max_error: float
    max_error_edge: float        # largest error within ``band`` pixels of a bin edge
    worst: tuple[float, float]   # framebuffer position of ``max_error``
    bound_at_worst: float
    max_bound: float
    max_excess: float            # max(error - bound) over the samples
    worst_excess: tuple[float, float]
    violations: int              # samples with error > bound + eps
    eps: float
    aprons: ApronStats

    @property
    def ok(self) -> bool:
        return self.violations == 0


def compare(rec: ViewReconstruction, filter: Filter, addressing: Addressing, *, samples: int | None = None,
            band: int | None = None, border: float = BORDER, eps: float = 1e-6, tie_tol: float = 1e-3,
            radius: Pair | None = None, points: tuple[FloatArray, FloatArray] | None = None,
            exclude_contested: bool = False) -> ErrorReport:
    """Compare the two paths of ``rec`` at :func:`~layout_solver.reconstruct.sample_points` (or
    ``points``).  ``exclude_contested`` leaves out the samples whose subsampled footprint touches
    a contested pixel (see :func:`~layout_solver.reconstruct.apply_aprons`); they are counted in
    ``excluded``."""
    band = band if band is not None else max(4, *rec.frag_max)
    xs, ys = points if points is not None else sample_points(rec.plan, rec.view, band=band, samples=samples)
    bound, bad = neighbourhood_bound(rec, xs, ys, addressing, border, radius)
    xs, ys, bound = xs[~bad], ys[~bad], bound[~bad]
    a, b, tx, ty = sample_both(rec, xs, ys, filter, addressing, border)
    excluded = 0
    if exclude_contested and rec.contested.any():
        hit = footprint_touches(rec.contested, tx, ty, filter)
        excluded = int(hit.sum())
        xs, ys, bound, a, b, tx, ty = (t[~hit] for t in (xs, ys, bound, a, b, tx, ty))
    err = np.abs(a - b)
    ties = np.zeros(len(xs), dtype=bool)
    if filter == "nearest":
        W, H = rec.plan.scenario.framebuffer
        ex = (xs / W).astype(np.float32).astype(np.float64) * W
        ey = (ys / H).astype(np.float32).astype(np.float64) * H
        for t in (tx, ty, ex, ey):
            f = t - np.floor(t)
            ties |= (f < tie_tol) | (f > 1 - tie_tol)
        bound = np.where(ties, bound, 0.0)
    ex_, ey_ = bin_edges(rec.plan, rec.view)
    dist = np.minimum(np.abs(xs[:, None] - np.asarray(ex_)[None, :]).min(axis=1),
                      np.abs(ys[:, None] - np.asarray(ey_)[None, :]).min(axis=1))
    near = dist <= band
    excess = err - bound
    n = len(xs)
    iw = int(np.argmax(err)) if n else 0
    ie = int(np.argmax(excess)) if n else 0
    return ErrorReport(
        view=rec.view, filter=filter, addressing=addressing, samples=n, edge_samples=int(near.sum()),
        skipped=int(bad.sum()), excluded=excluded, ties=int(ties.sum()),
        max_error=float(err.max()) if n else 0.0,
        max_error_edge=float(err[near].max()) if near.any() else 0.0,
        worst=(float(xs[iw]), float(ys[iw])) if n else (0.0, 0.0),
        bound_at_worst=float(bound[iw]) if n else 0.0, max_bound=float(bound.max()) if n else 0.0,
        max_excess=float(excess.max()) if n else 0.0,
        worst_excess=(float(xs[ie]), float(ys[ie])) if n else (0.0, 0.0),
        violations=int((err > bound + eps).sum()), eps=eps, aprons=rec.apron_stats)


def reconstruction_error(plan: RenderPassPlan, layout: SubsampledLayout, view: int, filter: Filter = "linear",
                         addressing: Addressing = "clamp_to_edge", *, drop_apron: ApronDrop = None,
                         samples: int | None = None, fused: bool = True, revision: ApronRevision | None = None,
                         band: int | None = None, border: float = BORDER, eps: float = 1e-6, tie_tol: float = 1e-3,
                         radius: Pair | None = None, points: tuple[FloatArray, FloatArray] | None = None,
                         exclude_contested: bool = False) -> ErrorReport:
    """Reconstruct ``view`` through the subsampled path and compare it with the expanded path
    (see the module docstring for the bound).  ``drop_apron``: an index of the apron list (or
    several, or ``"all"``) not blitted; ``samples``: about how many pixel centres to compare
    besides the edge neighbourhoods (None: all).  The other keywords are those of :func:`compare`."""
    rec = reconstruct_view(plan, layout, view, drop_apron=drop_apron, fused=fused, revision=revision)
    return compare(rec, filter, addressing, samples=samples, band=band, border=border, eps=eps, tie_tol=tie_tol,
                   radius=radius, points=points, exclude_contested=exclude_contested)
