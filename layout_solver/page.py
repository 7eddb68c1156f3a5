"""The interactive layout page: one self-contained ``index.html`` (script, styles and data inline;
nothing fetched from the network) that ``turnip-fdm layout`` / ``demo`` write and ``diff`` reuses.

The page is a rendering above the models: it holds the documents the command line already
prints (``plan --json``: :func:`fdm.report.plan_json`; ``layout --json``:
:func:`layout_solver.layout_json.layout_json`) under the same names, plus what only a picture
needs: the density map (downsampled), an FDM-offset sweep planned ahead of time, the memory
picture and the reconstruction error as PNG data URIs.  The script and styles are package data
(``layout_solver/page_assets/``); docs/layout-page.md describes what the page shows.

Size bound (:data:`MAX_PAGE_BYTES` is asserted): the documents grow with tiles x views, the
sweep is cut to :data:`MAX_SWEEP_ENTRIES` tile-views over all steps, the density map to
:data:`MAX_DENSITY_SIDE` texels a side and each picture to :data:`MAX_PICTURE_SIDE` pixels a
side; a pass whose documents alone pass the bound loses the sweep, then the pictures, and the
page says so.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from fdm.plan import PassBins, RenderPassPlan, SysmemPlan, plan_bins
from fdm.report import PLAN_COLUMNS, plan_json
from fdm.scenario import Scenario
from fdm.turnip import INVISIBLE_FRAG_AREA, MAX_VIEWPORT_SIZE, TU_FDM_OFFSET_GRANULARITY, fdm_texel_shift
from turnip_base.errors import TurnipFdmError

from .layout_json import layout_json, sysmem_layout_json
from .solver import SubsampledLayout

JsonDoc = dict[str, Any]

#: steps of the FDM-offset sweep (step 0 is the scenario's own offsets)
MAX_SWEEP_STEPS = 16
#: tile-views summed over all sweep steps kept on the page (each costs ~40 bytes)
MAX_SWEEP_ENTRIES = 120_000
#: largest side of the density map drawn under the bins (texels; larger maps are subsampled)
MAX_DENSITY_SIDE = 256
#: largest side of an embedded picture (pixels; larger images are subsampled, nearest)
MAX_PICTURE_SIDE = 512
#: the page never exceeds this many bytes (asserted); see the module docstring
MAX_PAGE_BYTES = 24 * 1024 * 1024
#: above this, the sweep and then the pictures are dropped to stay within MAX_PAGE_BYTES
_SOFT_BYTES = 16 * 1024 * 1024

#: the colours of the fragment areas, shared by the page's bins and its legend
FA_COLORS: dict[str, str] = {
    "1x1": "#edf8e9", "1x2": "#c7e9c0", "2x1": "#a1d99b", "2x2": "#74c476", "1x4": "#fdd0a2",
    "4x1": "#fdae6b", "2x4": "#9ecae1", "4x2": "#6baed6", "4x4": "#3182bd", "8x8": "#08519c",
}

#: the layout table's columns (name, meaning); names are the keys of ``layout --json`` bins
LAYOUT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("pos", "the tile: its top-left cell (column, row), as in the plan"),
    ("root_cell", "the cell whose tu_tile_config stands for the tile's merged group"),
    ("extent", "cells covered (columns x rows)"),
    ("view", "the view (layer of the subsampled image)"),
    ("subsampled_pos", "where the bin is stored in the subsampled image: x,y,w,h"),
    ("frag_area", "the view's fragment area"),
    ("effective_frag_area", "frag_area when the bin is stored subsampled, else 1x1"),
    ("subsampled", "whether the bin is stored subsampled (false: un-subsampled by the solver)"),
    ("scale", "metadata bin scale written by tu_emit_subsampled_metadata (float32)"),
    ("offset", "metadata bin offset (float32; normalized image coordinates)"),
    ("metadata_bins", "indices of the metadata bins (row-major cells) that carry this tile's values"),
)


def _asset(name: str) -> str:
    return resources.files("layout_solver").joinpath("page_assets", name).read_text(encoding="utf-8")


def png_data_uri(rgb: npt.NDArray[np.uint8]) -> str:
    """An RGB uint8 image as a PNG data URI, subsampled (nearest) to :data:`MAX_PICTURE_SIDE`."""
    from PIL import Image

    h, w = rgb.shape[:2]
    step = max(1, -(-max(w, h) // MAX_PICTURE_SIDE))
    small = np.ascontiguousarray(rgb[::step, ::step, :3])
    buf = io.BytesIO()
    Image.fromarray(small, "RGB").save(buf, format="PNG", optimize=False, compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def density_json(sc: Scenario, view: int) -> JsonDoc:
    """The density layer ``view`` for drawing: ``min(density.x, density.y)`` as bytes (0-255,
    base64, row-major) of at most :data:`MAX_DENSITY_SIDE` texels a side, each ``texel`` pixels
    wide (the driver's texel size times the subsampling step)."""
    d = sc.density
    layer = d.layers[min(view, len(d.layers) - 1)]
    if d.format == "R8G8_UNORM":
        vals = np.asarray(layer, dtype=np.float64) / 255.0
    else:
        vals = np.clip(np.nan_to_num(np.asarray(layer, dtype=np.float64), nan=0.0), 0.0, 1.0)
    m = vals.min(axis=-1)
    fw, fh = d.size
    step = max(1, -(-max(fw, fh) // MAX_DENSITY_SIDE))
    m = m[::step, ::step]
    sx = fdm_texel_shift(sc.framebuffer[0], fw)
    sy = fdm_texel_shift(sc.framebuffer[1], fh)
    data = np.rint(np.clip(m, 0.0, 1.0) * 255.0).astype(np.uint8)
    return {"size": [int(data.shape[1]), int(data.shape[0])], "texel": [(1 << sx) * step, (1 << sy) * step],
            "data": base64.b64encode(data.tobytes()).decode("ascii")}


def _fa_code(fa: Sequence[int]) -> list[int]:
    return [0, 0] if tuple(fa) == INVISIBLE_FRAG_AREA else [int(fa[0]), int(fa[1])]


def sweep_step_json(bins: PassBins) -> list[list[Any]]:
    """One sweep step, compactly: per rendered tile ``[pos_x, pos_y, extent_w, extent_h,
    [[bin x, y, w, h, fa w, fa h], ...per view]]`` (``fa`` 0x0: the view is not visible)."""
    return [[t.pos[0], t.pos[1], t.extent[0], t.extent[1],
             [[*b, *(_fa_code(fa) if vis else [0, 0])] for b, fa, vis in zip(t.bins, t.frag_areas, t.visible,
                                                                              strict=True)]]
            for t in bins.tiles]


def _ceil_to(x: int, m: int) -> int:
    return -(-x // m) * m


def offset_sweep(plan: RenderPassPlan, steps: int = MAX_SWEEP_STEPS) -> JsonDoc:
    """The FDM-offset sweep the page's slider plays: step ``k`` plans the scenario with every
    view's offset ``u_v + k * d``, ``d`` = the tile size / ``steps`` rounded up to the offset
    granularity (so the sweep passes one whole tile and the bins wrap).  At most ``steps``
    steps and :data:`MAX_SWEEP_ENTRIES` tile-views in all.  A step on which turnip would assert
    is kept with its error; a scenario without FDM offsets has no sweep (``reason``)."""
    sc = plan.scenario
    if plan.fdm_offsets is None:
        return {"steps": [], "reason": "the scenario sets no fdm_offsets: no offset to move"}
    per_step = max(1, len(plan.tiles) * sc.fdm_layers)
    n = max(1, min(steps, MAX_SWEEP_ENTRIES // per_step))
    T = plan.tiling.tile_size
    g = TU_FDM_OFFSET_GRANULARITY
    d = (_ceil_to(max(1, T[0] // n), g), _ceil_to(max(1, T[1] // n), g))
    out: list[JsonDoc] = []
    for k in range(n):
        offs = tuple((u[0] + k * d[0], u[1] + k * d[1]) for u in plan.fdm_offsets)
        if any(abs(c) > MAX_VIEWPORT_SIZE for u in offs for c in u):
            break
        step: JsonDoc = {"k": k, "fdm_offsets": [list(u) for u in offs]}
        try:
            # the bins and areas only (plan_bins: the plan's values and refusals, half its time)
            p = plan_bins(attrs.evolve(sc, fdm_offsets=offs))
        except TurnipFdmError as e:
            step["error"] = f"{e.label}: {e}"
            out.append(step)
            continue
        if not isinstance(p, PassBins):
            step["error"] = f"rendered in sysmem: {p.sysmem_reason}"
        else:
            step["bin_offsets"] = [list(b) for b in p.bin_offsets]
            step["tiles"] = sweep_step_json(p)
        out.append(step)
    reason = "" if n >= steps else f"cut to {n} steps: {len(plan.tiles)} tiles x {sc.fdm_layers} views"
    return {"steps": out, "delta": list(d), "max_steps": steps, "reason": reason}


@attrs.frozen(kw_only=True)
class ViewPictures:
    """What the page shows of the CPU reconstruction of one view: the subsampled image in
    memory (grey) and the error heat map (RGB uint8), with the error's top value."""

    view: int
    memory: npt.NDArray[np.uint8]
    error: npt.NDArray[np.uint8]
    #: the heat map's colours from 0 to ``error_max`` (1 x N RGB), drawn as the colour scale
    ramp: npt.NDArray[np.uint8]
    error_max: float
    memory_size: tuple[int, int]
    error_size: tuple[int, int]


def pictures_json(p: ViewPictures) -> JsonDoc:
    """The page's entry of one view's pictures (PNG data URIs: :func:`png_data_uri`)."""
    return {"view": p.view, "memory": png_data_uri(p.memory), "memory_size": list(p.memory_size),
            "error": png_data_uri(p.error), "error_size": list(p.error_size), "error_max": p.error_max,
            "ramp": png_data_uri(np.repeat(p.ramp, 4, axis=0))}


def _pictures_json(pics: Sequence[ViewPictures | JsonDoc]) -> list[JsonDoc]:
    return [p if isinstance(p, dict) else pictures_json(p) for p in pics]


def layout_page_data(plan: RenderPassPlan, layout: SubsampledLayout, views: Sequence[int], summary: str,
                     pictures: Sequence[ViewPictures | JsonDoc] = (), sweep: bool | JsonDoc = True,
                     files: Sequence[tuple[str, str]] = ()) -> JsonDoc:
    """Everything the page script draws, under the names of ``plan --json`` / ``layout --json``.
    ``pictures``: per view, its :class:`ViewPictures` or their entry made already
    (:func:`pictures_json`, by a caller that encodes them while doing other work).
    ``files``: (stem, caption) of the static SVG/PNG pictures written beside the page (linked).
    ``sweep``: plan :func:`offset_sweep` here (True), leave it out (False), or the sweep
    planned already (a caller that plans it while doing other work)."""
    return finish_layout_page_data(layout_page_base(plan, layout, views, summary, files), plan, pictures, sweep)


def layout_page_base(plan: RenderPassPlan, layout: SubsampledLayout, views: Sequence[int], summary: str,
                     files: Sequence[tuple[str, str]] = ()) -> JsonDoc:
    """:func:`layout_page_data` without the sweep and the pictures (a new document; most of the
    work: a caller makes it while the sweep and the pictures are computed elsewhere, then
    :func:`finish_layout_page_data`)."""
    sc = plan.scenario
    return {
        "mode": "layout",
        "title": f"{sc.name}: {sc.gpu.name}, {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s)",
        "summary": summary,
        "shown_views": list(views),
        "plan": plan_json(plan),
        "layout": layout_json(plan, layout, views),
        "density": [density_json(sc, v) for v in views],
        "columns": {"plan": [list(c) for c in PLAN_COLUMNS], "layout": [list(c) for c in LAYOUT_COLUMNS]},
        "fa_colors": FA_COLORS,
        "notes": [],
        "files": [list(f) for f in files],
    }


def finish_layout_page_data(doc: JsonDoc, plan: RenderPassPlan, pictures: Sequence[ViewPictures | JsonDoc] = (),
                            sweep: bool | JsonDoc = True, parts: JsonParts | None = None) -> JsonDoc:
    """``doc`` (of :func:`layout_page_base`, taken over) with the sweep and the pictures, bounded:
    :func:`layout_page_data`'s document.  ``parts``: its values already in JSON
    (:func:`json_parts`), for the bound's size."""
    if isinstance(sweep, dict):
        doc["sweep"] = sweep
    else:
        doc["sweep"] = offset_sweep(plan) if sweep else {"steps": [], "reason": "not planned"}
    doc["pictures"] = _pictures_json(pictures)
    return _bounded(doc, parts)


def sysmem_page_data(plan: SysmemPlan, summary: str) -> JsonDoc:
    sc = plan.scenario
    return {"mode": "sysmem",
            "title": f"{sc.name}: {sc.gpu.name}, {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s)",
            "summary": summary, "plan": plan_json(plan), "layout": sysmem_layout_json(plan),
            "columns": {"plan": [list(c) for c in PLAN_COLUMNS], "layout": [list(c) for c in LAYOUT_COLUMNS]},
            "fa_colors": FA_COLORS, "notes": [], "shown_views": [], "density": [],
            "sweep": {"steps": [], "reason": "a sysmem pass has no bins"}, "pictures": []}


def json_text(value: Any) -> str:
    """``value`` in the page's JSON (compact separators)."""
    return json.dumps(value, separators=(",", ":"))


#: values of a document already in JSON (:func:`json_parts`): key -> (the value, its JSON)
JsonParts = dict[str, tuple[Any, str]]


def json_parts(doc: Mapping[str, Any]) -> JsonParts:
    """The JSON of each value of ``doc`` but its ``notes`` (the bound appends to them), for
    :func:`page_html` and the bound to take instead of encoding them again: ``layout`` makes
    them while the views' children work, so that less is left after the last one ends.  The
    values must not change after this (a value replaced by another object is encoded anew)."""
    return {k: (v, json_text(v)) for k, v in doc.items() if k != "notes"}


def _doc_json(doc: Mapping[str, Any], parts: JsonParts | None = None) -> str:
    """``json.dumps(doc, separators=(",", ":"))``, the same text, each value's JSON taken from
    ``parts`` where it holds that very object (a JSON object is its members' texts joined)."""
    if not parts:
        return json_text(doc)
    members = []
    for k, v in doc.items():
        p = parts.get(k)
        members.append(f"{json_text(k)}:{p[1] if p is not None and p[0] is v else json_text(v)}")
    return "{" + ",".join(members) + "}"


def _size(doc: Mapping[str, Any], parts: JsonParts | None = None) -> int:
    return len(_doc_json(doc, parts))


def _bounded(doc: JsonDoc, parts: JsonParts | None = None) -> JsonDoc:
    """Drop the sweep, then the pictures, while the data passes the soft bound (noted on the page)."""
    size = _size(doc, parts)
    if size > _SOFT_BYTES and doc["sweep"]["steps"]:
        doc["sweep"] = {"steps": [], "reason": f"dropped: the page would pass {_SOFT_BYTES >> 20} MiB"}
        doc["notes"].append("the offset sweep was dropped to keep the page small")
        size = _size(doc, parts)
    if size > _SOFT_BYTES and doc["pictures"]:
        doc["pictures"] = []
        doc["notes"].append("the reconstruction pictures were dropped to keep the page small")
    return doc


def _script_json(doc: Mapping[str, Any], parts: JsonParts | None = None) -> str:
    """JSON safe inside ``<script>``: no ``</`` (or ``<!--``) can end the element early."""
    return _doc_json(doc, parts).replace("<", "\\u003c").replace(">", "\\u003e")


def page_html(data: Mapping[str, Any], parts: JsonParts | None = None) -> str:
    """The self-contained page: styles, data and script inline.  Raises if it passes
    :data:`MAX_PAGE_BYTES` (a bug of the bounds above).  ``parts``: values of ``data`` already
    in JSON (:func:`json_parts`)."""
    title = html.escape(str(data.get("title", "turnip-fdm")))
    links = "".join(f'<li>{html.escape(caption)}: <a href="{html.escape(stem)}.svg">{html.escape(stem)}.svg</a> '
                    f'<a href="{html.escape(stem)}.png">{html.escape(stem)}.png</a></li>'
                    for stem, caption in data.get("files", []))
    footer = (f'<footer><h2>Static pictures (for bug reports)</h2><ul>{links}</ul></footer>\n' if links else "")
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>turnip-fdm: {title}</title>\n<style>\n{_asset('page.css')}</style></head>\n"
            f'<body>\n<header><h1 id="title">{title}</h1><p id="summary"></p></header>\n'
            f'<nav id="tabs" role="tablist"></nav>\n<main id="main"></main>\n{footer}'
            f'<noscript>This page draws with JavaScript; the same numbers are in plan.txt / layout.txt.</noscript>\n'
            f'<script type="application/json" id="turnip-data">{_script_json(data, parts)}</script>\n'
            f"<script>\n{_asset('page.js')}</script>\n</body></html>\n")
    if len(page.encode("utf-8")) > MAX_PAGE_BYTES:
        raise AssertionError(f"the page has {len(page)} bytes, over MAX_PAGE_BYTES (a bug of the page's bounds)")
    return page
