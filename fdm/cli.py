"""The ``turnip-fdm`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import resources

from .errors import ScenarioError


def _demo_path() -> str:
    return str(resources.files("fdm").joinpath("data/demo.toml"))


def _fail(msg: str) -> int:
    print(f"turnip-fdm: error: {msg}", file=sys.stderr)
    return 2


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan import plan_render_pass
    from .report import plan_json, plan_table
    from .scenario import load_scenario
    plan = plan_render_pass(load_scenario(args.scenario))
    if args.json:
        text = json.dumps(plan_json(plan), indent=1)
    else:
        text = plan_table(plan)
    if args.out:
        _write(args.out, text + "\n")
    else:
        print(text)
    return 0


def _write(path: str, text: str) -> None:
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def cmd_demo(args: argparse.Namespace) -> int:
    from .plan import plan_render_pass
    from .report import plan_json, plan_table
    from .scenario import load_scenario
    plan = plan_render_pass(load_scenario(_demo_path()))
    doc = json.dumps(plan_json(plan), indent=1) + "\n"
    table = plan_table(plan)
    out = args.out
    _write(os.path.join(out, "plan.json"), doc)
    _write(os.path.join(out, "plan.txt"), table + "\n")
    extra, layout_line = _demo_extras(plan, out)
    lrz_off = sum(1 for t in plan.tiles if not t.lrz)
    scaled = sum(1 for t in plan.tiles if t.bin_is_scaled)
    merged = sum(1 for t in plan.tiles if t.extent != (1, 1))
    print("\n".join(table.splitlines()[:2]))
    print(f"tiles rendered: {len(plan.tiles)} (merged groups {merged}, scaled {scaled}, LRZ off {lrz_off})")
    if layout_line:
        print(layout_line)
    print(f"wrote {os.path.join(out, 'plan.json')} and {os.path.join(out, 'plan.txt')}" + extra)
    return 0


def _demo_extras(plan, out: str):
    """The layout pictures of the demo: ``(note for the 'wrote' line, layout summary line)``."""
    from layout_solver.report import write_layout
    files, summary = write_layout(plan, out)
    return f"; {len(files)} layout files and {os.path.join(out, 'index.html')}", summary


def cmd_check(args: argparse.Namespace) -> int:
    from .scenario import load_scenario
    sc = load_scenario(args.scenario)
    print(f"{args.scenario}: valid ({sc.gpu.name}, {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s))")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="turnip-fdm",
                                description="Exact model of turnip's fragment-density-map logic.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    pp = sub.add_parser("plan", help="plan a render pass from a scenario file",
                        description="Print, per rendered tile and view, what turnip programs "
                                    "(bins, frag areas, offsets o and o', LRZ, fast store).")
    pp.add_argument("scenario", help="scenario file (.toml or .json, see docs/scenario.md)")
    pp.add_argument("--json", action="store_true", help="write the full plan as JSON instead of a table")
    pp.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    pp.set_defaults(func=cmd_plan)

    pd = sub.add_parser("demo", help="run the embedded default scenario (2-view VR pass on a750)",
                        description="Plan the embedded default scenario, print a summary and write the plan.")
    pd.add_argument("--out", default="out/demo", metavar="DIR", help="output directory (default: out/demo)")
    pd.set_defaults(func=cmd_demo)

    pc = sub.add_parser("check", help="validate a scenario file",
                        description="Validate a scenario file; exit 2 with the offending field otherwise.")
    pc.add_argument("scenario")
    pc.set_defaults(func=cmd_check)

    for mod in ("layout_solver.cli", "mipmap.cli"):
        try:
            m = __import__(mod, fromlist=["register"])
        except ImportError:
            continue
        m.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ScenarioError as e:
        return _fail(str(e))
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
