"""What turnip programs for a pass with a subsampled attachment, as the box compares it.

``cmd->state.fdm_subsampled`` (``tu_renderpass_begin``, tu_cmd_buffer.cc, pop-os @ 4ff7b570) is
set when *any* attachment image has ``VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT``
(:attr:`fdm.scenario.Scenario.subsampled`) and is pass-wide: every stored attachment then takes
the subsampled store path, gets metadata and apron blits, whether its own image is subsampled or
not (docs/spec/turnip-fdm-spec.md §7.1, SUSPECT).  :func:`subsampled_pass` gathers the three parts
from the models of this package:

* per rendered bin (walk order) and view, the store (:func:`layout_solver.store_path.store_path`):
  the fast path's ``RB_RESOLVE_CNTL_1/2`` and ``RB_RESOLVE_WINDOW_OFFSET``, the slow path's
  ``GRAS_A2D_DEST``/``SRC``/``SCISSOR``, and the tile's ``FAST_STORE`` predicate;
* the metadata ``tu_emit_subsampled`` writes after the bins (``tu_emit_subsampled_metadata``, one
  ``CP_MEM_WRITE`` per stored attachment and layer; :func:`layout_solver.metadata.sysmem_metadata`
  after a sysmem pass, the fallback when the FDM is off);
* the apron blits after the pass (``tu_calc_subsampled_aprons``), per layer, repeated for every
  stored attachment.

Each stored attachment's metadata uses its own image's ``width0 x height0``: ``tu_image_init``
adds the ``tile_align`` slop only to an image with both SUBSAMPLED and FDM_OFFSET create bits.
"""

from __future__ import annotations

import attrs

from fdm.plan import RenderPassPlan, SysmemPlan

from . import aprons as _aprons
from . import metadata as _metadata
from . import solver as _solver
from .aprons import AprBlit
from .metadata import LayerMetadata
from .solver import SubsampledLayout
from .store_path import StorePath
from .store_path import store_path as _store_path  # the package's name store_path is this function

Pair = tuple[int, int]


@attrs.frozen(kw_only=True)
class StoredAttachment:
    """One attachment ``tu_emit_subsampled`` visits (``store || store_stencil``, not the FDM), in
    the render pass's attachment order (the scenario's attachments, then the resolve targets)."""

    index: int
    subsampled: bool
    size0: Pair            # width0 x height0 of its image


@attrs.frozen(kw_only=True)
class SubsampledPass:
    """The subsampled part of a pass's programming (module docstring)."""

    layout: SubsampledLayout | None                       # None: no tiles (sysmem, or the FDM off)
    attachments: tuple[StoredAttachment, ...]
    #: per rendered bin (parallel to ``plan.tiles``), per view
    stores: tuple[tuple[StorePath, ...], ...]
    #: per bin, the FAST_STORE predicate tile select sets (``SubsampledTile.fast_store``)
    fast_store: tuple[bool, ...]
    #: in stream order: per stored attachment, per layer
    metadata: tuple[LayerMetadata, ...]
    #: in stream order: per layer with blits, per stored attachment, that layer's blit list
    aprons: tuple[tuple[AprBlit, ...], ...]


def stored_attachments(plan: RenderPassPlan | SysmemPlan) -> tuple[StoredAttachment, ...]:
    """The attachments ``tu_emit_subsampled`` writes metadata for and blits aprons into."""
    sc = plan.scenario
    w, h = sc.framebuffer
    out: list[StoredAttachment] = []
    n = 0
    for a in sc.attachments:
        if a.store_op == "store":
            slop = a.subsampled and sc.fdm_offset_create_flag
            size0 = (w + sc.gpu.tile_align_w, h + sc.gpu.tile_align_h) if slop else (w, h)
            out.append(StoredAttachment(index=n, subsampled=a.subsampled, size0=size0))
        n += 1
    colours = sc.attachments if sc.depth_load_op == "none" else sc.attachments[:-1]
    for a in colours:
        if a.resolve:
            out.append(StoredAttachment(index=n, subsampled=False, size0=(w, h)))
            n += 1
    return tuple(out)


def subsampled_pass(plan: RenderPassPlan | SysmemPlan) -> SubsampledPass | None:
    """The subsampled programming of ``plan`` (module docstring); None when no attachment is
    subsampled (``fdm_subsampled`` is false)."""
    sc = plan.scenario
    if not sc.subsampled:
        return None
    atts = stored_attachments(plan)
    fb = sc.framebuffer
    if isinstance(plan, SysmemPlan) or not plan.fdm_enabled:
        # tu6_sysmem_render_end, or tu_emit_subsampled with tiles == NULL: the fallback only
        meta = tuple(_metadata.fallback_metadata(fb, a.size0, layer=i, view=min(i, sc.fdm_layers - 1))
                     for a in atts for i in range(sc.gmem_layers))
        return SubsampledPass(layout=None, attachments=atts, stores=(), fast_store=(), metadata=meta, aprons=())
    layout = _solver.tu_calc_subsampled(plan)
    stores = tuple(_store_path(layout, t) for t in plan.tiles)
    fast = tuple(_tile_fast_store(layout, t.cell) for t in plan.tiles)
    meta = tuple(_metadata.tu_emit_subsampled_metadata(attrs.evolve(layout, width0=a.size0[0], height0=a.size0[1]), i)
                 for a in atts for i in range(sc.gmem_layers))
    blits: list[tuple[AprBlit, ...]] = []
    for layer in range(sc.gmem_layers):
        view = (layer if sc.fdm_per_layer else 0) if sc.layers > 1 else layer
        got = _aprons.tu_calc_subsampled_aprons(layout, view)
        if got:
            blits.extend(got for _ in atts)
    return SubsampledPass(layout=layout, attachments=atts, stores=stores, fast_store=fast, metadata=meta,
                          aprons=tuple(blits))


def _tile_fast_store(layout: SubsampledLayout, cell: Pair) -> bool:
    t = layout.tile(*cell)
    return bool(t.fast_store) if t is not None else False
