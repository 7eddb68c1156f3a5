"""Rendering the bins and storing their fragments, in both paths (docs/spec/turnip-fdm-spec.md
§5.8, §7.5).

:func:`render_bins` - every rendered root tile "renders" its framebuffer-space bin ``B_v`` at
its fragment area: one fragment per ``fa.w x fa.h`` block starting at the bin origin, coloured
with the scene at the block centre (the lowered ``gl_FragCoord``).

:func:`store_subsampled` stores them in a ``height0 x width0`` image initialised to
:data:`EMPTY` at ``subsampled_pos[v]``: 1:1 (low resolution) for views subsampled in the tile,
expanded (every fragment replicated ``fa`` times: the upscaling store) otherwise, clipped to the
stored rectangle as the store scissor (``transform_render_area`` of the full render area
intersected with ``subsampled_pos``) does.  :func:`store_expanded` is the non-subsampled path:
the same fragments expanded at their framebuffer positions in a ``H x W`` image.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from fdm.geometry import Rect
from fdm.plan import RenderPassPlan

from ..solver import SubsampledLayout
from ._types import BoolArray, F32Array, Pair, Rect4
from .reference_scene import scene_grid

#: "empty memory": what the image holds where nothing was stored (scene values lie in [0, 1])
EMPTY = np.float32(-1.0)


@attrs.frozen(eq=False)
class RenderedBin:
    """The fragments one root tile rendered for one view: ``values[j, i]`` is the fragment
    covering framebuffer ``[x0 + i*fw, +fw) x [y0 + j*fh, +fh)``."""

    cell: Pair
    view: int
    bin: Rect4                       # B_v (framebuffer space)
    frag_area: Pair
    values: F32Array                 # ceil(B.h/fh) x ceil(B.w/fw)


def render_bin(bin_rect: Sequence[int], frag_area: Pair, fb_size: Pair) -> F32Array:
    """One fragment per ``fa`` block of the bin, coloured with the scene at the block centre."""
    bx, by, bw, bh = bin_rect
    fw, fh = frag_area
    nx, ny = -(-bw // fw), -(-bh // fh)
    xs = bx + (np.arange(nx) + 0.5) * fw
    ys = by + (np.arange(ny) + 0.5) * fh
    return scene_grid(xs, ys, fb_size).astype(np.float32)


def render_bins(plan: RenderPassPlan, view: int) -> tuple[RenderedBin, ...]:
    """The fragments of every rendered root tile visible in ``view``, in walk order."""
    fb = plan.scenario.framebuffer
    out = []
    for tp in plan.tiles:
        vp = tp.views[view]
        if not vp.visible or vp.bin[2] <= 0 or vp.bin[3] <= 0:
            continue
        b, fa = vp.bin, vp.frag_area
        out.append(RenderedBin(tp.cell, view, (b[0], b[1], b[2], b[3]), (fa[0], fa[1]),
                               render_bin(vp.bin, vp.frag_area, fb)))
    return tuple(out)


def expand(values: F32Array, frag_area: Pair) -> F32Array:
    """Every fragment replicated ``fa`` times (the upscaling store / blit)."""
    return np.repeat(np.repeat(values, frag_area[1], axis=0), frag_area[0], axis=1)


def _put(image: F32Array, x: int, y: int, block: F32Array) -> None:
    """``image[y:, x:] = block``, clipped to the image and to the block."""
    h, w = image.shape
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + block.shape[1], w), min(y + block.shape[0], h)
    if x1 > x0 and y1 > y0:
        image[y0:y1, x0:x1] = block[y0 - y:y1 - y, x0 - x:x1 - x]


def store_expanded(plan: RenderPassPlan, bins: Sequence[RenderedBin]) -> F32Array:
    """The non-subsampled path: a ``H x W`` image where every framebuffer pixel holds the
    fragment covering it (:data:`EMPTY` where no bin was rendered)."""
    W, H = plan.scenario.framebuffer
    img = np.full((H, W), EMPTY, dtype=np.float32)
    for rb in bins:
        _put(img, rb.bin[0], rb.bin[1], expand(rb.values, rb.frag_area))
    return img


def _expanded_extent(rb: RenderedBin, fb_size: Pair) -> Rect4:
    """``x0, y0, x1, y1``: the pixels :func:`store_expanded` writes for ``rb`` (its expanded
    fragment grid, which may pass the bin's own size, clipped to the framebuffer)."""
    W, H = fb_size
    ny, nx = rb.values.shape
    bx, by = rb.bin[0], rb.bin[1]
    return max(bx, 0), max(by, 0), min(bx + nx * rb.frag_area[0], W), min(by + ny * rb.frag_area[1], H)


def expanded_rows(fb_size: Pair, bins: Sequence[RenderedBin], y0: int, y1: int) -> F32Array:
    """Rows ``[y0, y1)`` of :func:`store_expanded`'s image, the same values, without the rest
    of it: each bin's fragment rows that reach the band, expanded and written in the same
    order (a later bin overwrites an earlier one where they overlap, as there)."""
    W, _ = fb_size
    img = np.full((max(y1 - y0, 0), W), EMPTY, dtype=np.float32)
    for rb in bins:
        xa, ya, xb, yb = _expanded_extent(rb, fb_size)
        ya, yb = max(ya, y0), min(yb, y1)
        if xb <= xa or yb <= ya:
            continue
        fw, fh = rb.frag_area
        bx, by = rb.bin[0], rb.bin[1]
        j0 = (ya - by) // fh
        block = expand(rb.values[j0:(yb - 1 - by) // fh + 1], rb.frag_area)   # from row by + j0 * fh
        top = by + j0 * fh
        img[ya - y0:yb - y0, xa:xb] = block[ya - top:yb - top, xa - bx:xb - bx]
    return img


def expanded_coverage(fb_size: Pair, bins: Sequence[RenderedBin]) -> tuple[BoolArray, BoolArray]:
    """Per framebuffer column and per row: whether :func:`store_expanded` writes a fragment
    there (``(image != EMPTY).any(axis=0)``, ``.any(axis=1)``: a fragment is never
    :data:`EMPTY`, the scene lies in [0, 1]), from the bins' rectangles alone."""
    W, H = fb_size
    cols, rows = np.zeros(W, dtype=bool), np.zeros(H, dtype=bool)
    for rb in bins:
        xa, ya, xb, yb = _expanded_extent(rb, fb_size)
        if xb > xa and yb > ya:
            cols[xa:xb] = True
            rows[ya:yb] = True
    return cols, rows


def stored_rect(layout: SubsampledLayout, rb: RenderedBin) -> tuple[Rect, bool]:
    """Where the tile's fragments go in the subsampled image and whether they are stored 1:1
    (view subsampled in the tile).  Without a solved layout (``!tile.subsampled``) the tile is
    stored expanded at its framebuffer position, clipped to the framebuffer."""
    t = layout.tile(*rb.cell)
    if t is None or not t.subsampled:
        W, H = layout.fb_size
        bx, by, bw, bh = rb.bin
        return Rect(bx, by, max(min(bx + bw, W) - bx, 0), max(min(by + bh, H) - by, 0)), False
    return t.stored_pos(rb.view), t.is_subsampled(rb.view)


def store_subsampled(layout: SubsampledLayout, bins: Sequence[RenderedBin]) -> F32Array:
    """The subsampled image of one layer (``height0 x width0``, :data:`EMPTY` elsewhere): the
    fragment grid placed at the stored rectangle's origin and clipped to the rectangle (the
    store scissor), 1:1 for subsampled views, expanded otherwise."""
    img = np.full((layout.height0, layout.width0), EMPTY, dtype=np.float32)
    for rb in bins:
        r, low_res = stored_rect(layout, rb)
        data = rb.values if low_res else expand(rb.values, rb.frag_area)
        _put(img, r.x, r.y, data[:r.h, :r.w])
    return img
