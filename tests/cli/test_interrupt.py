"""Ctrl-C at any moment: status 130 and the one line ``turnip-fdm: interrupted``, no traceback.

The command is a real process (``python -m turnip_fdm``, what the console script runs) sent
SIGINT at three moments: while it imports numpy and the models (the handler that
``turnip_fdm.cli.run`` installs before any heavy import), at a fixed 0.2 s after the start
(whatever it is doing then), and while a command runs (``demo`` once its worker threads exist:
KeyboardInterrupt reaches ``main``, the queued work is dropped).  The checker is shown to fail
on a process that does print a traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINE = "turnip-fdm: interrupted\n"
DEADLINE = 60.0

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and makes a FIFO")


def start(*argv: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "turnip_fdm", *argv], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_until(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    end = time.monotonic() + DEADLINE
    while not ready():
        assert proc.poll() is None, f"the command ended first: {proc.communicate()}"
        assert time.monotonic() < end, "never reached the moment to interrupt"
        time.sleep(0.002)


def maps(proc: subprocess.Popen[str]) -> str:
    try:
        return Path(f"/proc/{proc.pid}/maps").read_text()
    except OSError:
        return ""


def interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=DEADLINE)
    return proc.returncode, out, err


def assert_interrupted(status: int, out: str, err: str) -> None:
    assert (status, err) == (130, LINE), (status, err)
    assert out == ""


def test_during_the_imports() -> None:
    proc = start("plan", str(REPO / "fdm" / "data" / "demo.toml"))
    # numpy is mapped: the shell is importing the packages (numpy comes first, the models after)
    wait_until(proc, lambda: "_multiarray_umath" in maps(proc))
    assert_interrupted(*interrupt(proc))


def test_in_the_first_fifth_of_a_second(tmp_path: Path) -> None:
    proc = start("demo", "--out", str(tmp_path / "demo"))   # it takes a second or more
    time.sleep(0.2)
    assert_interrupted(*interrupt(proc))
    assert not (tmp_path / "demo").exists()


def test_the_checker_sees_a_traceback() -> None:
    """The same moment for a process without the handler: Python's traceback, not the line."""
    proc = subprocess.Popen([sys.executable, "-c", "import time, numpy; time.sleep(60)"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until(proc, lambda: "_multiarray_umath" in maps(proc))
    time.sleep(0.2)
    status, out, err = interrupt(proc)
    with pytest.raises(AssertionError):
        assert_interrupted(status, out, err)
    assert "KeyboardInterrupt" in err


def threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def test_while_the_layout_threads_run(tmp_path: Path) -> None:
    """``demo`` interrupted once its worker threads run: the queued work is dropped, not waited
    for, and nothing is written."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    imported = subprocess.run([sys.executable, "-c", "import os; from turnip_fdm import cli; cli.registrars(); "
                               "print(len(os.listdir('/proc/self/task')))"], cwd=REPO, env=env, text=True,
                              capture_output=True, timeout=DEADLINE, check=True)
    baseline = int(imported.stdout)
    proc = start("demo", "--out", str(tmp_path / "demo"))
    wait_until(proc, lambda: threads(proc.pid) > baseline)
    t0 = time.monotonic()
    assert_interrupted(*interrupt(proc))
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "demo").exists()


def test_a_module_that_raises_on_import_is_still_one_line() -> None:
    """run() imports the sub-commands before main() under the exiting handler: an import that
    raises (not only ImportError) still ends as main's one line, not a traceback."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = ("import sys, types, importlib.abc\n"
            "class Boom(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        import importlib.util\n"
            "        return importlib.util.spec_from_loader(name, self) if name == 'turnip_fdm.diff' else None\n"
            "    def create_module(self, spec): return None\n"
            "    def exec_module(self, module): raise ZeroDivisionError('planted')\n"
            "sys.meta_path.insert(0, Boom())\n"
            "from turnip_fdm.cli import run; run()\n")
    r = subprocess.run([sys.executable, "-c", code, "--help"], cwd=REPO, env=env, text=True, capture_output=True,
                       timeout=DEADLINE)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("turnip-fdm: internal error: ZeroDivisionError: planted") and r.stderr.count("\n") == 1
