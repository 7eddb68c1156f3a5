"""One name per quantity (issue 16 item 3), kept by the symbol table of docs/index.md.

For every row of that table: its *Name* is used (a key of ``plan --json`` for the names the
outputs carry, else a name in the model's code), and none of its *Retired* names remains as an
identifier in the packages' Python, a key of the plan JSON, a word of the page's script, or a
word of the docs (pages, finding scenarios and their ``[expect]`` paths, examples) outside
``docs/spec/`` (the copied specs, which keep the sources' words) and the table itself.
``test_planted_*`` show the scan finds a retired name where one is put back.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

import fdm
from fdm.report import plan_json
from fdm.tile_select import Foveat

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "docs" / "index.md"
PACKAGES = ("fdm", "layout_solver", "turnip_fdm", "turnip_base", "vk_tests")
PAGE_SCRIPTS = tuple((ROOT / "layout_solver").rglob("*.js"))


def symbol_rows() -> list[dict[str, str]]:
    lines = INDEX.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Symbols")
    rows: list[dict[str, str]] = []
    header: list[str] | None = None
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            if header is not None:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif set(cells) != {"---"}:
            rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _code(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


ROWS = symbol_rows()
NAMES = [n for r in ROWS for n in _code(r["Name"])]
RETIRED = [(n, r["Name"]) for r in ROWS for n in _code(r["Retired"])]


def python_files() -> Iterator[Path]:
    for pkg in PACKAGES:
        d = ROOT / pkg
        if d.is_dir():
            yield from sorted(d.rglob("*.py"))


def identifiers(source: str) -> set[str]:
    """Every NAME token of a Python source and every dotted ``a.b`` pair of names (comments and
    docstrings excluded: they may quote the C)."""
    out: set[str] = set()
    prev: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME:
            out.add(tok.string)
            if len(prev) == 2 and prev[1] == ".":
                out.add(f"{prev[0]}.{tok.string}")
            prev = [tok.string]
        elif tok.type == tokenize.OP and tok.string == "." and len(prev) == 1:
            prev = [prev[0], "."]
        else:
            prev = []
    return out


def json_keys(doc: Any, path: str = "") -> set[str]:
    """Every key of a JSON document, plain (``offsets``) and with its parent (``foveat.offsets``)."""
    out: set[str] = set()
    if isinstance(doc, dict):
        for k, v in doc.items():
            out |= {k, f"{path}.{k}" if path else k}
            out |= json_keys(v, k)
    elif isinstance(doc, list):
        for v in doc:
            out |= json_keys(v, path)
    return out


def words(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


@pytest.fixture(scope="module")
def demo_keys() -> set[str]:
    sc = fdm.load_scenario(str(ROOT / "fdm" / "data" / "demo.toml"))
    return json_keys(plan_json(fdm.plan_render_pass(sc)))


@pytest.fixture(scope="module")
def code_names() -> set[str]:
    out: set[str] = set()
    for f in python_files():
        out |= identifiers(f.read_text(encoding="utf-8"))
    return out


def test_the_table_has_every_quantity() -> None:
    assert {"common_bin_start", "hw_offset", "bin_offset", "frag_area", "offset", "bin", "extent"} <= set(NAMES)
    assert ("common_bin_offset", "`common_bin_start`") in RETIRED and ("foveat.offsets", "`hw_offset`") in RETIRED
    assert len(NAMES) == len(set(NAMES)), "a name given to two quantities"


@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_used(name: str, demo_keys: set[str], code_names: set[str]) -> None:
    assert name in demo_keys or name in code_names, f"{name}: neither a plan JSON key nor a name in the code"


def test_output_names_are_plan_json_keys(demo_keys: set[str]) -> None:
    text = INDEX.read_text(encoding="utf-8")
    sentence = text[text.index("In every output"):text.index("[plan table]")]
    out = [n for n in _code(sentence) if n in NAMES]     # the names, not the symbols beside them
    assert {"common_bin_start", "hw_offset", "bin_offset", "extent"} <= set(out)
    for n in out:
        assert n in demo_keys, f"{n}: not a key of plan --json"


def hits(name: str, code_names: set[str], demo_keys: set[str]) -> list[str]:
    where = []
    if name in code_names:
        where += [str(f.relative_to(ROOT)) for f in python_files()
                  if name in identifiers(f.read_text(encoding="utf-8"))]
    if name in demo_keys:
        where.append("plan --json")
    where += [str(f.relative_to(ROOT)) for f in PAGE_SCRIPTS if words(f.read_text(encoding="utf-8"), name)]
    docs = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.toml"), *(ROOT / "examples").rglob("*")]
    for f in sorted(docs):
        if not f.is_file() or f.relative_to(ROOT).parts[:2] == ("docs", "spec"):
            continue
        text = f.read_text(encoding="utf-8")
        if f == INDEX:
            text = text[:text.index("## Symbols")] + text[text.index("## Coordinate spaces"):]
        if words(text, name):
            where.append(str(f.relative_to(ROOT)))
    for f in (ROOT / "README.md",):
        if words(f.read_text(encoding="utf-8"), name):
            where.append("README.md")
    return where


@pytest.mark.parametrize(("alias", "name"), RETIRED)
def test_no_retired_name_remains(alias: str, name: str, code_names: set[str], demo_keys: set[str]) -> None:
    where = hits(alias, code_names, demo_keys)
    assert not where, f"{alias} (now {name}) still in {where}"


def test_foveat_fields() -> None:
    fields = {a.name for a in attrs.fields(Foveat)}
    assert "hw_offsets" in fields and "offsets" not in fields


def test_planted_retired_name_is_found(tmp_path: Path) -> None:
    src = "def f(common_bin_offset):\n    return t.foveat.offsets\n"
    names = identifiers(src)
    assert "common_bin_offset" in names and "foveat.offsets" in names
    assert "sysmem_extent" not in identifiers("x = 1  # tile->sysmem_extent, quoted from the C\n")
    doc = {"tiles": [{"foveat": {"offsets": [[0, 0]]}}]}
    assert "foveat.offsets" in json_keys(doc)
    assert words("the `common_bin_offset` of a tile", "common_bin_offset")
    assert not words("common_bin_offsets_x", "common_bin_offset")
