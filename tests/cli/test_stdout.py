"""Standard output that cannot be written is the user's condition, for every command: closed
(``>&-``), full (``> /dev/full``), or failing in any other way gives status 2 and the one line
``turnip-fdm: error: standard output: cannot write (REASON)``, never a traceback or an
"internal error"; a reader that went away (``| head``) is quiet, status 0."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turnip_fdm import cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = str(REPO / "examples" / "vr_foveation.toml")
SUBSAMPLED = str(REPO / "examples" / "subsampled.toml")
MERGING = str(REPO / "examples" / "bin_merging.toml")
FULL_LINE = "turnip-fdm: error: standard output: cannot write (No space left on device)\n"
CLOSED_LINE = "turnip-fdm: error: standard output: cannot write (Bad file descriptor)\n"

#: every command that prints to standard output, with arguments that succeed
COMMANDS = {
    "plan": ["plan", EXAMPLE],
    "plan --json": ["plan", EXAMPLE, "--json"],
    "check": ["check", EXAMPLE],
    "layout --json": ["layout", SUBSAMPLED, "--json"],
    "diff": ["diff", MERGING, "--variant", "bin_merging=fixed"],
    "diff --json": ["diff", MERGING, "--variant", "bin_merging=fixed", "--json"],
    "vk list": ["vk", "list"],
    "--help": ["--help"],
    "plan --help": ["plan", "--help"],
}


class FullStream(io.StringIO):
    """A standard output on a full disk: every write fails with ENOSPC."""

    def write(self, s: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_standard_output_is_one_line(command: str, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdout", FullStream())
    status = cli.main(COMMANDS[command])
    assert (status, capsys.readouterr().err) == (2, FULL_LINE)


def test_demo_with_a_full_standard_output(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "stdout", FullStream())
    status = cli.main(["demo", "--out", str(tmp_path / "demo")])
    assert (status, capsys.readouterr().err) == (2, FULL_LINE)


def test_a_closed_standard_output_is_refused_before_any_work(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    status = cli.main(["plan", EXAMPLE, "--out", str(tmp_path / "p")])
    assert (status, capsys.readouterr().err) == (2, CLOSED_LINE)
    assert not (tmp_path / "p").exists()


def shell(command: str) -> subprocess.CompletedProcess[str]:
    """``python -m turnip_fdm`` (what the console script runs) with a shell redirection."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(["bash", "-c", f'"{sys.executable}" -m turnip_fdm {command}'], cwd=REPO, env=env,
                          text=True, capture_output=True, timeout=120)


@pytest.mark.parametrize(("redirection", "line"), [(">&-", CLOSED_LINE), ("> /dev/full", FULL_LINE)])
@pytest.mark.parametrize("args", [f"plan {EXAMPLE}", f"plan {EXAMPLE} --json", f"check {EXAMPLE}", "--help"])
def test_the_real_process(args: str, redirection: str, line: str) -> None:
    if redirection.endswith("/dev/full") and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    r = shell(f"{args} {redirection}")
    assert (r.returncode, r.stderr) == (2, line)


def test_a_reader_that_went_away_is_quiet() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "turnip_fdm", "plan", EXAMPLE, "--json"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # `| head -c 10`
    err = proc.stderr.read()
    assert (proc.wait(timeout=120), err) == (0, b"")


def test_the_checker_sees_the_old_failure(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without the guarded standard output the same full stream is an 'internal error': the
    assertion above can fail."""
    monkeypatch.setattr(cli, "CheckedStdout", lambda stream: stream)
    monkeypatch.setattr(sys, "stdout", FullStream())
    status = cli.main(COMMANDS["plan"])
    err = capsys.readouterr().err
    assert status == 1 and "internal error" in err
