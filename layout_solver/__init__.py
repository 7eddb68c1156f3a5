"""Subsampled-image layout of turnip's FDM render passes.

``solver`` places every rendered tile in the subsampled image (``tu_calc_subsampled``),
``metadata`` builds what is written for the sampler and the shader-side transform
(``tu_emit_subsampled_metadata``, ``tu_get_subsampled_coordinates``), ``aprons`` lists the
apron blits (``tu_calc_subsampled_aprons``).  Spec: turnip-fdm-spec.md section 7.
"""

from .solver import (
                     APRON_SIZE,
                     TU_SUBSAMPLED_MAX_BINS,
                     SolverEvent,
                     SubsampledLayout,
                     SubsampledTile,
                     aprons_intersect,
                     get_default_tile_pos,
                     tu_calc_subsampled,
)

__all__ = ["APRON_SIZE", "TU_SUBSAMPLED_MAX_BINS", "SolverEvent", "SubsampledLayout", "SubsampledTile",
           "aprons_intersect", "get_default_tile_pos", "tu_calc_subsampled"]
