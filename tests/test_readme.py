"""The README a new user reads first: what the project is and who it is for before any
command; ``./dev demo`` and ``./dev test`` first among the commands (both exist in ``./dev``);
how to get ``turnip-fdm`` on PATH before the examples that type it, which name files that
exist; the times of both test commands stated, the same as in docs/index.md."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
INDEX = (REPO / "docs" / "index.md").read_text(encoding="utf-8")


def blocks(text: str) -> list[tuple[int, list[str]]]:
    """The ``sh`` code blocks: (offset, command lines without comments)."""
    out = []
    for m in re.finditer(r"```sh\n(.*?)```", text, re.S):
        lines = [ln.split("  #")[0].strip() for ln in m.group(1).splitlines()]
        out.append((m.start(), [ln for ln in lines if ln]))
    return out


def test_says_what_it_is_and_for_whom_before_any_command() -> None:
    first = README.index("```")
    before = README[:first]
    assert "exact Python model" in before and "It is for" in before
    assert "./dev" not in before.replace("`./dev demo`", "")   # no command yet


def test_dev_demo_and_dev_test_come_first() -> None:
    commands = blocks(README)[0][1]
    assert commands == ["./dev demo", "./dev test"]
    dev = (REPO / "dev").read_text(encoding="utf-8")
    for name in re.findall(r"^\./dev (\S+)", "\n".join(ln for _, b in blocks(README) for ln in b), re.M):
        assert re.search(rf"^    {re.escape(name)}\)", dev, re.M), f"./dev {name} is not a task of ./dev"


def test_path_before_typing_turnip_fdm() -> None:
    typed = [(at, b) for at, b in blocks(README) if any(ln.startswith("turnip-fdm ") for ln in b)]
    assert typed
    at, first = typed[0]
    assert first[0] == ". .venv/bin/activate"
    for line in first[1:]:
        for arg in shlex.split(line)[2:]:
            if arg.startswith("examples/"):
                assert (REPO / arg).is_file(), arg


def test_both_test_commands_have_a_stated_time_the_docs_agree_on() -> None:
    fast = re.search(r"\./dev test-fast .*\(([^()]*\d+ s[^()]*)\)", README)
    assert fast, "README: ./dev test-fast's time"
    assert fast.group(1) in INDEX, "docs/index.md states the same test-fast time"
    assert re.search(r"\./dev test +# .*about \d+ minutes", README)
    assert re.search(r"`\./dev test` \|.*about \d+ minutes", INDEX)
