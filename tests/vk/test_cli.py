"""`turnip-fdm mipmap ...` through mipmap.cli (its own parser; the lead's CLI registers the same)."""
import argparse
import subprocess
import sys

import pytest

from mipmap import cli


def run_cli(*argv, env=None):
    return subprocess.run([sys.executable, "-m", "mipmap.cli", "mipmap", *argv], capture_output=True, text=True,
                          env=env, timeout=300)


def test_register_adds_the_subcommand():
    parser = argparse.ArgumentParser(prog="turnip-fdm")
    sub = parser.add_subparsers()
    cli.register(sub)
    args = parser.parse_args(["mipmap", "run", "--size", "8", "4", "--format", "r32f", "--algorithm", "spd"])
    assert args.size == [8, 4] and args.func is cli.handle_run


def test_run_matches_on_the_device(vk_ctx):
    res = run_cli("run", "--size", "37", "21", "--format", "rgba8", "--algorithm", "tiled", "--validation")
    assert res.returncode == 0, res.stderr
    assert "match: worst" in res.stdout and "level  5" in res.stdout


@pytest.mark.parametrize("argv,needle", [
    (["run", "--size", "0", "4"], "size: must be >= 1"),
    (["run", "--size", "4", "x"], "size: must be an integer"),
    (["run", "--size", "4", "4", "--format", "bgr565"], "format: must be one of"),
    (["run", "--size", "4", "4", "--algorithm", "box"], "algorithm: must be one of"),
    (["run", "--size", "5000", "8", "--algorithm", "spd"], "at most 4096x4096"),
    (["run", "--size", "99999", "8"], "maxImageDimension2D"),
    (["run", "--size", "4", "4", "--device", "no-such-gpu"], "not supported: device: no device name contains"),
])
def test_bad_input_is_one_line_and_status_2(vk_ctx, argv, needle):
    res = run_cli(*argv)
    assert res.returncode == 2
    assert needle in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_no_loader_is_one_line_and_status_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "vulkan", None)
    args = argparse.Namespace(format="r32f", algorithm="tiled", size=[4, 4], device=None, seed=0, validation=False)
    assert cli.handle_run(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("turnip-fdm mipmap run: not supported:") and len(err.splitlines()) == 1
