"""The model against Mesa's real turnip on a8xx (a810, a830): shipped scenarios agree field by field
through the a8xx register table, and model bugs planted where a8xx differs from a7xx (the
FORCE_LRZ_DIS bit, the 14-bit FOVEAT offsets) make named scenarios differ.  Needs the box."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fdm
import fdm.plan
import fdm.tile_select
import fdm.turnip
from turnip_box.check import AGREE, DIFFER, Outcome, check, items_of
from turnip_box.root import Box

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.box

#: shipped scenarios that reach bin scaling, FDM offsets, fast and scaled stores and LRZ on a8xx
SCENARIOS = ["fdm/data/demo.toml", "examples/a8xx.toml", "docs/findings/b_a810_unaligned_offset.toml",
             "docs/findings/c_fast_store_scaled.toml", "docs/findings/l_a8xx_avoid_ccu_over_depth_cache.toml",
             "docs/findings/o_foveat_offset_overflow.toml"]




def _run(box: Box, names: list[str], gpus: list[str]) -> list[Outcome]:
    return check(box, items_of([(Path(n).stem, fdm.load_scenario(str(ROOT / n))) for n in names], gpus))


def _lines(out: list[Outcome]) -> list[str]:
    return [d.line() for o in out for d in o.differences] + [f"{o.item.name} [{o.item.gpu}]: {o.status}: {o.why}"
                                                             for o in out if o.status not in (AGREE, DIFFER)]


def test_shipped_scenarios_agree_on_a8xx(box: Box) -> None:
    out = _run(box, SCENARIOS, ["a810", "a830"])
    assert all(o.status == AGREE for o in out), _lines(out)
    bins = [b for o in out if o.driver is not None for b in o.driver.bins]
    # the a8xx registers were read, not defaulted: bins scaled with offsets, LRZ forced off,
    # both store paths, the FS constants patched
    assert any(b.foveat and b.foveat["binscaleen"] and any(any(xy) for xy in b.foveat["offsets"]) for b in bins)
    assert any(b.force_lrz_dis for b in bins) and any(not b.force_lrz_dis for b in bins)
    assert any(s[0] == "a2d" for b in bins for s in b.stores) and any(b.fast_store_predicate for b in bins)
    assert all(b.fs_params is not None for b in bins)
    assert sum(o.compared for o in out) > 1000


def _force_lrz_dis_a7xx_only(tile: Any, st: Any) -> bool:
    return bool(st.chip == 7 and fdm.tile_select.disable_lrz(tile, st))


def _neg_hw_offset(orig: Callable[..., Any]) -> Callable[..., Any]:
    def planted(cbo: tuple[int, int], fa: tuple[int, int]) -> tuple[int, int]:
        x, y = orig(cbo, fa)
        return (-x, -y) if (x, y) != (0, 0) else (x, y)
    return planted


TEETH: list[tuple[str, Callable[[pytest.MonkeyPatch], None], str, str, str]] = [
    # GRAS_SC_BIN_CNTL.FORCE_LRZ_DIS is bit 15 of 0x8231 on a8xx (bit 27 of 0x80a1 on a7xx)
    ("FORCE_LRZ_DIS on a7xx only", lambda mp: mp.setattr(fdm.plan, "force_lrz_dis", _force_lrz_dis_a7xx_only),
     "fdm/data/demo.toml", "a830", "force_lrz_dis"),
    # o' in GRAS_BIN_FOVEAT_XY[i] (0x8220) and the three arrays written with it
    ("the sign of o'", lambda mp: mp.setattr(fdm.tile_select, "hw_bin_offset",
                                             _neg_hw_offset(fdm.turnip.hw_bin_offset)),
     "fdm/data/demo.toml", "a810", "foveat.hw_offset"),
]


@pytest.mark.parametrize("label,plant,name,gpu,field", TEETH, ids=[t[0] for t in TEETH])
def test_planted_model_bug_is_caught_on_a8xx(box: Box, monkeypatch: pytest.MonkeyPatch, label: str,
                                             plant: Callable[[pytest.MonkeyPatch], None], name: str, gpu: str,
                                             field: str) -> None:
    clean = _run(box, [name], [gpu])
    assert all(o.status == AGREE for o in clean), _lines(clean)
    plant(monkeypatch)
    (o,) = _run(box, [name], [gpu])
    assert o.status == DIFFER, f"{label}: the box did not notice"
    assert field in {d.field for d in o.differences}, _lines([o])
