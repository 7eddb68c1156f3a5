"""`turnip-fdm mipmap ...`: generate mip chains on a Vulkan device and check them.

    turnip-fdm mipmap run --size W H --format {r32f,rgba8,srgba8,rgba16f} --algorithm {tiled,spd,spd-split,blit}
                          [--device NAME_OR_INDEX] [--seed N] [--validation]
    turnip-fdm mipmap devices

The device comes from --device, else the environment variable TURNIP_FDM_DEVICE, else the
first one. `run` compares every level read back with the model (tiled: the box filter;
spd: its drop-the-odd-row rule; both must match R32F bit for bit, the 8-bit formats and
RGBA16F within 1). The blit chain has no exact model: its difference from the box filter
is printed for information. `devices` lists the physical devices as `index: name`.

Exit status: 0 match (blit: the chain was made); 1 mismatch, or a message of the validation
layer (--validation); 2 bad input (one line `turnip-fdm: error: FIELD: RULE`) or something
the machine lacks (one line `turnip-fdm: not supported: WHAT`).

This module only adds the sub-command (:func:`register`) and its handlers, which raise the
refusals of turnip_base.errors; the top-level command line (turnip_fdm.cli) creates the parser and
turns a refusal into its line and exit status.
"""
from __future__ import annotations

import argparse
import sys

from turnip_base.errors import ScenarioError
from turnip_base.options import choice

from .formats import FORMAT_NAMES, get_format
from .plan import ALGORITHMS, SPD_RULE

#: ``turnip-fdm mipmap --help`` (written for the user; the module docstring is for the code's reader)
MIPMAP_HELP = """\
Generate a mip chain with a compute shader on a Vulkan device and compare every level with the
exact model of the algorithm.

  turnip-fdm mipmap run --size W H [--format F] [--algorithm A] [--device D] [--seed N] [--validation]
  turnip-fdm mipmap devices

Needs a Vulkan device (lavapipe will do: Debian mesa-vulkan-drivers). More: docs/mipmap.md."""

RUN_HELP = """\
Make a random level 0 of W x H texels, generate its mip chain on the device and compare every
level read back with the model: tiled (nvpro's algorithm) against the box filter, spd (the
single-pass downsampler) against its drop-the-odd-row rule; r32f must match bit for bit, the
8-bit formats and rgba16f within 1. blit (vkCmdBlitImage) has no exact model: its difference
from the box filter is printed for information.

The device is --device, else $TURNIP_FDM_DEVICE, else the first one (see 'mipmap devices')."""

EXIT_HELP = """\
exit status: 0 every level matches (blit: the chain was made); 1 a level differs, or the
validation layer spoke (--validation); 2 bad input or a device that lacks something (one line)."""


def _positive_int(s: str) -> int:
    """argparse type of --size: an integer >= 1 (argparse names the flag in the error)."""
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `mipmap` sub-command (with `run` and `devices`) to an argparse subparsers object.

    The nested sub-commands are made with the parser class of ``subparsers`` (argparse's
    default), so they report argument errors as the top-level parser does."""
    mp = subparsers.add_parser("mipmap", help="compute mip chains on a Vulkan device", description=MIPMAP_HELP,
                               epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    mp.set_defaults(func=handle_mipmap)
    sub = mp.add_subparsers(dest="mipmap_command", metavar="{run,devices}")
    run = sub.add_parser("run", help="generate a chain and compare every level with the model",
                         description=RUN_HELP, epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--size", nargs=2, metavar=("W", "H"), required=True, type=_positive_int,
                     help="level-0 width and height in texels (>= 1)")
    run.add_argument("--format", default="rgba8", help=f"one of {', '.join(FORMAT_NAMES)} (default rgba8)")
    run.add_argument("--algorithm", default="tiled", help=f"one of {', '.join(ALGORITHMS)} (default tiled)")
    run.add_argument("--device", default=None, help="device index or name substring (default: $TURNIP_FDM_DEVICE)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random level 0 (default 0)")
    run.add_argument("--validation", action="store_true", help="Khronos validation layer on; any message fails the run")
    run.set_defaults(func=handle_run)
    dev = sub.add_parser("devices", help="list the Vulkan devices",
                         description="List the Vulkan physical devices as 'index: name' (what --device takes).")
    dev.set_defaults(func=handle_devices)


def handle_mipmap(args: argparse.Namespace) -> int:
    """`turnip-fdm mipmap` without a sub-command."""
    raise ScenarioError("mipmap", "needs a sub-command: run or devices")


def handle_run(args: argparse.Namespace) -> int:
    """`mipmap run`: 0 match, 1 mismatch or validation message; refusals are raised."""
    from turnip_base.harness import open_device

    from .compare import compare_chain
    from .formats import random_level0
    from .gpu import MipmapRunner
    from .reference import stored_chain
    from .spd_model import spd_reference

    fmt = get_format(args.format)
    algorithm = choice("algorithm", args.algorithm, ALGORITHMS)
    w, h = args.size
    if w < 1 or h < 1:
        raise ScenarioError("size", f"width and height must be >= 1, got {w}x{h}")
    with open_device(args.device, validation=args.validation) as ctx:
        runner = MipmapRunner(ctx, fmt)
        runner.check_algorithm(algorithm)
        runner.check_size(w, h, algorithm)
        level0 = random_level0(w, h, fmt, args.seed)
        got = runner.generate(algorithm, level0)
        model = spd_reference(level0, fmt) if algorithm in SPD_RULE else stored_chain(level0, fmt)
        cmp = compare_chain(got, model, fmt)
        messages = list(ctx.messages)
        info = ctx.info
        path = runner.variant("fast" if algorithm == "tiled" else "spd" if algorithm in SPD_RULE else algorithm)
    unit = "LSB" if fmt.quantised_8bit else "ulp"
    kernel = path if algorithm != "blit" else "vkCmdBlitImage"
    print(f"device: {info.describe()}")
    print(f"{algorithm} {w}x{h} {fmt.name}: {len(got)} levels, kernel {kernel}")
    for level, (g, err) in enumerate(zip(got, cmp.per_level, strict=True)):
        print(f"  level {level:2d} {g.shape[1]}x{g.shape[0]}: max difference {err} {unit}")
    if messages:
        print(f"validation: {len(messages)} message(s); first: {messages[0]}", file=sys.stderr)
        return 1
    if algorithm == "blit":
        print(f"blit: worst difference from the box filter {cmp.max_error} {unit} (no exact model; information only)")
        return 0
    verdict = "match" if cmp.ok else "MISMATCH"
    print(f"{verdict}: worst {cmp.max_error} {unit}, tolerance {cmp.tolerance} {unit}")
    return 0 if cmp.ok else 1


def handle_devices(args: argparse.Namespace) -> int:
    """`mipmap devices`: one line `index: name` per physical device."""
    from turnip_base.harness import list_devices

    for i, n in enumerate(list_devices()):
        print(f"{i}: {n}")
    return 0
