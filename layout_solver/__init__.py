"""Subsampled-image layout of turnip's FDM render passes.

``solver`` places every rendered tile in the subsampled image (``tu_calc_subsampled``),
``metadata`` builds what is written for the sampler and the shader-side transform
(``tu_emit_subsampled_metadata``, ``tu_get_subsampled_coordinates``; ``sysmem_metadata`` for
passes rendered in sysmem), ``aprons`` lists the apron blits (``tu_calc_subsampled_aprons``),
``store_path`` the subsampled store (``fdm_apply_blit_scissor``, ``fdm_apply_store_coords``, ...),
``custom_resolve`` a custom-resolve subpass, ``reconstruct`` runs the whole path on the CPU and
compares it with the non-subsampled one (``reconstruction_error``).  String options are the
``Literal`` types of ``options``.  Spec: docs/spec/turnip-fdm-spec.md §7.

The entry points::

    from fdm import load_scenario, plan_render_pass
    from layout_solver import tu_calc_subsampled, tu_calc_subsampled_aprons, reconstruction_error

    plan = plan_render_pass(load_scenario("pass.toml"))
    layout = tu_calc_subsampled(plan)
    aprons = tu_calc_subsampled_aprons(layout, 0)
    assert reconstruction_error(plan, layout, 0).ok

The pictures, reports and the ``layout`` sub-command (``pictures``, ``draw``, ``report``,
``cli``) are a presentation layer above these models and are not imported here.
"""

from .aprons import AprBlit, ApronEdge, tu_calc_subsampled_aprons
from .custom_resolve import CustomResolvePatch, CustomResolveView, custom_resolve_plan, custom_resolve_tile
from .metadata import (
    LAYER_BYTES,
    LAYER_VEC4S,
    LayerMetadata,
    MetadataBin,
    MetadataHeader,
    UndefinedMetadataRead,
    framebuffer_to_subsampled,
    layout_metadata,
    metadata_ubo,
    shader_pixel,
    sysmem_metadata,
    tu_emit_subsampled_metadata,
    tu_get_subsampled_coordinates,
)
from .options import (
    ADDRESSING,
    APRON_REVISIONS,
    FILTERS,
    OFFSET_MODES,
    Addressing,
    ApronRevision,
    Filter,
    OffsetsUnderSharedViewport,
)
from .reconstruct import ErrorReport, ViewReconstruction, compare, reconstruct_view, reconstruction_error
from .solver import (
    APRON_SIZE,
    TU_SUBSAMPLED_MAX_BINS,
    SolverEvent,
    SolverEventKind,
    SubsampledLayout,
    SubsampledTile,
    aprons_intersect,
    get_default_tile_pos,
    tu_calc_subsampled,
)
from .store_path import StorePath, store_path, store_paths

__all__ = [
    "ADDRESSING", "APRON_REVISIONS", "APRON_SIZE", "FILTERS", "LAYER_BYTES", "LAYER_VEC4S", "OFFSET_MODES",
    "TU_SUBSAMPLED_MAX_BINS", "Addressing", "AprBlit", "ApronEdge", "ApronRevision", "ErrorReport", "Filter",
    "LayerMetadata", "MetadataBin", "MetadataHeader", "OffsetsUnderSharedViewport", "SolverEvent", "SolverEventKind",
    "SubsampledLayout", "SubsampledTile", "UndefinedMetadataRead", "ViewReconstruction", "aprons_intersect", "compare",
    "framebuffer_to_subsampled", "get_default_tile_pos", "layout_metadata", "metadata_ubo", "reconstruct_view",
    "reconstruction_error", "shader_pixel", "tu_calc_subsampled", "tu_calc_subsampled_aprons",
    "tu_emit_subsampled_metadata", "tu_get_subsampled_coordinates",
    "CustomResolvePatch", "CustomResolveView", "custom_resolve_plan", "custom_resolve_tile",
    "StorePath", "store_path", "store_paths", "sysmem_metadata",
]
