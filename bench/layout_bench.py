"""Time ``turnip-fdm layout`` / ``turnip-fdm demo`` of older commits and of this checkout side by side.

    python bench/layout_bench.py [--runs 5] [--old 87290a8 --old 61acf32] [--cases vr3840] [--out FILE.md]

Every implementation runs as its own process (``python -m turnip_fdm ...``, ``fdm.cli`` before it existed, with the
implementation's tree first on ``PYTHONPATH`` and as the working directory, with bytecode caching
on - ``PYTHONDONTWRITEBYTECODE`` removed from its environment if this shell sets it - so that
every implementation starts from its ``.pyc`` files as a user's does): the older
commits are extracted with ``git archive`` into a temporary directory, "new" is this checkout
as it is (its commit and whether the tree is dirty are recorded).  Per process: the wall time
(``time.perf_counter`` around it, Python start-up and imports included, as a user sees it),
its CPU time (user + system, child processes included) and the peak resident set size
(``os.wait4``'s ``ru_maxrss``: the largest of the process and the children it waited for).  Each
implementation first runs the demo once unmeasured (page cache, ``.pyc`` files), then every case
``--runs`` times (the older ones ``--old-runs`` times), the implementations in turn (round
robin); the median is reported.  Cases:

* ``vr3840``: ``layout bench/vr3840.toml`` - the 2-view 3840x3840 a750 foveated scenario with
  FDM offsets (issue 10; issue 22: 2.4-2.8 s on an idle 2-core machine, wanted under 1 s);
* ``vr4096``: ``layout bench/vr4096.toml`` - the same at 4096x4096, the largest framebuffer
  whose reconstruction pictures (c) are drawn;
* ``demo``: ``demo`` - the embedded 1920x1920 2-view scenario.

Baseline (ratios against it): 87290a8, the code when issue 22 was filed.  Older variants can
be added with ``--old``: 61acf32 (issue 10 filed; its command line is ``python -m fdm.cli`` and
its model lays the VR scenarios out with other bins), ``53fea01-nobound`` (53fea01 with its
1920x1920 bound on the (c) pictures lifted).  Probes of a commit (``HEAD-freesampling``,
``HEAD-noc``: :data:`VARIANTS`) time the command with part of its work removed: how far any
faster form of that part could take it (a ratio is shown for them too).  Every output file of the new code is compared
byte for byte with the baseline's (a SHA-256 over the directory): "identical" or DIFFERS; and
the largest error of every ``error_vN.svg`` note.

The table goes to ``--out`` (Markdown) with the machine, the load average before and after,
and the commits.  Not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
#: the implementation before this work: 87290a8, the code when issue 22 was filed (the same
#: layout and the same pictures, byte for byte)
DEFAULT_OLD = ("87290a8",)
#: the ratios are taken against these (when run): issue 22's baseline, and issue 10's two
BASELINES = ("87290a8", "61acf32", "53fea01-nobound")
#: (name, command-line arguments after ``python -m turnip_fdm``, what it is)
CASES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("vr3840", ("layout", str(ROOT / "bench" / "vr3840.toml")), "layout, 2 views 3840x3840 a750, foveated, offsets"),
    ("vr4096", ("layout", str(ROOT / "bench" / "vr4096.toml")), "layout, 2 views 4096x4096 a750, foveated, offsets"),
    ("demo", ("demo",), "demo, 2 views 1920x1920 a750 (embedded scenario)"),
)


@attrs.frozen
class Run:
    wall_s: float
    cpu_s: float            # user + system, the process and the children it waited for
    peak_mb: float
    status: int
    summary: str            # the layout summary line the command printed
    notes: tuple[str, ...]  # the "largest |error| ..." note of every error_vN.svg, by view
    digest: str = ""        # SHA-256 over every output file (name and bytes, by name)


def _digest(out: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in out.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(out)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


#: the variants of a tree (``COMMIT-VARIANT``): the file each changes and its substitutions
#: (``(old, new)``, each once; a line-anchored regex where the flag is set).  ``nobound``
#: lifts the bound that commit 8492fa2 put on the (c) pictures (a memory workaround).  The
#: probes remove part of the work, so that their time bounds what any faster form of that
#: part could reach (their pictures are wrong: not compared): ``freesampling`` (the code
#: since 91a0d4a) makes the (c) pictures' sampling of both paths cost nothing -
#: ``picture_rasters`` renders, stores and blits each view and walks its blocks as before, but
#: samples, subtracts and reduces nothing (every error 0), the least any faster sampling, a
#: compiled kernel included, could cost; ``noc`` draws no (c) picture at all (start-up, the
#: layout, the offset sweep, (a), (b) and the page)
VARIANTS: dict[str, tuple[str, tuple[tuple[str, str], ...], bool]] = {
    "nobound": ("layout_solver/report.py",
                ((r"^MAX_RECONSTRUCTION_PIXELS = .*$", "MAX_RECONSTRUCTION_PIXELS = 1 << 62"),), True),
    "noc": ("layout_solver/report.py", ((r"^MAX_RECONSTRUCTION_PIXELS = .*$", "MAX_RECONSTRUCTION_PIXELS = 0"),),
            True),
    "freesampling": ("layout_solver/reconstruct/images.py", (
        ("    def work(i: int) -> FloatArray:\n        err = np.full((-(-H // k), -(-W // k)), np.nan)\n",
         "    def work(i: int) -> FloatArray:\n        err = np.full((-(-H // k), -(-W // k)), np.nan)\n"
         "        for _ in grid.blocks(part=(i, n)):\n            pass\n        err[:] = 0.0\n"
         "        return err\n"),
        ("    if not np.isnan(err).all():\n", "    if False:\n")), False),
}
#: the variants that are probes (a ratio is shown for them as for the new code)
PROBES = ("freesampling", "noc")


def apply_variant(tree: Path, spec: str, variant: str) -> None:
    """Change ``tree`` into ``variant`` (:data:`VARIANTS`); exit naming the line when one of
    its substitutions finds nothing (a tree other than the one it was written for)."""
    if variant not in VARIANTS:
        raise SystemExit(f"{spec}: unknown variant {variant!r} (COMMIT or COMMIT-VARIANT, VARIANT one of "
                         f"{', '.join(VARIANTS)})")
    rel, subs, regex = VARIANTS[variant]
    path = tree / rel
    text = path.read_text(encoding="utf-8")
    for old, new in subs:
        if regex:
            text, n = re.subn(old, new, text, flags=re.M)
        else:
            n = text.count(old)
            text = text.replace(old, new)
        if n != 1:
            raise SystemExit(f"{spec}: {rel} has {n} lines {old!r}, not one")
    path.write_text(text, encoding="utf-8")


def variant_of(spec: str) -> str:
    """The variant of an implementation ``COMMIT-VARIANT`` ('' for a commit or "new")."""
    return spec.partition("-")[2]


def _extract(spec: str, into: Path) -> Path:
    """The tree of ``spec`` under ``into/spec`` (``git archive``): a commit, or
    ``COMMIT-VARIANT`` changed by :func:`apply_variant`."""
    commit, variant = spec.partition("-")[0], variant_of(spec)
    dst = into / spec
    dst.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
    if variant:
        apply_variant(dst, spec, variant)
    return dst


def _error_notes(out: Path) -> tuple[str, ...]:
    """The largest error of every ``error_vN.svg`` note (the range printed beside it is the
    scene's over every pixel centre before 2026-11-25, the rendered fragments' since: not compared)."""
    notes = []
    for svg in sorted(out.glob("error_v*.svg")):
        m = re.search(r"largest \|error\| [0-9.e+-]+", svg.read_text(encoding="utf-8"))
        notes.append(m.group(0) if m else "?")
    return tuple(notes)


def run_once(tree: Path, args: tuple[str, ...], scratch: Path) -> Run:
    """One process of ``python -m turnip_fdm ARGS --out DIR`` on ``tree``, reaped with
    ``os.wait4`` for its own peak RSS (``ru_maxrss``, KiB on Linux)."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    out = work / "out"
    env = dict(os.environ, PYTHONPATH=str(tree))
    # bytecode caching on for every implementation, as a user has it: a shell with
    # PYTHONDONTWRITEBYTECODE set (this machine's) would make each run compile its modules again
    # (about 70 ms of start-up, old and new alike)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with open(work / "stdout", "wb") as so, open(work / "stderr", "wb") as se:
        t0 = time.perf_counter()
        # the command line moved from fdm.cli to turnip_fdm (issue 7)
        module = "turnip_fdm" if (tree / "turnip_fdm").is_dir() else "fdm.cli"
        p = subprocess.Popen([sys.executable, "-m", module, *args, "--out", str(out)], cwd=tree, env=env,
                             stdout=so, stderr=se)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    lines = (work / "stdout").read_text(errors="replace").splitlines()
    summary = next((ln for ln in lines if ln.startswith("subsampled layout")), "")
    if p.returncode != 0:
        summary = f"exit {p.returncode}: {(work / 'stderr').read_text(errors='replace').strip()[-300:]}"
    return Run(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, peak_mb=usage.ru_maxrss / 1024,
               status=p.returncode, summary=summary, notes=_error_notes(out),
               digest=_digest(out) if out.is_dir() else "")


def _machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numpy
    import PIL
    return (f"{model or platform.processor()}, {os.cpu_count()} CPUs, Linux {platform.release()}; Python "
            f"{platform.python_version()}, numpy {numpy.__version__}, Pillow {PIL.__version__}")


def _head() -> str:
    """This checkout's commit (short), what ``HEAD`` names in an implementation."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def _commit() -> str:
    head = _head()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return head + (" (the working tree, shared with other work, had uncommitted changes to tracked files)"
                   if dirty else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="measured runs per implementation and case (default 3)")
    ap.add_argument("--old-runs", type=int, default=None,
                    help="measured runs of the older commits on the VR cases (default: --runs; 61acf32 and "
                         "53fea01-nobound take half a minute each)")
    ap.add_argument("--old", action="append",
                    help=f"older commits to compare, COMMIT or COMMIT-VARIANT ({', '.join(VARIANTS)}; "
                         f"default {' '.join(DEFAULT_OLD)})")
    ap.add_argument("--cases", nargs="*", default=[c[0] for c in CASES], help="cases to run (default all)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "layout.md"), help="Markdown result file")
    a = ap.parse_args(argv)
    olds = tuple(a.old or DEFAULT_OLD)
    cases = [c for c in CASES if c[0] in a.cases]
    load0 = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    results: dict[tuple[str, str], list[Run]] = {}
    with tempfile.TemporaryDirectory(prefix="layout_bench_") as tmp:
        scratch = Path(tmp)
        trees = {c: _extract(c, scratch / "trees") for c in olds}
        trees["new"] = ROOT
        for tree in trees.values():
            run_once(tree, ("demo",), scratch)   # unmeasured: page cache, .pyc files
        for name, args, _ in cases:
            # round robin over the implementations, so that a burst of load from other processes
            # falls on both sides rather than on one
            old_runs = a.runs if a.old_runs is None else a.old_runs
            runs = {impl: a.runs if impl == "new" or name == "demo" else old_runs for impl in trees}
            for r in range(max(runs.values())):
                for impl, tree in trees.items():
                    if r < runs[impl]:
                        results.setdefault((name, impl), []).append(run_once(tree, args, scratch))
            for impl in trees:
                got = results[(name, impl)]
                med = statistics.median(r.wall_s for r in got)
                print(f"{name:7s} {impl:8s} {med:7.2f} s  cpu {statistics.median(r.cpu_s for r in got):5.2f} s  "
                      f"peak {max(r.peak_mb for r in got):6.0f} MB  {got[0].notes}", flush=True)
    load1 = os.getloadavg()
    text = report(results, cases, olds, load0, load1, started)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text, encoding="utf-8")
    print(f"wrote {a.out}")
    return 0


def report(results: dict[tuple[str, str], list[Run]], cases: list[tuple[str, tuple[str, ...], str]],
           olds: tuple[str, ...], load0: tuple[float, float, float], load1: tuple[float, float, float],
           started: datetime.datetime) -> str:
    impls = [*olds, "new"]
    bases = [b for b in BASELINES if b in olds] or [olds[0]]
    same = bases[0] if bases[0] in ("87290a8", "53fea01-nobound") else (
        "53fea01-nobound" if "53fea01-nobound" in olds else bases[0])
    lines = [
        "# `turnip-fdm layout` / `demo`: older commits against this checkout",
        "",
        f"Written by `bench/layout_bench.py` on {started:%Y-%m-%d %H:%M} UTC. Machine: {_machine()}.",
        f"Load average (1, 5, 15 min) before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
        f"after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} (other processes share the CPUs).",
        f"New: this checkout at {_commit()}. Older: " + ", ".join(f"`{c}`" for c in olds) + ".",
        "",
        "Wall time: one process, start-up and imports included, median of the measured runs (each "
        "implementation ran the demo once, unmeasured, first, so every one starts from its `.pyc` files: "
        "bytecode caching on for all, `PYTHONDONTWRITEBYTECODE` removed; the implementations in turn). "
        "CPU: user + "
        "system time of the process and the children it waited for, median. Peak: the largest maximum "
        "resident set size of the process and its children (`ru_maxrss`). Ratios: the median wall time of "
        "each older implementation over the new one, from the same run. `87290a8` is the code when "
        "issue 22 was filed; `61acf32` the code when issue 10 was filed (another model: other bins on the "
        "VR scenarios); `53fea01-nobound` the code when issue 10's work began with the 1920x1920 bound of "
        "its (c) pictures lifted.",
    ]
    if any(variant_of(c) in PROBES for c in olds):
        lines += ["", f"Probes (`bench/layout_bench.py`'s `VARIANTS`; `HEAD` was {_head()}): the command with "
                  "part of its work removed, so its time is the least that any faster form of that part could "
                  "reach (its pictures are wrong and not compared). `-freesampling`: each view is rendered, stored and "
                  "blitted and its blocks walked as before, but the (c) pictures' sampling of both paths, the "
                  "error and its reduction cost nothing (every error 0); `-noc`: no (c) picture at all - "
                  "start-up, the layout, the offset sweep, (a), (b) and the page."]
    lines += [
        "",
        "| case | implementation | runs | wall s (median) | min s | CPU s (median) | peak MB | (c) pictures | "
        + " | ".join(f"ratio vs `{b}`" for b in bases) + " |",
        "|---|---|---|---|---|---|---|---|" + "---|" * len(bases),
    ]
    for name, _, what in cases:
        ref_t: dict[str, float | None] = {}
        for b in bases:
            ref = results.get((name, b))
            ref_t[b] = statistics.median(r.wall_s for r in ref) if ref and ref[0].status == 0 else None
        for impl in impls:
            got = results.get((name, impl))
            if not got:
                continue
            med = statistics.median(r.wall_s for r in got)
            drawn = "drawn" if got[0].notes else ("none" if got[0].status == 0 else "failed")
            if variant_of(impl) == "freesampling" and got[0].notes:
                drawn = "drawn (errors 0: probe)"
            if "not drawn" in got[0].summary:
                drawn = "skipped (bound)"
            shown = impl == "new" or variant_of(impl) in PROBES
            ratios = [f"{t / med:.1f}x" if t and shown else "" for t in (ref_t[b] for b in bases)]
            lines.append(f"| {name}: {what} | `{impl}` | {len(got)} | {med:.2f} | {min(r.wall_s for r in got):.2f} "
                         f"| {statistics.median(r.cpu_s for r in got):.2f} "
                         f"| {max(r.peak_mb for r in got):.0f} | {drawn} | " + " | ".join(ratios) + " |")
    lines += ["", f"Every output file, new against `{same}` (SHA-256 over the output directory, every run):", ""]
    for name, _, _ in cases:
        if (name, "new") in results and (name, same) in results:
            new_d = {r.digest for r in results[(name, "new")]}
            old_d = {r.digest for r in results[(name, same)]}
            verdict = ("identical" if len(new_d) == 1 and new_d == old_d else
                       f"DIFFERS ({len(new_d)} digest(s) new, {len(old_d)} `{same}`)")
            lines.append(f"- {name}: {verdict}")
    lines += ["", f"The largest error under each (c) error picture (`error_vN.svg`), per implementation (new against "
              f"`{same}`, the same layout):", ""]
    for name, _, _ in cases:
        noted = {impl: results[(name, impl)][0].notes for impl in impls
                 if (name, impl) in results and results[(name, impl)][0].notes}
        for impl, notes in noted.items():
            tag = ""
            if impl == "new" and same in noted:
                tag = " - the same numbers" if notes == noted[same] else " - DIFFERS"
            lines.append(f"- {name}, `{impl}`: " + "; ".join(f"view {v}: {n}" for v, n in enumerate(notes)) + tag)
    lines += ["", "Summaries printed:", ""]
    for name, _, _ in cases:
        for impl in impls:
            if (name, impl) in results:
                lines.append(f"- {name}, `{impl}`: {results[(name, impl)][0].summary}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
