"""The owners of one apron destination (``_owners``) are those of the whole-image owner map
(``owner_map``) on that region, overlapping and off-image rectangles included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fdm.geometry import Rect
from layout_solver.reconstruct.apron_blits import _owners, _StoredRects, blit_nearest, owner_map

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
