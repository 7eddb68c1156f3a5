"""docs/driver-revisions.md and fdm/revisions.py are the same table, and the table is true of the code.

(a) the Markdown tables equal ``DRIVER_REVISIONS``, ``DRIVER_VARIANTS`` and ``DRIVER_DATA`` row for row;
(b) every dotted path in them imports and resolves, and (functions and variants) its docstring
    names the turnip function it models;
(c) no turnip function has two rows (and every variant belongs to a listed function).
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest

from fdm.revisions import DRIVER_DATA, DRIVER_REVISIONS, DRIVER_VARIANTS, DriverData, DriverSource, DriverVariant

DOC = Path(__file__).resolve().parent.parent / "docs" / "driver-revisions.md"


def md_table(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first table after ``heading``, as cells without backticks."""
    lines = text.splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    in_table = False
    for line in lines[start + 1:]:
        if line.startswith("|"):
            in_table = True
            rows.append([c.strip().replace("`", "") for c in line.strip().strip("|").split("|")])
        elif in_table:
            break
    assert len(rows) >= 2 and set(rows[1]) <= {"---"}, f"no table under {heading!r}"
    return rows[2:]


def _opt(cell: str) -> str | None:
    return None if cell == "—" else cell


def _models(cell: str) -> tuple[str, ...]:
    return () if cell == "—" else tuple(m.strip() for m in cell.split(","))


def parse_doc(text: str) -> tuple[tuple[DriverSource, ...], tuple[DriverVariant, ...], tuple[DriverData, ...]]:
    funcs = tuple(DriverSource(function=f, file=fi, repository=r, commit=c, mesa_version=_opt(v), basis=b,
                               models=_models(m))
                  for f, fi, r, c, v, b, m in md_table(text, "## Functions"))
    variants = tuple(DriverVariant(function=f, variant=va, repository=r, commit=c, basis=b, selected_by=s,
                                   models=_models(m))
                     for f, va, r, c, b, s, m in md_table(text, "## Variants"))
    data = tuple(DriverData(file=fi, repository=r, commit=c, mesa_version=_opt(v), basis=b, contents=co,
                            models=_models(m))
                 for fi, r, c, v, b, co, m in md_table(text, "## Data files"))
    return funcs, variants, data


def resolve(path: str) -> Any:
    """Import the longest module prefix of ``path`` and look the rest up as attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(path)


def docstring(obj: Any) -> str:
    return (obj.__doc__ or "") if isinstance(obj, ModuleType) else (inspect.getdoc(obj) or "")


# -- (a) ----------------------------------------------------------------------------------------

def test_markdown_tables_equal_the_constants():
    funcs, variants, data = parse_doc(DOC.read_text(encoding="utf-8"))
    assert funcs == DRIVER_REVISIONS
    assert variants == DRIVER_VARIANTS
    assert data == DRIVER_DATA


# -- (b) ----------------------------------------------------------------------------------------

NAMED = [(d.function, m) for d in (*DRIVER_REVISIONS, *DRIVER_VARIANTS) for m in d.models]


@pytest.mark.parametrize(("function", "path"), NAMED, ids=[f"{f}-{p}" for f, p in NAMED])
def test_model_path_resolves_and_names_the_turnip_function(function, path):
    obj = resolve(path)
    assert re.search(rf"\b{re.escape(function)}\b", docstring(obj)), \
        f"the docstring of {path} does not name {function}"


def test_data_model_paths_resolve():
    for d in DRIVER_DATA:
        for m in d.models:
            resolve(m)


def test_every_entry_names_a_revision():
    for d in (*DRIVER_REVISIONS, *DRIVER_VARIANTS, *DRIVER_DATA):
        assert re.fullmatch(r"[0-9a-f]{8}", d.commit), d
        assert d.repository in {"pop-os/mesa", "sailfishos-mirror/mesa", "tencentmalos/mesa-mirror"}, d
        assert d.basis in {"docstring", "baseline", "spec", "decisions"}, d
    for d in DRIVER_REVISIONS:
        assert d.models, d
        assert d.file.startswith("src/freedreno/"), d


# -- (c) ----------------------------------------------------------------------------------------

def test_one_entry_per_turnip_function():
    names = [d.function for d in DRIVER_REVISIONS]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
    pairs = [(v.function, v.variant) for v in DRIVER_VARIANTS]
    assert len(pairs) == len(set(pairs))
    assert {v.function for v in DRIVER_VARIANTS} <= set(names)
    files = [d.file for d in DRIVER_DATA]
    assert len(files) == len(set(files))


def test_records_are_frozen():
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        DRIVER_REVISIONS[0].commit = "00000000"  # type: ignore[misc]
