"""The command line: plan/demo/check outputs and the bad-input contract (exit status 2, one
line naming the field and the rule, nothing on standard output)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GOOD = """
gpu = "a740"
bin_merging = "off"
framebuffer = [1000, 600]
tile_size = [192, 160]
views = 2
fdm_offset_create_flag = true
fdm_offsets = [[40, -16], [-40, 0]]
[density]
format = "R32G32_SFLOAT"
[[density.views]]
generator = "constant"
size = [32, 20]
density = [0.5, 0.5]
"""


def run_process(*args, cwd=REPO):
    """The command as a user runs it: a new interpreter (``python -m turnip_fdm``)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "turnip_fdm", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=120)


def run(*args):
    """The command in this process (``turnip_fdm.cli.main``, what the console script calls): the
    same status and output as :func:`run_process` without starting an interpreter per case."""
    from turnip_fdm.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return subprocess.CompletedProcess(["turnip-fdm", *args], status, out.getvalue(), err.getvalue())


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_help_on_every_subcommand():
    r = run_process("--help")
    assert r.returncode == 0 and "plan" in r.stdout and "demo" in r.stdout
    for sub in ("plan", "demo", "check"):
        with pytest.raises(SystemExit) as e:   # argparse's --help: printed, then exit 0
            run(sub, "--help")
        assert e.value.code == 0


def test_plan_table(tmp_path):
    r = run("plan", write(tmp_path, GOOD))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("scenario: a740, framebuffer 1000x600, 2 view(s), tile 192x160")
    # one line per rendered tile and view: b_o = (152,16) and (40,0) leave columns 0-5 and rows
    # 0-3 of the 7x5 grid visible: 24 tiles x 2 views, plus 4 header lines
    assert len(lines) == 4 + 24 * 2
    assert "40,-16" in lines[1]


def test_plan_json_fields(tmp_path):
    r = run("plan", write(tmp_path, GOOD), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["tile_size"] == [192, 160] and doc["tile_count"] == [7, 5]
    t = next(t for t in doc["tiles"] if t["pos"] == [1, 1])
    assert t["extent"] == [1, 1]
    v0, v1 = t["views"]
    for key in ("bin", "frag_area", "offset", "hw_offset", "lrz", "visible"):
        assert key in v0
    assert v0["bin"] == [40, 144, 192, 160] and v0["frag_area"] == [2, 2]
    assert v0["offset"] == [172, 88] and v0["hw_offset"] == [96, 80]
    assert v0["lrz"] is True and v0["visible"] is True
    assert v1["bin"][0] == 192 - 40


def test_plan_out_dir(tmp_path):
    out = tmp_path / "o"
    r = run("plan", write(tmp_path, GOOD), "--out", str(out))
    assert r.returncode == 0 and r.stdout.startswith("wrote 2 files")
    assert json.loads((out / "plan.json").read_text())["gpu"] == "a740"
    assert (out / "plan.txt").read_text().startswith("scenario: a740")


@pytest.mark.slow  # a whole demo (1920x1920, 2 views): CI and ./dev test only
def test_demo(tmp_path):
    r = run("demo", "--out", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    assert "vr-a750-foveated: a750" in r.stdout
    doc = json.loads((tmp_path / "demo" / "plan.json").read_text())
    assert doc["views"] == 2 and doc["fdm_offsets"] == [[40, -24], [-56, -24]]
    # the two eyes have different foveas: some tile differs in fragment area between views
    assert any(t["views"][0]["frag_area"] != t["views"][1]["frag_area"] for t in doc["tiles"])


def test_check(tmp_path):
    r = run("check", write(tmp_path, GOOD))
    assert r.returncode == 0 and "valid" in r.stdout


BAD = [
    # (name, mutation of GOOD or full text, expected field, words of the rule)
    ("missing_gpu", GOOD.replace('gpu = "a740"\n', ""), "gpu", "required"),
    ("wrong_type", GOOD.replace("views = 2", 'views = "two"'), "views", "integer"),
    ("negative_size", GOOD.replace("[1000, 600]", "[-1000, 600]"), "framebuffer[0]", ">= 1"),
    ("zero_size", GOOD.replace("[1000, 600]", "[1000, 0]"), "framebuffer[1]", ">= 1"),
    ("fb_too_large", GOOD.replace("[1000, 600]", "[16385, 600]"), "framebuffer[0]", "<= 16384"),
    ("offset_not_multiple_of_8", GOOD.replace("[40, -16]", "[41, -16]"), "fdm_offsets[0][0]", "multiple of"),
    ("offset_out_of_range", GOOD.replace("[40, -16]", "[40, -16400]"), "fdm_offsets[0][1]", ">= -16384"),
    ("too_many_views", GOOD.replace("views = 2", "views = 7").replace("fdm_offsets = [[40, -16], [-40, 0]]", ""),
     "views", "<= 6"),
    ("density_above_1", GOOD.replace("density = [0.5, 0.5]", "density = [1.5, 0.5]"), "density.views[0].density",
     "[0, 1]"),
    ("density_negative", GOOD.replace("density = [0.5, 0.5]", "density = [-0.5, 0.5]"), "density.views[0].density",
     "[0, 1]"),
    ("density_nan", GOOD.replace("density = [0.5, 0.5]", "density = [nan, 0.5]"), "density.views[0].density", "NaN"),
    ("unknown_gpu", GOOD.replace('"a740"', '"a999"'), "gpu", "unknown GPU"),
    ("tile_not_aligned", GOOD.replace("[192, 160]", "[100, 160]"), "tile_size", "multiple of"),
    ("offsets_without_flag", GOOD.replace("fdm_offset_create_flag = true", "fdm_offset_create_flag = false"),
     "fdm_offsets", "create_flag"),
    ("offsets_count", GOOD.replace("[[40, -16], [-40, 0]]", "[[40, -16]]"), "fdm_offsets",
     "one [x, y] offset per view"),
    ("malformed_toml", GOOD.replace("views = 2", "views = = 2"), "scenario", "not valid TOML"),
    ("unknown_field", "bogus = 1\n" + GOOD, "bogus", "unknown field"),
    ("unknown_generator", GOOD.replace('"constant"', '"spiral"'), "density.views[0].generator", "unknown generator"),
    ("render_area_outside", GOOD.replace("views = 2", "views = 2\nrender_areas = [[0, 0, 2000, 600]]"),
     "render_areas[0]", "inside"),
    ("merging_variant", GOOD.replace('bin_merging = "off"', 'bin_merging = "all"'), "bin_merging", "one of"),
]


@pytest.mark.parametrize("name,text,field,rule", BAD, ids=[b[0] for b in BAD])
def test_bad_scenario_exit_2_one_line(tmp_path, name, text, field, rule):
    r = run("plan", write(tmp_path, text), "--json")
    assert r.returncode == 2
    assert r.stdout == ""                                 # no partial output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1, r.stderr                        # one line, no traceback
    assert err[0].startswith(f"turnip-fdm: error: {field}: "), err[0]
    assert rule in err[0]


def test_bad_json_and_extension(tmp_path):
    r = run("plan", write(tmp_path, "{", "s.json"))
    assert r.returncode == 2 and "not valid JSON" in r.stderr
    r = run("plan", write(tmp_path, GOOD, "s.yaml"))
    assert r.returncode == 2 and ".toml or .json" in r.stderr
    r = run("plan", str(tmp_path / "missing.toml"))
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_bad_input_leaves_no_output_file(tmp_path):
    out = tmp_path / "planout"
    r = run("plan", write(tmp_path, GOOD.replace("[40, -16]", "[41, -16]")), "--out", str(out))
    assert r.returncode == 2 and not out.exists()
