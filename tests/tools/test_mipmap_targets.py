"""bench/mipmap_bench.py's issue-22 verdicts: each cell against its target and the two ceilings
of bench/mipmap_breakdown.py (the mix kernel alone; the mix plus one launch)."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

Cell = dict[str, Any]


@pytest.fixture(scope="module")
def mb(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("mipmap_bench")


def _cell(size: tuple[int, int], fmt: str, alg: str, us: float, floor_us: float) -> Cell:
    return {"size": list(size), "format": fmt, "algorithm": alg, "median_us": us, "floor_us": floor_us,
            "of_floor": floor_us / us, "max_err": 0}


def _verdicts(mb: ModuleType, cells: list[Cell], mix_us: dict[str, float], launch: float = 2.5) -> dict[str, str]:
    ceil = {"launch_us": launch, "cells": [{"size": c["size"], "format": c["format"], "algorithm": "tiled",
                                            "mix_us": mix_us[c["format"]]} for c in cells]}
    rows = [r for r in mb.target_lines(cells, ceil) if r.startswith("| 4096x4096")]
    return {r.split("|")[2].strip(): r.split("|")[-2].strip() for r in rows}


def test_each_verdict_where_its_numbers_put_it(mb: ModuleType) -> None:
    # 4096²: target 85%; floor 30 µs. r32f met (34 µs = 88%); rgba8 under the mix alone (mix 36 µs:
    # 83%); srgba8 between (mix 34: 88%, + 2.5: 82%); rgba16f short of both (mix 31: 97%)
    cells = [_cell((4096, 4096), "r32f", "tiled", 34.0, 30.0), _cell((4096, 4096), "rgba8", "tiled", 40.0, 30.0),
             _cell((4096, 4096), "srgba8", "tiled", 40.0, 30.0), _cell((4096, 4096), "rgba16f", "tiled", 40.0, 30.0)]
    v = _verdicts(mb, cells, {"r32f": 33.0, "rgba8": 36.0, "srgba8": 34.0, "rgba16f": 31.0})
    assert v["r32f"] == "met"
    assert v["rgba8"] == "out of reach"
    # the margin: a single pass must finish within floor / target - mix = 35.29 - 34 µs
    assert v["srgba8"].startswith("out of reach of two dispatches") and "under 1.3 µs" in v["srgba8"]
    assert v["rgba16f"] == "short"


def test_the_best_algorithm_of_a_cell_is_judged(mb: ModuleType) -> None:
    cells = [_cell((4096, 4096), "r32f", "tiled", 40.0, 30.0), _cell((4096, 4096), "r32f", "spd-split", 34.0, 30.0)]
    rows = [r for r in mb.target_lines(cells) if r.startswith("| 4096x4096 | r32f")]
    assert len(rows) == 1 and "| spd-split |" in rows[0] and rows[0].endswith("| met |")


def test_retarget_rewrites_only_the_targets_section(mb: ModuleType, tmp_path: Path) -> None:
    cells = [_cell((4096, 4096), "r32f", "tiled", 40.0, 30.0)]
    md = tmp_path / "run.md"
    md.write_text("# header\n\n| the run's table |\n\n## Targets (issue 22), old\n\n| stale |\n")
    md.with_suffix(".json").write_text(json.dumps(cells))
    ceil = tmp_path / "bd.json"
    ceil.write_text(json.dumps({"launch_us": 2.5, "cells": [{"size": [4096, 4096], "format": "r32f",
                                                              "algorithm": "tiled", "mix_us": 33.0}]}))
    assert mb.retarget(md, str(ceil)) == 0
    text = md.read_text()
    assert text.startswith("# header\n\n| the run's table |\n\n## Targets (issue 22), figures from this run")
    assert "| stale |" not in text and "| 4096x4096 | r32f | tiled | 40.0 | 75.0% | 85% |" in text


def test_a_short_cell_is_called_instruction_bound_from_the_occupancy_run(mb: ModuleType) -> None:
    """bench/mipmap_occupancy.py's level-1 issue time: a short cell whose level-1 pass issues for at
    least ISSUE_BOUND of its floor time says so; one under it (or without the run) does not."""
    cells = [_cell((4096, 4096), "srgba8", "tiled", 60.0, 30.0), _cell((4096, 4096), "rgba16f", "tiled", 40.0, 30.0),
             _cell((4096, 4096), "r32f", "tiled", 40.0, 30.0)]
    ceil = {"launch_us": 2.5, "cells": [{"size": c["size"], "format": c["format"], "algorithm": "tiled",
                                         "mix_us": 30.5} for c in cells]}
    occ = {"level1": [{"format": "srgba8", "size": [4096, 4096], "instructions": 224, "issue_us": 28.1,
                       "floor_us": 29.3},
                      {"format": "rgba8", "size": [4096, 4096], "instructions": 96, "issue_us": 12.0, "floor_us": 29.3},
                      {"format": "rgba16f", "size": [4096, 4096], "instructions": 160, "issue_us": 20.1,
                       "floor_us": 58.6}]}

    def verdicts(occupancy: dict[str, Any] | None) -> dict[str, str]:
        rows = [r for r in mb.target_lines(cells, ceil, occupancy) if r.startswith("| 4096x4096")]
        return {r.split("|")[2].strip(): r.split("|")[-2].strip() for r in rows}

    v = verdicts(occ)
    assert v["srgba8"].startswith("short: the exact sRGB conversion")
    assert "instruction-bound: level 1 issues 224 instructions a texel (RGBA8 96), 96% of its floor" in v["srgba8"]
    assert v["rgba16f"] == "short"        # issue 34% of its floor: not the reason
    assert v["r32f"] == "short"           # no level-1 figures for r32f
    assert "instruction-bound" not in verdicts(None)["srgba8"]


@pytest.mark.parametrize("option", ["--ceilings", "--occupancy"])
def test_a_bad_json_option_is_refused_before_anything(mb: ModuleType, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str], option: str) -> None:
    """A file that is not JSON ends in one line and exit 2, before any device is opened (a run
    reads it at its end: found there, it would cost the whole run); --retarget leaves the results
    file as it was."""
    bad = tmp_path / "bad.json"
    bad.write_text("# not json\n")
    out = tmp_path / "o.md"
    assert mb.main([option, str(bad), "--device", "no such device", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mipmap_bench: error: {option}: cannot read")
    assert not out.exists()
    md = tmp_path / "run.md"
    md.write_text("# header\n")
    md.with_suffix(".json").write_text(json.dumps([_cell((4096, 4096), "r32f", "tiled", 40.0, 30.0)]))
    assert mb.main(["--retarget", str(md), option, str(bad)]) == 2
    assert md.read_text() == "# header\n"
    capsys.readouterr()
    assert mb.main(["--retarget", str(tmp_path / "none.md")]) == 2
    assert capsys.readouterr().err.startswith("mipmap_bench: error: --retarget: ")


@pytest.mark.parametrize("text", ["x1", "-3", "1.5", ""])
def test_a_bad_persistent_count_is_refused_before_the_device(mb: ModuleType, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str], text: str) -> None:
    """``--persistent``: auto, or a whole number of workgroups; anything else is one line and
    exit 2 before a device is opened (the device named here does not exist: reaching it would
    be another error)."""
    out = tmp_path / "o.md"
    assert mb.main(["--persistent", text, "--device", "no such device", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mipmap_bench: error: --persistent: must be auto or a whole number of workgroups >= 0, "
                   f"got {text!r}"]
    assert not out.exists()
    assert mb.parse_persistent("auto") is None and mb.parse_persistent("0") == 0
    assert mb.parse_persistent("528") == 528


def test_a_single_pass_is_out_of_reach_where_its_least_hand_off_is(mb: ModuleType) -> None:
    """With the breakdown's mix + hand-off (shaders/mixsync.comp): a cell out of reach of two
    dispatches is out of reach where the mix plus the least hand-off is under the target too,
    and keeps its margin (with the hand-off's own cost) where it is not."""
    # 4096²: target 85%; floor 30 µs, so 35.29 µs; mix 34 (88%), + 2.5 (82%)
    cells = [_cell((4096, 4096), "r32f", "tiled", 40.0, 30.0), _cell((4096, 4096), "rgba8", "tiled", 40.0, 30.0)]
    ceil = {"launch_us": 2.5, "cells": [
        {"size": [4096, 4096], "format": "r32f", "algorithm": "tiled", "mix_us": 34.0, "mix_handoff_us": 35.8},
        {"size": [4096, 4096], "format": "rgba8", "algorithm": "tiled", "mix_us": 34.0, "mix_handoff_us": 34.6}]}
    rows = [r for r in mb.target_lines(cells, ceil) if r.startswith("| 4096x4096")]
    v = {r.split("|")[2].strip(): r.split("|")[-2].strip() for r in rows}
    assert v["r32f"] == ("out of reach: two dispatches at most 82.2% (mix + launch), a single pass at most 83.8% "
                         "with no level computed after its hand-off (mix + its least hand-off, 35.8 µs: 1.8 µs on "
                         "the mix where the target leaves 1.3)")
    assert v["rgba8"] == ("out of reach of two dispatches; a single pass needs its levels 7.. in under 1.3 µs "
                          "more than the mix (its least hand-off alone: 0.6 µs)")
