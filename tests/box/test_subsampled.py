"""Subsampled attachments in the box: the shipped scenario agrees with turnip, and planted bugs
of the layout solver (:mod:`layout_solver`) make ``box check`` differ on it, each naming the field
that carries the bug (``turnip_box.subsampled``).  The model is patched in this process;
``turnip_box.check.check`` judges in it (one job: no worker to fork)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

import fdm
import layout_solver.aprons
import layout_solver.metadata
import layout_solver.solver
from fdm.geometry import Rect
from layout_solver.aprons import AprBlit
from layout_solver.metadata import LayerMetadata, MetadataBin
from layout_solver.solver import SubsampledLayout
from turnip_box.check import AGREE, DIFFER, Outcome, check, items_of
from turnip_box.root import Box

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "examples/subsampled_box.toml"
#: the GPUs of the shipped scenario: a730's layout shifts 8 bins and un-subsamples 6 (a750: 3, 8)
GPUS = ["a730", "a750"]
pytestmark = pytest.mark.box




def _run(box: Box) -> list[Outcome]:
    sc = fdm.load_scenario(str(ROOT / SCENARIO))
    return check(box, items_of([(Path(SCENARIO).stem, sc)], GPUS), jobs=1)


def _fields(outcomes: list[Outcome]) -> set[str]:
    return {d.field for o in outcomes for d in o.differences}


def test_shipped_scenario_agrees(box: Box) -> None:
    out = _run(box)
    assert [o.status for o in out] == [AGREE, AGREE], [o.line() for o in out]
    assert all(o.compared > 500 for o in out)


# ---- planted bugs ----------------------------------------------------------------------------

def _lose_one_apron(orig: Callable[..., tuple[AprBlit, ...]]) -> Callable[..., tuple[AprBlit, ...]]:
    def planted(layout: SubsampledLayout, layer: int, **kw: Any) -> tuple[AprBlit, ...]:
        got = orig(layout, layer, **kw)
        return got[:-1]
    return planted


def _metadata_off_by_one_texel(orig: Callable[..., LayerMetadata]) -> Callable[..., LayerMetadata]:
    def planted(layout: SubsampledLayout, layer: int, **kw: Any) -> LayerMetadata:
        m = orig(layout, layer, **kw)
        bins = list(m.bins)
        for j, b in enumerate(bins):
            if b.offset[0] != 0:  # the first bin whose offset is not the identity's
                texel = 1.0 / layout.width0
                bins[j] = MetadataBin(b.scale, (type(b.offset[0])(b.offset[0] + texel), b.offset[1]))
                break
        return attrs.evolve(m, bins=tuple(bins))
    return planted


def _shift_one_tile(orig: Callable[..., SubsampledLayout]) -> Callable[..., SubsampledLayout]:
    def planted(plan: Any, *a: Any, **kw: Any) -> SubsampledLayout:
        lay = orig(plan, *a, **kw)
        tiles = list(lay.tiles)
        for k, t in enumerate(tiles):
            if t.subsampled_views & 1 and t.pos[0] > 0:  # a subsampled interior tile, one step right
                r = t.stored_pos(0)
                moved: Rect = attrs.evolve(r, x=r.x + lay.tile_align[0])
                tiles[k] = attrs.evolve(t, subsampled_pos=(moved, *t.subsampled_pos[1:]))
                break
        return attrs.evolve(lay, tiles=tuple(tiles))
    return planted


PLANTED: dict[str, tuple[str, str, Callable[[Any], Any], str]] = {
    "apron_lost": ("layout_solver.aprons", "tu_calc_subsampled_aprons", _lose_one_apron, "subsampled.apron.count"),
    "metadata_off_by_one_texel": ("layout_solver.metadata", "tu_emit_subsampled_metadata",
                                  _metadata_off_by_one_texel, "subsampled.metadata.bin"),
    "tile_shifted_one_step": ("layout_solver.solver", "tu_calc_subsampled", _shift_one_tile,
                              "subsampled.store_resolve"),
}
MODULES = {"layout_solver.aprons": layout_solver.aprons, "layout_solver.metadata": layout_solver.metadata,
           "layout_solver.solver": layout_solver.solver}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_planted_layout_bug_is_caught(box: Box, monkeypatch: pytest.MonkeyPatch, bug: str) -> None:
    module, name, wrap, field = PLANTED[bug]
    mod = MODULES[module]
    monkeypatch.setattr(mod, name, wrap(getattr(mod, name)))
    out = _run(box)
    assert any(o.status == DIFFER for o in out), [o.line() for o in out]
    assert field in _fields(out), sorted(_fields(out))


def test_skipped_unsubsample_fallback_is_caught(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_non_subsampled`` does nothing: conflicting tiles stay subsampled where the driver
    un-subsampled them (their stores, metadata and aprons differ)."""
    monkeypatch.setattr(layout_solver.solver._Solver, "make_non_subsampled", lambda self, *a: None)
    out = _run(box)
    assert all(o.status == DIFFER for o in out), [o.line() for o in out]
    fields = _fields(out)
    assert {"subsampled.metadata.bin", "subsampled.apron"} <= fields, sorted(fields)
    assert fields & {"subsampled.store_resolve", "subsampled.store_a2d", "subsampled.fast_store"}, sorted(fields)
