"""``turnip-fdm box``: Mesa's real turnip, run without hardware, as the model's oracle.

  box setup [--mesa V]            build the Debian root once (cached; needs root and mmdebstrap)
  box info [--mesa V] [--driver P] the Mesa version, the GPUs it opens and their FDM extensions
  box check SCENARIO... [--gpu G]... [--generated N --seed S] [--jobs N] [--shard K/N] [--junit F]
                                  each scenario through turnip and through the model
  box plan SCENARIO [--gpu G]     the driver's per-bin programming beside the model's

Outcomes of ``check`` and ``plan`` (the exit status CI sees):

=========================================  ======
every compared scenario agrees              0
a difference, a model refusal, an error     1
bad input, a driver that does not load      2
nothing compared (all not supported)        3
interrupted (the counts so far printed)     130
=========================================  ======

The model side runs in this process (or in workers forked from it): a monkeypatched model is
the one compared.  See docs/box.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from turnip_base.errors import EXIT_NOTHING_COMPARED, NotSupported, ScenarioError

from .jobs import SHIM_GPU_IDS
from .root import DEFAULT_MESA, MESA_SUITES, check_mesa

if TYPE_CHECKING:
    from fdm.scenario import Scenario

    from .check import Item, Outcome
    from .root import Box

GPUS = tuple(SHIM_GPU_IDS)
#: what ``turnip-fdm box --help`` says
DESCRIPTION = """\
Mesa's real turnip driver, run on this machine without an Adreno GPU, as the model's oracle.
turnip opens an Adreno 618/630/660/730/740/750/810/830 under Mesa's noop DRM shim and records real
command streams; the box decodes what it programs for every bin (a6xx, a7xx, a8xx) and compares it
with the model.

  box setup                 build the box once (a Debian root, cached; needs root)
  box info                  the Mesa version, the GPUs it opens and their FDM extensions
  box check SCENARIO...     each scenario through turnip and the model: one line per scenario that
                            does not agree; exit status 0 only when something was compared and
                            nothing differs (1: differences, 2: bad input, 3: nothing compared)
  box plan SCENARIO         the driver's per-bin programming beside the model's

docs/box.md says what the box is, why its verdicts can be trusted and where it stops."""
#: the Mesa releases the model has a reading of (fdm.variants.MESA_READINGS: 26.2 is upstream, 26.1
#: and 26.2.0-rc1 the variants of the code before three Mesa 26.2.2 fixes; docs/driver-revisions.md)
MODEL_RELEASES = ("26.2", "26.1", "26.2.0-rc1")
#: the most generated scenarios one command draws
MAX_GENERATED = 100_000
#: the most workers ``--jobs`` starts
MAX_JOBS = 256
#: seconds between two progress lines when standard error is not a terminal
PERIOD_S = 30.0

#: where ``--fdm-scenes`` takes its scenarios from (the device suite's fdm cases, as (name,
#: mapping) pairs): given by the command-line shell, which imports every package (the box imports
#: no part of the suite)
SceneSource = Callable[[], "list[tuple[str, Scenario]]"]
_FDM_SCENES: list[SceneSource] = []


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mesa", default=DEFAULT_MESA, metavar="V",
                   help=f"the Mesa release whose turnip runs: {', '.join(MESA_SUITES)} (default {DEFAULT_MESA})")
    p.add_argument("--driver", default=None, metavar="PATH",
                   help="run this locally built libvulkan_freedreno.so instead of the box's turnip "
                        "(docs/box.md: a driver of your own)")


def _reading_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reading", default=None, choices=MODEL_RELEASES, metavar="V",
                   help=f"compare with the model's reading of Mesa V ({', '.join(MODEL_RELEASES)}; default: --mesa's), "
                        "e.g. 26.2.0-rc1 for that --driver build")


def _reading(args: argparse.Namespace) -> str:
    """The Mesa release whose reading the model follows (``--reading``, else ``--mesa``)."""
    return str(args.reading or args.mesa)


def register(subparsers: Any, fdm_scenes: SceneSource | None = None) -> None:
    """Add the `box` sub-command; ``fdm_scenes`` lists the scenarios ``--fdm-scenes`` adds."""
    _FDM_SCENES[:] = [fdm_scenes] if fdm_scenes is not None else []
    bp = subparsers.add_parser("box", help="Mesa's real turnip without hardware: check the model against it",
                               description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    bp.set_defaults(func=_no_sub)
    sub = bp.add_subparsers(dest="box_command")
    s = sub.add_parser("setup", help="build the box's Debian root (once; cached under $XDG_CACHE_HOME/turnip-fdm/box, "
                                     "by default ~/.cache/turnip-fdm/box)")
    s.add_argument("--mesa", default=DEFAULT_MESA, metavar="V", help=f"{', '.join(MESA_SUITES)}")
    s.add_argument("--force", action="store_true", help="build it again even when it exists")
    s.set_defaults(func=_setup)
    i = sub.add_parser("info", help="the Mesa version, the GPUs the box opens and their FDM extensions")
    _common(i)
    i.set_defaults(func=_info)
    c = sub.add_parser("check", help="each scenario through turnip and the model; one line per scenario that "
                                     "does not agree")
    c.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files (.toml or .json)")
    c.add_argument("--gpu", action="append", default=[], choices=GPUS, metavar="G",
                   help=f"run every scenario on this GPU (repeatable; default: the scenario's own). One of "
                        f"{', '.join(GPUS)}")
    c.add_argument("--generated", type=int, default=0, metavar="N", help="also N generated scenarios")
    c.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the generated scenarios (default 0)")
    c.add_argument("--fdm-scenes", action="store_true",
                   help="also the scenario of every case of the device suite's fdm backend (`vk list --backend fdm`)")
    c.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="record and judge in N workers (default: this machine's cores); the verdicts do not "
                        "depend on it")
    c.add_argument("--shard", default=None, metavar="K/N",
                   help="run only part K of N of the scenario runs (the parts 1..N partition the run); default "
                        "from CI_NODE_INDEX/CI_NODE_TOTAL when both are set")
    c.add_argument("--junit", default=None, metavar="FILE", help="write a JUnit XML report (also on Ctrl-C)")
    c.add_argument("--keep", default=None, metavar="DIR",
                   help="keep the command streams (.rd) under DIR, and write every generated scenario as "
                        "DIR/scenarios/NAME.GPU.toml (a file `box plan` accepts)")
    c.add_argument("--differences", default=None, metavar="FILE",
                   help="write every difference, one line each, cause before effect, to FILE")
    c.add_argument("-v", "--verbose", action="store_true", help="print every difference, not only the first of "
                                                                 "each scenario")
    c.add_argument("--no-validation", action="store_true",
                   help="record without the Khronos validation layer (by default a box without it is refused)")
    _common(c)
    _reading_option(c)
    c.set_defaults(func=_check)
    pl = sub.add_parser("plan", help="the driver's per-bin programming beside the model's")
    pl.add_argument("scenario", metavar="SCENARIO")
    pl.add_argument("--gpu", default=None, choices=GPUS, metavar="G", help="run it on this GPU")
    pl.add_argument("--no-validation", action="store_true", help="record without the Khronos validation layer")
    _common(pl)
    _reading_option(pl)
    pl.set_defaults(func=_plan)


def _no_sub(args: argparse.Namespace) -> int:
    raise ScenarioError("box", "needs a sub-command: setup, info, check or plan")


def _setup(args: argparse.Namespace) -> int:
    from .root import STAMP, root_path, setup

    check_mesa(args.mesa)
    if args.force or not (root_path(args.mesa) / STAMP).is_file():
        print(f"turnip-fdm: building the box's Debian root for Mesa {args.mesa} once (mmdebstrap of "
              f"{'+'.join(MESA_SUITES[args.mesa])}, about 30 s) ...", file=sys.stderr)
    box = setup(args.mesa, force=args.force)
    print(f"box ready: Mesa {box.mesa_version} at {box.root}")
    return 0


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked installation of it
        return False


def _need_binding() -> None:
    """The box's processes need the Python Vulkan binding (the ``vk`` extra)."""
    missing = [m for m in ("vulkan", "cffi") if not _importable(m)]
    if missing:
        raise NotSupported(f"the box needs the Python package(s) {', '.join(missing)}: pip install "
                           "'turnip-fdm[vk]'")


def _open_box(args: argparse.Namespace) -> tuple[Box, dict[str, str]]:
    """The box the command runs, and the variables it passes on to turnip (``TU_DEBUG`` and the
    box's own are refused: :func:`turnip_box.root.steering_variables`)."""
    from .root import find_box, steering_variables

    check_mesa(args.mesa)
    passed = steering_variables(os.environ)
    _need_binding()
    return find_box(args.mesa, args.driver), passed


def _info(args: argparse.Namespace) -> int:
    from .info import R8G8_NOTE, device_info

    box, passed = _open_box(args)
    print(f"Mesa {box.mesa_version} ({args.mesa}) at {box.root}" + (f", driver {box.driver}" if box.driver else ""))
    lines = [device_info(box, gpu, passed) for gpu in GPUS]
    for line in lines:
        print(line)
    print(f"decoded: a6xx, a7xx and a8xx streams; {R8G8_NOTE}")
    if all(": not supported:" in ln for ln in lines):
        raise _not_opened(box, lines[0].split(": not supported: ", 1)[1], GPUS[0])
    return 0


def _not_opened(box: Box, why: str, gpu: str) -> Exception:
    if box.driver is not None:
        return ScenarioError("--driver", f"{box.driver} did not open {gpu} in the box: {why}")
    return NotSupported(f"the box's turnip (Mesa {box.mesa_version}) did not open {gpu}: {why}")


def _driver_line(box: Box, gpu: str, passed: dict[str, str]) -> str:
    """Which driver runs (path and the version it reports); an error before any scenario runs when
    it does not open ``gpu``."""
    from .info import probe

    try:
        d = probe(box, gpu, passed)
    except NotSupported as e:
        raise _not_opened(box, str(e), gpu) from None
    where = f"{box.driver}" if box.driver is not None else f"the box's ({box.root})"
    line = f"driver: {where}, reports {d['device']} ({d['driver']}); Mesa {box.mesa_version} box"
    if passed:
        line += "; passed to turnip: " + " ".join(f"{k}={v}" for k, v in passed.items())
    return line


def _read_expect(path: str) -> str | None:
    """The refusal a finding expects (``[expect] raises``), read from the file itself."""
    from fdm.scenario import decode_scenario_text

    try:
        data = decode_scenario_text(Path(path).read_text(encoding="utf-8"), Path(path).suffix.lower()[1:])
    except (OSError, ValueError):
        return None
    exp = data.get("expect") if isinstance(data, dict) else None
    raises = exp.get("raises") if isinstance(exp, dict) else None
    return raises if isinstance(raises, str) else None


def _items(args: argparse.Namespace) -> list[Item]:
    import fdm

    from .check import items_of

    named: list[tuple[str, Scenario]] = []
    expect: dict[str, str] = {}
    mappings: dict[str, Any] = {}
    for p in args.scenarios:
        name = Path(p).stem
        named.append((name, fdm.load_scenario(p)))
        raises = _read_expect(p)
        if raises is not None:
            expect[name] = raises
    if args.fdm_scenes:
        if not _FDM_SCENES:
            raise ScenarioError("--fdm-scenes", "the device suite's scenes are not available to this command line")
        named += _FDM_SCENES[0]()
    if args.generated:
        from .generate import generated

        for name, sc, mapping in generated(args.generated, args.seed):
            named.append((name, sc))
            mappings[name] = mapping
    if not named:
        raise ScenarioError("SCENARIO", "give at least one scenario file, --fdm-scenes or --generated N")
    return items_of(named, args.gpu, expect, mappings, mesa=_reading(args))


def _shard(args: argparse.Namespace) -> tuple[int, int] | None:
    text, field = args.shard, "--shard"
    if text is None:
        idx, tot = os.environ.get("CI_NODE_INDEX"), os.environ.get("CI_NODE_TOTAL")
        if not idx or not tot:
            return None
        text, field = f"{idx}/{tot}", "CI_NODE_INDEX/CI_NODE_TOTAL"
    k, sep, n = text.partition("/")
    if not sep or not k.strip().isdigit() or not n.strip().isdigit():
        raise ScenarioError(field, f"must be K/N with whole numbers 1 <= K <= N, got {text!r}")
    ki, ni = int(k), int(n)
    if not 1 <= ki <= ni or ni > 10_000:
        raise ScenarioError(field, f"must be K/N with 1 <= K <= N <= 10000, got {text!r}")
    return ki, ni


class Progress:
    """A progress line on standard error: redrawn in place on a terminal, else one line every
    :data:`PERIOD_S` seconds."""

    def __init__(self, total: int, stream: TextIO = sys.stderr) -> None:
        self.total, self.stream = total, stream
        self.tty = stream.isatty()
        self.t0 = self.last = time.monotonic()
        self.done = 0

    def update(self, done: int, counts: str) -> None:
        self.done = done
        now = time.monotonic()
        if self.tty:
            self.stream.write(f"\rbox check: {done}/{self.total} ({counts}) {now - self.t0:.0f} s\033[K")
            self.stream.flush()
        elif now - self.last >= PERIOD_S:
            self.last = now
            print(f"box check: {done} of {self.total} ({counts}), {now - self.t0:.0f} s", file=self.stream,
                  flush=True)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _check(args: argparse.Namespace) -> int:
    from turnip_base.outputs import make_dir, write_bytes, write_text

    from .check import (
        AGREE,
        DIFFER,
        STATUSES,
        check_iter,
        closing_line,
        cpu_count,
        exit_status,
        field_summary,
        junit,
        shard,
        summary_line,
    )

    if not 0 <= args.generated <= MAX_GENERATED:
        raise ScenarioError("--generated", f"must lie in [0, {MAX_GENERATED}], got {args.generated}")
    jobs = cpu_count() if args.jobs is None else args.jobs
    if not 1 <= jobs <= MAX_JOBS:
        raise ScenarioError("--jobs", f"must lie in [1, {MAX_JOBS}], got {jobs}")
    part = _shard(args)
    keep = make_dir("--keep", args.keep) if args.keep else None
    for field, path in (("--junit", args.junit), ("--differences", args.differences)):
        if path is not None:  # the user's path: refused now, not after the run
            write_bytes(field, path, b"")
    box, passed = _open_box(args)
    items = _items(args)
    total = len(items)
    if part is not None:
        items = shard(items, *part)
    if not items:
        print(f"nothing compared: shard {part[0]}/{part[1]} of {total} scenario runs is empty" if part
              else "nothing compared: no scenario run")
        return EXIT_NOTHING_COMPARED
    if _reading(args) not in MODEL_RELEASES:
        print(f"turnip-fdm: note: the model has no revisions of its own for Mesa {args.mesa} "
              f"(docs/driver-revisions.md): it is compared as the {DEFAULT_MESA} reading", file=sys.stderr)
    elif _reading(args) != DEFAULT_MESA:
        import attrs

        from fdm.variants import mesa_reading

        changed = [f"{k}={v}" for k, v in sorted(attrs.asdict(mesa_reading(_reading(args))).items()) if v != "upstream"]
        print(f"turnip-fdm: note: the model follows its Mesa {_reading(args)} reading ({', '.join(changed)})",
              file=sys.stderr)
    print(_driver_line(box, items[0].gpu, passed), flush=True)
    gpus = sorted({it.gpu for it in items})
    what = (f"{len(items)} scenario run" + ("s" if len(items) != 1 else "")
            + (f" (shard {part[0]}/{part[1]} of {total})" if part else "")
            + f" on {', '.join(gpus)}" + (f", generated with seed {args.seed}" if args.generated else "")
            + f", {jobs} job(s)")
    print(f"box check: {what}", flush=True)
    if keep is not None:
        _export(keep, items)

    outcomes: dict[int, Outcome] = {}
    tally = dict.fromkeys(STATUSES, 0)
    progress = Progress(len(items))
    t0 = time.monotonic()
    diff_lines: list[str] = []

    def report(status: int | None) -> None:
        done = [outcomes[n] for n in sorted(outcomes)]
        progress.close()
        seconds = time.monotonic() - t0
        summary = field_summary(done)
        if summary:
            print("differences by field (cause before effect): " + "; ".join(
                f"{f} {n} in {s} run(s)" for f, n, s in summary))
        if status is None:
            print(f"interrupted after {len(done)} of {len(items)} scenario runs: " + closing_line(done, seconds))
        else:
            print(closing_line(done, seconds))
            if status == EXIT_NOTHING_COMPARED:
                print(f"nothing compared: none of the {len(done)} scenario runs reached a comparison")
        props = {"mesa": box.mesa_version, "driver": str(box.driver or "the box's"), "jobs": str(jobs)}
        if args.generated:
            props["seed"] = str(args.seed)
        if part:
            props["shard"] = f"{part[0]}/{part[1]}"
        props.update({f"env.{k}": v for k, v in passed.items()})
        if args.junit:
            write_bytes("--junit", args.junit, junit(done, box.mesa_version, props))
        if args.differences:
            write_text("--differences", args.differences, "".join(line + "\n" for line in diff_lines))

    try:
        for n, o in check_iter(box, items, jobs=jobs, keep=keep, validation=not args.no_validation,
                               passed=passed, detail=False):
            outcomes[n] = o
            if o.status != AGREE:
                progress.close()
                print(o.line(), flush=True)
            if o.status == DIFFER:
                ordered = [d.line() for d in sorted(o.differences, key=lambda d: d.order())]
                diff_lines += ordered
                if args.verbose:
                    for line in ordered:
                        print("  " + line)
            tally[o.status] += 1
            progress.update(len(outcomes), summary_line(tally))
    except KeyboardInterrupt:
        report(None)
        raise
    status = exit_status([outcomes[n] for n in sorted(outcomes)])
    report(status)
    return status


def _export(keep: Path, items: Sequence[Item]) -> None:
    """Every item with a known mapping as ``KEEP/scenarios/NAME.GPU.toml`` (on its GPU)."""
    from turnip_base.outputs import make_dir, write_text

    from .export import to_toml

    folder = make_dir("--keep", keep / "scenarios")
    for it in items:
        if it.mapping is None:
            continue
        mapping = {**it.mapping, "gpu": it.gpu}
        write_text("--keep", folder / f"{it.name}.{it.gpu}.toml",
                   to_toml(mapping, f"{it.name} on {it.gpu}, kept by turnip-fdm box check\n"
                                    f"turnip-fdm box plan THIS_FILE shows the driver's bins beside the model's"))


def _plan(args: argparse.Namespace) -> int:
    import fdm

    from .check import check, exit_status, items_of
    from .table import side_by_side

    box, passed = _open_box(args)
    name = Path(args.scenario).stem
    raises = _read_expect(args.scenario)
    items = items_of([(name, fdm.load_scenario(args.scenario))], [args.gpu] if args.gpu else [],
                     {name: raises} if raises else None, mesa=_reading(args))
    print(_driver_line(box, items[0].gpu, passed))
    (o,) = check(box, items, validation=not args.no_validation, passed=passed)
    print(side_by_side(o))
    status = exit_status([o])
    if status == EXIT_NOTHING_COMPARED:
        print(f"nothing compared: {o.status}")
    return status
