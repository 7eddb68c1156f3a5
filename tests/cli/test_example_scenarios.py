"""``examples/``: every scenario has a one-line purpose, is listed in examples/README.md with
that purpose, plans and checks cleanly, and the numbers its comments quote are the model's; the
``Try:`` commands of every file run (slow: the layouts draw pictures)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.scenario import load_scenario
from turnip_fdm.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.toml"))
NAMES = [p.name for p in EXAMPLES]


def purpose(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ") and len(first) > 20, f"{path.name}: the first line says what it shows"
    return first[2:]


def try_commands(path: Path) -> list[list[str]]:
    """The ``# Try:`` lines (and their ``#      turnip-fdm ...`` continuations), without the notes."""
    cmds = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#( Try:|     ) +turnip-fdm (.*)", line)
        if m:
            cmds.append(shlex.split(m.group(2).split("  (")[0].strip()))
    return cmds


def test_the_set_of_examples() -> None:
    assert {"vr_foveation.toml", "fdm_offsets.toml", "bin_merging.toml", "subsampled.toml", "msaa.toml",
            "a8xx.toml"} <= set(NAMES)


def test_readme_lists_every_example_with_its_purpose() -> None:
    readme = (REPO / "examples" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[([^\]]+)\]\([^)]+\) \| (.+?) \| `turnip-fdm [^`]+` \|$", readme, re.M)
    assert sorted(n for n, _ in rows) == NAMES
    for name, text in rows:
        assert text == purpose(REPO / "examples" / name), name
        cmds = [" ".join(c) for c in try_commands(REPO / "examples" / name)]
        shown = re.search(rf"^\| \[{re.escape(name)}\].* \| `turnip-fdm ([^`]+)` \|$", readme, re.M)
        assert shown and shown.group(1) in cmds, (name, "the README's command is one of the file's Try lines")


@pytest.mark.parametrize("name", NAMES)
def test_example_plans_cleanly(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(REPO / "examples" / name)
    assert try_commands(REPO / "examples" / name), f"{name}: a '# Try:' line"
    for command in ("check", "plan"):
        status = main([command, path])
        out, err = capsys.readouterr()
        assert (status, err) == (0, ""), (command, err)
        assert out
    plan = plan_render_pass(load_scenario(path))
    assert isinstance(plan, RenderPassPlan) and plan.tiles


def _plan(tmp_path: Path, name: str, change: dict[str, str] | None = None, as_plan: bool = True,
          **more: str) -> Any:
    text = (REPO / "examples" / name).read_text(encoding="utf-8")
    for a, b in {**(change or {}), **more}.items():
        assert a in text, a
        text = text.replace(a, b)
    (tmp_path / name).write_text(text, encoding="utf-8")
    plan = plan_render_pass(load_scenario(str(tmp_path / name)))
    assert isinstance(plan, RenderPassPlan) or not as_plan
    return plan


def test_the_numbers_the_comments_quote(tmp_path: Path) -> None:
    assert _plan(tmp_path, "msaa.toml").tiling.tile_size == (384, 224)
    single = _plan(tmp_path, "msaa.toml", **{", samples = 4": "", ", resolve = true": ""})
    assert single.tiling.tile_size == (672, 544)
    # the tip as its comment words it: samples = 1 on both attachments and no resolve = true
    tip = (REPO / "examples" / "msaa.toml").read_text(encoding="utf-8").split("\nname =")[0]
    assert "samples = 1 on both attachments" in tip and "no resolve = true" in tip
    as_told = _plan(tmp_path, "msaa.toml", **{"samples = 4": "samples = 1", ", resolve = true": ""})
    assert as_told.tiling.tile_size == (672, 544)
    stored = _plan(tmp_path, "msaa.toml", {'samples = 4, store_op = "dont_care", resolve':
                                           'samples = 4, store_op = "store", resolve'}, as_plan=False)
    assert "Disabling fragment density map" in str(getattr(stored, "fdm_disabled_reason", ""))
    assert _plan(tmp_path, "a8xx.toml").tiling.tile_size == (1056, 1088)
    assert _plan(tmp_path, "a8xx.toml", **{'gpu = "a830"': 'gpu = "a740"'}).tiling.tile_size == (672, 544)
    upstream = _plan(tmp_path, "bin_merging.toml")
    assert len(upstream.tiles) == 23 and max(t.extent for t in upstream.tiles) == (2, 2)
    fixed = _plan(tmp_path, "bin_merging.toml", **{'bin_merging = "upstream"': 'bin_merging = "fixed"'})
    assert len(fixed.tiles) == 11
    from layout_solver.report import layout_summary
    from layout_solver.solver import tu_calc_subsampled

    summary = layout_summary(tu_calc_subsampled(_plan(tmp_path, "subsampled.toml")))
    assert "image 1248x672, 35 stored bins, 4 shifts, 4 un-subsample steps" in summary, summary


@pytest.mark.slow   # the layouts reconstruct and draw whole passes
@pytest.mark.parametrize("name", NAMES)
def test_every_try_line_runs(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    for argv in try_commands(REPO / "examples" / name):
        argv = [str(tmp_path / a) if a.startswith("out/") else a for a in argv]
        status = main(argv)
        out, err = capsys.readouterr()
        assert (status, err) == (0, ""), (argv, err)
