"""Time the tiled generator, the single-pass downsampler and a vkCmdBlitImage chain side by side.

    python bench/mipmap_bench.py [--device NAME_OR_INDEX] [--runs 25] [--out bench/results/h100.md] [--tail]

For every size and format, each algorithm is recorded `warmup + runs` times into one command
buffer: before each run a 256 MiB vkCmdFillBuffer evicts the L2 cache, then a full barrier,
a timestamp, the chain, a timestamp. Reported: median and minimum of the timed runs in µs,
the ratio to the blit chain (time / blit time), and the bandwidth floor (level 0 read once
plus every level written once, at the copy bandwidth measured in the same run with
vkCmdCopyBuffer) as a fraction of the median. After timing, every level is read back and
compared with the model (tiled: the box filter; SPD: its drop-odd rule; blit: the box filter
as well, reported only). Not a test: nothing here asserts a speed.

With --out X.md the same run also writes X.json (one object per cell: size, format,
algorithm, median_us, floor_us, blit_us, max_err, and min_us, dispatches, of_floor) and X.png
(achieved bandwidth against the floor, per cell, drawn with pillow). --tail adds the cell
"tiled-tail": the tiled plan with the last-workgroup continuation, for comparison.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mipmap.compare import compare_chain  # noqa: E402
from mipmap.formats import FORMAT_NAMES, get_format, random_level0  # noqa: E402
from mipmap.gpu import MipmapRunner, fma_rounds_once, load_spv, srgb_decode_exact  # noqa: E402
from mipmap.plan import SPD_MAX_SIZE, SPD_RULE, spd_plan, tiled_plan  # noqa: E402
from mipmap.reference import level_sizes, stored_chain  # noqa: E402
from mipmap.spd_model import spd_reference  # noqa: E402
from turnip_base.errors import NotSupported, ScenarioError  # noqa: E402
from turnip_base.harness import open_device  # noqa: E402

SIZES = [(4096, 4096), (8192, 8192), (4095, 4095), (1920, 1080)]
EVICT_BYTES = 256 << 20
MAX_WARMUP = 5000


def parse_size(s: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in s.lower().split("x"))
    except ValueError:
        raise ScenarioError("--sizes", f"each size must be WxH, got {s!r}") from None
    level_sizes(w, h)  # >= 1
    return w, h


def copy_bandwidth(ctx, nbytes: int = 1 << 30, runs: int = 10) -> float:
    """Bytes per second moved by vkCmdCopyBuffer, counting read + write (median)."""
    vk = ctx.vk
    with ctx.scope():
        usage = vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        a, b = ctx.buffer(nbytes, usage), ctx.buffer(nbytes, usage)
        pool = ctx.query_pool(2 * (runs + 2))

        def record(cb):
            vk.vkCmdResetQueryPool(cb, pool, 0, 2 * (runs + 2))
            vk.vkCmdFillBuffer(cb, a.handle, 0, nbytes, 0x3F800000)
            region = vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=nbytes)
            for r in range(runs + 2):
                full_barrier(ctx, cb)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r)
                vk.vkCmdCopyBuffer(cb, a.handle, b.handle, 1, [region])
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r + 1)

        ctx.run(record)
        ts = ctx.timestamps_ns(pool, 2 * (runs + 2))
    dt = np.diff(ts.reshape(-1, 2), axis=1).ravel()[2:]
    return 2 * nbytes / (statistics.median(dt) * 1e-9)


def shader_copy_bandwidth(ctx, nbytes: int = 1 << 30, runs: int = 10) -> float:
    """Bytes per second moved by a compute-shader copy (shaders/copy.comp), read + write."""
    vk = ctx.vk
    with ctx.scope():
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        a, b = ctx.buffer(nbytes, usage), ctx.buffer(nbytes, usage)
        sb = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        set_layout = ctx.descriptor_set_layout([(0, sb, 1), (1, sb, 1)])
        layout = ctx.pipeline_layout(set_layout, 4)
        pipe = ctx.compute_pipeline(load_spv("copy.spv"), layout)
        dpool = ctx.descriptor_pool([(sb, 2)], 1)
        dset = ctx.allocate_set(dpool, set_layout)
        ia = vk.VkDescriptorBufferInfo(buffer=a.handle, offset=0, range=nbytes)
        ib = vk.VkDescriptorBufferInfo(buffer=b.handle, offset=0, range=nbytes)
        writes = [vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=0, descriptorType=sb, pBufferInfo=[ia]),
                  vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=1, descriptorType=sb, pBufferInfo=[ib])]
        vk.vkUpdateDescriptorSets(ctx.device, len(writes), writes, 0, None)
        pool = ctx.query_pool(2 * (runs + 2))
        count = vk.ffi.new("uint32_t[1]", [nbytes // 16])
        groups = min(nbytes // 16 // 256, 4096)

        def record(cb):
            vk.vkCmdResetQueryPool(cb, pool, 0, 2 * (runs + 2))
            vk.vkCmdFillBuffer(cb, a.handle, 0, nbytes, 0x3F800000)
            vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
            vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [dset], 0, None)
            vk.vkCmdPushConstants(cb, layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, count)
            for r in range(runs + 2):
                full_barrier(ctx, cb)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r)
                vk.vkCmdDispatch(cb, groups, 1, 1)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r + 1)

        ctx.run(record)
        ts = ctx.timestamps_ns(pool, 2 * (runs + 2))
    dt = np.diff(ts.reshape(-1, 2), axis=1).ravel()[2:]
    return 2 * nbytes / (statistics.median(dt) * 1e-9)


def full_barrier(ctx, cb) -> None:
    vk = ctx.vk
    ctx.memory_barrier(cb, vk.VK_ACCESS_MEMORY_WRITE_BIT, vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT,
                       vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT)


def tail_groups(algorithm: str) -> int | None:
    """N of ``tiled-tailN`` (the plan with the continuation on dispatches of at most N
    workgroups, :func:`mipmap.plan.tiled_plan`'s ``tail_groups``), else None."""
    rest = algorithm.removeprefix("tiled-tail")
    return int(rest) if rest != algorithm and rest.isdigit() else None


def record_cell(runner: MipmapRunner, cb, algorithm: str, img) -> None:
    if (n := tail_groups(algorithm)) is not None:
        runner.record_tiled(cb, img, plan=tiled_plan(img.width, img.height, tail_groups=n))
    elif algorithm == "tiled-tail":
        runner.record_tiled(cb, img, plan=tiled_plan(img.width, img.height, tail=True))
    elif algorithm == "tiled-split":
        runner.record_tiled(cb, img, plan=tiled_plan(img.width, img.height, split=True))
    else:
        runner.record(cb, algorithm, img)


def dispatches(algorithm: str, w: int, h: int) -> int:
    if (n := tail_groups(algorithm)) is not None:
        return len(tiled_plan(w, h, tail_groups=n))
    return {"tiled": lambda: len(tiled_plan(w, h)), "tiled-tail": lambda: len(tiled_plan(w, h, tail=True)),
            "tiled-split": lambda: len(tiled_plan(w, h, split=True)),
            "spd": lambda: 1, "spd-split": lambda: 1 + (spd_plan(w, h).tail_levels > 0),
            "blit": lambda: len(level_sizes(w, h)) - 1}[algorithm]()


def time_algorithm(runner: MipmapRunner, img, algorithm: str, scratch, runs: int, warmup: int,
                   heat_ms: float = 0.0, floor_us: float = 1.0) -> np.ndarray:
    """Run times in µs. Warm-up runs of the same chain, as many as would fill `heat_ms` at
    the bandwidth floor (so at least that long, up to MAX_WARMUP runs), put the GPU clocks up
    before the timed runs: the driver lowers them whenever the GPU idles, e.g. while the host
    computes a model."""
    warm = min(MAX_WARMUP, max(warmup, int(heat_ms * 1000.0 / max(floor_us, 1.0)) + 1))
    return _timed_batch(runner, img, algorithm, scratch, runs, warm)


def _timed_batch(runner: MipmapRunner, img, algorithm: str, scratch, runs: int, warmup: int) -> np.ndarray:
    ctx, vk = runner.ctx, runner.vk
    total = runs + warmup
    with ctx.scope():
        pool = ctx.query_pool(2 * total)

        def record(cb):
            vk.vkCmdResetQueryPool(cb, pool, 0, 2 * total)
            for r in range(total):
                if r >= warmup:
                    vk.vkCmdFillBuffer(cb, scratch.handle, 0, EVICT_BYTES, r)
                full_barrier(ctx, cb)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r)
                record_cell(runner, cb, algorithm, img)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r + 1)
                full_barrier(ctx, cb)

        ctx.run(record)
        ts = ctx.timestamps_ns(pool, 2 * total)
    return np.diff(ts.reshape(-1, 2), axis=1).ravel()[warmup:] / 1000.0  # µs


def floor_bytes(width: int, height: int, bpt: int) -> int:
    sizes = level_sizes(width, height)
    return bpt * (width * height + sum(w * h for w, h in sizes[1:]))


def roofline_png(cells: list[dict], bw: float, title: str, path: Path) -> None:
    """Achieved bandwidth (floor bytes / median) of every cell against the floor, as bars."""
    from PIL import Image, ImageDraw

    colours = {"tiled": (31, 119, 180), "spd": (44, 160, 44), "spd-split": (23, 190, 207), "blit": (150, 150, 150),
               "tiled-tail": (255, 127, 14), "tiled-split": (148, 103, 189)}
    row, left, right, top = 16, 250, 40, 60
    width = 1100
    scale = (width - left - right) / 1.0  # 100% of the floor at the right edge
    img = Image.new("RGB", (width, top + row * len(cells) + 40), "white")
    d = ImageDraw.Draw(img)
    d.text((10, 10), title, fill="black")
    d.text((10, 26), f"achieved bandwidth = (level 0 read + all levels written) / median; 100% = the floor "
                     f"({bw / 1e9:.0f} GB/s, measured copy)", fill="black")
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + frac * scale
        d.line([(x, top - 6), (x, top + row * len(cells))], fill=(200, 200, 200) if frac < 1 else "red")
        d.text((x - 12, top + row * len(cells) + 4), f"{frac:.0%}", fill="black")
    for i, c in enumerate(cells):
        y = top + i * row
        frac = c["of_floor"]
        d.text((10, y + 2), f"{c['size'][0]}x{c['size'][1]} {c['format']} {c['algorithm']}", fill="black")
        colour = colours.get(c["algorithm"], (0, 0, 0))
        d.rectangle([left, y + 3, left + min(frac, 1.0) * scale, y + row - 3], fill=colour)
        gbs = c["floor_bytes"] / (c["median_us"] * 1e-6) / 1e9
        d.text((left + min(frac, 1.0) * scale + 4, y + 2), f"{frac:.0%} ({gbs:.0f} GB/s, {c['median_us']:.1f} us)",
               fill="black")
    img.save(path)


#: issue 22's targets: the fraction of the floor the faster algorithm must reach, per size
TARGETS = (((8192, 8192), 0.95), ((4096, 4096), 0.85), ((4095, 4095), 0.65), ((1920, 1080), 0.40))


#: a short cell is called instruction-bound where issuing its level-1 pass's instructions alone
#: takes at least this fraction of that pass's floor time (bench/mipmap_occupancy.py): the SMs
#: then have no issue slots left to hide the memory latency with
ISSUE_BOUND = 0.75


def issue_note(occupancy: dict | None, fmt: str) -> str:
    """Why a short cell of ``fmt`` is short, from bench/mipmap_occupancy.py's JSON: its level-1
    pass's instructions a texel and their issue time against the floor (against RGBA8's), where
    the issue time reaches :data:`ISSUE_BOUND` of the floor; else ""."""
    if not occupancy:
        return ""
    by = {e["format"]: e for e in occupancy.get("level1", []) if e.get("floor_us")}
    e = by.get(fmt)
    if e is None or e["issue_us"] / e["floor_us"] < ISSUE_BOUND:
        return ""
    ref = by.get("rgba8")
    return (f"instruction-bound: level 1 issues {e['instructions']} instructions a texel"
            + (f" (RGBA8 {ref['instructions']})" if ref and fmt != "rgba8" else "")
            + f", {e['issue_us'] / e['floor_us']:.0%} of its floor's time at the largest clock, "
            f"before any memory wait")


def target_lines(cells: list[dict], ceilings: dict | None = None, occupancy: dict | None = None) -> list[str]:
    """Issue 22's targets, each cell with this run's best algorithm and, given the breakdown's
    JSON (bench/mipmap_breakdown.py, same device), two ceilings of any chain of those bytes:

    * *mix*: the mix kernel alone (one kernel moving the chain's bytes with its read/write mix,
      launch and drain included): what no chain can beat, even one whose levels after the
      sixth cost nothing;
    * *mix + launch*: plus one empty launch, the least a chain of two dispatches adds (the levels
      after the sixth depend on every 64 x 64 tile: a second dispatch, or a hand-off to the last
      workgroup inside one, whose cost this bounds only where it was measured dearer).

    Verdicts: met; short (under the two-dispatch ceiling); out of reach of two dispatches (the
    two-dispatch ceiling is under the target, the mix alone is not: only a single pass whose
    hand-off costs less than the margin said could get there); out of reach (even the mix; or
    both the two-dispatch ceiling and *mix + hand-off*, the breakdown's ``mix_handoff_us``:
    shaders/mixsync.comp, the mix kernel with the least hand-off any single pass makes, no
    level computed).
    ``occupancy``: bench/mipmap_occupancy.py's JSON (same device): a short cell whose level-1 pass
    is instruction-bound says so (:func:`issue_note`)."""
    by = {(tuple(c["size"]), c["format"], c["algorithm"]): c for c in cells}
    mix: dict[tuple[tuple[int, int], str], dict] = {}
    launch = 0.0
    if ceilings:
        launch = ceilings["launch_us"]
        mix = {(tuple(c["size"]), c["format"]): c for c in ceilings["cells"] if c["algorithm"] == "tiled"}
    out = ["| size | format | best | µs | of floor | target | ceiling: mix | mix + launch | verdict |",
           "|---|---|---|---|---|---|---|---|---|"]
    for size, need in TARGETS:
        for f in FORMAT_NAMES:
            cs = [by[k] for k in ((size, f, "tiled"), (size, f, "spd"), (size, f, "spd-split")) if k in by]
            if not cs:
                continue
            c = max(cs, key=lambda c: c["of_floor"])
            m = mix.get((size, f))
            one = two = None
            if m is not None:
                one, two = c["floor_us"] / m["mix_us"], c["floor_us"] / (m["mix_us"] + launch)
            if c["of_floor"] >= need:
                verdict = "met"
            elif one is not None and one < need:
                verdict = "out of reach"
            elif two is not None and two < need and m is not None:
                margin = c["floor_us"] / need - m["mix_us"]
                sync = m.get("mix_handoff_us")
                if sync is not None and c["floor_us"] / sync < need:
                    # one decimal: a bound a hair under the target must not read as the target
                    verdict = (f"out of reach: two dispatches at most {two:.1%} (mix + launch), a single pass at "
                               f"most {c['floor_us'] / sync:.1%} with no level computed after its hand-off (mix + "
                               f"its least hand-off, {sync:.1f} µs: {sync - m['mix_us']:.1f} µs on the mix where the "
                               f"target leaves {margin:.1f})")
                else:
                    verdict = (f"out of reach of two dispatches; a single pass needs its levels 7.. in under "
                               f"{margin:.1f} µs more than the mix")
                    if sync is not None:
                        verdict += f" (its least hand-off alone: {sync - m['mix_us']:.1f} µs)"
            else:
                verdict = "short"
                note = issue_note(occupancy, f)
                if f == "srgba8" and m is not None:
                    l1, r8 = m.get("level1_alone_us"), mix.get((size, "rgba8"), {}).get("level1_alone_us")
                    verdict += ": the exact sRGB conversion (the sampler's decode is not exact here)" + (
                        f"; level 1 alone {l1:.1f} µs against RGBA8's {r8:.1f}" if l1 and r8 else "")
                    if note:
                        verdict += "; " + note
                elif note:
                    verdict += ": " + note
            if m is not None and one is not None and two is not None:
                cstr = f"{one:.0%} ({m['mix_us']:.1f} µs) | {two:.0%} (+ {launch:.2f} µs)"
            else:
                cstr = "— | —"
            # one decimal: a cell a hair under its target must not read as the target
            out.append(f"| {size[0]}x{size[1]} | {f} | {c['algorithm']} | {c['median_us']:.1f} | "
                       f"{c['of_floor']:.1%} | {need:.0%} | {cstr} | {verdict} |")
    errs = [c for c in cells if c["algorithm"] != "blit" and c["max_err"] not in (0, "")]
    out.append("")
    out.append("- exactness (tiled and SPD against their models): " +
               ("max err 0 in every cell" if not errs else
                "NOT exact in " + ", ".join(f"{c['size']} {c['format']} {c['algorithm']} ({c['max_err']})"
                                             for c in errs)))
    return out


TARGETS_HEADING = "## Targets (issue 22)"


def targets_heading(ceilings: str, occupancy: str) -> str:
    return (f"{TARGETS_HEADING}, figures from this run" + (f"; ceilings from {ceilings}" if ceilings else "")
            + (f"; instruction counts from {occupancy}" if occupancy else ""))


def read_json_option(field: str, path: str) -> Any:
    """The JSON file an option names (None without one); :class:`ScenarioError` (``field``) where
    it cannot be read as JSON, so that a bad file is refused before any device time is spent."""
    if not path:
        return None
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ScenarioError(field, f"cannot read {path!r} as JSON ({type(e).__name__}: {e})") from None


def retarget(md: Path, ceilings: str, occupancy: str = "") -> int:
    """Rewrite the targets section of a results file (``md``, beside it its ``.json``) from its
    own cells, ``ceilings`` and ``occupancy``: no device; the same lines a run with ``--ceilings``
    and ``--occupancy`` writes."""
    cells = read_json_option("--retarget", str(md.with_suffix(".json")))
    if cells is None or not md.is_file():
        raise ScenarioError("--retarget", f"needs {md} and {md.with_suffix('.json')} (a run's results)")
    text = md.read_text()
    head = text[:text.index(TARGETS_HEADING)] if TARGETS_HEADING in text else text.rstrip("\n") + "\n\n"
    lines = [targets_heading(ceilings, occupancy), ""]
    lines += target_lines(cells, read_json_option("--ceilings", ceilings), read_json_option("--occupancy", occupancy))
    md.write_text(head + "\n".join(lines) + "\n")
    return 0


def add_input_options(ap: argparse.ArgumentParser) -> None:
    """How the kernels read their input level (this benchmark's and bench/mipmap_breakdown.py's)."""
    ap.add_argument("--tex-input", choices=("auto", "on", "off"), default="auto",
                    help="input levels by texelFetch through a sampled view instead of imageLoad: auto = where "
                         "mipmap.gpu.texel_fetch_input says (the default), on = every dispatch, off = none")
    ap.add_argument("--srgb-decode", choices=("auto", "table"), default="auto",
                    help="sRGB input level: auto = through the sampler where its decode is exact "
                         "(gpu.srgb_decode_exact), table = always the shared-memory table (the code before)")


def input_options(args: argparse.Namespace) -> tuple[bool | None, bool | None]:
    """``(hw_srgb, tex_input)`` for :class:`mipmap.gpu.MipmapRunner` from :func:`add_input_options`'."""
    hw_srgb: bool | None = False if args.srgb_decode == "table" else None
    return hw_srgb, {"auto": None, "on": True, "off": False}[args.tex_input]


def parse_persistent(text: str) -> int | None:
    """``--persistent``: None for ``auto`` (mipmap.gpu's default), else a count of workgroups >= 0."""
    if text == "auto":
        return None
    if not text.isdigit():
        raise ScenarioError("--persistent", f"must be auto or a whole number of workgroups >= 0, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None,
                    help="device index or name substring (default: $TURNIP_FDM_DEVICE, else 0)")
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    ap.add_argument("--formats", default=",".join(FORMAT_NAMES))
    ap.add_argument("--heat-ms", type=float, default=400.0,
                    help="warm-up runs of the same chain fill at least this long, so clocks are up")
    ap.add_argument("--no-check", action="store_true", help="skip the read-back comparison with the model")
    ap.add_argument("--tail", action="store_true",
                    help="also time tiled_plan(tail=True), the plan with the last-workgroup continuation")
    ap.add_argument("--tail-groups", default="",
                    help="N,...: also time tiled_plan(tail_groups=N) as tiled-tailN: the continuation only on "
                         "dispatches of at most N workgroups")
    ap.add_argument("--only", default="",
                    help="ALG,...: time only these of blit, tiled, spd, spd-split (and the added variants)")
    ap.add_argument("--split", action="store_true",
                    help="also time tiled_plan(split=True): level 1 in a fast M = 1 dispatch of its own first")
    ap.add_argument("--verify", default="",
                    help="WxH,...: before timing, check tiled and spd on these sizes against the models "
                         "(both subgroup paths)")
    ap.add_argument("--retarget", default="", metavar="FILE.md",
                    help="no device: rewrite the targets section of FILE.md from FILE.json (its cells) and "
                         "--ceilings")
    ap.add_argument("--ceilings", default="",
                    help="the JSON of bench/mipmap_breakdown.py (same device): each target line gets the "
                         "ceiling of its cell (the mix kernel plus one launch)")
    ap.add_argument("--occupancy", default="",
                    help="the JSON of bench/mipmap_occupancy.py (same device): a short cell whose level-1 pass "
                         "is instruction-bound says so")
    ap.add_argument("--persistent", default="auto", metavar="G",
                    help="G > 0: every 64 x 64 pass (single pass, fast M = 6) as G persistent workgroups, each "
                         "making tiles g, g + G, ...; 0: no tile loop anywhere; auto (the default): one "
                         "workgroup per tile, the tile loop where mipmap.gpu.tile_loop says")
    ap.add_argument("--subgroups", choices=("auto", "shared"), default="auto",
                    help="the tree kernels' exchanges between invocations: auto = subgroup shuffles where the "
                         "device has them (the default), shared = shared memory and barriers everywhere")
    add_input_options(ap)
    ap.add_argument("--out", type=Path, default=None, help="write the markdown report here (and .json, .png beside)")
    args = ap.parse_args(argv)
    hw_srgb, tex = input_options(args)
    try:
        if args.retarget:
            return retarget(Path(args.retarget), args.ceilings, args.occupancy)
        # read now: a bad file found after the run would cost its whole device time
        ceilings = read_json_option("--ceilings", args.ceilings)
        occupancy = read_json_option("--occupancy", args.occupancy)
        sizes = [parse_size(s) for s in args.sizes.split(",")]
        formats = [get_format(f) for f in args.formats.split(",")]
        persistent = parse_persistent(args.persistent)
        ctx = open_device(args.device)
    except (ScenarioError, NotSupported) as e:
        print(f"mipmap_bench: {e.label}: {e}", file=sys.stderr)
        return 2
    lines = []
    algorithms = (["blit", "tiled", "spd", "spd-split"] + (["tiled-tail"] if args.tail else [])
                  + (["tiled-split"] if args.split else [])
                  + [f"tiled-tail{int(n)}" for n in args.tail_groups.split(",") if n])
    if args.only:
        keep = args.only.split(",")
        algorithms = [a for a in algorithms if a in keep or a not in ("blit", "tiled", "spd", "spd-split")]

    def emit(s=""):
        print(s, flush=True)
        lines.append(s)

    cells: list[dict] = []
    with ctx:
        info = ctx.info
        bw_copy = copy_bandwidth(ctx)
        bw_shader = shader_copy_bandwidth(ctx)
        bw = max(bw_copy, bw_shader)
        device_line = (f"{info.name}; driver {info.driver_name} {info.driver_info} "
                       f"(driverVersion {info.driver_version}); Vulkan {info.api_version}")
        emit("# Mipmap generation benchmark")
        emit()
        emit(f"- device: **{info.name}**; driver {info.driver_name} {info.driver_info} "
             f"(driverVersion {info.driver_version}); Vulkan {info.api_version}")
        emit(f"- fma rounds once (8-bit decode fused): {fma_rounds_once(ctx)}; the sampler's sRGB decode is "
             f"exact (sRGB input level read through it): {srgb_decode_exact(ctx)}"
             + ("; not used (--srgb-decode table)" if hw_srgb is False else ""))
        emit(f"- subgroup size {info.subgroup_size}, shuffle {'yes' if info.subgroup_shuffle else 'no'}; "
             f"timestampPeriod {info.timestamp_period} ns"
             + ("; timed on the shared-memory path (--subgroups shared)" if args.subgroups == "shared" else ""))
        emit(f"- measured copy bandwidth, 1 GiB, counting read + write: vkCmdCopyBuffer {bw_copy / 1e9:.0f} GB/s, "
             f"compute-shader copy {bw_shader / 1e9:.0f} GB/s; the floor uses the larger, **{bw / 1e9:.0f} GB/s**")
        emit(f"- per cell: warm-up runs of the same chain, as many as fill {args.heat_ms:.0f} ms at the bandwidth "
             f"floor (at least {args.warmup}, at most {MAX_WARMUP}), so that the clocks are up (the driver drops them "
             f"to 345 MHz within a second of idling), then {args.runs} timed runs, each after a 256 MiB fill that "
             "evicts L2; GPU timestamps "
             "(BOTTOM_OF_PIPE after a full barrier, and after the chain); validation layer off")
        emit(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
        emit()
        emit("ratio = time / blit time (< 1 is faster than blit); floor = (level 0 read + all levels written) / "
             "copy bandwidth; of floor = floor / median. max err: worst difference from the model over all "
             "levels (ulp for r32f/rgba16f, LSB for 8-bit), blit against the box filter.")
        emit()
        if args.verify:
            verify = [parse_size(v) for v in args.verify.split(",")]
            bad = []
            for fmt in formats:
                for shuffle in (None, False):
                    try:
                        vr = MipmapRunner(ctx, fmt, shuffle=shuffle, hw_srgb=hw_srgb, tex_input=tex,
                                         persistent=persistent)
                    except NotSupported:
                        continue
                    for w, h in verify:
                        level0 = random_level0(w, h, fmt, seed=w * 31 + h)
                        for alg in ("tiled", "spd", "spd-split"):
                            if alg in SPD_RULE and max(w, h) > SPD_MAX_SIZE:
                                continue
                            model = spd_reference(level0, fmt) if alg in SPD_RULE else stored_chain(level0, fmt)
                            cmp = compare_chain(vr.generate(alg, level0), model, fmt)
                            if not cmp.ok or cmp.max_error:
                                bad.append(f"{w}x{h} {fmt.name} {alg} {'shuffle' if vr.shuffle else 'shared'}: "
                                           f"{cmp.per_level}")
            emit(f"- verified before timing: tiled and spd, subgroup-shuffle and shared-memory paths, every format, "
                 f"sizes {args.verify}: " + ("max err 0 everywhere" if not bad else "DIFFERENCES: " + "; ".join(bad)))
            emit()
        emit("| size | format | algorithm | dispatches | median µs | min µs | ratio to blit | floor µs | of floor "
             "| max err |")
        emit("|---|---|---|---|---|---|---|---|---|---|")
        for fmt in formats:
            try:
                runner = MipmapRunner(ctx, fmt, shuffle=False if args.subgroups == "shared" else None,
                                      hw_srgb=hw_srgb, tex_input=tex, persistent=persistent)
            except NotSupported as e:
                emit(f"| all | {fmt.name} | — | — | not supported: {e} | | | | | |")
                continue
            for w, h in sizes:
                with ctx.scope():
                    vk = ctx.vk
                    scratch = ctx.buffer(EVICT_BYTES, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                    level0 = random_level0(w, h, fmt, seed=w * 7 + h)
                    img = runner.make_image(w, h)
                    nbytes = floor_bytes(w, h, fmt.bytes_per_texel)
                    floor_us = nbytes / bw * 1e6
                    results = {}
                    box = None
                    for alg in algorithms:
                        if alg in SPD_RULE and max(w, h) > SPD_MAX_SIZE:
                            results[alg] = None
                            continue
                        try:
                            runner.check_algorithm("tiled" if alg.startswith("tiled-") else alg)
                        except NotSupported as e:
                            results[alg] = str(e)
                            continue
                        runner.upload(img, level0)
                        t0 = time.time()
                        us = time_algorithm(runner, img, alg, scratch, args.runs, args.warmup, args.heat_ms,
                                            floor_us)
                        err = ""
                        if not args.no_check:
                            got = runner.readback(img)
                            if alg in SPD_RULE:
                                model = spd_reference(level0, fmt)
                            else:
                                box = box if box is not None else stored_chain(level0, fmt)
                                model = box
                            err = compare_chain(got, model, fmt).max_error
                        results[alg] = (us, err, time.time() - t0)
                    blit = results.get("blit")
                    blit_med = statistics.median(blit[0]) if isinstance(blit, tuple) else None
                    base = ("tiled", "spd", "spd-split")
                    order = ([a for a in base if a in algorithms]
                             + [a for a in algorithms if a not in base + ("blit",)]
                             + (["blit"] if "blit" in algorithms else []))
                    for alg in order:
                        r = results.get(alg)
                        if r is None:
                            emit(f"| {w}x{h} | {fmt.name} | {alg} | — | n/a: over SPD's {SPD_MAX_SIZE}² limit "
                                 "| | | | | |")
                            continue
                        if isinstance(r, str):
                            emit(f"| {w}x{h} | {fmt.name} | {alg} | — | not supported: {r} | | | | | |")
                            continue
                        us, err, _ = r
                        med = statistics.median(us)
                        ratio = f"{med / blit_med:.2f}" if blit_med else "—"
                        disp = dispatches(alg, w, h)
                        emit(f"| {w}x{h} | {fmt.name} | {alg} | {disp} | {med:.1f} | {us.min():.1f} | {ratio} | "
                             f"{floor_us:.1f} | {floor_us / med:.0%} | {err} |")
                        cells.append({"size": [w, h], "format": fmt.name, "algorithm": alg,
                                      "median_us": round(med, 2), "floor_us": round(floor_us, 2),
                                      "blit_us": round(blit_med, 2) if blit_med else None, "max_err": err,
                                      "min_us": round(float(us.min()), 2), "dispatches": disp,
                                      "of_floor": round(floor_us / med, 4), "floor_bytes": nbytes})
        emit()
        emit(targets_heading(args.ceilings, args.occupancy))
        emit()
        for line in target_lines(cells, ceilings, occupancy):
            emit(line)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(cells, indent=1) + "\n")
        roofline_png(cells, bw, f"Mip chains on {device_line}", args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
