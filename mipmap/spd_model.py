"""Invocation-level model of the single-pass downsampler (shaders/spd.glsl).

One dispatch of ceil(w/64) x ceil(h/64) workgroups of 256 invocations. Workgroup (gx, gy)
owns the 64x64 tile at (64 gx, 64 gy) of level 0 and makes levels 1 .. min(6, mips) of it
with tiled_model's :func:`~mipmap.tiled_model.tile64_pass` (subgroup shuffles or shared
memory).

Hand-off: after its last store invocation 0 of every workgroup (the one that stored the
workgroup's level-6 texel) makes its writes visible (``memoryBarrierImage``) and adds 1 to
a global counter.
The workgroup that read ``workgroups - 1`` is the last one; it alone goes on and reduces
the (at most 64x64) level 6 as one tile to levels 7..mips. There is no spin-wait.

Documented behaviour, modelled exactly:

* odd sizes: level k+1 texel (x, y) is the mean of level-k texels (2x, 2y) .. (2x+1, 2y+1),
  so an odd last row or column is dropped (7x4 -> 3x2 from the 6x4 sub-region);
* an axis that has reached 1 is repeated (reads clamp to the edge) rather than read as 0;
* at most 4096 x 4096 (12 levels): beyond it the last workgroup would need a 128x128 tile.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .formats import F32Array, Format, Texels, decode, encode
from .plan import SPD_LOCAL, SPD_TILE, SpdPlan, spd_plan
from .reference import level_sizes, stored_chain
from .tiled_model import DEFAULT_DEVICE, Device, IntArray, Lanes, Machine, Trace, empty_chain, reduce4, tile64_pass


def spd_reduce(a: F32Array) -> F32Array:
    """SPD's rule for one level: 2x2 means at (2x, 2y), reads clamped to the edge."""
    h, w = a.shape[:2]
    h1, w1 = max(1, h >> 1), max(1, w >> 1)
    xs = np.arange(w1)
    ys = np.arange(h1)
    x0, x1 = 2 * xs, np.minimum(2 * xs + 1, w - 1)
    y0, y1 = 2 * ys, np.minimum(2 * ys + 1, h - 1)

    def g(yy: IntArray, xx: IntArray) -> F32Array:
        texels: F32Array = a[yy][:, xx]
        return texels

    return reduce4(g(y0, x0), g(y0, x1), g(y1, x0), g(y1, x1))


def spd_reference(level0: Texels, fmt: Format) -> list[Texels]:
    """SPD's chain defined level by level (no tiles, no invocations)."""
    spd_plan(level0.shape[1], level0.shape[0])
    return stored_chain(level0, fmt, reduce=spd_reduce)


def _main_lanes(plan: SpdPlan) -> Lanes:
    gid = np.arange(plan.workgroups * SPD_LOCAL)
    wg = gid // SPD_LOCAL
    return Lanes(gid, wg, gid % SPD_LOCAL, gid % SPD_LOCAL, (wg % plan.groups_x) * SPD_TILE,
                 (wg // plan.groups_x) * SPD_TILE, np.ones(len(gid), bool))


def spd_chain(level0: Texels, fmt: Format, device: Device = DEFAULT_DEVICE, arrival: Iterable[int] | None = None,
              trace: bool = False, split: bool = False) -> tuple[list[Texels], Trace | None, int]:
    """Run the downsampler on stored level-0 texels.

    ``arrival`` is the order in which workgroups reach the counter (default: index order).
    ``split`` (``spd-split``): no counter; the levels from 6 on are made by the one workgroup of a
    second dispatch (invocation ids from 0), the same tile64 pass on the same level 6.
    Returns the stored levels, the trace and the index of the workgroup that ran the tail
    (-1 with ``split``: a dispatch of its own).
    """
    level0 = np.asarray(level0)
    h, w = level0.shape[:2]
    plan = spd_plan(w, h)
    values = empty_chain(decode(level0, fmt))
    tr = Trace(level_sizes(w, h)) if trace else None
    m = Machine(values, fmt, tr)
    last = -1
    if plan.mips:
        tile64_pass(m, _main_lanes(plan), 0, plan.main_levels, device)
        order = list(range(plan.workgroups)) if arrival is None else list(arrival)
        counter = 0
        for wg in order if not split else ():  # invocation 0 of each workgroup: atomicAdd(counter, 1)
            if counter == plan.workgroups - 1:
                last = wg
            counter += 1
        if plan.tail_levels:
            local = np.arange(SPD_LOCAL)
            zero = np.zeros(SPD_LOCAL, np.int64)
            wg = 0 if split else last
            lanes = Lanes(wg * SPD_LOCAL + local, zero + wg, local, local, zero, zero,
                          np.ones(SPD_LOCAL, bool))
            tile64_pass(m, lanes, 6, plan.tail_levels, device)
    return [level0] + [encode(v, fmt) for v in values[1:]], tr, last
