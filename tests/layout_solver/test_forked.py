"""layout_files' offset sweep in a forked child (layout_solver.report._Forked): the same result
as in the process, an error of the child raised as the process's own, a thread where forking is
unsafe, and a child that is cancelled ends."""

from __future__ import annotations

import os
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
