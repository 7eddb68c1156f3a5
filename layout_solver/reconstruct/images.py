"""Whole-framebuffer arrays of one reconstructed view, for the pictures of
``turnip-fdm layout`` (:mod:`layout_solver.report`): the scene, both stored images, the
reconstruction sampled at every pixel centre and its error.

Both functions sample through :func:`~layout_solver.reconstruct.grid.pixel_blocks` (bounded
blocks, the transform separated per metadata bin).  :func:`reconstruction_images` assembles
full-resolution ``H x W`` float64 arrays (tests, small passes);
:func:`reconstruction_rasters` keeps only what the pictures draw, at most
:data:`RASTER_MAX_SIDE` pixels a side, so its memory does not grow with the framebuffer
beyond the stored images themselves.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np
import numpy.typing as npt

from fdm.plan import RenderPassPlan

from ..options import Addressing, Filter
from ..solver import SubsampledLayout
from ._types import BoolArray, F32Array, FloatArray, Pair
from .apron_blits import ApronDrop
from .grid import NEAR_BOUND, _Expanded, _Grid, pixel_blocks, sample_grid, sample_grid_near
from .reference_scene import scene
from .render import RenderedBin, render_bins
from .sampler import BORDER
from .view import ViewReconstruction, reconstruct_view, subsampled_path

#: the largest side (pixels) of the raster pictures of :func:`reconstruction_rasters`: larger
#: framebuffers are shown reduced by an integer factor (the pictures are drawn about 760 picture
#: units wide and the page shows at most 512 pixels, so this is 1.7 times the drawn resolution;
#: 1920 until 2026-11-25, which cost a VR-sized layout 0.4 s of converting and encoding)
RASTER_MAX_SIDE = 1280
#: threads sharing one view's sampling in :func:`reconstruction_rasters` (at most the CPUs)
WORKERS = 2


@attrs.frozen(eq=False, kw_only=True)
class ReconstructionImages:
    """Arrays for drawing one view (float64 unless stated)."""

    scene: FloatArray            # H x W, the reference scene at pixel centres
    expanded: F32Array           # H x W float32, the non-subsampled path's image
    subsampled: F32Array         # height0 x width0 float32, the subsampled image after the aprons
    reconstructed: FloatArray    # H x W, the subsampled image sampled through the metadata at pixel centres
    reference: FloatArray        # H x W, the expanded image sampled at the same coordinates
    error: FloatArray            # H x W, |reconstructed - reference|


def reconstruction_images(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *, filter: Filter = "linear",
                          addressing: Addressing = "clamp_to_edge", drop_apron: ApronDrop = None, fused: bool = True,
                          border: float = BORDER) -> ReconstructionImages:
    """The reconstructed ``W x H`` image (sampled at every pixel centre) and its error heat map.
    Pixels in unrendered cells hold NaN in ``reconstructed``/``reference``/``error``."""
    rec = reconstruct_view(plan, layout, view, drop_apron=drop_apron, fused=fused)
    W, H = plan.scenario.framebuffer
    recon = np.full((H, W), np.nan)
    ref = np.full((H, W), np.nan)
    for blk in pixel_blocks(rec, filter, addressing, border):
        recon[blk.y0:blk.y1, blk.x0:blk.x1] = blk.subsampled
        ref[blk.y0:blk.y1, blk.x0:blk.x1] = blk.expanded
    gy, gx = np.mgrid[0:H, 0:W]
    return ReconstructionImages(scene=scene(gx + 0.5, gy + 0.5, (W, H)), expanded=rec.expanded,
                                subsampled=rec.subsampled, reconstructed=recon, reference=ref,
                                error=np.abs(recon - ref))


@attrs.frozen(eq=False, kw_only=True)
class ReconstructionRasters:
    """What the (c) pictures of one view draw, reduced by ``factor`` per axis (1 up to
    :data:`RASTER_MAX_SIDE`): the image pixels at the centre of every ``factor x factor``
    block (``k // 2`` into it, the pixel a nearest-neighbour reduction shows), the error the
    largest of its block, so no error line disappears.  The numbers are over every pixel; the
    value range (the grey scale of the pictures) is that of the rendered fragments, which bounds
    the values stored and blitted (a LINEAR sample of them too)."""

    factor: int
    value_range: tuple[float, float]   # min, max of every fragment the view rendered (what the images hold)
    subsampled: F32Array               # pixels k//2, k//2 + k, ... of the memory after the aprons
    reconstructed: FloatArray          # pixels k//2, k//2 + k, ...: sampled through the metadata (NaN: unrendered)
    error: FloatArray                  # ceil(H / k) x ceil(W / k): largest |error| of each block (NaN: unrendered)
    max_error: float                   # largest |reconstructed - reference| over every rendered pixel centre
    worst: tuple[float, float]         # framebuffer position of ``max_error``


def raster_factor(size: Pair, max_side: int = RASTER_MAX_SIDE) -> int:
    """The integer reduction that brings ``size`` (pixels) to at most ``max_side`` a side."""
    return max(1, math.ceil(max(size) / max_side))


def _workers() -> int:
    """Threads that share one view's sampling (numpy releases the GIL in its loops)."""
    return max(1, min(WORKERS, os.cpu_count() or 1))


def value_range(rec: ViewReconstruction | Sequence[RenderedBin]) -> tuple[float, float]:
    """Min and max over every fragment ``rec`` (or of the ``bins``) rendered ((0, 1) when none): the stored images
    and the apron copies hold only these values, and a filtered sample of written texels lies
    inside it (LINEAR weights are convex); the pictures' grey scale."""
    bins = rec.bins if isinstance(rec, ViewReconstruction) else rec
    vals = [(float(b.values.min()), float(b.values.max())) for b in bins if b.values.size]
    if not vals:
        return 0.0, 1.0
    return min(v[0] for v in vals), max(v[1] for v in vals)


def _reduce_max(err: FloatArray, e: FloatArray, x0: int, y0: int, k: int) -> None:
    """``err`` (the reduced grid) at least the largest of ``e`` (pixels from ``(x0, y0)``) in
    each ``k x k`` block: the block in a k-aligned NaN frame, reduced k x k (fmax ignores NaN)."""
    ry0, rx0 = y0 // k, x0 // k
    oy, ox = y0 - ry0 * k, x0 - rx0 * k
    ny, nx = -(-(oy + e.shape[0]) // k), -(-(ox + e.shape[1]) // k)
    if oy or ox or e.shape != (ny * k, nx * k):
        frame = np.full((ny * k, nx * k), np.nan)
        frame[oy:oy + e.shape[0], ox:ox + e.shape[1]] = e
        e = frame
    red = e[::k, ::k].copy()
    for dy in range(k):
        for dx in range(k):
            if dy or dx:
                np.fmax(red, e[dy::k, dx::k], out=red)
    np.fmax(err[ry0:ry0 + ny, rx0:rx0 + nx], red, out=err[ry0:ry0 + ny, rx0:rx0 + nx])


def reconstruction_rasters(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *, filter: Filter = "linear",
                           addressing: Addressing = "clamp_to_edge", drop_apron: ApronDrop = None,
                           fused: bool = True, border: float = BORDER,
                           max_side: int = RASTER_MAX_SIDE, workers: int | None = None) -> ReconstructionRasters:
    """The (c) pictures' arrays of ``view``, at most ``max_side`` pixels a side: the whole path
    sampled at every pixel centre block by block, each block reduced as it is produced (the
    full-resolution reconstruction and error never exist as arrays).  ``workers`` threads (default
    :data:`WORKERS`; at most the CPUs) share the metadata bin rows; the result does not depend on
    how many."""
    W, H = plan.scenario.framebuffer
    rec = reconstruct_view(plan, layout, view, drop_apron=drop_apron, fused=fused)
    k = raster_factor((W, H), max_side)
    c = k // 2
    recon = np.full((len(range(c, H, k)), len(range(c, W, k))), np.nan)
    n = _workers() if workers is None else max(1, min(workers, os.cpu_count() or 1))

    def work(i: int) -> tuple[FloatArray, float, tuple[float, float]]:
        # recon: every reduced pixel is written by exactly one block; err: blocks of two
        # workers may share a reduced pixel, so each worker keeps its own
        err = np.full((-(-H // k), -(-W // k)), np.nan)
        worst, where = -math.inf, (math.inf, math.inf)
        for blk in pixel_blocks(rec, filter, addressing, border, part=(i, n)):
            e = blk.subsampled - blk.expanded
            np.abs(e, out=e)
            top = float(np.fmax.reduce(e, axis=None))   # NaN when nothing in the block was rendered
            if top >= worst:
                jy, jx = divmod(int(np.argmax(e == top)), blk.x1 - blk.x0)
                at = (blk.x0 + jx + 0.5, blk.y0 + jy + 0.5)
                if top > worst or at[::-1] < where[::-1]:   # ties: the first in row-major order
                    worst, where = top, at
            # the pixels of the block that are block centres of the reduced grid
            fx, fy = -(-(blk.x0 - c) // k) * k + c, -(-(blk.y0 - c) // k) * k + c
            if fx < blk.x1 and fy < blk.y1:
                recon[fy // k:(blk.y1 - 1 - c) // k + 1, fx // k:(blk.x1 - 1 - c) // k + 1] = \
                    blk.subsampled[fy - blk.y0::k, fx - blk.x0::k]
            _reduce_max(err, e, blk.x0, blk.y0, k)
        return err, worst, where

    if n == 1:
        parts = [work(0)]
    else:
        with ThreadPoolExecutor(n) as pool:
            parts = list(pool.map(work, range(n)))
    err = parts[0][0]
    for e2, _, _ in parts[1:]:
        np.fmax(err, e2, out=err)
    worst, where = -math.inf, (0.0, 0.0)
    for _, top, at in parts:
        if top > worst or (top == worst and at[::-1] < where[::-1]):
            worst, where = top, at
    return ReconstructionRasters(factor=k, value_range=value_range(rec.bins), subsampled=rec.subsampled[c::k, c::k],
                                 reconstructed=recon, error=err, max_error=worst if worst > -math.inf else 0.0,
                                 worst=where if worst > -math.inf else (0.0, 0.0))


#: how far an error of :func:`picture_rasters` (a block's largest) may lie from the exact one
#: where it is not exact: twice :data:`~layout_solver.reconstruct.grid.NEAR_BOUND` for the two
#: samples, and as much again for the difference's rounding
PICTURE_SLACK = 3 * NEAR_BOUND


@attrs.frozen(eq=False, kw_only=True)
class PictureRasters:
    """:class:`ReconstructionRasters` for pictures whose error is quantised (the heat map):
    the same ``factor``, ``value_range``, ``subsampled`` and ``reconstructed`` (exact), and the
    same ``max_error`` (exact); ``error`` is each block's largest error to within ``slack``
    (per reduced pixel: :data:`PICTURE_SLACK`, or 0 where it is exact), and ``exact`` gives
    the exact value of any reduced pixels (the numbers of :func:`reconstruction_rasters`)."""

    factor: int
    value_range: tuple[float, float]
    subsampled: F32Array
    reconstructed: FloatArray
    error: FloatArray
    near: BoolArray
    max_error: float
    exact: Callable[[npt.NDArray[np.intp], npt.NDArray[np.intp]], FloatArray]


def _exact_blocks(grid: _Grid, k: int, rows: npt.NDArray[np.intp], cols: npt.NDArray[np.intp]) -> FloatArray:
    """The largest exact error (:func:`sample_grid`, as :func:`reconstruction_rasters`) of the
    ``k x k`` pixel blocks ``(rows[i], cols[i])`` of the reduced grid (NaN: nothing rendered)."""
    W, H = grid.fb
    out = np.full(len(rows), np.nan)
    for i, (ry, rx) in enumerate(zip(rows.tolist(), cols.tolist(), strict=True)):
        y0, x0 = ry * k, rx * k
        for xa, xb, ya, yb, m, tx, ty, band, row0 in grid.regions(cols=(x0, min(x0 + k, W)),
                                                                  rows=(y0, min(y0 + k, H))):
            a = sample_grid(grid.subsampled, tx, ty, "linear", "clamp_to_edge")
            b = sample_grid(band, grid.ref_tx[xa:xb], grid.ref_ty[ya:yb], "linear", "clamp_to_edge", height=H,
                            row0=row0)
            e = np.abs(a - b)
            e[~m] = np.nan
            out[i] = np.fmax(out[i], np.fmax.reduce(e, axis=None))
    return out


def picture_rasters(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *, drop_apron: ApronDrop = None,
                    fused: bool = True, max_side: int = RASTER_MAX_SIDE, workers: int | None = None
                    ) -> PictureRasters:
    """What the (c) pictures of ``view`` draw (LINEAR, CLAMP_TO_EDGE), about twice as fast as
    :func:`reconstruction_rasters`: every pixel centre is sampled in both paths by
    :func:`~layout_solver.reconstruct.grid.sample_grid_near` (within
    :data:`~layout_solver.reconstruct.grid.NEAR_BOUND` of the exact sampler), the reduced
    pixels of the reconstruction exactly, and the blocks that may hold the largest error
    again exactly, so ``max_error`` is :func:`reconstruction_rasters`' bit for bit."""
    W, H = plan.scenario.framebuffer
    # the subsampled path only: the expanded image is built a band of rows at a time as the
    # sampling reaches them (_Expanded), never whole
    bins = render_bins(plan, view)
    rec = subsampled_path(plan, layout, view, bins, drop_apron=drop_apron, keep_stored=False)
    k = raster_factor((W, H), max_side)
    c = k // 2
    recon = np.full((len(range(c, H, k)), len(range(c, W, k))), np.nan)
    grid = _Grid.build((W, H), layout, view if plan.scenario.fdm_layers > 1 else None, rec.ubo, fused,
                       rec.subsampled, _Expanded((W, H), bins))
    n = _workers() if workers is None else max(1, min(workers, os.cpu_count() or 1))

    def work(i: int) -> FloatArray:
        err = np.full((-(-H // k), -(-W // k)), np.nan)
        for x0, y0, x1, y1, m, xa, ya, tx, ty, band, row0 in grid.blocks(part=(i, n)):
            e = sample_grid_near(rec.subsampled, tx[x0 - xa:x1 - xa], ty[y0 - ya:y1 - ya], dedup=False)
            e -= sample_grid_near(band, grid.ref_tx[x0:x1], grid.ref_ty[y0:y1], height=H, row0=row0)
            np.abs(e, out=e)
            if not m.all():
                e[~m] = np.nan
            # the reduced grid's pixels in the block, sampled exactly
            fx, fy = -(-(x0 - c) // k) * k + c, -(-(y0 - c) // k) * k + c
            if fx < x1 and fy < y1:
                r = sample_grid(rec.subsampled, tx[fx - xa:x1 - xa:k], ty[fy - ya:y1 - ya:k], "linear",
                                "clamp_to_edge")
                r[~m[fy - y0::k, fx - x0::k]] = np.nan
                recon[fy // k:(y1 - 1 - c) // k + 1, fx // k:(x1 - 1 - c) // k + 1] = r
            _reduce_max(err, e, x0, y0, k)
        return err

    if n == 1:
        parts = [work(0)]
    else:
        with ThreadPoolExecutor(n) as pool:
            parts = list(pool.map(work, range(n)))
    err = parts[0]
    for e2 in parts[1:]:
        np.fmax(err, e2, out=err)
    near = ~np.isnan(err)
    worst = 0.0
    if not np.isnan(err).all():
        # every block whose exact largest error may be the largest, exactly
        top = float(np.nanmax(err))
        ys, xs = np.nonzero(err >= top - 2 * PICTURE_SLACK)
        exact = _exact_blocks(grid, k, ys, xs)
        err[ys, xs] = exact
        near[ys, xs] = False
        worst = float(np.nanmax(exact))
    return PictureRasters(factor=k, value_range=value_range(bins), subsampled=rec.subsampled[c::k, c::k],
                          reconstructed=recon, error=err, near=near, max_error=worst,
                          exact=lambda rows, cols: _exact_blocks(grid, k, rows, cols))
