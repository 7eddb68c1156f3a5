"""The ``turnip-fdm layout`` subcommand."""

from __future__ import annotations

import argparse


def cmd_layout(args: argparse.Namespace) -> int:
    from fdm.errors import ScenarioError
    from fdm.plan import plan_render_pass
    from fdm.scenario import load_scenario

    from .report import write_layout
    plan = plan_render_pass(load_scenario(args.scenario))
    views = None
    if args.view is not None:
        if not 0 <= args.view < plan.scenario.views:
            raise ScenarioError("--view", f"must be in [0, {plan.scenario.views - 1}], got {args.view}")
        views = [args.view]
    try:
        files, summary = write_layout(plan, args.out, views)
    except AssertionError as e:
        # a driver assertion (e.g. calc_shared_vert_edge) would fire for this scenario
        raise ScenarioError("scenario", f"turnip would hit an assertion while laying it out: {e}") from None
    print(summary)
    print(f"wrote {len(files)} files to {args.out} (open {args.out}/index.html)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("layout", help="solve the subsampled-image layout and draw it",
                       description="Solve turnip's subsampled-image layout for a scenario and write SVG and PNG "
                                   "pictures of (a) the framebuffer bins, (b) the subsampled image with aprons, "
                                   "(c) the reconstruction and its error, with an index.html.")
    p.add_argument("scenario", help="scenario file (.toml or .json)")
    p.add_argument("--out", default="out/layout", metavar="DIR", help="output directory (default: out/layout)")
    p.add_argument("--view", type=int, metavar="N", help="only this view")
    p.set_defaults(func=cmd_layout)
