"""Running the apron blits of ``tu_calc_subsampled_aprons`` on a stored subsampled image
(docs/spec/turnip-fdm-spec.md §7.8).

:func:`apply_aprons` - the blits in order, NEAREST: each destination pixel centre maps linearly
into the float source rectangle and takes the texel containing that point (source reads
clamped to the image, destination clipped to it; both counted).  Blits can be dropped (a what-if:
a missing apron), and the pixels of a stored tile that an apron made for another tile writes
are reported as *contested* (:func:`owner_map` says which tile stored each pixel).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
import numpy as np
import numpy.typing as npt

from fdm.geometry import Rect
from turnip_base.errors import ScenarioError

from ..aprons import AprBlit, FRect
from ._types import BoolArray, F32Array, Pair

#: which aprons :func:`apply_aprons` leaves out: an index of the apron list, several, ``"all"``
#: or None (none)
ApronDrop = int | str | Iterable[int] | None


@attrs.frozen(kw_only=True)
class ApronStats:
    applied: int
    dropped: int
    dst_pixels_clipped: int     # destination pixels outside the image (the driver asserts)
    src_reads_clamped: int      # source texel reads outside the image, clamped to its edge
    dst_pixels_over_tiles: int  # destination pixels inside another tile's stored rectangle
    overwriting: tuple[int, ...] = ()   # indices of the aprons that write into another tile


def owner_map(shape: tuple[int, int], stored: Sequence[tuple[Pair, Rect]]) -> npt.NDArray[np.int32]:
    """Per image pixel: the index in ``stored`` of the tile whose rectangle holds it, or -1."""
    own = np.full(shape, -1, dtype=np.int32)
    for k, (_, r) in enumerate(stored):
        own[max(r.y, 0):max(r.y + r.h, 0), max(r.x, 0):max(r.x + r.w, 0)] = k
    return own


@attrs.frozen(eq=False)
class _StoredRects:
    """The stored rectangles clipped below at 0 (as :func:`owner_map` slices them), as arrays:
    ``x0, y0, x1, y1`` per stored tile, in order."""

    x0: npt.NDArray[np.int64]
    y0: npt.NDArray[np.int64]
    x1: npt.NDArray[np.int64]
    y1: npt.NDArray[np.int64]

    @classmethod
    def of(cls, stored: Sequence[tuple[Pair, Rect]]) -> _StoredRects:
        r = np.array([(x.x, x.y, x.x + x.w, x.y + x.h) for _, x in stored], dtype=np.int64).reshape(-1, 4)
        r = np.maximum(r, 0)
        return cls(r[:, 0], r[:, 1], r[:, 2], r[:, 3])


Bound = int | npt.NDArray[np.int64]


def _meets(r: _StoredRects, y0: Bound, y1: Bound, x0: Bound, x1: Bound) -> npt.NDArray[np.bool_]:
    """Which (non-empty) rectangles of ``r`` meet ``[y0, y1) x [x0, x1)`` (scalars, or columns
    of several regions: one row each)."""
    return (r.y0 < y1) & (r.y1 > y0) & (r.x0 < x1) & (r.x1 > x0) & (r.y1 > r.y0) & (r.x1 > r.x0)


def _owners(rects: _StoredRects, ys: slice, xs: slice) -> npt.NDArray[np.int32]:
    """:func:`owner_map` on the pixels ``[ys, xs]`` only (a later tile's rectangle wins where two
    overlap, as there)."""
    y0, y1, x0, x1 = ys.start, ys.stop, xs.start, xs.stop
    own = np.full((max(y1 - y0, 0), max(x1 - x0, 0)), -1, dtype=np.int32)
    if own.size == 0 or len(rects.x0) == 0:
        return own
    r = rects
    for k in np.flatnonzero(_meets(r, y0, y1, x0, x1)):
        own[max(r.y0[k], y0) - y0:min(r.y1[k], y1) - y0, max(r.x0[k], x0) - x0:min(r.x1[k], x1) - x0] = k
    return own


def _index(a: npt.NDArray[np.int64]) -> slice | npt.NDArray[np.int64]:
    """``a`` as a slice where it is a run of consecutive indices (a view instead of a gather)."""
    if len(a) and int(a[-1]) - int(a[0]) == len(a) - 1 and (len(a) < 3 or bool(np.all(np.diff(a) == 1))):
        return slice(int(a[0]), int(a[-1]) + 1)
    return a


def blit_nearest(image: F32Array, dst: Rect, src: FRect, writable: BoolArray | None = None) -> tuple[int, int]:
    """One NEAREST blit inside ``image`` (in place): destination pixel centre ``d + 0.5`` maps
    to ``s0 + (d + 0.5) * (s1 - s0) / dst_size`` and takes the texel containing it.  Only
    pixels where ``writable`` (image-shaped, optional) is true are written.  Returns
    ``(destination pixels clipped, source reads clamped)``."""
    if dst.w <= 0 or dst.h <= 0:
        return 0, 0
    h, w = image.shape
    sx0, sy0, sx1, sy1 = src
    # the destination pixels inside the image, and the source texel of each (the same values as
    # over the whole destination, restricted)
    ix0, ix1 = min(max(-dst.x, 0), dst.w), max(min(w - dst.x, dst.w), 0)
    iy0, iy1 = min(max(-dst.y, 0), dst.h), max(min(h - dst.y, dst.h), 0)
    nx, ny = max(ix1 - ix0, 0), max(iy1 - iy0, 0)
    clipped = dst.w * dst.h - nx * ny
    if nx == 0 or ny == 0:
        return clipped, 0
    sx = np.floor(sx0 + (np.arange(ix0, ix1) + 0.5) * ((sx1 - sx0) / dst.w)).astype(np.int64)
    sy = np.floor(sy0 + (np.arange(iy0, iy1) + 0.5) * ((sy1 - sy0) / dst.h)).astype(np.int64)
    # np.minimum/np.maximum: np.clip's values, without its Python wrapper (772 blits a view)
    sxc, syc = np.minimum(np.maximum(sx, 0), w - 1), np.minimum(np.maximum(sy, 0), h - 1)
    # pixels whose column or row read was clamped
    cx, cy = int(np.count_nonzero(sxc != sx)), int(np.count_nonzero(syc != sy))
    clamped = cx * ny + cy * nx - cx * cy
    rows, cols = slice(dst.y + iy0, dst.y + iy1), slice(dst.x + ix0, dst.x + ix1)
    srow, scol = _index(syc), _index(sxc)
    if isinstance(srow, slice):
        vals = image[srow][:, scol]
    else:
        vals = image[srow][:, scol] if isinstance(scol, slice) else image[np.ix_(srow, scol)]
    if writable is None:
        image[rows, cols] = vals
    else:
        m = writable[rows, cols]
        image[rows, cols] = np.where(m, vals, image[rows, cols])
    return clipped, clamped


def _dropped_set(n: int, drop: ApronDrop) -> set[int]:
    if drop is None:
        return set()
    if isinstance(drop, str):
        if drop != "all":
            raise ScenarioError("drop_apron", f"must be an index, indices, None or 'all', got {drop!r}")
        return set(range(n))
    if isinstance(drop, (int, np.integer)):
        return {int(drop)}
    return {int(i) for i in drop}


def apply_aprons(image: F32Array, aprons: Sequence[AprBlit], drop: ApronDrop = None, *,
                 stored: Sequence[tuple[Pair, Rect]] = (), protect_stored: bool = False, copy: bool = True
                 ) -> tuple[F32Array, ApronStats, BoolArray]:
    """A copy of ``image`` (``copy=False``: ``image`` itself) after the apron blits in order,
    skipping ``drop`` (an index of
    ``aprons``, several, or ``"all"``), the stats, and the *contested* pixels: those of a
    stored tile that an apron made for another tile writes.  ``stored``: ``(cell, rect)`` of
    the stored tiles (the driver writes contested pixels; ``protect_stored`` leaves them alone
    instead - not the driver, a what-if)."""
    out = image.copy() if copy else image
    skip = _dropped_set(len(aprons), drop)
    index = {cell: k for k, (cell, _) in enumerate(stored)}
    # the stored rectangles as arrays, for the owners of one apron's destination at a time
    # (owner_map of the whole image only for protect_stored)
    rects = _StoredRects.of(stored)
    own = owner_map((image.shape[0], image.shape[1]), stored) if protect_stored else None
    clipped = clamped = over = 0
    overwriting = []
    contested = np.zeros(image.shape, dtype=bool)
    h, w = image.shape
    # the destinations inside the image, and whether any stored rectangle meets each: most meet
    # none (a ring around their own tile), and then no pixel of theirs is another tile's (the
    # test of _owners, for every apron at once: 772 on a vr3840 view)
    dst = np.array([(max(a.dst.y, 0), min(max(a.dst.y + a.dst.h, 0), h), max(a.dst.x, 0),
                     min(max(a.dst.x + a.dst.w, 0), w)) for a in aprons], dtype=np.int64).reshape(-1, 4)
    meets: npt.NDArray[np.bool_] = np.zeros(len(aprons), dtype=bool)
    if len(rects.x0):
        meets = np.any(_meets(rects, dst[:, 0:1], dst[:, 1:2], dst[:, 2:3], dst[:, 3:4]), axis=1)
    for i, a in enumerate(aprons):
        if i in skip:
            continue
        foreign = 0
        if meets[i]:
            ys, xs = slice(int(dst[i, 0]), int(dst[i, 1])), slice(int(dst[i, 2]), int(dst[i, 3]))
            region = _owners(rects, ys, xs)
            hit = (region >= 0) & (region != index.get(a.dst_tile, -2))
            foreign = int(np.count_nonzero(hit))
        if foreign:
            # only then: the untouched pages of ``contested`` stay unallocated (np.zeros)
            contested[ys, xs] |= hit
            over += foreign
            overwriting.append(i)
        writable = None
        if own is not None and foreign:
            writable = (own < 0) | (own == index.get(a.dst_tile, -2))
        c, s = blit_nearest(out, a.dst, a.src, writable)
        clipped += c
        clamped += s
    applied = len(aprons) - len(skip & set(range(len(aprons))))
    stats = ApronStats(applied=applied, dropped=len(skip), dst_pixels_clipped=clipped, src_reads_clamped=clamped,
                       dst_pixels_over_tiles=over, overwriting=tuple(overwriting))
    return out, stats, contested
