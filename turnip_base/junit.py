"""JUnit XML, the one writer of the project's reports for CI systems (``vk run``'s bundle and
``box check --junit``).

A report is one ``<testsuite>`` of :class:`TestCase` rows.  Text from outside (a driver's
message, a validation layer's, a decoded value) may hold characters XML 1.0 cannot carry:
every attribute and text goes through :func:`xml_text`, which replaces them by ``?``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

import attrs

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

#: the outcome of a test case as JUnit knows it
PASSED, FAILURE, ERROR, SKIPPED = "passed", "failure", "error", "skipped"


def xml_text(s: str) -> str:
    """``s`` with the characters XML 1.0 forbids replaced by ``?``."""
    return _NOT_XML.sub("?", s)


@attrs.frozen(kw_only=True)
class TestCase:
    """One ``<testcase>``: ``outcome`` one of :data:`PASSED`, :data:`FAILURE`, :data:`ERROR`,
    :data:`SKIPPED`; ``message`` the element's one-line message, ``text`` its body (failures and
    errors) or ``<system-out>`` (passes); ``kind`` the ``type`` attribute of a failure."""

    __test__ = False  # not a pytest class

    classname: str
    name: str
    outcome: str
    seconds: float = 0.0
    message: str = ""
    text: str = ""
    kind: str = ""
    properties: Mapping[str, str] = attrs.field(factory=dict)


def document(suite: str, cases: Sequence[TestCase], properties: Mapping[str, str] | None = None) -> bytes:
    """The JUnit document of ``cases`` (UTF-8 bytes with an XML declaration and a final newline)."""
    count = {k: sum(c.outcome == k for c in cases) for k in (FAILURE, ERROR, SKIPPED)}
    root = ET.Element("testsuite", {
        "name": xml_text(suite), "tests": str(len(cases)), "failures": str(count[FAILURE]),
        "errors": str(count[ERROR]), "skipped": str(count[SKIPPED]),
        "time": f"{sum(c.seconds for c in cases):.3f}"})
    if properties:
        props = ET.SubElement(root, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", {"name": xml_text(k), "value": xml_text(v)})
    for c in cases:
        tc = ET.SubElement(root, "testcase", {"classname": xml_text(c.classname), "name": xml_text(c.name),
                                              "time": f"{c.seconds:.3f}"})
        if c.properties:
            p = ET.SubElement(tc, "properties")
            for k, v in c.properties.items():
                ET.SubElement(p, "property", {"name": xml_text(k), "value": xml_text(v)})
        if c.outcome in (FAILURE, ERROR):
            attrs_ = {"message": xml_text(c.message)}
            if c.kind:
                attrs_["type"] = xml_text(c.kind)
            el = ET.SubElement(tc, c.outcome, attrs_)
            if c.text:
                el.text = xml_text(c.text)
        elif c.outcome == SKIPPED:
            ET.SubElement(tc, "skipped", {"message": xml_text(c.message)})
        elif c.text:
            ET.SubElement(tc, "system-out").text = xml_text(c.text)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True)) + b"\n"
