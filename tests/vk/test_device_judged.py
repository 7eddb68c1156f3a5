"""A device that runs and judges the cases itself (the box's hook in the runner): its verdicts
are stream verdicts in the counts, the closing line, JUnit and ``vk check``; and the density-map
format the fdm backend picks (the same densities in whatever format the device advertises)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

import fdm
from turnip_base.errors import NotSupported
from vk_tests.graphics import fdm_pass
from vk_tests.suite import bundle
from vk_tests.suite.cases import Case, CaseOutput, Scene, Verdict
from vk_tests.suite.runner import recheck, run_suite


def _pixel_judge(scene: Scene, out: CaseOutput) -> Verdict:
    raise AssertionError("a self-judging device's cases are never judged on pixels")


def _case(name: str, needs_device: bool = True) -> Case:
    def run(dev: Any, scene: Scene) -> CaseOutput:
        return CaseOutput(info={"oracle": "host"})

    def judge(scene: Scene, out: CaseOutput) -> Verdict:
        return Verdict(status="Pass", message="host")

    return Case(name=name, backend=name.split(".")[0], description="", scene={"want": name}, run=run,  # type: ignore[arg-type]
                judge=judge if not needs_device else _pixel_judge, needs_device=needs_device)


def stream_judge(case: Case, scene: Scene, out: CaseOutput) -> Verdict:
    agree = bool(out.images["stream0"][0])
    return Verdict(status="StreamAgree" if agree else "StreamDiffer", message="judged on the stream",
                   mismatches=() if agree else ({"field": "bin_size", "driver": 1, "model": 2},))


@attrs.frozen
class Info:
    name: str = "self-judging"

    def describe(self) -> str:
        return "a device that judges its own cases"


class SelfJudging:
    def __init__(self) -> None:
        self.messages: list[str] = []
        self.info = Info()
        self.vk = None

    def run_case(self, case: Case) -> CaseOutput:
        if case.backend != "fdm":
            raise NotSupported("pixel cases need a real GPU")
        agree = case.name.endswith("agree")
        return CaseOutput(images={"stream0": np.array([agree], dtype=np.uint8)}, info={"judged_on": "stream"})

    def judge_case(self, case: Case, scene: Scene, out: CaseOutput) -> Verdict:
        return stream_judge(case, scene, out)

    def close(self) -> None:
        pass


def test_a_self_judging_device(tmp_path: Path) -> None:
    cases = [_case("fdm.x.agree"), _case("fdm.x.differ"), _case("replay.x.y"), _case("host.x.y", False)]
    out = tmp_path / "b"
    result = run_suite(cases, "self", str(out), opener=lambda sel: SelfJudging())
    assert [r.status for r in result.records] == ["StreamAgree", "StreamDiffer", "NotSupported", "Pass"]
    assert result.failed
    assert result.closing_line == "1 passed, 0 failed, 1 not supported, 1 stream agree, 1 stream differ"
    suite = ET.fromstring((out / "junit.xml").read_bytes())
    assert suite.get("failures") == "1"
    by = {t.get("name"): t for t in suite.iter("testcase")}
    assert by["agree"].find("failure") is None and (by["agree"].findtext("system-out") or "").startswith("StreamAgree")
    assert by["differ"].find("failure").get("type") == "StreamDiffer"  # type: ignore[union-attr]
    assert by["differ"].find("properties/property[@name='judged_on']") is not None
    stored = bundle.load_bundle(str(out))
    named = {c.name: c for c in cases}
    again = {r.name: r.outcome for r in recheck(stored, named, {"stream": stream_judge})}
    assert again == dict.fromkeys(named, "same")
    unjudged = {r.name: r.outcome for r in recheck(stored, named)}
    assert unjudged["fdm.x.agree"] == "unchecked" and unjudged["host.x.y"] == "same"


# ---- the density map's format ------------------------------------------------------------------
FDM = fdm_pass.FORMAT_FEATURE_FDM
R8, R16, R32 = fdm_pass.VK_FMT_R8G8_UNORM, fdm_pass.VK_FMT_R16G16_SFLOAT, fdm_pass.VK_FMT_R32G32_SFLOAT


def _map(fmt: str, values: list[list[list[float]]]) -> Any:
    doc = {"gpu": "a750", "framebuffer": [64, 64], "density": {"format": fmt, "views": [{"values": values}]}}
    return fdm.parse_scenario(doc).density


@pytest.mark.parametrize(("optimal", "linear", "want"), [
    ({R8: FDM, R32: FDM}, {}, (R8, False)),                 # the scenario's own format first
    ({R32: FDM, R16: FDM}, {R32: FDM, R16: FDM}, (R32, True)),  # turnip 26.2: float32, host-written
    ({R8: FDM}, {R8: FDM}, (R8, True)),                     # linear preferred when it has the feature
    ({R16: FDM}, {}, None),                                 # 1/255 is no float16
    ({}, {}, None),
])
def test_map_choice(optimal: dict[int, int], linear: dict[int, int], want: Any) -> None:
    dm = _map("R8G8_UNORM", [[255 / 255, 127 / 255], [63 / 255, 1.0]])
    assert fdm_pass.map_choice(dm, optimal, linear) == want


def test_the_same_densities_in_every_format() -> None:
    dm = _map("R8G8_UNORM", [[1.0, 0.5], [0.25, 1.0]])
    stored = np.asarray(dm.layers[0])
    f32 = fdm_pass.map_values(dm, R32)
    assert f32 is not None and f32.dtype == np.float32
    want = np.vectorize(lambda b: float(fdm.turnip.unorm8_to_float(int(b))))(stored).astype(np.float32)
    assert np.array_equal(f32[0], want)
    assert fdm_pass.map_values(dm, R8) is not None and fdm_pass.map_values(dm, R16) is None
    halves = _map("R32G32_SFLOAT", [[1.0, 0.5], [0.25, 1.0]])
    assert fdm_pass.map_values(halves, R16) is not None and fdm_pass.map_values(halves, R8) is None


def test_the_qcom_offset_extension_where_no_ext_entry_point_is_needed() -> None:
    from vk_tests.fdm import device as fdm_device

    both = {fdm_device.FDM_EXT: 3, fdm_device.OFFSET_QCOM: 3, fdm_device.OFFSET_EXT: 1}
    assert fdm_device.enabled_extensions(both) == [fdm_device.FDM_EXT, fdm_device.OFFSET_EXT]
    assert fdm_device.enabled_extensions(both, offset_ext=False) == [fdm_device.FDM_EXT, fdm_device.OFFSET_QCOM]
    ext_only = {fdm_device.FDM_EXT: 3, fdm_device.OFFSET_EXT: 1}
    assert fdm_device.enabled_extensions(ext_only, offset_ext=False) == [fdm_device.FDM_EXT, fdm_device.OFFSET_EXT]
