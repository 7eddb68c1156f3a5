"""The owners of one apron destination (``_owners``) are those of the whole-image owner map
(``owner_map``) on that region, overlapping and off-image rectangles included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fdm.geometry import Rect
from layout_solver.reconstruct.apron_blits import _owners, owner_map

rects = st.builds(Rect, st.integers(-20, 60), st.integers(-20, 60), st.integers(0, 40), st.integers(0, 40))


@settings(max_examples=300, deadline=None)
@given(st.lists(rects, max_size=8), st.integers(-10, 50), st.integers(-10, 50), st.integers(0, 40),
       st.integers(0, 40))
def test_region_owners_are_the_owner_maps(stored, x, y, w, h):
    H, W = 48, 56
    full = owner_map((H, W), [((k, 0), r) for k, r in enumerate(stored)])
    ys, xs = slice(max(y, 0), min(max(y + h, 0), H)), slice(max(x, 0), min(max(x + w, 0), W))
    arr = np.array([(r.x, r.y, r.x + r.w, r.y + r.h) for r in stored], dtype=np.int64).reshape(-1, 4)
    got = _owners(arr, ys, xs)
    assert np.array_equal(got, full[ys, xs].reshape(got.shape))
