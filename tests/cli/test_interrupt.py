"""Ctrl-C at any moment: status 130 and the one line ``turnip-fdm: interrupted``, no traceback.

The command is a real process (``python -m turnip_fdm``, what the console script runs) sent
SIGINT at three moments: while it imports numpy and the models (the handler that
``turnip_fdm.entry`` installs before any other import), at a fixed 0.2 s after the start
(whatever it is doing then), and while a command runs (``demo`` once its worker threads exist:
KeyboardInterrupt reaches ``main``, the queued work is dropped).  The checker is shown to fail
on a process that does print a traceback.

Every child starts with SIGINT at its default (:func:`default_sigint`), whatever this test
process inherited: under ``nohup … &`` or ``setsid`` with SIGINT ignored a child would inherit
SIG_IGN and never see the signal.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
LINE = "turnip-fdm: interrupted\n"
DEADLINE = 60.0

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and makes a FIFO")


def default_sigint() -> None:
    """In the child before exec: SIGINT at its default, not an ignored one inherited from us."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start(*argv: str, preexec: Callable[[], None] = default_sigint) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "turnip_fdm", *argv], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec)


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
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)
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


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (every thread's)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out = []
    for t in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
        except OSError:
            pass
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_while_the_layout_threads_run(tmp_path: Path) -> None:
    """``demo`` interrupted once its workers run (the views' and the sweep's forked child
    processes since issue 22, threads where it cannot fork): the work is dropped, not waited
    for, nothing is written, and no child outlives the command."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    imported = subprocess.run([sys.executable, "-c", "import os; from turnip_fdm import cli; cli.registrars(); "
                               "print(len(os.listdir('/proc/self/task')))"], cwd=REPO, env=env, text=True,
                              capture_output=True, timeout=DEADLINE, check=True, preexec_fn=default_sigint)
    baseline = int(imported.stdout)
    proc = start("demo", "--out", str(tmp_path / "demo"))
    kids: list[int] = []

    def working() -> bool:
        kids[:] = children(proc.pid)
        return threads(proc.pid) > baseline or len(kids) > 1   # the sweep's child and a view's
    wait_until(proc, working)
    t0 = time.monotonic()
    assert_interrupted(*interrupt(proc))
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "demo").exists()
    assert not [k for k in kids if alive(k)]


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
                       timeout=DEADLINE, preexec_fn=default_sigint)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("turnip-fdm: internal error: ZeroDivisionError: planted") and r.stderr.count("\n") == 1


def test_the_handler_comes_before_every_import() -> None:
    """The console script's module installs the exiting handler before it imports anything but
    ``os`` and ``signal``: a finder on ``sys.meta_path`` records the SIGINT handler at the first
    lookup of every module; from ``argparse`` and the command line on it is the exiting one (run()
imports numpy and the models later, under the same handler)."""
    code = ("import signal, sys\n"
            "seen = []\n"
            "class Spy:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        seen.append((name, getattr(signal.getsignal(signal.SIGINT), '__module__', None)))\n"
            "sys.meta_path.insert(0, Spy())\n"
            f"import {ENTRY_MODULE}\n"
            "for name, handler in seen: print(name, handler)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                       text=True, capture_output=True, timeout=DEADLINE, check=True, preexec_fn=default_sigint)
    seen = [line.split() for line in r.stdout.splitlines()]
    before = [name for name, handler in seen if handler != ENTRY_MODULE]
    assert set(before) <= {"turnip_fdm", ENTRY_MODULE}, before
    assert {"argparse", "turnip_fdm.cli", "turnip_base.errors"} <= {name for name, _ in seen}


def test_the_old_entry_point_fails_that_check() -> None:
    """``turnip_fdm.cli`` alone (the entry point before) imports argparse before any handler."""
    code = ("import signal, sys\n"
            "class Spy:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'argparse': print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
            "sys.meta_path.insert(0, Spy())\n"
            "import turnip_fdm.cli\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                       text=True, capture_output=True, timeout=DEADLINE, check=True, preexec_fn=default_sigint)
    assert r.stdout == "True\n"


ENTRY_MODULE = "turnip_fdm.entry"


def test_every_way_in_goes_through_the_entry_module() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"turnip-fdm": f"{ENTRY_MODULE}:run"}
    main_module = ast.parse((REPO / "turnip_fdm" / "__main__.py").read_text())
    first = next(n for n in main_module.body if isinstance(n, ast.ImportFrom))
    assert first.module == ENTRY_MODULE
    entry = ast.parse((REPO / "turnip_fdm" / "entry.py").read_text())
    imports = [n for n in entry.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    early = [a.name for n in imports[:2] if isinstance(n, ast.Import) for a in n.names]
    assert early == ["os", "signal"]


def test_a_process_started_with_sigint_ignored_keeps_ignoring_it() -> None:
    """``cmd &`` in a script starts it with SIGINT ignored: it stays ignored, the command ends
    normally (as Python itself does with an ignored SIGINT)."""
    proc = start("plan", str(REPO / "fdm" / "data" / "demo.toml"), preexec=ignore_sigint)
    wait_until(proc, lambda: "_multiarray_umath" in maps(proc))
    status, out, err = interrupt(proc)
    assert (status, err) == (0, "") and out
