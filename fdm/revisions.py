"""Which Mesa source each modelled turnip function was read from: one table.

:data:`DRIVER_REVISIONS` has one :class:`DriverSource` per modelled turnip function (its file,
the repository and commit read, the Mesa version where it is known, why that revision, and the
model's Python function(s) by dotted path).  :data:`DRIVER_VARIANTS` lists the named
alternative readings the model can select (older or newer revisions of the same function), and
:data:`DRIVER_DATA` the non-function sources (device tables, registers, advertised limits).

``docs/driver-revisions.md`` shows the same tables; ``tests/test_revisions.py`` keeps the two
equal, checks that every dotted path imports and that its docstring names the turnip function.

Repository short names used in docstrings: "pop-os" = ``pop-os/mesa``, "sailfish" =
``sailfishos-mirror/mesa``, "tencentmalos" = ``tencentmalos/mesa-mirror``.
"""

from __future__ import annotations

from typing import Literal

import attrs

#: Why an entry names the revision it names.
#:
#: - ``docstring``: a model docstring names ``repository @ commit`` for this function;
#: - ``baseline``: the model docstrings name the file only; the revision is the project's
#:   baseline for that file (pop-os/mesa 26.2.0-rc3 @ 4ff7b570 and the per-file revisions
#:   listed beside it in the project guide);
#: - ``spec``: the file has no project baseline; ``docs/spec/turnip-fdm-spec.md`` §0.1 / §10.4
#:   names the revision read;
#: - ``decisions``: ``docs/decisions.md`` names the revision.
Basis = Literal["docstring", "baseline", "spec", "decisions"]

POP_OS = "pop-os/mesa"
SAILFISH = "sailfishos-mirror/mesa"
TENCENTMALOS = "tencentmalos/mesa-mirror"

#: Mesa ``VERSION`` at the commits where it was read; ``None`` elsewhere (not recorded)
MESA_26_2_0_RC3 = "26.2.0-rc3"   # pop-os/mesa @ 4ff7b570
MESA_26_1_0_RC2 = "26.1.0-rc2"   # pop-os/mesa @ 025a3b4d

VK = "src/freedreno/vulkan/"


@attrs.frozen(kw_only=True)
class DriverSource:
    """One modelled turnip function and the source it was read from."""

    function: str                 # the turnip (C) function name
    file: str                     # path in the Mesa tree
    repository: str               # GitHub owner/name read
    commit: str                   # abbreviated commit (8 hex digits)
    mesa_version: str | None      # Mesa VERSION at that commit, None where not recorded
    basis: Basis                  # why this revision (see :data:`Basis`)
    models: tuple[str, ...]       # dotted paths of the Python function(s)/class(es) modelling it


@attrs.frozen(kw_only=True)
class DriverVariant:
    """A named alternative reading of one turnip function, and how the model selects it."""

    function: str
    variant: str                  # the model's name for the reading
    repository: str
    commit: str
    basis: Basis
    selected_by: str              # parameter or scenario field value that selects it
    models: tuple[str, ...]


@attrs.frozen(kw_only=True)
class DriverData:
    """A non-function source: a device table, a register database, advertised limits."""

    file: str
    repository: str
    commit: str
    mesa_version: str | None
    basis: Basis
    contents: str                 # what the model takes from it
    models: tuple[str, ...]       # dotted paths of what holds it in the model (may be empty)


def _src(function: str, file: str, repository: str, commit: str, basis: Basis, *models: str) -> DriverSource:
    version = {(POP_OS, "4ff7b570"): MESA_26_2_0_RC3, (POP_OS, "025a3b4d"): MESA_26_1_0_RC2}.get((repository, commit))
    return DriverSource(function=function, file=file, repository=repository, commit=commit, mesa_version=version,
                        basis=basis, models=tuple(models))


_CMD_BUFFER_CC = VK + "tu_cmd_buffer.cc"
_CMD_BUFFER_H = VK + "tu_cmd_buffer.h"
_PIPELINE = VK + "tu_pipeline.cc"
_TILE_CONFIG = VK + "tu_tile_config.cc"
_IMAGE = VK + "tu_image.cc"
_SUBSAMPLED = VK + "tu_subsampled_image.cc"
_CLEAR_BLIT = VK + "tu_clear_blit.cc"
_SHADER = VK + "tu_shader.cc"
_PASS = VK + "tu_pass.cc"
_UTIL = VK + "tu_util.cc"
_GMEM_CACHE = "src/freedreno/common/fd6_gmem_cache.h"
_LRZ = VK + "tu_lrz.cc"
_LRZ_LAYOUT = "src/freedreno/fdl/freedreno_lrz_layout.h"
_AUTOTUNE = VK + "tu_autotune.cc"
_DEVICE = VK + "tu_device.cc"

#: Every modelled turnip function, grouped by file.
DRIVER_REVISIONS: tuple[DriverSource, ...] = (
    # tu_cmd_buffer.h
    _src("euclid_rem", _CMD_BUFFER_H, TENCENTMALOS, "16ad8431", "spec", "fdm.turnip.euclid_rem"),
    _src("tu_bin_offset", _CMD_BUFFER_H, TENCENTMALOS, "16ad8431", "spec", "fdm.turnip.tu_bin_offset"),
    # tu_cmd_buffer.cc
    _src("tu6_emit_tile_select", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "baseline",
         "fdm.tile_select", "fdm.turnip.hw_bin_offset", "fdm.turnip.tile_select_bin", "fdm.plan.plan_render_pass"),
    _src("tu6_emit_bin_size_gmem", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "baseline",
         "fdm.tile_select.disable_lrz"),
    _src("tu6_emit_window_scissor", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "baseline",
         "fdm.tile_select.window_scissor"),
    _src("tu6_emit_binning_pass", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "baseline", "fdm.turnip.binning_pass_bin"),
    _src("tu6_emit_blit_scissor", _CMD_BUFFER_CC, POP_OS, "025a3b4d", "docstring", "fdm.clears.tu6_emit_blit_scissor"),
    _src("tu_cmd_render_tiles", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "baseline",
         "fdm.tiling.walk_order", "fdm.plan.plan_render_pass", "fdm.tiles.identity_tile_config"),
    _src("use_sysmem_rendering", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "docstring", "fdm.plan.sysmem_reason",
         "fdm.plan.gmem_disable_reason"),
    _src("tu_trace_end_render_pass", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "docstring",
         "fdm.plan.gmem_disable_reason"),
    _src("use_hw_binning", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "docstring", "fdm.render_mode.use_hw_binning"),
    _src("fdm_apply_fs_params", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "baseline", "fdm.patch.FsParams",
         "fdm.patch.fs_params_custom_resolve", "fdm.patch.custom_resolve_frag_areas",
         "layout_solver.custom_resolve.custom_resolve_tile", "layout_solver.custom_resolve.custom_resolve_pass"),
    _src("tu_emit_subpass_custom_resolve", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "docstring",
         "layout_solver.custom_resolve", "layout_solver.custom_resolve.custom_resolve_window_scissor"),
    _src("tu_emit_subsampled", _CMD_BUFFER_CC, POP_OS, "4ff7b570", "docstring",
         "layout_solver.solver.SubsampledLayout.emit_bin_offset"),
    # tu_pipeline.cc
    _src("tu_fdm_per_bin_offset", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.turnip.tu_fdm_per_bin_offset"),
    _src("tu_emit_program_state", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.patch.ViewportState",
         "fdm.patch.viewport_state_without_fdm"),
    _src("tu6_emit_viewport_fdm", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.patch",
         "fdm.patch.patch_slots_custom_resolve"),
    _src("fdm_apply_viewports", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.turnip.fdm_apply_viewport",
         "fdm.patch.viewport_custom_resolve", "fdm.patch.viewport_early_out"),
    _src("tu6_emit_viewport", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.turnip.tu6_emit_viewport_scissor",
         "fdm.patch.unpatched_slots"),
    _src("fdm_apply_scissors", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.turnip.scissor_transform",
         "fdm.patch.scissor_custom_resolve"),
    _src("tu6_emit_scissor", _PIPELINE, POP_OS, "26e5c1f9", "spec", "fdm.turnip.tu6_emit_scissor",
         "fdm.patch.unpatched_slots"),
    _src("tu_pipeline_builder_emit_state", _PIPELINE, POP_OS, "26e5c1f9", "docstring",
         "fdm.patch.bakes_static_viewport"),
    # tu_device.cc
    _src("tu_CreateFramebuffer", _DEVICE, POP_OS, "025a3b4d", "docstring", "fdm.plan.max_tile_size"),
    # tu_tile_config.cc
    _src("tu_calc_frag_area", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline",
         "fdm.turnip.tu_calc_frag_area", "fdm.turnip.fdm_sample_position", "fdm.turnip.shared_viewport_frag_area",
         "fdm.tiles.calc_frag_areas"),
    _src("tu_calc_bin_visibility", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline",
         "fdm.turnip.tu_calc_bin_visibility", "fdm.turnip.rects_intersect", "fdm.tiles.calc_visibility"),
    _src("try_merge_tiles", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline", "fdm.tiles.try_merge_tiles"),
    _src("tu_merge_tiles", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline", "fdm.tiles._merge_pipe"),
    _src("tu_calc_tile_config", _TILE_CONFIG, POP_OS, "aee40d4a", "docstring",
         "fdm.tiles.calc_tile_config", "fdm.tiles.TileGrid", "layout_solver.solver.solver_bin_offsets",
         "layout_solver.custom_resolve.unsolved_layout",
         "layout_solver.custom_resolve.custom_resolve_tile_start"),
    _src("get_default_tile_pos", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline",
         "layout_solver.solver.get_default_tile_pos", "layout_solver.solver.default_axis"),
    _src("aprons_intersect", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline", "layout_solver.solver.aprons_intersect"),
    _src("tu_calc_subsampled", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline", "layout_solver.solver.tu_calc_subsampled"),
    _src("make_non_subsampled", _TILE_CONFIG, POP_OS, "aee40d4a", "baseline",
         "layout_solver.solver._Solver.make_non_subsampled"),
    # tu_image.cc
    _src("tu_fragment_density_map_sample", _IMAGE, POP_OS, "aee40d4a", "baseline",
         "fdm.turnip.tu_fragment_density_map_sample", "fdm.turnip.fdm_texel_shift", "fdm.density.raw_frag_area",
         "fdm.density.raw_frag_area_of", "fdm.density.check_density_layers"),
    _src("tu_image_init", _IMAGE, POP_OS, "aee40d4a", "baseline", "layout_solver.solver.image_size0"),
    # tu_subsampled_image.cc
    _src("tu_emit_subsampled_metadata", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline",
         "layout_solver.metadata.tu_emit_subsampled_metadata", "layout_solver.metadata.fallback_metadata"),
    _src("tu_get_subsampled_coordinates", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline",
         "layout_solver.metadata.tu_get_subsampled_coordinates", "layout_solver.metadata.subsampled_bin"),
    _src("get_effective_frag_area", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline",
         "layout_solver.solver.SubsampledTile.effective_frag_area"),
    _src("tu_calc_subsampled_aprons", _SUBSAMPLED, POP_OS, "4ff7b570", "docstring",
         "layout_solver.aprons.tu_calc_subsampled_aprons"),
    _src("calc_shared_vert_edge", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline", "layout_solver.aprons._shared_edge"),
    _src("calc_shared_horiz_edge", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline", "layout_solver.aprons._shared_edge"),
    _src("calc_tile_vert_pos", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline", "layout_solver.aprons._tile_edge_pos"),
    _src("calc_tile_horiz_pos", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline", "layout_solver.aprons._tile_edge_pos"),
    _src("handle_vertical_corners", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline",
         "layout_solver.aprons._vertical_pair"),
    _src("handle_horizontal_corners", _SUBSAMPLED, POP_OS, "4ff7b570", "baseline",
         "layout_solver.aprons._horizontal_pair"),
    # tu_clear_blit.cc
    _src("fdm_apply_load_coords", _CLEAR_BLIT, POP_OS, "05b96fda", "baseline", "fdm.patch.blit_rects"),
    _src("fdm_apply_store_coords", _CLEAR_BLIT, POP_OS, "05b96fda", "baseline", "fdm.patch.blit_rects",
         "layout_solver.store_path.fdm_apply_store_coords"),
    _src("transform_render_area", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring",
         "layout_solver.store_path.transform_render_area"),
    _src("fdm_apply_blit_scissor", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring",
         "layout_solver.store_path.fdm_apply_blit_scissor"),
    _src("fdm_apply_render_area", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring",
         "layout_solver.store_path.fdm_apply_render_area"),
    _src("fdm_apply_gmem_clear_coords", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring",
         "fdm.clears.fdm_apply_gmem_clear_coords", "fdm.clears.gmem_clear_coords"),
    _src("tu_clear_gmem_attachment", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring", "fdm.clears.load_op_clear_coords"),
    _src("tu_store_gmem_attachment", _CLEAR_BLIT, POP_OS, "4ff7b570", "docstring", "fdm.tile_select.use_fast_store",
         "fdm.patch.blit_rects_without_fdm", "fdm.patch.takes_store_3d_blit", "fdm.patch.with_store_3d"),
    _src("store_3d_blit", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring", "fdm.patch.store_3d_blit_coords"),
    _src("r3d_coords", _CLEAR_BLIT, POP_OS, "05b96fda", "docstring", "fdm.patch.r3d_coords"),
    _src("tu_choose_gmem_layout", _CLEAR_BLIT, POP_OS, "4ff7b570", "docstring", "fdm.gpu.gmem_budget",
         "fdm.plan._gmem_layout_avoid_ccu", "fdm.render_mode.tu_choose_gmem_layout"),
    _src("tu_attachment_store_unaligned", _CLEAR_BLIT, POP_OS, "4ff7b570", "docstring",
         "fdm.render_mode.tu_attachment_store_unaligned"),
    _src("blit_can_resolve", _CLEAR_BLIT, POP_OS, "4ff7b570", "docstring", "fdm.render_mode.blit_can_resolve"),
    # tu_shader.cc
    _src("lower_fdm_instr", _SHADER, POP_OS, "025a3b4d", "spec", "fdm.patch.lower_frag_coord",
         "fdm.patch.fs_params_custom_resolve"),
    _src("tu_shader_create", _SHADER, POP_OS, "025a3b4d", "docstring", "fdm.lrz.fs_forces_lrz_off"),
    # tu_pass.cc
    _src("tu_render_pass_gmem_config", _PASS, POP_OS, "c02c8b9f", "baseline",
         "fdm.tiling.gmem_config", "fdm.tiling.GmemConfig", "fdm.gpu.gmem_budget"),
    _src("attachment_set_ops", _PASS, POP_OS, "c02c8b9f", "docstring", "fdm.render_mode.attachment_set_ops"),
    _src("tu_CreateRenderPass2", _PASS, POP_OS, "c02c8b9f", "docstring", "fdm.render_mode.pass_attachments"),
    _src("tu_render_pass_disable_fdm", _PASS, POP_OS, "c02c8b9f", "docstring",
         "fdm.render_mode.tu_render_pass_disable_fdm"),
    _src("tu_render_pass_bandwidth_config", _PASS, POP_OS, "c02c8b9f", "docstring",
         "fdm.render_mode.tu_render_pass_bandwidth_config"),
    # tu_autotune.cc
    _src("get_optimal_mode", _AUTOTUNE, POP_OS, "025a3b4d", "docstring", "fdm.render_mode.autotune_render_mode",
         "fdm.render_mode.pass_pixel_count"),
    # tu_util.cc
    _src("tu_tiling_config_update_tile_layout", _UTIL, SAILFISH, "9429b474", "spec", "fdm.tiling.select_tile_size"),
    _src("tu_tiling_config_update_pipe_layout", _UTIL, SAILFISH, "9429b474", "spec", "fdm.tiling.pipe_layout"),
    _src("tu_tiling_config_update_pipes", _UTIL, SAILFISH, "9429b474", "spec", "fdm.tiling.vsc_config"),
    _src("tu_framebuffer_init_tiling_config", _UTIL, SAILFISH, "9429b474", "spec", "fdm.tiling"),
    _src("tu_tiling_config_update_binning", _UTIL, SAILFISH, "9429b474", "docstring",
         "fdm.render_mode.binning_useful"),
    # fd6_gmem_cache.h
    _src("fd6_calc_gmem_cache_offsets", _GMEM_CACHE, SAILFISH, "04f9a827", "baseline",
         "fdm.gpu.fd6_calc_gmem_cache_offsets"),
    # tu_lrz.cc
    _src("tu_lrz_init_state", _LRZ, POP_OS, "8afad928", "docstring", "fdm.lrz.tu_lrz_init_state"),
    _src("tu6_calculate_lrz_state", _LRZ, POP_OS, "4ff7b570", "docstring", "fdm.lrz.tu6_calculate_lrz_state"),
    # freedreno_lrz_layout.h
    _src("fdl6_lrz_get_fc_size", _LRZ_LAYOUT, POP_OS, "3ebd859c", "docstring", "fdm.lrz.lrz_fc_size"),
    _src("fdl6_lrz_get_max_fdm_extra_size", _LRZ_LAYOUT, POP_OS, "3ebd859c", "docstring",
         "fdm.lrz.max_fdm_extra_size", "fdm.plan.max_tile_size"),
)

#: Named alternative readings the model can select, per turnip function.
DRIVER_VARIANTS: tuple[DriverVariant, ...] = (
    DriverVariant(function="try_merge_tiles", variant="upstream", repository=POP_OS, commit="aee40d4a",
                  basis="baseline", selected_by='bin_merging = "upstream" (default)',
                  models=("fdm.tiles.try_merge_tiles",)),
    DriverVariant(function="try_merge_tiles", variant="fixed", repository=TENCENTMALOS, commit="8724e42d",
                  basis="spec", selected_by='bin_merging = "fixed"', models=("fdm.tiles.try_merge_tiles",)),
    DriverVariant(function="tu_calc_subsampled_aprons", variant="newest", repository=POP_OS, commit="4ff7b570",
                  basis="docstring", selected_by='[driver] tu_calc_subsampled_aprons = "upstream" (default)',
                  models=("layout_solver.aprons.tu_calc_subsampled_aprons",)),
    DriverVariant(function="tu_calc_subsampled_aprons", variant="older", repository=SAILFISH, commit="9429b474",
                  basis="docstring", selected_by='[driver] tu_calc_subsampled_aprons = "sailfish-9429b474"',
                  models=("layout_solver.aprons.tu_calc_subsampled_aprons",)),
    DriverVariant(function="tu_calc_tile_config", variant="null offsets under a shared viewport", repository=POP_OS,
                  commit="aee40d4a", basis="docstring",
                  selected_by='[driver] tu_calc_tile_config = "upstream" (default)',
                  models=("layout_solver.solver.solver_bin_offsets",)),
    DriverVariant(function="tu_calc_tile_config", variant="real offsets under a shared viewport", repository=SAILFISH,
                  commit="9429b474", basis="docstring",
                  selected_by='[driver] tu_calc_tile_config = "sailfish-9429b474"',
                  models=("layout_solver.solver.solver_bin_offsets",)),
    DriverVariant(function="tu_emit_subsampled", variant="real offsets under a shared viewport", repository=POP_OS,
                  commit="4ff7b570", basis="docstring",
                  selected_by='[driver] tu_emit_subsampled = "pop-os-4ff7b570"',
                  models=("layout_solver.solver.SubsampledLayout.emit_bin_offset",)),
    DriverVariant(function="tu_emit_subsampled", variant="null offsets under a shared viewport",
                  repository=TENCENTMALOS, commit="16ad8431", basis="spec",
                  selected_by='[driver] tu_emit_subsampled = "upstream" (default: Mesa 26.2.6 in the box) '
                              'or "tencentmalos-16ad8431"',
                  models=("layout_solver.solver.SubsampledLayout.emit_bin_offset",)),
    DriverVariant(function="tu_clear_gmem_attachment", variant="mapped per bin (the Mesa 26.2.2 fix)",
                  repository=POP_OS, commit="9cad4086", basis="docstring",
                  selected_by='[driver] tu_clear_gmem_attachment = "upstream" (default: Mesa 26.2.6 in the box)',
                  models=("fdm.clears.load_op_clear_coords",)),
    DriverVariant(function="tu_clear_gmem_attachment", variant="the unmapped render area in every bin",
                  repository=POP_OS, commit="05b96fda", basis="docstring",
                  selected_by='[driver] tu_clear_gmem_attachment = "mesa-26.1" (readings 26.1 and 26.2.0-rc1)',
                  models=("fdm.clears.load_op_clear_coords",)),
    DriverVariant(function="tu_pipeline_builder_emit_state", variant="static viewports patched (the Mesa 26.2.2 fix)",
                  repository=POP_OS, commit="9cad4086", basis="docstring",
                  selected_by='[driver] tu_pipeline_builder_emit_state = "upstream" (default: Mesa 26.2.6 in the box)',
                  models=("fdm.patch.bakes_static_viewport",)),
    DriverVariant(function="tu_pipeline_builder_emit_state", variant="static viewports baked unpatched",
                  repository=POP_OS, commit="26e5c1f9", basis="docstring",
                  selected_by='[driver] tu_pipeline_builder_emit_state = "mesa-26.1" (readings 26.1 and 26.2.0-rc1)',
                  models=("fdm.patch.bakes_static_viewport",)),
    DriverVariant(function="tu6_emit_tile_select", variant="combined fast-store predicate", repository=SAILFISH,
                  commit="037873b8", basis="decisions", selected_by="always (the only one modelled)",
                  models=("fdm.tile_select",)),
)

#: Sources that are not functions.
DRIVER_DATA: tuple[DriverData, ...] = (
    DriverData(file="src/freedreno/common/freedreno_devices.py", repository=POP_OS, commit="26e5c1f9",
               mesa_version=None, basis="baseline", contents="device-info properties of the modelled GPUs",
               models=("fdm.gpu.GpuProfile", "fdm.gpu.gpu_profiles")),
    DriverData(file="src/freedreno/registers/adreno/a6xx.xml", repository=POP_OS, commit="26e5c1f9",
               mesa_version=None, basis="baseline", contents="the register fields the FDM per-tile state writes",
               models=("fdm.registers.FIELDS", "fdm.tile_select.Foveat", "fdm.tile_select.force_lrz_dis")),
    DriverData(file=VK + "tu_device.cc", repository=POP_OS, commit="8afad928", mesa_version=None,
               basis="baseline", contents="advertised FDM properties (fragmentDensityOffsetGranularity)",
               models=("fdm.turnip.TU_FDM_OFFSET_GRANULARITY",)),
)
