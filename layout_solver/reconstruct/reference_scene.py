"""The reference scene of the CPU reconstruction: a deterministic procedural single-channel
image of continuous framebuffer coordinates (smooth gradients plus a disc, a stripe and a thin
diagonal line), values in [0, 1].  Every rendered fragment is coloured with it
(:mod:`layout_solver.reconstruct.render`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._types import FloatArray, Pair


def scene(x: npt.ArrayLike, y: npt.ArrayLike, fb_size: Pair) -> FloatArray:
    """The reference scene at framebuffer positions ``(x, y)`` (any shape, float64 result in
    [0, 1]): a smooth gradient, a disc (sharp circular edge), a vertical stripe and a thin
    diagonal line, in coordinates normalized by the framebuffer size."""
    a = np.asarray(x, dtype=np.float64) / fb_size[0]
    b = np.asarray(y, dtype=np.float64) / fb_size[1]
    v = 0.45 + 0.2 * np.sin(2 * np.pi * (1.3 * a + 0.4 * b)) + 0.1 * np.cos(2 * np.pi * 2.1 * b) * a
    v = v + 0.25 * (((a - 0.62) ** 2 + (b - 0.41) ** 2) < 0.17 ** 2)
    v = v - 0.15 * ((a >= 0.30) & (a < 0.33))
    v = v + 0.2 * (np.abs(a - b + 0.1) < 0.004)
    return np.clip(v, 0.0, 1.0)


#: slack on the real-valued bounds by which :func:`scene_grid` leaves out a term whose test
#: fails everywhere in a bin (the float64 operations of :func:`scene` are within 1e-15 of them)
_SLACK = 1e-9


def scene_grid(xs: npt.ArrayLike, ys: npt.ArrayLike, fb_size: Pair) -> FloatArray:
    """``scene(xs[None, :], ys[:, None], fb_size)`` bit for bit, about twice as fast (every
    fragment of a view is coloured with it: 5 million on vr3840): the same float64 operations
    on the same values in the same order, in place instead of in new arrays; the disc, stripe
    and line terms (an add of 0.25, -0.15 or 0.2 where a test holds, else of 0: the sum is
    positive, so adding 0 leaves it as it is) only where their test can hold - the disc's on
    the rows and columns whose own square is under the radius's (adding the other, non-negative
    square rounds to no less), the stripe's on its columns, the line's only in a bin that the
    real-valued band of width 0.008 crosses (within :data:`_SLACK`)."""
    a = np.asarray(xs, dtype=np.float64)[None, :] / fb_size[0]
    b = np.asarray(ys, dtype=np.float64)[:, None] / fb_size[1]
    v = 1.3 * a + 0.4 * b
    v *= 2 * np.pi
    np.sin(v, out=v)
    v *= 0.2
    v += 0.45
    v += 0.1 * np.cos(2 * np.pi * 2.1 * b) * a
    da, db = (a - 0.62) ** 2, (b - 0.41) ** 2
    r = 0.17 ** 2
    cols, rows = np.flatnonzero(da[0] < r), np.flatnonzero(db[:, 0] < r)
    if len(cols) and len(rows):
        # the disc's columns and rows are runs (the squares fall then rise): slices, not gathers
        ys_, xs_ = slice(int(rows[0]), int(rows[-1]) + 1), slice(int(cols[0]), int(cols[-1]) + 1)
        sub = v[ys_, xs_]
        np.add(sub, 0.25, out=sub, where=(da[:, xs_] + db[ys_]) < r)
    stripe = np.flatnonzero((a[0] >= 0.30) & (a[0] < 0.33))
    if len(stripe):
        sub = v[:, int(stripe[0]):int(stripe[-1]) + 1]
        np.subtract(sub, 0.15, out=sub, where=((a >= 0.30) & (a < 0.33))[:, int(stripe[0]):int(stripe[-1]) + 1])
    lo = float(a.min()) - float(b.max()) + 0.1
    hi = float(a.max()) - float(b.min()) + 0.1
    if lo < 0.004 + _SLACK and hi > -0.004 - _SLACK:
        np.add(v, 0.2, out=v, where=np.abs(a - b + 0.1) < 0.004)
    return np.clip(v, 0.0, 1.0, out=v)
