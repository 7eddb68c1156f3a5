"""Every case of the ``fsr`` backend: D1 ``fsr.attachment_grid``, D2 ``fsr.multiview_layer_select``,
D3 ``fsr.msaa_resolve_harness`` and ``fsr.coverage`` (docs/fsr.md)."""

from __future__ import annotations

import functools

from ..scenes import constant, radial, scenario
from ..suite.cases import Case, case
from .judge import judge_fsr
from .render import run_fsr
from .scene import fsr_scene

_case = functools.partial(case, run=run_fsr, judge=judge_fsr)


def cases() -> list[Case]:
    """D1 ``fsr.attachment_grid``, D2 ``fsr.multiview_layer_select``, D3
    ``fsr.msaa_resolve_harness`` and ``fsr.coverage`` (where FSR's coverage differs from FDM's)."""
    cases: list[Case] = []
    for variant, gpu, d, fmt in (("uniform_1x1", "a730", 1.0, "R32G32_SFLOAT"),
                                 ("uniform_2x2", "a730", 0.5, "R32G32_SFLOAT"),
                                 ("uniform_4x4", "a750", 0.25, "R32G32_SFLOAT"),
                                 ("unorm8_half", "a750", 0.5, "R8G8_UNORM")):
        what = "fragment area (1,2) from R8G8_UNORM 0.5 (finding e)" if fmt == "R8G8_UNORM" else \
            f"one fragment area {variant[-3:]}"
        cases.append(_case(f"fsr.attachment_grid.{variant}.{gpu}",
                           f"D1: {what} on every bin as the shading-rate attachment: fragment grid, FragCoord "
                           "centres, ShadingRate", fsr_scene(scenario(gpu, density=constant(d, fmt=fmt)))))
    for gpu in ("a730", "a750"):
        fov = {"format": "R32G32_SFLOAT", "views": [radial((12, 8), (176, 120))]}
        cases.append(_case(f"fsr.attachment_grid.foveated_radial.{gpu}",
                           "D1: a radial (foveated) map, areas 1x1 / 2x2 / 4x4 over many bins, as the shading-rate "
                           "attachment", fsr_scene(scenario(gpu, framebuffer=[384, 256], density=fov))))
    mv = {"format": "R32G32_SFLOAT", "views": [radial((12, 8), (64, 64), (40, 80)),
                                               radial((12, 8), (192, 64), (40, 80))]}
    cases.append(_case("fsr.multiview_layer_select.per_view_radial.a730",
                       "D2: 2 views with their own radial maps: a 2-layer shading-rate attachment, the layer chosen "
                       "by ViewIndex (the views' areas differ on all 16 bins)",
                       fsr_scene(scenario("a730", views=2, density=mv))))
    cases.append(_case("fsr.msaa_resolve_harness.4x_2x2.a730",
                       "D3: 4x MSAA with a 2x2 rate on every bin and a resolve (an FSR fragment has a sample set "
                       "per pixel: 16 coverage samples)",
                       fsr_scene(scenario("a730", density=constant(0.5)), samples=4)))
    cases.append(_case("fsr.coverage.scissor_unaligned.a730",
                       "a scissor off the 4x4 fragment grid: FSR writes exactly the pixels inside it with the "
                       "fragment's shading, where FDM writes whole fragments whose centre is inside",
                       fsr_scene(scenario("a730", density=constant(0.25), scissors=[[3, 6, 226, 97]]))))
    return cases
