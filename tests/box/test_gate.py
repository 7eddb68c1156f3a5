"""The box as a gate: it fails when it should, says what it compared, and its verdicts do not
depend on how many workers ran them (needs the box: ``turnip-fdm box setup``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import fdm
from fdm.scenario import decode_scenario_text
from turnip_base.errors import EXIT_FAILURE, EXIT_NOTHING_COMPARED, DriverAssertion
from turnip_box.check import AGREE, MODEL_REFUSED, check, exit_status, items_of
from turnip_box.generate import generated_scenarios
from turnip_box.root import Box
from turnip_fdm import cli


def _toml(text: str) -> Any:
    return decode_scenario_text(text, "toml")


ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fdm/data/demo.toml")
pytestmark = pytest.mark.box




def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "turnip_fdm", *argv], cwd=ROOT, capture_output=True, text=True,
                          env=env)


def test_a_non_driver_is_an_error_before_any_scenario(box: Box) -> None:
    r = _cli("box", "check", DEMO, "--driver", "/etc/passwd")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == "" and r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert r.stderr.startswith("turnip-fdm: error: --driver: /etc/passwd did not open"), r.stderr


def test_a_model_that_refuses_every_pass_fails(box: Box, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(sc: fdm.Scenario) -> None:
        raise DriverAssertion("planted", "the model refuses every pass")

    monkeypatch.setattr(fdm, "plan_render_pass", refuse)
    # in this process, and in workers forked from it: the planted model is the one compared
    for jobs in ("1", "2"):
        status = cli.main(["box", "check", DEMO, "examples/vr_foveation.toml", "examples/msaa.toml", "--jobs", jobs])
        out = capsys.readouterr().out
        assert status == EXIT_FAILURE, out
        assert "3 model refused" in out and "the model refused: planted" in out


def test_nothing_compared_is_its_own_status(box: Box) -> None:
    r = _cli("box", "check", "docs/findings/d_merge_fixed.toml")  # a fork's bin merging: not supported
    assert r.returncode == EXIT_NOTHING_COMPARED, r.stdout + r.stderr
    assert "nothing compared" in r.stdout.splitlines()[-1]
    r = _cli("box", "check", DEMO, "--shard", "2/2")  # a shard with nothing in it
    assert r.returncode == EXIT_NOTHING_COMPARED and "is empty" in r.stdout


def test_tu_debug_is_refused_naming_the_scenario_key(box: Box) -> None:
    r = _cli("box", "check", DEMO, env={**os.environ, "TU_DEBUG": "nobinmerging"})
    assert r.returncode == 2 and "tu_debug" in r.stderr and r.stdout == ""


def test_the_driver_and_what_was_compared_are_named(box: Box, tmp_path: Path) -> None:
    junit = tmp_path / "j.xml"
    r = _cli("box", "check", DEMO, "--gpu", "a750", "--junit", str(junit),
             env={**os.environ, "MESA_NO_ERROR": "0"})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("driver: the box's (") and "Mesa" in lines[0] and "MESA_NO_ERROR=0" in lines[0]
    assert lines[-1].startswith("1 agree, 0 differ, 0 not supported: 1 of 1 scenario runs compared, ")
    assert " bins, " in lines[-1] and " values, in " in lines[-1]
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["env.MESA_NO_ERROR"] == "0" and props["mesa"] == box.mesa_version


def test_jobs_do_not_change_the_verdicts(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    items = items_of(generated_scenarios(72, 20), [])
    one = check(box, items, jobs=1, detail=False)
    two = check(box, items, jobs=2, detail=False)
    assert [(o.item.name, o.status, o.differences, o.compared) for o in one] == \
        [(o.item.name, o.status, o.differences, o.compared) for o in two]
    assert sum(o.status == AGREE for o in one) >= 60
    # a planted bug is seen by the forked workers too
    monkeypatch.setattr(fdm, "plan_render_pass", lambda sc: (_ for _ in ()).throw(DriverAssertion("x", "y")))
    assert {o.status for o in check(box, items[:30], jobs=2, detail=False)} <= {MODEL_REFUSED, "not supported"}
    assert exit_status(check(box, items[:30], jobs=2, detail=False)) == EXIT_FAILURE


def test_kept_scenarios_are_files_box_plan_accepts(box: Box, tmp_path: Path) -> None:
    r = _cli("box", "check", "--generated", "3", "--seed", "5", "--gpu", "a730", "--keep", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    kept = sorted((tmp_path / "scenarios").glob("*.toml"))
    assert [p.name for p in kept] == [f"gen5-0000{i}.a730.toml" for i in range(3)]
    assert _toml(kept[0].read_text())["gpu"] == "a730"
    p = _cli("box", "plan", str(kept[0]))
    assert p.returncode == 0 and "gen5-00000.a730 on a730: agree" in p.stdout, p.stdout + p.stderr


def _default_sigint() -> None:
    """In the child: Ctrl-C's default action, not an ignored SIGINT inherited from a test run
    started in the background (`cmd &` in a script), which the command rightly keeps ignoring."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_prints_the_counts_so_far_and_the_junit(box: Box, tmp_path: Path) -> None:
    junit = tmp_path / "j.xml"
    # 2,000 runs take over a minute on 2 cores: the interrupt lands mid-run however fast the box
    # is; unbuffered, so that the first line arrives when it is printed (a pipe buffers it)
    proc = subprocess.Popen([sys.executable, "-m", "turnip_fdm", "box", "check", "--generated", "2000", "--jobs", "2",
                             "--junit", str(junit)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=_default_sigint)
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait for the run to start comparing
        if proc.stdout.readline().startswith("box check:"):
            break
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "turnip-fdm: interrupted", err
    last = out.strip().splitlines()[-1]
    assert last.startswith("interrupted after ") and " agree, " in last, out
    suite = ET.parse(junit).getroot()
    assert 0 < int(suite.get("tests", "0")) < 2000
    # and no box process outlives it (each runs in a session of its own, out of Ctrl-C's reach)
    assert _box_processes_gone(), _record_processes()


def _record_processes() -> list[str]:
    """The command lines of the scenario recorders now running in the box (not ``--info`` probes)."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "turnip_box.record" in cmd and "--info" not in cmd:
            out.append(f"{d.name}: {cmd[-120:]}")
    return out


def _box_processes_gone(timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while _record_processes():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_gmem_pass_that_renders_no_bin_reads_as_none(box: Box) -> None:
    # box sweep seed 2611 (as drawn before a8xx joined the GPUs): one 1024x1024 tile, merging off, no
    # visible bin, no binning pass: turnip emits no render-mode marker at all (not a sysmem pass: that one
    # would be there)
    sc = fdm.load_scenario(str(ROOT / "tests" / "box" / "data" / "gen2611-00183.toml"))
    (o,) = check(box, items_of([("gen2611-00183", sc)], ["a730"]))
    assert o.status == AGREE, [d.line() for d in o.differences]
    assert o.driver is not None and o.driver.render_mode == "none"
    assert o.plan is not None and o.plan.render_mode == "gmem" and not o.plan.tiles and not o.plan.binning_pass


def test_the_a8xx_lrz_fast_clear_size_keeps_the_tile_uncapped(box: Box) -> None:
    # the commit-seeded CI sweep's first find: a 4-view a830 pass with the FDM-offset flag; turnip's
    # fd_lrzfc_layout<A8XX>::FC_SIZE is 2048 bytes, so fast clear survives and no tile cap applies
    name = "gen166008712-00146"
    sc = fdm.load_scenario(str(ROOT / "tests/box/data" / f"{name}.toml"))
    (o,) = check(box, items_of([(name, sc)], ["a830"]))
    assert o.status == AGREE, [d.line() for d in o.differences][:5]
    assert o.plan is not None and tuple(o.plan.tiling.tile_size) == (576, 960)
