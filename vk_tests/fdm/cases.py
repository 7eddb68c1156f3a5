"""Every case of the ``fdm`` backend and the replay twins of its scenes.

* :func:`cases`: ``fdm.<group>.<variant>.<path>`` for the core scenes (B1-B9, B13, B14, B17,
  C1-C6), the depth and MSAA scenes (B15, B10) and B18's apron sampling;
* :func:`replay_twins`: ``replay.twin.<group>.<variant>.<gpu>``, each fdm scene run by turnip's
  per-bin scheme (:mod:`vk_tests.replay`) on any device, so that CI exercises the scenes, the
  oracle and the comparison on lavapipe."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

import fdm

from ..replay.depth import QUADS, depth_scene, judge_depth, run_depth
from ..replay.judge import judge_replay
from ..replay.msaa import SAMPLES, judge_msaa, msaa_scene, run_msaa
from ..replay.render import run_replay
from ..replay.scene import replay_scene
from ..replay.shared_viewport import judge_replay_shared, run_replay_shared
from ..replay.subsampled import judge_subsampled, run_subsampled
from ..scenes import GPU_LAYOUTS, checker, constant_bytes, density_value, radial_bytes, scenario
from ..suite.cases import Case, Scene
from .geometry import judge_depth_fdm, judge_msaa_fdm, run_depth_fdm, run_msaa_fdm
from .judge import judge_fdm
from .render import run_fdm
from .sampling import GROUP, KIND, VARIANT, b18_scene, b18_twin_name, judge_sampling_fdm, run_sampling_fdm
from .scene import BIG, BIG_MAP, BIG_TILE, GPU, MAP_TIMINGS, fdm_scene, samples_of, twin_name

Pair = tuple[int, int]


TILE = (96, 32)


#: C2's wrap-around sweep: k of offsets (8k, -8k) around a whole tile crossed by the twin (192:
#: k = 24) and by turnip's own tiles (a650 192 -> 24, a730 320 -> 40, a750 384 -> 48)
SWEEP_K = (0, 5, 24, 25, 40, 41, 48, 50)


def _sc(fb: Pair, density: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A scenario of the scenes' GPU (:data:`~vk_tests.fdm.scene.GPU`, its tile :data:`TILE`)."""
    return scenario(GPU, **{"framebuffer": list(fb), "tile_size": list(TILE), "density": density, **fields})


def _big(density: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A device-sized scenario (:data:`BIG`, the twin's tile :data:`BIG_TILE`)."""
    return _sc(BIG, density, tile_size=list(BIG_TILE), **fields)


def _big_radial(center: Sequence[float], radii: Sequence[float]) -> dict[str, Any]:
    """A radial layer of the :data:`BIG` scenes, centre and radii in fractions of its width and
    height (radii of the width), rings 1x1 / 2x2 / 4x4."""
    w, h = BIG
    return radial_bytes(BIG_MAP, (center[0] * w, center[1] * h), [r * w for r in radii], (1, 2, 4))


@attrs.frozen(kw_only=True)
class _Spec:
    group: str
    variant: str
    description: str
    scene: dict[str, Any]  # the replay scene
    paths: tuple[str, ...] = ("rp2",)
    readback: str = "auto"
    #: more keys of the scene's ``"fdm"`` options (``map_layers``, B2's ``cts``, ``map_timing``, ``twin``)
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    #: the variant of the replay twin when several specs share one scene (B2); None: ``variant``
    twin_variant: str | None = None


def _specs() -> list[_Spec]:
    both = ("rp2", "dynrend")
    specs: list[_Spec] = []
    fb, size = (288, 128), (9, 4)
    for nx, ny in ((1, 1), (1, 2), (2, 1), (2, 2), (4, 4)):
        specs.append(_Spec(group="uniform_area", variant=f"{nx}x{ny}", paths=both,
                           description=f"B1: a constant map of bytes floor(255/n) for area {nx}x{ny} on every bin "
                                       f"({BIG[0]}x{BIG[1]}: many device bins)",
                           scene=replay_scene(_big(constant_bytes(nx, ny, BIG_MAP)))))
    fov = {"format": "R8G8_UNORM", "views": [radial_bytes((12, 8), (176, 120), (48, 96), (1, 2, 4))]}
    big_fov = {"format": "R8G8_UNORM", "views": [_big_radial((0.46, 0.47), (0.125, 0.25))]}
    specs.append(_Spec(group="foveated", variant="radial", paths=both,
                       description=f"B5: a radial map (bytes 255/127/63 in rings) across many bins ({BIG[0]}x{BIG[1]})",
                       scene=replay_scene(_big(big_fov))))
    inv = {"format": "R8G8_UNORM", "views": [radial_bytes((9, 4), (64, 32), (60, 100), (1, 2, None))]}
    specs.append(_Spec(group="invisible", variant="density0",
                       description="B6: density 0 far from the centre (undefined by the spec; turnip skips the bins, "
                                   "the pixels keep the background)",
                       scene=replay_scene(_sc(fb, inv))))
    mv = {"format": "R8G8_UNORM",
          "views": [{"generator": "constant", "size": list(BIG_MAP), "density": density_value(n)} for n in (1, 2)]}
    specs.append(_Spec(group="multiview", variant="per_view_density", paths=both,
                       description=f"B7: 2 views, a 2-layer map: view 0 at 1x1, view 1 at 2x2 ({BIG[0]}x{BIG[1]})",
                       scene=replay_scene(_big(mv, views=2))))
    specs.append(_Spec(group="scissor", variant="unaligned",
                       description="B14: a scissor not aligned to the 4x4 fragments (edges where turnip's outward "
                                   "rounding and the centre sample agree)",
                       scene=replay_scene(_sc(fb, constant_bytes(4, 4, size),
                                                     scissors=[[13, 6, fb[0] - 13 - 21, 97]]))))
    specs.append(_Spec(group="viewport", variant="unaligned",
                       description="B14: a viewport with edges between fragment centres over the radial map",
                       scene=replay_scene(_sc((384, 256), fov, viewports=[[37.25, 21.75, 290.5, 201.5]]))))
    specs.append(_Spec(group="render_area", variant="partial",
                       description="a render area smaller than the framebuffer: outside keeps the background",
                       scene=replay_scene(_sc(fb, constant_bytes(2, 2, size), render_areas=[[40, 20, 200, 84]],
                                                     scissors=[[40, 20, 200, 84]]))))
    specs.append(_Spec(group="load_op", variant="load",
                       description="LOAD_OP_LOAD of the background, area 2x2",
                       scene=replay_scene(_sc(fb, constant_bytes(2, 2, size)), load_op="load")))
    specs.append(_Spec(group="subsampled", variant="nearest_equivalence", readback="both",
                       description="B17: the radial scene into a subsampled and a non-subsampled target; the "
                                   "subsampled one resampled with NEAREST must equal the other",
                       scene=replay_scene(_sc((384, 256), fov))))
    specs.append(_Spec(group="clear_attachments", variant="unaligned",
                       description="B13: vkCmdClearAttachments of rectangles not aligned to the 4x4 fragments "
                                   "(edges where turnip's outward rounding and the centre sample agree)",
                       scene=replay_scene(_sc(fb, constant_bytes(4, 4, size)),
                                          clear_rects=[[13, 6, 34, 41], [150, 66, 61, 45]])))
    big_off = {"format": "R8G8_UNORM", "views": [_big_radial((0.52, 0.36), (0.14, 0.28))]}
    specs.append(_Spec(group="offset", variant="both_axes", paths=both,
                       description=f"C1: FDM offset (8, -16): bins shifted, the extra row and column "
                                   f"({BIG[0]}x{BIG[1]})",
                       scene=replay_scene(_big(big_off, fdm_offset_create_flag=True, fdm_offsets=[[8, -16]]))))
    for k in SWEEP_K:
        specs.append(_Spec(group="offset", variant=f"sweep_k{k:02d}",
                           description=f"C2: offset k*g = ({8 * k}, {-8 * k}) of the wrap-around sweep "
                                       f"(k in {', '.join(map(str, SWEEP_K))}: b_o wraps once a tile is crossed, "
                                       f"{BIG[0]}x{BIG[1]})",
                           scene=replay_scene(_big(big_off, fdm_offset_create_flag=True,
                                                          fdm_offsets=[[8 * k, -8 * k]]))))
    specs.append(_Spec(group="offset", variant="dynrend_suspend_resume", paths=("dynrend",),
                       extra={"split": "suspend_resume", "twin": twin_name("offset", "both_axes")},
                       twin_variant="both_axes",
                       description="C6: C1's scene in two dynamic-rendering instances (left half SUSPENDING, right "
                                   "half RESUMING), the same offsets at both vkCmdEndRendering2EXT: the unsplit image",
                       scene=replay_scene(_big(big_off, fdm_offset_create_flag=True, fdm_offsets=[[8, -16]]))))
    pv = {"format": "R8G8_UNORM", "views": [radial_bytes((12, 8), (100, 64), (40, 80), (1, 2, 4)),
                                            radial_bytes((12, 8), (190, 64), (40, 80), (1, 2, 4))]}
    big_pv = {"format": "R8G8_UNORM", "views": [_big_radial((0.35, 0.33), (0.14, 0.28)),
                                                _big_radial((0.66, 0.33), (0.14, 0.28))]}
    specs.append(_Spec(group="offset", variant="per_view", paths=both,
                       description=f"C4: 2 views with offsets (+8, +8) and (-8, -8): per-view bins and b_o "
                                   f"({BIG[0]}x{BIG[1]})",
                       scene=replay_scene(_big(big_pv, views=2, fdm_offset_create_flag=True,
                                                      fdm_offsets=[[8, 8], [-8, -8]]))))
    one = {"format": "R8G8_UNORM", "views": [radial_bytes((12, 8), (150, 70), (40, 80), (1, 2, 4))]}
    # B3: the spec-v3 texel size with the floor: 1025/16 gives T = 64 (the pre-v3 ceil: 128);
    # 33/16 gives T = 2, clamped to the device's minimum (turnip: 32).  T comes from the framebuffer;
    # the viewport stops at the last multiple of the largest fragment (4): with the framebuffer's
    # own edge (n = 4k + 1) the one-pixel last bin row and column of 4x4 bins had a patched viewport
    # edge a quarter into a rendering pixel, and whether that pixel is shaded depends on how the GPU
    # clips the oversized triangle there (implementation-defined: the H100 shaded it, lavapipe did
    # not).  On whole-fragment edges every GPU agrees; the last row and column are still cleared
    # and stored.
    for n in (33, 1025):
        m = n // 4 * 4
        specs.append(_Spec(group="texel_size_floor", variant=f"fb{n}",
                           description=f"B3: a 16x16 checkerboard map (bytes 255/63 per texel) for a {n}x{n} "
                                       f"framebuffer: T = 2^ceil(log2(floor({n}/16))) decides which bins see which "
                                       f"texel (viewport {m}x{m}: every patched edge on a fragment boundary)",
                           scene=replay_scene(_sc((n, n), checker(16, 16), tile_size=list(BIG_TILE),
                                                  viewports=[[0, 0, m, m]]))))
    # B4: dynamic rendering, render area (64, 32, 192, 224) in a 256x256 image: T from the render
    # area's end, the outside keeps the background
    ra = [64, 32, 192, 224]
    specs.append(_Spec(group="dynrend_render_area_offset", variant="checker", paths=("dynrend",),
                       description="B4: render area (64, 32) + (192, 224) in a 256x256 image over an 8x8 checkerboard "
                                   "map: the texel size from offset + extent (dynamic rendering), outside untouched",
                       scene=replay_scene(_sc((256, 256), checker(8, 8), render_areas=[ra], scissors=[ra]))))
    # C3: clones of the CTS offset cases clamp_to_edge and oversized_fdm (§2.5), one view, 1024x1024,
    # low density 3/255 ("any large area") except where only the offset (fetch at p - offset) and the
    # clamp to the edge land: every fragment 1x1
    lo, hi = 3 / 255, density_value(1)
    for variant, (mw, mh), high, off in (
            ("clamp_x_pos", (32, 32), lambda i, j: i == 0, (1024, 0)),
            ("clamp_y_neg", (32, 32), lambda i, j: j == 31, (0, -1024)),
            ("oversized_x", (64, 32), lambda i, j: i >= 32, (-1024, 0)),
            ("oversized_y", (32, 64), lambda i, j: j >= 32, (0, -1024))):
        rows = [[hi if high(i, j) else lo for i in range(mw)] for j in range(mh)]
        cts = "clamp_to_edge" if variant.startswith("clamp") else "oversized_fdm"
        what = ("the one edge texel line the clamp lands on is high density" if variant.startswith("clamp")
                else "a map twice the size along the axis, high only in the half the offset brings in")
        specs.append(_Spec(group="offset", variant=f"cts_clamp_and_oversized.{variant}",
                           description=f"C3: the CTS {cts} clone, offset {list(off)} on 1024x1024: {what}; 1x1 "
                                       "fragments (turnip's plan: a shrunk first bin row or column may be coarser)",
                           scene=replay_scene(_sc((1024, 1024), {"format": "R8G8_UNORM",
                                                                        "views": [{"values": rows}]},
                                                         tile_size=list(BIG_TILE), fdm_offset_create_flag=True,
                                                         fdm_offsets=[list(off)]))))
    # B2: the CTS main tree's 1-view scene (§2.3) as this backend renders it: a constant 16x16 map
    # of the requested area, render size 64 (x4.0) or 60 (x3.75); the full-screen triangle covers
    # the edges the CTS's 9 mirrored quads were added for; readback through the subsampled NEAREST
    # pass (the CTS's output pass) or a non-subsampled copy; the CTS bounds (§2.4) on top
    for n in (64, 60):
        for ax, ay in ((1, 2), (2, 1), (2, 2)):
            scene = replay_scene(_sc((n, n), constant_bytes(ax, ay, (16, 16))))
            twin_variant = f"area_{ax}_{ay}.{n}"
            for timing in MAP_TIMINGS:
                for sub in ("subsampled", "nonsubsampled"):
                    if timing != "static" and (sub != "subsampled" or (ax, ay, n) != (2, 2, 64)):
                        continue
                    specs.append(_Spec(
                        group="cts_histogram", variant=f"{timing}_{sub}_{ax}_{ay}.{n}", readback=sub,
                        extra={"cts": True, "map_timing": timing, "twin": twin_name("cts_histogram", twin_variant)},
                        description=f"B2: the CTS {timing}_{sub}_{ax}_{ay} case at render size {n} (1 view): "
                                    "FragSize and histogram bounds, exact on turnip",
                        scene=scene, twin_variant=twin_variant))
    specs.append(_Spec(group="multiview", variant="single_layer_map",
                       # finding v: turnip reads view 1 past the end of the one-layer map; the model
                       # refuses the pass there (judged on a command stream: RefusedAsExpected)
                       extra={"map_layers": 1, "expect_raises": "tu_fragment_density_map_sample"},
                       description="B8: 2 views and a one-layer map: both views fetch layer baseArrayLayer (render "
                                   "pass 2: a one-layer FDM view with a view mask)",
                       scene=replay_scene(_sc((288, 192), one, views=2))))
    specs.append(_Spec(group="multiview", variant="viewport_index_shared", paths=both,
                       description="B9: B7's per-view densities with a vertex shader writing gl_ViewportIndex: turnip "
                                   "shares one viewport, each axis the minimum area over the views",
                       scene=replay_scene(_sc((288, 192), pv, views=2, writes_viewport_index=True))))
    specs.append(_Spec(group="offset", variant="shared_viewport_fallback",
                       description="C5: C4's per-view offsets with gl_ViewportIndex written: the shared viewport "
                                   "cannot follow per-view offsets (turnip's fallback)",
                       scene=replay_scene(_sc((288, 192), pv, views=2, writes_viewport_index=True,
                                                     fdm_offset_create_flag=True, fdm_offsets=[[8, 8], [-8, -8]]))))
    return specs


def cases() -> list[Case]:
    """``fdm.<group>.<variant>.<path>``: each a scene of :func:`replay_twins` with its render path."""
    cases = []
    for s in _specs():
        for path in s.paths:
            how = "render pass 2" if path == "rp2" else "dynamic rendering"
            cases.append(Case(name=f"fdm.{s.group}.{s.variant}.{path}", backend="fdm",
                              description=f"{s.description} ({how}; replay twin "
                                          f"{twin_name(s.group, s.twin_variant or s.variant)})",
                              scene=fdm_scene(s.scene, path, s.readback, **s.extra), run=run_fdm,
                              judge=judge_fdm))
    return cases + _kind_cases() + _sampling_cases()


def scenarios() -> list[tuple[str, fdm.Scenario]]:
    """The scenario of every case of this backend, once each (the first case that has it names
    it): what ``turnip-fdm box check --fdm-scenes`` checks against turnip in the box."""
    import json

    out: list[tuple[str, fdm.Scenario]] = []
    seen: set[str] = set()
    for c in cases():
        sc = c.scene.get("scenario")
        key = json.dumps(sc, sort_keys=True)
        if sc is None or key in seen:
            continue
        seen.add(key)
        out.append((c.name, fdm.parse_scenario(sc)))
    return out


def replay_twins() -> list[Case]:
    """The replay cases of the fdm scenes (the same replay scene, run by turnip's per-bin scheme
    on any device: CI exercises the scenes, the oracle and the comparison on lavapipe)."""
    out = []
    seen = set()
    for s in _specs():
        name = twin_name(s.group, s.twin_variant or s.variant)
        if name in seen:  # B2: several cases (readback, map timing) share one scene
            continue
        seen.add(name)
        shared = bool(s.scene["scenario"].get("writes_viewport_index"))
        # the replay refuses scenarios writing gl_ViewportIndex; its Replayer draws them through
        # slot 0 as turnip's shared viewport does (vk_tests.replay.shared_viewport)
        run = run_replay_shared if shared else run_replay
        judge = judge_replay_shared if shared else judge_replay
        out.append(Case(name=name, backend="replay",
                        description=f"{s.description} (the replay twin of fdm.{s.group}.{s.variant})",
                        scene=s.scene, run=run, judge=judge))
    return out + _kind_twins() + _sampling_twins()


# ---- the cases --------------------------------------------------------------------------------
def _radial_bytes(gpu: str, **fields: Any) -> dict[str, Any]:
    """The depth and MSAA replay modules' radial scene (384×256, rings 1×1 / 2×2 / 4×4) with the
    map as R8G8_UNORM ``floor(255/n)`` bytes (the one format every FDM device supports)."""
    fov = {"format": "R8G8_UNORM", "views": [radial_bytes((12, 8), (176, 120), (48, 96), (1, 2, 4))]}
    s: dict[str, Any] = {"gpu": gpu, "framebuffer": [384, 256], "tile_size": list(GPU_LAYOUTS[gpu][1]),
                         "bin_merging": "off", "density": fov}
    s.update(fields)
    return s


def _big_radial_bytes(gpu: str, **fields: Any) -> dict[str, Any]:
    """B15's device-sized scene: :data:`vk_tests.fdm.scene.BIG` (1536x1024) with the B5 radial map, the
    twin's tile :data:`vk_tests.fdm.scene.BIG_TILE` (turnip's own tiling gives many bins, several areas)."""
    fov = {"format": "R8G8_UNORM", "views": [_big_radial((0.46, 0.47), (0.125, 0.25))]}
    s: dict[str, Any] = {"gpu": gpu, "framebuffer": list(BIG), "tile_size": list(BIG_TILE),
                         "bin_merging": "off", "density": fov}
    s.update(fields)
    return s


#: B15's quads: vk_tests.replay.depth.QUADS scaled to the 1536x1024 scene (x4: edges on multiples of 16)
BIG_QUADS: tuple[tuple[int, int, int, int, float], ...] = tuple(
    (4 * x0, 4 * y0, 4 * x1, 4 * y1, z) for x0, y0, x1, y1, z in QUADS)


def _twin(group: str, variant: str, gpu: str) -> str:
    return f"replay.twin.{group}.{variant}.{gpu}"


#: (group, variant, gpu, description, replay scene, kind)
def _kind_specs() -> list[tuple[str, str, str, str, dict[str, Any], str]]:
    out: list[tuple[str, str, str, str, dict[str, Any], str]] = []
    for variant, gpu, what, fields in (
            ("a6xx_lowres", "a650", "on a650 (the LRZ flag computed, not emitted)", {}),
            ("a7xx_scaled", "a750", "on a750 (HW bin scaling: LRZ on in scaled bins)", {}),
            ("offset_first_rowcol", "a750", "with the FDM offset (24, -40) on a750 (LRZ off in the first row and "
                                            "column)", {"fdm_offset_create_flag": True, "fdm_offsets": [[24, -40]]})):
        out.append(("depth_lrz", variant, gpu, f"B15: four overlapping depth-tested quads (LESS) over a radial map "
                                               f"{what}; LRZ must not change the result ({BIG[0]}x{BIG[1]})",
                    depth_scene(_big_radial_bytes(gpu, **fields), BIG_QUADS), "depth"))
    for n in (2, 4):
        scenario = _radial_bytes("a750", attachments=[{"cpp": 4, "samples": n}])
        out.append(("msaa_resolve", f"{n}x", "a750", f"B10: {n}x MSAA colour with a resolve attachment, one triangle "
                                                      f"with odd slopes over a radial map; one sample set per fragment",
                    msaa_scene(scenario), "msaa"))
    return out


def _has_twin(group: str, kind: str, scene: Scene) -> bool:
    # vk_tests.replay.msaa replays 4 samples only (its SAMPLES): the 2x scene has no twin
    return not (kind == "msaa" and samples_of(scene) != SAMPLES)


def _kind_cases() -> list[Case]:
    """``fdm.depth_lrz.<variant>.rp2`` (B15), ``fdm.msaa_resolve.{2x,4x}.rp2`` (B10)."""
    out = []
    for group, variant, gpu, desc, scene, kind in _kind_specs():
        twin = _twin(group, variant, gpu) if _has_twin(group, kind, scene) else None
        opts: dict[str, Any] = {"path": "rp2", "readback": "auto", "kind": kind}
        tail = f"replay twin {twin}" if twin else "no replay twin: vk_tests.replay.msaa replays 4 samples only"
        if twin:
            opts["twin"] = twin
        run, judge = (run_depth_fdm, judge_depth_fdm) if kind == "depth" else (run_msaa_fdm, judge_msaa_fdm)
        out.append(Case(name=f"fdm.{group}.{variant}.rp2", backend="fdm", description=f"{desc} (render pass 2; {tail})",
                        scene={**scene, "fdm": opts}, run=run, judge=judge))
    return out


def _kind_twins() -> list[Case]:
    """The replay cases of the depth and MSAA scenes (the same scene, the replay modules' run
    and judge)."""
    out = []
    for group, variant, gpu, desc, scene, kind in _kind_specs():
        if not _has_twin(group, kind, scene):
            continue
        run, judge = ((run_depth, judge_depth) if kind == "depth"
                      else (run_msaa, judge_msaa))
        out.append(Case(name=_twin(group, variant, gpu), backend="replay",
                        description=f"{desc} (the replay twin of fdm.{group}.{variant}.rp2)", scene=scene, run=run,
                        judge=judge))
    return out


# ---- the cases --------------------------------------------------------------------------------
def _sampling_cases() -> list[Case]:
    """``fdm.subsampled_linear_apron_border.seams.rp2`` (B18)."""
    twin = b18_twin_name()
    scene = {**b18_scene(), "fdm": {"path": "rp2", "readback": "auto", "kind": KIND, "twin": twin}}
    return [Case(name=f"fdm.{GROUP}.{VARIANT}.rp2", backend="fdm",
                 description="B18: LINEAR CLAMP_TO_BORDER (opaque white) sampling of a subsampled attachment across "
                             "bin edges of 1x1 / 2x2 / 4x4 bins (1536x1024), against the device's own non-subsampled "
                             f"render within the neighbourhood bound (render pass 2; replay twin {twin})",
                 scene=scene, run=run_sampling_fdm, judge=judge_sampling_fdm)]


def _sampling_twins() -> list[Case]:
    """The replay twin of B18: :mod:`vk_tests.replay.subsampled` on the identical scene."""
    return [Case(name=b18_twin_name(), backend="replay",
                 description=f"B18's scene replayed: turnip's subsampled layout built by real blits, sampled LINEAR "
                             f"CLAMP_TO_BORDER through the metadata transform (the replay twin of fdm.{GROUP}."
                             f"{VARIANT}.rp2)",
                 scene=b18_scene(), run=run_subsampled, judge=judge_subsampled)]
