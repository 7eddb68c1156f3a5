"""Whole-framebuffer arrays of one reconstructed view, for the pictures of
``turnip-fdm layout`` (:mod:`layout_solver.report`): the scene, both stored images, the
reconstruction sampled at every pixel centre and its error."""

from __future__ import annotations

import attrs
import numpy as np

from fdm.plan import RenderPassPlan

from ..options import Addressing, Filter
from ..solver import SubsampledLayout
from ._types import F32Array, FloatArray
from .apron_blits import ApronDrop
from .reference_scene import scene
from .render import EMPTY
from .sampler import BORDER
from .view import reconstruct_view, sample_both


@attrs.frozen(eq=False, kw_only=True)
class ReconstructionImages:
    """Arrays for drawing one view (float64 unless stated)."""

    scene: FloatArray            # H x W, the reference scene at pixel centres
    expanded: F32Array           # H x W float32, the non-subsampled path's image
    subsampled: F32Array         # height0 x width0 float32, the subsampled image after the aprons
    reconstructed: FloatArray    # H x W, the subsampled image sampled through the metadata at pixel centres
    reference: FloatArray        # H x W, the expanded image sampled at the same coordinates
    error: FloatArray            # H x W, |reconstructed - reference|


def reconstruction_images(plan: RenderPassPlan, layout: SubsampledLayout, view: int, *, filter: Filter = "linear",
                          addressing: Addressing = "clamp_to_edge", drop_apron: ApronDrop = None, fused: bool = True,
                          border: float = BORDER) -> ReconstructionImages:
    """The reconstructed ``W x H`` image (sampled at every pixel centre) and its error heat map.
    Pixels in unrendered cells hold NaN in ``reconstructed``/``reference``/``error``."""
    rec = reconstruct_view(plan, layout, view, drop_apron=drop_apron, fused=fused)
    W, H = plan.scenario.framebuffer
    gy, gx = np.mgrid[0:H, 0:W]
    xs, ys = (gx + 0.5).ravel(), (gy + 0.5).ravel()
    rendered = (rec.expanded != EMPTY).ravel()
    recon = np.full(W * H, np.nan)
    ref = np.full(W * H, np.nan)
    a, b, _, _ = sample_both(rec, xs[rendered], ys[rendered], filter, addressing, border)
    recon[rendered], ref[rendered] = a, b
    return ReconstructionImages(scene=scene(gx + 0.5, gy + 0.5, (W, H)), expanded=rec.expanded,
                                subsampled=rec.subsampled, reconstructed=recon.reshape(H, W),
                                reference=ref.reshape(H, W), error=np.abs(recon - ref).reshape(H, W))
