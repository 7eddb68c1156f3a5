"""Where a mip chain's time goes: per dispatch, per level, and against copies of the same size.

    python bench/mipmap_breakdown.py [--device D] [--runs 15] [--sizes 4096x4096,...] [--formats ...] \
        --out bench/results/h100.breakdown.md

For every size and format, on the device, each measurement timed as bench/mipmap_bench.py times
a chain (warm-up runs of the same work first, then timed runs, each after a 256 MiB fill that
evicts L2 and a full barrier; BOTTOM_OF_PIPE timestamps):

* **tiled, per dispatch**: a timestamp after every dispatch of the plan; the bytes each
  dispatch moves (its input level read once, every level it writes written once); that many
  bytes at the 1 GiB copy bandwidth (its floor); and the copy kernel (shaders/copy.comp)
  moving exactly that many bytes, timed the same way: what any kernel of that size reaches
  (launch, ramp-up and drain included); and the mix kernel (shaders/mix.comp) moving the same
  bytes with a chain's traffic, three bytes read for each written (a copy reads one for each):
  what one kernel of that size and traffic reaches, the ceiling the issue-22 table of
  bench/mipmap_bench.py --ceilings uses (plus one launch);
* **level 1 alone** (where the first dispatch is the fast kernel): the fast kernel with M = 1,
  the pass that moves most of the bytes, against the copy of the same bytes;
* **spd**: its one dispatch against the copy of the whole chain's bytes;
* **launch**: one workgroup that does nothing (the copy kernel with count 0).

Writes X.md, X.json and X.png (per cell: the chain, the size-matched copy and the floor, as
bars). Not a test: nothing here asserts a speed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mipmap_bench import (  # noqa: E402
    EVICT_BYTES,
    add_input_options,
    floor_bytes,
    full_barrier,
    input_options,
    parse_size,
    shader_copy_bandwidth,
)

from mipmap.formats import FORMAT_NAMES, get_format, random_level0  # noqa: E402
from mipmap.gpu import MipmapRunner, load_spv, srgb_decode_exact  # noqa: E402
from mipmap.plan import FAST_LOCAL, SPD_MAX_SIZE, Dispatch, spd_handoff, tiled_plan  # noqa: E402
from mipmap.reference import level_sizes  # noqa: E402
from turnip_base.harness import open_device  # noqa: E402

SIZES = [(4096, 4096), (8192, 8192), (4095, 4095), (1920, 1080)]


def timed(ctx, record, marks: int, scratch, runs: int, warm: int, heater=None) -> np.ndarray:
    """(runs, marks - 1) interval times in µs; `record(cb, mark)` calls mark(cb) `marks` times.
    `heater(cb)`, recorded first, keeps the GPU busy long enough for its clocks to be up (the
    driver lowers them within a second of idling, e.g. while the host compiles a pipeline)."""
    vk = ctx.vk
    total = runs + warm
    with ctx.scope():
        pool = ctx.query_pool(marks * total)

        def rec(cb):
            vk.vkCmdResetQueryPool(cb, pool, 0, marks * total)
            if heater is not None:
                heater(cb)
            for r in range(total):
                if r >= warm:
                    vk.vkCmdFillBuffer(cb, scratch.handle, 0, EVICT_BYTES, r)
                full_barrier(ctx, cb)
                slot = iter(range(r * marks, (r + 1) * marks))

                def mark(cb, slot=slot):
                    vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, next(slot))

                record(cb, mark)
                full_barrier(ctx, cb)

        ctx.run(rec)
        ts = ctx.timestamps_ns(pool, marks * total).reshape(total, marks)
    return np.diff(ts, axis=1)[warm:] / 1000.0


#: the most workgroups a :class:`Streamer` dispatches (grid-stride beyond)
MAX_GROUPS = 4096
#: the hand-offs of "mix + hand-off" (shaders/mixsync.comp's FANIN): one counter for every
#: workgroup, and two levels of counters (16 and 64 workgroups a team); the least of them counts
HANDOFF_FANINS = (0, 16, 64)


class Streamer:
    """A grid-stride streaming kernel over the first n bytes of two buffers: shaders/copy.comp
    (``reads=1``: reads n/2, writes n/2) or shaders/mix.comp (``reads=3``: reads 3n/4 from
    three streams, writes n/4: a mip chain's read/write mix)."""

    def __init__(self, ctx, max_bytes: int, spv: str = "copy.spv", reads: int = 1, handoff: bool = False,
                 host_visible: bool = False, fanin: int = 0):
        """``handoff``: shaders/mixsync.comp's two more bindings, its counters (zeroed here; the
        last arrivals reset them) and a word per workgroup (:data:`MAX_GROUPS`) plus one; ``fanin``
        its FANIN (0: one counter; N: two levels, N workgroups a team). ``host_visible``: buffers
        the host can write and read (tests)."""
        vk = self.vk = ctx.vk
        self.ctx, self.reads = ctx, reads
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        word = max_bytes // (reads + 1) + 16
        counters = 1 + (-(-MAX_GROUPS // fanin) if fanin else 0)
        sizes = (reads * word, word) + ((4 * counters, 4 * (MAX_GROUPS + 1)) if handoff else ())
        self.buffers = [ctx.buffer(n, usage, host_visible) for n in sizes]
        self.a, self.b = self.buffers[0], self.buffers[1]
        if handoff:
            counter = self.buffers[2]
            ctx.run(lambda cb: vk.vkCmdFillBuffer(cb, counter.handle, 0, 4 * counters, 0))
        sb = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        set_layout = ctx.descriptor_set_layout([(i, sb, 1) for i in range(len(sizes))])
        self.layout = ctx.pipeline_layout(set_layout, 4)
        self.pipe = ctx.compute_pipeline(load_spv(spv), self.layout, [fanin] if handoff else [])
        self.dset = ctx.allocate_set(ctx.descriptor_pool([(sb, len(sizes))], 1), set_layout)
        infos = [vk.VkDescriptorBufferInfo(buffer=b.handle, offset=0, range=n)
                 for b, n in zip(self.buffers, sizes, strict=True)]
        writes = [vk.VkWriteDescriptorSet(dstSet=self.dset, dstBinding=i, descriptorType=sb, pBufferInfo=[infos[i]])
                  for i in range(len(sizes))]
        vk.vkUpdateDescriptorSets(ctx.device, len(sizes), writes, 0, None)

    def record(self, cb, nbytes: int) -> None:
        vk = self.vk
        count = nbytes // (self.reads + 1) // 16
        groups = max(1, min(-(-count // 256), MAX_GROUPS))
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, [self.dset], 0, None)
        vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 4,
                              vk.ffi.new("uint32_t[1]", [count]))
        vk.vkCmdDispatch(cb, groups, 1, 1)


def kernel_label(d: Dispatch) -> str:
    """The kernel of a dispatch as the runner records it, and its hand-off if it has one."""
    if spd_handoff(d):
        return f"fast M={d.levels} by the single pass's kernel, hand-off +{d.tail_levels}"
    return f"{d.kernel} M={d.levels}" + (f", hand-off +{d.tail_levels}" if d.tail_levels else "")


def dispatch_bytes(d: Dispatch, sizes: list[tuple[int, int]], bpt: int) -> int:
    """Input level read once, every level the dispatch writes written once."""
    lv = range(d.input_level + 1, d.input_level + d.total_levels + 1)
    return bpt * (d.width * d.height + sum(sizes[k][0] * sizes[k][1] for k in lv))


def fast_first(w: int, h: int, m: int) -> Dispatch:
    """The first dispatch of the tiled plan, stopped after m levels (the fast kernel)."""
    groups = (-(-(w // 2) // 16)) * (-(-(h // 2) // 16)) if m == 1 else -(-(w * h) // (4096 if m == 6 else 1024))
    return Dispatch("fast", 0, w, h, m, groups, FAST_LOCAL)


def bars_png(cells: list[dict], title: str, path: Path) -> None:
    """Per cell: the chain's median, the same bytes by the copy kernel, and the floor (µs)."""
    from PIL import Image, ImageDraw

    row, left, width = 42, 230, 1150
    top = 56
    img = Image.new("RGB", (width, top + row * len(cells) + 20), "white")
    d = ImageDraw.Draw(img)
    d.text((10, 10), title, fill="black")
    d.text((10, 26), "bars, each scaled to the cell's chain time: blue the chain (dispatches split by ticks), "
                     "orange the copy kernel moving the same bytes, grey the floor", fill="black")
    scale = width - left - 260
    for i, c in enumerate(cells):
        y = top + i * row
        t = c["median_us"]
        d.text((10, y + 4), f"{c['size'][0]}x{c['size'][1]} {c['format']} {c['algorithm']}", fill="black")
        x = left
        for k, dt in enumerate(c["dispatch_us"]):
            x2 = x + dt / t * scale
            d.rectangle([x, y + 2, x2, y + 12], fill=(31, 119, 180) if k % 2 == 0 else (90, 160, 210))
            x = x2
        d.text((x + 4, y), f"{t:.1f} us ({c['of_floor']:.0%} of floor)", fill="black")
        cx = left + c["copy_us"] / t * scale
        d.rectangle([left, y + 15, cx, y + 25], fill=(255, 127, 14))
        d.text((cx + 4, y + 13), f"copy {c['copy_us']:.1f} us ({c['copy_of_floor']:.0%})", fill="black")
        fx = left + c["floor_us"] / t * scale
        d.rectangle([left, y + 28, fx, y + 36], fill=(160, 160, 160))
        d.text((fx + 4, y + 26), f"floor {c['floor_us']:.1f} us", fill="black")
    img.save(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warm-ms", type=float, default=150.0, help="warm-up per measurement (at the floor's pace)")
    ap.add_argument("--heat-ms", type=float, default=250.0,
                    help="copies recorded before each measurement's warm-up, to keep the clocks up")
    ap.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    ap.add_argument("--formats", default=",".join(FORMAT_NAMES))
    add_input_options(ap)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    hw_srgb, tex = input_options(args)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    formats = [get_format(f) for f in args.formats.split(",")]
    lines: list[str] = []

    def emit(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    cells: list[dict] = []
    ctx = open_device(args.device, validation=False)
    with ctx:
        vk = ctx.vk
        info = ctx.info
        bw = shader_copy_bandwidth(ctx)
        biggest = max(floor_bytes(w, h, f.bytes_per_texel) for w, h in sizes for f in formats)
        copier = Streamer(ctx, biggest)
        mixer = Streamer(ctx, biggest, "mix.spv", reads=3)
        syncers = {n: Streamer(ctx, biggest, "mixsync.spv", reads=3, handoff=True, fanin=n) for n in HANDOFF_FANINS}
        scratch = ctx.buffer(EVICT_BYTES, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)

        heat_copies = max(1, int(args.heat_ms * 1e-3 * bw / biggest))

        def heater(cb) -> None:
            for _ in range(heat_copies):
                copier.record(cb, biggest)
            full_barrier(ctx, cb)

        def warm_for(floor_us: float) -> int:
            return max(5, min(3000, int(args.warm_ms * 1000.0 / max(floor_us, 1.0))))

        def stream_us(streamer: Streamer, nbytes: int) -> float:
            f = nbytes / bw * 1e6
            return statistics.median(timed(ctx, lambda cb, mark: (mark(cb), streamer.record(cb, nbytes), mark(cb)),
                                           2, scratch, args.runs, warm_for(f), heater)[:, 0])

        def copy_us(nbytes: int) -> float:
            return stream_us(copier, nbytes)

        def mix_us(nbytes: int) -> float:
            return stream_us(mixer, nbytes)

        def handoff_us(nbytes: int) -> dict[int, float]:
            return {n: stream_us(syncers[n], nbytes) for n in HANDOFF_FANINS}

        launch = copy_us(0)
        emit("# Mip chains on the H100: where the time goes (bench/mipmap_breakdown.py)")
        emit()
        emit(f"- device: **{info.name}**; driver {info.driver_name} {info.driver_info}; Vulkan {info.api_version}; "
             f"subgroup {info.subgroup_size}")
        emit(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
        emit(f"- the sampler's sRGB decode is exact: {srgb_decode_exact(ctx)}; sRGB input levels read "
             + ("through it" if hw_srgb is not False and srgb_decode_exact(ctx) else "through the shared-memory table"))
        emit(f"- copy bandwidth (shaders/copy.comp, 1 GiB, read + write): **{bw / 1e9:.0f} GB/s**: the floor of "
             "every row is its bytes at this rate")
        emit(f"- launch: one empty workgroup between two timestamps, after a barrier: **{launch:.2f} µs**")
        emit(f"- each figure: median of {args.runs} timed runs after an L2-evicting fill, warm-up first")
        emit()
        emit("Columns: *µs* the median; *MB* bytes moved (input level read once, each level written once); "
             "*floor* those bytes at the copy bandwidth; *copy µs* the copy kernel moving exactly those bytes "
             "(what any kernel of that size reaches, launch and drain included); *of floor* floor / µs; "
             "*copy of floor* floor / copy µs; *mix µs* shaders/mix.comp moving exactly those bytes with a "
             "chain's mix (3 bytes read for each written), *mix of floor* floor / mix µs: what one kernel of "
             "that size and traffic reaches, launch and drain included: the ceiling of a one-dispatch chain "
             "(a chain of k dispatches adds k - 1 launches). Under each table, *mix + hand-off*: "
             "shaders/mixsync.comp, the mix kernel of the chain's bytes whose workgroups each publish a word, "
             "release it and count themselves in (one counter, or two levels of counters: the least of "
             "HANDOFF_FANINS), the last of them acquiring and reading every word and storing one: the least a "
             "single pass adds (its last levels depend on every workgroup's output), with no level computed.")
        for fmt in formats:
            runner = MipmapRunner(ctx, fmt, hw_srgb=hw_srgb, tex_input=tex)
            for w, h in sizes:
                ls = level_sizes(w, h)
                bpt = fmt.bytes_per_texel
                chain_bytes = floor_bytes(w, h, bpt)
                chain_floor = chain_bytes / bw * 1e6
                emit()
                emit(f"## {w}x{h} {fmt.name}")
                emit()
                emit("| what | levels | µs | MB | floor µs | of floor | copy µs | copy of floor | mix µs "
                     "| mix of floor |")
                emit("|---|---|---|---|---|---|---|---|---|---|")
                with ctx.scope():
                    img = runner.make_image(w, h)
                    runner.upload(img, random_level0(w, h, fmt, seed=w * 7 + h))
                    plan = tiled_plan(w, h)

                    def rec_tiled(cb, mark, plan=plan, img=img, runner=runner):
                        mark(cb)
                        runner.record_tiled(cb, img, plan=plan, after_dispatch=lambda cb, k: mark(cb))

                    per = timed(ctx, rec_tiled, len(plan) + 1, scratch, args.runs, warm_for(chain_floor), heater)
                    total = statistics.median(per.sum(axis=1))
                    dispatch_us = [float(statistics.median(per[:, k])) for k in range(len(plan))]
                    ccopy = copy_us(chain_bytes)
                    cmix = mix_us(chain_bytes)
                    emit(f"| tiled chain, {len(plan)} dispatches | 1-{len(ls) - 1} | {total:.1f} | "
                         f"{chain_bytes / 1e6:.1f} | {chain_floor:.1f} | {chain_floor / total:.0%} | {ccopy:.1f} | "
                         f"{chain_floor / ccopy:.0%} | {cmix:.1f} | {chain_floor / cmix:.0%} |")
                    rows = []
                    for k, d in enumerate(plan):
                        nb = dispatch_bytes(d, ls, bpt)
                        fl = nb / bw * 1e6
                        cu, mu = copy_us(nb), mix_us(nb)
                        lv = f"{d.input_level + 1}-{d.input_level + d.total_levels}"
                        emit(f"| dispatch {k}: {kernel_label(d)}, {d.workgroups} groups | {lv} | "
                             f"{dispatch_us[k]:.1f} | {nb / 1e6:.2f} | {fl:.2f} | {fl / dispatch_us[k]:.0%} | "
                             f"{cu:.1f} | {fl / cu:.0%} | {mu:.1f} | {fl / mu:.0%} |")
                        rows.append({"dispatch": k, "kernel": d.kernel, "levels": [d.input_level + 1,
                                     d.input_level + d.total_levels], "us": round(dispatch_us[k], 2),
                                     "bytes": nb, "floor_us": round(fl, 3), "copy_us": round(cu, 2),
                                     "mix_us": round(mu, 2)})
                    csync = handoff_us(chain_bytes)
                    best = min(csync.values())   # the least hand-off: the cell's and the line under the table
                    cells.append({"size": [w, h], "format": fmt.name, "algorithm": "tiled",
                                  "median_us": round(total, 2), "floor_us": round(chain_floor, 2),
                                  "of_floor": round(chain_floor / total, 4), "copy_us": round(ccopy, 2),
                                  "copy_of_floor": round(chain_floor / ccopy, 4), "dispatch_us": dispatch_us,
                                  "mix_us": round(cmix, 2), "mix_of_floor": round(chain_floor / cmix, 4),
                                  "mix_handoff_us": round(best, 2),
                                  "mix_handoff_by_fanin": {str(n): round(t, 2) for n, t in csync.items()},
                                  "dispatches": rows})
                    first = plan[0]
                    if first.kernel == "fast" and first.levels > 1:
                        # level 1 alone: the fast kernel with M = 1 (the down1 pattern). Other M
                        # below the plan's run another pass (tilePass, not the 64 x 64 pass), so
                        # they are not the plan's levels stopped early and are not timed.
                        d = fast_first(w, h, 1)

                        def rec_1(cb, mark, d=d, img=img, runner=runner):
                            mark(cb)
                            runner.record_tiled(cb, img, plan=[d])
                            mark(cb)

                        t = statistics.median(timed(ctx, rec_1, 2, scratch, args.runs, warm_for(chain_floor),
                                                    heater)[:, 0])
                        nb = dispatch_bytes(d, ls, bpt)
                        fl = nb / bw * 1e6
                        cu, mu = copy_us(nb), mix_us(nb)
                        emit(f"| level 1 alone (fast M=1, {d.workgroups} groups) | 1 | {t:.1f} | {nb / 1e6:.2f} | "
                             f"{fl:.2f} | {fl / t:.0%} | {cu:.1f} | {fl / cu:.0%} | {mu:.1f} | {fl / mu:.0%} |")
                        cells[-1]["level1_alone_us"] = round(t, 2)
                    if max(w, h) <= SPD_MAX_SIZE:
                        def rec_spd(cb, mark, img=img, runner=runner):
                            mark(cb)
                            runner.record_spd(cb, img)
                            mark(cb)

                        t = statistics.median(timed(ctx, rec_spd, 2, scratch, args.runs, warm_for(chain_floor),
                                                    heater)[:, 0])
                        emit(f"| spd, 1 dispatch | 1-{len(ls) - 1} | {t:.1f} | {chain_bytes / 1e6:.1f} | "
                             f"{chain_floor:.1f} | {chain_floor / t:.0%} | {ccopy:.1f} | {chain_floor / ccopy:.0%} | "
                             f"{cmix:.1f} | {chain_floor / cmix:.0%} |")
                        cells.append({"size": [w, h], "format": fmt.name, "algorithm": "spd",
                                      "median_us": round(t, 2), "floor_us": round(chain_floor, 2),
                                      "of_floor": round(chain_floor / t, 4), "copy_us": round(ccopy, 2),
                                      "copy_of_floor": round(chain_floor / ccopy, 4), "dispatch_us": [t],
                                      "mix_us": round(cmix, 2), "mix_of_floor": round(chain_floor / cmix, 4)})
                emit()
                emit(f"- mix + hand-off (the chain's {chain_bytes / 1e6:.1f} MB): {best:.1f} µs, "
                     f"{chain_floor / best:.0%} of the floor, {best - cmix:+.1f} µs on the mix alone (the least of "
                     + ", ".join(f"{t:.1f} µs {'one counter' if n == 0 else f'two levels of {n}'}"
                                 for n, t in csync.items()) + ")")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps({"bandwidth": bw, "launch_us": launch,
                                                             "cells": cells}, indent=1) + "\n")
        bars_png(cells, f"Where the time goes: {info.name}", args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
