"""The (c) pictures' arrays of issue 22 (layout_solver.reconstruct.picture_rasters): every pixel
centre sampled to within NEAR_BOUND (sample_grid_near) instead of exactly, and the heat map made
from those errors (report._heat) the same bytes as the heat map of the exact errors
(reconstruction_rasters); the reconstruction, the memory image and the largest error exactly
the same.  No timing here: bench/layout_bench.py measures the speed."""

from __future__ import annotations

import numpy as np
import pytest

from layout_solver import pictures, tu_calc_subsampled
from layout_solver.pictures import gray_rgb, heat_rgb, heat_rgb_near
from layout_solver.reconstruct import (
    NEAR_BOUND,
    PICTURE_SLACK,
    picture_rasters,
    reconstruction_rasters,
    sample_grid,
    sample_grid_near,
)
from layout_solver.report import _heat


@pytest.mark.parametrize("which", ["plan_11_7", "plan_11_9", "plan_11_13", "plan_merged_stick"])
@pytest.mark.parametrize("max_side", [40, 97, 400])
@pytest.mark.parametrize("drop", [None, 0])
def test_picture_rasters_are_the_rasters(which, max_side, drop, request):
    p = request.getfixturevalue(which)
    L = tu_calc_subsampled(p)
    for view in range(p.scenario.fdm_layers):
        r = reconstruction_rasters(p, L, view, drop_apron=drop, max_side=max_side)
        q = picture_rasters(p, L, view, drop_apron=drop, max_side=max_side)
        assert q.factor == r.factor and q.value_range == r.value_range and q.max_error == r.max_error
        assert np.array_equal(q.subsampled, r.subsampled)
        assert np.array_equal(q.reconstructed, r.reconstructed, equal_nan=True)
        # exact where not near (NaN: nothing rendered, the same blocks), within the slack elsewhere
        assert np.array_equal(np.isnan(q.error), np.isnan(r.error))
        assert np.array_equal(q.error[~q.near], r.error[~q.near], equal_nan=True)
        assert np.all(np.abs(q.error[q.near] - r.error[q.near]) <= PICTURE_SLACK)
        ys, xs = np.nonzero(~np.isnan(r.error))
        pick = slice(None, None, max(1, len(ys) // 50))
        assert np.array_equal(q.exact(ys[pick], xs[pick]), r.error[ys[pick], xs[pick]])
        # the heat map: the exact errors' bytes
        top = r.max_error or 1.0
        assert np.array_equal(_heat(q), heat_rgb(np.nan_to_num(r.error, nan=0.0), vmax=top))


@pytest.mark.parametrize("dedup", [True, False])
def test_sample_grid_near_is_within_its_bound(dedup):
    rng = np.random.default_rng(22)
    img = rng.uniform(-1.0, 1.0, (40, 50)).astype(np.float32)
    img[5:9] = img[5]   # repeated rows (the expanded image's fragments)
    for _ in range(20):
        tx = np.sort(rng.uniform(-3.0, 53.0, 37))
        ty = np.sort(rng.uniform(-3.0, 43.0, 29))
        near = sample_grid_near(img, tx, ty, dedup=dedup)
        exact = sample_grid(img, tx, ty, "linear", "clamp_to_edge")
        assert np.max(np.abs(near - exact)) <= NEAR_BOUND / 100


def test_heat_rgb_near_flags_what_the_slack_could_move():
    top = 0.1
    # the blue channel 255 * (1 - 4 t) exactly at a rounding boundary k + 0.5, and just off it
    k = 200
    on = (1 - (k + 0.5) / 255) / 4 * top
    err = np.array([[on, on * (1 + 1e-6), 0.0, top, 0.5 * top, 0.25 * top]])
    near = np.ones_like(err, dtype=bool)
    heat, unsure = heat_rgb_near(err, near, PICTURE_SLACK, top)
    assert np.array_equal(heat, heat_rgb(err, vmax=top))
    assert unsure.tolist() == [[True, False, False, False, True, True]]
    _, unsure = heat_rgb_near(err, ~near, PICTURE_SLACK, top)   # exact values: nothing to take again
    assert not unsure.any()



@pytest.mark.parametrize("strip", [None, 7])
def test_strip_conversions_are_the_whole_image_formulas(strip, monkeypatch):
    """heat_rgb_near takes NaN as 0 a strip at a time, gray_rgb converts float32 to float64 a
    strip at a time (issue 22: no image-sized copies): the bytes of the whole-image formulas,
    with strips of 7 rows (several) and of the default size (one)."""
    if strip is not None:
        monkeypatch.setattr(pictures, "STRIP", strip * 29)
    rng = np.random.default_rng(5)
    err = rng.uniform(0, 0.1, (31, 29))
    err[rng.random(err.shape) < 0.2] = np.nan
    near = rng.random(err.shape) < 0.5
    heat, unsure = heat_rgb_near(err, near, PICTURE_SLACK, 0.1)
    ref, ref_unsure = heat_rgb_near(np.nan_to_num(err, nan=0.0), near, PICTURE_SLACK, 0.1)
    assert np.array_equal(heat, ref) and np.array_equal(unsure, ref_unsure)
    assert np.array_equal(heat, heat_rgb(np.nan_to_num(err, nan=0.0), vmax=0.1))
    img = rng.uniform(-1, 1, (31, 29)).astype(np.float32)
    img[::5, ::3] = np.nan
    g = gray_rgb(img, -1.0, 2.0, (210, 225, 240))
    whole = (np.nan_to_num(img.astype(np.float64), nan=-1.0) + 1.0) / 2.0
    want = np.repeat(np.rint(np.clip(whole, 0.0, 1.0) * 255.0).astype(np.uint8)[..., None], 3, axis=2)
    want[np.isnan(img)] = (210, 225, 240)
    assert np.array_equal(g, want)
    # the NaN pixels (a fifth) are the white of 0, which a strip left unconverted would not give
    assert np.isnan(err).sum() > 50 and (heat[np.isnan(err)] == 255).all()

def test_the_heat_map_takes_unsure_pixels_exactly(plan_11_9, monkeypatch):
    """With every reduced pixel unsure, _heat takes them all exactly: still the exact bytes (and
    a picture made from the near errors alone would differ where the slack matters)."""
    import layout_solver.report as report
    L = tu_calc_subsampled(plan_11_9)
    r = reconstruction_rasters(plan_11_9, L, 0, max_side=97)
    q = picture_rasters(plan_11_9, L, 0, max_side=97)

    def everything(err, near, slack, top):
        heat, _ = heat_rgb_near(err, near, slack, top)
        return np.zeros_like(heat), np.ones(err.shape, dtype=bool)

    monkeypatch.setattr(report, "heat_rgb_near", everything)
    assert np.array_equal(_heat(q), heat_rgb(np.nan_to_num(r.error, nan=0.0), vmax=r.max_error or 1.0))


@pytest.mark.slow  # whole-demo reconstructions (1920x1920, seconds each): ./dev test and CI
@pytest.mark.parametrize("view", [0, 1])
def test_demo_heat_map_is_the_exact_one(view):
    from tests.layout_solver.test_reconstruct_grid import demo
    p, L = demo()
    r = reconstruction_rasters(p, L, view)
    q = picture_rasters(p, L, view)
    assert q.max_error == r.max_error and np.array_equal(q.reconstructed, r.reconstructed, equal_nan=True)
    assert np.array_equal(_heat(q), heat_rgb(np.nan_to_num(r.error, nan=0.0), vmax=r.max_error or 1.0))
