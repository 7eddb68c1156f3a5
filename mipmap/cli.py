"""`turnip-fdm mipmap ...`: generate mip chains on a Vulkan device and check them.

    turnip-fdm mipmap run --size W H --format {r32f,rgba8,srgba8,rgba16f} --algorithm {tiled,spd,blit}
                          [--device NAME_OR_INDEX] [--seed N] [--validation]
    turnip-fdm mipmap devices

The device comes from --device, else the environment variable TURNIP_FDM_DEVICE, else the
first one. `run` compares every level read back with the model (tiled: the box filter;
spd: its drop-the-odd-row rule; both must match R32F bit for bit, the 8-bit formats and
RGBA16F within 1). The blit chain has no exact model: its difference from the box filter
is printed for information. Exit status: 0 match, 1 mismatch, 2 bad input or not supported.
"""
from __future__ import annotations

import argparse
import sys

from .formats import FORMATS
from .gpu import ALGORITHMS


def _positive_int(field: str):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{field}: must be an integer, got {s!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{field}: must be >= 1, got {v}")
        return v
    return parse


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def register(subparsers) -> None:
    """Add the `mipmap` subcommand (with `run` and `devices`) to an argparse subparsers object."""
    mp = subparsers.add_parser("mipmap", help="compute mip chains on a Vulkan device", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    mp.set_defaults(func=lambda args: (mp.print_help(), 2)[1])
    sub = mp.add_subparsers(dest="mipmap_command", parser_class=_Parser)
    run = sub.add_parser("run", help="generate a chain and compare every level with the model")
    run.add_argument("--size", nargs=2, metavar=("W", "H"), required=True, type=_positive_int("size"),
                     help="level-0 width and height (>= 1)")
    run.add_argument("--format", default="rgba8", help=f"one of {', '.join(FORMATS)} (default rgba8)")
    run.add_argument("--algorithm", default="tiled", help=f"one of {', '.join(ALGORITHMS)} (default tiled)")
    run.add_argument("--device", default=None, help="device index or name substring (default: $TURNIP_FDM_DEVICE)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random level 0")
    run.add_argument("--validation", action="store_true", help="enable VK_LAYER_KHRONOS_validation; messages fail")
    run.set_defaults(func=handle_run)
    dev = sub.add_parser("devices", help="list the Vulkan devices")
    dev.set_defaults(func=handle_devices)


def handle_run(args) -> int:
    from vk_tests.harness import NotSupported, open_device

    from .compare import compare_chain
    from .formats import get_format, random_level0
    from .gpu import MipmapRunner
    from .reference import stored_chain
    from .spd_model import spd_reference

    try:
        fmt = get_format(args.format)
        if args.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm: must be one of {', '.join(ALGORITHMS)}, got {args.algorithm!r}")
        w, h = args.size
        if w < 1 or h < 1:
            raise ValueError(f"size: width and height must be >= 1, got {w}x{h}")
        with open_device(args.device, validation=args.validation) as ctx:
            runner = MipmapRunner(ctx, fmt)
            runner.check_algorithm(args.algorithm)
            runner.check_size(w, h, args.algorithm)
            level0 = random_level0(w, h, fmt, args.seed)
            got = runner.generate(args.algorithm, level0)
            model = spd_reference(level0, fmt) if args.algorithm == "spd" else stored_chain(level0, fmt)
            cmp = compare_chain(got, model, fmt)
            messages = list(ctx.messages)
            info = ctx.info
            path = runner.variant("fast" if args.algorithm == "tiled" else args.algorithm)
    except (ValueError, NotSupported) as e:
        kind = "not supported: " if isinstance(e, NotSupported) else ""
        print(f"turnip-fdm mipmap run: {kind}{e}", file=sys.stderr)
        return 2
    unit = "LSB" if fmt.quantised_8bit else "ulp"
    print(f"device: {info.describe()}")
    print(f"{args.algorithm} {w}x{h} {fmt.name}: {len(got)} levels, kernel {path if args.algorithm != 'blit' else 'vkCmdBlitImage'}")
    for level, (g, err) in enumerate(zip(got, cmp.per_level, strict=False)):
        print(f"  level {level:2d} {g.shape[1]}x{g.shape[0]}: max difference {err} {unit}")
    if messages:
        print(f"validation: {len(messages)} message(s); first: {messages[0]}", file=sys.stderr)
        return 1
    if args.algorithm == "blit":
        print(f"blit: worst difference from the box filter {cmp.max_error} {unit} (no exact model; information only)")
        return 0
    verdict = "match" if cmp.ok else "MISMATCH"
    print(f"{verdict}: worst {cmp.max_error} {unit}, tolerance {cmp.tolerance} {unit}")
    return 0 if cmp.ok else 1


def handle_devices(args) -> int:
    from vk_tests.harness import NotSupported, list_devices
    try:
        names = list_devices()
    except NotSupported as e:
        print(f"turnip-fdm mipmap devices: not supported: {e}", file=sys.stderr)
        return 2
    for i, n in enumerate(names):
        print(f"{i}: {n}")
    return 0


def main(argv=None) -> int:
    parser = _Parser(prog="turnip-fdm")
    subparsers = parser.add_subparsers(dest="command", parser_class=_Parser)
    register(subparsers)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
