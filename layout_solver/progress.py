"""Progress bars of the commands that can take more than a second (``turnip-fdm layout``,
``turnip-fdm demo``): on standard error, and only when standard error is a terminal, so that
nothing a script or a test reads changes.  The bar is tqdm's; without tqdm there is none.

The work reports through a :data:`Progress` callback (``layout_solver.report.layout_files``
takes one); :func:`terminal_progress` makes the callback of a bar, or gives None.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: ``(steps done, steps in all, the step just done)``
Progress = Callable[[int, int, str], None]


@contextmanager
def terminal_progress(desc: str, stream: TextIO | None = None) -> Iterator[Progress | None]:
    """A :data:`Progress` that draws a bar on ``stream`` (standard error by default) when it is
    a terminal and tqdm can be imported; otherwise None (no output at all).  The bar is
    removed when the block ends, so only the command's own lines stay on the terminal."""
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        yield None
        return
    try:
        from tqdm import tqdm
    except ImportError:
        yield None
        return
    # no monitor thread (it checks stalled bars): the layout forks a process for its offset
    # sweep only while no other thread runs (layout_solver.report._Forked)
    tqdm.monitor_interval = 0
    bar = tqdm(desc=desc, file=out, leave=False, unit="step", dynamic_ncols=True)

    def step(done: int, total: int, what: str) -> None:
        if bar.total != total:
            bar.total = total
        bar.set_postfix_str(what, refresh=False)
        bar.update(done - bar.n)

    try:
        yield step
    finally:
        bar.close()
