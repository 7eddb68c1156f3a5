"""``turnip-fdm layout`` and the demo's pictures: every file is written, well formed and
referenced by index.html; the 512-bin fallback is reported; bad flags are refused with one line
and nothing written."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(REPO, "fdm", "data", "demo.toml")


def run_process(*args):
    """The command as a user runs it: a new interpreter (``python -m turnip_fdm``)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "turnip_fdm", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=300)


def run(*args):
    """The command in this process (``turnip_fdm.cli.main``, what the console script calls)."""
    from turnip_fdm.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return subprocess.CompletedProcess(["turnip-fdm", *args], status, out.getvalue(), err.getvalue())


def check_outputs(out):
    from PIL import Image
    index = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    refs = set(re.findall(r'(?:src|href)="([^"]+)"', index))
    assert refs, "index.html references no picture"
    for ref in refs:
        assert not ref.startswith(("http:", "https:", "/")), ref
        assert os.path.isfile(os.path.join(out, ref)), f"index.html references missing {ref}"
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if name.endswith(".svg"):
            root = ET.parse(path).getroot()
            assert root.tag.endswith("svg")
            assert name in refs
        elif name.endswith(".png"):
            with Image.open(path) as im:
                im.load()
                assert im.size[0] > 100 and im.size[1] > 100
            assert name in refs
    return refs


@pytest.mark.slow  # a whole demo (1920x1920, 2 views): CI and ./dev test only
def test_layout_on_demo_writes_all_pictures(tmp_path):
    out = str(tmp_path / "layout")
    r = run("layout", DEMO, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "subsampled layout: image" in r.stdout
    refs = check_outputs(out)
    for v in (0, 1):
        for stem in ("framebuffer", "subsampled"):
            assert f"{stem}_v{v}.svg" in refs and f"{stem}_v{v}.png" in refs


@pytest.mark.slow  # a whole demo (1920x1920, 2 views): CI and ./dev test only
def test_demo_writes_pictures_and_index(tmp_path):
    out = str(tmp_path / "demo")
    r = run("demo", "--out", out)
    assert r.returncode == 0, r.stderr
    refs = check_outputs(out)
    assert "subsampled_v1.png" in refs
    assert os.path.isfile(os.path.join(out, "plan.json"))


@pytest.mark.slow  # two whole layouts of the demo scenario (1920x1920, 2 views): CI and ./dev test only
def test_no_reconstruction_leaves_out_only_the_c_pictures(tmp_path):
    full, bare = str(tmp_path / "full"), str(tmp_path / "bare")
    r_full = run("layout", DEMO, "--out", full)
    r = run("layout", DEMO, "--out", bare, "--no-reconstruction")
    assert r_full.returncode == 0 and r.returncode == 0, r.stderr
    summary = r.stdout.splitlines()[0]
    assert summary == r_full.stdout.splitlines()[0] + "; reconstruction pictures (c) not drawn (--no-reconstruction)"
    refs = check_outputs(bare)
    c_files = {f"{stem}_v{v}.{ext}" for stem in ("memory", "reconstruction", "error") for v in (0, 1)
               for ext in ("svg", "png")}
    assert c_files <= set(os.listdir(full))
    assert set(os.listdir(bare)) == set(os.listdir(full)) - c_files
    assert not c_files & refs
    # (a), (b) and the layout table are those of the whole command, byte for byte
    for name in os.listdir(bare):
        if name.endswith((".svg", ".png")):
            with open(os.path.join(bare, name), "rb") as a, open(os.path.join(full, name), "rb") as b:
                assert a.read() == b.read(), name
    with open(os.path.join(bare, "layout.txt"), encoding="utf-8") as a, \
            open(os.path.join(full, "layout.txt"), encoding="utf-8") as b:
        assert a.read().split("\n", 1)[1] == b.read().split("\n", 1)[1]


def test_no_reconstruction_with_json_is_refused(tmp_path):
    r = run("layout", DEMO, "--json", "--no-reconstruction")
    assert r.returncode == 2
    assert r.stderr == "turnip-fdm: error: --no-reconstruction: not with --json (which draws no picture)\n"
    assert not r.stdout


def test_more_than_512_bins_falls_back_and_says_so(tmp_path):
    scen = tmp_path / "big.toml"
    scen.write_text('gpu = "a750"\nframebuffer = [2304, 3072]\ntile_size = [96, 128]\nbin_merging = "off"\n'
                    '[density]\n[[density.views]]\ngenerator = "constant"\nsize = [72, 96]\ndensity = 0.5\n')
    out = str(tmp_path / "o")
    r = run("layout", str(scen), "--out", out, "--view", "0")
    assert r.returncode == 0, r.stderr
    assert "exceed TU_SUBSAMPLED_MAX_BINS (512)" in r.stdout
    check_outputs(out)


def test_bad_view_is_refused(tmp_path):
    r = run("layout", DEMO, "--out", str(tmp_path / "o"), "--view", "5")
    assert r.returncode == 2 and r.stderr.startswith("turnip-fdm: error: --view:")
    assert len(r.stderr.splitlines()) == 1 and not r.stdout
    assert not os.path.exists(tmp_path / "o")


def test_out_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    r = run("layout", DEMO, "--out", str(f))
    assert r.returncode == 2 and r.stderr.startswith("turnip-fdm: error: --out:")
    assert len(r.stderr.splitlines()) == 1 and f.read_text() == "x"


def test_layout_help():
    r = run_process("layout", "--help")
    assert r.returncode == 0 and "subsampled" in r.stdout
