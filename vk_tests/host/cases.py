"""The ``host`` backend's cases: each oracle of :mod:`vk_tests.host.oracles` wrapped as a case
named ``host.<oracle name>`` (``host.oracle.area_chooser``) that needs no device; its output is
the oracle's result as JSON, its judge (:func:`judge_oracle`) reads that result again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..suite.cases import FIRST_MISMATCHES, Case, CaseOutput, Scene, Verdict, jsonable
from . import oracles

#: the key of a host case's :class:`CaseOutput` info that holds the oracle's result
ORACLE_INFO = "oracle"


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
    r = oracles.run_oracle(scene[ORACLE_INFO])
    record = {"name": r.name, "cases": r.cases, "passed": r.passed, "mismatch_count": r.mismatch_count,
              "mismatches": [_mismatch_record(m) for m in r.mismatches],
              "documented_differences": r.documented_differences, "notes": r.notes}
    return CaseOutput(info={ORACLE_INFO: jsonable(record, strict=False)})


def judge_oracle(scene: Scene, output: CaseOutput) -> Verdict:
    """Pass when the stored :class:`~vk_tests.host.oracles.OracleResult` passed (and lists no
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
    """The ``host`` case of one oracle of :mod:`vk_tests.host.oracles`."""
    return Case(name=f"host.{oracle}", backend="host", needs_device=False, scene={ORACLE_INFO: oracle},
                description=f"host oracle {oracle}: the model against an independent reading of the spec",
                run=_run_oracle, judge=judge_oracle)


def cases() -> list[Case]:
    """One case per oracle, in :data:`~vk_tests.host.oracles.ORACLES` order."""
    return [host_case(name) for name in oracles.ORACLES]
