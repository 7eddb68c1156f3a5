"""bench/mipmap_occupancy.py: the CUDA occupancy rules it applies (Hopper) and the pipelines it asks about."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def mo(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("mipmap_occupancy")


# (registers, shared bytes, invocations) -> resident workgroups per SM, as NVIDIA's occupancy
# calculator gives them for compute capability 9.0: 256 invocations are 8 warps; registers are
# allocated per warp in units of 256 (35 -> 40 a lane: 1280 a warp, 51 warps' worth -> 6 groups)
@pytest.mark.parametrize("regs,shared,local,groups", [
    (32, 1028, 256, 8),    # 8 x 8 warps: the warp limit
    (35, 1028, 256, 6),
    (48, 6148, 256, 5),    # 1536 a warp: 42 warps' worth
    (64, 4100, 256, 4),
    (76, 4100, 256, 3),    # 80 a lane: 2560 a warp, 25 warps' worth
    (26, 1160, 128, 16),   # 4 warps a group: 64 / 4
    (16, 40 * 1024, 256, 5),   # shared: 228 KiB / (41 KiB rounded) = 5
])
def test_occupancy_follows_the_cuda_rules(mo: ModuleType, regs: int, shared: int, local: int, groups: int) -> None:
    occ = mo.occupancy(regs, shared, local)
    assert occ["groups"] == groups
    assert occ["warps"] == groups * (local // 32)
    assert occ["occupancy_pct"] == round(100 * occ["warps"] / 64)


def test_cells_cover_every_pipeline_the_table_binds(mo: ModuleType) -> None:
    """Every dispatch of the tiled plan and of both SPD variants at the table's sizes, and level 1
    alone, for which bench/mipmap_breakdown.py times the fast M = 1 kernel."""
    uses = mo.cell_keys("r32f")
    assert ("fast", 6, False, 0, False) in uses          # 8192² and 4096² first dispatch
    assert ("spd", 6, True, 6, True) in uses             # 8192²'s small hand-off dispatch
    assert ("fast", 1, False, 0, False) in uses          # level 1 alone
    assert ("general", 2, False, 0, False) in uses       # 4095² tiled
    assert ("spd", 4, False, 6, False) in uses           # 1080p spd-split's second dispatch
    assert any("8192x8192 tiled #1" in u for u in uses[("spd", 6, True, 6, True)])
    assert not any("8192x8192 spd" in u for us in uses.values() for u in us)   # over SPD's limit


@pytest.mark.parametrize("args,field", [
    (["--formats", "rgba8,bogus"], "format"),
    (["--breakdown", "{missing}"], "--breakdown"),
    (["--breakdown", "{not_json}"], "--breakdown"),
    (["--breakdown", "{wrong_json}"], "--breakdown"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_device(mo: ModuleType, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            args: list[str], field: str) -> None:
    (tmp_path / "not.json").write_text("# not json\n")
    (tmp_path / "wrong.json").write_text('[{"cells": []}]\n')
    paths = {"missing": str(tmp_path / "none.json"), "not_json": str(tmp_path / "not.json"),
             "wrong_json": str(tmp_path / "wrong.json")}
    out = tmp_path / "o.md"
    assert mo.main([a.format(**paths) for a in args] + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mipmap_occupancy: error: {field}: ")
    assert not out.exists() and not out.with_suffix(".json").exists()


def test_the_committed_breakdown_reads(mo: ModuleType) -> None:
    measured, bandwidth = mo.read_breakdown(BENCH / "results" / "h100.breakdown.json")
    assert bandwidth > 1e12 and measured[("srgba8", 8192, 8192)] > measured[("rgba8", 8192, 8192)] > 0
