"""Invocation-level model of the tiled generator's kernels (and the tile pass SPD shares).

Every invocation of a dispatch is a lane of a numpy vector: its global index ``gid``, its
workgroup, its local index, its team and its index ``i`` inside the team. The model runs
the same steps as ``shaders/tile.glsl`` and ``shaders/general.glsl`` in the same float32
operations, so the texels it writes are the texels the shader writes. A :class:`Trace`
records which invocation read and wrote each texel and how every reduction stage moved its
data (subgroup shuffle or shared memory).

Fast kernel (input sizes divisible by 2^M, 256-invocation workgroups):

* M <= 5: a team of 4^(M-1) invocations owns one 2^M x 2^M tile; tiles are numbered
  row-major and team t works on tile t; for M = 1 (a team of one, one level-L+1 texel each)
  the workgroup instead covers a 16 x 16 block of outputs, local index l at (l % 16, l / 16)
  of its block, the blocks row-major;
* invocation i of a team sits at ``morton(i)``: x takes bits 0, 2, 4, 6 of i and y bits
  1, 3, 5, 7, and reduces the 2x2 texels under its level-L+1 texel;
* stage s (step 4^s) combines the values of lanes i, i^step, i^2step, i^3step (right,
  below, below-right neighbours in Morton order) in lanes with ``i % (4 step) == 0``,
  through ``subgroupShuffleXor`` when 4 step <= the subgroup size (and shuffles are
  supported), otherwise through shared memory and a workgroup barrier;
* M = 6: each workgroup owns a 64 x 64 tile (:func:`tile64_pass`, shared with the
  single-pass downsampler): invocation l makes texel morton(l) of each 16 x 16 quadrant of
  level L+1, lane l & 3 of each group of four makes its quadrant's texel of L+2, L+3 is an
  xor stage over l ^ 4, 8, 12, and the level-L+3 texels are gathered in shared memory:
  with shuffles (subgroups of 16 or more) lanes 0..15 make L+4 from there and L+5, L+6 by
  xor stages among themselves, otherwise the first 16, 4 and 1 invocations make L+4, L+5,
  L+6 from shared memory, a barrier per level.

General kernel (any size, 128-invocation workgroups): M = 1 is one invocation per output
texel; M = 2 gives each workgroup an 8x8 tile of L+2, for which it computes the up to
17x17 texels of L+1 under it (neighbouring tiles overlap by one texel of L+1 and three
of L; the overlap is computed, and stored, twice with the same value), keeps them in
shared memory and, after a barrier, reduces them with 64 invocations.

Tail (last-workgroup continuation, ``Dispatch.tail_levels``): after its main pass every
workgroup makes its stores visible and adds 1 to a counter; the one that reads
``workgroups - 1`` (in the model: the last of the grid, workgroups arriving in index
order) makes the remaining levels one at a time, invocation ``local`` computing outputs
``local, local + local_size, ...`` of each level in row-major order with the general
filter.

Every 2x2 reduction is ``((TL + BL) * 0.5 + (TR + BR) * 0.5) * 0.5``: the vertical pass
first, as in the reference. Reads are clamped to the level's bounds and a partner past the
right or bottom edge is replaced by its left or upper neighbour (this only happens in the
single-pass downsampler, whose sizes need not divide).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .formats import F32, F32Array, Format, Texels, decode, encode
from .plan import FAST_LOCAL, GENERAL_LOCAL, GENERAL_TILE, Dispatch, tiled_plan
from .reference import axis_weights, level_sizes

GENERAL_SHARED = 2 * GENERAL_TILE + 1  # 17: the L+1 tile edge of the general M = 2 kernel

#: one integer per lane (indices, coordinates)
IntArray = NDArray[np.integer[Any]]
#: one flag per lane
BoolArray = NDArray[np.bool_]
#: how a reduction stage moves data between lanes
#: (gather: the writers of a level read their four children from a tile in shared memory)
Mechanism = Literal["shuffle", "shared", "gather"]
#: a reduction stage of a trace: (level written, mechanism, the three xor masks)
Stage = tuple[int, Mechanism, tuple[int, int, int]]


def morton_decode(i: ArrayLike) -> tuple[IntArray, IntArray]:
    """x from bits 0, 2, 4, 6 and y from bits 1, 3, 5, 7 of i."""
    a: IntArray = np.asarray(i)
    x = np.zeros_like(a)
    y = np.zeros_like(a)
    for b in range(4):
        x |= ((a >> (2 * b)) & 1) << b
        y |= ((a >> (2 * b + 1)) & 1) << b
    return x, y


@attrs.define
class Trace:
    """Which invocation touched each texel. One int array per level, shaped like the level."""
    sizes: list[tuple[int, int]]
    writes: list[NDArray[np.int64]] = attrs.field(init=False)
    writer: list[NDArray[np.int64]] = attrs.field(init=False)
    reads: list[NDArray[np.int64]] = attrs.field(init=False)
    stages: list[Stage] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        self.writes = [np.zeros((h, w), np.int64) for w, h in self.sizes]
        self.writer = [np.full((h, w), -1, np.int64) for w, h in self.sizes]
        self.reads = [np.zeros((h, w), np.int64) for w, h in self.sizes]

    def read(self, level: int, x: IntArray, y: IntArray, gid: IntArray, mask: BoolArray) -> None:
        np.add.at(self.reads[level], (y[mask], x[mask]), 1)

    def write(self, level: int, x: IntArray, y: IntArray, gid: IntArray, mask: BoolArray) -> None:
        np.add.at(self.writes[level], (y[mask], x[mask]), 1)
        self.writer[level][y[mask], x[mask]] = gid[mask]


@attrs.frozen
class Device:
    """The properties that choose a kernel's data path."""
    subgroup_size: int = 32
    shuffle: bool = True

    def uses_shuffle(self, step: int) -> bool:
        return self.shuffle and 4 * step <= self.subgroup_size


DEFAULT_DEVICE = Device()  # frozen: safe to share as a default argument


def reduce4(tl: F32Array, tr: F32Array, bl: F32Array, br: F32Array) -> F32Array:
    """The 2x2 mean ``((TL + BL) * 0.5 + (TR + BR) * 0.5) * 0.5`` (vertical pass first)."""
    h = F32(0.5)
    out: F32Array = ((tl + bl) * h + (tr + br) * h) * h
    return out


@attrs.frozen
class Lanes:
    """Invocations of a tile pass: gid, workgroup, local index, team index i, tile origin."""
    gid: IntArray
    wg: IntArray
    local: IntArray
    i: IntArray
    ox: IntArray  # tile origin in the input level
    oy: IntArray
    active: BoolArray


class Machine:
    """Level values (decoded float32, H x W x C) plus the format round trip and the trace."""

    def __init__(self, values: list[F32Array], fmt: Format, trace: Trace | None):
        self.values = values
        self.fmt = fmt
        self.trace = trace

    def size(self, level: int) -> tuple[int, int]:
        h, w = self.values[level].shape[:2]
        return w, h

    def roundtrip(self, v: F32Array) -> F32Array:
        return decode(encode(v, self.fmt), self.fmt)

    def load(self, level: int, x: IntArray, y: IntArray, gid: IntArray, mask: BoolArray) -> F32Array:
        w, h = self.size(level)
        cx, cy = np.minimum(x, w - 1), np.minimum(y, h - 1)
        if self.trace is not None:
            self.trace.read(level, cx, cy, gid, mask)
        return self.values[level][cy, cx]

    def store(self, level: int, x: IntArray, y: IntArray, v: F32Array, gid: IntArray, mask: BoolArray) -> None:
        w, h = self.size(level)
        mask = mask & (x < w) & (y < h)
        self.values[level][y[mask], x[mask]] = v[mask]
        if self.trace is not None:
            self.trace.write(level, x, y, gid, mask)


def _xor_stage(m: Machine, lanes: Lanes, cur: F32Array, step: int, level: int,
               device: Device) -> list[F32Array]:
    """The values of lanes local ^ step, ^ 2 step, ^ 3 step (shuffle or shared memory)."""
    pos = np.arange(len(lanes.gid))  # lanes are contiguous and workgroup-aligned
    if device.uses_shuffle(step):
        sg = device.subgroup_size
        for k in (1, 2, 3):
            assert np.all((lanes.local ^ (k * step)) // sg == lanes.local // sg)
        mech: Mechanism = "shuffle"
    else:  # every lane stores its value, barrier, each lane reads three slots
        mech = "shared"
    if m.trace is not None:
        m.trace.stages.append((level, mech, (step, 2 * step, 3 * step)))
    return [cur[pos ^ (k * step)] for k in (1, 2, 3)]


def tile_pass(m: Machine, lanes: Lanes, level: int, levels: int, device: Device) -> None:
    """Levels level+1 .. level+levels (<= 5) of the fast kernel's tiles, one level-L+1
    texel per invocation (shaders/tile.glsl, tilePass; see the module docstring)."""
    gid, act = lanes.gid, lanes.active
    tx, ty = morton_decode(lanes.i)
    cx, cy = (lanes.ox >> 1) + tx, (lanes.oy >> 1) + ty
    quad = [m.load(level, 2 * cx + a, 2 * cy + b, gid, act) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))]
    cur = m.roundtrip(reduce4(*quad))
    m.store(level + 1, cx, cy, cur, gid, act)
    cl = level + 1
    for s in range(levels - 1):
        step = 4 ** s
        writer = lanes.i % (4 * step) == 0
        nb = _xor_stage(m, lanes, cur, step, cl + 1, device)
        cx, cy = cx >> 1, cy >> 1
        v = m.roundtrip(_combine(m, cl, cx, cy, cur, nb[0], nb[1], nb[2]))
        cl += 1
        m.store(cl, cx, cy, v, gid, act & writer)
        cur = np.where(writer[:, None], v, cur)


def tile64_pass(m: Machine, lanes: Lanes, level: int, levels: int, device: Device) -> None:
    """Levels level+1 .. level+levels (<= 6) of 64 x 64 tiles, a 256-invocation workgroup
    each (shaders/tile.glsl, tile64Pass): invocation l at t = morton(l) makes texel t of the
    four 16 x 16 quadrants of level L+1; lane j = l & 3 of each group of four makes
    quadrant j's level-L+2 texel from its partners' values; L+3 is an xor stage over
    l ^ 4, 8, 12; from L+4 on the level-L+3 texels are gathered in shared memory and the
    first 16, 4, 1 invocations make one texel each of L+4, L+5, L+6 (with shuffles and
    subgroups of 16 or more: lanes 0..15 at morton(l) make L+4 from shared memory, and
    L+5, L+6 by xor stages among them)."""
    gid, act, local = lanes.gid, lanes.active, lanes.local
    tx, ty = morton_decode(local)
    ox1, oy1 = lanes.ox >> 1, lanes.oy >> 1
    quads: list[F32Array] = []
    pos1 = []
    for k in range(4):
        x1, y1 = ox1 + 16 * (k & 1) + tx, oy1 + 16 * (k >> 1) + ty
        quad = [m.load(level, 2 * x1 + a, 2 * y1 + b, gid, act) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))]
        quads.append(m.roundtrip(reduce4(*quad)))
        pos1.append((x1, y1))
    for k in range(4):
        m.store(level + 1, *pos1[k], quads[k], gid, act)
    if levels < 2:
        return
    # L+2: g[mask] is the quadrant-j value of lane l ^ mask, the child at position j ^ mask
    j = local & 3
    qs = np.stack(quads)                    # quadrant, lane, channel
    pos = np.arange(len(gid))
    g = [qs[j, pos]] + [qs[j, pos ^ mask] for mask in (1, 2, 3)]
    if m.trace is not None:
        m.trace.stages.append((level + 2, "shuffle" if device.uses_shuffle(1) else "shared", (1, 2, 3)))
    ga = np.stack(g)                        # mask, lane, channel
    child = [ga[j ^ q, pos] for q in range(4)]
    mx, my = morton_decode(local >> 2)
    cx = (lanes.ox >> 2) + 8 * (j & 1) + mx
    cy = (lanes.oy >> 2) + 8 * (j >> 1) + my
    cur = m.roundtrip(_combine(m, level + 1, cx, cy, *child))
    m.store(level + 2, cx, cy, cur, gid, act)
    if levels < 3:
        return
    nb = _xor_stage(m, lanes, cur, 4, level + 3, device)
    cx, cy = cx >> 1, cy >> 1
    cur = m.roundtrip(_combine(m, level + 2, cx, cy, cur, nb[0], nb[1], nb[2]))
    writer = (local & 12) == 0
    m.store(level + 3, cx, cy, cur, gid, act & writer)
    # gather: the level-L+3 tile of each workgroup in shared memory, row-major
    nwg = int(lanes.wg.max()) + 1
    e = 8
    tile = np.zeros((nwg, e, e) + cur.shape[1:], F32)
    w3 = writer
    tile[lanes.wg[w3], (cy - (lanes.oy >> 3))[w3], (cx - (lanes.ox >> 3))[w3]] = cur[w3]
    if levels < 4:
        return
    if device.uses_shuffle(4):
        # one subgroup finishes: lanes 0..15 at morton(l) make L+4, then L+5 and L+6 by
        # shuffles among them (l ^ 1, 2, 3 and l ^ 4, 8, 12)
        if m.trace is not None:
            m.trace.stages.append((level + 4, "gather", (0, 0, 0)))
        mine = local < 16
        px, py = morton_decode(np.where(mine, local, 0))
        kids = [tile[lanes.wg, 2 * py + b, 2 * px + a] for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))]
        ox, oy = (lanes.ox >> 4) + px, (lanes.oy >> 4) + py
        cur = m.roundtrip(_combine(m, level + 3, ox, oy, *kids))
        m.store(level + 4, ox, oy, cur, gid, act & mine)
        for n, step in ((5, 1), (6, 4)):
            if levels < n:
                return
            nb = _xor_stage(m, lanes, cur, step, level + n, device)
            ox, oy = ox >> 1, oy >> 1
            cur = m.roundtrip(_combine(m, level + n - 1, ox, oy, cur, nb[0], nb[1], nb[2]))
            mine = mine & (local & (4 * step - 1) == 0)
            m.store(level + n, ox, oy, cur, gid, act & mine)
        return
    for n in range(4, levels + 1):
        if m.trace is not None:
            m.trace.stages.append((level + n, "gather", (0, 0, 0)))
        e >>= 1
        mine = local < e * e
        px, py = local % e, local // e
        px, py = np.where(mine, px, 0), np.where(mine, py, 0)
        wg = lanes.wg
        kids = [tile[wg, 2 * py + b, 2 * px + a] for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))]
        ox, oy = (lanes.ox >> n) + px, (lanes.oy >> n) + py
        v = m.roundtrip(_combine(m, level + n - 1, ox, oy, *kids))
        m.store(level + n, ox, oy, v, gid, act & mine)
        nxt = np.zeros((nwg, e, e) + cur.shape[1:], F32)
        nxt[wg[mine], py[mine], px[mine]] = v[mine]
        tile = nxt


def _combine(m: Machine, src_level: int, ox: IntArray, oy: IntArray,
             tl: F32Array, tr: F32Array, bl: F32Array, br: F32Array) -> F32Array:
    """reduce4 of the four level-src texels under (ox, oy), edge partners replaced."""
    w, h = m.size(src_level)
    xo = (2 * ox + 1 >= w)[:, None]
    yo = (2 * oy + 1 >= h)[:, None]
    tr = np.where(xo, tl, tr)
    br = np.where(xo, bl, br)
    bl = np.where(yo, tl, bl)
    br = np.where(yo, tr, br)
    return reduce4(tl, tr, bl, br)


def fast_lanes(d: Dispatch) -> Lanes:
    team_log = 8 if d.levels == 6 else 2 * (d.levels - 1)
    gid = np.arange(d.invocations)
    team = gid >> team_log
    tiles_x = d.width >> d.levels
    tiles_y = d.height >> d.levels
    ox = (team % tiles_x) << d.levels
    oy = (team // tiles_x) << d.levels
    live = (team // tiles_x) < tiles_y
    if d.levels == 1:
        # one output per invocation, 16 x 16 outputs per workgroup (fast.comp)
        blocks_x = -(-tiles_x // 16)
        wg, local = gid // FAST_LOCAL, gid % FAST_LOCAL
        x, y = (wg % blocks_x) * 16 + (local & 15), (wg // blocks_x) * 16 + (local >> 4)
        ox, oy = x << 1, y << 1
        live = (x < tiles_x) & (y < tiles_y)
    return Lanes(gid, gid // FAST_LOCAL, gid % FAST_LOCAL, gid & ((1 << team_log) - 1), ox, oy, live)


def _taps(m: Machine, level: int, x: IntArray, y: IntArray, gid: IntArray, mask: BoolArray,
          wx: F32Array, wy: F32Array) -> F32Array:
    """Separable filter at output (x, y) of level+1: vertical per column, then horizontal."""
    kx, ky = wx.shape[1], wy.shape[1]
    sx = 2 * x if kx > 1 else x
    sy = 2 * y if ky > 1 else y
    cols = []
    for c in range(kx):
        col = [m.load(level, sx + c, sy + r, gid, mask) for r in range(ky)]
        cols.append(_apply(col, wy, y))
    return _apply(cols, wx, x)


def _apply(vals: Sequence[F32Array], w: F32Array, j: IntArray) -> F32Array:
    """One axis of the filter: taps ``vals`` with the weights of outputs ``j`` (see reference)."""
    k = w.shape[1]
    if k == 1:
        return vals[0]
    if k == 2:
        pair: F32Array = (vals[0] + vals[1]) * F32(0.5)
        return pair
    wj = w[np.minimum(j, w.shape[0] - 1)]
    out: F32Array = (wj[:, 0:1] * vals[0] + wj[:, 1:2] * vals[1]) + wj[:, 2:3] * vals[2]
    return out


def general_pass(m: Machine, d: Dispatch) -> None:
    L = d.input_level
    w0, h0 = m.size(L)
    w1, h1 = m.size(L + 1)
    wx0, wy0 = axis_weights(w0, np.float32), axis_weights(h0, np.float32)
    gid = np.arange(d.invocations)
    if d.levels == 1:
        x, y = gid % w1, gid // w1
        act = gid < w1 * h1
        x, y = np.where(act, x, 0), np.where(act, y, 0)
        v = m.roundtrip(_taps(m, L, x, y, gid, act, wx0, wy0))
        m.store(L + 1, x, y, v, gid, act)
        return
    w2, h2 = m.size(L + 2)
    wx1, wy1 = axis_weights(w1, np.float32), axis_weights(h1, np.float32)
    gx = -(-w2 // GENERAL_TILE)
    n = GENERAL_SHARED
    shared = np.zeros((d.workgroups, n, n) + m.values[L].shape[2:], F32)
    # fill: 128 invocations cover the 17 x 17 tile of L+1 in three rounds
    for r in range(-(-n * n // GENERAL_LOCAL)):
        idx = gid % GENERAL_LOCAL + r * GENERAL_LOCAL
        wg = gid // GENERAL_LOCAL
        ix, iy = idx % n, idx // n
        x = (wg % gx) * 2 * GENERAL_TILE + ix
        y = (wg // gx) * 2 * GENERAL_TILE + iy
        rx = 2 * (GENERAL_TILE - 1) + wx1.shape[1]
        ry = 2 * (GENERAL_TILE - 1) + wy1.shape[1]
        act = (idx < n * n) & (ix < rx) & (iy < ry) & (x < w1) & (y < h1)
        xs, ys = np.where(act, x, 0), np.where(act, y, 0)
        v = m.roundtrip(_taps(m, L, xs, ys, gid, act, wx0, wy0))
        m.store(L + 1, xs, ys, v, gid, act)
        shared[wg[act], iy[act], ix[act]] = v[act]
    # barrier, then 64 invocations reduce the shared tile to the 8 x 8 tile of L+2
    li = gid % GENERAL_LOCAL
    wg = gid // GENERAL_LOCAL
    ox, oy = li % GENERAL_TILE, li // GENERAL_TILE
    x = (wg % gx) * GENERAL_TILE + ox
    y = (wg // gx) * GENERAL_TILE + oy
    act = (li < GENERAL_TILE * GENERAL_TILE) & (x < w2) & (y < h2)
    xs, ys = np.where(act, x, 0), np.where(act, y, 0)
    kx, ky = wx1.shape[1], wy1.shape[1]
    bx = 2 * ox if kx > 1 else ox
    by = 2 * oy if ky > 1 else oy
    wgs = np.where(act, wg, 0)
    cols = []
    for c in range(kx):
        col = [shared[wgs, np.minimum(by + r, n - 1), np.minimum(bx + c, n - 1)] for r in range(ky)]
        cols.append(_apply(col, wy1, ys))
    v = m.roundtrip(_apply(cols, wx1, xs))
    m.store(L + 2, xs, ys, v, gid, act)


def tail_pass(m: Machine, d: Dispatch) -> None:
    """Levels after the main pass of ``d``, made by the grid's last workgroup (shaders: tailChain;
    where :func:`~mipmap.plan.spd_handoff` holds, the GPU runs the single pass's 64 x 64 pass
    instead: the same values, by other invocations)."""
    gx, gy = d.grid
    local = np.arange(d.local_size)
    gid = (gx * gy - 1) * d.local_size + local
    for k in range(d.input_level + d.levels, d.input_level + d.total_levels):
        w0, h0 = m.size(k)
        w1, h1 = m.size(k + 1)
        wx, wy = axis_weights(w0, np.float32), axis_weights(h0, np.float32)
        for r in range(-(-w1 * h1 // d.local_size)):
            idx = local + r * d.local_size
            act = idx < w1 * h1
            x, y = np.where(act, idx % w1, 0), np.where(act, idx // w1, 0)
            v = m.roundtrip(_taps(m, k, x, y, gid, act, wx, wy))
            m.store(k + 1, x, y, v, gid, act)


def run_dispatch(m: Machine, d: Dispatch, device: Device) -> None:
    if d.kernel == "fast":
        lanes = fast_lanes(d)
        if d.levels == 6:
            tile64_pass(m, lanes, d.input_level, d.levels, device)
        else:
            tile_pass(m, lanes, d.input_level, d.levels, device)
    else:
        general_pass(m, d)
    if d.tail_levels:
        tail_pass(m, d)


def empty_chain(level0_values: F32Array) -> list[F32Array]:
    h, w = level0_values.shape[:2]
    rest = level_sizes(w, h)[1:]
    return [level0_values] + [np.full((hh, ww) + level0_values.shape[2:], np.nan, F32) for ww, hh in rest]


def tiled_chain(level0: Texels, fmt: Format, device: Device = DEFAULT_DEVICE,
                trace: bool = False, tail: bool = False, split: bool = False) -> tuple[list[Texels], Trace | None]:
    """Run the whole tiled plan (``tail``: with the continuation; ``split``: level 1 in a
    dispatch of its own) on stored level-0 texels; returns stored levels and trace."""
    level0 = np.asarray(level0)
    h, w = level0.shape[:2]
    values = empty_chain(decode(level0, fmt))
    tr = Trace(level_sizes(w, h)) if trace else None
    m = Machine(values, fmt, tr)
    for d in tiled_plan(w, h, tail=tail, split=split):
        run_dispatch(m, d, device)
    return [level0] + [encode(v, fmt) for v in values[1:]], tr

