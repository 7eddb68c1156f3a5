"""``turnip-fdm diff``: two plans and their subsampled layouts compared tile by tile and field by
field (two scenarios, or one scenario under two driver variants).

What is compared are the documents every other output shows (``plan --json``:
:func:`fdm.report.plan_json`; ``layout --json``: :func:`layout_solver.layout_json.layout_json`),
under their names, so a changed field reads the same here as in the plan table, the JSON and the
layout page.  A tile is matched by its ``pos`` (top-left cell): a tile rendered on one side only
(merging changed, a bin became invisible) is ``only_a`` / ``only_b``.  Per tile the fields are
the plan's tile fields (``extent``, ``slot_mask``, ``views[v].bin``, ``slots[i].scissor``, ...),
its register warnings (``warnings``) and, per view, its subsampled bin (``layout.views[v].*``)
and the aprons written into it (``layout.views[v].aprons``).  Pass fields are everything else
(``tile_size``, ``tile_count``, ``driver.*``, ``layout.views[v].header``, ...).  Comparison is
exact: the floats are the float32 the driver writes (as in ``layout --json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.report import plan_json

from .layout_json import layout_json, sysmem_layout_json
from .solver import tu_calc_subsampled

JsonDoc = dict[str, Any]
TileStatus = Literal["changed", "only_a", "only_b"]

#: pass fields that name a side rather than describe what the driver does
IGNORED_PASS_FIELDS = ("scenario",)
#: longest value shown in the text table (the JSON has every value whole)
MAX_CELL = 48
#: the A column is as wide as its widest value up to this many characters; a longer value runs
#: on into the B column on its own line (B follows it after two spaces) instead of padding
#: every line of the table to its width
A_COLUMN_CAP = 24


@attrs.frozen
class FieldChange:
    field: str
    a: Any
    b: Any


@attrs.frozen(kw_only=True)
class TileDiff:
    pos: tuple[int, int]
    status: TileStatus
    fields: tuple[FieldChange, ...]


@attrs.frozen(kw_only=True)
class PlanDiff:
    a_label: str
    b_label: str
    pass_fields: tuple[FieldChange, ...]
    tiles: tuple[TileDiff, ...]
    tiles_a: int
    tiles_b: int

    @property
    def same(self) -> bool:
        return not self.pass_fields and not self.tiles

    def summary(self) -> str:
        n = {s: sum(1 for t in self.tiles if t.status == s) for s in ("changed", "only_a", "only_b")}
        if self.same:
            return f"no difference: {self.tiles_a} rendered tiles, every field equal"
        return (f"{len(self.pass_fields)} pass field(s) differ; {len(self.tiles)} tile(s) differ: {n['changed']} "
                f"changed, {n['only_a']} only in A, {n['only_b']} only in B (A renders {self.tiles_a} tiles, "
                f"B {self.tiles_b})")


def flatten(doc: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a JSON document as ``path -> value``: tables by key (``a.b``), lists of tables
    by index (``views[0]``); a list of plain values (a rectangle, a pair) is one leaf."""
    out: dict[str, Any] = {}
    if isinstance(doc, Mapping):
        for k, v in doc.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(doc, list) and any(isinstance(x, Mapping) for x in doc):
        for i, v in enumerate(doc):
            out.update(flatten(v, f"{prefix}[{i}]"))
        if not doc:
            out[prefix] = []
    else:
        out[prefix] = doc
    return out


def _changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[FieldChange, ...]:
    keys = list(a) + [k for k in b if k not in a]
    return tuple(FieldChange(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k) or (k in a) != (k in b))


def _documents(plan: RenderPassPlan | SysmemPlan) -> tuple[JsonDoc, JsonDoc]:
    if isinstance(plan, SysmemPlan):
        return plan_json(plan), sysmem_layout_json(plan)
    return plan_json(plan), layout_json(plan, tu_calc_subsampled(plan))


def _split(plan: RenderPassPlan | SysmemPlan) -> tuple[dict[str, Any], dict[tuple[int, int], dict[str, Any]]]:
    """(pass fields, {pos: tile fields}) of one side, flattened."""
    pj, lj = _documents(plan)
    tiles: dict[tuple[int, int], dict[str, Any]] = {}
    index_pos: dict[int, tuple[int, int]] = {}
    for t in pj["tiles"]:
        pos = (t["pos"][0], t["pos"][1])
        index_pos[t["index"]] = pos
        tiles[pos] = flatten(t)
    for w in pj["warnings"]:
        if w.get("pos") is not None:
            f = tiles[(w["pos"][0], w["pos"][1])]
            name = f"warnings.{w['register']}.{w['field']}" + ("" if w["view"] is None else f"[view {w['view']}]")
            f[name] = w["value"]
    pass_doc = {k: v for k, v in pj.items() if k not in ("tiles", "warnings", *IGNORED_PASS_FIELDS)}
    pass_doc["warnings"] = [w for w in pj["warnings"] if w.get("pos") is None]
    layout_pass: JsonDoc = {k: v for k, v in lj.items() if k not in ("views", "scenario", "custom_resolve")}
    for lv in lj["views"]:
        v = lv["view"]
        layout_pass[f"views[{v}]"] = {k: x for k, x in lv.items() if k not in ("bins", "aprons", "view")}
        for b in lv.get("bins", []):
            pos = (b["pos"][0], b["pos"][1])
            if pos in tiles:
                tiles[pos].update(flatten({k: x for k, x in b.items() if k != "pos"}, f"layout.views[{v}]"))
        for a in lv.get("aprons", []):
            pos = (a["dst_pos"][0], a["dst_pos"][1])
            if pos in tiles:
                tiles[pos].setdefault(f"layout.views[{v}].aprons", []).append(
                    [a["dst"], a["src"], a["edge"], a["src_pos"]])
    fields = flatten(pass_doc)
    fields.update(flatten(layout_pass, "layout"))
    return fields, tiles


def diff_plans(a: RenderPassPlan | SysmemPlan, b: RenderPassPlan | SysmemPlan, a_label: str = "A",
               b_label: str = "B") -> PlanDiff:
    """Compare two plans (and their layouts) field by field; tiles in A's walk order, then B's."""
    pa, ta = _split(a)
    pb, tb = _split(b)
    tiles: list[TileDiff] = []
    for pos in list(ta) + [p for p in tb if p not in ta]:
        if pos not in tb:
            tiles.append(TileDiff(pos=pos, status="only_a", fields=_changes(ta[pos], {})))
        elif pos not in ta:
            tiles.append(TileDiff(pos=pos, status="only_b", fields=_changes({}, tb[pos])))
        else:
            ch = _changes(ta[pos], tb[pos])
            if ch:
                tiles.append(TileDiff(pos=pos, status="changed", fields=ch))
    return PlanDiff(a_label=a_label, b_label=b_label, pass_fields=_changes(pa, pb), tiles=tuple(tiles),
                    tiles_a=len(ta), tiles_b=len(tb))


def diff_json(d: PlanDiff) -> JsonDoc:
    """The diff as JSON (schema: docs/diff.md)."""
    def ch(c: FieldChange) -> JsonDoc:
        return {"field": c.field, "a": c.a, "b": c.b}
    return {"a": {"label": d.a_label}, "b": {"label": d.b_label}, "same": d.same, "summary": d.summary(),
            "pass": [ch(c) for c in d.pass_fields],
            "tiles": [{"pos": list(t.pos), "status": t.status, "fields": [ch(c) for c in t.fields]} for t in d.tiles]}


def _cell(v: Any) -> str:
    import json

    s = "-" if v is None else json.dumps(v, separators=(",", ":"))
    return s if len(s) <= MAX_CELL else s[:MAX_CELL - 3] + "..."


def diff_table(d: PlanDiff) -> str:
    """What changed, one line per field: ``pass`` or ``tile x,y`` (its status when on one side
    only), the field's name as in ``plan --json`` / ``layout --json``, A's and B's value."""
    lines = [f"A: {d.a_label}", f"B: {d.b_label}", d.summary()]
    if d.same:
        return "\n".join(lines)
    rows = [["where", "field", "A", "B"]]
    rows += [["pass", c.field, _cell(c.a), _cell(c.b)] for c in d.pass_fields]
    for t in d.tiles:
        side = {"changed": "", "only_a": " (only in A)", "only_b": " (only in B)"}[t.status]
        where = f"tile {t.pos[0]},{t.pos[1]}{side}"
        if t.status != "changed":
            # a tile on one side only: its identity and extent, not every field of it
            keep = [c for c in t.fields if c.field in ("index", "extent", "slot_mask")]
            rows += [[where, c.field, _cell(c.a), _cell(c.b)] for c in keep]
            continue
        rows += [[where, c.field, _cell(c.a), _cell(c.b)] for c in t.fields]
    ww, wf = (max(len(r[i]) for r in rows) for i in (0, 1))
    wa = max(len(r[2]) for r in rows if len(r[2]) <= A_COLUMN_CAP)
    lines.append("")
    for where, field, a, b in rows:
        a_cell = a.ljust(wa) if len(a) <= wa else a + " "
        lines.append(f"{where.ljust(ww)} {field.ljust(wf)} {a_cell} {b}".rstrip())
    return "\n".join(lines)


def diff_page_data(a: RenderPassPlan | SysmemPlan, b: RenderPassPlan | SysmemPlan, d: PlanDiff) -> JsonDoc:
    """The data of the side-by-side page (layout_solver.page): both sides' documents (no sweep,
    no pictures) and the diff."""
    from .page import layout_page_data, sysmem_page_data

    def side(p: RenderPassPlan | SysmemPlan, label: str) -> JsonDoc:
        if isinstance(p, SysmemPlan):
            return sysmem_page_data(p, label)
        views = list(range(p.scenario.fdm_layers))
        return layout_page_data(p, tu_calc_subsampled(p), views, label, sweep=False)

    sa, sb = side(a, d.a_label), side(b, d.b_label)
    return {"mode": "diff", "title": f"diff: {d.a_label} vs {d.b_label}", "a": sa, "b": sb, "diff": diff_json(d),
            "columns": sa["columns"], "fa_colors": sa["fa_colors"]}
