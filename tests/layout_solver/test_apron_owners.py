"""The owners of one apron destination (``_owners``) are those of the whole-image owner map
(``owner_map``) on that region, overlapping and off-image rectangles included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fdm.geometry import Rect
from layout_solver.aprons import AprBlit
from layout_solver.reconstruct.apron_blits import _owners, _StoredRects, apply_aprons, blit_nearest, owner_map

rects = st.builds(Rect, st.integers(-20, 60), st.integers(-20, 60), st.integers(0, 40), st.integers(0, 40))


@settings(max_examples=300, deadline=None)
@given(st.lists(rects, max_size=8), st.integers(-10, 50), st.integers(-10, 50), st.integers(0, 40),
       st.integers(0, 40))
def test_region_owners_are_the_owner_maps(stored, x, y, w, h):
    H, W = 48, 56
    full = owner_map((H, W), [((k, 0), r) for k, r in enumerate(stored)])
    ys, xs = slice(max(y, 0), min(max(y + h, 0), H)), slice(max(x, 0), min(max(x + w, 0), W))
    got = _owners(_StoredRects.of([((k, 0), r) for k, r in enumerate(stored)]), ys, xs)
    assert np.array_equal(got, full[ys, xs].reshape(got.shape))


@settings(max_examples=300, deadline=None)
@given(st.integers(-12, 40), st.integers(-12, 40), st.integers(0, 30), st.integers(0, 30),
       st.tuples(*[st.floats(-8, 48, allow_nan=False, width=32)] * 4))
def test_blit_is_the_per_pixel_rule(x, y, w, h, src):
    """Every destination pixel inside the image takes the texel containing its mapped centre
    (reads clamped to the image); the counts are of clipped pixels and clamped reads."""
    H, W = 30, 36
    img = np.arange(H * W, dtype=np.float32).reshape(H, W)
    out = img.copy()
    clipped, clamped = blit_nearest(out, Rect(x, y, w, h), src)
    want = img.copy()
    want_clipped = want_clamped = 0
    sx0, sy0, sx1, sy1 = src
    for j in range(h):
        for i in range(w):
            dx, dy = x + i, y + j
            if not (0 <= dx < W and 0 <= dy < H):
                want_clipped += 1
                continue
            tx = int(np.floor(sx0 + (i + 0.5) * ((sx1 - sx0) / w)))
            ty = int(np.floor(sy0 + (j + 0.5) * ((sy1 - sy0) / h)))
            cx, cy = min(max(tx, 0), W - 1), min(max(ty, 0), H - 1)
            want_clamped += (cx, cy) != (tx, ty)
            want[dy, dx] = img[cy, cx]
    assert (clipped, clamped) == (want_clipped, want_clamped)
    assert np.array_equal(out, want)


def _contested_by_owner_map(image, aprons, stored):
    """apply_aprons' contested pixels and foreign counts from the whole-image owner map, every
    apron looked at (no shortcut)."""
    H, W = image.shape
    own = owner_map((H, W), stored)
    index = {cell: k for k, (cell, _) in enumerate(stored)}
    contested = np.zeros((H, W), dtype=bool)
    over, overwriting = 0, []
    for i, a in enumerate(aprons):
        d = a.dst
        ys, xs = slice(max(d.y, 0), min(max(d.y + d.h, 0), H)), slice(max(d.x, 0), min(max(d.x + d.w, 0), W))
        hit = (own[ys, xs] >= 0) & (own[ys, xs] != index.get(a.dst_tile, -2))
        contested[ys, xs] |= hit
        if hit.any():
            over += int(hit.sum())
            overwriting.append(i)
    return contested, over, tuple(overwriting)


@settings(max_examples=200, deadline=None)
@given(st.lists(rects, min_size=1, max_size=6), st.lists(st.tuples(rects, st.integers(0, 7)), max_size=8))
def test_apply_aprons_skips_only_aprons_that_meet_no_tile(stored, blits):
    """apply_aprons looks at the owners only of aprons whose destination meets a stored
    rectangle (issue 22): the contested pixels and counts of looking at every apron."""
    H, W = 48, 56
    cells = [((k, 0), r) for k, r in enumerate(stored)]
    aprons = [AprBlit(dst=r, src=(0.0, 0.0, 4.0, 4.0), edge="vertical", dst_tile=(t, 0), src_tile=(0, 0))
              for r, t in blits]
    image = np.arange(H * W, dtype=np.float32).reshape(H, W)
    _, stats, contested = apply_aprons(image, aprons, stored=cells)
    want, over, overwriting = _contested_by_owner_map(image, aprons, cells)
    assert np.array_equal(contested, want)
    assert (stats.dst_pixels_over_tiles, stats.overwriting) == (over, overwriting)
