"""Issue 22, part 3: what the (c) pictures build instead of whole-framebuffer arrays is the same,
bit for bit: the expanded image a band of rows at a time (render.expanded_rows, its coverage
from the bins' rectangles), the scene on a fragment grid (reference_scene.scene_grid), and the
sampling of a band (sample_grid's height/row0) against the whole image's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.scenario import load_scenario
from layout_solver import tu_calc_subsampled
from layout_solver.reconstruct import EMPTY, reconstruct_view, render_bins, sample_grid, scene, store_expanded
from layout_solver.reconstruct.grid import _Expanded, _Grid, sample_grid_near
from layout_solver.reconstruct.reference_scene import scene_grid
from layout_solver.reconstruct.render import expanded_coverage, expanded_rows

REPO = Path(__file__).resolve().parents[2]
PLANS = ["plan_11_7", "plan_11_9", "plan_11_13", "plan_merged_stick", "demo_plan"]


@pytest.fixture(scope="module")
def demo_plan() -> RenderPassPlan:
    return plan_render_pass(load_scenario(REPO / "fdm" / "data" / "demo.toml"))


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _bands(p: RenderPassPlan, bins, cuts: list[int]) -> np.ndarray:
    fb = p.scenario.framebuffer
    return np.concatenate([expanded_rows(fb, bins, a, b) for a, b in zip(cuts, cuts[1:], strict=False)])


@pytest.mark.parametrize("which", PLANS)
def test_bands_are_the_expanded_image(which, request):
    p = request.getfixturevalue(which)
    W, H = p.scenario.framebuffer
    rng = np.random.default_rng(22)
    for view in range(p.scenario.fdm_layers):
        bins = render_bins(p, view)
        full = store_expanded(p, bins)
        for cuts in ([0, H], [0, 1, H - 1, H], sorted({0, H, *rng.integers(0, H, 7).tolist()})):
            assert np.array_equal(_bits(_bands(p, bins, cuts)), _bits(full))
        cols, rows = expanded_coverage((W, H), bins)
        assert np.array_equal(cols, (full != EMPTY).any(axis=0)) and np.array_equal(rows, (full != EMPTY).any(axis=1))


def test_a_band_off_by_a_row_is_caught(plan_11_13):
    """The comparison above sees a band built one row too low (the planted bug)."""
    p = plan_11_13
    bins = render_bins(p, 0)
    H = p.scenario.framebuffer[1]
    wrong = np.concatenate([expanded_rows(p.scenario.framebuffer, bins, 0, 40),
                            expanded_rows(p.scenario.framebuffer, bins, 41, H + 1)])
    assert not np.array_equal(_bits(wrong), _bits(store_expanded(p, bins)))


@pytest.mark.parametrize("which", PLANS)
def test_scene_grid_is_the_scene(which, request):
    """Every bin's fragment grid; the disc, stripe and line terms each hold somewhere in the
    demo (so each shortcut of scene_grid is taken and left)."""
    p = request.getfixturevalue(which)
    fb = p.scenario.framebuffer
    for view in range(p.scenario.fdm_layers):
        for tp in p.tiles:
            vp = tp.views[view]
            if not vp.visible or vp.bin[2] <= 0 or vp.bin[3] <= 0:
                continue
            (bx, by, bw, bh), (fw, fh) = vp.bin, vp.frag_area
            xs = bx + (np.arange(-(-bw // fw)) + 0.5) * fw
            ys = by + (np.arange(-(-bh // fh)) + 0.5) * fh
            assert np.array_equal(_bits(scene_grid(xs, ys, fb)), _bits(scene(xs[None, :], ys[:, None], fb)))
    xs, ys = np.arange(fb[0]) + 0.5, np.arange(fb[1]) + 0.5
    whole = scene_grid(xs, ys, fb)
    assert np.array_equal(_bits(whole), _bits(scene(xs[None, :], ys[:, None], fb)))


def test_scene_grid_terms_all_hold_in_the_demo(demo_plan):
    fb = demo_plan.scenario.framebuffer
    xs, ys = np.arange(fb[0]) + 0.5, np.arange(fb[1]) + 0.5
    a, b = xs[None, :] / fb[0], ys[:, None] / fb[1]
    assert ((((a - 0.62) ** 2 + (b - 0.41) ** 2) < 0.17 ** 2).any() and ((a >= 0.30) & (a < 0.33)).any()
            and (np.abs(a - b + 0.1) < 0.004).any())


@pytest.mark.parametrize("which", ["plan_11_13", "plan_merged_stick", "demo_plan"])
def test_a_band_samples_as_the_whole_image(which, request):
    """_Grid over bands (what picture_rasters samples) against _Grid over the whole image (what
    pixel_blocks samples): the same regions, masks and samples, exact and near."""
    p = request.getfixturevalue(which)
    L = tu_calc_subsampled(p)
    W, H = p.scenario.framebuffer
    for view in range(p.scenario.fdm_layers):
        rec = reconstruct_view(p, L, view)
        full = _Grid.of(rec)
        banded = _Grid.build((W, H), L, rec.layer, rec.ubo, rec.fused, rec.subsampled, _Expanded((W, H), rec.bins))
        n = 0
        for r1, r2 in zip(full.regions(), banded.regions(), strict=True):
            xa, xb, ya, yb, m, _tx, _ty, image, row0 = r1
            assert (xa, xb, ya, yb) == r2[:4] and row0 == 0 and np.array_equal(m, r2[4])
            band, b0 = r2[7], r2[8]
            for f in ("linear", "nearest"):
                for ad in ("clamp_to_edge", "clamp_to_border"):
                    want = sample_grid(image, full.ref_tx[xa:xb], full.ref_ty[ya:yb], f, ad)
                    got = sample_grid(band, full.ref_tx[xa:xb], full.ref_ty[ya:yb], f, ad, height=H, row0=b0)
                    assert np.array_equal(_bits(want), _bits(got))
            want = sample_grid_near(image, full.ref_tx[xa:xb], full.ref_ty[ya:yb])
            got = sample_grid_near(band, full.ref_tx[xa:xb], full.ref_ty[ya:yb], height=H, row0=b0)
            assert np.array_equal(_bits(want), _bits(got))
            n += 1
        assert n > 0
