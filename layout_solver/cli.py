"""The ``turnip-fdm layout`` sub-command.

Registered by the command-line shell (``turnip_fdm.cli``); the handler raises the refusals of
:mod:`turnip_base.errors` (a bad flag is a :class:`~turnip_base.errors.ScenarioError`, a driver assertion on the
scenario a :class:`~turnip_base.errors.DriverAssertion`) and never prints error lines itself.

``--json`` prints :func:`layout_solver.layout_json.layout_json` to standard output and writes no
file; ``--out`` (the picture directory) is refused with it (the rule of every command,
:func:`fdm.outputs.check_json_or_out`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fdm.outputs import check_json_or_out, check_output_dir, write_files
from fdm.plan import SysmemPlan, plan_render_pass
from fdm.scenario import load_scenario
from turnip_base.errors import ScenarioError

from .layout_json import layout_json, sysmem_layout_json
from .progress import terminal_progress
from .report import layout_files, sysmem_layout_files
from .solver import tu_calc_subsampled

SubParsers = Any  # argparse._SubParsersAction (a private class)

#: picture directory when ``--out`` is not given
DEFAULT_OUT = "out/layout"


def cmd_layout(args: argparse.Namespace) -> int:
    check_json_or_out(args.json, args.out)
    if args.json and args.no_reconstruction:
        raise ScenarioError("--no-reconstruction", "not with --json (which draws no picture)")
    out = DEFAULT_OUT if args.out is None else args.out
    if not args.json:
        check_output_dir("--out", out)
    plan = plan_render_pass(load_scenario(args.scenario, args.variant))
    views = None
    if args.view is not None:
        if not 0 <= args.view < plan.scenario.fdm_layers:
            raise ScenarioError("--view", f"must be in [0, {plan.scenario.fdm_layers - 1}], got {args.view}")
        views = [args.view]
    if isinstance(plan, SysmemPlan):
        if args.json:
            print(json.dumps(sysmem_layout_json(plan, views), indent=1))
            return 0
        files, summary = sysmem_layout_files(plan)
    elif args.json:
        print(json.dumps(layout_json(plan, tu_calc_subsampled(plan), views), indent=1))
        return 0
    else:
        with terminal_progress("layout") as progress:
            files, summary = layout_files(plan, views, progress=progress, reconstruction=not args.no_reconstruction)
    written = write_files("--out", out, files, replace=True)
    print(summary)
    print(f"wrote {len(written)} files to {out} (open {out}/index.html)")
    return 0


def register(sub: SubParsers) -> None:
    """Add ``layout`` to the shell's sub-command parsers."""
    p = sub.add_parser("layout", help="solve the subsampled-image layout and draw it",
                       description="Solve turnip's subsampled-image layout for a scenario and write SVG and PNG "
                                   "pictures of (a) the framebuffer bins, (b) the subsampled image with aprons, "
                                   "(c) the reconstruction and its error, with an index.html; or, with --json, "
                                   "print the layout, its metadata and apron blits as one JSON document "
                                   "(docs/layout-json.md).")
    p.add_argument("scenario", help="scenario file (.toml or .json)")
    p.add_argument("--out", metavar="DIR", help=f"output directory (default: {DEFAULT_OUT}; not with --json)")
    p.add_argument("--view", type=int, metavar="N", help="only this view")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=VALUE",
                   help="a driver variant, as for plan (docs/driver-revisions.md)")
    p.add_argument("--json", action="store_true",
                   help="print the layout as JSON to standard output instead of writing pictures (not with --out)")
    p.add_argument("--no-reconstruction", action="store_true",
                   help="leave out the (c) pictures (the CPU reconstruction and its error): the bins and the "
                        "subsampled image only, for iterating on a density map (about 2x faster at 2x3840x3840; "
                        "not with --json)")
    p.set_defaults(func=cmd_layout)
