"""The fast reconstruction (issue 10): the float32 FMA emulation bit for bit against the scalar
model, the block-wise pixel-centre sampler (layout_solver.reconstruct.grid) value for value
against the scattered one it replaces in the pictures, the bounded rasters against the
full-resolution arrays, the bounds on memory (block size, raster size) and the progress hook.

No timing here: the speed is measured by bench/layout_bench.py (bench/results/layout.md)."""

from __future__ import annotations

import functools
import hashlib
import io
import os
from collections.abc import Callable

import attrs
import numpy as np
import pytest

import fdm
from fdm.plan import plan_render_pass
from fdm.scenario import load_scenario
from layout_solver import pictures as pic
from layout_solver import tu_calc_subsampled
from layout_solver.metadata import UndefinedMetadataRead, ffma
from layout_solver.progress import terminal_progress
from layout_solver.reconstruct import (
    ADDRESSING,
    BLOCK,
    FILTERS,
    RASTER_MAX_SIDE,
    ffma_np,
    pixel_blocks,
    raster_factor,
    reconstruct_view,
    reconstruction_images,
    reconstruction_rasters,
    render_bins,
    sample_both,
)
from layout_solver.reconstruct import images as images_mod
from layout_solver.reconstruct.transform import _ffma_fused_general
from layout_solver.report import MAX_RECONSTRUCTION_PIXELS, layout_files
from turnip_base.errors import DriverAssertion

DEMO = os.path.join(os.path.dirname(fdm.__file__), "data", "demo.toml")
COMBOS = [(f, a) for f in FILTERS for a in ADDRESSING]
F32 = np.float32
Ffma = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@functools.cache
def demo():
    p = plan_render_pass(load_scenario(DEMO))
    return p, tu_calc_subsampled(p)


# -- the float32 FMA ---------------------------------------------------------------------------

def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


@functools.cache
def fma_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random and edge inputs: uniform values of the transform's ranges, random bit patterns
    (subnormals, infinities, NaN, both zeros), the double-rounding cases of the scalar tests and
    constructed ones (``a * b`` half a float32 ulp of ``c`` minus a little, so that the float64
    sum lands exactly on a float32 midpoint while the exact sum does not), signed zeros and the
    overflow boundary."""
    rng = np.random.default_rng(20261125)
    n = 1500
    a = [rng.uniform(0, 1, n), rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    b = [rng.uniform(0, 8, n), rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    c = [rng.uniform(-1, 1, n), rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    # midpoints: c = m * 2^e (24-bit m), p = h (1 + 2^-k)(1 - 2^-k) with h = ulp(c) / 2, k >= 15
    m = rng.integers(2 ** 23, 2 ** 24, 400)
    e = rng.integers(-100, 100, 400)
    k = rng.integers(15, 20, 400)
    sign = rng.choice([-1.0, 1.0], 400)
    cc = sign * np.ldexp(m.astype(np.float64), e)
    h = np.ldexp(1.0, e - 1)
    a.append(h * (1 + np.ldexp(1.0, -k)) * rng.choice([-1.0, 1.0], 400))
    b.append((1 - np.ldexp(1.0, -k)) * rng.choice([-1.0, 1.0], 400))
    c.append(cc)
    edge_a = [-(2 ** -24) * (1 + 2 ** -18), 1, 1, -0.0, -0.0, 0.0, 3.4028235e38, 3.4028235e38, 1e-30, -1e-30]
    edge_b = [1 - 2 ** -18, 1, 1 + 2 ** -23, 1, -1, -1, 1, 1.0000001, 1e-15, 1e-15]
    edge_c = [1 + 2 ** -23, 2 ** -24, 2 ** -24, -0.0, -0.0, -0.0, 2.028241e31, 0.0, 0.0, -0.0]
    a.append(np.array(edge_a))
    b.append(np.array(edge_b))
    c.append(np.array(edge_c))
    with np.errstate(invalid="ignore"):   # the random NaN patterns
        return tuple(np.concatenate(t).astype(np.float32) for t in (a, b, c))  # type: ignore[return-value]


@functools.cache
def fma_expected() -> np.ndarray:
    a, b, c = fma_inputs()
    with np.errstate(all="ignore"):
        return np.array([ffma(x, y, z, True) for x, y, z in zip(a, b, c, strict=True)], dtype=np.float32)


def fma_mismatches(impl: Ffma) -> int:
    """Inputs of :func:`fma_inputs` on which ``impl`` differs from the scalar ``metadata.ffma``
    (fused) in any bit (NaN: any NaN)."""
    a, b, c = fma_inputs()
    want = fma_expected()
    with np.errstate(all="ignore"):
        got = np.asarray(impl(a, b, c), dtype=np.float32)
    same = (_bits(got) == _bits(want)) | (np.isnan(got) & np.isnan(want))
    return int((~same).sum())


def test_vectorised_fma_is_the_scalar_model_bit_for_bit():
    assert fma_mismatches(lambda a, b, c: ffma_np(a, b, c, True)) == 0
    assert fma_mismatches(_ffma_fused_general) == 0        # the slow path the fast one defers to
    a, b, c = fma_inputs()
    want = np.array([ffma(x, y, z, False) for x, y, z in zip(a[:1500], b[:1500], c[:1500], strict=True)])
    assert np.array_equal(_bits(ffma_np(a[:1500], b[:1500], c[:1500], False)), _bits(want))


def test_vectorised_fma_check_catches_unfused_and_double_rounding():
    """Planted bugs: a multiply-add with the product rounded first, and the float64 sum rounded
    to float32 without the midpoint correction (double rounding), must both fail the check."""
    assert fma_mismatches(lambda a, b, c: ffma_np(a, b, c, False)) > 100
    double = fma_mismatches(lambda a, b, c: (a.astype(np.float64) * b.astype(np.float64)
                                             + c.astype(np.float64)).astype(np.float32))
    assert double > 50   # the constructed midpoints: about half of them round the wrong way


def test_exact_zero_keeps_ieee_sign():
    """(-0) * 1 + (-0) is -0 in IEEE 754 (and on an FMA unit); the scalar model agrees."""
    assert _bits(ffma(F32(-0.0), F32(1), F32(-0.0), True)) == _bits(F32(-0.0))
    assert _bits(ffma(F32(-0.0), F32(1), F32(0.0), True)) == _bits(F32(0.0))
    assert _bits(ffma_np(F32(-0.0), F32(1), F32(-0.0), True)) == _bits(F32(-0.0))


# -- block-wise sampling == scattered sampling -----------------------------------------------

def _scattered(rec, filter, addressing):
    """The previous path of the pictures: ``sample_both`` at every rendered pixel centre."""
    W, H = rec.plan.scenario.framebuffer
    gy, gx = np.mgrid[0:H, 0:W]
    xs, ys = (gx + 0.5).ravel(), (gy + 0.5).ravel()
    rendered = (rec.expanded != np.float32(-1)).ravel()
    a, b = np.full(W * H, np.nan), np.full(W * H, np.nan)
    a[rendered], b[rendered] = sample_both(rec, xs[rendered], ys[rendered], filter, addressing)[:2]
    return a.reshape(H, W), b.reshape(H, W)


def _blocks(rec, filter, addressing, **kw):
    W, H = rec.plan.scenario.framebuffer
    a, b = np.full((H, W), np.nan), np.full((H, W), np.nan)
    for blk in pixel_blocks(rec, filter, addressing, **kw):
        a[blk.y0:blk.y1, blk.x0:blk.x1] = blk.subsampled
        b[blk.y0:blk.y1, blk.x0:blk.x1] = blk.expanded
    return a, b


def _same(x, y):
    return np.array_equal(x.view(np.uint64), y.view(np.uint64))   # bit for bit, NaN included


@pytest.mark.parametrize("which", [pytest.param("11.7", marks=pytest.mark.slow),   # seconds each: ./dev test
                                   pytest.param("11.9", marks=pytest.mark.slow), "11.13", "merged_stick"])
def test_pixel_blocks_are_the_scattered_sampler(which, plan_11_7, plan_11_9, plan_11_13, plan_merged_stick):
    p = {"11.7": plan_11_7, "11.9": plan_11_9, "11.13": plan_11_13, "merged_stick": plan_merged_stick}[which]
    L = tu_calc_subsampled(p)
    for drop in (None, "all"):
        rec = reconstruct_view(p, L, 0, drop_apron=drop)
        for filter, addressing in COMBOS:
            want = _scattered(rec, filter, addressing)
            got = _blocks(rec, filter, addressing, block=64)   # small blocks: several per metadata bin
            assert _same(got[0], want[0]) and _same(got[1], want[1]), (which, drop, filter, addressing)


def test_pixel_blocks_check_catches_a_wrong_texel(plan_11_7):
    """Planted bug: the subsampled image moved by one texel changes the block-wise samples, and
    the comparison of test_pixel_blocks_are_the_scattered_sampler sees it."""
    rec = reconstruct_view(plan_11_7, tu_calc_subsampled(plan_11_7), 0)
    want = _scattered(rec, "nearest", "clamp_to_edge")
    shifted = attrs.evolve(rec, subsampled=np.roll(rec.subsampled, 1, axis=1))
    assert not _same(_blocks(shifted, "nearest", "clamp_to_edge")[0], want[0])


def test_pixel_blocks_refuse_what_the_shader_leaves_undefined():
    """As the scattered transform: a rendered pixel whose bin slot was never written, or whose bin
    coordinate f2u16 leaves undefined."""
    p, L = demo()
    rec = reconstruct_view(p, L, 0)
    ubo = list(rec.ubo)
    ubo[2 + 3] = None                                                    # bin 3 of layer 0 unwritten
    with pytest.raises(UndefinedMetadataRead, match="^tu_get_subsampled_coordinates: "):
        list(pixel_blocks(attrs.evolve(rec, ubo=tuple(ubo)), "linear", "clamp_to_edge"))
    ubo = list(rec.ubo)
    h = ubo[0]
    ubo[0] = (h[0], h[1], F32(-1.0), h[3])                               # header offset: bin x < 0
    with pytest.raises(DriverAssertion, match="^f2u16: "):
        list(pixel_blocks(attrs.evolve(rec, ubo=tuple(ubo)), "linear", "clamp_to_edge"))


def test_blocks_are_bounded_and_cover_each_rendered_pixel_once():
    """The memory bound: every block has at most BLOCK x BLOCK pixels; together they cover every
    rendered pixel exactly once."""
    p, L = demo()
    rec = reconstruct_view(p, L, 1)
    W, H = p.scenario.framebuffer
    count = np.zeros((H, W), dtype=np.int32)
    for blk in pixel_blocks(rec, "linear", "clamp_to_edge"):
        assert 0 < blk.x1 - blk.x0 <= BLOCK and 0 < blk.y1 - blk.y0 <= BLOCK
        assert blk.subsampled.shape == blk.expanded.shape == (blk.y1 - blk.y0, blk.x1 - blk.x0)
        count[blk.y0:blk.y1, blk.x0:blk.x1] += ~np.isnan(blk.expanded)
    assert np.array_equal(count, (rec.expanded != np.float32(-1)).astype(np.int32))


# -- results identical to the previous implementation -------------------------------------------

def _h(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


#: sha256 (first 16 hex digits) of the float64 bytes of ``reconstructed``, ``reference`` and
#: ``error`` and the largest error, as computed by ``reconstruction_images`` of commit 53fea01
#: (whole-image scattered sampling) on the demo; the docs' table rounds the largest errors
DEMO_BEFORE = {
    (0, "linear", "clamp_to_edge", None): ("533810c27e58f7e9", "04b5b3b443984571", "403c3564be2516b5",
                                           0.10957115923883876),
    (1, "linear", "clamp_to_edge", None): ("28c9edadcb08fa8a", "ee6889483df16ccd", "e3c133e8faf07884",
                                           0.1337391298664553),
    (1, "nearest", "clamp_to_border", None): ("8e6bc8f607a0cab9", "8e6bc8f607a0cab9", "2c3b31f896845d87", 0.0),
    (0, "linear", "clamp_to_border", None): ("e6d4fa5868431324", "fa1787e21cddd6f1", "92569feaf55e8b4e",
                                             0.3932807429049596),
    (0, "linear", "clamp_to_edge", "all"): ("7a13eca0ca3fa21c", "04b5b3b443984571", "08c97a1a4fde3c35",
                                            0.8759965155789154),
}


@pytest.mark.slow  # whole-demo reconstructions (1920x1920, seconds each): ./dev test and CI
@pytest.mark.parametrize("key", list(DEMO_BEFORE))
def test_demo_reconstruction_identical_to_before(key):
    view, filter, addressing, drop = key
    p, L = demo()
    im = reconstruction_images(p, L, view, filter=filter, addressing=addressing, drop_apron=drop)
    recon, ref, err, worst = DEMO_BEFORE[key]
    assert (_h(im.reconstructed), _h(im.reference), _h(im.error)) == (recon, ref, err)
    assert float(np.nanmax(im.error)) == worst
    r = reconstruction_rasters(p, L, view, filter=filter, addressing=addressing, drop_apron=drop, max_side=1920)
    assert r.factor == 1 and r.max_error == worst and _h(r.error) == err and _h(r.reconstructed) == recon
    assert r.value_range == _rendered_range(p, view)


def _rendered_range(p, view: int) -> tuple[float, float]:
    # every fragment the view rendered (bins may reach past the framebuffer, so not only the
    # values the expanded image keeps)
    vals = np.concatenate([b.values.ravel() for b in render_bins(p, view)])
    return float(vals.min()), float(vals.max())


# -- bounded rasters ------------------------------------------------------------------------------

def _pooled(full: np.ndarray, k: int) -> np.ndarray:
    H, W = full.shape
    e = np.full((-(-H // k) * k, -(-W // k) * k), np.nan)
    e[:H, :W] = full
    return np.fmax.reduce(np.fmax.reduce(e.reshape(e.shape[0] // k, k, e.shape[1] // k, k), axis=3), axis=1)


@pytest.mark.parametrize("max_side", [40, 97, 400])
def test_rasters_reduce_the_full_images(max_side, plan_11_13, plan_11_7):
    """Reduced by k = ceil(side / max_side): every k-th pixel from k // 2 (image and memory), the
    error the largest of each k x k block (so no error line disappears); the largest error and
    the value range over every rendered fragment."""
    for p in (plan_11_13, plan_11_7):
        L = tu_calc_subsampled(p)
        full = reconstruction_images(p, L, 0, drop_apron=0)
        r = reconstruction_rasters(p, L, 0, drop_apron=0, max_side=max_side)
        k = raster_factor(p.scenario.framebuffer, max_side)
        assert r.factor == k and max(r.error.shape) <= max_side and max(r.reconstructed.shape) <= max_side
        assert np.array_equal(r.error, _pooled(full.error, k), equal_nan=True)
        assert np.array_equal(r.reconstructed, full.reconstructed[k // 2::k, k // 2::k], equal_nan=True)
        assert np.array_equal(r.subsampled, full.subsampled[k // 2::k, k // 2::k])
        assert r.max_error == float(np.nanmax(full.error))
        x, y = r.worst
        assert full.error[int(y), int(x)] == r.max_error
        assert r.value_range == _rendered_range(p, 0)


def test_rasters_do_not_depend_on_the_thread_count(monkeypatch, plan_11_9):
    L = tu_calc_subsampled(plan_11_9)
    got = []
    for n in (1, 2, 3):
        monkeypatch.setattr(images_mod, "WORKERS", n)
        monkeypatch.setattr(images_mod.os, "cpu_count", lambda: 4)
        r = reconstruction_rasters(plan_11_9, L, 0, max_side=300)
        got.append((r.error.tobytes(), r.reconstructed.tobytes(), r.max_error, r.worst))
    assert got[0] == got[1] == got[2]


def test_raster_bounds():
    assert raster_factor((1280, 1280)) == 1 and raster_factor((1281, 10)) == 2
    assert raster_factor((1920, 1920)) == 2 and raster_factor((3840, 3840)) == 3
    assert raster_factor((4096, 4096)) == 4
    assert RASTER_MAX_SIDE == 1280
    # the VR sizes of issue 10 get their reconstruction pictures
    assert 3840 * 3840 <= 4096 * 4096 <= MAX_RECONSTRUCTION_PIXELS < 4097 * 4097


# -- pictures: the same bytes as the whole-image formulas ------------------------------------------

def test_picture_colours_are_the_whole_image_formulas():
    rng = np.random.default_rng(5)
    a = rng.uniform(-0.2, 1.2, (301, 977))
    a.flat[::7] = 0.5 / 255          # exact ties of rint
    want = np.rint(np.stack([np.clip(a, 0.0, 1.0)] * 3, axis=-1) * 255.0).astype(np.uint8)
    assert np.array_equal(pic.to_rgb8(a), want)
    e = rng.uniform(0, 0.3, (301, 977))
    e[::3] = 0
    t = np.clip(e / e.max(), 0.0, 1.0)
    rgb = np.stack([np.where(t < 0.5, 1.0, 1.0 - (t - 0.5) * 1.2),
                    np.where(t < 0.5, 1.0 - t * 0.4, 0.8 - (t - 0.5) * 1.6),
                    np.where(t < 0.25, 1.0 - t * 4.0, 0.0)], axis=-1)
    assert np.array_equal(pic.heat_rgb(e), np.rint(np.clip(rgb, 0.0, 1.0) * 255.0).astype(np.uint8))
    g = rng.uniform(-0.5, 1.5, (301, 977))
    g[::13, ::7] = np.nan
    want = pic.to_rgb8((np.nan_to_num(g, nan=0.07) - 0.07) / 0.897)
    want[np.isnan(g)] = (210, 225, 240)
    assert np.array_equal(pic.gray_rgb(g, 0.07, 0.897, (210, 225, 240)), want)


# -- progress ---------------------------------------------------------------------------------------

class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal():
    plain = io.StringIO()
    with terminal_progress("layout", plain) as progress:
        assert progress is None
    assert plain.getvalue() == ""
    tty = _Tty()
    with terminal_progress("layout", tty) as progress:
        assert progress is not None
        progress(1, 2, "view 0 drawn")
        progress(2, 2, "index.html")
    assert "layout" in tty.getvalue()


def test_layout_files_reports_every_step(plan_11_7):
    seen: list[tuple[int, int, str]] = []
    files, _ = layout_files(plan_11_7, progress=lambda d, t, what: seen.append((d, t, what)))
    assert [d for d, _, _ in seen] == list(range(1, len(seen) + 1))
    assert {t for _, t, _ in seen} == {len(seen)} and seen[-1][2] == "index.html"
    assert len(seen) == 1 + 5 + 1     # one view drawn, five pictures encoded, the page
    assert files == layout_files(plan_11_7)[0]   # the hook changes nothing written


def test_above_the_bound_the_summary_says_the_pictures_are_not_drawn(make_plan):
    """4104 x 4096 > 4096 x 4096 pixels: (a) and (b) only, and the summary says why."""
    p = make_plan(fb=(4104, 4096), tile=(960, 512), constant=0.5)
    files, summary = layout_files(p)
    assert "reconstruction pictures (c) not drawn: 4104x4096 exceeds the 16777216-pixel limit" in summary
    assert not any(name.startswith(("memory_", "reconstruction_", "error_")) for name in files)
    assert "subsampled_v0.svg" in files
