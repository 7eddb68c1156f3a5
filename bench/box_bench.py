"""Scenarios an hour of ``turnip-fdm box check --generated N``: ``--jobs 1`` beside ``--jobs N``
(and the implementation before the gate work, ``--old``), in one run on one machine.

    python bench/box_bench.py [--scenarios 2000] [--seed 1] [--jobs 1 2] [--runs 1] [--old 6370534]
                              [--out bench/results/box.md]

Every measurement is one ``turnip-fdm box check --generated N --seed S`` process (start-up,
imports, drawing the scenarios, the driver probe, recording in the box, decoding and comparing:
what a user waits for), timed with ``time.perf_counter`` around it; ``os.wait4`` gives its CPU
time (its children included).  Scenarios an hour = N / wall * 3600.  The implementations run in
turn (round robin: a burst of load from elsewhere falls on all of them), each ``--runs`` times;
the median is reported with the load average before and after.  Each run writes a JUnit report;
the verdicts (every test case's outcome) must be the same in every run, or the table says
DIFFERS.  ``--old COMMIT`` runs that commit's tree (``git archive``) as it was: the box code of
6370534 lived in ``vk_tests/box`` and recorded, then judged, in one process.

Not a test: nothing here asserts a speed.  Needs the box (``turnip-fdm box setup``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _verdicts(junit: Path) -> list[tuple[str, str, str]]:
    out = []
    for tc in ET.parse(junit).getroot().iter("testcase"):
        kind = next((c.tag for c in tc if c.tag in ("failure", "error", "skipped")), "passed")
        out.append((tc.get("classname", ""), tc.get("name", ""), kind))
    return sorted(out)


def _run(tree: Path, args: list[str], junit: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("CI_NODE_INDEX", None)
    env.pop("CI_NODE_TOTAL", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "turnip_fdm", "box", "check", *args, "--junit", str(junit)],
                            cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    last = [ln for ln in out.splitlines() if ln.strip()][-1:] or [""]
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "status": os.waitstatus_to_exitcode(status),
            "closing": last[0], "verdicts": _verdicts(junit) if junit.is_file() else []}


def _old_tree(commit: str, where: Path) -> Path:
    tree = where / commit
    tree.mkdir()
    data = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    tar = where / f"{commit}.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        t.extractall(tree, filter="data")
    return tree


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, len(os.sched_getaffinity(0))])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--old", default=None, metavar="COMMIT", help="also run this commit's box check (no --jobs)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/box.md")
    a = ap.parse_args()
    base = ["--generated", str(a.scenarios), "--seed", str(a.seed)]
    load0 = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip())
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="box-bench-") as tmp:
        impls: list[tuple[str, Path, list[str]]] = [(f"jobs {j}", ROOT, [*base, "--jobs", str(j)]) for j in a.jobs]
        if a.old:
            impls.insert(0, (f"{a.old} (before)", _old_tree(a.old, Path(tmp)), base))
        for r in range(a.runs):
            for name, tree, args in impls:
                junit = Path(tmp) / f"{name.replace(' ', '_')}-{r}.xml"
                got = _run(tree, args, junit)
                results.setdefault(name, []).append(got)
                print(f"{name} run {r + 1}: {got['wall_s']:.1f} s wall, {got['cpu_s']:.1f} s CPU, exit "
                      f"{got['status']}: {got['closing']}", file=sys.stderr, flush=True)
    load1 = os.getloadavg()
    verdicts = {json.dumps(g["verdicts"]) for runs in results.values() for g in runs}
    same = len(verdicts) == 1
    rows = []
    for name, runs in results.items():
        wall = statistics.median(g["wall_s"] for g in runs)
        cpu = statistics.median(g["cpu_s"] for g in runs)
        rows.append({"impl": name, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                     "per_hour": round(a.scenarios / wall * 3600), "closing": runs[0]["closing"],
                     "status": runs[0]["status"]})
    ref = next((r for r in rows if r["impl"] == "jobs 1"), rows[0])
    for r in rows:
        r["vs_jobs1"] = round(ref["wall_s"] / r["wall_s"], 2)
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "machine": platform.node(),
            "cores": len(os.sched_getaffinity(0)), "cpu": platform.processor() or platform.machine(),
            "python": platform.python_version(), "commit": commit + (" (dirty)" if dirty else ""),
            "scenarios": a.scenarios, "seed": a.seed, "runs": a.runs, "load_before": [round(x, 2) for x in load0],
            "load_after": [round(x, 2) for x in load1], "same_verdicts": same}
    lines = ["# `box check --generated` throughput", "",
             f"{a.scenarios} generated scenarios (seed {a.seed}), {a.runs} run(s) each, median; "
             f"{meta['cores']} cores ({meta['cpu']}), Python {meta['python']}, commit {meta['commit']}, "
             f"{meta['date']}; load average before {meta['load_before']}, after {meta['load_after']}.", "",
             "| implementation | wall (s) | CPU (s) | scenarios an hour | vs jobs 1 | closing line |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['impl']} | {r['wall_s']} | {r['cpu_s']} | {r['per_hour']:,} | {r['vs_jobs1']}x | "
                     f"{r['closing']} |")
    lines += ["", "Verdicts: " + ("the same in every run." if same else "DIFFERS between runs."), ""]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("\n".join(lines))
    a.out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
