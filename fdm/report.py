"""Plain renderings of a :class:`~fdm.plan.RenderPassPlan`: a JSON document and a text table."""

from __future__ import annotations

from typing import Any

from .patch import BlitRects, ViewportPatch
from .plan import RenderPassPlan, SysmemPlan, TilePlan, ViewPlan
from .registers import register_warnings, warning_json
from .turnip import INVISIBLE_FRAG_AREA

#: the columns of :func:`plan_table`, in order: (name, symbol, meaning).  Every name is the key
#: the same value has in ``plan --json`` (tile keys, or ``views[v]`` keys), so one quantity has
#: one name in the table, the JSON, the layout page and the docs (docs/plan-table.md).
PLAN_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("index", "#", "the tile's place in the driver's walk order (0 = rendered first)"),
    ("pos", "p", "the tile: its top-left cell (column, row) in the tile grid; a merged group is named by its "
                 "first cell"),
    ("extent", "E", "cells covered (columns x rows): 1x1, or a merged group"),
    ("common_bin_start", "b_cs", "p * T: the window offset of the tile in framebuffer pixels, the same for every view"),
    ("view", "v", "the view (or per-layer FDM layer) this row is about"),
    ("visible", "", "whether the view's bin is rendered in this tile (tu_calc_bin_visibility)"),
    ("bin", "B_v", "the view's bin in framebuffer pixels: x,y,w,h"),
    ("frag_area", "fa", "the fragment area fw x fh (inf: density 0, nothing rendered)"),
    ("offset", "o", "b_cs - b_s/fa: framebuffer -> rendering-space offset of the view"),
    ("hw_offset", "o'", "b_cs - b_cs/fa: the HW bin-scaling offset programmed for the view's slot (0,0 without "
                        "HW bin scaling)"),
    ("bin_is_scaled", "", "no: rendered at full rate; yes: scaled by the patched viewports; hw: also HW bin "
                          "scaling (bin_scale_en)"),
    ("lrz", "", "on/off: LRZ in effect for the tile"),
    ("fast_store", "", "yes/no: the fast (non-scaled) store path is taken"),
)


def _view_json(t: TilePlan, v: ViewPlan) -> dict[str, Any]:
    return {
        "view": v.view,
        "visible": v.visible,
        "bin": list(v.bin),
        "frag_area": list(v.frag_area),
        "offset": list(v.offset),
        "hw_offset": list(v.hw_offset),
        "bin_offset": list(v.bin_offset),
        "lrz": t.lrz,
        "fs_params": {"frag_size": list(t.fs_params[v.view].frag_size),
                      "frag_offset": list(t.fs_params[v.view].frag_offset)},
        "blits": _blits_json(t.blits[v.view]),
    }


def _blits_json(b: BlitRects) -> dict[str, Any]:
    """The view's GMEM load (x, y, w, h) and sysmem store (inclusive TL, BR) rectangles."""
    return {"load_dst": list(b.load_dst) if b.load_dst is not None else None,
            "load_src": list(b.load_src) if b.load_src is not None else None,
            "store_dst": [list(b.store_dst[0]), list(b.store_dst[1])],
            "store_src": [list(b.store_src[0]), list(b.store_src[1])]}


def _warnings_json(plan: RenderPassPlan) -> list[dict[str, Any]]:
    """``fdm.registers.warning_json`` with the tile named as everywhere else: ``index`` (walk
    order) and ``pos`` (top-left cell); both null for a pass-wide value."""
    pos_of = {t.index: list(t.pos) for t in plan.tiles}
    out = []
    for w in register_warnings(plan):
        j = dict(warning_json(w))
        index = j.pop("tile")
        out.append({"index": index, "pos": pos_of.get(index) if isinstance(index, int) else None, **j})
    return out


def _slot_json(s: ViewportPatch) -> dict[str, Any]:
    return {"slot": s.slot, "view": s.view, "viewport": list(s.viewport),
            "viewport_scissor": [list(s.viewport_scissor[0]), list(s.viewport_scissor[1])],
            "scissor": [list(s.scissor[0]), list(s.scissor[1])]}


def tile_json(t: TilePlan) -> dict[str, Any]:
    return {
        "index": t.index,
        "pos": list(t.pos),
        "extent": list(t.extent),
        "gmem_extent": list(t.gmem_extent),
        "root_cell": list(t.cell),
        "pipe": t.pipe,
        "slot_mask": t.slot_mask,
        "visible_views": t.visible_views,
        "common_bin_start": list(t.common_bin_start),
        "bin_is_scaled": t.bin_is_scaled,
        "bin_scale_en": t.bin_scale_en,
        "lrz": t.lrz,
        "force_lrz_dis": t.force_lrz_dis,
        "fast_store": t.fast_store,
        "window_scissor": [list(t.window_scissor[0]), list(t.window_scissor[1])],
        "foveat": {"binscaleen": t.foveat.binscaleen, "xscale": list(t.foveat.xscale),
                   "yscale": list(t.foveat.yscale), "hw_offsets": [list(o) for o in t.foveat.hw_offsets]},
        "views": [_view_json(t, v) for v in t.views],
        "slots": [_slot_json(s) for s in t.slots],
    }


def _common_json(plan: RenderPassPlan | SysmemPlan) -> dict[str, Any]:
    sc = plan.scenario
    return {
        "scenario": sc.name,
        "gpu": sc.gpu.name,
        "framebuffer": list(sc.framebuffer),
        "views": sc.views,
        "layers": sc.layers,
        "fdm_per_layer": sc.fdm_per_layer,
        "fdm_layers": sc.fdm_layers,
        "draws": sc.draws,
        # tu_render_pass_disable_fdm: false when a multisampled attachment is loaded or stored
        "fdm_enabled": plan.fdm_enabled,
        "fdm_disabled_reason": plan.fdm_disabled_reason,
        "render_mode": plan.render_mode,
        "sysmem_reason": plan.sysmem_reason,
        # use_hw_binning: whether a binning pass runs (false in sysmem)
        "binning_pass": plan.binning_pass,
    }


def _lrz_json(plan: RenderPassPlan | SysmemPlan) -> dict[str, Any]:
    """``tu_lrz_init_state`` (``valid``, ``reason``) and ``tu6_calculate_lrz_state`` at the draws
    (``at_draws``: GRAS_LRZ_CNTL.ENABLE, ``draws_reason``; ``valid_after``)."""
    return {"valid": plan.lrz.valid, "reason": plan.lrz.reason, "at_draws": plan.lrz_draw.enabled,
            "draws_reason": plan.lrz_draw.reason, "valid_after": plan.lrz_draw.valid_after}


def sysmem_json(plan: SysmemPlan) -> dict[str, Any]:
    """A pass rendered in sysmem: the record-time patchpoint values every draw uses."""
    sc = plan.scenario
    return {
        **_common_json(plan),
        "tile_size": list(plan.tiling.tile_size) if plan.tiling is not None else None,
        "gmem_pixels": plan.gmem.gmem_pixels,
        "shared_viewport": plan.shared_viewport,
        "bin_merging": sc.bin_merging,
        "depth_load_op": sc.depth_load_op,
        "lrz": _lrz_json(plan),
        "sysmem": {"bin": list(plan.bin), "frag_areas": [list(f) for f in plan.frag_areas],
                   "slots": [_slot_json(s) for s in plan.slots],
                   "fs_params": [{"frag_size": list(f.frag_size), "frag_offset": list(f.frag_offset)}
                                 for f in plan.fs_params]},
        "tiles": [],
        "warnings": [],
    }


def plan_json(plan: RenderPassPlan | SysmemPlan) -> dict[str, Any]:
    """The plan as a JSON document (``render_mode`` says which kind)."""
    if isinstance(plan, SysmemPlan):
        return sysmem_json(plan)
    sc = plan.scenario
    vsc = plan.tiling.vsc
    return {
        **_common_json(plan),
        "tile_size": list(plan.tiling.tile_size),
        "tile_size_selected": plan.tiling.tile_size_selected,
        "tile_align": list(plan.gmem.tile_align),
        "gmem_pixels": plan.gmem.gmem_pixels,
        "tile_count": list(vsc.tile_count),
        "pipe0": list(vsc.pipe0),
        "pipe_count": list(vsc.pipe_count),
        "binning_possible": vsc.binning_possible,
        "shared_viewport": plan.shared_viewport,
        "fdm_offsets": [list(u) for u in plan.fdm_offsets] if plan.fdm_offsets is not None else None,
        "bin_offsets": [list(b) for b in plan.bin_offsets],
        "bin_merging": sc.bin_merging,
        "depth_load_op": sc.depth_load_op,
        "driver": {"tu_calc_tile_config": sc.driver.tu_calc_tile_config,
                   "tu_emit_subsampled": sc.driver.tu_emit_subsampled,
                   "tu_calc_subsampled_aprons": sc.driver.tu_calc_subsampled_aprons},
        "lrz": _lrz_json(plan),
        # what the binning pass is patched with (also computed when binning_pass is false)
        "binning": {"bins": [list(b) for b in plan.binning.bins],
                    "window_scissor": [list(plan.binning.window_scissor[0]), list(plan.binning.window_scissor[1])],
                    "slots": [_slot_json(s) for s in plan.binning.slots]},
        "tiles": [tile_json(t) for t in plan.tiles],
        # values the plan says turnip programs that do not fit their register field (fdm.registers)
        "warnings": _warnings_json(plan),
    }


def _p(p: tuple[int, int]) -> str:
    return f"{p[0]},{p[1]}"


def _fa(fa: tuple[int, int]) -> str:
    return "inf" if tuple(fa) == INVISIBLE_FRAG_AREA else f"{fa[0]}x{fa[1]}"


def sysmem_table(plan: SysmemPlan) -> str:
    sc = plan.scenario
    lines = [f"{sc.name}: {sc.gpu.name}, framebuffer {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s), "
             f"rendered in sysmem: {plan.sysmem_reason}"
             + ("" if plan.fdm_enabled else f"; FDM off: {plan.fdm_disabled_reason}"),
             ("every view: frag area 1x1 (full rate), bin (0,0)-(16384,16384), user viewports unchanged, "
              "scissors clamped to [0, 16384)" if plan.fdm_enabled else
              "no FDM patchpoint: frag area 1x1 (full rate), user viewports and scissors as given")
             + f"; LRZ {'on' if plan.lrz_draw.enabled else 'off'}", "",
             f"{'slot':>4} {'view':>4} {'viewport (x,y,w,h)':>32} {'scissor TL':>13} {'scissor BR':>13}"]
    for s in plan.slots:
        vp = ",".join(f"{c:g}" for c in s.viewport)
        lines.append(f"{s.slot:>4} {s.view:>4} {vp:>32} {_p(s.scissor[0]):>13} {_p(s.scissor[1]):>13}")
    return "\n".join(lines)


def _columns(rows: list[list[str]]) -> list[str]:
    """Rows of cells, right-aligned to the widest cell of each column."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return [" ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def plan_table(plan: RenderPassPlan | SysmemPlan) -> str:
    """One line per rendered tile and view, in walk order (a sysmem pass: its patched slots).
    The columns are :data:`PLAN_COLUMNS`; the second and later rows of a tile leave the tile's
    own columns blank."""
    if isinstance(plan, SysmemPlan):
        return sysmem_table(plan)
    sc = plan.scenario
    vsc = plan.tiling.vsc
    lines: list[str] = [
        f"{sc.name}: {sc.gpu.name}, framebuffer {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s), "
        f"tile {plan.tiling.tile_size[0]}x{plan.tiling.tile_size[1]}"
        f"{' (selected)' if plan.tiling.tile_size_selected else ''}, grid {vsc.tile_count[0]}x{vsc.tile_count[1]}, "
        f"pipes {vsc.pipe_count[0]}x{vsc.pipe_count[1]} of {vsc.pipe0[0]}x{vsc.pipe0[1]}",
        f"fdm_offsets: {'none' if plan.fdm_offsets is None else ' '.join(_p(u) for u in plan.fdm_offsets)}; "
        f"bin_offsets: {' '.join(_p(b) for b in plan.bin_offsets)}; "
        f"shared_viewport: {'yes' if plan.shared_viewport else 'no'}; "
        f"bin_merging: {sc.bin_merging}; rendered tiles: {len(plan.tiles)}; "
        f"binning pass: {'yes' if plan.binning_pass else 'no'}"
        + ("" if plan.fdm_enabled else f"; FDM off: {plan.fdm_disabled_reason}"),
        "",
    ]
    rows: list[list[str]] = [[name for name, _, _ in PLAN_COLUMNS]]
    for t in plan.tiles:
        for k, v in enumerate(t.views):
            first = k == 0
            scaled = "hw" if t.bin_scale_en else ("yes" if t.bin_is_scaled else "no")
            rows.append([
                str(t.index) if first else "", _p(t.pos) if first else "",
                f"{t.extent[0]}x{t.extent[1]}" if first else "", _p(t.common_bin_start) if first else "",
                str(v.view), "yes" if v.visible else "no", ",".join(str(c) for c in v.bin), _fa(v.frag_area),
                _p(v.offset), _p(v.hw_offset), scaled if first else "", ("on" if t.lrz else "off") if first else "",
                ("yes" if t.fast_store else "no") if first else ""])
    lines += _columns(rows)
    warnings = register_warnings(plan)
    if warnings:
        lines += ["", f"warnings: {len(warnings)} value(s) do not fit their register field"]
        for w in warnings:
            where = ("pass" if w.tile is None else f"tile {w.tile}") + ("" if w.view is None else f" view {w.view}")
            lines.append(f"  {where}: {w.register}.{w.field} = {w.value} ({w.rule}; max {w.max})")
    return "\n".join(lines)
