"""The suite's results as JUnit XML, for CI systems.

One ``<testsuite name="turnip-fdm vk">`` with ``tests``, ``failures``, ``errors`` (always 0),
``skipped`` and ``time``; one ``<testcase>`` per case with ``classname`` = the first two
components of the case name (``backend.group``) and ``name`` = the rest.  A Fail has a
``<failure>`` (message = the verdict's line, text = its first mismatches); NotSupported and
cases not run have a ``<skipped>``; a QualityWarning passes, with the warning in
``<system-out>``.  A case judged on a command stream (the box) says so: StreamDiffer is a
``<failure type="StreamDiffer">`` with the differences, StreamAgree passes with
``<system-out>StreamAgree: ...</system-out>`` (never a pixel pass) and a ``<properties>``
entry ``judged_on`` = ``stream``.  Characters XML 1.0 cannot carry (control characters of a driver's message)
are replaced by ``?``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from .bundle import CaseRecord

SUITE_NAME = "turnip-fdm vk"
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(s: str) -> str:
    """``s`` with the characters XML 1.0 forbids replaced by ``?``."""
    return _NOT_XML.sub("?", s)


def split_name(name: str) -> tuple[str, str]:
    """``backend.group.rest`` -> (``backend.group``, ``rest``); shorter names keep the last
    component as the name."""
    parts = name.split(".")
    cut = 2 if len(parts) > 2 else max(1, len(parts) - 1)
    return ".".join(parts[:cut]), ".".join(parts[cut:]) or name


def junit_xml(records: Sequence[CaseRecord], device: Mapping[str, Any] | None = None) -> bytes:
    """The JUnit document (UTF-8 bytes with an XML declaration)."""
    failures = sum(r.status in ("Fail", "StreamDiffer") for r in records)
    skipped = sum(r.status in ("NotSupported", "NotRun") for r in records)
    suite = ET.Element("testsuite", {
        "name": SUITE_NAME, "tests": str(len(records)), "failures": str(failures), "errors": "0",
        "skipped": str(skipped), "time": f"{sum(r.seconds for r in records):.3f}"})
    props = ET.SubElement(suite, "properties")
    desc = "no device needed" if device is None else str(device.get("description") or device.get("reason") or "")
    ET.SubElement(props, "property", {"name": "device", "value": xml_text(desc)})
    for r in records:
        classname, name = split_name(r.name)
        tc = ET.SubElement(suite, "testcase", {"classname": classname, "name": name, "time": f"{r.seconds:.3f}"})
        message = xml_text(r.message)
        if r.status in ("StreamAgree", "StreamDiffer"):
            props_tc = ET.SubElement(tc, "properties")
            ET.SubElement(props_tc, "property", {"name": "judged_on", "value": "stream"})
        if r.status in ("Fail", "StreamDiffer"):
            el = ET.SubElement(tc, "failure", {"message": message, "type": r.status})
            details = [message]
            if r.verdict is not None:
                details += [json.dumps(m, sort_keys=True, default=str) for m in r.verdict.mismatches]
            details += [f"validation: {xml_text(m)}" for m in r.validation]
            el.text = xml_text("\n".join(details))
        elif r.status in ("NotSupported", "NotRun"):
            ET.SubElement(tc, "skipped", {"message": f"{r.status}: {message}"})
        elif r.status in ("QualityWarning", "StreamAgree"):
            ET.SubElement(tc, "system-out").text = f"{r.status}: {message}"
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True)) + b"\n"
