"""``turnip-fdm diff``: two plans and layouts compared tile by tile (layout_solver.diff).

``diff A B`` compares two scenario files; ``diff A --variant NAME=VALUE`` compares A with A under
the variants; ``diff A B --variant ...`` compares A with B under the variants (``--variant``
always applies to the B side).  ``--json`` prints the diff as JSON; ``--out DIR`` writes
``diff.txt``, ``diff.json`` and a side-by-side ``index.html`` into DIR, all or nothing; not both
(:func:`fdm.outputs.check_json_or_out`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fdm.cli import add_variant_flag, load_and_plan
from fdm.outputs import check_json_or_out, check_output_dir, write_files
from layout_solver.diff import diff_json, diff_page_data, diff_plans, diff_table
from layout_solver.page import page_html
from turnip_base.errors import ScenarioError


def _label(path: str, variants: list[str]) -> str:
    return path + "".join(f" --variant {v}" for v in variants)


def cmd_diff(args: argparse.Namespace) -> int:
    check_json_or_out(args.json, args.out)
    b_path = args.b if args.b is not None else args.a
    if args.b is None and not args.variant:
        raise ScenarioError("B", "give a second scenario or a --variant: A against itself has no difference")
    if args.out is not None:
        check_output_dir("--out", args.out)
    a = load_and_plan(args.a)
    b = load_and_plan(b_path, args.variant)
    d = diff_plans(a, b, _label(args.a, []), _label(b_path, args.variant))
    if args.json:
        print(json.dumps(diff_json(d), indent=1))
        return 0
    table = diff_table(d)
    if args.out is not None:
        files = {"diff.txt": (table + "\n").encode("utf-8"),
                 "diff.json": (json.dumps(diff_json(d), indent=1) + "\n").encode("utf-8"),
                 "index.html": page_html(diff_page_data(a, b, d)).encode("utf-8")}
        write_files("--out", args.out, files, replace=True)
        print(d.summary())
        print(f"wrote {len(files)} files to {args.out} (open {args.out}/index.html)")
        return 0
    print(table)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "diff", help="compare the plans and layouts of two scenarios, or of one under two driver variants",
        description="Compare two plans and their subsampled layouts tile by tile and field by field: a table of "
                    "what changed (tiles named by pos, fields by their plan --json / layout --json names), "
                    "--json, or with --out a side-by-side page. --variant applies to the B side; B defaults "
                    "to A (docs/diff.md).")
    p.add_argument("a", metavar="A", help="scenario file (.toml or .json)")
    p.add_argument("b", metavar="B", nargs="?", help="second scenario file (default: A, with --variant)")
    add_variant_flag(p)
    p.add_argument("--json", action="store_true", help="print the diff as JSON instead of a table (not with --out)")
    p.add_argument("--out", metavar="DIR", help="write diff.txt, diff.json and index.html into DIR (all or nothing; "
                                              "not with --json)")
    p.set_defaults(func=cmd_diff)
