"""A command imports only the module that registers it (turnip_fdm.cli.COMMAND_MODULES): the
table names every command of the full parser, and ``layout`` starts without the device suite,
the box or the mip-chain generators."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from turnip_fdm.cli import COMMAND_MODULES, build_parser, command_of

REPO = Path(__file__).resolve().parents[2]


def _commands(p: argparse.ArgumentParser) -> set[str]:
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_the_table_names_every_command_once() -> None:
    full = _commands(build_parser())
    named = [c for names, _ in COMMAND_MODULES for c in names]
    assert sorted(named) == sorted(full)
    for names, _ in COMMAND_MODULES:
        for c in names:
            assert _commands(build_parser(c)) == set(names)


def test_command_of() -> None:
    assert command_of(["layout", "x.toml"]) == "layout"
    assert command_of(["--traceback", "layout"]) == "layout"
    assert command_of(["--help"]) is None and command_of([]) is None
    assert _commands(build_parser(command_of(["nonsense"]))) == _commands(build_parser())


def test_layout_imports_neither_the_suite_nor_the_box() -> None:
    code = ("import sys\nfrom turnip_fdm.cli import registrars\nregistrars('layout')\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                       text=True, capture_output=True, check=True, timeout=120)
    top = set(r.stdout.split())
    assert {"layout_solver", "fdm"} <= top
    assert not top & {"vk_tests", "turnip_box", "mipmap", "vulkan"}, top
