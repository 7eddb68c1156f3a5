"""One ``--json`` / ``--out`` rule for every command (fdm.outputs.check_json_or_out, docs/index.md):
``--json`` prints one JSON document and writes no file, ``--out DIR`` writes the files and
prints a summary, and both together are refused - exit 2, the same one line for every command,
nothing written, nothing printed.  The parser is walked, so a command that gains both flags is
held to the rule without editing this file."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from fdm.outputs import JSON_OR_OUT
from turnip_fdm.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
SMALL = str(REPO / "docs/findings/d_merge_upstream.toml")
#: what each command needs besides the two flags (a scenario; diff: a variant for the B side)
ARGS = {"plan": [SMALL], "layout": [SMALL], "diff": [SMALL, "--variant", "bin_merging=fixed"]}


def commands_with(*flags: str) -> list[str]:
    """Every (sub-)command of the shell whose parser has all of ``flags``, as 'name sub'."""
    found: list[str] = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        opts = {o for a in parser._actions for o in a.option_strings}
        if name and all(f in opts for f in flags):
            found.append(name)
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub, p in a.choices.items():
                    walk(p, f"{name} {sub}".strip())

    walk(build_parser(), "")
    return found


def test_the_commands_with_both_flags_are_the_tested_ones() -> None:
    assert sorted(commands_with("--json", "--out")) == sorted(ARGS)


@pytest.mark.parametrize("command", sorted(ARGS))
def test_json_and_out_together_refused(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    status = main([command, *ARGS[command], "--json", "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert (status, stdout) == (2, "")
    assert err == f"turnip-fdm: error: --out: {JSON_OR_OUT}\n"
    assert not out.exists()


@pytest.mark.parametrize("command", sorted(ARGS))
def test_json_prints_one_document_and_writes_nothing(command: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)   # layout's default picture folder would be out/layout here
    assert main([command, *ARGS[command], "--json"]) == 0
    json.loads(capsys.readouterr().out)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", ["plan", "diff"])   # layout --out: tests/layout_solver (slower)
def test_out_writes_the_files_and_prints_a_summary(command: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert main([command, *ARGS[command], "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"to {out}" in printed and len(printed.splitlines()) <= 2
    assert any(p.suffix == ".json" for p in out.iterdir())


@pytest.mark.parametrize("command", sorted(ARGS))
def test_help_states_the_rule(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(not with --out)" in text and "not with --json)" in text
