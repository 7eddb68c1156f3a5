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

from fdm.errors import ScenarioError
from fdm.geometry import Rect

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


def _owners(rect: npt.NDArray[np.int64], ys: slice, xs: slice) -> npt.NDArray[np.int32]:
    """:func:`owner_map` on the pixels ``[ys, xs]`` only (``rect``: ``x0, y0, x1, y1`` per stored
    tile, in order: a later tile's rectangle wins where two overlap, as there)."""
    y0, y1, x0, x1 = ys.start, ys.stop, xs.start, xs.stop
    own = np.full((max(y1 - y0, 0), max(x1 - x0, 0)), -1, dtype=np.int32)
    if own.size == 0 or len(rect) == 0:
        return own
    ry0, ry1 = np.maximum(rect[:, 1], 0), np.maximum(rect[:, 3], 0)
    rx0, rx1 = np.maximum(rect[:, 0], 0), np.maximum(rect[:, 2], 0)
    for k in np.flatnonzero((ry0 < y1) & (ry1 > y0) & (rx0 < x1) & (rx1 > x0) & (ry1 > ry0) & (rx1 > rx0)):
        own[max(ry0[k], y0) - y0:min(ry1[k], y1) - y0, max(rx0[k], x0) - x0:min(rx1[k], x1) - x0] = k
    return own


def blit_nearest(image: F32Array, dst: Rect, src: FRect, writable: BoolArray | None = None) -> tuple[int, int]:
    """One NEAREST blit inside ``image`` (in place): destination pixel centre ``d + 0.5`` maps
    to ``s0 + (d + 0.5) * (s1 - s0) / dst_size`` and takes the texel containing it.  Only
    pixels where ``writable`` (image-shaped, optional) is true are written.  Returns
    ``(destination pixels clipped, source reads clamped)``."""
    if dst.w <= 0 or dst.h <= 0:
        return 0, 0
    h, w = image.shape
    sx0, sy0, sx1, sy1 = src
    sx = np.floor(sx0 + (np.arange(dst.w) + 0.5) * ((sx1 - sx0) / dst.w)).astype(np.int64)
    sy = np.floor(sy0 + (np.arange(dst.h) + 0.5) * ((sy1 - sy0) / dst.h)).astype(np.int64)
    dx = dst.x + np.arange(dst.w)
    dy = dst.y + np.arange(dst.h)
    okx, oky = (dx >= 0) & (dx < w), (dy >= 0) & (dy < h)
    clipped = dst.w * dst.h - int(okx.sum()) * int(oky.sum())
    sxc, syc = np.clip(sx, 0, w - 1), np.clip(sy, 0, h - 1)
    clamped = int(((sxc != sx)[None, :] | (syc != sy)[:, None])[np.ix_(oky, okx)].sum())
    rows, cols = np.ix_(dy[oky], dx[okx])
    vals = image[np.ix_(syc[oky], sxc[okx])]
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
                 stored: Sequence[tuple[Pair, Rect]] = (), protect_stored: bool = False
                 ) -> tuple[F32Array, ApronStats, BoolArray]:
    """A copy of ``image`` after the apron blits in order, skipping ``drop`` (an index of
    ``aprons``, several, or ``"all"``), the stats, and the *contested* pixels: those of a
    stored tile that an apron made for another tile writes.  ``stored``: ``(cell, rect)`` of
    the stored tiles (the driver writes contested pixels; ``protect_stored`` leaves them alone
    instead - not the driver, a what-if)."""
    out = image.copy()
    skip = _dropped_set(len(aprons), drop)
    index = {cell: k for k, (cell, _) in enumerate(stored)}
    # the stored rectangles as arrays, for the owners of one apron's destination at a time
    # (owner_map of the whole image only for protect_stored)
    rect = np.array([(r.x, r.y, r.x + r.w, r.y + r.h) for _, r in stored], dtype=np.int64).reshape(-1, 4)
    own = owner_map((image.shape[0], image.shape[1]), stored) if protect_stored else None
    clipped = clamped = over = 0
    overwriting = []
    contested = np.zeros(image.shape, dtype=bool)
    h, w = image.shape
    for i, a in enumerate(aprons):
        if i in skip:
            continue
        d = a.dst
        ys, xs = slice(max(d.y, 0), min(max(d.y + d.h, 0), h)), slice(max(d.x, 0), min(max(d.x + d.w, 0), w))
        region = _owners(rect, ys, xs)
        hit = (region >= 0) & (region != index.get(a.dst_tile, -2))
        contested[ys, xs] |= hit
        foreign = int(hit.sum())
        if foreign:
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
