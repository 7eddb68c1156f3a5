"""Properties of the exact box filter (reference_chain)."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipmap.reference import axis_weights, level_sizes, reduce_axis, reference_chain
from turnip_base.errors import ScenarioError


def operator(d: int, dtype=np.float64) -> np.ndarray:
    """The n x d matrix of one axis reduction, obtained by filtering the unit vectors."""
    return reduce_axis(np.eye(d, dtype=dtype), 0)


@settings(deadline=None)
@given(st.integers(1, 3000))
def test_weights_sum_to_one_and_match_the_area_formula(d):
    w = axis_weights(d)
    n = max(1, d // 2)
    assert w.shape[0] == n
    assert np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    if d % 2 == 1 and d > 1:
        j = np.arange(n)
        assert np.allclose(w * (2 * n + 1), np.stack([n - j, np.full(n, n), j + 1], axis=1), atol=1e-9)


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 120))
def test_every_input_texel_reaches_exactly_the_outputs_it_overlaps(d):
    a = operator(d)
    n = max(1, d // 2)
    # area coverage: output j covers [j d/n, (j+1) d/n) of the source; texel i is [i, i+1)
    for j in range(n):
        lo, hi = Fraction(j * d, n), Fraction((j + 1) * d, n)
        for i in range(d):
            overlap = max(Fraction(0), min(hi, Fraction(i + 1)) - max(lo, Fraction(i)))
            assert a[j, i] == pytest.approx(float(overlap / (hi - lo)), abs=1e-12)
    assert np.allclose(a.sum(axis=1), 1.0, atol=1e-12)          # each output: weights sum to 1
    assert np.allclose(a.sum(axis=0), n / d, atol=1e-12)        # each input: mass n/d (area kept)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**31))
def test_chain_is_separable_vertical_then_horizontal(w, h, seed):
    img = np.random.default_rng(seed).random((h, w))
    chain = reference_chain(img)
    assert [c.shape[::-1] for c in chain] == level_sizes(w, h)
    prev = img
    for lvl in chain[1:]:
        want = operator(prev.shape[0]) @ prev @ operator(prev.shape[1]).T
        assert np.allclose(lvl, want, atol=1e-12)
        prev = lvl


# 0, or a constant whose products with the filter weights (at least 1/63 for sides up to 64)
# stay normal float32 numbers: a subnormal constant (Hypothesis found 1.4e-45) underflows in
# the float32 weighted mean, where no relative tolerance can hold.
CONSTANTS = st.one_of(st.just(0.0), st.floats(2**-100, 1.0, width=32))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 64), st.integers(1, 64), CONSTANTS)
def test_constant_images_stay_constant(w, h, c):
    chain64 = reference_chain(np.full((h, w, 2), c))
    chain32 = reference_chain(np.full((h, w, 2), c, np.float32), np.float32)
    for a, b in zip(chain64, chain32, strict=True):
        assert np.allclose(a, c, rtol=1e-15, atol=0)
        assert np.allclose(b, c, rtol=3e-6, atol=0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 80), st.integers(1, 80), st.integers(0, 2**31))
def test_float32_replay_tracks_float64(w, h, seed):
    img = np.random.default_rng(seed).random((h, w)).astype(np.float32)
    for a, b in zip(reference_chain(img), reference_chain(img, np.float32), strict=True):
        assert b.dtype == np.float32
        assert np.allclose(a, b, rtol=0, atol=1e-5)


def test_power_of_two_float32_is_the_plain_2x2_mean():
    img = np.random.default_rng(1).random((16, 8)).astype(np.float32)
    l1 = reference_chain(img, np.float32)[1]
    h = np.float32(0.5)
    want = ((img[0::2, 0::2] + img[1::2, 0::2]) * h + (img[0::2, 1::2] + img[1::2, 1::2]) * h) * h
    assert np.array_equal(l1, want)


def test_rejects_bad_shapes():
    with pytest.raises(ScenarioError, match="image"):
        reference_chain(np.zeros(5))
    with pytest.raises(ScenarioError, match="size"):
        reference_chain(np.zeros((0, 4)))
