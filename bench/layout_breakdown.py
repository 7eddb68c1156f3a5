"""Where the time of ``turnip-fdm layout SCENARIO`` goes, step by step, in one process.

    python bench/layout_breakdown.py [bench/vr3840.toml] [--repeat 3] [--out FILE.md]

Each step is run ``--repeat`` times on its own, serially, after one unmeasured run of the whole
``layout_files`` (page cache, lazy imports), and the least CPU time is reported (of the process,
every thread, ``time.process_time``, and of the child processes it waited for: the views' and
the offset sweep's children of ``layout_files``), with the wall time of that run.  A view's
steps run with one sampling thread, as in its child.  The start-up (``python -c`` importing
what ``layout`` imports: its registrar, then Pillow) is timed as separate processes, with
bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed, as ``layout_bench.py`` does).  The last
rows time the whole ``layout_files`` with at most one view's child at a time
(``VIEWS_AT_ONCE = 1``) and with two (the default on 2 CPUs since issue 22's part 3).  Not a
test: nothing here asserts a speed; compare figures of one run only.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    """CPU time of this process (every thread) and of the child processes it waited for."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + r.ru_utime + r.ru_stime


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """The least CPU time of ``repeat`` runs of ``fn``, the wall time of that run, its result."""
    best: tuple[float, float, Any] = (float("inf"), 0.0, None)
    for _ in range(repeat):
        w, c = time.perf_counter(), _cpu()
        out = fn()
        cpu, wall = _cpu() - c, time.perf_counter() - w
        if cpu < best[0]:
            best = (cpu, wall, out)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?", default=str(ROOT / "bench" / "vr3840.toml"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", help="also write the table here (Markdown)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))

    rows: list[tuple[str, float, float]] = []
    load0 = os.getloadavg()
    code = ("from turnip_fdm.cli import registrars; registrars('layout'); "
            "import PIL.Image, PIL.ImageDraw, PIL.PngImagePlugin")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # from .pyc files, as a user's start-up (bench/layout_bench.py)
    starts = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        r = os.wait4(subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env).pid, 0)
        starts.append((r[2].ru_utime + r[2].ru_stime, time.perf_counter() - t))
    rows.append(("start-up: Python, what `layout` imports, Pillow (a process)", *min(starts)))

    from fdm.plan import plan_render_pass
    from fdm.scenario import load_scenario
    from layout_solver import report
    from layout_solver.aprons import tu_calc_subsampled_aprons
    from layout_solver.draw import to_png, to_svg
    from layout_solver.page import layout_page_data, offset_sweep, page_html, pictures_json
    from layout_solver.pictures import framebuffer_picture, subsampled_picture
    from layout_solver.reconstruct import picture_rasters, render_bins
    from layout_solver.reconstruct.view import subsampled_path
    from layout_solver.solver import tu_calc_subsampled

    def step(name: str, fn: Callable[[], Any]) -> Any:
        cpu, wall, out = _best(fn, a.repeat)
        rows.append((name, cpu, wall))
        print(f"{name:64s} {cpu:6.3f} s CPU {wall:6.3f} s wall", flush=True)
        return out

    plan = step("load and plan the scenario", lambda: plan_render_pass(load_scenario(a.scenario)))
    layout = step("solve the subsampled layout", lambda: tu_calc_subsampled(plan))
    report.layout_files(plan)   # unmeasured: lazy imports, page cache
    sweep = step("the page's FDM-offset sweep (a child process in layout_files)", lambda: offset_sweep(plan))
    # each view's steps below run here, serially, one sampling thread (as in a view's child)
    page_pics = []
    for v in range(plan.scenario.fdm_layers):
        step(f"view {v}: render, store the subsampled image, aprons, metadata (picture_rasters' first part)",
             lambda v=v: subsampled_path(plan, layout, v, render_bins(plan, v), keep_stored=False))
        step(f"view {v}: the same and every pixel centre sampled (picture_rasters)",
             lambda v=v: picture_rasters(plan, layout, v, workers=1))
        drawn, pics = step(f"view {v}: the same and the (c) pictures drawn (rasters, heat map)",
                           lambda v=v: report._reconstruction(plan, layout, v, workers=1))
        aprons = tu_calc_subsampled_aprons(layout, v)
        canvases = [(f"framebuffer_v{v}", framebuffer_picture(plan, v)),
                    (f"subsampled_v{v}", subsampled_picture(layout, v, aprons))] + [(s, c) for s, c, _ in drawn]
        for stem, canvas in canvases:
            step(f"view {v}: {stem}.svg and .png encoded", lambda c=canvas: (to_svg(c), to_png(c)))
        page_pics.append(step(f"view {v}: the page's pictures (PNG data URIs)", lambda p=pics: pictures_json(p)))
    data = step("the page's data (plan, layout, density, sweep, pictures)",
                lambda: layout_page_data(plan, layout, list(range(plan.scenario.fdm_layers)), "", page_pics,
                                         sweep=sweep))
    step("index.html", lambda: page_html(data))
    for n in (1, 2):
        report.VIEWS_AT_ONCE = n
        step(f"layout_files, at most {n} view(s) at a time (child processes included)",
             lambda: report.layout_files(plan))
    report.VIEWS_AT_ONCE = None
    load1 = os.getloadavg()

    lines = [f"`bench/layout_breakdown.py {Path(a.scenario).name}`: {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} CPUs, Python {platform.python_version()}; load average before "
             f"{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; "
             f"least CPU time of {a.repeat} runs.", "", "| step | CPU s | wall s |", "|---|---|---|"]
    lines += [f"| {name} | {cpu:.3f} | {wall:.3f} |" for name, cpu, wall in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
