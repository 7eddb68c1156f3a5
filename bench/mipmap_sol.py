"""Speed of light of single passes over storage images, beside the tiled mip chain.

    python bench/mipmap_sol.py [--device NAME_OR_INDEX] [--out bench/results/h100.sol.md] [--quick]

What fraction of the "bandwidth floor" of bench/mipmap_bench.py (level 0 read once + every
level written once, at the compute-shader buffer-copy bandwidth) can the simplest passes over
VK_IMAGE_TILING_OPTIMAL storage images reach? Kernels (bench/sol/*.comp), per format and size:

* down1:    level 0 -> level 1 of the same image (the generator's image: full mip chain, same
            usage and view format), 2x2 box filter, one output texel per invocation, four
            imageLoads and an imageStore; 8x8 and 16x16 workgroups. Counted: W*H*bpt read +
            (W/2)*(H/2)*bpt written.
* down1tex: down1 with the four reads as texelFetch of a combined image sampler (NEAREST), the
            texture path; the image also has SAMPLED usage. Counted as down1.
* imgcopy:  imageLoad -> imageStore into a second image of the same size. Counted 2*W*H*bpt.
* imgread:  each invocation reads the 2x2 block down1 reads and sums it in registers; one sum
            per workgroup goes to a buffer (subgroupAdd + shared memory). Counted W*H*bpt.
* bufdown1: down1 over linear storage buffers (row-major; uint/unpackUnorm4x8, float,
            uvec2/unpackHalf2x16), 16x16 and 64x4 workgroups, source filled with a constant as
            the bufcopy source is: no image tiling, the same traffic as down1. Not for rgba8n.
* bufcopy:  mipmap/shaders/copy.comp (uvec4 grid-stride) over 1 GiB: the reference bandwidth.
            Measured first and again last; the first is the 100% of this run.
* chain:    the tiled generator (MipmapRunner, mipmap_bench.time_algorithm, as in
            bench/results/h100.md), "of floor" = floor bytes / median / bufcopy bandwidth.

Formats: rgba8 (R8G8B8A8_UNORM image, R8G8B8A8_UINT storage view, as mipmap/ used it before
its R32_UINT views), r32f,
rgba16f, and rgba8n (R8G8B8A8_UNORM image and view, no MUTABLE_FORMAT; not a generator format).
Level 0 holds pseudo-random texels written by bench/sol/fill.comp (no host upload).

Timing (the pattern of mipmap_bench._timed_batch): per cell a warm-up of the same dispatch,
as many as fill --heat-ms at the reference bandwidth (so at least that long; the warm-up's
own GPU duration is measured and reported), then --runs timed runs, each after a 256 MiB
vkCmdFillBuffer that evicts L2 and a full barrier; BOTTOM_OF_PIPE timestamps around the
dispatch. Before timing, every kernel is checked against numpy on a small image (--check-size).

The SPIR-V is committed beside the sources; to rebuild (glslangValidator, no other tool):

    cd bench/sol && for k in fill down1 down1tex imgcopy imgread; do for f in rgba8 rgba8n r32f rgba16f; do
      glslangValidator -V --target-env vulkan1.2 -DFMT_$(echo $f | tr a-z A-Z) $k.comp -o ${k}_$f.spv; done; done
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import mipmap_bench as mb  # noqa: E402

from mipmap.formats import Format, get_format, random_level0  # noqa: E402
from mipmap.gpu import MipmapRunner, load_spv, storage_view_flags  # noqa: E402
from mipmap.plan import tiled_plan  # noqa: E402
from mipmap.reference import level_sizes  # noqa: E402
from turnip_base.errors import NotSupported, ScenarioError  # noqa: E402
from turnip_base.harness import open_device  # noqa: E402

SOL = BENCH / "sol"
SIZES = [(4096, 4096), (8192, 8192)]
FORMATS = ["rgba8", "r32f", "rgba16f", "rgba8n"]
CHAIN_FORMATS = {"rgba8", "r32f", "rgba16f"}
BUF_BYTES = 1 << 30
MAX_WARM = 40000
#: (cell name, shader, workgroup)
KERNELS = [("down1", "down1", (8, 8)), ("down1", "down1", (16, 16)), ("down1tex", "down1tex", (8, 8)),
           ("down1tex", "down1tex", (16, 16)), ("imgcopy", "imgcopy", (16, 16)), ("imgread", "imgread", (16, 16)),
           ("bufdown1", "bufdown1", (16, 16)), ("bufdown1", "bufdown1", (64, 4))]
BUF_FILL = 0x38003800  # bufdown1's source: float16 0.5 pairs / a normal float32 (3.06e-5)


class SolFormat:
    """A format of the kernels: the generator's Format (bytes per texel, storage dtype) plus the
    image and view formats and the SPIR-V suffix."""

    def __init__(self, name: str):
        self.name = name
        self.fmt: Format = get_format("rgba8" if name == "rgba8n" else name)
        self.image_format = self.fmt.vk_format_name
        # this file's shaders read 8-bit texels through an R8G8B8A8_UINT view (mipmap/ itself
        # now packs them in R32_UINT words)
        self.view_format = ("VK_FORMAT_R8G8B8A8_UNORM" if name == "rgba8n" else
                            "VK_FORMAT_R8G8B8A8_UINT" if self.fmt.quantised_8bit else self.fmt.vk_view_format_name)
        self.bpt = self.fmt.bytes_per_texel


class SolImage:
    """An image created as MipImage creates it (mipmap/gpu.py), optionally with SAMPLED usage;
    duck-types MipImage for MipmapRunner.upload / readback (image, width, height, levels, sizes)."""

    def __init__(self, ctx, sf: SolFormat, width: int, height: int, levels: int | None = None,
                 sampled: bool = False):
        vk = ctx.vk
        self.sizes = level_sizes(width, height)
        if levels is not None:
            self.sizes = self.sizes[:levels]
        self.width, self.height, self.levels = width, height, len(self.sizes)
        self.bpt = sf.bpt
        fmt_id, view_id = getattr(vk, sf.image_format), getattr(vk, sf.view_format)
        flags = storage_view_flags(ctx, fmt_id, view_id)
        usage = vk.VK_IMAGE_USAGE_STORAGE_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
        if sampled:
            usage |= vk.VK_IMAGE_USAGE_SAMPLED_BIT
        self.image = ctx.image(width, height, self.levels, fmt_id, view_id, usage, flags)

    def level_bytes(self) -> list[int]:
        return [w * h * self.bpt for w, h in self.sizes]


class Kernel:
    """A compute pipeline of bench/sol with its set layout; `types` are the descriptor types of
    bindings 0, 1."""

    def __init__(self, ctx, spv: str, types: list[int], wg: tuple[int, int]):
        self.ctx, self.wg = ctx, wg
        self.set_layout = ctx.descriptor_set_layout([(i, t, 1) for i, t in enumerate(types)])
        self.layout = ctx.pipeline_layout(self.set_layout, 8)
        self.pipe = ctx.compute_pipeline((SOL / spv).read_bytes(), self.layout, list(wg))

    def bind(self, cb, dset, grid: tuple[int, int]) -> tuple[int, int]:
        vk = self.ctx.vk
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, [dset], 0, None)
        push = vk.ffi.new("uint32_t[2]", list(grid))
        vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, push)
        return math.ceil(grid[0] / self.wg[0]), math.ceil(grid[1] / self.wg[1])


def write_set(ctx, dset, entries) -> None:
    """entries: (binding, descriptor type, image view | buffer, sampler or None)."""
    vk = ctx.vk
    writes = []
    keep = []
    for binding, dtype, obj, sampler in entries:
        if dtype == vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER:
            info = vk.VkDescriptorBufferInfo(buffer=obj.handle, offset=0, range=0xFFFFFFFFFFFFFFFF)  # VK_WHOLE_SIZE
            keep.append(info)
            writes.append(vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=binding, descriptorType=dtype,
                                                  pBufferInfo=[info]))
        else:
            info = vk.VkDescriptorImageInfo(sampler=sampler or vk.VK_NULL_HANDLE, imageView=obj,
                                            imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL)
            keep.append(info)
            writes.append(vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=binding, descriptorType=dtype,
                                                  pImageInfo=[info]))
    vk.vkUpdateDescriptorSets(ctx.device, len(writes), writes, 0, None)


def nearest_sampler(ctx):
    vk = ctx.vk
    edge = vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
    info = vk.VkSamplerCreateInfo(magFilter=vk.VK_FILTER_NEAREST, minFilter=vk.VK_FILTER_NEAREST,
                                  mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_NEAREST, addressModeU=edge,
                                  addressModeV=edge, addressModeW=edge, maxLod=0.0)
    sampler = vk.vkCreateSampler(ctx.device, info, None)
    ctx.own(lambda: vk.vkDestroySampler(ctx.device, sampler, None))
    return sampler


def to_general(ctx, cb, img) -> None:
    vk = ctx.vk
    every = (vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT | vk.VK_ACCESS_TRANSFER_READ_BIT
             | vk.VK_ACCESS_TRANSFER_WRITE_BIT)
    img.barrier(cb, vk.VK_IMAGE_LAYOUT_UNDEFINED, vk.VK_IMAGE_LAYOUT_GENERAL, 0, every,
                vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT)


class Cell:
    """One kernel bound to its resources: `record(cb)` binds and dispatches once."""

    def __init__(self, kernel: Kernel, dset, grid: tuple[int, int]):
        self.kernel, self.dset, self.grid = kernel, dset, grid

    def record(self, cb) -> None:
        gx, gy = self.kernel.bind(cb, self.dset, self.grid)
        self.kernel.ctx.vk.vkCmdDispatch(cb, gx, gy, 1)


def time_cell(ctx, record, scratch, runs: int, warm: int) -> tuple[np.ndarray, float]:
    """(run times in µs, the warm-up's GPU duration in ms). As mipmap_bench._timed_batch, except
    that the warm-up runs are the dispatch alone, back to back (no fill, barrier or timestamps:
    a Python call each, so that tens of thousands record quickly)."""
    vk = ctx.vk
    n = 2 * runs + 2
    with ctx.scope():
        pool = ctx.query_pool(n)

        def rec(cb):
            vk.vkCmdResetQueryPool(cb, pool, 0, n)
            mb.full_barrier(ctx, cb)
            vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * runs)
            record(cb, warm)
            mb.full_barrier(ctx, cb)
            vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * runs + 1)
            for r in range(runs):
                vk.vkCmdFillBuffer(cb, scratch.handle, 0, mb.EVICT_BYTES, r)
                mb.full_barrier(ctx, cb)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r)
                record(cb, 1)
                vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * r + 1)
                mb.full_barrier(ctx, cb)

        ctx.run(rec)
        ts = ctx.timestamps_ns(pool, n)
    us = np.diff(ts[:2 * runs].reshape(-1, 2), axis=1).ravel() / 1000.0
    return us, (ts[2 * runs + 1] - ts[2 * runs]) / 1e6


def repeat(cell: Cell):
    """record(cb, k): bind once, then k dispatches."""
    def record(cb, k):
        gx, gy = cell.kernel.bind(cb, cell.dset, cell.grid)
        for _ in range(k):
            cell.kernel.ctx.vk.vkCmdDispatch(cb, gx, gy, 1)
    return record


def warm_count(nbytes: int, bw: float, heat_ms: float, least: int = 10) -> int:
    return min(MAX_WARM, max(least, math.ceil(heat_ms * 1e3 / (nbytes / bw * 1e6))))


class Bufcopy:
    """mipmap/shaders/copy.comp over `nbytes`, as mipmap_bench.shader_copy_bandwidth sets it up."""

    def __init__(self, ctx, nbytes: int):
        vk = ctx.vk
        self.nbytes = nbytes
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        self.a, self.b = ctx.buffer(nbytes, usage), ctx.buffer(nbytes, usage)
        sb = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        self.set_layout = ctx.descriptor_set_layout([(0, sb, 1), (1, sb, 1)])
        self.layout = ctx.pipeline_layout(self.set_layout, 4)
        self.pipe = ctx.compute_pipeline(load_spv("copy.spv"), self.layout)
        dpool = ctx.descriptor_pool([(sb, 2)], 1)
        self.dset = ctx.allocate_set(dpool, self.set_layout)
        write_set(ctx, self.dset, [(0, sb, self.a, None), (1, sb, self.b, None)])
        self.groups = min(nbytes // 16 // 256, 4096)
        self.ctx = ctx
        ctx.run(lambda cb: vk.vkCmdFillBuffer(cb, self.a.handle, 0, nbytes, 0x3F800000))

    def record(self, cb, k: int) -> None:
        vk = self.ctx.vk
        vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipe)
        vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, [self.dset], 0, None)
        count = vk.ffi.new("uint32_t[1]", [self.nbytes // 16])
        vk.vkCmdPushConstants(cb, self.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, count)
        for _ in range(k):
            vk.vkCmdDispatch(cb, self.groups, 1, 1)


# ---- set-up of one format and size ------------------------------------------------------------
class Setup:
    """The images, kernels and descriptor sets of one format and size (inside a ctx.scope())."""

    def __init__(self, ctx, sf: SolFormat, w: int, h: int, host_sums: bool = False):
        vk = ctx.vk
        self.ctx, self.sf, self.w, self.h = ctx, sf, w, h
        SI, CIS, SB = (vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                       vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)
        self.src = SolImage(ctx, sf, w, h)  # full chain: down1 writes level 1, imgcopy/imgread read level 0
        self.tex = SolImage(ctx, sf, w, h, sampled=True)  # full chain, SAMPLED usage too
        self.dst = SolImage(ctx, sf, w, h, levels=1)  # imgcopy's destination
        gx, gy = math.ceil(w / 2 / 16), math.ceil(h / 2 / 16)
        self.sums = ctx.buffer(max(16, 16 * gx * gy), vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host_visible=host_sums)
        busage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        self.bsrc = ctx.buffer(w * h * sf.bpt, busage, host_visible=host_sums)
        self.bdst = ctx.buffer((w // 2) * (h // 2) * sf.bpt, busage, host_visible=host_sums)
        self.sampler = nearest_sampler(ctx)
        self.pool = ctx.descriptor_pool([(SI, 32), (CIS, 8), (SB, 8)], 16)
        name = sf.name

        def make(spv, types, wg, entries):
            k = Kernel(ctx, f"{spv}_{name}.spv", types, wg)
            dset = ctx.allocate_set(self.pool, k.set_layout)
            write_set(ctx, dset, entries)
            return k, dset

        fill_src = make("fill", [SI], (16, 16), [(0, SI, self.src.image.views[0], None)])
        fill_tex = make("fill", [SI], (16, 16), [(0, SI, self.tex.image.views[0], None)])
        self.fill_cells = [Cell(*fill_src, (w, h)), Cell(*fill_tex, (w, h))]
        self.cells: dict[tuple[str, tuple[int, int]], tuple[Cell, int]] = {}
        down_bytes = sf.bpt * (w * h + (w // 2) * (h // 2))
        for cname, spv, wg in KERNELS:
            if cname == "down1":
                k = make(spv, [SI, SI], wg, [(0, SI, self.src.image.views[0], None),
                                            (1, SI, self.src.image.views[1], None)])
                cell, nbytes = Cell(*k, (w // 2, h // 2)), down_bytes
            elif cname == "down1tex":
                k = make(spv, [CIS, SI], wg, [(0, CIS, self.tex.image.views[0], self.sampler),
                                             (1, SI, self.tex.image.views[1], None)])
                cell, nbytes = Cell(*k, (w // 2, h // 2)), down_bytes
            elif cname == "bufdown1":
                if sf.name == "rgba8n":
                    continue
                k = make(spv, [SB, SB], wg, [(0, SB, self.bsrc, None), (1, SB, self.bdst, None)])
                cell, nbytes = Cell(*k, (w // 2, h // 2)), down_bytes
            elif cname == "imgcopy":
                k = make(spv, [SI, SI], wg, [(0, SI, self.src.image.views[0], None),
                                            (1, SI, self.dst.image.views[0], None)])
                cell, nbytes = Cell(*k, (w, h)), 2 * sf.bpt * w * h
            else:  # imgread
                k = make(spv, [SI, SB], wg, [(0, SI, self.src.image.views[0], None), (1, SB, self.sums, None)])
                cell, nbytes = Cell(*k, (w // 2, h // 2)), sf.bpt * w * h
            self.cells[(cname, wg)] = (cell, nbytes)

    def init(self, fill: bool = True) -> None:
        """All images to GENERAL; level 0 of src and tex filled on the GPU."""
        ctx = self.ctx

        def rec(cb):
            for img in (self.src, self.tex, self.dst):
                to_general(ctx, cb, img.image)
            if fill:
                for c in self.fill_cells:
                    c.record(cb)
                ctx.vk.vkCmdFillBuffer(cb, self.bsrc.handle, 0, self.bsrc.size, BUF_FILL)
            mb.full_barrier(ctx, cb)

        ctx.run(rec)


# ---- correctness on a small image ---------------------------------------------------------------
def check_format(ctx, sf: SolFormat, size: int) -> str:
    """Every kernel against numpy on size x size random texels; '' if all agree, else the differences."""
    runner = MipmapRunner(ctx, sf.fmt)  # for upload / readback only (rgba8n: the rgba8 runner)
    bad = []
    with ctx.scope():
        s = Setup(ctx, sf, size, size, host_sums=True)
        s.init(fill=False)
        level0 = random_level0(size, size, sf.fmt, seed=size + len(sf.name))
        x = level0.astype(np.float64)
        blocks = [x[0::2, 0::2], x[0::2, 1::2], x[1::2, 0::2], x[1::2, 1::2]]
        if sf.name == "rgba8":  # the generator's rounding: (a + b + c + d + 2) >> 2
            want_down = np.floor((sum(blocks) + 2) / 4)
        else:
            want_down = sum(blocks) / 4
        # absolute tolerance of down1: rgba8 exact, rgba8n 1 LSB (rounded float average),
        # r32f float32 rounding, rgba16f the float16 rounding of the result
        tol = {"rgba8": 0.0, "rgba8n": 1.0, "r32f": 1e-6, "rgba16f": 1e-3}[sf.name]
        for (cname, wg), (cell, _) in s.cells.items():
            for img in (s.src, s.tex, s.dst):
                runner.upload(img, level0)
            s.bsrc.write(level0)
            ctx.run(lambda cb, c=cell: (c.record(cb), mb.full_barrier(ctx, cb)))
            if cname in ("down1", "down1tex"):
                got = runner.readback(s.tex if cname == "down1tex" else s.src)[1].astype(np.float64)
                err = float(np.max(np.abs(got - want_down)))
                ok = err <= tol
            elif cname == "bufdown1":  # float average, packUnorm4x8: 1 LSB off for the 8-bit formats
                half = size // 2
                got = (s.bdst.read(half * half * sf.bpt).view(sf.fmt.storage_dtype)
                       .reshape(half, half, sf.fmt.channels).astype(np.float64))
                err = float(np.max(np.abs(got - sum(blocks) / 4)))
                ok = err <= max(tol, 1.0 if sf.fmt.quantised_8bit else 0.0)
            elif cname == "imgcopy":
                got = runner.readback(s.dst)[0].astype(np.float64)
                err = float(np.max(np.abs(got - x)))
                ok = err == 0.0
            else:  # imgread: the sum of the workgroups' sums against the sum of level 0
                n = math.ceil(size / 32) ** 2
                raw = s.sums.read(16 * n).view(np.uint32 if sf.name == "rgba8" else np.float32).reshape(n, 4)
                got_total = raw.astype(np.float64).sum(axis=0)[: sf.fmt.channels]
                want_total = x.reshape(-1, sf.fmt.channels).sum(axis=0) / (255.0 if sf.name == "rgba8n" else 1.0)
                err = float(np.max(np.abs(got_total - want_total) / np.maximum(np.abs(want_total), 1.0)))
                ok = err <= (0.0 if sf.name == "rgba8" else 1e-4)
            if not ok:
                bad.append(f"{cname} {wg[0]}x{wg[1]}: max err {err:g}")
    return "; ".join(bad)


# ---- main ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--heat-ms", type=float, default=220.0,
                    help="warm-up of each image kernel: this long at the reference bandwidth, at least")
    ap.add_argument("--chain-heat-ms", type=float, default=400.0,
                    help="the chain's heat_ms for mipmap_bench.time_algorithm (h100.md used 400)")
    ap.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--buf-bytes", type=int, default=BUF_BYTES)
    ap.add_argument("--check-size", type=int, default=256, help="size of the correctness check (0: none)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and warm-ups: a smoke test (e.g. lavapipe)")
    ap.add_argument("--out", type=Path, default=None, help="markdown report here, and .json beside it")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.runs, args.heat_ms, args.chain_heat_ms = "128x128,256x256", 3, 2.0, 2.0
        args.buf_bytes, args.check_size = 16 << 20, 64
    t_start = time.time()
    try:
        sizes = [mb.parse_size(s) for s in args.sizes.split(",")]
        sfs = [SolFormat(f) for f in args.formats.split(",")]
        ctx = open_device(args.device)
    except (ScenarioError, NotSupported) as e:
        print(f"mipmap_sol: {e.label}: {e}", file=sys.stderr)
        return 2
    lines: list[str] = []

    def emit(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    rows: list[dict] = []
    with ctx:
        vk = ctx.vk
        info = ctx.info
        emit("# Speed of light of image passes (bench/mipmap_sol.py)")
        emit()
        emit(f"- device: **{info.name}**; driver {info.driver_name} {info.driver_info} "
             f"(driverVersion {info.driver_version}); Vulkan {info.api_version}; subgroup {info.subgroup_size}")
        emit(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
        # correctness first (small, cheap)
        if args.check_size:
            for sf in sfs:
                msg = check_format(ctx, sf, args.check_size)
                emit(f"- check {sf.name} {args.check_size}x{args.check_size}, every kernel against numpy: "
                     + ("ok" if not msg else "DIFFERENCES: " + msg))
        with ctx.scope():
            scratch = ctx.buffer(mb.EVICT_BYTES, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)

            def bufcopy(label: str) -> dict:
                with ctx.scope():
                    bc = Bufcopy(ctx, args.buf_bytes)
                    nbytes = 2 * args.buf_bytes
                    us, warm_ms = time_cell(ctx, bc.record, scratch, args.runs,
                                            warm_count(nbytes, 2.85e12, args.heat_ms, 5))
                med = statistics.median(us)
                return {"kernel": "bufcopy", "label": label, "format": "-", "size": [args.buf_bytes, 1],
                        "wg": [256, 1], "median_us": med, "min_us": float(us.min()), "bytes": nbytes,
                        "gbs": nbytes / med / 1e3, "warm_ms": warm_ms}

            ref = bufcopy("first")
            bw = ref["gbs"] * 1e9
            # the reference numbers of mipmap_bench, right after the warm bufcopy (clocks up)
            bw_shader_mb = mb.shader_copy_bandwidth(ctx, args.buf_bytes)
            bw_copy_mb = mb.copy_bandwidth(ctx, args.buf_bytes)
            emit(f"- reference (100%): bufcopy = mipmap/shaders/copy.comp over {args.buf_bytes >> 20} MiB, "
                 f"{args.runs} runs after {ref['warm_ms']:.0f} ms of warm-up: median {ref['median_us']:.1f} µs, "
                 f"**{ref['gbs']:.0f} GB/s** (read + write). mipmap_bench's own measurements right after it "
                 f"(10 runs, no eviction): shader_copy_bandwidth {bw_shader_mb / 1e9:.0f} GB/s, "
                 f"copy_bandwidth (vkCmdCopyBuffer) {bw_copy_mb / 1e9:.0f} GB/s; h100.md's floor used 2853 GB/s")
            rows.append(ref)
            emit(f"- per cell: warm-up of the same dispatch back to back, as many as fill {args.heat_ms:.0f} ms at "
                 f"the reference bandwidth (the warm-up's measured GPU time is in the json), then {args.runs} timed "
                 "runs, each after a 256 MiB fill (L2 eviction) and a full barrier, BOTTOM_OF_PIPE timestamps; "
                 "GB/s = counted bytes / median (1 GB = 1e9 B)")
            emit("- counted bytes: down1/down1tex/bufdown1 W·H·bpt read + (W/2)·(H/2)·bpt written; imgcopy 2·W·H·bpt; "
                 "imgread W·H·bpt; chain = mipmap_bench.floor_bytes (level 0 + every level written)")
            emit()
            emit("| kernel | format | size | workgroup | median µs | min µs | MiB counted | GB/s | % of bufcopy |")
            emit("|---|---|---|---|---|---|---|---|---|")
            emit(f"| bufcopy | — | {args.buf_bytes >> 20} MiB | 256 | {ref['median_us']:.1f} | {ref['min_us']:.1f} | "
                 f"{ref['bytes'] / 2**20:.0f} | {ref['gbs']:.0f} | 100% |")
            for sf in sfs:
                runner = None
                if sf.name in CHAIN_FORMATS:
                    try:
                        runner = MipmapRunner(ctx, sf.fmt)
                    except NotSupported as e:
                        emit(f"| chain | {sf.name} | all | — | not supported: {e} | | | | |")
                for w, h in sizes:
                    with ctx.scope():
                        s = Setup(ctx, sf, w, h)
                        s.init()
                        for (cname, wg), (cell, nbytes) in s.cells.items():
                            us, warm_ms = time_cell(ctx, repeat(cell), scratch, args.runs,
                                                    warm_count(nbytes, bw, args.heat_ms))
                            med = statistics.median(us)
                            gbs = nbytes / med / 1e3
                            row = {"kernel": cname, "format": sf.name, "size": [w, h], "wg": list(wg),
                                   "median_us": round(med, 2), "min_us": round(float(us.min()), 2), "bytes": nbytes,
                                   "gbs": round(gbs, 1), "of_bufcopy": round(gbs * 1e9 / bw, 4),
                                   "warm_ms": round(warm_ms, 1)}
                            rows.append(row)
                            emit(f"| {cname} | {sf.name} | {w}x{h} | {wg[0]}x{wg[1]} | {med:.1f} | {us.min():.1f} | "
                                 f"{nbytes / 2**20:.0f} | {gbs:.0f} | {gbs * 1e9 / bw:.0%} |")
                    if runner is None:
                        continue
                    with ctx.scope():
                        img = runner.make_image(w, h)
                        fill = Kernel(ctx, f"fill_{sf.name}.spv", [vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE], (16, 16))
                        fpool = ctx.descriptor_pool([(vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1)], 1)
                        fset = ctx.allocate_set(fpool, fill.set_layout)
                        write_set(ctx, fset, [(0, vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, img.image.views[0], None)])

                        def rec(cb, img=img, fill=fill, fset=fset, w=w, h=h):
                            to_general(ctx, cb, img.image)
                            Cell(fill, fset, (w, h)).record(cb)
                            mb.full_barrier(ctx, cb)

                        ctx.run(rec)
                        nbytes = mb.floor_bytes(w, h, sf.bpt)
                        floor_us = nbytes / bw * 1e6
                        t0 = time.time()
                        us = mb.time_algorithm(runner, img, "tiled", scratch, args.runs, 5, args.chain_heat_ms,
                                               floor_us)
                        med = statistics.median(us)
                        gbs = nbytes / med / 1e3
                        disp = len(tiled_plan(w, h))
                        rows.append({"kernel": "chain", "format": sf.name, "size": [w, h], "wg": [],
                                     "dispatches": disp, "median_us": round(med, 2),
                                     "min_us": round(float(us.min()), 2), "bytes": nbytes, "gbs": round(gbs, 1),
                                     "of_bufcopy": round(floor_us / med, 4), "floor_us": round(floor_us, 2),
                                     "host_s": round(time.time() - t0, 2)})
                        emit(f"| chain (tiled, {disp} dispatches) | {sf.name} | {w}x{h} | — | {med:.1f} | "
                             f"{us.min():.1f} | {nbytes / 2**20:.0f} | {gbs:.0f} | {floor_us / med:.0%} |")
            end = bufcopy("last")
            rows.append(end)
            emit(f"| bufcopy (again, last) | — | {args.buf_bytes >> 20} MiB | 256 | {end['median_us']:.1f} | "
                 f"{end['min_us']:.1f} | {end['bytes'] / 2**20:.0f} | {end['gbs']:.0f} | "
                 f"{end['gbs'] / ref['gbs']:.0%} |")
        emit()
        emit("## Chain beside the single passes (same run, % of bufcopy)")
        emit()
        emit("| format | size | chain of floor | chain µs | floor µs | down1 best | down1tex best | imgcopy | imgread "
             "| bufdown1 best |")
        emit("|---|---|---|---|---|---|---|---|---|---|")
        for sf in sfs:
            for w, h in sizes:
                def best(k, sf=sf, w=w, h=h):
                    rs = [r for r in rows if r["kernel"] == k and r["format"] == sf.name and r["size"] == [w, h]]
                    if not rs:
                        return "—"
                    r = max(rs, key=lambda r: r["of_bufcopy"])
                    wg = f" ({r['wg'][0]}x{r['wg'][1]})" if r["wg"] else ""
                    return f"{r['of_bufcopy']:.0%}{wg}"
                ch = [r for r in rows if r["kernel"] == "chain" and r["format"] == sf.name and r["size"] == [w, h]]
                c = (f"{ch[0]['of_bufcopy']:.0%} | {ch[0]['median_us']:.1f} | {ch[0]['floor_us']:.1f}"
                     if ch else "— | — | —")
                emit(f"| {sf.name} | {w}x{h} | {c} | {best('down1')} | {best('down1tex')} | {best('imgcopy')} | "
                     f"{best('imgread')} | {best('bufdown1')} |")
        emit()
        warm = [r["warm_ms"] for r in rows if "warm_ms" in r]
        emit(f"- warm-up GPU time per cell: min {min(warm):.0f} ms, median {statistics.median(warm):.0f} ms; "
             f"script wall time {time.time() - t_start:.0f} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
