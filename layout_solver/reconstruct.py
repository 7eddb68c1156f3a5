"""CPU reconstruction of the whole subsampled-image path, per view.

What is modelled (turnip-fdm-spec.md §5.8 and §7.5-7.8, Vulkan sampling rules of
vulkan-fdm-and-cts.md §1.8):

1. :func:`scene` - a deterministic procedural single-channel image of continuous framebuffer
   coordinates (smooth gradients plus a disc, a stripe and a thin diagonal line), values in [0, 1].
2. :func:`render_bins` - every rendered root tile "renders" its framebuffer-space bin ``B_v`` at
   its fragment area: one fragment per ``fa.w x fa.h`` block starting at the bin origin, coloured
   with the scene at the block centre (the lowered ``gl_FragCoord``).
   :func:`store_subsampled` stores them in a ``height0 x width0`` image initialised to
   :data:`EMPTY` at ``subsampled_pos[v]``: 1:1 (low resolution) for views subsampled in the tile,
   expanded (every fragment replicated ``fa`` times: the upscaling store) otherwise, clipped to
   the stored rectangle as the store scissor (``transform_render_area`` of the full render area
   intersected with ``subsampled_pos``) does.  :func:`store_expanded` is the non-subsampled path:
   the same fragments expanded at their framebuffer positions in a ``H x W`` image.
3. :func:`apply_aprons` - the blits of ``tu_calc_subsampled_aprons`` in order, NEAREST: each
   destination pixel centre maps linearly into the float source rectangle and takes the texel
   containing that point (source reads clamped to the image, destination clipped to it; both
   counted).
4. :func:`subsampled_coordinates` - ``tu_get_subsampled_coordinates`` vectorised over numpy
   arrays (float32 with a correctly rounded fused multiply-add; checked against the scalar model
   in the tests), then :func:`sample` with Vulkan NEAREST / LINEAR (texel centres at +0.5,
   ``i0 = floor(u*w - 0.5)``, weights in float64), CLAMP_TO_EDGE or CLAMP_TO_BORDER.
5. :func:`compare` - the subsampled image sampled through the metadata against the expanded image
   sampled at the same normalized coordinate with the same filter and addressing.

The bound ("what the fragment area alone explains").  Both LINEAR results are convex combinations
(non-negative weights summing to 1) of fragment values: the expanded image's 2x2 footprint lies
within 1 pixel of the sample, and a correct subsampled layout's 2x2 footprint holds fragments (of
the sampled tile, or neighbour fragments copied into its apron) whose framebuffer positions lie
within one texel, i.e. at most ``F`` framebuffer pixels (``F`` = largest fragment area of the view
on that axis), of the sample.  Each sample's bound is therefore the value range (max - min) of
the expanded image over the window of ``F + 1`` pixels around it on each axis (border colour
included when the window leaves the framebuffer under CLAMP_TO_BORDER).  A layout that makes the
sampler read memory that no nearby fragment wrote (a missing apron reads :data:`EMPTY`, far away
content, wrong metadata) exceeds it.  NEAREST reads the texel of the fragment that contains the
sample in both paths, so its bound is 0 except within ``tie_tol`` texels of a texel boundary,
where float32 rounding may pick either neighbour (those "ties" get the LINEAR bound).

Findings the comparison exposes (see tests/layout_solver/test_reconstruct.py), with detectors:
:func:`detached_image_edges` (a framebuffer edge whose tiles are not stored at the image edge, so
edge/border addressing blends never-written texels), :func:`inconsistent_adjacent_tiles` (a pair
skipped by the apron code as adjacent whose mappings disagree) and ``ApronStats.overwriting`` /
``ViewReconstruction.contested`` (apron blits that write into another tile's stored pixels).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

import attrs
import numpy as np

from fdm.geometry import Rect
from fdm.plan import RenderPassPlan

from .aprons import AprBlit, _adjacent, tu_calc_subsampled_aprons
from .metadata import LAYER_VEC4S, UndefinedMetadataRead, layout_metadata, metadata_ubo
from .solver import SubsampledLayout, fb_bin_start

Pair = tuple[int, int]

#: "empty memory": what the image holds where nothing was stored (scene values lie in [0, 1])
EMPTY = np.float32(-1.0)
#: border colour for CLAMP_TO_BORDER (VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK, one channel)
BORDER = 0.0
FILTERS = ("nearest", "linear")
ADDRESSING = ("clamp_to_edge", "clamp_to_border")
#: the pixel offsets around every bin edge that are always sampled besides pixel centres
EDGE_OFFSETS = (-0.25, 0.25)


# --------------------------------------------------------------------------------------------
# 1. reference scene

def scene(x: np.ndarray, y: np.ndarray, fb_size: Pair) -> np.ndarray:
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


# --------------------------------------------------------------------------------------------
# 2. rendering and storing

@attrs.frozen(eq=False)
class RenderedBin:
    """The fragments one root tile rendered for one view: ``values[j, i]`` is the fragment
    covering framebuffer ``[x0 + i*fw, +fw) x [y0 + j*fh, +fh)``."""

    cell: Pair
    view: int
    bin: tuple[int, int, int, int]   # B_v (framebuffer space)
    frag_area: Pair
    values: np.ndarray               # float32, ceil(B.h/fh) x ceil(B.w/fw)


def render_bin(bin_rect: Sequence[int], frag_area: Pair, fb_size: Pair) -> np.ndarray:
    """One fragment per ``fa`` block of the bin, coloured with the scene at the block centre."""
    bx, by, bw, bh = bin_rect
    fw, fh = frag_area
    nx, ny = -(-bw // fw), -(-bh // fh)
    xs = bx + (np.arange(nx) + 0.5) * fw
    ys = by + (np.arange(ny) + 0.5) * fh
    return scene(xs[None, :], ys[:, None], fb_size).astype(np.float32)


def render_bins(plan: RenderPassPlan, view: int) -> tuple[RenderedBin, ...]:
    """The fragments of every rendered root tile visible in ``view``, in walk order."""
    fb = plan.scenario.framebuffer
    out = []
    for tp in plan.tiles:
        vp = tp.views[view]
        if not vp.visible or vp.bin[2] <= 0 or vp.bin[3] <= 0:
            continue
        out.append(RenderedBin(tp.cell, view, tuple(vp.bin), tuple(vp.frag_area),
                               render_bin(vp.bin, vp.frag_area, fb)))
    return tuple(out)


def expand(values: np.ndarray, frag_area: Pair) -> np.ndarray:
    """Every fragment replicated ``fa`` times (the upscaling store / blit)."""
    return np.repeat(np.repeat(values, frag_area[1], axis=0), frag_area[0], axis=1)


def _put(image: np.ndarray, x: int, y: int, block: np.ndarray) -> None:
    """``image[y:, x:] = block``, clipped to the image and to the block."""
    h, w = image.shape
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + block.shape[1], w), min(y + block.shape[0], h)
    if x1 > x0 and y1 > y0:
        image[y0:y1, x0:x1] = block[y0 - y:y1 - y, x0 - x:x1 - x]


def store_expanded(plan: RenderPassPlan, bins: Sequence[RenderedBin]) -> np.ndarray:
    """The non-subsampled path: a ``H x W`` image where every framebuffer pixel holds the
    fragment covering it (:data:`EMPTY` where no bin was rendered)."""
    W, H = plan.scenario.framebuffer
    img = np.full((H, W), EMPTY, dtype=np.float32)
    for rb in bins:
        _put(img, rb.bin[0], rb.bin[1], expand(rb.values, rb.frag_area))
    return img


def stored_rect(layout: SubsampledLayout, rb: RenderedBin) -> tuple[Rect, bool]:
    """Where the tile's fragments go in the subsampled image and whether they are stored 1:1
    (view subsampled in the tile).  Without a solved layout (``!tile.subsampled``) the tile is
    stored expanded at its framebuffer position, clipped to the framebuffer."""
    t = layout.tile(*rb.cell)
    if t is None or not t.subsampled:
        W, H = layout.fb_size
        bx, by, bw, bh = rb.bin
        return Rect(bx, by, max(min(bx + bw, W) - bx, 0), max(min(by + bh, H) - by, 0)), False
    return t.subsampled_pos[rb.view], t.is_subsampled(rb.view)


def store_subsampled(layout: SubsampledLayout, bins: Sequence[RenderedBin]) -> np.ndarray:
    """The subsampled image of one layer (``height0 x width0``, :data:`EMPTY` elsewhere): the
    fragment grid placed at the stored rectangle's origin and clipped to the rectangle (the
    store scissor), 1:1 for subsampled views, expanded otherwise."""
    img = np.full((layout.height0, layout.width0), EMPTY, dtype=np.float32)
    for rb in bins:
        r, low_res = stored_rect(layout, rb)
        data = rb.values if low_res else expand(rb.values, rb.frag_area)
        _put(img, r.x, r.y, data[:r.h, :r.w])
    return img


# --------------------------------------------------------------------------------------------
# 3. apron blits

@attrs.frozen
class ApronStats:
    applied: int
    dropped: int
    dst_pixels_clipped: int     # destination pixels outside the image (the driver asserts)
    src_reads_clamped: int      # source texel reads outside the image, clamped to its edge
    dst_pixels_over_tiles: int  # destination pixels inside another tile's stored rectangle
    overwriting: tuple[int, ...] = ()   # indices of the aprons that write into another tile


def owner_map(shape: tuple[int, int], stored: Sequence[tuple[Pair, Rect]]) -> np.ndarray:
    """Per image pixel: the index in ``stored`` of the tile whose rectangle holds it, or -1."""
    own = np.full(shape, -1, dtype=np.int32)
    for k, (_, r) in enumerate(stored):
        own[max(r.y, 0):max(r.y + r.h, 0), max(r.x, 0):max(r.x + r.w, 0)] = k
    return own


def blit_nearest(image: np.ndarray, dst: Rect, src: tuple[float, float, float, float],
                 writable: np.ndarray | None = None) -> tuple[int, int]:
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


def _dropped_set(n: int, drop: None | int | str | Iterable[int]) -> set:
    if drop is None:
        return set()
    if isinstance(drop, str):
        if drop != "all":
            raise ValueError(f"drop_apron must be an index, indices, None or 'all', got {drop!r}")
        return set(range(n))
    if isinstance(drop, (int, np.integer)):
        return {int(drop)}
    return {int(i) for i in drop}


def apply_aprons(image: np.ndarray, aprons: Sequence[AprBlit],
                 drop: None | int | str | Iterable[int] = None, *,
                 stored: Sequence[tuple[Pair, Rect]] = (), protect_stored: bool = False
                 ) -> tuple[np.ndarray, ApronStats, np.ndarray]:
    """A copy of ``image`` after the apron blits in order, skipping ``drop`` (an index of
    ``aprons``, several, or ``"all"``), the stats, and the *contested* pixels: those of a
    stored tile that an apron made for another tile writes.  ``stored``: ``(cell, rect)`` of
    the stored tiles (the driver writes contested pixels; ``protect_stored`` leaves them alone
    instead - not the driver, a what-if)."""
    out = image.copy()
    skip = _dropped_set(len(aprons), drop)
    own = owner_map(image.shape, stored)
    index = {cell: k for k, (cell, _) in enumerate(stored)}
    clipped = clamped = over = 0
    overwriting = []
    contested = np.zeros(image.shape, dtype=bool)
    h, w = image.shape
    for i, a in enumerate(aprons):
        if i in skip:
            continue
        d = a.dst
        ys, xs = slice(max(d.y, 0), min(max(d.y + d.h, 0), h)), slice(max(d.x, 0), min(max(d.x + d.w, 0), w))
        hit = (own[ys, xs] >= 0) & (own[ys, xs] != index.get(a.dst_tile, -2))
        contested[ys, xs] |= hit
        foreign = int(hit.sum())
        if foreign:
            over += foreign
            overwriting.append(i)
        writable = None
        if protect_stored and foreign:
            writable = (own < 0) | (own == index.get(a.dst_tile, -2))
        c, s = blit_nearest(out, a.dst, a.src, writable)
        clipped += c
        clamped += s
    applied = len(aprons) - len(skip & set(range(len(aprons))))
    return out, ApronStats(applied, len(skip), clipped, clamped, over, tuple(overwriting)), contested


# --------------------------------------------------------------------------------------------
# 4. the shader transform (vectorised) and Vulkan sampling

def ffma_np(a: np.ndarray, b: np.ndarray, c: np.ndarray, fused: bool) -> np.ndarray:
    """float32 ``a * b + c`` element-wise, as :func:`layout_solver.metadata.ffma`: ``fused``
    rounds the exact result once.  The float32 product is exact in float64; the float64 sum
    ``s`` is off by ``e`` (TwoSum), which only matters when ``s`` is exactly halfway between two
    float32 values (any other float64 lies at least one float64 ulp from such a midpoint)."""
    a, b, c = (np.asarray(t, dtype=np.float32) for t in (a, b, c))
    if not fused:
        return (a * b).astype(np.float32) + c
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    e = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    toward = np.nextafter(r, np.where(s > r64, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
    mid = (r64 != s) & ((s - r64) == (toward.astype(np.float64) - s))
    up = np.maximum(r, toward)
    down = np.minimum(r, toward)
    fix = np.where(e > 0, up, down)
    return np.where(mid & (e != 0), fix, r).astype(np.float32)


def subsampled_coordinates(ubo: Sequence[tuple | None], u: np.ndarray, v: np.ndarray, layer: int = 0, *,
                           fused: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``tu_get_subsampled_coordinates`` for arrays of normalized framebuffer coordinates
    (converted to float32): bin ``f2u16(c * hdr.scale + hdr.offset)``, result
    ``c * bin.scale + bin.offset``.  Raises :class:`UndefinedMetadataRead` / ``ValueError`` where
    the scalar model would."""
    u = np.asarray(u, dtype=np.float32)
    v = np.asarray(v, dtype=np.float32)
    base = layer * LAYER_VEC4S
    if base + 1 >= len(ubo):
        raise UndefinedMetadataRead(f"layer {layer} has no metadata")
    hdr, stride = ubo[base], int(ubo[base + 1][0])
    slots = ubo[base + 2:base + LAYER_VEC4S]
    written = np.array([s is not None for s in slots])
    table = np.array([s if s is not None else (0, 0, 0, 0) for s in slots], dtype=np.float32)
    fx = ffma_np(u, hdr[0], hdr[2], fused)
    fy = ffma_np(v, hdr[1], hdr[3], fused)
    for f in (fx, fy):
        if not np.all((f >= 0) & (f < 65536)):
            raise ValueError("f2u16 of a value outside [0, 65536) is undefined")
    idx = fy.astype(np.int64) * stride + fx.astype(np.int64)
    if np.any(idx >= len(slots)) or not np.all(written[np.minimum(idx, len(slots) - 1)]):
        raise UndefinedMetadataRead("a bin slot that was never written is read")
    bd = table[idx]
    return ffma_np(u, bd[..., 0], bd[..., 2], fused), ffma_np(v, bd[..., 1], bd[..., 3], fused)


def _fetch(image: np.ndarray, i: np.ndarray, j: np.ndarray, addressing: str, border: float) -> np.ndarray:
    h, w = image.shape
    if addressing == "clamp_to_edge":
        return image[np.clip(j, 0, h - 1), np.clip(i, 0, w - 1)].astype(np.float64)
    inside = (i >= 0) & (i < w) & (j >= 0) & (j < h)
    val = image[np.clip(j, 0, h - 1), np.clip(i, 0, w - 1)].astype(np.float64)
    return np.where(inside, val, border)


def sample(image: np.ndarray, sx: np.ndarray, sy: np.ndarray, filter: str, addressing: str,
           border: float = BORDER) -> np.ndarray:
    """Vulkan sampling of a single-level image at texel-space coordinates ``(u*w, v*h)``
    (float64).  NEAREST: texel ``floor``; LINEAR: ``i0 = floor(u*w - 0.5)``, weights from the
    fraction, each of the 4 texels addressed on its own."""
    if filter not in FILTERS:
        raise ValueError(f"filter must be one of {FILTERS}, got {filter!r}")
    if addressing not in ADDRESSING:
        raise ValueError(f"addressing must be one of {ADDRESSING}, got {addressing!r}")
    sx = np.asarray(sx, dtype=np.float64)
    sy = np.asarray(sy, dtype=np.float64)
    if filter == "nearest":
        return _fetch(image, np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64), addressing, border)
    x, y = sx - 0.5, sy - 0.5
    i0, j0 = np.floor(x), np.floor(y)
    a, b = x - i0, y - j0
    i0, j0 = i0.astype(np.int64), j0.astype(np.int64)
    t00 = _fetch(image, i0, j0, addressing, border)
    t10 = _fetch(image, i0 + 1, j0, addressing, border)
    t01 = _fetch(image, i0, j0 + 1, addressing, border)
    t11 = _fetch(image, i0 + 1, j0 + 1, addressing, border)
    return (1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 + a * b * t11


# --------------------------------------------------------------------------------------------
# sample points

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


def _near(edges: Sequence[int], band: int, size: int) -> np.ndarray:
    """Coordinates within ``band`` pixels of the edges: pixel centres and ``EDGE_OFFSETS``."""
    d = np.array(list(EDGE_OFFSETS) + [k + 0.5 for k in range(-band, band)])
    c = (np.asarray(edges, dtype=np.float64)[:, None] + d[None, :]).ravel()
    return np.unique(c[(c > 0) & (c < size)])


def sample_points(plan: RenderPassPlan, view: int, *, band: int = 4, samples: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
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


# --------------------------------------------------------------------------------------------
# 5. one view reconstructed

@attrs.frozen(eq=False)
class ViewReconstruction:
    """Everything of one view needed to compare the two paths."""

    plan: RenderPassPlan
    layout: SubsampledLayout
    view: int
    layer: int | None           # coordinate z for the transform (None: single-view pass)
    bins: tuple[RenderedBin, ...]
    expanded: np.ndarray           # H x W, non-subsampled path
    stored: np.ndarray             # height0 x width0 before the aprons
    subsampled: np.ndarray         # after the aprons
    aprons: tuple[AprBlit, ...]
    apron_stats: ApronStats
    contested: np.ndarray          # height0 x width0 bool: stored pixels overwritten by another tile's apron
    ubo: tuple
    fused: bool
    frag_max: Pair                 # largest fragment area of the view per axis


def reconstruct_view(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *,
                     drop_apron: None | int | str | Iterable[int] = None, fused: bool = True,
                     revision: str = "newest", protect_stored: bool = False) -> ViewReconstruction:
    """Render, store (both paths), run the aprons and build the metadata of one view
    (``protect_stored``: see :func:`apply_aprons`)."""
    bins = render_bins(plan, view)
    stored = store_subsampled(layout, bins)
    aprons = tu_calc_subsampled_aprons(layout, view, revision=revision)
    rects = [(b.cell, stored_rect(layout, b)[0]) for b in bins]
    sub, stats, contested = apply_aprons(stored, aprons, drop_apron, stored=rects, protect_stored=protect_stored)
    views = plan.scenario.views
    fmax = (max([b.frag_area[0] for b in bins], default=1), max([b.frag_area[1] for b in bins], default=1))
    return ViewReconstruction(plan, layout, view, view if views > 1 else None, bins, store_expanded(plan, bins),
                              stored, sub, aprons, stats, contested, metadata_ubo(layout_metadata(layout)), fused,
                              fmax)


def sample_both(rec: ViewReconstruction, xs: np.ndarray, ys: np.ndarray, filter: str, addressing: str,
                border: float = BORDER) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sample both paths at framebuffer positions: ``(subsampled, expanded, texel coords of the
    subsampled sample x, y)``.  The normalized coordinate is ``float32(x / W)``."""
    W, H = rec.plan.scenario.framebuffer
    u = (np.asarray(xs, dtype=np.float64) / W).astype(np.float32)
    v = (np.asarray(ys, dtype=np.float64) / H).astype(np.float32)
    su, sv = subsampled_coordinates(rec.ubo, u, v, rec.layer or 0, fused=rec.fused)
    tx = su.astype(np.float64) * rec.layout.width0
    ty = sv.astype(np.float64) * rec.layout.height0
    a = sample(rec.subsampled, tx, ty, filter, addressing, border)
    b = sample(rec.expanded, u.astype(np.float64) * W, v.astype(np.float64) * H, filter, addressing, border)
    return a, b, tx, ty


def _window_extreme(img: np.ndarray, radius: Pair, op) -> np.ndarray:
    """Max or min of ``img`` over the window ``[i - r, i + r]`` (clipped to the image)."""
    fill = -np.inf if op is np.max else np.inf
    rx, ry = radius
    p = np.pad(img.astype(np.float64), ((0, 0), (rx, rx)), constant_values=fill)
    t = op(np.lib.stride_tricks.sliding_window_view(p, 2 * rx + 1, axis=1), axis=-1)
    p = np.pad(t, ((ry, ry), (0, 0)), constant_values=fill)
    return op(np.lib.stride_tricks.sliding_window_view(p, 2 * ry + 1, axis=0), axis=-1)


def neighbourhood_bound(rec: ViewReconstruction, xs: np.ndarray, ys: np.ndarray, addressing: str,
                        border: float = BORDER, radius: Pair | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: the value range of the expanded image within ``radius`` pixels (default
    ``F + 1`` per axis) of the pixel containing it, with the border colour when the window
    leaves the framebuffer under CLAMP_TO_BORDER; and whether the window touches unrendered
    (:data:`EMPTY`) pixels."""
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


def footprint_touches(mask: np.ndarray, tx: np.ndarray, ty: np.ndarray, filter: str) -> np.ndarray:
    """Whether the texels a sample at texel coordinates ``(tx, ty)`` reads include a pixel of
    ``mask`` (NEAREST: one texel; LINEAR: the 2x2 footprint; indices clamped to the image)."""
    h, w = mask.shape
    if filter == "nearest":
        offs, i0, j0 = (0,), np.floor(tx).astype(np.int64), np.floor(ty).astype(np.int64)
    else:
        offs, i0, j0 = (0, 1), np.floor(tx - 0.5).astype(np.int64), np.floor(ty - 0.5).astype(np.int64)
    out = np.zeros(len(tx), dtype=bool)
    for dj in offs:
        for di in offs:
            out |= mask[np.clip(j0 + dj, 0, h - 1), np.clip(i0 + di, 0, w - 1)]
    return out


@attrs.frozen
class ErrorReport:
    """Subsampled path vs expanded path for one view, filter and addressing mode."""

    view: int
    filter: str
    addressing: str
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


def compare(rec: ViewReconstruction, filter: str, addressing: str, *, samples: int | None = None,
            band: int | None = None, border: float = BORDER, eps: float = 1e-6, tie_tol: float = 1e-3,
            radius: Pair | None = None, points: tuple[np.ndarray, np.ndarray] | None = None,
            exclude_contested: bool = False) -> ErrorReport:
    """Compare the two paths of ``rec`` at :func:`sample_points` (or ``points``).
    ``exclude_contested`` leaves out the samples whose subsampled footprint touches a contested
    pixel (see :func:`apply_aprons`); they are counted in ``excluded``."""
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


def reconstruction_error(plan: RenderPassPlan, layout: SubsampledLayout, view: int, filter: str = "linear",
                         addressing: str = "clamp_to_edge", *,
                         drop_apron: None | int | str | Iterable[int] = None, samples: int | None = None,
                         fused: bool = True, revision: str = "newest", **kw) -> ErrorReport:
    """Reconstruct ``view`` through the subsampled path and compare it with the expanded path
    (see the module docstring for the bound).  ``drop_apron``: an index of the apron list (or
    several, or ``"all"``) not blitted; ``samples``: about how many pixel centres to compare
    besides the edge neighbourhoods (None: all).  Other keywords go to :func:`compare`."""
    rec = reconstruct_view(plan, layout, view, drop_apron=drop_apron, fused=fused, revision=revision)
    return compare(rec, filter, addressing, samples=samples, **kw)


# --------------------------------------------------------------------------------------------
# 7. pictures

@attrs.frozen(eq=False)
class ReconstructionImages:
    """Arrays for drawing one view (float64 unless stated)."""

    scene: np.ndarray            # H x W, the reference scene at pixel centres
    expanded: np.ndarray         # H x W float32, the non-subsampled path's image
    subsampled: np.ndarray       # height0 x width0 float32, the subsampled image after the aprons
    reconstructed: np.ndarray    # H x W, the subsampled image sampled through the metadata at pixel centres
    reference: np.ndarray        # H x W, the expanded image sampled at the same coordinates
    error: np.ndarray            # H x W, |reconstructed - reference|


def reconstruction_images(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *, filter: str = "linear",
                          addressing: str = "clamp_to_edge", drop_apron=None, fused: bool = True,
                          border: float = BORDER) -> ReconstructionImages:
    """The reconstructed ``W x H`` image (sampled at every pixel centre) and its error heat map.
    Pixels in unrendered cells hold NaN in ``reconstructed``/``reference``/``error``."""
    rec = reconstruct_view(plan, layout, view, drop_apron=drop_apron, fused=fused)
    W, H = plan.scenario.framebuffer
    gy, gx = np.mgrid[0:H, 0:W]
    xs, ys = (gx + 0.5).ravel(), (gy + 0.5).ravel()
    rendered = (rec.expanded != EMPTY).ravel()
    recon = np.full(W * H, np.nan)
    ref = np.full(W * H, np.nan)
    a, b, _, _ = sample_both(rec, xs[rendered], ys[rendered], filter, addressing, border)
    recon[rendered], ref[rendered] = a, b
    return ReconstructionImages(scene(gx + 0.5, gy + 0.5, (W, H)), rec.expanded, rec.subsampled,
                                recon.reshape(H, W), ref.reshape(H, W), np.abs(recon - ref).reshape(H, W))


# --------------------------------------------------------------------------------------------
# findings: framebuffer edges that are not at the image edge in subsampled space

def detached_image_edges(layout: SubsampledLayout, view: int) -> tuple[tuple[Pair, str, int], ...]:
    """``(cell, side, gap)`` for stored tiles of ``view`` whose framebuffer-edge side is not at
    the subsampled image's edge, so that CLAMP_TO_EDGE / CLAMP_TO_BORDER at that framebuffer edge
    blend never-written texels instead (no apron is made there); ``gap`` is the distance in
    texels.

    * ``"left"``/``"top"``: the tile starts at the framebuffer's left/top edge but is a stick
      tile on that axis (``get_default_tile_pos`` tests ``stick`` before ``px == 0``), so it is
      stored end-aligned at ``start = W + fo - ceil(W / fa_eff) > 0`` (a subsampled view, or any
      view with FDM offsets, ``fo = tile_align``).
    * ``"right"``/``"bottom"``: a stick tile ends at ``W + fo`` short of ``width0``: the image
      has FDM-offset slop (``width0 = W + tile_align``) but the solver got NULL offsets
      (``fo = 0``: no offsets this pass, or a shared viewport).
    """
    if not layout.solved:
        return ()
    size0 = (layout.width0, layout.height0)
    out = []
    for t in layout.tiles:
        if not t.visible(view) or not t.subsampled:
            continue
        r = t.subsampled_pos[view]
        for axis, start, end in ((0, r.x, r.x + r.w), (1, r.y, r.y + r.h)):
            b_o = layout.bin_offset(view)[axis]
            T = layout.tile_size[axis]
            if t.pos[axis] * T - b_o <= 0 and start > 0:
                out.append((t.cell, ("left", "top")[axis], start))
            if (t.pos[axis] + t.extent[axis]) * T - b_o >= layout.fb_size[axis] and end < size0[axis]:
                out.append((t.cell, ("right", "bottom")[axis], size0[axis] - end))
    return tuple(out)


def inconsistent_adjacent_tiles(layout: SubsampledLayout, view: int, revision: str = "newest"
                                ) -> tuple[tuple[Pair, Pair, int], ...]:
    """``(cell_a, cell_b, axis)`` of neighbours sharing an edge in the tile grid (``b`` right of
    ``a`` for axis 0, below for axis 1) that ``tu_calc_subsampled_aprons`` skips as adjacent in
    subsampled space although their framebuffer-to-subsampled mappings disagree along the edge
    (different ``sub - b_s / fa_eff`` or ``fa_eff`` on the other axis): LINEAR across that edge
    reads texels that belong to other framebuffer positions, and no apron repairs it.  Happens
    with a merged stick tile stored end-aligned next to unmerged neighbours (FDM offsets)."""
    if not layout.solved:
        return ()
    T = layout.tile_size
    b_o = layout.bin_offset(view)
    tiles = [t for t in layout.tiles if t.visible(view) and t.subsampled]
    out = []

    def origin(t, ax):
        bs = fb_bin_start(t, T, b_o)[ax]
        r = t.subsampled_pos[view]
        return (r.x, r.y)[ax] - Fraction(bs, t.effective_frag_area(view)[ax])

    for a in tiles:
        for b in tiles:
            for axis in (0, 1):
                o = 1 - axis
                if b.pos[axis] != a.pos[axis] + a.extent[axis]:
                    continue
                if not (a.pos[o] < b.pos[o] + b.extent[o] and b.pos[o] < a.pos[o] + a.extent[o]):
                    continue
                if not _adjacent(a.subsampled_pos[view], b.subsampled_pos[view], axis, revision):
                    continue
                if (origin(a, o) != origin(b, o)
                        or a.effective_frag_area(view)[o] != b.effective_frag_area(view)[o]):
                    out.append((a.cell, b.cell, axis))
    return tuple(out)
