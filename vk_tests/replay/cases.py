"""Every case of the ``replay`` backend (the ``replay.twin.*`` cases of the fdm scenes are listed by
:func:`vk_tests.fdm.cases.replay_twins`): the core groups (uniform and foveated areas, offsets,
multiview, merging, unaligned scissors and viewports, render areas, load ops, density 0), the D9
baselines, the clears, then the subsampled layout (D8), depth with LRZ (B15's twin) and the 4×
MSAA resolve (B10's twin); and the finding cases, which fail by design (tests only)."""

from __future__ import annotations

import functools
from typing import Any

from turnip_base.harness import Vulkan

from ..scenes import GPU_LAYOUTS, GPUS, constant, hw_note, radial, scenario, values
from ..suite.cases import Case, CaseOutput, Verdict, case
from .depth import depth_scene, judge_depth, run_depth
from .judge import judge_replay
from .msaa import judge_msaa, msaa_scene, run_msaa
from .render import run_replay
from .scene import replay_scene
from .subsampled import FILTERS, SEAMS, judge_subsampled, run_subsampled, subsampled_scene

Pair = tuple[int, int]



_replay_case = functools.partial(case, run=run_replay, judge=judge_replay)
_depth_case = functools.partial(case, run=run_depth, judge=judge_depth)
_subsampled_case = functools.partial(case, run=run_subsampled, judge=judge_subsampled)


def cases() -> list[Case]:
    """The replay group, in suite order: every case is small (a few hundred pixels a side) so
    that the group runs in seconds on lavapipe with the validation layer."""
    return core_cases() + baseline_cases() + clear_cases() + subsampled_cases() + depth_cases() + msaa_cases()


def core_cases() -> list[Case]:
    """The core groups on every profile."""
    cases: list[Case] = []
    for gpu in GPUS:
        hw = hw_note(gpu)
        for area, d in (("1x1", 1.0), ("2x2", 0.5), ("4x4", 0.25)):
            cases.append(_replay_case(f"replay.uniform_area.{area}.{gpu}",
                               f"uniform fragment area {area} on every bin, merging off ({hw})",
                               replay_scene(scenario(gpu, density=constant(d)))))
    cases.append(_replay_case("replay.uniform_area.unorm8_half.a750",
                       "R8G8_UNORM density 0.5 (stored 128): fragment area (1,2) on every bin (finding e)",
                       replay_scene(scenario("a750", density=constant(0.5, fmt="R8G8_UNORM")))))
    for gpu in GPUS:
        fb, tile = (384, 256), GPU_LAYOUTS[gpu][1]
        fov = {"format": "R32G32_SFLOAT",
               "views": [radial((12, 8), (176, 120), (48, 96), (1.0, 0.5, 0.25))]}
        cases.append(_replay_case(f"replay.foveated.radial.{gpu}",
                           "a radial (foveated) map: areas 1x1 in the centre, 2x2 and 4x4 outside, across "
                           "many bins",
                           replay_scene({"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile),
                                         "bin_merging": "off", "density": fov})))
    for gpu, variant, off in (("a750", "both_axes", (8, -16)), ("a730", "both_axes", (8, -16)),
                              ("a650", "both_axes", (8, -16)), ("a750", "wrap", (104, -40))):
        fov = {"format": "R32G32_SFLOAT", "views": [radial((12, 8), (150, 70), (40, 80), (1.0, 0.5, 0.25))]}
        cases.append(_replay_case(f"replay.fdm_offset.{variant}.{gpu}",
                           f"FDM offset {list(off)}: bins shifted by b_o, the extra row and column, the first "
                           "row and column shrunk" + (" (|u| larger than a tile: b_o wraps)" if variant == "wrap"
                                                       else ""),
                           replay_scene(scenario(gpu, framebuffer=[256, 192] if gpu == "a730" else [288, 192],
                                              fdm_offset_create_flag=True, fdm_offsets=[list(off)],
                                              density=fov))))
    mv = {"format": "R32G32_SFLOAT",
          "views": [radial((12, 8), (100, 64), (40, 80), (1.0, 0.5, 0.25)),
                    radial((12, 8), (190, 64), (40, 80), (1.0, 0.5, 0.25))]}
    cases.append(_replay_case("replay.multiview_offset.per_view.a750",
                       "2 views with their own FDM offsets (per-view bins, per-view viewports and o')",
                       replay_scene(scenario("a750", framebuffer=[288, 192], views=2, fdm_offset_create_flag=True,
                                          fdm_offsets=[[40, -24], [-16, 16]], density=mv))))
    cases.append(_replay_case("replay.merged_bins.upstream_4x4.a730",
                       "upstream bin merging with a uniform 4x4 map: 2x2 groups rendered as one bin",
                       replay_scene(scenario("a730", bin_merging="upstream", density=constant(0.25)))))
    for gpu in GPUS:
        fb = GPU_LAYOUTS[gpu][0]
        # edges where rounding outward and the fragment-centre rule agree for fa 4:
        # left/top edges 1 or 2 past a fragment start, right/bottom edges 3 past one
        cases.append(_replay_case(f"replay.scissor.unaligned.{gpu}",
                           "a user scissor not aligned to the 4x4 fragments (edges where the outward rounding "
                           "and the spec's centre sample agree)",
                           replay_scene(scenario(gpu, density=constant(0.25),
                                              scissors=[[13, 6, fb[0] - 13 - 21, 97]]))))
    for gpu in GPUS:
        fb = (384, 256)
        fov = {"format": "R32G32_SFLOAT", "views": [radial((12, 8), (176, 120), (48, 96), (1.0, 0.5, 0.25))]}
        # quarter-pixel edges: no fragment centre lies on one (no tie for the rasterisation rule)
        cases.append(_replay_case(f"replay.viewport.unaligned.{gpu}",
                           "a user viewport smaller than the framebuffer with edges between fragment centres, "
                           "over a radial map: coverage by the centre sample and the geometry measure",
                           replay_scene({"gpu": gpu, "framebuffer": list(fb), "tile_size": list(GPU_LAYOUTS[gpu][1]),
                                         "bin_merging": "off", "density": fov,
                                         "viewports": [[37.25, 21.75, 290.5, 201.5]]})))
    cases.append(_replay_case("replay.viewport.flipped.a750",
                       "a negative-height (y-flipped) viewport over the whole framebuffer, fragment area 2x2",
                       replay_scene(scenario("a750", density=constant(0.5), viewports=[[0, 128, 288, -128]]))))
    cases.append(_replay_case("replay.render_area.partial.a750",
                       "a render area smaller than the framebuffer: bins outside it are skipped, stores are "
                       "clipped to it, the clear covers it",
                       replay_scene(scenario("a750", density=constant(0.5), render_areas=[[40, 20, 200, 84]],
                                          scissors=[[40, 20, 200, 84]]))))
    cases.append(_replay_case("replay.load_op.load.a750",
                       "LOAD_OP_LOAD: the scaled GMEM load (through viewport 0, with o'), then the draw and store",
                       replay_scene(scenario("a750", density=constant(0.5)), load_op="load")))
    inv = {"format": "R32G32_SFLOAT", "views": [radial((8, 4), (64, 32), (60, 100), (1.0, 0.5, 0.0))]}
    cases.append(_replay_case("replay.invisible.density0.a730",
                       "density 0 far from the centre: those bins are not rendered and keep the background",
                       replay_scene(scenario("a730", density=inv))))
    return cases


def baseline_cases() -> list[Case]:
    """D9: an all-1.0 map (single view and 2-view multiview) is the identity: 1x1 fragments,
    ``o = 0``, a plain render.  The oracle's values are distinct per pixel, so equality means
    every pixel shaded exactly once at its own centre."""
    cases = []
    for gpu in GPUS:
        for views in (1, 2):
            name = "single_view" if views == 1 else "multiview_2"
            cases.append(_replay_case(f"replay.baseline.{name}.{gpu}",
                               f"D9: an all-1.0 density map, {views} view(s): identity (fa 1x1, o = 0), a plain "
                               f"render ({hw_note(gpu)})",
                               replay_scene(scenario(gpu, views=views, density=constant(1.0, views=views)))))
    return cases


#: vkCmdClearAttachments rectangles whose edges the outward rounding of
#: ``fdm_apply_gmem_clear_coords`` and the spec's fragment-centre rule treat alike: for fa 2, odd
#: starts and even ends; for fa 4, starts 1 or 2 past a fragment start and ends 3 past one
_AGREEING_CLEARS: dict[str, list[list[int]]] = {
    "2x2": [[3, 5, 35, 37], [41, 1, 21, 23]],        # (3,5)-(38,42), (41,1)-(62,24)
    "4x4": [[5, 6, 34, 37], [42, 1, 25, 30]],        # (5,6)-(39,43), (42,1)-(67,31)
}


def clear_cases() -> list[Case]:
    """B13's twin: ``vkCmdClearAttachments`` of unaligned rectangles inside 2x2 and 4x4 passes
    through the model's clear path (:func:`fdm.clears.gmem_clear_coords`), judged by the spec
    oracle (clears.adoc: whole fragments, each cleared iff its centre lies in the rect)."""
    cases = []
    for gpu in GPUS:
        for area, d in (("2x2", 0.5), ("4x4", 0.25)):
            rects = _AGREEING_CLEARS[area]
            cases.append(_replay_case(f"replay.clears.unaligned_{area}.{gpu}",
                               f"vkCmdClearAttachments of {rects} (unaligned, edges where the outward rounding and "
                               f"the fragment-centre rule agree) in a {area} pass after the draw ({hw_note(gpu)})",
                               replay_scene(scenario(gpu, density=constant(d)), clear_rects=rects)))
    fov = {"format": "R32G32_SFLOAT", "views": [radial((12, 8), (150, 70), (40, 80), (1.0, 0.5, 0.25))]}
    cases.append(_replay_case("replay.clears.foveated_offset.a750",
                       "vkCmdClearAttachments of a rect on even framebuffer coordinates over a radial map with an "
                       "FDM offset (fa 1, 2 and 4; shifted bins; o' not applied to the resolve engine)",
                       replay_scene(scenario("a750", framebuffer=[288, 192], fdm_offset_create_flag=True,
                                          fdm_offsets=[[8, -16]], density=fov),
                                    clear_rects=[[40, 24, 200, 128]])))
    return cases


def finding_cases() -> list[Case]:
    """Cases where the model's turnip and the spec's oracle disagree (docs/replay.md,
    "Disagreements"): they FAIL by design and the test checks the pixels they fail on."""
    return [_replay_case("replay.scissor.outward_rounding.a750",
                  "a user scissor whose edges cut 4x4 fragments behind their centre: turnip rounds the scissor "
                  "outward and keeps fragments whose sample lies outside it",
                  replay_scene(scenario("a750", density=constant(0.25), scissors=[[3, 0, 96, 128]]))),
            _replay_case("replay.fast_store.scaled.a730",
                  "the stores as planned: on a730 (no HW bin scaling, no offsets) the fast-store predicate is "
                  "set on scaled bins and the resolve engine copies the 2x2-scaled GMEM bin 1:1 (finding c)",
                  replay_scene(scenario("a730", density=constant(0.5)), store="planned")),
            _replay_case("replay.clears.outward_rounding.a730",
                  "vkCmdClearAttachments of (3,5)-(37,41) in a 2x2 pass: fdm_apply_gmem_clear_coords "
                  "rounds the rect outward and clears fragments whose centre lies outside it",
                  replay_scene(scenario("a730", density=constant(0.5)), clear_rects=[[3, 5, 34, 36]])),
            _replay_case("replay.clears.outward_rounding_4x4.a730",
                  "vkCmdClearAttachments of (3,5)-(37,41) in a 4x4 pass: the fragments over x 0..3, y 4..7 "
                  "(centres (2, 6)) and the last column and row are cleared although their centres lie outside",
                  replay_scene(scenario("a730", density=constant(0.25)), clear_rects=[[3, 5, 34, 36]]))]


def run_case(ctx: Vulkan | None, case: Case) -> tuple[CaseOutput, Verdict]:
    """Run and judge one case."""
    out = case.run(ctx, case.scene)
    return out, case.judge(case.scene, out)


def _scenario(gpu: str, **fields: Any) -> dict[str, Any]:
    fov = {"format": "R32G32_SFLOAT",
           "views": [{"generator": "radial", "size": [12, 8], "center": [176, 120], "radii": [48, 96],
                      "densities": [1.0, 0.5, 0.25]}]}
    sc: dict[str, Any] = {"gpu": gpu, "framebuffer": [384, 256], "tile_size": list(GPU_LAYOUTS[gpu][1]),
                          "bin_merging": "off", "density": fov}
    sc.update(fields)
    return sc


def depth_cases() -> list[Case]:
    """B15's twin on a650 (force_lrz_dis not emitted), a730 (LRZ off in scaled bins: no HW bin
    scaling) and a750 (LRZ on in scaled bins; off in the first row and column with offsets)."""
    return [
        _depth_case("replay.depth_lrz.a6xx_lowres.a650",
              "overlapping depth-tested quads over a radial map on a650 (LRZ flag computed, not emitted)",
              depth_scene(_scenario("a650"))),
        _depth_case("replay.depth_lrz.a7xx_unscaled_hw.a730",
              "overlapping depth-tested quads on a730: LRZ forced off in every scaled bin (no HW bin scaling)",
              depth_scene(_scenario("a730"))),
        _depth_case("replay.depth_lrz.a7xx_scaled.a750",
              "overlapping depth-tested quads on a750: HW bin scaling, LRZ on in scaled bins",
              depth_scene(_scenario("a750"))),
        _depth_case("replay.depth_lrz.offset_first_rowcol.a750",
              "overlapping depth-tested quads with FDM offset (24, -40) on a750: LRZ off in the first row and "
              "column, on elsewhere",
              depth_scene(_scenario("a750", fdm_offset_create_flag=True, fdm_offsets=[[24, -40]]))),
    ]


# ---- the cases --------------------------------------------------------------------------------
def msaa_cases() -> list[Case]:
    """B10's twin on every profile: a radial map (fa 1, 2, 4), one triangle with odd slopes."""
    out = []
    for gpu in GPUS:
        fov = {"format": "R32G32_SFLOAT",
               "views": [{"generator": "radial", "size": [12, 8], "center": [176, 120], "radii": [48, 96],
                          "densities": [1.0, 0.5, 0.25]}]}
        scenario = {"gpu": gpu, "framebuffer": [384, 256], "tile_size": list(GPU_LAYOUTS[gpu][1]),
                    "bin_merging": "off", "density": fov}
        out.append(Case(name=f"replay.msaa_resolve.4x_triangle.{gpu}", backend="replay",
                        description="B10 twin: 4x MSAA colour resolved in GMEM, then the scaled store; judged by one "
                                    "sample set per fragment (samples scaled by the fragment area)",
                        scene=msaa_scene(scenario), run=run_msaa, judge=judge_msaa))
    return out


#: per GPU: a tile size with room for shifts (x on a730: T 128 > T/2 + tile_align 64)
_TILES: dict[str, Pair] = {"a650": (192, 64), "a730": (128, 64), "a750": (192, 64)}


def _seams_scenario(gpu: str, **fields: Any) -> dict[str, Any]:
    sc: dict[str, Any] = {"gpu": gpu, "framebuffer": [384, 256], "tile_size": list(_TILES[gpu]),
                          "bin_merging": "off", "density": values(SEAMS)}
    sc.update(fields)
    return sc


def subsampled_cases() -> list[Case]:
    """D8: the subsampled layout on every profile, both filters, both addressing modes, shifted and
    un-subsampled bins, FDM offsets (image slop, the partial first row and column)."""
    out: list[Case] = []
    for gpu in GPUS:
        for f in FILTERS:
            out.append(_subsampled_case(f"replay.subsampled.{f}_edge.{gpu}",
                             f"D8: the subsampled image built by real blits (store + aprons), sampled {f.upper()} "
                             "CLAMP_TO_EDGE through the metadata transform vs the expanded image; seams between "
                             "1x1, 2x2 and 4x4 bins",
                             subsampled_scene(_seams_scenario(gpu), f, "clamp_to_edge")))
    for gpu, border in (("a650", "opaque_white"), ("a730", "transparent_black"), ("a750", "opaque_white")):
        out.append(_subsampled_case(f"replay.subsampled.linear_border.{gpu}",
                         f"D8: LINEAR CLAMP_TO_BORDER ({border}): the image edges are the framebuffer edges",
                         subsampled_scene(_seams_scenario(gpu), "linear", "clamp_to_border", border)))
    out.append(_subsampled_case("replay.subsampled.nearest_border.a730",
                     "D8: NEAREST CLAMP_TO_BORDER (transparent black)",
                     subsampled_scene(_seams_scenario("a730"), "nearest", "clamp_to_border")))
    out.append(_subsampled_case("replay.subsampled.unsubsampled.a730",
                     "D8: a730 with 64 x 32 tiles: no room to shift (tile_align 64), 1x1 bins next to subsampled "
                     "ones un-subsample them; LINEAR CLAMP_TO_EDGE",
                     subsampled_scene(_seams_scenario("a730", tile_size=[64, 32]), "linear", "clamp_to_edge")))
    for gpu in ("a730", "a750"):
        for f in FILTERS:
            out.append(_subsampled_case(f"replay.subsampled.offset_{f}.{gpu}",
                             f"D8: FDM offset (24, -40): image slop (width0 = W + tile_align), the partial first "
                             f"row and column, b_o' alignment; {f.upper()} CLAMP_TO_BORDER",
                             subsampled_scene(_seams_scenario(gpu, fdm_offset_create_flag=True,
                                                              fdm_offsets=[[24, -40]]), f, "clamp_to_border")))
    return out
