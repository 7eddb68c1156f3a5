"""The driver findings of docs/findings.md: every docs/findings/*.toml plans, and its [expect] holds.

Each finding file is a scenario (``fdm.scenario.parse_scenario`` takes the whole TOML document;
the model ignores its top-level ``[expect]`` table) plus the numbers the finding claims.  A
finding file without ``[expect]`` fails.  Each ``[expect]`` key is a *path* into the document

    {"plan":    fdm.report.plan_json(plan),
     "tile":    {"x,y": the TilePlan of the rendered tile whose pos is (x, y), every field},
     "derived": named plan quantities (below),
     "layout":  named subsampled-layout quantities of view 0 (below)}

Paths: names joined by dots, and brackets.  ``[N]`` indexes a list; ``[*]`` maps the rest of the
path over every element of a list (or every value of a table); any other ``[K]`` looks up the
table key ``K`` (``tile[1,1]``, ``layout.tile[0,2]``).  A path may end in ``|len`` (number of
elements), ``|distinct`` (the distinct values, first-seen order) or ``|sum``.  Keys with dots
must be quoted in TOML: ``"tile[1,1].views[0].offset" = [96, 80]``.

Values: records become tables of their fields, a ``Rect`` ``[x, y, w, h]``, tuples lists.  A
float matches when expected and actual round to the same float32 (the model's floats are
float32); an inline table ``{approx = X, tol = T}`` matches ``|actual - X| <= T``.

``derived``:
  ``nonempty_scissor_tiles``  ``[x, y]`` of the tiles whose slot-0 hardware scissor is not empty
                              (TL <= BR on both axes), sorted by row then column;
  ``texel[v]``                texel (0, 0) of density layer ``v``: ``stored`` (the stored
                              components: bytes or float32), ``density`` (unpacked float32),
                              ``raw_frag_area`` (``fdm.density.raw_frag_area``);
  ``isotropic_sfloat_scan``   ``[first_k, last_k, [fw, fh]]`` runs of ``tu_calc_frag_area`` for the
                              isotropic R32G32_SFLOAT densities ``k/1000``, k = 1..1000, with the
                              scenario's tile size, view count and offsets;
  ``gmem_cache``              the GPU's GMEM-mode cache layout (``fd6_calc_gmem_cache_offsets``):
                              ``usable``, ``color_ccu_offset``, ``depth_ccu_offset``,
                              ``depth_cache`` ([start, end)), ``budget_avoid_ccu``, ``budget_full``.
``layout`` (``layout_solver.tu_calc_subsampled`` of the plan; aprons and reconstruction of view 0):
  ``width0``, ``height0``, ``solved``, ``log`` (solver events), ``shifts``, ``unsubsample_steps``,
  ``border_tiles`` (counts), ``tile["x,y"]`` (SubsampledTile whose top-left cell ``pos`` is x, y:
  a tile is named by its first cell everywhere),
  ``aprons.newest`` / ``aprons.older`` (the blits of each revision),
  ``apron_outside_image.newest`` / ``.older`` (those whose destination passes width0 or height0),
  ``detached_edges`` (``detached_image_edges``), ``inconsistent_adjacent_tiles``,
  ``solver_bin_offsets`` (the b_o per view the solver used, or ``"null"``), ``emit_bin_offset``
  (the b_o of view 0 that ``tu_emit_subsampled`` hands the metadata and aprons),
  ``custom_resolve_mismatches`` (slots of a custom-resolve subpass whose viewport stays in
  framebuffer space while the scissor moves: ``cell``, ``view``, ``shift``),
  ``fast_store_beyond_render_area`` (view-0 fast stores whose resolve scissor passes the
  transformed render area: ``[cell, scissor x1 y1 x2 y2]``),
  ``reconstruction.apron_stats`` and ``reconstruction.FILTER.ADDRESSING`` (``compare`` of the CPU
  reconstruction: ``samples``, ``violations``, ``max_error``, ``worst``, ``max_excess``,
  ``worst_excess``, ... plus ``violations_within_1px.SIDE``: the violations among the points
  within 1 px of the framebuffer's ``left``/``top``/``right``/``bottom`` edge, or ``any`` of them).
Only what a finding asks for is computed.  ``raises = "FUNCTION"`` (alone in ``[expect]``): planning
the scenario raises ``DriverAssertion`` naming that driver function (turnip asserts or hits
undefined behaviour there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from fdm.density import DensityMap, encode_layer, raw_frag_area
from fdm.geometry import Rect
from fdm.gpu import fd6_calc_gmem_cache_offsets, gmem_budget
from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.report import plan_json
from fdm.scenario import parse_scenario
from fdm.turnip import tu_calc_frag_area
from layout_solver import tu_calc_subsampled
from layout_solver.aprons import tu_calc_subsampled_aprons
from layout_solver.custom_resolve import custom_resolve_plan, viewport_scissor_mismatches
from layout_solver.reconstruct import (
    compare,
    detached_image_edges,
    inconsistent_adjacent_tiles,
    reconstruct_view,
    sample_points,
)
from layout_solver.store_path import store_path
from turnip_base.errors import DriverAssertion

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

FINDINGS_DIR = Path(__file__).resolve().parents[2] / "docs" / "findings"
FINDINGS = sorted(FINDINGS_DIR.glob("*.toml"))


# -- the document -------------------------------------------------------------------------------

class Lazy(Mapping[str, Any]):
    """A table whose values are computed on first use."""

    def __init__(self, thunks: dict[str, Callable[[], Any]]):
        self._thunks = thunks
        self._values: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._thunks[key]()
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._thunks)

    def __len__(self) -> int:
        return len(self._thunks)


def jsonable(x: Any) -> Any:
    if isinstance(x, Rect):
        return list(x.as_tuple())
    if attrs.has(type(x)):
        return {f.name: jsonable(getattr(x, f.name)) for f in attrs.fields(type(x))}
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _key(p: tuple[int, int]) -> str:
    return f"{p[0]},{p[1]}"


def derived_doc(plan: RenderPassPlan) -> Lazy:
    sc = plan.scenario

    def nonempty_scissor_tiles() -> list[list[int]]:
        out = [list(t.pos) for t in plan.tiles
               if t.slots[0].scissor[0][0] <= t.slots[0].scissor[1][0]
               and t.slots[0].scissor[0][1] <= t.slots[0].scissor[1][1]]
        return sorted(out, key=lambda p: (p[1], p[0]))

    def texel() -> list[dict[str, Any]]:
        d = sc.density
        return [{"stored": jsonable(d.layers[v][0, 0]), "density": jsonable(d.density(v, 0, 0)),
                 "raw_frag_area": jsonable(raw_frag_area(d, v, (0, 0)))} for v in range(len(d.layers))]

    def isotropic_sfloat_scan() -> list[list[Any]]:
        ks = np.arange(1, 1001)
        layer = encode_layer(np.stack([ks / 1000.0, ks / 1000.0], axis=-1)[None, :, :], "R32G32_SFLOAT")
        dmap = DensityMap(format="R32G32_SFLOAT", layers=(layer,))
        runs: list[list[Any]] = []
        for i, k in enumerate(ks):
            fa = tu_calc_frag_area(raw_frag_area(dmap, 0, (i, 0)), plan.tiling.tile_size,
                                   has_fdm_offsets=sc.fdm_offsets is not None, num_views=sc.views)
            fa_j = jsonable(fa)
            if runs and runs[-1][2] == fa_j:
                runs[-1][1] = int(k)
            else:
                runs.append([int(k), int(k), fa_j])
        return runs

    def gmem_cache() -> dict[str, Any]:
        cfg = fd6_calc_gmem_cache_offsets(sc.gpu)
        return {"usable": cfg.usable, "color_ccu_offset": cfg.color_ccu_offset,
                "depth_ccu_offset": cfg.depth_ccu_offset, "depth_cache": list(cfg.depth_cache),
                "budget_avoid_ccu": gmem_budget(sc.gpu), "budget_full": gmem_budget(sc.gpu, avoid_ccu=False)}

    return Lazy({"nonempty_scissor_tiles": nonempty_scissor_tiles, "texel": texel,
                 "isotropic_sfloat_scan": isotropic_sfloat_scan, "gmem_cache": gmem_cache})


FB_EDGE_BAND = 1.0


def reconstruction_doc(plan: RenderPassPlan, layout: Any) -> Lazy:
    rec_cache: list[Any] = []

    def rec() -> Any:
        if not rec_cache:
            rec_cache.append(reconstruct_view(plan, layout, 0))
        return rec_cache[0]

    def report(filter: str, addressing: str) -> dict[str, Any]:
        r = rec()
        out = jsonable(compare(r, filter, addressing))
        out.pop("aprons")
        W, H = plan.scenario.framebuffer
        xs, ys = sample_points(plan, 0, band=max(4, *r.frag_max))
        sides = {"left": xs < FB_EDGE_BAND, "top": ys < FB_EDGE_BAND,
                 "right": xs > W - FB_EDGE_BAND, "bottom": ys > H - FB_EDGE_BAND}
        sides["any"] = sides["left"] | sides["top"] | sides["right"] | sides["bottom"]
        out["violations_within_1px"] = {
            side: compare(r, filter, addressing, points=(xs[m], ys[m])).violations if m.any() else 0
            for side, m in sides.items()}
        return out

    def modes(filter: str) -> Lazy:
        return Lazy({a: (lambda a=a: report(filter, a)) for a in ("clamp_to_edge", "clamp_to_border")})

    return Lazy({"apron_stats": lambda: jsonable(rec().apron_stats),
                 "nearest": lambda: modes("nearest"), "linear": lambda: modes("linear")})


def fast_store_beyond_render_area(L: Any) -> list[list[Any]]:
    """``[cell, [x1, y1, x2, y2]]`` of view-0 tiles that take the fast store and whose resolve
    scissor reaches past the render area transformed into subsampled space (clipped to the tile's
    rectangle): pixels stored although no framebuffer pixel of the render area maps there."""
    out: list[list[Any]] = []
    for t in L.plan.tiles:
        s = store_path(L, t)[0]
        if not s.fast_store or s.subsampled_render_area is None:
            continue
        rx, ry, rw, rh = s.subsampled_render_area
        r = L.tile(*t.cell).subsampled_pos[0]
        x1, y1 = max(rx, r.x), max(ry, r.y)
        x2, y2 = min(rx + rw, r.x + r.w) - 1, min(ry + rh, r.y + r.h) - 1
        (sx1, sy1), (sx2, sy2) = s.resolve_scissor
        if sx1 < x1 or sy1 < y1 or sx2 > x2 or sy2 > y2:
            out.append([list(t.cell), [sx1, sy1, sx2, sy2]])
    return out


def layout_doc(plan: RenderPassPlan) -> Lazy:
    L = tu_calc_subsampled(plan)

    def aprons(revision: str) -> list[Any]:
        return list(tu_calc_subsampled_aprons(L, 0, revision=revision))

    def outside(revision: str) -> list[Any]:
        return jsonable([a for a in aprons(revision)
                         if a.dst.x + a.dst.w > L.width0 or a.dst.y + a.dst.h > L.height0])

    revisions = ("newest", "older")
    return Lazy({
        "width0": lambda: L.width0, "height0": lambda: L.height0, "solved": lambda: L.solved,
        "log": lambda: jsonable(L.log),
        "shifts": lambda: sum(e.kind == "shift" for e in L.log),
        "unsubsample_steps": lambda: sum(e.kind == "unsubsample" for e in L.log),
        "border_tiles": lambda: sum(bool(t.subsampled_border) for t in L.tiles),
        "tile": lambda: {_key(t.pos): jsonable(t) for t in L.tiles},
        "aprons": lambda: Lazy({r: (lambda r=r: jsonable(aprons(r))) for r in revisions}),
        "apron_outside_image": lambda: Lazy({r: (lambda r=r: outside(r)) for r in revisions}),
        "detached_edges": lambda: jsonable(detached_image_edges(L, 0)),
        "inconsistent_adjacent_tiles": lambda: jsonable(inconsistent_adjacent_tiles(L, 0)),
        "reconstruction": lambda: reconstruction_doc(plan, L),
        "solver_bin_offsets": lambda: jsonable(L.bin_offsets) if L.bin_offsets is not None else "null",
        "custom_resolve_mismatches": lambda: [
            {"cell": list(m.cell), "view": m.view, "shift": list(m.shift)}
            for m in viewport_scissor_mismatches(custom_resolve_plan(L))],
        "fast_store_beyond_render_area": lambda: fast_store_beyond_render_area(L),
        "emit_bin_offset": lambda: jsonable(L.emit_bin_offset(0)),
    })


def document(plan: RenderPassPlan) -> Lazy:
    return Lazy({"plan": lambda: plan_json(plan),
                 "tile": lambda: {_key(t.pos): jsonable(t) for t in plan.tiles},
                 "derived": lambda: derived_doc(plan),
                 "layout": lambda: layout_doc(plan)})


# -- paths and matching -------------------------------------------------------------------------

_STEP = re.compile(r"\.?([A-Za-z_]\w*)|\[([^\]]*)\]")
REDUCERS: dict[str, Callable[[Any], Any]] = {
    "len": len,
    "sum": sum,
    "distinct": lambda xs: [x for i, x in enumerate(xs) if x not in xs[:i]],
}


def parse_path(key: str) -> tuple[list[str | int], str | None]:
    path, _, reducer = key.partition("|")
    if reducer and reducer not in REDUCERS:
        raise KeyError(f"unknown reducer |{reducer}; known: {', '.join(REDUCERS)}")
    steps: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if not m or (pos == 0 and path.startswith(".")):
            raise KeyError(f"cannot parse {key!r} at {path[pos:]!r}")
        if m.group(1) is not None:
            steps.append(m.group(1))
        else:
            k = m.group(2).replace(" ", "")
            steps.append(int(k) if re.fullmatch(r"-?\d+", k) else k)
        pos = m.end()
    return steps, reducer or None


def walk(node: Any, steps: list[str | int], done: str = "") -> Any:
    if not steps:
        return node
    step, rest = steps[0], steps[1:]
    if step == "*":
        items = list(node.values()) if isinstance(node, Mapping) else list(node)
        return [walk(x, rest, done + "[*]") for x in items]
    try:
        if isinstance(step, int) and isinstance(node, list):
            child = node[step]
        else:
            child = node[str(step)]
    except (KeyError, IndexError, TypeError):
        known = f"; keys: {', '.join(list(node)[:40])}" if isinstance(node, Mapping) else ""
        raise KeyError(f"{done or '<document>'} has no {step!r}{known}") from None
    return walk(child, rest, f"{done}[{step}]" if isinstance(step, int) else f"{done}.{step}")


def evaluate(doc: Mapping[str, Any], key: str) -> Any:
    steps, reducer = parse_path(key)
    value = walk(doc, steps)
    return REDUCERS[reducer](value) if reducer else value


def matches(got: Any, want: Any) -> bool:
    if isinstance(want, Mapping) and set(want) == {"approx", "tol"}:
        return isinstance(got, (int, float)) and not isinstance(got, bool) and abs(got - want["approx"]) <= want["tol"]
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(want, bool) and isinstance(got, bool) and got == want
    if isinstance(want, float):
        return isinstance(got, (int, float)) and np.float32(got) == np.float32(want)
    if isinstance(want, int):
        return isinstance(got, (int, float)) and got == want
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(matches, got, want))
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and set(got) == set(want) and all(matches(got[k], want[k]) for k in want)
    return bool(got == want)


# -- the test -----------------------------------------------------------------------------------

#: findings whose CPU reconstruction takes seconds: CI and ./dev test only
SLOW_FINDINGS = {"j_slop_without_offsets"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW_FINDINGS else p
                                  for p in FINDINGS], ids=[p.stem for p in FINDINGS])
def test_finding(path: Path):
    assert len(FINDINGS) >= 6
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    expect = data.get("expect")
    assert isinstance(expect, dict) and expect, f"{path.name} has no [expect] table"
    sc = parse_scenario(data, base_dir=str(path.parent))
    if "raises" in expect:
        # a finding on which turnip asserts (or hits undefined behaviour): [expect] raises names
        # the driver function, and nothing else is expected
        assert set(expect) == {"raises"}, f"{path.name}: 'raises' stands alone in [expect]"
        with pytest.raises(DriverAssertion) as e:
            plan_render_pass(sc)
        assert e.value.field == expect["raises"], str(e.value)
        return
    plan = plan_render_pass(sc)
    # a finding about a pass turnip renders in sysmem says so; every other one renders tiles
    assert plan.tiles or expect.get("plan.render_mode") == "sysmem"
    doc = document(plan)
    failures = []
    for key, want in expect.items():
        try:
            got = evaluate(doc, key)
        except KeyError as e:
            failures.append(f"{key}: {e.args[0]}")
            continue
        if not matches(got, want):
            failures.append(f"{key}: expected {want!r}, got {str(got)[:400]}")
    assert not failures, f"{path.name}:\n  " + "\n  ".join(failures)


def test_viewport_scissor_of_scaled_viewport():
    """Kept from the earlier findings module: ``tu6_emit_viewport_scissor`` cases that no valid
    scenario reaches (a zero-width viewport)."""
    from fdm.turnip import tu6_emit_viewport_scissor
    f = np.float32
    assert tu6_emit_viewport_scissor((f(0), f(0), f(500), f(300))) == ((0, 0), (499, 299))
    # fractional start truncates, end rounds up; negative height flips y
    assert tu6_emit_viewport_scissor((f(76.5), f(8), f(10.25), f(-4))) == ((76, 4), (86, 7))
    # zero width grows to one pixel; negative start clamps to 0
    assert tu6_emit_viewport_scissor((f(-3), f(5), f(0), f(1))) == ((0, 5), (0, 5))
