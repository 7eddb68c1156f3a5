"""The device suite's machinery: the registry, the runner's statuses, the result bundle, JUnit,
``vk check`` and the ``turnip-fdm vk`` command line.

Most tests use fake cases (built here) and a fake device, so they need no Vulkan; the host
oracles run without a device; one test runs ``vk run --backend host --backend replay`` on the
real device (lavapipe in CI) and is marked ``vulkan``.
"""

from __future__ import annotations

import io
import json
import lzma
import os
import shutil
import subprocess
import types
import xml.dom.minidom
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

from turnip_base.errors import NotSupported, ScenarioError
from turnip_base.harness import DeviceInfo
from turnip_fdm.cli import main
from vk_tests import registry
from vk_tests.host import cases as host_cases
from vk_tests.suite import bundle, junit, runner
from vk_tests.suite import cases as suite_cases
from vk_tests.suite import selection as suite_selection
from vk_tests.suite.cases import Case, CaseOutput, Scene, Verdict, first_mismatches

# ---- a fake device and fake cases ------------------------------------------------------------

class DeviceLost(Exception):
    """Stands for vulkan.VkErrorDeviceLost (the fake device's ``vk.VkErrorDeviceLost``)."""


class OutOfDeviceMemory(Exception):
    pass


INFO = DeviceInfo(index=0, name="fakepipe", vendor_id=0x10005, device_type=4, api_version="1.3.0",
                  driver_version="1.0.0", driver_name="fake", driver_info="test", subgroup_size=8,
                  subgroup_shuffle=True, subgroup_compute=True, timestamp_period=1.0, timestamp_valid_bits=64,
                  max_image_dimension_2d=16384, max_workgroup_count=(65535, 65535, 65535), queue_family=0,
                  queue_graphics=True)


class FakeDevice:
    vk = types.SimpleNamespace(VkErrorDeviceLost=DeviceLost)

    def __init__(self, serial: int) -> None:
        self.serial = serial
        self.messages: list[str] = []
        self.info = INFO
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Opener:
    """Counts the devices opened; ``fail`` makes every open NotSupported."""

    def __init__(self, fail: str = "") -> None:
        self.opened: list[FakeDevice] = []
        self.fail = fail

    def __call__(self, selector: object) -> FakeDevice:
        if self.fail:
            raise NotSupported(self.fail)
        self.opened.append(FakeDevice(len(self.opened)))
        return self.opened[-1]


def gradient(scene: Scene) -> np.ndarray:
    h, w = scene["size"]
    img = np.zeros((h, w, 4), np.uint8)
    img[..., 0] = np.arange(w, dtype=np.uint8)[None, :]
    img[..., 1] = np.arange(h, dtype=np.uint8)[:, None]
    img[..., 3] = 255
    return img


def judge_gradient(scene: Scene, out: CaseOutput) -> Verdict:
    """Pure: the stored image against the gradient the scene describes."""
    bad = first_mismatches("color", out.images["color"], gradient(scene))
    if bad:
        return Verdict(status="Fail", message=f"color differs ({len(bad)} first pixels)", mismatches=bad)
    if scene.get("warn"):
        return Verdict(status="QualityWarning", message="exact, but the shift is inexact")
    return Verdict(status="Pass", message="color matches")


def fake_case(name: str, run: Any, needs_device: bool = True, scene: Scene | None = None) -> Case:
    return Case(name=name, backend="replay" if needs_device else "host", description=f"fake {name}",
                scene=scene or {"size": [3, 5]}, run=run, judge=judge_gradient, needs_device=needs_device)


def render_ok(dev: Any, scene: Scene) -> CaseOutput:
    img = gradient(scene)
    return CaseOutput(images={"color": img, "frag_size": np.full((*img.shape[:2], 2), 2, np.uint16),
                              "depth": np.linspace(0, 1, img.shape[0] * img.shape[1], dtype=np.float32).reshape(
                                  img.shape[:2]), "mask": img[..., 0] > 1},
                      info={"draws": np.int64(3), "serial": dev.serial if dev is not None else None})


def render_wrong(dev: Any, scene: Scene) -> CaseOutput:
    img = gradient(scene)
    img[1, 2, 0] += 7
    return CaseOutput(images={"color": img})


def lacks_fdm(dev: Any, scene: Scene) -> CaseOutput:
    raise NotSupported("device fakepipe: extension VK_EXT_fragment_density_map is not supported")


def crashes(dev: Any, scene: Scene) -> CaseOutput:
    raise RuntimeError("bad\nthing")


def loses_device(dev: Any, scene: Scene) -> CaseOutput:
    raise DeviceLost()


def out_of_memory(dev: Any, scene: Scene) -> CaseOutput:
    raise OutOfDeviceMemory("VK_ERROR_OUT_OF_DEVICE_MEMORY")


def validation_complaint(dev: Any, scene: Scene) -> CaseOutput:
    dev.messages.append("Validation Error: [ VUID-x ] something\nwrong")
    return render_ok(dev, scene)


def interrupted(dev: Any, scene: Scene) -> CaseOutput:
    raise KeyboardInterrupt


def suite() -> list[Case]:
    return [
        fake_case("host.fake.pass", render_ok, needs_device=False),
        fake_case("replay.fake.pass", render_ok),
        fake_case("replay.fake.warn", render_ok, scene={"size": [3, 5], "warn": True}),
        fake_case("replay.fake.fail", render_wrong),
        fake_case("replay.fake.not_supported", lacks_fdm),
        fake_case("replay.fake.raises", crashes),
        fake_case("replay.fake.lost", loses_device),
        fake_case("replay.fake.after_lost", render_ok),
        fake_case("replay.fake.oom", out_of_memory),
        fake_case("replay.fake.validation", validation_complaint),
    ]


def statuses(records: Sequence[bundle.CaseRecord]) -> dict[str, str]:
    return {r.name: r.status for r in records}


def parse_junit(path: Path) -> ET.Element:
    data = path.read_bytes()
    xml.dom.minidom.parseString(data)  # expat: well-formed
    if shutil.which("xmllint"):
        r = subprocess.run(["xmllint", "--noout", str(path)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    return ET.fromstring(data)


# ---- the registry ------------------------------------------------------------------------------

def test_registry_names_and_selection() -> None:
    from vk_tests.host import oracles

    cases = registry.all_cases()
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    host = suite_selection.select(cases, ["host"])
    assert [c.name for c in host] == [f"host.{o}" for o in oracles.ORACLES]
    assert all(not c.needs_device and c.backend == "host" for c in host)
    assert suite_selection.select(cases, [], "host.oracle.*") == host
    assert suite_selection.select(cases, ["fsr"], None) == [c for c in cases if c.backend == "fsr"]
    fakes = suite()
    assert [c.name for c in suite_selection.select(fakes, ["replay"], "*.fake.[pw]*")] == ["replay.fake.pass",
                                                                                     "replay.fake.warn"]
    with pytest.raises(ValueError, match="used twice"):
        suite_selection.check_names(fakes + fakes[:1])
    for bad in ("replay.fake", "host.fake.x", "replay.a/b.c", "replay..x.y"):
        with pytest.raises(ValueError):
            suite_selection.check_names([fake_case(bad, render_ok)])


def test_oracle_judge() -> None:
    scene = {"oracle": "oracle.x"}
    ok = {"name": "oracle.x", "cases": 10, "passed": True, "mismatch_count": 0, "mismatches": [],
          "documented_differences": [{"reason": "turnip skips zero bytes", "count": 4, "examples": []}]}
    v = host_cases.judge_oracle(scene, CaseOutput(info={"oracle": ok}))
    assert v.status == "Pass" and "10 case(s) agree" in v.message and "turnip skips zero bytes" in v.message
    bad = dict(ok, passed=False, mismatch_count=12, mismatches=[{"case": f"m{i}"} for i in range(12)])
    v = host_cases.judge_oracle(scene, CaseOutput(info={"oracle": bad}))
    assert v.status == "Fail" and "12 of 10" in v.message
    assert [m["case"] for m in v.mismatches] == [f"m{i}" for i in range(suite_cases.FIRST_MISMATCHES)]
    lying = dict(bad, passed=True)
    assert host_cases.judge_oracle(scene, CaseOutput(info={"oracle": lying})).status == "Fail"
    silent = dict(ok, passed=False)
    assert host_cases.judge_oracle(scene, CaseOutput(info={"oracle": silent})).status == "Fail"


def test_a_failing_oracle_fails_its_host_case(monkeypatch: pytest.MonkeyPatch) -> None:
    from fractions import Fraction

    from vk_tests.host import oracles

    bad = oracles.Case(inputs=(("bytes", (0, 128)),), model=(2, 1), spec=Fraction(255, 128))
    result = oracles.OracleResult(name="oracle.area_chooser", cases=5, mismatches=(bad,), mismatch_count=3,
                                  documented_differences=(), passed=False)
    monkeypatch.setattr(oracles, "run_oracle", lambda name: result)
    (rec,) = runner.run_suite([host_cases.host_case("oracle.area_chooser")], None, None, None).records
    assert rec.status == "Fail" and rec.message == "oracle.area_chooser: 3 of 5 case(s) differ from the spec"
    assert rec.verdict is not None and rec.verdict.mismatches == (
        {"case": str(bad), "inputs": [["bytes", [0, 128]]], "model": [2, 1], "spec": "255/128"},)


@pytest.mark.slow  # runs every host-oracle case through the runner and re-checks the bundle (a sweep, seconds)
def test_host_cases_run_without_a_device(tmp_path: Path) -> None:
    host = suite_selection.select(registry.all_cases(), ["host"])
    if not host:
        pytest.skip("vk_tests.oracles is not written yet")
    never = Opener(fail="no device may be opened for host cases")
    result = runner.run_suite(host, None, str(tmp_path / "out"), None, opener=never)
    assert result.device is None and never.opened == []
    for r in result.records:
        assert r.status == ("Pass" if r.info["oracle"]["passed"] else "Fail"), r.message
        assert r.device is None and r.ran
    assert runner.recheck(bundle.load_bundle(str(tmp_path / "out")), suite_selection.by_name(host))[0].outcome == "same"


# ---- the runner ------------------------------------------------------------------------------------

def test_statuses_and_the_run_goes_on(tmp_path: Path) -> None:
    opener = Opener()
    progress = io.StringIO()
    result = runner.run_suite(suite(), "fake", str(tmp_path / "out"), progress, opener=opener)
    got = statuses(result.records)
    assert got == {
        "host.fake.pass": "Pass", "replay.fake.pass": "Pass", "replay.fake.warn": "QualityWarning",
        "replay.fake.fail": "Fail", "replay.fake.not_supported": "NotSupported", "replay.fake.raises": "Fail",
        "replay.fake.lost": "Fail", "replay.fake.after_lost": "Pass", "replay.fake.oom": "Fail",
        "replay.fake.validation": "Fail"}
    by = {r.name: r for r in result.records}
    assert by["replay.fake.raises"].message == "RuntimeError: bad thing"
    assert by["replay.fake.not_supported"].message.endswith("VK_EXT_fragment_density_map is not supported")
    assert by["replay.fake.fail"].verdict is not None
    assert by["replay.fake.fail"].verdict.mismatches[0] == {"image": "color", "x": 2, "y": 1, "got": [9, 1, 0, 255],
                                                            "want": [2, 1, 0, 255]}
    assert by["replay.fake.oom"].message == "OutOfDeviceMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY"
    # the lost device is closed and a new one serves the next case; other failures keep it
    assert "device lost" in by["replay.fake.lost"].message
    assert len(opener.opened) == 2 and all(d.closed for d in opener.opened)
    assert by["replay.fake.after_lost"].info["serial"] == 1
    assert by["replay.fake.validation"].message.startswith("1 validation message(s) (the case alone: Pass); first: "
                                                           "Validation Error: [ VUID-x ] something wrong")
    assert by["replay.fake.validation"].validation == ("Validation Error: [ VUID-x ] something\nwrong",)
    assert by["host.fake.pass"].device is None and by["replay.fake.pass"].device["opened"] is True
    assert result.closing_line == "3 passed, 5 failed, 1 not supported, 1 quality warning" and result.failed
    assert "\r[" in progress.getvalue() and "replay.fake.validation" in progress.getvalue()
    suite_xml = parse_junit(tmp_path / "out" / "junit.xml")
    assert (suite_xml.get("tests"), suite_xml.get("failures"), suite_xml.get("skipped")) == ("10", "5", "1")
    oom = next(t for t in suite_xml.iter("testcase") if t.get("name") == "oom")
    assert oom.get("classname") == "replay.fake" and oom.find("failure") is not None


def test_no_device_makes_device_cases_not_supported() -> None:
    result = runner.run_suite(suite()[:4], None, None, None, opener=Opener(fail="no Vulkan loader (libvulkan.so.1)"))
    assert statuses(result.records) == {"host.fake.pass": "Pass", "replay.fake.pass": "NotSupported",
                                        "replay.fake.warn": "NotSupported", "replay.fake.fail": "NotSupported"}
    assert result.records[1].message == "no device: no Vulkan loader (libvulkan.so.1)"
    assert result.device == {"opened": False, "reason": "no Vulkan loader (libvulkan.so.1)"}
    assert result.closing_line == "1 passed, 0 failed, 3 not supported" and not result.failed


def test_ctrl_c_keeps_the_results_so_far(tmp_path: Path) -> None:
    cases = suite()[:4] + [fake_case("replay.fake.ctrl_c", interrupted)] + suite()[4:6]
    opener = Opener()
    result = runner.run_suite(cases, None, str(tmp_path / "out"), None, opener=opener)
    assert result.interrupted and opener.opened[0].closed
    assert list(statuses(result.records).values()) == ["Pass", "Pass", "QualityWarning", "Fail", "NotRun", "NotRun",
                                                       "NotRun"]
    assert result.closing_line == "2 passed, 1 failed, 0 not supported, 1 quality warning, 3 not run"
    root = parse_junit(tmp_path / "out" / "junit.xml")
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("7", "1", "3")
    loaded = bundle.load_bundle(str(tmp_path / "out"))
    assert loaded.interrupted and [r.status for r in loaded.records] == [r.status for r in result.records]


def test_a_case_whose_output_cannot_be_stored_fails(tmp_path: Path) -> None:
    def bad_name(dev: Any, scene: Scene) -> CaseOutput:
        return CaseOutput(images={"../up": gradient(scene)})

    def bad_info(dev: Any, scene: Scene) -> CaseOutput:
        return CaseOutput(images={"color": gradient(scene)}, info={"x": object()})

    cases = [fake_case("host.fake.bad_name", bad_name, False), fake_case("host.fake.bad_info", bad_info, False)]
    result = runner.run_suite(cases, None, str(tmp_path / "out"), None)
    assert [r.status for r in result.records] == ["Fail", "Fail"]
    assert "not a file name" in result.records[0].message and "not JSON-able" in result.records[1].message
    assert sorted(os.listdir(tmp_path / "out" / "cases" / "host.fake.bad_name")) == ["case.json"]


# ---- the bundle and vk check -------------------------------------------------------------------------

def test_bundle_round_trip_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    cases = suite()
    result = runner.run_suite(cases, None, str(out), None, opener=Opener())
    loaded = bundle.load_bundle(str(out))
    assert [bundle.verdict_json(r.verdict) for r in loaded.records] == \
        [json.loads(json.dumps(bundle.verdict_json(r.verdict))) for r in result.records]
    assert loaded.device is not None and loaded.device["info"]["name"] == "fakepipe"
    rec = next(r for r in loaded.records if r.name == "replay.fake.pass")
    case_dir = out / "cases" / "replay.fake.pass"
    assert sorted(os.listdir(case_dir)) == ["case.json", "color.npy.xz", "color.png", "depth.npy.xz", "depth.png",
                                            "frag_size.npy.xz", "frag_size.png", "mask.npy.xz", "mask.png"]
    stored = bundle.load_output(loaded, rec)
    fresh = render_ok(None, rec.scene)
    for name, img in fresh.images.items():
        assert stored.images[name].dtype == img.dtype and np.array_equal(stored.images[name], img)
    assert stored.info == {"draws": 3, "serial": 0}
    with PILImage.open(case_dir / "frag_size.png") as png:  # 2 everywhere -> scaled to 255, blue 0
        assert png.mode == "RGB" and png.getpixel((0, 0)) == (255, 255, 0)
    with PILImage.open(case_dir / "color.png") as png:  # uint8 RGBA: as stored, alpha dropped
        assert png.mode == "RGB" and png.getpixel((2, 1)) == (2, 1, 0)
    doc = json.loads((case_dir / "case.json").read_text())
    assert doc["scene"] == {"size": [3, 5]} and doc["verdict"]["status"] == "Pass"
    assert doc["images"][0] == {"name": "color", "shape": [3, 5, 4], "dtype": "|u1", "bytes": 60,
                                "npy": "color.npy.xz", "png": "color.png", "png_view": "as stored; alpha dropped",
                                "omitted": None}

    monkeypatch.setattr("vk_tests.cli.all_cases", lambda: cases)
    status, text, err = call(capsys, "vk", "check", str(out))
    assert status == 0 and err == ""
    lines = text.splitlines()
    assert lines[-1] == "10 same, 0 differ, 0 unknown, 0 unchecked"
    assert "same       replay.fake.not_supported: NotSupported (the run itself ended the case; nothing to judge)" \
        in lines

    # a stored image changed: the judge now says otherwise
    img = bundle.load_npy("bundle", str(case_dir / "color.npy.xz"))
    img[2, 4, 1] = 200
    buf = io.BytesIO()
    np.save(buf, img)
    (case_dir / "color.npy.xz").write_bytes(lzma.compress(buf.getvalue()))
    status, text, _ = call(capsys, "vk", "check", str(out))
    assert status == 1
    differs = [line for line in text.splitlines() if line.startswith("DIFFERS")]
    assert differs == ["DIFFERS    replay.fake.pass: stored Pass (color matches); now Fail (color differs (1 first "
                       "pixels))"]
    assert text.splitlines()[-1] == "9 same, 1 differ, 0 unknown, 0 unchecked"

    # a case this version does not have is reported, not judged
    monkeypatch.setattr("vk_tests.cli.all_cases", lambda: cases[2:])
    status, text, _ = call(capsys, "vk", "check", str(out))
    assert status == 0 and "unknown    host.fake.pass: Pass (not a case of this version)" in text.splitlines()
    assert text.splitlines()[-1] == "8 same, 0 differ, 2 unknown, 0 unchecked"


def test_large_images_left_out(tmp_path: Path) -> None:
    def big(dev: Any, scene: Scene) -> CaseOutput:
        return CaseOutput(images={"color": gradient(scene), "huge": np.zeros((1100, 1000, 4), np.uint8)})

    cases = [fake_case("host.fake.big", big, needs_device=False)]
    runner.run_suite(cases, None, str(tmp_path / "out"), None, large_images=False)
    loaded = bundle.load_bundle(str(tmp_path / "out"))
    (rec,) = loaded.records
    assert [(i.name, i.omitted is not None) for i in rec.images] == [("color", False), ("huge", True)]
    files = sorted(os.listdir(tmp_path / "out" / "cases" / "host.fake.big"))
    assert files == ["case.json", "color.npy.xz", "color.png"]
    (check,) = runner.recheck(loaded, suite_selection.by_name(cases))
    assert check.outcome == "unchecked" and "'huge'" in check.note


def test_bundle_refusals(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no summary.json"):
        bundle.load_bundle(str(tmp_path))
    (tmp_path / "summary.json").write_text('{"format": "turnip-fdm vk bundle", "version": 1, '
                                           '"cases": [{"name": "../../etc.x.y"}]}')
    with pytest.raises(ScenarioError, match="not a case name"):
        bundle.load_bundle(str(tmp_path))
    (tmp_path / "summary.json").write_text("[" * 100000)
    with pytest.raises(ScenarioError, match="not JSON"):
        bundle.load_bundle(str(tmp_path))
    np.save(tmp_path / "obj.npy", np.array([{}], dtype=object), allow_pickle=True)
    with pytest.raises(ScenarioError, match="not a numeric image"):
        bundle.load_npy("bundle", str(tmp_path / "obj.npy"))
    # an --out directory with other things in it is refused; an earlier bundle is replaced
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ScenarioError, match="neither empty nor a result bundle"):
        runner.run_suite(suite()[:1], None, str(tmp_path), None)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    again = tmp_path / "again"
    runner.run_suite(suite()[:1], None, str(again), None)
    runner.run_suite([fake_case("host.fake.other", render_ok, False)], None, str(again), None)
    assert os.listdir(again / "cases") == ["host.fake.other"]


def _xz_npy(header: bytes, data: bytes = b"") -> bytes:
    return lzma.compress(header + data)


def test_compressed_images_are_checked_before_they_are_decompressed(tmp_path: Path) -> None:
    """A .npy.xz whose header claims too much, an object dtype, more data than announced, or a
    damaged stream is refused with one line, without decompressing (allocating) the data."""
    def npy(shape: tuple[int, ...], descr: str) -> bytes:
        head = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
        head += b" " * (63 - (len(head) + 10) % 64) + b"\n"
        return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head

    cases = {
        "huge": (_xz_npy(npy((50000, 50000, 4), "<u4"), b"\0" * (1 << 20)), "more than 1073741824"),
        "object": (_xz_npy(npy((2,), "|O"), b"\0" * 16), "not a numeric image"),
        "longer": (_xz_npy(npy((2, 2), "<u2"), b"\0" * 9), "more data than its header announces"),
        "short": (_xz_npy(npy((2, 2), "<u2"), b"\0" * 7), "truncated image"),
        "damaged": (_xz_npy(npy((2, 2), "<u2"), b"\0" * 8)[:-9], "is not a .npy image"),
        "not_npy": (lzma.compress(b"hello world, not an image"), "bad magic"),
        # a 4 GiB run of zeros compresses to a few hundred kB: only the header's size is read
        "bomb": (lzma.compress(npy((4, 4), "<u1") + b"\0" * (64 << 20)), "more data than its header announces"),
    }
    for name, (data, why) in cases.items():
        path = tmp_path / f"{name}.npy.xz"
        path.write_bytes(data)
        with pytest.raises(ScenarioError, match=why):
            bundle.load_npy("bundle", str(path))
    good = tmp_path / "good.npy.xz"
    buf = io.BytesIO()
    np.save(buf, np.arange(24, dtype=np.uint16).reshape(2, 3, 4))
    good.write_bytes(lzma.compress(buf.getvalue()))
    assert np.array_equal(bundle.load_npy("bundle", str(good)), np.arange(24, dtype=np.uint16).reshape(2, 3, 4))


def test_version_1_bundles_are_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A version 1 bundle (plain .npy images) is read and re-judged; an unknown version is
    refused with one line."""
    out = tmp_path / "out"
    cases = suite()
    runner.run_suite(cases, None, str(out), None, opener=Opener())
    summary = json.loads((out / "summary.json").read_text())
    summary["version"] = 1
    (out / "summary.json").write_text(json.dumps(summary))
    for case_json in (out / "cases").glob("*/case.json"):
        doc = json.loads(case_json.read_text())
        for image in doc["images"]:
            if image["npy"]:
                xz = case_json.parent / image["npy"]
                (case_json.parent / f"{image['name']}.npy").write_bytes(lzma.decompress(xz.read_bytes()))
                xz.unlink()
                image["npy"] = f"{image['name']}.npy"
        case_json.write_text(json.dumps(doc))
    monkeypatch.setattr("vk_tests.cli.all_cases", lambda: cases)
    status, text, _ = call(capsys, "vk", "check", str(out))
    assert status == 0 and text.splitlines()[-1] == "10 same, 0 differ, 0 unknown, 0 unchecked"
    summary["version"] = 3
    (out / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(ScenarioError, match="bundle version 3; this turnip-fdm reads versions 1, 2"):
        bundle.load_bundle(str(out))


# ---- JUnit and the closing line ----------------------------------------------------------------

def test_junit_is_valid_xml_whatever_the_messages(tmp_path: Path) -> None:
    def nasty(dev: Any, scene: Scene) -> CaseOutput:
        raise RuntimeError('<&"> \x00\x1b[31m\ud800 driver said: ]]>')

    runner.run_suite([fake_case("host.fake.nasty", nasty, False)], None, str(tmp_path / "o"), None)
    root = parse_junit(tmp_path / "o" / "junit.xml")
    failure = root.find("testcase/failure")
    assert failure is not None and failure.get("message", "").startswith('RuntimeError: <&"> ??[31m? driver')
    assert junit.split_name("replay.offset.x_8.y_-8") == ("replay.offset", "x_8.y_-8")


@pytest.mark.parametrize(("counts", "line"), [
    ({"Pass": 3, "Fail": 0, "NotSupported": 2, "QualityWarning": 0, "NotRun": 0},
     "3 passed, 0 failed, 2 not supported"),
    ({"Pass": 0, "Fail": 1, "NotSupported": 0, "QualityWarning": 2, "NotRun": 0},
     "0 passed, 1 failed, 0 not supported, 2 quality warning"),
    ({"Pass": 1, "Fail": 0, "NotSupported": 0, "QualityWarning": 0, "NotRun": 4},
     "1 passed, 0 failed, 0 not supported, 4 not run"),
])
def test_closing_line(counts: dict[str, int], line: str) -> None:
    assert bundle.closing_line(counts) == line


# ---- the command line ----------------------------------------------------------------------------

def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture()
def fake_suite(monkeypatch: pytest.MonkeyPatch) -> Iterator[Opener]:
    opener = Opener()
    monkeypatch.delenv("TURNIP_FDM_DEVICE", raising=False)
    monkeypatch.setattr("vk_tests.cli.all_cases", suite)
    monkeypatch.setattr("vk_tests.suite.runner.open_validated", opener)
    monkeypatch.setattr("vk_tests.suite.runner.list_devices", lambda: ["fakepipe"])  # what --device is checked on
    yield opener


def test_cli_list(capsys: pytest.CaptureFixture[str], fake_suite: Opener) -> None:
    status, out, err = call(capsys, "vk", "list", "--backend", "host")
    assert (status, err) == (0, "") and out.splitlines() == ["host.fake.pass  host    fake host.fake.pass", "1 case(s)"]
    status, out, _ = call(capsys, "vk", "list", "--filter", "*.fake.[fo]*")
    assert out.splitlines()[-1] == "2 case(s)" and "replay.fake.oom" in out


def test_cli_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_suite: Opener) -> None:
    out_dir = tmp_path / "b"
    status, out, err = call(capsys, "vk", "run", "--backend", "replay", "--out", str(out_dir))
    assert status == 1 and err == ""  # stderr is not a terminal: no progress bar
    lines = out.splitlines()
    assert lines[0] == f"device: {INFO.describe()}"
    assert "Fail  replay.fake.raises: RuntimeError: bad thing" in lines
    assert lines[-1] == "2 passed, 5 failed, 1 not supported, 1 quality warning"
    assert json.loads((out_dir / "summary.json").read_text())["closing_line"] == lines[-1]
    status, out, _ = call(capsys, "vk", "run", "--filter", "*.pass", "--device", "0", "--out", str(out_dir))
    assert status == 0 and out.splitlines()[-1] == "2 passed, 0 failed, 0 not supported"


def test_cli_run_ctrl_c(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vk_tests.cli.all_cases",
                        lambda: suite()[:1] + [fake_case("host.fake.ctrl_c", interrupted, False)] + suite()[1:2])
    monkeypatch.setattr("vk_tests.suite.runner.open_validated", Opener())
    status, out, err = call(capsys, "vk", "run", "--out", str(tmp_path / "b"))
    assert status == 130 and err == "turnip-fdm: interrupted\n"
    assert out.splitlines()[-1] == "1 passed, 0 failed, 0 not supported, 2 not run"
    parse_junit(tmp_path / "b" / "junit.xml")


@pytest.mark.parametrize(("argv", "field", "words"), [
    (["vk"], "vk", "needs a sub-command"),
    (["vk", "run", "--backend", "gpu"], "--backend", "must be one of host, replay, fdm, fsr"),
    (["vk", "list", "--filter", "nothing.*"], "--filter", "no case matches"),
    (["vk", "run", "--backend", "fsr"], "--backend", "no case matches backend fsr"),
    (["vk", "run", "--bogus"], "arguments", "--bogus"),
    (["vk", "check"], "arguments", "BUNDLE"),
    (["vk", "check", "/nonexistent/bundle"], "bundle", "not a directory"),
])
def test_cli_refusals(capsys: pytest.CaptureFixture[str], fake_suite: Opener, argv: list[str], field: str,
                      words: str) -> None:
    status, out, err = call(capsys, *argv)
    assert status == 2 and out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"turnip-fdm: error: {field}") and words in lines[0], err


def test_cli_out_refusals(capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_suite: Opener) -> None:
    (tmp_path / "file").write_text("x")
    status, out, err = call(capsys, "vk", "run", "--out", str(tmp_path / "file"))
    assert status == 2 and out == "" and err.startswith("turnip-fdm: error: --out:")
    assert "not a directory" in err.lower()
    assert fake_suite.opened == []  # refused before any device was opened


# ---- on the real device ----------------------------------------------------------------------------

@pytest.mark.vulkan
def test_vk_run_host_and_replay_on_the_device(vk_ctx: Any, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    out_dir = tmp_path / "bundle"
    status, out, err = call(capsys, "vk", "run", "--backend", "host", "--backend", "replay", "--out", str(out_dir))
    assert status == 0, out + err
    summary = json.loads((out_dir / "summary.json").read_text())
    n = len(suite_selection.select(registry.all_cases(), ["host", "replay"]))
    assert len(summary["cases"]) == n and summary["counts"]["Fail"] == 0
    assert out.splitlines()[-1] == summary["closing_line"]
    root = parse_junit(out_dir / "junit.xml")
    assert root.get("tests") == str(n)
    status, out, err = call(capsys, "vk", "check", str(out_dir))
    assert status == 0 and out.splitlines()[-1] == f"{n} same, 0 differ, 0 unknown, 0 unchecked", out + err


def test_the_bindings_device_lost_is_recognised() -> None:
    vulkan = pytest.importorskip("vulkan")  # the module imports only where the loader is installed
    ctx = types.SimpleNamespace(vk=vulkan)
    assert runner._is_device_lost(ctx, vulkan.VkErrorDeviceLost())
    assert not runner._is_device_lost(ctx, vulkan.VkErrorOutOfDeviceMemory())
    assert not runner._is_device_lost(None, RuntimeError("no device"))
