"""CPU reconstruction of the whole subsampled-image path, per view.

What is modelled (docs/spec/turnip-fdm-spec.md §5.8 and §7.5-7.8, Vulkan sampling rules of
docs/spec/vulkan-fdm-and-cts.md §1.8), one module per step:

1. :mod:`.reference_scene` - :func:`scene`, the procedural image every fragment is coloured with.
2. :mod:`.render` - :func:`render_bins` renders every rendered root tile's bin at its fragment
   area; :func:`store_subsampled` stores the fragments in the subsampled image (1:1 or expanded,
   clipped by the store scissor), :func:`store_expanded` in the non-subsampled image.
3. :mod:`.apron_blits` - :func:`apply_aprons` runs the blits of ``tu_calc_subsampled_aprons``
   (NEAREST, clipped and clamped, counted).
4. :mod:`.transform` - :func:`subsampled_coordinates`, ``tu_get_subsampled_coordinates``
   vectorised in float32 with a correctly rounded FMA (:func:`ffma_np`); :mod:`.sampler` -
   :func:`sample`, Vulkan NEAREST / LINEAR with CLAMP_TO_EDGE or CLAMP_TO_BORDER.
5. :mod:`.view` - :func:`reconstruct_view` puts 2-4 together for one view and
   :func:`sample_both` samples both paths at the same framebuffer positions;
   :mod:`.points` - :func:`sample_points`, where they are compared.
6. :mod:`.bound` - :func:`compare` / :func:`reconstruction_error`: the subsampled image sampled
   through the metadata against the expanded image sampled at the same normalized coordinate,
   with the same filter and addressing, within the bound of what the fragment area alone
   explains (the module explains the bound).
7. :mod:`.findings` - detectors of the layout findings the comparison exposes
   (:func:`detached_image_edges`, :func:`inconsistent_adjacent_tiles`); :mod:`.images` - the
   whole-framebuffer arrays (:func:`reconstruction_images`) and the bounded rasters the pictures
   draw (:func:`reconstruction_rasters`), sampled block by block by :mod:`.grid`
   (:func:`pixel_blocks`: the transform separated per metadata bin, :func:`sample_grid`);
   :func:`picture_rasters`, the same pictures' arrays with the error to within
   :data:`PICTURE_SLACK` (:func:`sample_grid_near`) where a quantised picture needs no more.

Everything is re-exported here: ``from layout_solver.reconstruct import compare``.
"""

from __future__ import annotations

from ..options import ADDRESSING, FILTERS, Addressing, Filter
from .apron_blits import ApronDrop, ApronStats, apply_aprons, blit_nearest, owner_map
from .bound import ErrorReport, compare, footprint_touches, neighbourhood_bound, reconstruction_error
from .findings import Side, detached_image_edges, inconsistent_adjacent_tiles
from .grid import BLOCK, NEAR_BOUND, PixelBlock, pixel_blocks, sample_grid, sample_grid_near
from .images import (
    PICTURE_SLACK,
    RASTER_MAX_SIDE,
    PictureRasters,
    ReconstructionImages,
    ReconstructionRasters,
    picture_rasters,
    raster_factor,
    reconstruction_images,
    reconstruction_rasters,
    value_range,
)
from .points import EDGE_OFFSETS, bin_edges, sample_points
from .reference_scene import scene
from .render import EMPTY, RenderedBin, expand, render_bin, render_bins, store_expanded, store_subsampled, stored_rect
from .sampler import BORDER, sample
from .transform import ffma_np, subsampled_coordinates
from .view import ViewReconstruction, reconstruct_view, sample_both

__all__ = [
    "ADDRESSING", "BLOCK", "BORDER", "EDGE_OFFSETS", "EMPTY", "FILTERS", "NEAR_BOUND", "PICTURE_SLACK",
    "RASTER_MAX_SIDE", "Addressing", "ApronDrop", "ApronStats", "ErrorReport", "Filter", "PictureRasters",
    "PixelBlock", "ReconstructionImages",
    "ReconstructionRasters", "RenderedBin", "Side", "ViewReconstruction", "apply_aprons", "bin_edges",
    "blit_nearest", "compare", "detached_image_edges", "expand", "ffma_np", "footprint_touches",
    "inconsistent_adjacent_tiles", "neighbourhood_bound", "owner_map", "picture_rasters", "pixel_blocks",
    "raster_factor", "reconstruct_view", "reconstruction_error", "reconstruction_images", "reconstruction_rasters",
    "render_bin", "render_bins", "sample", "sample_both", "sample_grid", "sample_grid_near", "sample_points", "scene",
    "value_range",
    "store_expanded", "store_subsampled", "stored_rect", "subsampled_coordinates",
]
