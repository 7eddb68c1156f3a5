"""layout_files' offset sweep in a forked child (layout_solver.report._Forked): the same result
as in the process, an error of the child raised as the process's own, a thread where forking is
unsafe, and a child that is cancelled ends."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from layout_solver import report
from layout_solver.page import offset_sweep
from turnip_base.errors import ScenarioError


def _fails(x: int) -> int:
    raise ScenarioError("field", f"rule {x}")


def _child_pid(x: int) -> int:
    return os.getpid() + 0 * x


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_forked_result_and_errors(plan_11_9):
    f = report._Forked(offset_sweep, plan_11_9)
    assert f.pid is not None and f.result() == offset_sweep(plan_11_9)
    assert report._Forked(_child_pid, 1).result() != os.getpid()
    with pytest.raises(ScenarioError, match="rule 3"):
        report._Forked(_fails, 3).result()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_cancel_ends_the_child():
    f = report._Forked(threading.Event().wait, 30)
    pid = f.pid
    assert pid is not None
    f.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_thread_where_another_thread_runs():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        f = report._Forked(_child_pid, 1)
        assert f.pid is None and f.thread is not None and f.result() == os.getpid()
    finally:
        stop.set()
        t.join()


@pytest.fixture(scope="module")
def demo_plan():
    """The demo's two 1920x1920 views: one forked child per view."""
    from pathlib import Path

    from fdm.plan import plan_render_pass
    from fdm.scenario import load_scenario
    return plan_render_pass(load_scenario(Path(report.__file__).parents[1] / "fdm" / "data" / "demo.toml"))


def _in_a_thread(fn, *args):
    """``fn(*args)`` while another thread runs: layout_files forks nothing then."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not report._Forked.can_fork()
        return fn(*args)
    finally:
        stop.set()
        t.join()


def _differ(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    """The names whose bytes differ or that only one of ``a``, ``b`` has (or that come in
    another order), sorted."""
    out = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    if not out and list(a) != list(b):
        out.add("(order)")
    return sorted(out)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_views_in_children_write_what_one_process_writes(demo_plan, monkeypatch):
    """Every file of layout_files with a forked child per view (report._ViewJobs) is the file
    of the same call that forks nothing (the views one after the other in a thread); a child
    that draws the wrong view is caught by that comparison."""
    assert report._Forked.can_fork()
    forks = []
    real = report.view_pictures

    def counted(plan, layout, view, workers=None):
        forks.append(os.getpid())
        return real(plan, layout, view, workers)
    forked, summary = report.layout_files(demo_plan)
    serial, summary1 = _in_a_thread(report.layout_files, demo_plan)
    assert summary == summary1 and _differ(forked, serial) == []

    def wrong_view(plan, layout, view, workers=None):   # the planted bug: view 0's pictures everywhere
        drawn, page = real(plan, layout, 0, workers)
        return [(stem.replace("_v0", f"_v{view}"), *rest) for stem, *rest in drawn], dict(page, view=view)
    monkeypatch.setattr(report, "view_pictures", wrong_view)
    planted, _ = report.layout_files(demo_plan)
    assert _differ(planted, serial) == ["error_v1.png", "error_v1.svg", "index.html", "memory_v1.png",
                                        "memory_v1.svg", "reconstruction_v1.png", "reconstruction_v1.svg"]
    # pictures under other names than the page links: refused
    monkeypatch.setattr(report, "view_pictures",
                        lambda plan, layout, view, workers=None: real(plan, layout, 0, workers))
    with pytest.raises(AssertionError, match="C_PICTURES"):
        report.layout_files(demo_plan)
    monkeypatch.setattr(report, "view_pictures", counted)
    report.layout_files(demo_plan)
    assert forks == []   # counted in the children, not here: the views ran forked


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_ctrl_c_during_the_fork_is_not_lost():
    """A SIGINT that arrives while os.fork runs its at-fork hooks (planted: a hook that sends
    it) is raised as KeyboardInterrupt by _Forked, not swallowed in the hook ("Exception
    ignored": the command went on and ended with status 0).  Own process: a hook cannot be
    removed.  Without the blocked SIGINT around the fork, this fails."""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import os, signal, sys, time\n"
            "from layout_solver import report\n"
            "fired = []\n"
            "def hook():\n"
            "    if not fired:\n"
            "        fired.append(1)\n"
            "        os.kill(os.getpid(), signal.SIGINT)\n"
            "os.register_at_fork(after_in_parent=hook)\n"
            "try:\n"
            "    f = report._Forked(time.sleep, 30)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n"
            "    sys.exit(0)\n"
            "print('lost', f.pid, flush=True)\n"
            "f.cancel()\n")
    root = Path(report.__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=dict(os.environ, PYTHONPATH=str(root)),
                       capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert r.stdout == "interrupted\n", (r.stdout, r.stderr)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_one_child_at_a_time_and_a_view_twice(demo_plan, monkeypatch):
    """VIEWS_AT_ONCE = 1 (each child starts when the one before is collected) and a view asked
    for twice: the files of the thread path."""
    monkeypatch.setattr(report, "VIEWS_AT_ONCE", 1)
    forked, _ = report.layout_files(demo_plan, [1, 0, 1])
    serial, _ = _in_a_thread(report.layout_files, demo_plan, [1, 0, 1])
    assert _differ(forked, serial) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_failed_fork_leaves_ctrl_c_as_it_was(monkeypatch):
    """os.fork failing (EAGAIN): its error, and SIGINT not left blocked (nor the pipe open)."""
    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")
    monkeypatch.setattr(os, "fork", no_fork)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with pytest.raises(BlockingIOError):
        report._Forked(_child_pid, 1)
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before and signal.SIGINT not in before
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds
