"""The device suite on the box (``turnip-fdm vk run --device box:a750``): fdm cases run on Mesa's
real turnip under the validation layer and are judged on the decoded command stream, never on
pixels; a planted model bug turns a case into a stream difference.  Needs the box
(`turnip-fdm box setup`); under ``CI=true`` a missing box fails instead of skipping."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import fdm.turnip
from turnip_base.errors import NotSupported
from turnip_box.root import Box, environment, find_box
from vk_tests.box import device as box_suite
from vk_tests.box.device import DEVICE_JUDGES, device_opener
from vk_tests.registry import all_cases
from vk_tests.suite import bundle
from vk_tests.suite.runner import SuiteResult, recheck, run_suite
from vk_tests.suite.selection import by_name

pytestmark = pytest.mark.box

#: a few fdm cases: many bins, offsets past a whole tile (b_o wraps), a subsampled pass, MSAA
#: (a shader without FDM constants), depth with LRZ; a replay case and a host case beside them
CASES = ("fdm.uniform_area.2x2.rp2", "fdm.offset.sweep_k25.rp2", "fdm.cts_histogram.static_subsampled_2_2.64.rp2",
         "fdm.msaa_resolve.4x.rp2", "fdm.depth_lrz.a7xx_scaled.rp2")
OFFSET_CASE = "fdm.offset.sweep_k25.rp2"
REPLAY_CASE = "replay.uniform_area.1x1.a650"


@pytest.fixture(scope="module", autouse=True)
def _box(box: Box) -> None:
    """Every test here needs the built box (the fixture skips, or fails under CI, without it)."""


def _run(names: tuple[str, ...], out: Path | None = None) -> SuiteResult:
    cases = by_name(all_cases())
    return run_suite([cases[n] for n in names], "box:a750", str(out) if out else None,
                     opener=device_opener("box:a750"))


def test_fdm_cases_are_judged_on_the_stream(tmp_path: Path) -> None:
    host = next(c.name for c in all_cases() if c.backend == "host")
    result = _run((*CASES, REPLAY_CASE, host), tmp_path / "b")
    status = {r.name: r.status for r in result.records}
    assert status == {**dict.fromkeys(CASES, "StreamAgree"), REPLAY_CASE: "NotSupported", host: "Pass"}, \
        [(r.name, r.message) for r in result.records]
    assert all(not r.validation for r in result.records)
    replay = next(r for r in result.records if r.name == REPLAY_CASE)
    assert replay.message == box_suite.NO_PIXELS
    assert result.device is not None and result.device["info"]["validation"] is True
    assert result.closing_line.endswith(f"{len(CASES)} stream agree, 0 stream differ")
    for r in result.records[:len(CASES)]:
        assert r.info["judged_on"] == "stream" and r.info["gpu"] == "a750"
        assert [i.name for i in r.images] == [f"stream{k}" for k in range(len(r.info["passes"]))]
    # the bundle and JUnit say how it was judged; `vk check` judges the stored streams again
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["counts"]["StreamAgree"] == len(CASES) and summary["counts"]["Pass"] == 1
    suite = ET.fromstring((tmp_path / "b" / "junit.xml").read_bytes())
    tc = next(t for t in suite.iter("testcase") if t.get("classname") == "fdm.uniform_area")
    assert tc.find("properties/property[@name='judged_on']").get("value") == "stream"  # type: ignore[union-attr]
    assert (tc.findtext("system-out") or "").startswith("StreamAgree: ")
    stored = bundle.load_bundle(str(tmp_path / "b"))
    again = recheck(stored, by_name(all_cases()), DEVICE_JUDGES)
    assert {r.outcome for r in again} == {"same"}, [(r.name, r.note, r.now) for r in again]
    assert {r.outcome for r in recheck(stored, by_name(all_cases()))} >= {"unchecked"}


def test_a_planted_model_bug_is_a_stream_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    # b_o without the wrap-around (the model side runs in this process)
    monkeypatch.setattr(fdm.turnip, "euclid_rem", lambda a, m: a)
    result = _run((OFFSET_CASE, "fdm.uniform_area.2x2.rp2"))
    status = {r.name: r.status for r in result.records}
    assert status == {OFFSET_CASE: "StreamDiffer", "fdm.uniform_area.2x2.rp2": "StreamAgree"}
    rec = result.records[0]
    assert result.failed and rec.verdict is not None and rec.verdict.mismatches
    assert rec.message.startswith(rec.verdict.message.split(" of ")[0])


def test_other_devices_are_untouched() -> None:
    assert device_opener(None) is None and device_opener("0") is None and device_opener("llvmpipe") is None
    assert box_suite.box_gpu("box:a618") == "a618"


def test_a_box_without_the_layer_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the worker follows the recorder's policy (turnip_box.inside): the layer is required
    def no_layers(*args: Any, **kw: Any) -> dict[str, str]:
        return {**environment(*args, **kw), "VK_LAYER_PATH": str(tmp_path)}

    monkeypatch.setattr("vk_tests.box.device.environment", no_layers)
    with pytest.raises(NotSupported, match="vulkan-validationlayers"):
        box_suite.BoxDevice(find_box(), "a750")
