"""Exact model of the fragment-density-map (FDM) logic of Mesa's turnip Vulkan driver.

The entry points::

    import fdm
    sc = fdm.load_scenario("pass.toml")              # or fdm.make_scenario(gpu="a750", ...)
    plan = fdm.plan_render_pass(sc)                  # everything turnip programs per tile and view
    for tile in plan.tiles:
        print(tile.common_bin_start, [v.frag_area for v in tile.views])

The driver's functions by their driver names (``tu_bin_offset``, ``tu_fdm_per_bin_offset``,
``tu_calc_frag_area``, …) work on plain tuples; docs/driver-revisions.md lists the turnip file
and Mesa revision each follows.  Every refusal is one of the four errors of
:mod:`turnip_base.errors` (imported from there: this package does not re-export them).
Renderings (``fdm.report``) and the command line (``fdm.cli``) are layers above and are not
imported here.
"""

from .gpu import GpuProfile, get_gpu, gpu_profiles
from .options import DensityFormat, MergingVariant
from .plan import BinningPlan, RenderPassPlan, TilePlan, ViewPlan, plan_render_pass
from .scenario import Attachment, Scenario, Viewport, load_scenario, make_scenario, parse_scenario
from .turnip import (
    binning_pass_bin,
    euclid_rem,
    fdm_apply_viewport,
    hw_bin_offset,
    tile_select_bin,
    tu6_emit_scissor,
    tu6_emit_viewport_scissor,
    tu_bin_offset,
    tu_calc_bin_visibility,
    tu_calc_frag_area,
    tu_fdm_per_bin_offset,
    tu_fragment_density_map_sample,
)

__all__ = [
    "Attachment", "BinningPlan", "DensityFormat", "GpuProfile", "MergingVariant",
    "RenderPassPlan", "Scenario", "TilePlan", "ViewPlan",
    "Viewport", "binning_pass_bin", "euclid_rem", "fdm_apply_viewport", "get_gpu", "gpu_profiles", "hw_bin_offset",
    "load_scenario", "make_scenario", "parse_scenario", "plan_render_pass", "tile_select_bin", "tu6_emit_scissor",
    "tu6_emit_viewport_scissor", "tu_bin_offset", "tu_calc_bin_visibility", "tu_calc_frag_area",
    "tu_fdm_per_bin_offset", "tu_fragment_density_map_sample",
]
