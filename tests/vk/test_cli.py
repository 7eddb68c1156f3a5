"""`turnip-fdm mipmap ...` through the top-level command line (turnip_fdm.cli.main), in process:
the outputs, the exit statuses and the one-line refusals."""
import argparse
import sys

import numpy as np
import pytest

from mipmap import cli
from turnip_base.errors import NotSupported, ScenarioError
from turnip_fdm.cli import main


def run_cli(capsys, *argv):
    """(exit status, standard output, standard error) of `turnip-fdm mipmap ARGV...`."""
    try:
        status = main(["mipmap", *argv])
    except SystemExit as e:  # only argparse's own exits (--help) end this way
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err: str) -> str:
    """The single line of standard error (a refusal prints exactly one, never a traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_register_adds_the_subcommand():
    parser = argparse.ArgumentParser(prog="turnip-fdm")
    sub = parser.add_subparsers()
    cli.register(sub)
    args = parser.parse_args(["mipmap", "run", "--size", "8", "4", "--format", "r32f", "--algorithm", "spd"])
    assert args.size == [8, 4] and args.func is cli.handle_run


@pytest.mark.vulkan
def test_run_matches_on_the_device(vk_ctx, capsys):
    status, out, err = run_cli(capsys, "run", "--size", "37", "21", "--format", "rgba8", "--algorithm", "tiled",
                               "--validation")
    assert status == 0, err
    assert "match: worst" in out and "level  5" in out


@pytest.mark.vulkan
def test_mismatch_is_status_1(vk_ctx, capsys, monkeypatch):
    from mipmap import reference
    real = reference.stored_chain

    def wrong_model(level0, fmt, reduce=reference.reduce_level):
        chain = real(level0, fmt, reduce)
        chain[1] = chain[1] + np.float32(1)  # r32f values in (0, 1): many ulp off
        return chain

    monkeypatch.setattr(reference, "stored_chain", wrong_model)
    status, out, err = run_cli(capsys, "run", "--size", "8", "8", "--format", "r32f")
    assert status == 1, err
    assert "MISMATCH: worst" in out and err == ""


@pytest.mark.vulkan
def test_devices_lists_the_device(vk_ctx, capsys):
    status, out, err = run_cli(capsys, "devices")
    assert status == 0 and err == ""
    assert any(line.split(": ", 1)[1] == vk_ctx.info.name for line in out.splitlines())


# refused before a device is opened
@pytest.mark.parametrize("argv,line", [
    (["run", "--size", "0", "4"], "turnip-fdm: error: --size: must be >= 1, got 0"),
    (["run", "--size", "4", "x"], "turnip-fdm: error: --size: must be an integer, got 'x'"),
    (["run", "--size", "4", "4", "--format", "bgr565"],
     "turnip-fdm: error: format: must be one of r32f, rgba8, srgba8, rgba16f, got 'bgr565'"),
    (["run", "--size", "4", "4", "--algorithm", "box"],
     "turnip-fdm: error: algorithm: must be one of tiled, spd, spd-split, blit, got 'box'"),
    ([], "turnip-fdm: error: mipmap: needs a sub-command: run or devices"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, line):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    assert one_line(err) == line and out == ""


# refused by what the device reports
@pytest.mark.vulkan
@pytest.mark.parametrize("argv,start", [
    (["run", "--size", "5000", "8", "--algorithm", "spd"],
     "turnip-fdm: error: size: the single-pass downsampler takes at most 4096x4096, got 5000x8"),
    (["run", "--size", "99999", "8"], "turnip-fdm: error: size: 99999x8 exceeds the device limit maxImageDimension2D"),
    (["run", "--size", "4", "4", "--device", "no-such-gpu"],
     "turnip-fdm: not supported: device: no device name contains 'no-such-gpu'"),
])
def test_device_refusals_are_one_line_and_status_2(vk_ctx, capsys, argv, start):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    assert one_line(err).startswith(start) and out == ""


def test_handlers_raise_instead_of_printing(capsys):
    args = argparse.Namespace(format="bgr565", algorithm="tiled", size=[4, 4], device=None, seed=0, validation=False)
    with pytest.raises(ScenarioError, match="format: must be one of") as e:
        cli.handle_run(args)
    assert e.value.field == "format"
    with pytest.raises(ScenarioError, match="size: width and height must be >= 1, got 0x3"):
        cli.handle_run(argparse.Namespace(format="r32f", algorithm="tiled", size=[0, 3], device=None, seed=0,
                                          validation=False))
    assert capsys.readouterr() == ("", "")


def test_no_loader_is_one_line_and_status_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "vulkan", None)  # import vulkan -> ImportError
    args = argparse.Namespace(format="r32f", algorithm="tiled", size=[4, 4], device=None, seed=0, validation=False)
    with pytest.raises(NotSupported, match="Python package 'vulkan' is not installed"):
        cli.handle_run(args)
    for argv in (["run", "--size", "4", "4", "--format", "r32f"], ["devices"]):
        status, out, err = run_cli(capsys, *argv)
        assert status == 2 and out == ""
        assert one_line(err).startswith("turnip-fdm: not supported: Python package 'vulkan' is not installed")
