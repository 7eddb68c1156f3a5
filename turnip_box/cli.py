"""``turnip-fdm box``: Mesa's real turnip, run without hardware, as the model's oracle.

  box setup [--mesa V]            build the Debian root once (cached; needs root and mmdebstrap)
  box info [--mesa V] [--driver P] the Mesa version, the GPUs it opens and their FDM extensions
  box check SCENARIO... [--gpu G]... [--generated N --seed S] [--junit F] [--mesa V] [--driver P]
                                  each scenario through turnip and through the model; one line per
                                  difference; exit 0 only when nothing differs
  box plan SCENARIO [--gpu G]     the driver's per-bin programming beside the model's

The model side runs in this process: a monkeypatched model is the one compared.  See docs/box.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fdm.scenario import Scenario

from fdm.errors import EXIT_FAILURE, ScenarioError

from .jobs import SHIM_GPU_IDS
from .root import DEFAULT_MESA, MESA_SUITES, check_mesa

GPUS = tuple(SHIM_GPU_IDS)
#: what ``turnip-fdm box --help`` says
DESCRIPTION = """\
Mesa's real turnip driver, run on this machine without an Adreno GPU, as the model's oracle.
turnip opens an Adreno 618/630/660/730/740/750 under Mesa's noop DRM shim and records real command
streams; the box decodes what it programs for every bin and compares it with the model.

  box setup                 build the box once (a Debian root, cached; needs root)
  box info                  the Mesa version, the GPUs it opens and their FDM extensions
  box check SCENARIO...     each scenario through turnip and the model: one line per difference,
                            exit status 0 only when nothing differs
  box plan SCENARIO         the driver's per-bin programming beside the model's

docs/box.md says what the box is, why its verdicts can be trusted and where it stops."""
#: the Mesa releases the model has a reading of (its default variants follow 26.2: docs/driver-revisions.md)
MODEL_RELEASES = ("26.2",)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mesa", default=DEFAULT_MESA, metavar="V",
                   help=f"the Mesa release whose turnip runs: {', '.join(MESA_SUITES)} (default {DEFAULT_MESA})")
    p.add_argument("--driver", default=None, metavar="PATH",
                   help="run this locally built libvulkan_freedreno.so instead of the box's turnip")


#: where ``--fdm-scenes`` takes its scenarios from (the device suite's fdm cases): given by the
#: command-line shell, which imports every package (the box imports no part of the suite)
SceneSource = Callable[[], "list[tuple[str, Scenario]]"]
_FDM_SCENES: list[SceneSource] = []


def register(subparsers: Any, fdm_scenes: SceneSource | None = None) -> None:
    """Add the `box` sub-command; ``fdm_scenes`` lists the scenarios ``--fdm-scenes`` adds."""
    _FDM_SCENES[:] = [fdm_scenes] if fdm_scenes is not None else []
    bp = subparsers.add_parser("box", help="Mesa's real turnip without hardware: check the model against it",
                               description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    bp.set_defaults(func=_no_sub)
    sub = bp.add_subparsers(dest="box_command")
    s = sub.add_parser("setup", help="build the box's Debian root (once; cached under ~/.cache/turnip-fdm/box)")
    s.add_argument("--mesa", default=DEFAULT_MESA, metavar="V", help=f"{', '.join(MESA_SUITES)}")
    s.add_argument("--force", action="store_true", help="build it again even when it exists")
    s.set_defaults(func=_setup)
    i = sub.add_parser("info", help="the Mesa version, the GPUs the box opens and their FDM extensions")
    _common(i)
    i.set_defaults(func=_info)
    c = sub.add_parser("check", help="each scenario through turnip and the model; one line per difference")
    c.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files (.toml or .json)")
    c.add_argument("--gpu", action="append", default=[], choices=GPUS, metavar="G",
                   help=f"run every scenario on this GPU (repeatable; default: the scenario's own). One of "
                        f"{', '.join(GPUS)}")
    c.add_argument("--generated", type=int, default=0, metavar="N", help="also N generated scenarios")
    c.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the generated scenarios (default 0)")
    c.add_argument("--fdm-scenes", action="store_true",
                   help="also the scenario of every case of the device suite's fdm backend (`vk list --backend fdm`)")
    c.add_argument("--junit", default=None, metavar="FILE", help="write a JUnit XML report")
    c.add_argument("--keep", default=None, metavar="DIR", help="keep the command streams (.rd) under DIR")
    _common(c)
    c.set_defaults(func=_check)
    pl = sub.add_parser("plan", help="the driver's per-bin programming beside the model's")
    pl.add_argument("scenario", metavar="SCENARIO")
    pl.add_argument("--gpu", default=None, choices=GPUS, metavar="G", help="run it on this GPU")
    _common(pl)
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


def _info(args: argparse.Namespace) -> int:
    from .info import device_info
    from .root import find_box

    box = find_box(args.mesa, args.driver)
    print(f"Mesa {box.mesa_version} ({args.mesa}) at {box.root}" + (f", driver {box.driver}" if box.driver else ""))
    for gpu in GPUS:
        print(device_info(box, gpu))
    return 0


def _scenarios(paths: list[str], generated: int, seed: int, fdm_scenes: bool = False) -> list[tuple[str, Any]]:
    import fdm

    out = []
    for p in paths:
        out.append((Path(p).stem, fdm.load_scenario(p)))
    if fdm_scenes:
        if not _FDM_SCENES:
            raise ScenarioError("--fdm-scenes", "the device suite's scenes are not available to this command line")
        out += _FDM_SCENES[0]()
    if generated:
        from .generate import generated_scenarios

        out += generated_scenarios(generated, seed)
    if not out:
        raise ScenarioError("SCENARIO", "give at least one scenario file or --generated N")
    return out


def _check(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .check import DIFFER, ERROR, NOT_SUPPORTED, check, items_of, junit, summary_line
    from .root import find_box

    if args.generated < 0 or args.generated > 100_000:
        raise ScenarioError("--generated", f"must lie in [0, 100000], got {args.generated}")
    check_mesa(args.mesa)
    box = find_box(args.mesa, args.driver)
    if args.mesa not in MODEL_RELEASES:
        print(f"turnip-fdm: note: the model has no revisions of its own for Mesa {args.mesa} "
              f"(docs/driver-revisions.md): it is compared as the {DEFAULT_MESA} reading", file=sys.stderr)
    items = items_of(_scenarios(args.scenarios, args.generated, args.seed, args.fdm_scenes), args.gpu)
    keep = Path(args.keep) if args.keep else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    with tqdm(total=len(items), desc=f"box check (Mesa {box.mesa_version})", unit="pass", file=sys.stderr,
              disable=None) as bar:
        outcomes = check(box, items, progress=lambda _it: bar.update(1), keep=keep)
    for o in outcomes:
        if o.status == DIFFER:
            for d in o.differences:
                print(d.line())
        elif o.status == ERROR:
            print(f"{o.item.name} [{o.item.gpu}]: error: {o.why}")
        elif o.status == NOT_SUPPORTED:
            print(f"{o.item.name} [{o.item.gpu}]: not supported: {o.why}")
    if args.junit:
        Path(args.junit).write_bytes(junit(outcomes, box.mesa_version))
    print(summary_line(outcomes))
    return EXIT_FAILURE if any(o.status in (DIFFER, ERROR) for o in outcomes) else 0


def _plan(args: argparse.Namespace) -> int:
    import fdm

    from .check import check, items_of
    from .root import find_box
    from .table import side_by_side

    box = find_box(args.mesa, args.driver)
    items = items_of([(Path(args.scenario).stem, fdm.load_scenario(args.scenario))], [args.gpu] if args.gpu else [])
    (o,) = check(box, items)
    print(side_by_side(o))
    return 0
