"""Every (sub-)command's ``--help`` is written for its user: a description of what it does, no
text meant for the code's reader (reST roles, double back-quotes, module paths of the shell,
"this module ... register"), and no line longer than a terminal's 120 columns."""

from __future__ import annotations

import argparse
import re
from typing import Any

import pytest

from turnip_fdm.cli import build_parser

#: what marks a docstring written for the code's reader
INTERNAL = re.compile(r":(func|mod|class|data|meth):|``|\bThis module\b|\bregister\(|\bturnip_fdm\.cli\b|"
                      r"\bfdm\.errors\b|\bsubparsers?\b|\bhandlers?\b")


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    found: list[tuple[str, argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        found.append((name, parser))
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub, p in a.choices.items():
                    walk(p, f"{name} {sub}".strip())

    walk(build_parser(), "")
    return found


PARSERS = parsers()


#: commands whose help is still their module docstring, owned elsewhere: strict xfail, so the
#: entry must go when the help is rewritten
NOT_YET: dict[str, str] = {}


def _param(name: str) -> Any:
    marks = [pytest.mark.xfail(reason=NOT_YET[name], strict=True)] if name in NOT_YET else []
    return pytest.param(name, marks=marks, id=name or "turnip-fdm")


@pytest.mark.parametrize("name", [_param(n) for n, _ in PARSERS])
def test_help_is_written_for_users(name: str) -> None:
    parser = dict(PARSERS)[name]
    text = parser.format_help()
    assert not INTERNAL.search(text), (name, INTERNAL.search(text))
    assert all(len(line) <= 120 for line in text.splitlines()), name
    if name and " " not in name:   # every command says what it does (its sub-commands may lean on it)
        assert parser.description, name


def test_the_checker_catches_a_docstring() -> None:
    """The old ``mipmap --help`` was the module docstring."""
    old = ("This module only adds the sub-command (:func:`register`) and its handlers, which raise the "
           "refusals of fdm.errors; the top-level command line (turnip_fdm.cli) creates the parser")
    assert INTERNAL.search(old)
