"""The machine-readable layout: ``turnip-fdm layout SCENARIO --json``.

:func:`layout_json` turns a solved (or unsolved) :class:`~layout_solver.solver.SubsampledLayout`
into a plain JSON-able document: per view, the metadata header and bins written by
``tu_emit_subsampled_metadata`` (:func:`layout_solver.metadata.tu_emit_subsampled_metadata`),
where each rendered tile is stored (``subsampled_pos[view]`` of ``tu_calc_subsampled``) and the
apron blits of ``tu_calc_subsampled_aprons``.  The schema, field by field: docs/layout-json.md.

Every metadata number is the float32 the driver writes, given as the Python ``float`` (an IEEE
double) equal to it: the conversion float32 -> double is exact and ``json`` prints a float as the
shortest decimal that reads back as that double, so ``numpy.float32(value)`` of the parsed
number is the driver's value bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fdm.geometry import Rect
from fdm.plan import RenderPassPlan, SysmemPlan
from turnip_base.errors import ScenarioError

from .aprons import AprBlit, tu_calc_subsampled_aprons
from .custom_resolve import custom_resolve_plan, viewport_scissor_mismatches
from .metadata import LAYER_VEC4S, LayerMetadata, MetadataBin, Scalar, sysmem_metadata, tu_emit_subsampled_metadata
from .solver import TU_SUBSAMPLED_MAX_BINS, SubsampledLayout, SubsampledTile, image_size0

Pair = tuple[int, int]
JsonDoc = dict[str, Any]


def f32_json(x: Scalar) -> float:
    """A float32 metadata value as the double equal to it (exact: every float32 is a double)."""
    return float(np.float32(x))


def _pair(p: Sequence[int]) -> list[int]:
    return [int(p[0]), int(p[1])]


def _rect(r: Rect) -> list[int]:
    return [r.x, r.y, r.w, r.h]


def _bin_values(b: MetadataBin) -> JsonDoc:
    return {"scale": [f32_json(b.scale[0]), f32_json(b.scale[1])],
            "offset": [f32_json(b.offset[0]), f32_json(b.offset[1])]}


def _header(m: LayerMetadata) -> JsonDoc:
    h = m.header
    return {"scale": [f32_json(h.scale[0]), f32_json(h.scale[1])],
            "offset": [f32_json(h.offset[0]), f32_json(h.offset[1])],
            "bin_stride": h.bin_stride}


def _metadata_slots(layout: SubsampledLayout) -> dict[Pair, list[int]]:
    """Root cell -> the metadata bin indices (``y * TCw + x``, row-major) of every cell of its
    group: ``tu_emit_subsampled_metadata`` writes the root's values into each of them."""
    tcw, tch = layout.tile_count
    grid = layout.plan.grid
    slots: dict[Pair, list[int]] = {}
    for y in range(tch):
        for x in range(tcw):
            slots.setdefault(grid.root(x, y).cell, []).append(y * tcw + x)
    return slots


def _tile_json(t: SubsampledTile, view: int, m: LayerMetadata, slots: Sequence[int]) -> JsonDoc:
    values = {m.bins[j] for j in slots}
    if len(values) != 1:
        raise AssertionError(f"tile {t.cell}: the cells of one group carry different metadata bins "
                             "(a bug of the model)")
    fa = t.frag_areas[view]
    return {
        # a tile is named by its top-left cell ``pos`` everywhere (plan, layout, page, diff)
        "pos": _pair(t.pos),
        "root_cell": _pair(t.cell),
        "extent": _pair(t.extent),
        "subsampled_pos": _rect(t.stored_pos(view)),
        "subsampled": t.is_subsampled(view),
        "frag_area": _pair(fa),
        "effective_frag_area": _pair(t.effective_frag_area(view)),
        **_bin_values(m.bins[slots[0]]),
        "metadata_bins": list(slots),
    }


def _apron_json(a: AprBlit, pos_of: dict[Pair, Pair]) -> JsonDoc:
    """``dst_pos`` / ``src_pos``: the tiles (top-left cells) whose apron is written and read."""
    return {"src": [float(v) for v in a.src], "dst": _rect(a.dst), "edge": a.edge,
            "dst_pos": _pair(pos_of[a.dst_tile]), "src_pos": _pair(pos_of[a.src_tile])}


def _view_json(layout: SubsampledLayout, view: int, slots: dict[Pair, list[int]]) -> JsonDoc:
    m = tu_emit_subsampled_metadata(layout, view)
    doc: JsonDoc = {
        "view": view,
        "layer": m.layer,
        "ubo_base": m.layer * LAYER_VEC4S,
        "image": [layout.width0, layout.height0],
        "bin_offset": None if m.fallback else _pair(layout.emit_bin_offset(view)),
        "header": _header(m),
        "bins_written": len(m.bins),
        "fallback_bin": _bin_values(m.bins[0]) if m.fallback else None,
    }
    if m.fallback:
        doc["bins"] = []
        doc["aprons"] = []
        return doc
    doc["bins"] = [_tile_json(t, view, m, slots[t.cell]) for t in layout.tiles if t.visible(view)]
    pos_of = {t.cell: t.pos for t in layout.tiles}
    doc["aprons"] = [_apron_json(a, pos_of) for a in tu_calc_subsampled_aprons(layout, view)]
    return doc


def sysmem_layout_json(plan: SysmemPlan, views: Sequence[int] | None = None) -> JsonDoc:
    """The layout document of a pass rendered in sysmem: nothing is laid out per bin; every
    layer gets the dummy metadata of ``tu6_sysmem_render_end`` (:func:`sysmem_metadata`)."""
    sc = plan.scenario
    vs = list(range(sc.fdm_layers)) if views is None else [int(v) for v in views]
    metas = sysmem_metadata(plan)
    return {
        "scenario": sc.name,
        "gpu": sc.gpu.name,
        "render_mode": "sysmem",
        "sysmem_reason": plan.sysmem_reason,
        "solved": False,
        "framebuffer": _pair(sc.framebuffer),
        "views": [{"view": v, "layer": metas[v].layer, "image": _pair(image_size0(plan)),
                   "header": _header(metas[v]), "fallback_bin": _bin_values(metas[v].bins[0]),
                   "bins": [], "aprons": []} for v in vs],
    }


def layout_json(plan: RenderPassPlan, layout: SubsampledLayout, views: Sequence[int] | None = None) -> JsonDoc:
    """The layout document of ``plan`` (schema: docs/layout-json.md) for ``views`` (default all,
    in order).  ``layout`` is ``tu_calc_subsampled(plan)``; metadata and aprons use the offsets
    the solver used.  A view outside ``[0, views - 1]`` is a :class:`~turnip_base.errors.ScenarioError`;
    the apron code's driver assertions propagate as :class:`~turnip_base.errors.DriverAssertion`."""
    if layout.plan is not plan:
        raise ScenarioError("layout", "must be the layout of this plan (tu_calc_subsampled(plan))")
    sc = plan.scenario
    vs = list(range(sc.fdm_layers)) if views is None else [int(v) for v in views]
    for v in vs:
        if not 0 <= v < sc.fdm_layers:
            raise ScenarioError("views", f"must lie in [0, {sc.fdm_layers - 1}], got {v}")
    slots = _metadata_slots(layout) if layout.solved else {}
    return {
        "scenario": sc.name,
        "gpu": sc.gpu.name,
        "render_mode": "gmem",
        "sysmem_reason": None,
        "solved": layout.solved,
        "max_bins": TU_SUBSAMPLED_MAX_BINS,
        "framebuffer": _pair(layout.fb_size),
        "tile_size": _pair(layout.tile_size),
        "tile_count": _pair(layout.tile_count),
        "views": [_view_json(layout, v, slots) for v in vs],
        **({"custom_resolve": custom_resolve_json(layout)} if sc.custom_resolve else {}),
    }


def custom_resolve_json(layout: SubsampledLayout) -> JsonDoc:
    """What the custom-resolve subpass programs per rendered tile (docs/functions/custom_resolve.md)
    and the slots whose viewport stays in framebuffer space while the scissor does not."""
    patches = custom_resolve_plan(layout)
    pos_of = {p.index: p.pos for p in patches}
    return {
        "tiles": [{"index": p.index, "pos": _pair(p.pos), "root_cell": _pair(p.cell), "subsampled": p.subsampled,
                   "views": [{"view": v.view, "visible": v.visible, "subsampled": v.subsampled,
                              "tile_start": _pair(v.tile_start), "rendering_frag_area": _pair(v.rendering_frag_area),
                              "gmem_frag_area": _pair(v.gmem_frag_area),
                              "frag_size": _pair(v.fs.frag_size), "frag_offset": _pair(v.fs.frag_offset),
                              "gmem_scale": [float(v.fs.gmem_scale[0]), float(v.fs.gmem_scale[1])],
                              "gmem_offset": _pair(v.fs.gmem_offset)} for v in p.views],
                   "slots": [{"slot": s.slot, "view": s.view, "viewport": [float(c) for c in s.viewport],
                              "scissor": [_pair(s.scissor[0]), _pair(s.scissor[1])],
                              "viewport_early_out": e} for s, e in zip(p.slots, p.viewport_early_out, strict=True)]}
                  for p in patches],
        "viewport_scissor_mismatches": [{"index": m.index, "pos": _pair(pos_of[m.index]), "slot": m.slot,
                                         "view": m.view,
                                         "shift": _pair(m.shift)} for m in viewport_scissor_mismatches(patches)],
    }
