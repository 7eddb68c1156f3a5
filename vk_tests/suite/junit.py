"""The suite's results as JUnit XML, for CI systems, written by the project's one JUnit writer
(:mod:`turnip_base.junit`).

One ``<testsuite name="turnip-fdm vk">`` with ``tests``, ``failures``, ``errors`` (always 0),
``skipped`` and ``time``, and a ``device`` property; one ``<testcase>`` per case with
``classname`` = the first two components of the case name (``backend.group``) and ``name`` = the
rest.  A Fail has a ``<failure>`` (message = the verdict's line, text = its first mismatches);
NotSupported and cases not run have a ``<skipped>``; a QualityWarning passes, with the warning in
``<system-out>``.  A case judged on a command stream (the box) says so: StreamDiffer is a
``<failure type="StreamDiffer">`` with the differences, StreamAgree passes with
``<system-out>StreamAgree: ...</system-out>`` (never a pixel pass) and a ``<properties>``
entry ``judged_on`` = ``stream``.  Characters XML 1.0 cannot carry (control characters of a
driver's message) are replaced by ``?`` (:func:`turnip_base.junit.xml_text`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from turnip_base.junit import FAILURE, PASSED, SKIPPED, TestCase, document

from .bundle import CaseRecord

SUITE_NAME = "turnip-fdm vk"


def split_name(name: str) -> tuple[str, str]:
    """``backend.group.rest`` -> (``backend.group``, ``rest``); shorter names keep the last
    component as the name."""
    parts = name.split(".")
    cut = 2 if len(parts) > 2 else max(1, len(parts) - 1)
    return ".".join(parts[:cut]), ".".join(parts[cut:]) or name


def junit_case(r: CaseRecord) -> TestCase:
    """The ``<testcase>`` of one record (module docstring)."""
    classname, name = split_name(r.name)
    props = {"judged_on": "stream"} if r.status in ("StreamAgree", "StreamDiffer", "ModelRefused",
                                                    "RefusedAsExpected") else {}
    common: dict[str, Any] = {"classname": classname, "name": name, "seconds": r.seconds, "properties": props}
    if r.status in ("Fail", "StreamDiffer", "ModelRefused"):
        details = [r.message]
        if r.verdict is not None:
            details += [json.dumps(m, sort_keys=True, default=str) for m in r.verdict.mismatches]
        details += [f"validation: {m}" for m in r.validation]
        return TestCase(outcome=FAILURE, message=r.message, text="\n".join(details), kind=r.status, **common)
    if r.status in ("NotSupported", "NotRun"):
        return TestCase(outcome=SKIPPED, message=f"{r.status}: {r.message}", **common)
    text = f"{r.status}: {r.message}" if r.status in ("QualityWarning", "StreamAgree", "RefusedAsExpected") else ""
    return TestCase(outcome=PASSED, text=text, **common)


def junit_xml(records: Sequence[CaseRecord], device: Mapping[str, Any] | None = None) -> bytes:
    """The JUnit document (UTF-8 bytes with an XML declaration and a final newline)."""
    desc = "no device needed" if device is None else str(device.get("description") or device.get("reason") or "")
    return document(SUITE_NAME, [junit_case(r) for r in records], {"device": desc})
