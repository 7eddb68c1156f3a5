"""The exit statuses of ``turnip-fdm vk run`` and ``vk check`` that a CI gate relies on:

* 0 only when something was compared (Pass, QualityWarning, StreamAgree; for ``check`` a case
  judged again) and nothing failed;
* 1 a failure (Fail, StreamDiffer; a verdict that DIFFERS);
* 2 bad input, here a ``--device`` that names no device (before any case runs, nothing written);
* 3 (``EXIT_NOTHING_COMPARED``) nothing compared, with one line saying so after the closing line;
* 130 Ctrl-C.

Every test asserts the exact status, so a run that would exit 0 fails it.  The cases and the
device are fakes (no Vulkan needed): ``runner.open_validated`` and ``runner.list_devices`` are
replaced.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from turnip_base.errors import EXIT_FAILURE, EXIT_NOTHING_COMPARED, EXIT_REFUSED, NotSupported
from turnip_base.harness import DEVICE_ENV, DeviceInfo
from turnip_fdm.cli import main
from vk_tests.suite import bundle, runner
from vk_tests.suite.cases import Case, CaseOutput, Scene, Verdict

INFO = DeviceInfo(index=0, name="fakepipe", vendor_id=0x10005, device_type=4, api_version="1.3.0",
                  driver_version="1.0.0", driver_name="fake", driver_info="test", subgroup_size=8,
                  subgroup_shuffle=True, subgroup_compute=True, timestamp_period=1.0, timestamp_valid_bits=64,
                  max_image_dimension_2d=16384, max_workgroup_count=(65535, 65535, 65535), queue_family=0,
                  queue_graphics=True)
DEVICES = ["fakepipe", "otherpipe (LLVM 15, 256 bits)"]


class FakeDevice:
    vk = types.SimpleNamespace(VkErrorDeviceLost=RuntimeError)

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.info = INFO

    def close(self) -> None:
        pass


class Opener:
    """Records the selectors it was asked to open; ``fail`` makes every open NotSupported."""

    def __init__(self, fail: str = "") -> None:
        self.asked: list[object] = []
        self.fail = fail

    def __call__(self, selector: object) -> FakeDevice:
        self.asked.append(selector)
        if self.fail:
            raise NotSupported(self.fail)
        return FakeDevice()


def image(scene: Scene) -> np.ndarray:
    return np.arange(12, dtype=np.uint8).reshape(3, 4)


def judge(scene: Scene, out: CaseOutput) -> Verdict:
    if not np.array_equal(out.images["color"], image(scene)):
        return Verdict(status="Fail", message="color differs")
    if scene.get("warn"):
        return Verdict(status="QualityWarning", message="inexact")
    return Verdict(status="Pass", message="color matches")


def render_ok(dev: Any, scene: Scene) -> CaseOutput:
    return CaseOutput(images={"color": image(scene)})


def render_wrong(dev: Any, scene: Scene) -> CaseOutput:
    return CaseOutput(images={"color": image(scene) + 1})


def lacks_fdm(dev: Any, scene: Scene) -> CaseOutput:
    raise NotSupported("device fakepipe: extension VK_EXT_fragment_density_map is not supported")


def ctrl_c(dev: Any, scene: Scene) -> CaseOutput:
    raise KeyboardInterrupt


def case(name: str, run: Callable[[Any, Scene], CaseOutput], needs_device: bool = True,
         scene: Scene | None = None) -> Case:
    backend = name.split(".")[0]
    return Case(name=name, backend=backend, description=name, scene=scene or {}, run=run, judge=judge,
                needs_device=needs_device)


def suite() -> list[Case]:
    return [
        case("host.fake.pass", render_ok, needs_device=False),
        case("replay.fake.pass", render_ok),
        case("replay.fake.warn", render_ok, scene={"warn": True}),
        case("replay.fake.fail", render_wrong),
        case("fdm.fake.lacks_a", lacks_fdm),
        case("fdm.fake.lacks_b", lacks_fdm),
    ]


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture()
def opener(monkeypatch: pytest.MonkeyPatch) -> Iterator[Opener]:
    """The fake suite on a machine with the devices :data:`DEVICES`; no $TURNIP_FDM_DEVICE."""
    fake = Opener()
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    monkeypatch.setattr("vk_tests.cli.all_cases", suite)
    monkeypatch.setattr("vk_tests.suite.runner.open_validated", fake)
    monkeypatch.setattr("vk_tests.suite.runner.list_devices", lambda: list(DEVICES))
    yield fake


def no_vulkan() -> list[str]:
    raise NotSupported("no Vulkan loader (libvulkan.so.1)")


# ---- vk run: 0, 1, 3 ---------------------------------------------------------------------------

def test_a_passing_run_is_0(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener) -> None:
    status, out, err = call(capsys, "vk", "run", "--filter", "*.pass", "--device", "fake", "--out", str(tmp_path / "b"))
    assert status == 0 and err == ""
    assert out[-1] == "2 passed, 0 failed, 0 not supported"
    assert opener.asked == ["fake"]


def test_compared_and_not_supported_is_0(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         opener: Opener) -> None:
    """NotSupported is not a failure: one compared case is enough (QualityWarning counts)."""
    status, out, _ = call(capsys, "vk", "run", "--filter", "*.[wl]*", "--device", "1", "--out", str(tmp_path / "b"))
    assert status == 0
    assert out[-1] == "0 passed, 0 failed, 2 not supported, 1 quality warning"


def test_a_failing_case_is_1(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener) -> None:
    status, out, err = call(capsys, "vk", "run", "--out", str(tmp_path / "b"))
    assert status == EXIT_FAILURE == 1 and err == ""
    assert "Fail  replay.fake.fail: color differs" in out
    assert out[-1] == "2 passed, 1 failed, 2 not supported, 1 quality warning"
    # a failure among nothing compared is still a failure, not "nothing compared"
    status, out, _ = call(capsys, "vk", "run", "--filter", "*.fail", "--out", str(tmp_path / "b"))
    assert status == 1 and out[-1] == "0 passed, 1 failed, 0 not supported"


def test_every_case_not_supported_is_3(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       opener: Opener) -> None:
    """The device opens, every selected case is NotSupported: nothing compared, status 3."""
    out_dir = tmp_path / "b"
    status, out, err = call(capsys, "vk", "run", "--backend", "fdm", "--out", str(out_dir))
    assert status == EXIT_NOTHING_COMPARED == 3 and err == ""
    assert out[-2:] == ["0 passed, 0 failed, 2 not supported",
                        "nothing compared: 0 of 2 case(s) compared on fakepipe (every one not supported)"]
    assert (out_dir / "summary.json").is_file() and (out_dir / "junit.xml").is_file()  # still written


def test_no_device_is_3(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The device cannot be opened (the opener raises NotSupported): the device cases are
    NotSupported; with no host case selected nothing is compared."""
    opener.fail = "no Vulkan loader (libvulkan.so.1)"
    monkeypatch.setattr("vk_tests.suite.runner.list_devices", no_vulkan)
    status, out, _ = call(capsys, "vk", "run", "--backend", "replay", "--backend", "fdm", "--out",
                          str(tmp_path / "b"))
    assert status == 3
    assert out[0] == "device: none (no Vulkan loader (libvulkan.so.1))"
    assert out[-2:] == ["0 passed, 0 failed, 5 not supported",
                        "nothing compared: 0 of 5 case(s) compared with no device (no Vulkan loader "
                        "(libvulkan.so.1)) (every one not supported)"]
    # the host cases still run and compare: 0
    status, out, _ = call(capsys, "vk", "run", "--out", str(tmp_path / "b"))
    assert status == 0 and out[-1] == "1 passed, 0 failed, 5 not supported"


def test_ctrl_c_before_anything_compared_is_130(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                opener: Opener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vk_tests.cli.all_cases", lambda: [case("host.fake.ctrl_c", ctrl_c, False)] + suite())
    status, out, err = call(capsys, "vk", "run", "--out", str(tmp_path / "b"))
    assert status == 130 and err == "turnip-fdm: interrupted\n"
    assert out[-1] == "0 passed, 0 failed, 0 not supported, 7 not run"  # no "nothing compared" line


def test_the_runners_nothing_compared() -> None:
    """An empty selection (the command line refuses it first) and a run of NotRun/NotSupported
    cases compare nothing; a StreamAgree is compared."""
    empty = runner.run_suite([], None, None, None, opener=Opener(fail="never opened"))
    assert empty.compared == 0 and empty.nothing_compared == "nothing compared: no case was selected"
    host = runner.run_suite([case("host.fake.lacks", lacks_fdm, False)], None, None, None)
    assert host.nothing_compared == ("nothing compared: 0 of 1 case(s) compared on the host (no selected case "
                                     "needs a device) (every one not supported)")
    counts = dict.fromkeys(bundle.COUNT_ORDER, 0) | {"NotSupported": 2, "NotRun": 3}
    assert bundle.nothing_compared_line(counts, "on x") == \
        "nothing compared: 0 of 5 case(s) compared on x (2 not supported, 3 not run)"
    assert bundle.compared(counts | {"StreamAgree": 1}) == 1
    assert bundle.compared(counts | {"StreamDiffer": 1, "Fail": 1}) == 0


def test_an_empty_selection_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener) -> None:
    status, out, err = call(capsys, "vk", "run", "--filter", "nothing.*", "--out", str(tmp_path / "b"))
    assert status == EXIT_REFUSED == 2 and out == []
    assert one_line(err) == "turnip-fdm: error: --filter: no case matches filter 'nothing.*'"
    assert opener.asked == [] and not (tmp_path / "b").exists()


# ---- vk run --device: refused before any case runs ---------------------------------------------

@pytest.mark.parametrize(("argv", "rule"), [
    (["--device", "bogus"], "no device name contains 'bogus'"),
    (["--device", "2"], "device index 2 is out of range"),
    # host cases need no device, but a selector that names none is still refused
    (["--device", "bogus", "--backend", "host"], "no device name contains 'bogus'"),
])
def test_a_device_that_names_no_device_is_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener,
                                            argv: list[str], rule: str) -> None:
    out_dir = tmp_path / "b"
    status, out, err = call(capsys, "vk", "run", *argv, "--out", str(out_dir))
    assert status == 2 and out == []
    assert one_line(err) == (f"turnip-fdm: error: --device: {rule}; the devices (an index or a name substring): "
                             "0 'fakepipe', 1 'otherpipe (LLVM 15, 256 bits)'; or box:GPU")
    assert opener.asked == [] and not out_dir.exists()  # before any case ran, nothing written


def test_a_bogus_default_device_is_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEVICE_ENV, "nvidia")
    status, out, err = call(capsys, "vk", "run", "--out", str(tmp_path / "b"))
    assert status == 2 and out == [] and opener.asked == []
    assert one_line(err).startswith("turnip-fdm: error: --device: no device name contains 'nvidia' "
                                    "($TURNIP_FDM_DEVICE, the default of --device); the devices")
    monkeypatch.setenv(DEVICE_ENV, "other")  # a name substring that matches: runs
    status, _, _ = call(capsys, "vk", "run", "--filter", "*.pass", "--out", str(tmp_path / "b"))
    assert status == 0 and opener.asked == [None]


def test_without_vulkan_a_selector_cannot_be_checked(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     opener: Opener, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Vulkan on the machine: not a refusal but a not-supported result (status per rule 1)."""
    monkeypatch.setattr("vk_tests.suite.runner.list_devices", no_vulkan)
    opener.fail = "no Vulkan loader (libvulkan.so.1)"
    status, out, _ = call(capsys, "vk", "run", "--device", "bogus", "--backend", "replay", "--out",
                          str(tmp_path / "b"))
    assert status == 3 and out[-1].startswith("nothing compared: 0 of 3 case(s) compared with no device")
    monkeypatch.setattr("vk_tests.suite.runner.list_devices", lambda: [])  # a loader, but no device
    status, out, _ = call(capsys, "vk", "run", "--device", "bogus", "--out", str(tmp_path / "b"))
    assert status == 0 and out[-1] == "1 passed, 0 failed, 5 not supported"


# ---- vk check: 0, 1, 3 -------------------------------------------------------------------------

def test_check_statuses(capsys: pytest.CaptureFixture[str], tmp_path: Path, opener: Opener,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    passing, unsupported = tmp_path / "passing", tmp_path / "unsupported"
    assert call(capsys, "vk", "run", "--filter", "*.[pl]*", "--out", str(passing))[0] == 0
    assert call(capsys, "vk", "run", "--backend", "fdm", "--out", str(unsupported))[0] == 3

    status, out, _ = call(capsys, "vk", "check", str(passing))
    assert status == 0 and out[-1] == "4 same, 0 differ, 0 unknown, 0 unchecked"

    status, out, err = call(capsys, "vk", "check", str(unsupported))
    assert status == 3 and err == ""
    assert out[-2:] == ["2 same, 0 differ, 0 unknown, 0 unchecked",
                        "nothing re-judged: 0 of 2 stored case(s) judged again (2 with nothing to judge (the run "
                        "ended the case))"]

    # cases this version does not have are not judged: nothing re-judged
    monkeypatch.setattr("vk_tests.cli.all_cases", lambda: suite()[3:])
    status, out, _ = call(capsys, "vk", "check", str(passing))
    assert status == 3
    assert out[-1] == ("nothing re-judged: 0 of 4 stored case(s) judged again (2 with nothing to judge (the run "
                       "ended the case), 2 unknown)")

    # a judge that now says otherwise: 1
    def warns(scene: Scene, out: CaseOutput) -> Verdict:
        return Verdict(status="QualityWarning", message="inexact now")

    changed = Case(name="host.fake.pass", backend="host", description="", scene={}, run=render_ok, judge=warns,
                   needs_device=False)
    monkeypatch.setattr("vk_tests.cli.all_cases", lambda: [changed] + suite()[1:])
    status, out, _ = call(capsys, "vk", "check", str(passing))
    assert status == 1 and out[-1] == "3 same, 1 differ, 0 unknown, 0 unchecked"


def test_a_judge_that_now_says_not_supported_compares_nothing(tmp_path: Path) -> None:
    stored = runner.run_suite([case("host.fake.pass", render_ok, False)], None, str(tmp_path / "b"), None)
    assert stored.compared == 1

    def unsure(scene: Scene, out: CaseOutput) -> Verdict:
        return Verdict(status="NotSupported", message="cannot judge")

    unsure_case = Case(name="host.fake.pass", backend="host", description="", scene={}, run=render_ok,
                       judge=unsure, needs_device=False)
    now = runner.recheck(bundle.load_bundle(str(tmp_path / "b")), {"host.fake.pass": unsure_case})
    assert [(r.outcome, r.judged, r.compared) for r in now] == [("DIFFERS", True, False)]
    assert runner.nothing_rejudged([]) == "nothing re-judged: the bundle holds no case"
