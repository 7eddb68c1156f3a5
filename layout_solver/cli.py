"""The ``turnip-fdm layout`` sub-command.

Registered by the command-line shell (``turnip_fdm.cli``); the handler raises the refusals of
:mod:`fdm.errors` (a bad flag is a :class:`~fdm.errors.ScenarioError`, a driver assertion on the
scenario a :class:`~fdm.errors.DriverAssertion`) and never prints error lines itself.
"""

from __future__ import annotations

import argparse
from typing import Any

from fdm.errors import ScenarioError
from fdm.outputs import check_output_dir, write_files
from fdm.plan import plan_render_pass
from fdm.scenario import load_scenario

from .report import layout_files

SubParsers = Any  # argparse._SubParsersAction (a private class)


def cmd_layout(args: argparse.Namespace) -> int:
    check_output_dir("--out", args.out)
    plan = plan_render_pass(load_scenario(args.scenario))
    views = None
    if args.view is not None:
        if not 0 <= args.view < plan.scenario.views:
            raise ScenarioError("--view", f"must be in [0, {plan.scenario.views - 1}], got {args.view}")
        views = [args.view]
    files, summary = layout_files(plan, views)
    written = write_files("--out", args.out, files)
    print(summary)
    print(f"wrote {len(written)} files to {args.out} (open {args.out}/index.html)")
    return 0


def register(sub: SubParsers) -> None:
    """Add ``layout`` to the shell's sub-command parsers."""
    p = sub.add_parser("layout", help="solve the subsampled-image layout and draw it",
                       description="Solve turnip's subsampled-image layout for a scenario and write SVG and PNG "
                                   "pictures of (a) the framebuffer bins, (b) the subsampled image with aprons, "
                                   "(c) the reconstruction and its error, with an index.html.")
    p.add_argument("scenario", help="scenario file (.toml or .json)")
    p.add_argument("--out", default="out/layout", metavar="DIR", help="output directory (default: out/layout)")
    p.add_argument("--view", type=int, metavar="N", help="only this view")
    p.set_defaults(func=cmd_layout)
