"""Both paths sampled at every framebuffer pixel centre, block by block, in bounded memory.

:func:`sample_both` samples scattered points: every point goes through the whole shader
transform and four gathers.  At pixel centres the work separates: the normalized coordinate
``u = float32((x + 0.5) / W)`` depends on the column only and ``v`` on the row only, so the
header's bin lookup ``f2u16(u * hdr.scale + hdr.offset)`` gives one metadata bin column per
pixel column and one bin row per pixel row, and inside one metadata bin ``u' = u * bin.scale +
bin.offset`` is again a function of the column alone.  :func:`pixel_blocks` therefore runs the
float32 transform (:func:`~layout_solver.reconstruct.ffma_np`, bit for bit the scalar model) on
``W + H`` coordinates per metadata bin row and column instead of ``W * H``, and the sampler on
one block of at most :data:`BLOCK` x :data:`BLOCK` pixels at a time (:func:`sample_grid`: the
same float64 operations, in the same order, as :func:`~layout_solver.reconstruct.sample`, on
the outer product of a row of texel x and a column of texel y coordinates).  The values are
identical to :func:`sample_both` at the same points (tested), and so are the refusals: a
rendered pixel whose bin coordinate ``f2u16`` leaves undefined raises
:class:`~turnip_base.errors.DriverAssertion`, one that reads an unwritten metadata slot
:class:`~layout_solver.metadata.UndefinedMetadataRead`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from turnip_base.errors import DriverAssertion

from ..metadata import LAYER_VEC4S, UndefinedMetadataRead, Vec4, layer_header
from ..options import Addressing, Filter, as_addressing, as_filter
from ..solver import SubsampledLayout
from ._types import BoolArray, F32Array, FloatArray, IntArray, Pair
from .render import EMPTY, RenderedBin, expanded_coverage, expanded_rows
from .sampler import BORDER
from .transform import ffma_np
from .view import ViewReconstruction

#: the largest block side (pixels) sampled at once: about a dozen float64 temporaries of
#: ``BLOCK * BLOCK`` values (0.5 MiB each) live at a time, whatever the framebuffer size
BLOCK = 256


@attrs.frozen(eq=False, kw_only=True)
class PixelBlock:
    """Both paths sampled at the pixel centres ``[x0, x1) x [y0, y1)`` (float64, NaN where no
    tile rendered for the view: not sampled)."""

    x0: int
    y0: int
    x1: int
    y1: int
    subsampled: FloatArray    # the subsampled image sampled through the metadata
    expanded: FloatArray      # the expanded image sampled at the same normalized coordinates


def _runs(keys: IntArray) -> list[tuple[int, int, int]]:
    """``(key, start, end)`` of the maximal runs of equal values of ``keys``."""
    if len(keys) == 0:
        return []
    cuts = np.flatnonzero(np.diff(keys)) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [len(keys)]])
    return [(int(keys[s]), int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


def _gather(image: F32Array, i: IntArray, j: IntArray, h: int, row0: int = 0
            ) -> tuple[F32Array, F32Array, F32Array, F32Array]:
    """The four texels ``(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)`` of every (row ``j``,
    column ``i``) pair, indices clamped to an image of ``h`` rows whose rows ``row0, ...``
    ``image`` holds (float32, as stored): two row gathers of the column span, then four column
    picks."""
    w = image.shape[1]
    i0c, i1c = np.clip(i, 0, w - 1), np.clip(i + 1, 0, w - 1)
    lo = int(i0c.min())
    span = image[:, lo:int(i1c.max()) + 1]
    r0, r1 = span[np.clip(j, 0, h - 1) - row0], span[np.clip(j + 1, 0, h - 1) - row0]
    c0, c1 = i0c - lo, i1c - lo
    return r0[:, c0], r0[:, c1], r1[:, c0], r1[:, c1]


def _bordered(val: F32Array, i: IntArray, j: IntArray, w: int, h: int, border: float) -> FloatArray:
    """CLAMP_TO_BORDER: ``val`` where texel ``(i, j)`` lies inside the image, else ``border``."""
    inside = ((j >= 0) & (j < h))[:, None] & ((i >= 0) & (i < w))[None, :]
    return np.where(inside, val.astype(np.float64), border)


def sample_grid(image: F32Array, tx: FloatArray, ty: FloatArray, filter: Filter, addressing: Addressing,
                border: float = BORDER, *, height: int | None = None, row0: int = 0) -> FloatArray:
    """:func:`~layout_solver.reconstruct.sample` at every point of the grid ``ty x tx``
    (texel coordinates: a row ``tx`` and a column ``ty``), ``len(ty) x len(tx)`` float64: the
    same operations on the same values, so bit for bit the scattered sampler's results (a
    float32 texel times a float64 weight is the product of the texel converted to float64).
    ``height``, ``row0``: ``image`` is the band of rows ``row0, ...`` of an image of ``height``
    rows (it must hold every row the samples read; the clamping is the whole image's)."""
    filter = as_filter(filter)
    addressing = as_addressing(addressing)
    w = image.shape[1]
    h = image.shape[0] if height is None else height
    if filter == "nearest":
        i, j = np.floor(tx).astype(np.int64), np.floor(ty).astype(np.int64)
        ic, jc = np.clip(i, 0, w - 1), np.clip(j, 0, h - 1)
        lo = int(ic.min())
        val = image[jc - row0, lo:int(ic.max()) + 1][:, ic - lo]
        if addressing == "clamp_to_edge":
            return val.astype(np.float64)
        return _bordered(val, i, j, w, h, border)
    x, y = tx - 0.5, ty - 0.5
    fi0, fj0 = np.floor(x), np.floor(y)
    a, b = (x - fi0)[None, :], (y - fj0)[:, None]
    i0, j0 = fi0.astype(np.int64), fj0.astype(np.int64)
    texels: list[npt.NDArray[np.floating[Any]]] = list(_gather(image, i0, j0, h, row0))
    if addressing == "clamp_to_border":
        texels = [_bordered(t, i0 + di, j0 + dj, w, h, border)
                  for t, (di, dj) in zip(texels, ((0, 0), (1, 0), (0, 1), (1, 1)), strict=True)]
    t00, t10, t01, t11 = texels
    # (1 - a) * (1 - b) * t00 + ..., evaluated left to right as the scattered sampler does
    # (each weight rounded, times the texel, added in order), in two buffers
    oma, omb = 1 - a, 1 - b
    out = oma * omb
    out *= t00
    tmp = a * omb
    tmp *= t10
    out += tmp
    np.multiply(oma, b, out=tmp)
    tmp *= t01
    out += tmp
    np.multiply(a, b, out=tmp)
    tmp *= t11
    out += tmp
    return out


def _bin_coordinate(c32: F32Array, scale: float, offset: float, fused: bool, used: BoolArray) -> IntArray:
    """``f2u16(c * scale + offset)`` per coordinate (-1 where undefined); raises where a
    coordinate of a rendered pixel (``used``) is undefined, as the scattered transform does."""
    f = ffma_np(c32, scale, offset, fused)
    ok = (f >= 0) & (f < 65536)
    if np.any(used & ~ok):
        raise DriverAssertion("f2u16", "is undefined outside [0, 65536), and a bin coordinate lies there")
    return np.where(ok, f, -1).astype(np.int64)


@attrs.frozen(eq=False)
class _Expanded:
    """The non-subsampled path's image as the sampling reads it, a band of rows at a time:
    the whole image (``image``), or built band by band from the rendered bins
    (:func:`~layout_solver.reconstruct.render.expanded_rows`, the same values) so that no
    framebuffer-sized array is made (issue 22: a fresh page costs about 2 ms per MB on the
    2-CPU machine, and a view's two children would each fault in 59 MB more)."""

    fb: Pair
    bins: tuple[RenderedBin, ...]
    image: F32Array | None = None

    def rows(self, y0: int, y1: int) -> tuple[F32Array, int]:
        """An array holding at least rows ``[y0, y1)``, and the row it starts at."""
        if self.image is not None:
            return self.image, 0
        return expanded_rows(self.fb, self.bins, y0, y1), y0

    def coverage(self) -> tuple[BoolArray, BoolArray]:
        """Whether any pixel of each column, each row, was rendered."""
        if self.image is not None:
            rendered = self.image != EMPTY
            return rendered.any(axis=0), rendered.any(axis=1)
        return expanded_coverage(self.fb, self.bins)


#: a metadata bin's pixels ``[xa, xb) x [ya, yb)`` with a rendered one: ``(xa, xb, ya, yb,
#: rendered mask, tx, ty, expanded band, its first row)``
Region = tuple[int, int, int, int, BoolArray, FloatArray, FloatArray, F32Array, int]
#: one block of :meth:`_Grid.blocks`: ``(x0, y0, x1, y1, rendered mask, xa, ya, tx, ty, band, row0)``
Block = tuple[int, int, int, int, BoolArray, int, int, FloatArray, FloatArray, F32Array, int]


@attrs.frozen(eq=False)
class _Grid:
    """What :func:`pixel_blocks` prepares once per view: the normalized coordinates of every
    pixel column and row, the metadata bin column of every pixel column and row (refusing, as
    the scattered transform does, where a rendered pixel's bin coordinate is undefined), the
    bin slots and the reference path's texel coordinates; both images (the expanded one as
    bands of rows, :class:`_Expanded`)."""

    fb: Pair
    size0: Pair
    fused: bool
    subsampled: F32Array
    expanded: _Expanded
    u: F32Array
    v: F32Array
    bx: IntArray
    by: IntArray
    slots: tuple[Any, ...]
    stride: int
    ref_tx: FloatArray
    ref_ty: FloatArray

    @classmethod
    def of(cls, rec: ViewReconstruction) -> _Grid:
        fb = rec.plan.scenario.framebuffer
        return cls.build(fb, rec.layout, rec.layer, rec.ubo, rec.fused, rec.subsampled,
                         _Expanded(fb, rec.bins, rec.expanded))

    @classmethod
    def build(cls, fb: Pair, layout: SubsampledLayout, layer: int | None, ubo: tuple[Vec4 | None, ...], fused: bool,
              subsampled: F32Array, expanded: _Expanded) -> _Grid:
        W, H = fb
        u = ((np.arange(W) + 0.5) / W).astype(np.float32)
        v = ((np.arange(H) + 0.5) / H).astype(np.float32)
        cols, rows = expanded.coverage()
        z = layer or 0
        hdr, stride = layer_header(ubo, z)
        base = z * LAYER_VEC4S
        slots = ubo[base + 2:base + LAYER_VEC4S]
        bx = _bin_coordinate(u, float(hdr[0]), float(hdr[2]), fused, cols)
        by = _bin_coordinate(v, float(hdr[1]), float(hdr[3]), fused, rows)
        return cls((W, H), (layout.width0, layout.height0), fused, subsampled, expanded, u, v, bx, by, tuple(slots),
                   stride, u.astype(np.float64) * W, v.astype(np.float64) * H)

    def band(self, ya: int, yb: int) -> tuple[F32Array, int]:
        """The expanded image's rows that pixel rows ``[ya, yb)`` read at ``ref_ty`` (LINEAR:
        ``floor(ty - 0.5)`` and the row after, clamped; NEAREST's ``floor(ty)`` lies between)
        and rows ``[ya, yb)`` themselves (their rendered mask), and its first row."""
        H = self.fb[1]
        lo = min(max(int(np.floor(self.ref_ty[ya] - 0.5)), 0), ya)
        hi = max(min(int(np.floor(self.ref_ty[yb - 1] - 0.5)) + 2, H), yb)
        return self.expanded.rows(lo, hi)

    def regions(self, part: tuple[int, int] = (0, 1), cols: tuple[int, int] | None = None,
                rows: tuple[int, int] | None = None) -> Iterator[Region]:
        """``(xa, xb, ya, yb, rendered, tx, ty, band, row0)`` of every metadata bin's pixels
        ``[xa, xb) x [ya, yb)`` with a rendered pixel (inside ``cols`` x ``rows`` when given):
        the rendered mask there, the subsampled image's texel coordinates of those columns and
        rows, and the expanded image's rows they read (``band`` from row ``row0``: one band per
        bin row).  ``part = (i, n)``: only the bin rows ``i, i + n, ...`` (of the whole
        framebuffer's)."""
        cx0, cx1 = cols if cols is not None else (0, len(self.bx))
        cy0, cy1 = rows if rows is not None else (0, len(self.by))
        w0, h0 = self.size0
        col_runs = _runs(self.bx[cx0:cx1])
        # a bin's texel coordinates depend on its columns (rows) and its slot's x (y) scale and
        # offset only, which many bins share (vr3840: 53 and 59 distinct of 336 bins): each
        # computed once (the same arrays, never written)
        txs: dict[tuple[int, int, Any, Any], FloatArray] = {}
        tys: dict[tuple[int, int, Any, Any], FloatArray] = {}
        for cy, ya, yb in _runs(self.by[cy0:cy1])[part[0]::part[1]]:
            ya, yb = ya + cy0, yb + cy0
            if cy < 0:
                continue
            band, row0 = self.band(ya, yb)
            for cx, xa, xb in col_runs:
                xa, xb = xa + cx0, xb + cx0
                mask = band[ya - row0:yb - row0, xa:xb] != EMPTY
                if cx < 0 or not mask.any():
                    continue
                idx = cy * self.stride + cx
                bd = self.slots[idx] if idx < len(self.slots) else None
                if bd is None:
                    raise UndefinedMetadataRead("tu_get_subsampled_coordinates",
                                                "reads only written metadata, but a bin slot that was never "
                                                "written is read")
                tx = txs.get((xa, xb, bd[0], bd[2]))
                if tx is None:
                    tx = txs[xa, xb, bd[0], bd[2]] = ffma_np(self.u[xa:xb], bd[0], bd[2], self.fused
                                                             ).astype(np.float64) * w0
                ty = tys.get((ya, yb, bd[1], bd[3]))
                if ty is None:
                    ty = tys[ya, yb, bd[1], bd[3]] = ffma_np(self.v[ya:yb], bd[1], bd[3], self.fused
                                                             ).astype(np.float64) * h0
                yield xa, xb, ya, yb, mask, tx, ty, band, row0

    def blocks(self, part: tuple[int, int] = (0, 1), block: int = BLOCK) -> Iterator[Block]:
        """``(x0, y0, x1, y1, rendered, xa, ya, tx, ty, band, row0)`` of every block of at most
        ``block`` x ``block`` pixels ``[x0, x1) x [y0, y1)`` inside one bin of :meth:`regions`
        (``part``) with a rendered pixel: the block's rendered mask, its bin's start and texel
        coordinates (``tx``, ``ty`` of the bin, indexed from ``xa``, ``ya``) and the expanded
        rows of its bin row."""
        for xa, xb, ya, yb, mask, tx, ty, band, row0 in self.regions(part):
            for y0 in range(ya, yb, block):
                y1 = min(y0 + block, yb)
                for x0 in range(xa, xb, block):
                    x1 = min(x0 + block, xb)
                    m = mask[y0 - ya:y1 - ya, x0 - xa:x1 - xa]
                    if m.any():
                        yield x0, y0, x1, y1, m, xa, ya, tx, ty, band, row0


def pixel_blocks(rec: ViewReconstruction, filter: Filter, addressing: Addressing, border: float = BORDER,
                 block: int = BLOCK, part: tuple[int, int] = (0, 1)) -> Iterator[PixelBlock]:
    """Both paths of ``rec`` sampled at every pixel centre where a tile rendered for the view,
    as blocks of at most ``block`` x ``block`` pixels inside one metadata bin (blocks without a
    rendered pixel are left out).  Values: those of :func:`~layout_solver.reconstruct.sample_both`
    at the same points.  ``part = (i, n)``: only the metadata bin rows ``i, i + n, i + 2n, ...``
    (``n`` workers share a view)."""
    filter = as_filter(filter)
    addressing = as_addressing(addressing)
    g = _Grid.of(rec)
    H = g.fb[1]
    for x0, y0, x1, y1, m, xa, ya, tx, ty, band, row0 in g.blocks(part, block):
        a = sample_grid(rec.subsampled, tx[x0 - xa:x1 - xa], ty[y0 - ya:y1 - ya], filter, addressing, border)
        b = sample_grid(band, g.ref_tx[x0:x1], g.ref_ty[y0:y1], filter, addressing, border, height=H, row0=row0)
        if not m.all():
            a[~m] = np.nan
            b[~m] = np.nan
        yield PixelBlock(x0=x0, y0=y0, x1=x1, y1=y1, subsampled=a, expanded=b)


#: a bound on how far :func:`sample_grid_near` lies from :func:`sample_grid` (LINEAR,
#: CLAMP_TO_EDGE) on texels in [-1, 1], and so half a bound on the error of the difference
#: of two: the exact sampler rounds each of its four weights, each product and three sums
#: (6 roundings of at most 2**-53 times a magnitude of at most 1.01, with the weights'
#: sum within 2**-52 of 1), the separable one two products and a sum per direction (4 of
#: them, plus the first direction's error carried through weights of sum 1): together under
#: 12 * 2**-53 = 1.4e-15; the bound is taken a thousand times larger
NEAR_BOUND = 1e-12


def _distinct_rows(rows: F32Array) -> tuple[F32Array, IntArray]:
    """``rows`` without the rows equal to the one before them, and where each row went."""
    if len(rows) <= 1:
        return rows, np.zeros(len(rows), dtype=np.int64)
    change = np.any(rows[1:] != rows[:-1], axis=1)
    where = np.concatenate([[0], np.cumsum(change)])
    return rows[np.concatenate([[True], change])], where


def sample_grid_near(image: F32Array, tx: FloatArray, ty: FloatArray, *, height: int | None = None,
                     row0: int = 0, dedup: bool = True) -> FloatArray:
    """:func:`sample_grid` with LINEAR and CLAMP_TO_EDGE, to within :data:`NEAR_BOUND`, about
    twice as fast: the same weights and texels, interpolated along x on the distinct texel
    rows read, then along y (instead of four weights and four gathers per point); a point whose
    two texel rows hold the same values takes the x interpolation of that row as it is (their
    blend with weights of sum 1, to within the same bound).  For pictures whose values are
    quantised; never a result of the model.  ``height``, ``row0``: as :func:`sample_grid`'s.
    ``dedup=False``: every texel row read counts as distinct (equal rows are blended, within
    the same bound) - for an image whose adjacent rows seldom repeat (the subsampled one: the
    comparison would cost more than it saves; the expanded one repeats each row ``fh`` times)."""
    w = image.shape[1]
    h = image.shape[0] if height is None else height
    x, y = tx - 0.5, ty - 0.5
    fi0, fj0 = np.floor(x), np.floor(y)
    a, b = x - fi0, y - fj0
    i0, j0 = fi0.astype(np.int64), fj0.astype(np.int64)
    i0c, i1c = np.minimum(np.maximum(i0, 0), w - 1), np.minimum(np.maximum(i0 + 1, 0), w - 1)
    r0, r1 = np.minimum(np.maximum(j0, 0), h - 1), np.minimum(np.maximum(j0 + 1, 0), h - 1)
    rlo, rhi = int(r0.min()), int(r1.max())
    clo, chi = int(i0c.min()), int(i1c.max())
    window = image[rlo - row0:rhi - row0 + 1, clo:chi + 1]
    rows, where = _distinct_rows(window) if dedup else (window, np.arange(len(window)))
    along_x = (1 - a) * rows[:, i0c - clo]
    tmp = a * rows[:, i1c - clo]
    along_x += tmp
    w0, w1 = where[r0 - rlo], where[r1 - rlo]
    blend = np.flatnonzero(w0 != w1)
    out: FloatArray
    if 2 * len(blend) > len(w0):   # most rows blend: all of them, in two buffers
        out = (1 - b)[:, None] * along_x[w0]
        out += b[:, None] * along_x[w1]
        return out
    out = along_x[w0]
    if len(blend):
        bb = b[blend][:, None]
        part = (1 - bb) * out[blend]
        part += bb * along_x[w1[blend]]
        out[blend] = part
    return out
