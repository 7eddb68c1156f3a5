"""Every case of the device suite, built explicitly, and the selection of a run.

:func:`all_cases` lists, in this order:

* the host oracles of :mod:`vk_tests.oracles`, each wrapped as a ``host`` case named
  ``host.<oracle name>`` (``host.oracle.area_chooser``) that needs no device;
* the replay cases of :func:`vk_tests.replay.replay_cases` (turnip's per-bin scheme replayed
  with ordinary Vulkan), then the replay twins of the fdm scenes
  (:func:`vk_tests.fdm_backend.replay_twins`);
* the fdm cases of :func:`vk_tests.fdm_backend.fdm_cases` (real FDM render passes).

Both modules are imported by name inside :func:`all_cases` (not at import time, so that
``turnip-fdm --help`` does not load the Vulkan cases): a module that is missing or broken makes
every command that needs the suite fail, loudly.

Names are checked once, here: unique, dotted ``backend.group.variant[...]`` with the case's own
backend first, and usable as a directory name of the result bundle.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .cases import BACKENDS, Case, CaseOutput, Scene, Verdict

#: the mismatches a verdict keeps (the bundle and JUnit show the first ones)
FIRST_MISMATCHES = 8
#: a case name: dotted components of letters, digits, ``_``, ``-``, ``+``, ``=``, at least three
NAME_RE = re.compile(r"[A-Za-z0-9_+=-]+(\.[A-Za-z0-9_+=-]+){2,}")
#: the key of a host case's :class:`CaseOutput` info that holds the oracle's result
ORACLE_INFO = "oracle"


def jsonable(value: Any, strict: bool = True) -> Any:
    """``value`` with attrs instances, dataclasses, mappings, sequences and numpy scalars/arrays
    turned into JSON types (dict, list, int, float, str, bool, None); anything else raises
    ``TypeError`` (``strict``) or becomes its ``str()``."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if attrs.has(type(value)):
        return {k: jsonable(v, strict) for k, v in attrs.asdict(value, recurse=False).items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), strict) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, strict) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, strict) for v in value]
    if not strict:
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-able: {value!r:.80}")


# ---- host cases: the oracles of vk_tests.oracles ----------------------------------------------

def _as_mismatch(m: Any) -> Mapping[str, Any]:
    return m if isinstance(m, dict) else {"mismatch": m}


def _difference(d: Any) -> tuple[int, str]:
    """(cases, reason) of a documented difference as stored."""
    if isinstance(d, dict):
        return int(d.get("count", 1)), str(d.get("reason", d))
    return 1, str(d)


def _mismatch_record(m: Any) -> dict[str, Any]:
    """A mismatch of an oracle as JSON: its one-line text and its fields."""
    fields = jsonable(m, strict=False)
    return {"case": str(m), **(fields if isinstance(fields, dict) else {})}


def _run_oracle(device: Any, scene: Scene) -> CaseOutput:
    from . import oracles

    r = oracles.run_oracle(scene[ORACLE_INFO])
    record = {"name": r.name, "cases": r.cases, "passed": r.passed, "mismatch_count": r.mismatch_count,
              "mismatches": [_mismatch_record(m) for m in r.mismatches],
              "documented_differences": r.documented_differences, "notes": r.notes}
    return CaseOutput(info={ORACLE_INFO: jsonable(record, strict=False)})


def judge_oracle(scene: Scene, output: CaseOutput) -> Verdict:
    """Pass when the stored :class:`~vk_tests.oracles.OracleResult` passed (and lists no
    mismatch), else Fail with its first mismatches; the documented differences (places where
    the model follows turnip rather than the spec, on purpose) are counted in the message and
    kept in the info."""
    r = output.info[ORACLE_INFO]
    name = r.get("name", scene[ORACLE_INFO])
    mismatches = list(r.get("mismatches") or ())
    count = max(len(mismatches), int(r.get("mismatch_count") or 0))
    documented = [_difference(d) for d in r.get("documented_differences") or ()]
    cases = int(r.get("cases", 0))
    note = ""
    if documented:
        note = (f"; {len(documented)} documented difference(s) over {sum(n for n, _ in documented)} case(s), "
                f"first: {documented[0][1]}")
    if r.get("passed") is True and not count:
        return Verdict(status="Pass", message=f"{name}: {cases} case(s) agree with the spec{note}")
    if not count:
        return Verdict(status="Fail", message=f"{name}: the oracle did not pass (no mismatch listed){note}")
    why = " although it reports passed" if r.get("passed") is True else ""
    return Verdict(status="Fail", message=f"{name}: {count} of {cases} case(s) differ from the spec{why}{note}",
                   mismatches=tuple(_as_mismatch(m) for m in mismatches[:FIRST_MISMATCHES]))


def host_case(oracle: str) -> Case:
    """The ``host`` case of one oracle of :mod:`vk_tests.oracles`."""
    return Case(name=f"host.{oracle}", backend="host", needs_device=False, scene={ORACLE_INFO: oracle},
                description=f"host oracle {oracle}: the model against an independent reading of the spec",
                run=_run_oracle, judge=judge_oracle)


# ---- the registry -----------------------------------------------------------------------------

def check_names(cases: Iterable[Case]) -> None:
    """Raise ``ValueError`` (a bug of the suite) on a duplicate or malformed case name."""
    seen: set[str] = set()
    for c in cases:
        if c.backend not in BACKENDS:
            raise ValueError(f"case {c.name!r}: backend {c.backend!r} is not one of {', '.join(BACKENDS)}")
        if not NAME_RE.fullmatch(c.name) or not c.name.startswith(f"{c.backend}."):
            raise ValueError(f"case name {c.name!r} must be '{c.backend}.group.variant' (dotted components of "
                             "letters, digits, _ - + =)")
        if c.name in seen:
            raise ValueError(f"case name {c.name!r} is used twice")
        seen.add(c.name)


def all_cases() -> list[Case]:
    """Every case of the suite: the host oracles, then the replay cases (names checked)."""
    from . import fdm_backend, fsr, oracles, replay

    cases = [host_case(name) for name in oracles.ORACLES]
    cases += list(replay.replay_cases())
    cases += fdm_backend.replay_twins()
    cases += fdm_backend.fdm_cases()
    cases += fsr.fsr_cases()
    check_names(cases)
    return cases


def select(cases: Sequence[Case], backends: Iterable[str] = (), glob: str | None = None) -> list[Case]:
    """The cases of one of ``backends`` (all when empty) whose name matches the shell pattern
    ``glob`` (:func:`fnmatch.fnmatchcase`; all when None), in registry order."""
    wanted = set(backends)
    return [c for c in cases
            if (not wanted or c.backend in wanted) and (glob is None or fnmatch.fnmatchcase(c.name, glob))]


def by_name(cases: Iterable[Case]) -> dict[str, Case]:
    return {c.name: c for c in cases}
