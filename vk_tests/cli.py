"""`turnip-fdm vk ...`: the FDM device suite.

    turnip-fdm vk list  [--backend B]... [--filter GLOB]
    turnip-fdm vk run   [--device D] [--mesa V] [--backend B]... [--filter GLOB] [--out DIR] [--no-large-images]
    turnip-fdm vk check BUNDLE

`list` prints the selected cases (name, backend, description).  `run` runs them on one device
opened with the Khronos validation layer (only when a selected case needs a device; --device,
else $TURNIP_FDM_DEVICE, else the first device), writes the result bundle to --out (default
out/vk) and ends with the line `N passed, N failed, N not supported`.  `check` judges every
case of a bundle again with this version's judges, on the stored scenes and images, and prints
`same` or `DIFFERS` per case.

The device selector is checked before any case runs: an index or name substring that names no
device of this machine is refused (status 2, the line lists the devices), even when only host
cases are selected.  A machine without Vulkan cannot check it: the device cases are then
NotSupported with the reason and the host cases still run.

`--device box:GPU` (a618, a630, a660, a730, a740, a750; `--mesa V` picks the box's Mesa, default
26.2) runs the `fdm` cases on Mesa's turnip in the box (`turnip-fdm box setup`) and judges their
command streams against the model: StreamAgree / StreamDiffer, never a pixel pass (the closing
line adds `N stream agree, N stream differ`); other device cases are NotSupported there.

--backend (repeatable) is one of host, replay, fdm, fsr (default: all); --filter is a shell
pattern on the case name (`replay.offset.*`).  A selection that matches no case is refused.

Exit status (`run` and `check`):
  0    something was compared and nothing failed: `run` at least one Pass, QualityWarning or
       StreamAgree and no Fail or StreamDiffer; `check` at least one case judged again and no
       verdict DIFFERS
  1    `run` a case failed (Fail or StreamDiffer); `check` a verdict DIFFERS
  2    bad input, one line `turnip-fdm: error: FIELD: RULE` (a flag, a selection that matches no
       case, --out, a --device that names no device, not a bundle)
  3    nothing compared: `run` every selected case NotSupported (or not run), `check` no case
       could be judged again; a line `nothing compared: ...` / `nothing re-judged: ...` follows
       the closing line
  130  Ctrl-C (`run` still writes the results so far)
The cases, statuses and the bundle's files: docs/device-suite.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from fdm.outputs import check_output_dir
from turnip_base.errors import EXIT_FAILURE, EXIT_NOTHING_COMPARED, ScenarioError
from turnip_base.options import choice

from .suite.bundle import load_bundle
from .suite.cases import BACKENDS, Case
from .suite.runner import OUT_FIELD, check_selector, nothing_rejudged, recheck, run_suite
from .suite.selection import by_name, select

DEFAULT_OUT = "out/vk"


def _selection_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", action="append", default=[], metavar="B",
                   help=f"only cases of this backend (repeatable): {', '.join(BACKENDS)}")
    p.add_argument("--filter", default=None, metavar="GLOB", help="only cases whose name matches this shell pattern")


def register(subparsers: Any) -> None:
    """Add the `vk` sub-command (with `list`, `run` and `check`)."""
    vp = subparsers.add_parser("vk", help="the FDM device suite: list, run and check cases", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    vp.set_defaults(func=handle_vk)
    sub = vp.add_subparsers(dest="vk_command")
    ls = sub.add_parser("list", help="list the cases (name, backend, description)")
    _selection_flags(ls)
    ls.set_defaults(func=handle_list)
    run = sub.add_parser("run", help="run the cases and write the result bundle")
    _selection_flags(run)
    run.add_argument("--device", default=None,
                     help="device index or name substring (default: $TURNIP_FDM_DEVICE), or box:GPU (turnip in "
                          "the box)")
    run.add_argument("--mesa", default=None, metavar="V", help="with --device box:GPU: the box's Mesa (default 26.2)")
    run.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                     help=f"the result bundle's directory: new, empty or an earlier bundle (default {DEFAULT_OUT})")
    run.add_argument("--no-large-images", action="store_true",
                     help="leave images larger than 4 MiB out of the bundle (recorded as omitted)")
    run.set_defaults(func=handle_run)
    check = sub.add_parser("check", help="judge a bundle's cases again; DIFFERS where a verdict changed")
    check.add_argument("bundle", metavar="BUNDLE", help="a directory written by `vk run`")
    check.set_defaults(func=handle_check)


def handle_vk(args: argparse.Namespace) -> int:
    """`turnip-fdm vk` without a sub-command."""
    raise ScenarioError("vk", "needs a sub-command: list, run or check")


def all_cases() -> list[Case]:
    """:func:`vk_tests.registry.all_cases`, imported when a command needs the cases (so that
    ``turnip-fdm --help`` does not load every backend)."""
    from .registry import all_cases as every_case

    return every_case()


def _selected(args: argparse.Namespace) -> list[Case]:
    backends = [choice("--backend", b, BACKENDS) for b in args.backend]
    cases = select(all_cases(), backends, args.filter)
    if not cases:
        what = " and ".join(x for x in (f"backend {', '.join(backends)}" if backends else "",
                                        f"filter {args.filter!r}" if args.filter is not None else "") if x)
        raise ScenarioError("--filter" if args.filter is not None else "--backend", f"no case matches {what}")
    return cases


def handle_list(args: argparse.Namespace) -> int:
    cases = _selected(args)
    width = max(len(c.name) for c in cases)
    for c in cases:
        print(f"{c.name:<{width}}  {c.backend:<6}  {c.description}")
    print(f"{len(cases)} case(s)")
    return 0


def handle_run(args: argparse.Namespace) -> int:
    check_output_dir(OUT_FIELD, args.out)
    from .box.device import device_opener

    opener = device_opener(args.device, args.mesa)
    if args.mesa is not None and opener is None:
        raise ScenarioError("--mesa", "picks the box's Mesa: only with --device box:GPU")
    cases = _selected(args)
    if opener is None:  # a box device was checked by device_opener
        check_selector(args.device)
    progress = sys.stderr if sys.stderr.isatty() else None
    selection = {"backends": args.backend, "filter": args.filter, "device": args.device}
    if args.mesa is not None:
        selection["mesa"] = args.mesa
    result = run_suite(cases, args.device, args.out, progress, large_images=not args.no_large_images,
                       opener=opener, selection=selection)
    dev = result.device
    if dev is not None:
        print(f"device: {dev['description']}" if dev["opened"] else f"device: none ({dev['reason']})")
    for r in result.records:
        if r.status not in ("Pass", "StreamAgree", "NotRun"):
            print(f"{r.status}  {r.name}: {r.message}")
    print(f"bundle: {args.out}")
    print(result.closing_line)
    if result.interrupted:
        raise KeyboardInterrupt
    if result.failed:
        return EXIT_FAILURE
    if result.nothing_compared is not None:
        print(result.nothing_compared)
        return EXIT_NOTHING_COMPARED
    return 0


def handle_check(args: argparse.Namespace) -> int:
    from .box.device import DEVICE_JUDGES

    stored = load_bundle(args.bundle)
    results = recheck(stored, by_name(all_cases()), DEVICE_JUDGES)
    for r in results:
        if r.outcome == "DIFFERS":
            assert r.stored is not None and r.now is not None
            print(f"DIFFERS    {r.name}: stored {r.stored.status} ({r.stored.message}); now {r.now.status} "
                  f"({r.now.message})")
        else:
            status = r.stored.status if r.stored is not None else "NotRun"
            print(f"{r.outcome:<10} {r.name}: {status}{f' ({r.note})' if r.note else ''}")
    n = {k: sum(r.outcome == k for r in results) for k in ("same", "DIFFERS", "unknown", "unchecked")}
    print(f"{n['same']} same, {n['DIFFERS']} differ, {n['unknown']} unknown, {n['unchecked']} unchecked")
    if n["DIFFERS"]:
        return EXIT_FAILURE
    nothing = nothing_rejudged(results)
    if nothing is not None:
        print(nothing)
        return EXIT_NOTHING_COMPARED
    return 0
