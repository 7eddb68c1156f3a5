"""The shell (``turnip_fdm.cli``): every sub-command registered explicitly, one error contract
for all of them, limits checked before allocating, and a fuzz run of the contract."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fdm
from turnip_base.errors import DriverAssertion, NotModelled, NotSupported, ScenarioError
from turnip_fdm import cli


def _load_fuzz() -> Any:
    """The fuzzer, a test tool (tests/tools/fuzz.py), loaded from its file."""
    path = Path(__file__).resolve().parents[1] / "tools" / "fuzz.py"
    spec = importlib.util.spec_from_file_location("fuzz_tool", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_tool"] = module
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzz()

REPO = Path(__file__).resolve().parents[2]
SUBCOMMANDS = ("plan", "check", "layout", "demo", "diff", "mipmap", "vk")
SMALL = {"gpu": "a650", "framebuffer": [640, 480], "views": 1,
         "density": {"views": [{"values": [[1.0, 0.5, 0.25], [0.5, 0.25, 1.0]]}]}}


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_error_line(err: str, field: str, words: str = "", label: str = "error") -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"turnip-fdm: {label}: {field}"), lines[0]
    assert words in lines[0], lines[0]


def scenario_file(tmp_path: Path, d: object, name: str = "s.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


# ---------------------------------------------------------------------------------------------
# registration

@pytest.mark.parametrize("how", [["-m", "turnip_fdm"], ["-c", "from turnip_fdm.cli import run; run()"]])
def test_help_lists_every_subcommand(how: list[str]) -> None:
    r = subprocess.run([sys.executable, *how, "--help"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    for sub in SUBCOMMANDS:
        assert f"    {sub}" in r.stdout, (sub, r.stdout)


def test_console_script_help() -> None:
    exe = Path(sys.executable).with_name("turnip-fdm")
    if not exe.exists():
        pytest.skip("console script not installed next to this interpreter")
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and all(f"    {s}" in r.stdout for s in SUBCOMMANDS)


@pytest.mark.parametrize("module", ["fdm.cli", "vk_tests.cli"] + [   # one interpreter each: the rest in ./dev test
    pytest.param(m, marks=pytest.mark.slow) for m in ("layout_solver.cli", "mipmap.cli", "turnip_fdm.demo",
                                                      "turnip_fdm.diff")])
def test_unimportable_subcommand_fails_loudly(module: str) -> None:
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            "from turnip_fdm.cli import main; sys.exit(main(['--help']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == ""
    one_error_line(r.stderr, "", module, label="internal error")


# ---------------------------------------------------------------------------------------------
# one contract for every sub-command

def test_argparse_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = call(capsys)
    assert status == 2 and out == ""
    one_error_line(err, "arguments", "required")
    status, out, err = call(capsys, "frobnicate")
    assert status == 2
    one_error_line(err, "COMMAND", "invalid choice")
    for sub in ("plan", "check", "layout"):
        status, out, err = call(capsys, sub)
        assert status == 2 and out == ""
        one_error_line(err, "arguments", "scenario")
        status, out, err = call(capsys, sub, "x.toml", "--bogus")
        assert status == 2
        one_error_line(err, "arguments", "--bogus")
    status, out, err = call(capsys, "demo", "--bogus")
    assert status == 2
    one_error_line(err, "arguments", "--bogus")
    status, out, err = call(capsys, "mipmap", "run", "--size", "a", "3")
    assert status == 2
    one_error_line(err, "--size", "")


def test_mipmap_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = call(capsys, "mipmap")
    assert status == 2
    one_error_line(err, "mipmap", "sub-command")
    status, _, err = call(capsys, "mipmap", "run", "--size", "4", "4", "--format", "bgr5")
    assert status == 2
    one_error_line(err, "format", "one of")
    status, _, err = call(capsys, "mipmap", "run", "--size", "4", "4", "--algorithm", "magic")
    assert status == 2
    one_error_line(err, "algorithm", "one of")


def test_layout_refusals(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    s = scenario_file(tmp_path, SMALL)
    out_dir = tmp_path / "lay"
    status, out, err = call(capsys, "layout", s, "--out", str(out_dir), "--view", "3")
    assert status == 2 and out == "" and not out_dir.exists()
    one_error_line(err, "--view", "[0, 0]")
    (tmp_path / "afile").write_text("x")
    status, out, err = call(capsys, "layout", s, "--out", str(tmp_path / "afile"))
    assert status == 2 and (tmp_path / "afile").read_text() == "x"
    one_error_line(err, "--out", "Not a directory")


def test_out_paths(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    s = scenario_file(tmp_path, SMALL)
    (tmp_path / "existing").write_text("x")
    status, _, err = call(capsys, "plan", s, "--out", str(tmp_path / "existing"))
    assert status == 2 and (tmp_path / "existing").read_text() == "x"
    one_error_line(err, "--out", "Not a directory")
    status, _, err = call(capsys, "plan", s, "--out", str(tmp_path / ("d" * 300) / "x.json"))
    assert status == 2
    one_error_line(err, "--out", "longer than")
    status, _, err = call(capsys, "plan", s, "--out", "/proc/turnip-fdm-test/x.json")
    assert status == 2
    one_error_line(err, "--out", "")
    status, _, err = call(capsys, "demo", "--out", s)
    assert status == 2
    one_error_line(err, "--out", "Not a directory")
    assert sorted(os.listdir(tmp_path)) == ["existing", "s.json"]   # nothing written, no *.tmp


@pytest.mark.parametrize(("exc", "line"), [
    (ScenarioError("density.views[0]", "bad"), "turnip-fdm: error: density.views[0]: bad"),
    (DriverAssertion("tu_fdm_per_bin_offset", "bin start not a multiple"),
     "turnip-fdm: error: tu_fdm_per_bin_offset: bin start not a multiple"),
    (NotModelled("render_mode", "sysmem\nrendering"), "turnip-fdm: error: render_mode: sysmem rendering"),
    (NotSupported("VK_EXT_fragment_density_map"), "turnip-fdm: not supported: VK_EXT_fragment_density_map"),
])
def test_refusals_map_to_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                  tmp_path: Path, exc: Exception, line: str) -> None:
    def boom(path: str, variants: object = ()) -> None:
        raise exc
    monkeypatch.setattr("fdm.cli.load_and_plan", boom)
    status, out, err = call(capsys, "plan", scenario_file(tmp_path, SMALL))
    assert (status, out, err) == (2, "", line + "\n")


def test_unexpected_exception_one_line_and_traceback_flag(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def boom(path: str, variants: object = ()) -> None:
        raise KeyError("a model bug")
    monkeypatch.setattr("fdm.cli.load_and_plan", boom)
    s = scenario_file(tmp_path, SMALL)
    status, out, err = call(capsys, "plan", s)
    assert status == 1 and out == ""
    one_error_line(err, "KeyError", "--traceback", label="internal error")
    status, out, err = call(capsys, "plan", s, "--traceback")
    assert status == 1 and "Traceback (most recent call last)" in err and "a model bug" in err


def test_check_runs_exactly_the_validation_of_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # valid schema, but the tile size is not a multiple of the *pass* alignment (a630 doubles
    # tile_align_h for a 2-view pass: 32x16 -> 32x32): plan refuses, so check must refuse too
    d = dict(SMALL, gpu="a630", views=2, tile_size=[32, 16])
    s = scenario_file(tmp_path, d)
    st_plan, _, err_plan = call(capsys, "plan", s)
    st_check, _, err_check = call(capsys, "check", s)
    assert st_plan == st_check == 2 and err_plan == err_check
    one_error_line(err_check, "tile_size", "pass tile alignment")
    # attachments that do not fit GMEM: turnip renders in sysmem; both plan it and say why
    d = dict(SMALL, attachments=[{"cpp": 16, "samples": 8}] * 8, framebuffer=[4000, 4000],
             density={"views": [{"generator": "constant", "size": [125, 125], "density": 1.0}]})
    s = scenario_file(tmp_path, d)
    st_plan, out_plan, _ = call(capsys, "plan", s, "--json")
    st_check, out_check, _ = call(capsys, "check", s)
    doc = json.loads(out_plan)
    assert st_plan == st_check == 0
    assert doc["render_mode"] == "sysmem" and doc["sysmem_reason"] == "Can't fit attachments into gmem"
    assert "rendered in sysmem" in out_check


# ---------------------------------------------------------------------------------------------
# limits, checked before allocating

def _plan_error(tmp_path: Path, d: object, name: str = "s.json") -> str:
    with pytest.raises(ScenarioError) as e:
        fdm.load_scenario(scenario_file(tmp_path, d, name))
    return str(e.value)


def test_limits(tmp_path: Path) -> None:
    gen = {"generator": "constant", "size": [16384, 16384], "density": 0.5}
    assert "<= 4096" in _plan_error(tmp_path, dict(SMALL, density={"views": [gen]}))
    assert "int32 range" in _plan_error(tmp_path, dict(SMALL, views=10 ** 400))
    vp = dict(SMALL, viewports=[[1e30, 0, 10, 10]], scissors=[[0, 0, 1, 1]])
    assert "viewportBoundsRange" in _plan_error(tmp_path, vp)
    for bad in ("0.5", True, None, [0.5, "x"]):
        d = dict(SMALL, density={"views": [{"values": [[bad, 1.0]]}]})
        assert "density" in _plan_error(tmp_path, d)
    deep = "[" * 1000 + "]" * 1000
    (tmp_path / "deep.json").write_text('{"gpu": "a650", "x": ' + deep + "}")
    with pytest.raises(ScenarioError, match="nest"):
        fdm.load_scenario(str(tmp_path / "deep.json"))
    (tmp_path / "deep.toml").write_text("x = " + deep + "\n")
    with pytest.raises(ScenarioError, match="nest"):
        fdm.load_scenario(str(tmp_path / "deep.toml"))


def test_lying_images_refused_before_decoding(tmp_path: Path) -> None:
    (tmp_path / "bomb.png").write_bytes(fuzz._png_header(60000, 100000))
    (tmp_path / "huge.npy").write_bytes(fuzz._npy((50000, 50000, 2), "<f8"))
    np.save(tmp_path / "complex.npy", np.zeros((20, 32, 2), np.complex128))
    (tmp_path / "big.png").write_bytes(fuzz._png_header(5000, 5000))
    for name, words in (("bomb.png", "60000x100000 texels"), ("big.png", "5000x5000"), ("huge.npy", "50000x50000"),
                        ("complex.npy", "complex")):
        d = dict(SMALL, density={"views": [{"image": name}]})
        assert words in _plan_error(tmp_path, d), name


def test_make_scenario_same_rules_as_files(tmp_path: Path) -> None:
    sc = fdm.make_scenario(**SMALL)
    assert sc.framebuffer == (640, 480)
    assert fdm.plan_render_pass(sc).tiles
    with pytest.raises(ScenarioError, match="framebuffer"):
        fdm.make_scenario(**dict(SMALL, framebuffer=(0, 4)))


# ---------------------------------------------------------------------------------------------
# fuzz: a bounded run in the suite (./dev fuzz runs 10,000)

def test_fuzz_contract_holds() -> None:
    n = 150 if os.environ.get("TURNIP_FDM_FAST") else 600
    outcomes = fuzz.fuzz(n, seed=1234, timeout=60.0)
    bad = [(o.case.kind, list(o.case.argv), o.problem) for o in outcomes if o.problem]
    assert not bad, bad[:5]
    statuses = {o.status for o in outcomes}
    assert 2 in statuses  # the mutations are refused, not silently accepted


def test_fuzz_detects_a_planted_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fuzz oracle itself can fail: a scenario reader that crashes is reported
    def crash(*a: object, **k: object) -> None:
        raise RuntimeError("planted")
    monkeypatch.setattr("fdm.cli.load_and_plan", crash)
    outcomes = fuzz.fuzz(20, seed=1)
    assert any("internal error" in o.problem for o in outcomes)


@pytest.mark.parametrize("make", [
    lambda rng: fuzz._stdout_case(rng, "stdout-closed"), lambda rng: fuzz._stdout_case(rng, "stdout-full"),
    fuzz._sigint_case, fuzz._unwritable_case, fuzz._big_case,
])
def test_fuzz_user_conditions_one_each(make: Any, tmp_path: Path) -> None:
    """One case of each of the user's own conditions, as the fuzzer runs them (real processes
    for standard output and Ctrl-C): the contract holds."""
    import random

    case = make(random.Random(3))
    outcome = fuzz.run_case(case, str(tmp_path), timeout=60.0)
    assert outcome.problem == "", (case.kind, outcome.problem)


@pytest.mark.parametrize(("status", "stderr", "sent", "words"), [
    (1, "Traceback (most recent call last):\n  File \"/x/turnip_fdm/cli.py\"\nKeyboardInterrupt\n", True, "traceback"),
    (130, "turnip-fdm: interrupted\nExtra\n", True, "without exactly the one line"),
    (1, "turnip-fdm: internal error: OSError: [Errno 28]\n", False, "exit 1"),
    (0, "", False, "standard output full, but exit 0"),
])
def test_fuzz_process_judge_can_fail(tmp_path: Path, status: int, stderr: str, sent: bool, words: str) -> None:
    case = fuzz.Case(kind="k", argv=("plan", "s.json"), mode="stdout-full" if "full" in words else "sigint")
    assert words in fuzz._judge_process(case, status, "", stderr, str(tmp_path), set(), sent)


def test_fuzz_counts_a_signal_in_pythons_start_up_apart() -> None:
    site_traceback = "Traceback (most recent call last):\n  File \"/usr/lib/python3/site.py\"\nKeyboardInterrupt\n"
    assert fuzz._in_startup(-2, "") and fuzz._in_startup(1, site_traceback)
    assert not fuzz._in_startup(1, site_traceback.replace("/usr/lib/python3/site.py", "/r/turnip_fdm/cli.py"))


def test_variant_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``--variant NAME=VALUE`` on plan/check/layout selects a driver variant; bad ones are refused."""
    s = scenario_file(tmp_path, SMALL)
    status, out, _ = call(capsys, "plan", s, "--json", "--variant", "tu_emit_subsampled=tencentmalos-16ad8431",
                          "--variant", "bin_merging=off")
    doc = json.loads(out)
    assert status == 0 and doc["driver"]["tu_emit_subsampled"] == "tencentmalos-16ad8431"
    assert doc["bin_merging"] == "off" and doc["driver"]["tu_calc_tile_config"] == "upstream"
    for bad, field, words in (("nonsense", "--variant", "NAME=VALUE"), ("frob=1", "--variant", "unknown NAME"),
                              ("tu_emit_subsampled=mine", "driver.tu_emit_subsampled", "one of")):
        for sub in ("plan", "check", "layout"):
            status, out, err = call(capsys, sub, s, "--variant", bad)
            assert status == 2 and out == ""
            one_error_line(err, field, words)


def test_fuzz_bases_are_valid_and_cover_both_render_modes() -> None:
    """The fuzzer mutates valid scenarios: each base plans, GMEM and sysmem both occur."""
    kinds = {type(fdm.plan_render_pass(fdm.parse_scenario(d))).__name__ for d in fuzz._base_scenarios()}
    assert kinds == {"RenderPassPlan", "SysmemPlan"}
