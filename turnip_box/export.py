"""A scenario mapping written back as a TOML scenario file (``box check --keep DIR``).

Generated scenarios exist only as mappings of the file schema (docs/scenario.md); ``--keep``
writes each as ``DIR/scenarios/NAME.GPU.toml``, a file that ``turnip-fdm box plan`` and
``turnip-fdm plan`` accept as it is.  :func:`to_toml` covers what the schema uses: strings,
integers, floats, booleans, (nested, mixed) arrays, tables and arrays of tables.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if any(c in r for c in ".en") else r + ".0"
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, Sequence):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"no TOML value for {type(v).__name__}")


def _is_tables(v: Any) -> bool:
    return isinstance(v, Sequence) and not isinstance(v, str) and bool(v) and all(isinstance(x, Mapping) for x in v)


def _table(m: Mapping[str, Any], path: str, out: list[str]) -> None:
    for k, v in m.items():
        if not isinstance(v, Mapping) and not _is_tables(v):
            out.append(f"{_key(k)} = {_value(v)}")
    for k, v in m.items():
        sub = f"{path}.{_key(k)}" if path else _key(k)
        if isinstance(v, Mapping):
            out.append(f"\n[{sub}]")
            _table(v, sub, out)
        elif _is_tables(v):
            for x in v:
                out.append(f"\n[[{sub}]]")
                _table(x, sub, out)


def to_toml(mapping: Mapping[str, Any], comment: str = "") -> str:
    """``mapping`` as a TOML document (``comment`` first, as ``#`` lines)."""
    out = [f"# {line}" for line in comment.splitlines()]
    _table(mapping, "", out)
    return "\n".join(out) + "\n"
