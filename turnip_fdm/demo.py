"""``turnip-fdm demo``: the embedded two-view VR pass on an a750, planned and laid out."""

from __future__ import annotations

import argparse
import json
import os
from importlib import resources
from typing import Any

from fdm.outputs import check_output_dir, write_files
from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.report import plan_json, plan_table
from fdm.scenario import load_scenario
from layout_solver.progress import terminal_progress
from layout_solver.report import layout_files


def demo_scenario_path() -> str:
    """The embedded default scenario (``fdm/data/demo.toml``)."""
    return str(resources.files("fdm").joinpath("data/demo.toml"))


def cmd_demo(args: argparse.Namespace) -> int:
    out = args.out
    check_output_dir("--out", out)
    plan = plan_render_pass(load_scenario(demo_scenario_path()))
    if not isinstance(plan, RenderPassPlan):  # the embedded scenario is a GMEM pass
        raise AssertionError(f"the demo scenario renders in sysmem: {plan.sysmem_reason}")
    table = plan_table(plan)
    files = {"plan.json": (json.dumps(plan_json(plan), indent=1) + "\n").encode("utf-8"),
             "plan.txt": (table + "\n").encode("utf-8")}
    with terminal_progress("demo") as progress:
        layout, layout_line = layout_files(plan, progress=progress)
    files.update(layout)
    write_files("--out", out, files, replace=True)
    lrz_off = sum(1 for t in plan.tiles if not t.lrz)
    scaled = sum(1 for t in plan.tiles if t.bin_is_scaled)
    merged = sum(1 for t in plan.tiles if t.extent != (1, 1))
    print("\n".join(table.splitlines()[:2]))
    print(f"tiles rendered: {len(plan.tiles)} (merged groups {merged}, scaled {scaled}, LRZ off {lrz_off})")
    print(layout_line)
    print(f"wrote {os.path.join(out, 'plan.json')} and {os.path.join(out, 'plan.txt')}; "
          f"{len(layout)} layout files and {os.path.join(out, 'index.html')}")
    return 0


def register(sub: Any) -> None:
    pd = sub.add_parser("demo", help="run the embedded default scenario (2-view VR pass on a750)",
                        description="Plan the embedded default scenario, print a summary and write the plan "
                                    "and the layout pictures.")
    pd.add_argument("--out", default="out/demo", metavar="DIR", help="output directory (default: out/demo)")
    pd.set_defaults(func=cmd_demo)
