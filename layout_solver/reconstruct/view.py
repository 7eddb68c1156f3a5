"""One view reconstructed through both paths: the bins rendered and stored (expanded and
subsampled), the apron blits run and the metadata built (:func:`reconstruct_view`), and both
images sampled at the same framebuffer positions (:func:`sample_both`): the subsampled one
through the shader transform, the expanded one directly."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np
import numpy.typing as npt

from fdm.plan import RenderPassPlan

from ..aprons import AprBlit, tu_calc_subsampled_aprons
from ..metadata import Vec4, layout_metadata, metadata_ubo
from ..options import Addressing, ApronRevision, Filter
from ..solver import SubsampledLayout
from ._types import BoolArray, F32Array, FloatArray, Pair
from .apron_blits import ApronDrop, ApronStats, apply_aprons
from .render import RenderedBin, render_bins, store_expanded, store_subsampled, stored_rect
from .sampler import BORDER, sample
from .transform import subsampled_coordinates


@attrs.frozen(eq=False, kw_only=True)
class ViewReconstruction:
    """Everything of one view needed to compare the two paths."""

    plan: RenderPassPlan
    layout: SubsampledLayout
    view: int
    layer: int | None              # coordinate z for the transform (None: single-view pass)
    bins: tuple[RenderedBin, ...]
    expanded: F32Array             # H x W, non-subsampled path
    stored: F32Array               # height0 x width0 before the aprons (``subsampled`` itself: not kept)
    subsampled: F32Array           # after the aprons
    aprons: tuple[AprBlit, ...]
    apron_stats: ApronStats
    contested: BoolArray           # height0 x width0: stored pixels overwritten by another tile's apron
    ubo: tuple[Vec4 | None, ...]
    fused: bool
    frag_max: Pair                 # largest fragment area of the view per axis


@attrs.frozen(eq=False, kw_only=True)
class SubsampledPath:
    """The subsampled path of one view (:func:`subsampled_path`): what
    :class:`ViewReconstruction` holds but the expanded image."""

    bins: tuple[RenderedBin, ...]
    stored: F32Array
    subsampled: F32Array
    aprons: tuple[AprBlit, ...]
    apron_stats: ApronStats
    contested: BoolArray
    ubo: tuple[Vec4 | None, ...]
    frag_max: Pair


def subsampled_path(plan: RenderPassPlan, layout: SubsampledLayout, view: int, bins: tuple[RenderedBin, ...], *,
                    drop_apron: ApronDrop = None, revision: ApronRevision | None = None,
                    protect_stored: bool = False, keep_stored: bool = True) -> SubsampledPath:
    """The rendered ``bins`` of ``view`` stored in the subsampled image, the aprons run on it and
    the metadata built (the arguments: :func:`reconstruct_view`'s)."""
    stored = store_subsampled(layout, bins)
    aprons = tu_calc_subsampled_aprons(layout, view, revision=revision)
    rects = [(b.cell, stored_rect(layout, b)[0]) for b in bins]
    sub, stats, contested = apply_aprons(stored, aprons, drop_apron, stored=rects, protect_stored=protect_stored,
                                         copy=keep_stored)
    fmax = (max([b.frag_area[0] for b in bins], default=1), max([b.frag_area[1] for b in bins], default=1))
    return SubsampledPath(bins=bins, stored=stored, subsampled=sub, aprons=aprons, apron_stats=stats,
                          contested=contested, ubo=metadata_ubo(layout_metadata(layout)), frag_max=fmax)


def reconstruct_view(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *,
                     drop_apron: ApronDrop = None, fused: bool = True,
                     revision: ApronRevision | None = None, protect_stored: bool = False,
                     keep_stored: bool = True) -> ViewReconstruction:
    """Render, store (both paths), run the aprons and build the metadata of one view
    (``drop_apron``, ``protect_stored``: see :func:`~layout_solver.reconstruct.apply_aprons`).
    ``keep_stored=False``: the aprons are blitted into the stored image itself (``stored`` is
    ``subsampled``: one image less in memory, for callers that only sample)."""
    bins = render_bins(plan, view)
    with ThreadPoolExecutor(1) as pool:   # the two paths' stores are independent: one on each CPU
        expanded = pool.submit(store_expanded, plan, bins)
        p = subsampled_path(plan, layout, view, bins, drop_apron=drop_apron, revision=revision,
                            protect_stored=protect_stored, keep_stored=keep_stored)
    views = plan.scenario.fdm_layers
    return ViewReconstruction(plan=plan, layout=layout, view=view, layer=view if views > 1 else None, bins=bins,
                              expanded=expanded.result(), stored=p.stored, subsampled=p.subsampled, aprons=p.aprons,
                              apron_stats=p.apron_stats, contested=p.contested, ubo=p.ubo,
                              fused=fused, frag_max=p.frag_max)


def sample_both(rec: ViewReconstruction, xs: npt.ArrayLike, ys: npt.ArrayLike, filter: Filter, addressing: Addressing,
                border: float = BORDER) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Sample both paths at framebuffer positions: ``(subsampled, expanded, texel coords of the
    subsampled sample x, y)``.  The normalized coordinate is ``float32(x / W)``."""
    W, H = rec.plan.scenario.framebuffer
    u = (np.asarray(xs, dtype=np.float64) / W).astype(np.float32)
    v = (np.asarray(ys, dtype=np.float64) / H).astype(np.float32)
    su, sv = subsampled_coordinates(rec.ubo, u, v, rec.layer or 0, fused=rec.fused)
    tx = su.astype(np.float64) * rec.layout.width0
    ty = sv.astype(np.float64) * rec.layout.height0
    a = sample(rec.subsampled, tx, ty, filter, addressing, border)
    b = sample(rec.expanded, u.astype(np.float64) * W, v.astype(np.float64) * H, filter, addressing, border)
    return a, b, tx, ty
