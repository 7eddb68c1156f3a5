"""The model's sub-commands: ``plan`` and ``check``.

Registered by the command-line shell (``turnip_fdm.cli``); handlers raise the refusals of
:mod:`turnip_base.errors` and never print error lines themselves.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Sequence
from typing import Any

from .outputs import check_json_or_out, check_output_dir, write_files
from .plan import RenderPassPlan, SysmemPlan, plan_render_pass
from .report import PLAN_COLUMNS, plan_json, plan_table
from .scenario import load_scenario

SubParsers = Any  # argparse._SubParsersAction (a private class)


def load_and_plan(path: str, variants: Sequence[str] = ()) -> RenderPassPlan | SysmemPlan:
    """Read, validate and plan a scenario file: the validation ``check`` and ``plan`` share.
    ``variants``: ``NAME=VALUE`` driver-variant overrides (``--variant``)."""
    return plan_render_pass(load_scenario(path, variants))


def add_variant_flag(p: argparse.ArgumentParser) -> None:
    """``--variant NAME=VALUE`` (repeatable): select a driver variant (fdm.variants)."""
    p.add_argument("--variant", action="append", default=[], metavar="NAME=VALUE",
                   help="follow another reading of a turnip function: bin_merging=fixed, "
                        "tu_calc_tile_config=sailfish-9429b474, tu_emit_subsampled=tencentmalos-16ad8431, "
                        "tu_calc_subsampled_aprons=sailfish-9429b474, tu_clear_gmem_attachment=mesa-26.1, "
                        "tu_pipeline_builder_emit_state=mesa-26.1 (default: upstream 26.2; "
                        "docs/driver-revisions.md)")


def plan_columns_help() -> str:
    """The table's columns for ``plan --help`` (the same names as the JSON keys; docs/plan-table.md)."""
    width = max(len(n) for n, _, _ in PLAN_COLUMNS)
    lines = ["columns of the table (each is also the key of the value in --json):"]
    for n, sym, meaning in PLAN_COLUMNS:
        lines += textwrap.wrap(f"{(sym + ': ') if sym else ''}{meaning}", width=100,
                               initial_indent=f"  {n:<{width}}  ", subsequent_indent=" " * (width + 4))
    return "\n".join(lines)


def cmd_plan(args: argparse.Namespace) -> int:
    check_json_or_out(args.json, args.out)
    if args.out is not None:
        check_output_dir("--out", args.out)
    plan = load_and_plan(args.scenario, args.variant)
    if args.out is not None:
        # --out is a directory in every command: both renderings, all or nothing, no stale files
        written = write_files("--out", args.out, {
            "plan.txt": (plan_table(plan) + "\n").encode("utf-8"),
            "plan.json": (json.dumps(plan_json(plan), indent=1) + "\n").encode("utf-8")}, replace=True)
        print(f"wrote {len(written)} files to {args.out} (plan.txt, plan.json)")
        return 0
    print(json.dumps(plan_json(plan), indent=1) if args.json else plan_table(plan))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    # exactly the validation `plan` runs: a scenario `check` accepts, `plan` plans
    plan = load_and_plan(args.scenario, args.variant)
    sc = plan.scenario
    how = (f"rendered in sysmem: {plan.sysmem_reason}" if isinstance(plan, SysmemPlan)
           else f"{len(plan.tiles)} tiles rendered")
    print(f"{args.scenario}: valid ({sc.gpu.name}, {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s), "
          f"{how})")
    return 0


def register(sub: SubParsers) -> None:
    """Add ``plan`` and ``check`` to the shell's sub-command parsers."""
    pp = sub.add_parser("plan", help="plan a render pass from a scenario file",
                        description="Print, per rendered tile and view, what turnip programs "
                                    "(bins, frag areas, offsets o and o', LRZ, fast store).",
                        epilog=plan_columns_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    pp.add_argument("scenario", help="scenario file (.toml or .json, see docs/scenario.md)")
    pp.add_argument("--json", action="store_true", help="print the full plan as JSON instead of a table "
                                                         "(not with --out)")
    pp.add_argument("--out", metavar="DIR", help="write plan.txt and plan.json into DIR (all or nothing) instead of "
                                                "printing (not with --json)")
    add_variant_flag(pp)
    pp.set_defaults(func=cmd_plan)

    pc = sub.add_parser("check", help="validate a scenario file (the same checks as plan)",
                        description="Validate a scenario file and plan it without printing the plan; "
                                    "exit 2 with the offending field otherwise.")
    pc.add_argument("scenario", help="scenario file (.toml or .json)")
    add_variant_flag(pc)
    pc.set_defaults(func=cmd_check)
