"""The ``replay`` backend (issue 9): turnip's per-bin scheme replayed with ordinary Vulkan and
judged by an oracle that does not reuse the model's viewport/scissor/offset arithmetic.

* every replay case passes on the device (lavapipe in CI) with the validation layer on;
* each planted bug (a model function monkeypatched in-process, where ``fdm.plan`` /
  ``fdm.patch`` / ``fdm.turnip`` look it up) makes a named case FAIL;
* the finding case (turnip's outward-rounded scissor) fails on exactly the predicted pixels;
* the cases exercise what their names claim (merged groups, shifted bins, HW offsets);
* the committed SPIR-V is what the GLSL sources compile to.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import numpy as np
import pytest

import fdm
import fdm.clears
import fdm.patch
import fdm.plan
import fdm.turnip
import layout_solver
from turnip_base.errors import NotModelled
from vk_tests import build_spirv
from vk_tests.graphics import passes as graphics_passes
from vk_tests.graphics import shaders as graphics_shaders
from vk_tests.graphics import targets as graphics_targets
from vk_tests.replay import subsampled as replay_subsampled
from vk_tests.replay.cases import cases as replay_cases
from vk_tests.replay.cases import finding_cases
from vk_tests.replay.judge import judge_replay, oracle_view
from vk_tests.replay.render import run_replay
from vk_tests.replay.scene import BG, CLEAR, CLEAR_RECT, plan_scene
from vk_tests.suite.cases import Case, Verdict

pytestmark = pytest.mark.vulkan

CASES = {c.name: c for c in replay_cases()}
FINDINGS = {c.name: c for c in finding_cases()}


def _verdict(vk: Any, case: Case) -> Verdict:
    return case.judge(case.scene, case.run(vk, case.scene))


# ---- every case passes ------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_replay_case_passes(vk, name):
    v = _verdict(vk, CASES[name])
    assert v.status == "Pass", f"{name}: {v.message} {list(v.mismatches[:4])}"


def test_case_names_and_scenes():
    assert len(CASES) >= 12
    for name, case in CASES.items():
        assert case.backend == "replay" and name.startswith("replay.") and len(name.split(".")) == 4
        json.dumps(case.scene)  # the bundle stores scenes as JSON
    for area in ("1x1", "2x2", "4x4"):
        for gpu in ("a730", "a750"):
            assert f"replay.uniform_area.{area}.{gpu}" in CASES


def _plan(name: str) -> fdm.RenderPassPlan:
    return plan_scene(CASES[name].scene)[1]


def test_cases_exercise_what_they_claim():
    merged = _plan("replay.merged_bins.upstream_4x4.a730")
    assert {t.extent for t in merged.tiles} == {(2, 2)}
    assert {v.frag_area for t in merged.tiles for v in t.views} == {(4, 4)}
    for name in ("replay.fdm_offset.both_axes.a750", "replay.fdm_offset.wrap.a750",
                 "replay.fdm_offset.both_axes.a730"):
        p = _plan(name)
        bins = [v.bin for t in p.tiles for v in t.views]
        assert any(b[0] == 0 and b[2] < p.tiling.tile_size[0] for b in bins), name  # first column shrunk
        assert any(b[0] + b[2] > p.scenario.framebuffer[0] for b in bins), name     # the extra column
        assert len({v.frag_area for t in p.tiles for v in t.views}) >= 2, name
    wrap = plan_scene(CASES["replay.fdm_offset.wrap.a750"].scene)[0]
    assert wrap.fdm_offsets is not None and abs(wrap.fdm_offsets[0][0]) > 96  # |u| > T: b_o wraps
    mv = _plan("replay.multiview_offset.per_view.a750")
    assert mv.bin_offsets[0] != mv.bin_offsets[1]
    assert any(t.views[0].hw_offset != t.views[1].hw_offset for t in mv.tiles)
    fov = _plan("replay.foveated.radial.a750")
    assert {v.frag_area for t in fov.tiles for v in t.views} == {(1, 1), (2, 2), (4, 4)}
    assert any(t.foveat.binscaleen and t.foveat.hw_offsets[0] != (0, 0) for t in fov.tiles)
    assert not any(t.foveat.binscaleen for t in _plan("replay.foveated.radial.a730").tiles)
    inv = _plan("replay.invisible.density0.a730")
    tx, ty = inv.tiling.vsc.tile_count
    assert 0 < len(inv.tiles) < tx * ty  # some bins are skipped (density 0), some rendered
    for name in ("replay.viewport.unaligned.a750", "replay.viewport.flipped.a750"):
        vp = plan_scene(CASES[name].scene)[0].viewports[0]
        assert vp.x % 1 or vp.h < 0, name


# ---- the oracle stands alone ------------------------------------------------------------------

def test_judge_ignores_the_models_patch_arithmetic(vk, monkeypatch):
    """The judge re-plans the scene; with the viewport/scissor/FS/blit arithmetic replaced by
    nonsense it still passes a correct image: it reads only bins and fragment areas."""
    case = CASES["replay.fdm_offset.both_axes.a750"]
    out = case.run(vk, case.scene)
    nonsense_slots = lambda *a, **k: ()  # noqa: E731
    monkeypatch.setattr(fdm.plan, "patch_slots", nonsense_slots)
    monkeypatch.setattr(fdm.plan, "fs_params", lambda *a, **k: ())
    monkeypatch.setattr(fdm.plan, "blit_rects", lambda *a, **k: ())
    monkeypatch.setattr(fdm.plan, "tu_fdm_per_bin_offset", lambda *a, **k: (12345, -999))
    assert judge_replay(case.scene, out).status == "Pass"


def test_oracle_values_by_hand():
    """One bin of the 2x2 a730 case: the fragment at framebuffer (66, 2) starts at (66, 2)
    (bin (64, 0)), centre (67, 3): value (134, 6, 2, 2)."""
    sc, plan = plan_scene(CASES["replay.uniform_area.2x2.a730"].scene)
    want, problems = oracle_view(sc, plan, 0, "clear")
    assert not problems
    assert want[2, 66].tolist() == want[3, 67].tolist() == [134, 6, 2, 2]
    sc, plan = plan_scene(CASES["replay.scissor.unaligned.a730"].scene)
    want, _ = oracle_view(sc, plan, 0, "clear")
    assert want[0, 0].tolist() == list(CLEAR)          # fragment (0..3, 0..3): centre y 2 < scissor y 6
    assert want[4, 12].tolist() == [28, 12, 4, 4]      # centre (14, 6): on the scissor's top-left edges
    sc, plan = plan_scene(CASES["replay.invisible.density0.a730"].scene)
    want, _ = oracle_view(sc, plan, 0, "clear")
    assert want[127, 255].tolist() == list(BG)         # a density-0 bin: never rendered


# ---- planted bugs -----------------------------------------------------------------------------

def _scissor_off_by_one(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(*a: Any, **k: Any) -> Any:
        off, ext = orig(*a, **k)
        return (off[0] + 1, off[1]), ext
    return bug


def _o_sign(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(*a: Any, **k: Any) -> Any:
        o = orig(*a, **k)
        return (-o[0], -o[1])
    return bug


def _no_wrap(orig: Callable[..., Any]) -> Callable[..., Any]:
    return lambda a, m: a  # b_o = -u, not (-u) mod T


def _half_pixel(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(*a: Any, **k: Any) -> Any:
        return tuple(attrs.evolve(p, frag_offset=(p.frag_offset[0] + 0.5, p.frag_offset[1] + 0.5))
                     for p in orig(*a, **k))
    return bug


def _store_off_by_one(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(*a: Any, **k: Any) -> Any:
        return tuple(attrs.evolve(r, store_src=(r.store_src[0], (r.store_src[1][0] + 1, r.store_src[1][1])))
                     for r in orig(*a, **k))
    return bug


def _viewport_without_hw_offset(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(viewport: Any, frag_area: Any, bin_rect: Any, common_bin_start: Any, hw_offset: Any) -> Any:
        return orig(viewport, frag_area, bin_rect, common_bin_start, (0, 0))
    return bug


def _merged_extent_ignored(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(tile: Any, st: Any) -> Any:
        return tuple((b[0], b[1], min(b[2], st.tile_size[0]), min(b[3], st.tile_size[1])) for b in orig(tile, st))
    return bug


def _clear_one_column_short(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(*a: Any, **k: Any) -> Any:
        (x1, y1), br = orig(*a, **k)
        return (x1 + 1, y1), br
    return bug


def _first_apron_dropped(orig: Callable[..., Any]) -> Callable[..., Any]:
    def bug(layout: Any, layer: int, **k: Any) -> Any:
        return orig(layout, layer, **k)[1:]
    return bug


def _metadata_offset_one_texel(orig: Callable[..., Any]) -> Callable[..., Any]:
    """Every written bin's x offset one subsampled texel too far (``+ 1/width0``)."""
    def bug(layout: Any, **k: Any) -> Any:
        one = np.float32(1.0) / np.float32(layout.width0)
        return tuple(attrs.evolve(lm, bins=tuple(attrs.evolve(b, offset=(np.float32(b.offset[0] + one), b.offset[1]))
                                                 for b in lm.bins))
                     for lm in orig(layout, **k))
    return bug


#: (bug id, [(module, name)], wrapper, the case that catches it)
PLANTED: list[tuple[str, list[tuple[Any, str]], Callable[..., Any], str]] = [
    ("scissor_off_by_one", [(fdm.patch, "scissor_transform")], _scissor_off_by_one,
     "replay.uniform_area.2x2.a730"),
    ("o_sign", [(fdm.turnip, "tu_fdm_per_bin_offset"), (fdm.patch, "tu_fdm_per_bin_offset"),
                (fdm.plan, "tu_fdm_per_bin_offset"), (fdm.clears, "tu_fdm_per_bin_offset")], _o_sign,
     "replay.uniform_area.2x2.a750"),
    ("b_o_without_wrap", [(fdm.turnip, "euclid_rem")], _no_wrap, "replay.fdm_offset.both_axes.a750"),
    ("fragcoord_half_pixel", [(fdm.plan, "fs_params")], _half_pixel, "replay.uniform_area.1x1.a730"),
    ("store_rect_off_by_one", [(fdm.plan, "blit_rects")], _store_off_by_one, "replay.uniform_area.2x2.a730"),
    ("viewport_without_o_prime", [(fdm.patch, "fdm_apply_viewport")], _viewport_without_hw_offset,
     "replay.uniform_area.2x2.a750"),
    ("merged_extent_ignored", [(fdm.plan, "view_bins")], _merged_extent_ignored,
     "replay.merged_bins.upstream_4x4.a730"),
    ("gmem_clear_one_column_short", [(fdm.clears, "fdm_apply_gmem_clear_coords")], _clear_one_column_short,
     "replay.scissor.unaligned.a730"),
    ("apron_dropped", [(replay_subsampled, "tu_calc_subsampled_aprons")], _first_apron_dropped,
     "replay.subsampled.linear_edge.a730"),
    ("metadata_offset_one_texel", [(replay_subsampled, "layout_metadata")], _metadata_offset_one_texel,
     "replay.subsampled.nearest_edge.a730"),
    ("msaa_viewport_without_o_prime", [(fdm.patch, "fdm_apply_viewport")], _viewport_without_hw_offset,
     "replay.msaa_resolve.4x_triangle.a750"),
    ("depth_clear_one_column_short", [(fdm.clears, "fdm_apply_gmem_clear_coords")], _clear_one_column_short,
     "replay.depth_lrz.a7xx_scaled.a750"),
]


@pytest.fixture()
def plant(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list[tuple[Any, str]], Callable[..., Any]], None]]:
    def do(targets: list[tuple[Any, str]], wrap: Callable[..., Any]) -> None:
        for module, name in targets:
            monkeypatch.setattr(module, name, wrap(getattr(module, name)))
    yield do


@pytest.mark.parametrize("bug,targets,wrap,catcher", PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_bug_fails_its_case(vk, plant, bug, targets, wrap, catcher):
    case = CASES[catcher]
    plant(targets, wrap)
    v = _verdict(vk, case)  # run and judge both see the bug
    assert v.status == "Fail", f"{bug}: {catcher} still passes: {v.message}"


def test_viewport_bug_needs_hw_bin_scaling(vk, plant):
    """The o' bug is invisible without HW bin scaling: a730's twin of the catching case passes."""
    plant([(fdm.patch, "fdm_apply_viewport")], _viewport_without_hw_offset)
    assert _verdict(vk, CASES["replay.uniform_area.2x2.a730"]).status == "Pass"


def test_dropped_apron_needs_linear(vk, plant):
    """A missing apron is read only by LINEAR footprints: the NEAREST twin still passes."""
    plant([(replay_subsampled, "tu_calc_subsampled_aprons")], _first_apron_dropped)
    assert _verdict(vk, CASES["replay.subsampled.nearest_edge.a730"]).status == "Pass"


def test_depth_result_does_not_depend_on_lrz(vk, monkeypatch):
    """LRZ is an early-Z cache: forcing it off in every tile (or on in every tile) changes the
    plan's per-tile ``lrz`` the case reports, never the image."""
    case = CASES["replay.depth_lrz.offset_first_rowcol.a750"]
    for forced in (True, False):
        monkeypatch.setattr(fdm.plan, "force_lrz_dis", lambda *a, forced=forced, **k: forced)
        out = case.run(vk, case.scene)
        assert out.info["lrz_tiles"] == (0 if forced else out.info["tiles"])
        assert case.judge(case.scene, out).status == "Pass"


def test_depth_cases_exercise_the_lrz_rule():
    lrz = {name: [t.lrz for t in plan_scene(CASES[name].scene)[1].tiles] for name in CASES if ".depth_lrz." in name}
    assert not any(lrz["replay.depth_lrz.a7xx_unscaled_hw.a730"][i] for i, t in
                   enumerate(plan_scene(CASES["replay.depth_lrz.a7xx_unscaled_hw.a730"].scene)[1].tiles)
                   if t.bin_is_scaled)
    assert all(lrz["replay.depth_lrz.a7xx_scaled.a750"])
    off = plan_scene(CASES["replay.depth_lrz.offset_first_rowcol.a750"].scene)[1]
    assert {t.lrz for t in off.tiles if t.pos[0] == 0 or t.pos[1] == 0} == {False}
    assert {t.lrz for t in off.tiles if t.pos[0] > 0 and t.pos[1] > 0} == {True}


# ---- the subsampled layout ----------------------------------------------------------------------

def test_subsampled_cases_exercise_what_they_claim():
    def layout(name: str) -> layout_solver.SubsampledLayout:
        return layout_solver.tu_calc_subsampled(plan_scene(CASES[name].scene)[1])
    assert any(e.kind == "shift" for e in layout("replay.subsampled.linear_edge.a730").log)
    assert any(e.kind == "unsubsample" for e in layout("replay.subsampled.unsubsampled.a730").log)
    off = layout("replay.subsampled.offset_linear.a750")
    assert (off.width0, off.height0) == (384 + 96, 256 + 32) and off.bin_offsets is not None
    for name in ("replay.subsampled.linear_edge.a650", "replay.subsampled.linear_edge.a750"):
        fas = {v.frag_area for t in plan_scene(CASES[name].scene)[1].tiles for v in t.views}
        assert {(1, 1), (2, 2), (4, 4)} <= fas, name
    # the model's own CPU reconstruction agrees that these layouts are sound
    for name in ("replay.subsampled.linear_border.a730", "replay.subsampled.unsubsampled.a730",
                 "replay.subsampled.offset_linear.a730"):
        plan = plan_scene(CASES[name].scene)[1]
        assert layout_solver.reconstruction_error(plan, layout_solver.tu_calc_subsampled(plan), 0, "linear",
                                                  "clamp_to_border", samples=500).ok, name


@pytest.mark.parametrize("dst,src", [((10, 3, 2, 9), (40.0, 2.0, 40.5, 20.0)),
                                     ((10, 3, 2, 9), (39.5, -1.0, 40.0, 3.5)),
                                     ((0, 0, 13, 2), (7.0, 5.0, 59.0, 6.0)),
                                     ((5, 5, 2, 6), (60.0, 0.0, 64.0, 24.0)),
                                     ((62, 1, 4, 3), (1.25, 0.0, 2.25, 0.75))])
def test_apron_blit_regions_pick_the_drivers_texels(dst, src):
    """Each region of :func:`nearest_regions`, run with vkCmdBlitImage's NEAREST rule, reads what
    the driver's float-rectangle blit reads (the CPU model's ``blit_nearest``)."""
    size = (64, 32)
    img = np.arange(size[0] * size[1], dtype=np.float32).reshape(size[1], size[0])
    want = img.copy()
    from fdm.geometry import Rect
    from layout_solver.reconstruct import blit_nearest
    blit_nearest(want, Rect(*dst), src)
    got = img.copy()
    regions, _ = replay_subsampled.nearest_regions(dst, src, size)
    for (ax, ay, bx, by), (dx0, dy0, dx1, dy1) in regions:
        for y in range(dy0, dy1):
            for x in range(dx0, dx1):
                sx = int(np.floor(ax + (x - dx0 + 0.5) * (bx - ax) / (dx1 - dx0)))
                sy = int(np.floor(ay + (y - dy0 + 0.5) * (by - ay) / (dy1 - dy0)))
                got[y, x] = img[sy, sx]
    assert (got == want).all()


def test_scene_colour_matches_the_shader_formula():
    """The CPU twin of scene_color.frag at a few centres (by hand)."""
    c = replay_subsampled.scene_colour(np.array([1, 767]), np.array([1, 511]), (384, 256))
    assert c[0].tolist() == [16, 16, 40, 255] and c[1].tolist() == [16 + 767 * 224 // 768, 16 + 511 * 224 // 512,
                                                                     40, 255]


# ---- the finding ------------------------------------------------------------------------------

def test_outward_scissor_rounding_disagrees_with_the_spec(vk):
    """turnip rounds the user scissor outward in rendering space (``fdm_apply_scissors``); the
    spec's scissor test is per sample, and a 1-sample FDM fragment has its sample at its
    centre.  Scissor x in [3, 99), fa 4: the fragments over x 0..3 (centre 2, outside) are drawn
    by turnip and not by the spec; those over x 96..99 (centre 98, inside) are drawn by both.
    So exactly the columns 0..3 differ, on every row, in both measurements."""
    case = FINDINGS["replay.scissor.outward_rounding.a750"]
    out = case.run(vk, case.scene)
    v = case.judge(case.scene, out)
    assert v.status == "Fail"
    sc, plan = plan_scene(case.scene)
    want, _ = oracle_view(sc, plan, 0, "clear")
    got = out.images["view0"]
    diff = np.any(got.astype(np.int64) != want, axis=2)
    ys, xs = np.nonzero(diff)
    assert set(xs.tolist()) == {0, 1, 2, 3} and len(ys) == 4 * sc.framebuffer[1]
    assert got[0, 0].tolist() == [4, 4, 4, 4] and want[0, 0].tolist() == list(CLEAR)
    assert (out.images["view0_geometry"] == got).all()


@pytest.mark.parametrize("name,columns,rows", [
    ("replay.clears.outward_rounding.a730", {36, 37}, {40, 41}),
    ("replay.clears.outward_rounding_4x4.a730", {0, 1, 2, 3, 36, 37, 38, 39}, {40, 41, 42, 43})])
def test_outward_clear_rounding_disagrees_with_the_spec(vk, name, columns, rows):
    """vkCmdClearAttachments of (3,5)-(37,41): fdm_apply_gmem_clear_coords clears every fragment
    the rect overlaps; the spec clears a fragment iff its centre lies in the rect.  fa 2: the last
    column (x 36..37, centre 37) and row (y 40..41, centre 41) differ; fa 4: the first and last
    columns (centres 2 < 3 and 38 >= 37) and the last row (centre 42 >= 41).  Every differing
    pixel is one turnip cleared and the spec did not."""
    case = FINDINGS[name]
    out = case.run(vk, case.scene)
    assert case.judge(case.scene, out).status == "Fail"
    sc, plan = plan_scene(case.scene)
    want, _ = oracle_view(sc, plan, 0, "clear", clear_rects=[(3, 5, 34, 36)])
    got = out.images["view0"]
    diff = np.any(got.astype(np.int64) != want, axis=2)
    ys, xs = np.nonzero(diff)
    assert len(xs) > 0
    assert (got[diff] == CLEAR_RECT).all()                 # turnip cleared them ...
    inside_x = np.isin(xs, sorted(columns)) | np.isin(ys, sorted(rows))
    assert inside_x.all()                                  # ... only on the predicted edge fragments


def test_fast_store_of_scaled_bins_is_wrong(vk):
    """Finding c replayed: a730, no offsets, fa 2x2.  With the stores as planned
    (``fast_store`` set on every scaled tile) the 1:1 copy leaves the bin's scaled GMEM image in
    its top-left quarter; the same scene through the A2D store passes."""
    case = FINDINGS["replay.fast_store.scaled.a730"]
    plan = plan_scene(case.scene)[1]
    assert all(t.fast_store and t.bin_is_scaled and not t.bin_scale_en for t in plan.tiles)
    out = case.run(vk, case.scene)
    assert out.info["fast_stores"] == len(plan.tiles) and out.info["stores"] == 0
    assert case.judge(case.scene, out).status == "Fail"
    got = out.images["view0"]
    assert got[0, 2].tolist() == [10, 2, 2, 2]  # GMEM pixel 2 = the fragment over x 4..5, copied to x 2
    a2d = dict(case.scene, store="a2d")
    assert judge_replay(a2d, run_replay(vk, a2d)).status == "Pass"


# ---- graphics helpers -------------------------------------------------------------------------

def test_gradient_rgba8(vk):
    """graphics_passes.py with a UNORM target: the gradient across the viewport, within 1 LSB."""
    w, h = 40, 24
    with vk.scope():
        graphics_targets.require_graphics(vk, "rgba8", blit=False)
        img = graphics_targets.color_image(vk, w, h, "rgba8")
        rp = graphics_passes.render_pass(vk, "rgba8", "clear")
        fb = graphics_passes.framebuffer(vk, rp, img)
        pipe = graphics_passes.FullscreenPipeline(vk, rp, graphics_shaders.load_spv("gradient.frag.spv"), 0)

        def record(cb: Any) -> None:
            graphics_passes.cmd_begin_render_pass(vk, cb, rp, fb, img, (0, 0, w, h), clear=(0.0, 0.0, 1.0, 1.0))
            pipe.bind(cb)
            graphics_passes.cmd_set_viewport(vk, cb, 0, 0, w, h)
            graphics_passes.cmd_set_scissor(vk, cb, (0, 0, w, h))
            graphics_passes.cmd_draw_fullscreen(vk, cb)
            graphics_passes.cmd_end_render_pass(vk, cb)

        vk.run(record)
        got = graphics_targets.read_image(vk, img).astype(np.int64)
    xs = (np.arange(w) + 0.5) / w * 255
    ys = (np.arange(h) + 0.5) / h * 255
    assert np.abs(got[..., 0] - xs[None, :]).max() <= 1 and np.abs(got[..., 1] - ys[:, None]).max() <= 1
    assert (got[..., 2] == 0).all() and (got[..., 3] == 255).all()


def test_run_refuses_sysmem_passes(vk):
    scene = {"scenario": {"gpu": "a750", "framebuffer": [64, 64], "tu_debug": ["sysmem"],
                          "density": {"views": [{"generator": "constant", "size": [2, 2], "density": 1.0}]}},
             "load_op": "clear"}
    with pytest.raises(NotModelled, match="sysmem"):
        run_replay(vk, scene)


# ---- committed SPIR-V -------------------------------------------------------------------------

def test_committed_spirv_matches_the_sources():
    info = json.loads((build_spirv.SPV / build_spirv.BUILD_INFO).read_text())
    assert info["sources_sha256"] == build_spirv.sources_digest(), \
        "GLSL changed since vk_tests/spv was built: run `python -m vk_tests.build_spirv`"
    names = sorted(p.name for p in build_spirv.SPV.glob("*.spv"))
    assert names == sorted(build_spirv.module_name(s) for s in build_spirv.sources())


@pytest.mark.slow  # runs the shader compiler: CI and ./dev test only
def test_recompiling_gives_the_committed_bytes(tmp_path):
    compiler = build_spirv.find_compiler()
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if compiler is None:
        if in_ci:
            pytest.fail("no shader compiler in CI (glslang-tools)")
        pytest.skip("no glslangValidator or glslc")
    built = build_spirv.build(tmp_path)
    info = json.loads((build_spirv.SPV / build_spirv.BUILD_INFO).read_text())
    version = build_spirv.compiler_version(compiler)
    stale = [p.name for p in built if p.read_bytes() != (build_spirv.SPV / p.name).read_bytes()]
    if stale and version != info["compiler"] and not in_ci:
        pytest.skip(f"committed modules were built by {info['compiler']!r}, this machine has {version!r}")
    assert not stale, f"rebuild with `python -m vk_tests.build_spirv` ({version}): {stale}"
