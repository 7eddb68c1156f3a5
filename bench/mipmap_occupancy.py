"""What the driver made of each mip-chain pipeline: registers, shared memory, code size, occupancy.

    python bench/mipmap_occupancy.py [--device D] [--breakdown bench/results/h100.breakdown.json] \
        --out bench/results/h100.occupancy.md

For every format and every pipeline that the table's cells run (bench/mipmap_bench.py: the
tiled plan, ``spd`` and ``spd-split`` at 8192², 4096², 4095² and 1920x1080, plus the fast M = 1
kernel that bench/mipmap_breakdown.py times as "level 1 alone"), the pipeline is made with
``VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR`` and its statistics read back through
``VK_KHR_pipeline_executable_properties`` (:meth:`mipmap.gpu.MipmapRunner.pipeline_statistics`).
A device without the extension gets one *not supported* line on standard error and exit
status 2 (the command line's contract); nothing is guessed.

Where the driver reports NVIDIA's "Register Count" and "Shared Memory Size", the theoretical
occupancy follows the CUDA occupancy rules of the Hopper SM (compute capability 9.0, the H100;
NVIDIA's CUDA C++ Programming Guide, "Compute capabilities" table, and its occupancy calculator):
65536 32-bit registers, at most 64 resident warps and 32 resident workgroups per SM, registers
allocated per warp in units of 256, at most 228 KiB of shared memory per SM with 1 KiB reserved
per workgroup, allocated in units of 128 bytes. The shared-memory bound assumes the largest
carve-out; the driver may choose a smaller one (bench/results/h100.experiments.md, sixth round:
replicated sRGB tables, 14-36 KiB more per workgroup, ran 1.6-2.6x slower).

On an NVIDIA device (vendor 0x10de), "Binary Size" / 16 is the number of machine instructions
(each is 128 bits since Volta); other vendors get no instruction count. The fast M = 1 kernel
makes one level-1 texel per invocation in straight-line code (its specialisation constants fold
the other paths away), so that count is about what an invocation issues (more only where a
branch skips code), and the level-1 pass of a w x h image issues about (w/2)(h/2) / 32 *
instructions warp-instructions. At 4 a clock per SM (one per sub-partition), with the SM count
(``VK_NV_shader_sm_builtins``) and the largest SM clock (``nvidia-smi``), that is its *issue
time*, an estimate set beside the measured level-1 time of ``--breakdown`` (same device) and the
copy floor of the same bytes. Where the issue time nears the memory time, the pass is bound by
instructions, not bandwidth: no memory-side change brings it to the floor.

Not a test: nothing here asserts a speed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mipmap.formats import FORMAT_NAMES, get_format  # noqa: E402
from mipmap.gpu import (  # noqa: E402
    STATISTICS_EXTENSION,
    MipmapRunner,
    PipelineKey,
    dispatch_key,
    spd_keys,
    statistics_setup,
)
from mipmap.plan import FAST_LOCAL, GENERAL_LOCAL, SPD_LOCAL, SPD_MAX_SIZE, tiled_plan  # noqa: E402
from turnip_base.errors import NotSupported, ScenarioError  # noqa: E402
from turnip_base.harness import open_device  # noqa: E402

SIZES = [(8192, 8192), (4096, 4096), (4095, 4095), (1920, 1080)]
LEVEL1_ALONE: PipelineKey = ("fast", 1, False, 0, False)

#: Hopper (compute capability 9.0) per-SM limits of the CUDA occupancy rules
REGISTERS_PER_SM = 65536
REGISTER_UNIT = 256          # registers are allocated per warp in units of this many
MAX_WARPS_PER_SM = 64
MAX_GROUPS_PER_SM = 32
SHARED_PER_SM = 228 * 1024
SHARED_RESERVED = 1024       # per workgroup
SHARED_UNIT = 128
ISSUE_PER_CLOCK = 4          # warp-instructions per clock per SM (four sub-partitions)
INSTRUCTION_BYTES = 16       # NVIDIA machine instructions since Volta
NVIDIA_VENDOR_ID = 0x10DE


def occupancy(registers: int, shared: int, local_size: int) -> dict[str, int]:
    """Resident workgroups per SM under each limit and the least of them (CUDA's rules, Hopper)."""
    warps = math.ceil(local_size / 32)
    per_warp = math.ceil(registers * 32 / REGISTER_UNIT) * REGISTER_UNIT
    by_regs = (REGISTERS_PER_SM // per_warp) // warps if per_warp else MAX_GROUPS_PER_SM
    by_warps = MAX_WARPS_PER_SM // warps
    smem = math.ceil((shared + SHARED_RESERVED) / SHARED_UNIT) * SHARED_UNIT
    by_shared = SHARED_PER_SM // smem
    groups = min(by_regs, by_warps, by_shared, MAX_GROUPS_PER_SM)
    return {"groups_by_registers": by_regs, "groups_by_warps": by_warps, "groups_by_shared": by_shared,
            "groups": groups, "warps": groups * warps, "occupancy_pct": round(100 * groups * warps / MAX_WARPS_PER_SM)}


def local_size(key: PipelineKey) -> int:
    return GENERAL_LOCAL if key[0] == "general" else FAST_LOCAL if key[0] == "fast" else SPD_LOCAL


def cell_keys(fmt_name: str) -> dict[PipelineKey, list[str]]:
    """Every pipeline the table's cells of one format run, with the cells (and dispatch) using it."""
    uses: dict[PipelineKey, list[str]] = {}
    for w, h in SIZES:
        for k, d in enumerate(tiled_plan(w, h)):
            uses.setdefault(dispatch_key(d), []).append(f"{w}x{h} tiled #{k} ({d.workgroups} groups)")
        if max(w, h) <= SPD_MAX_SIZE:
            for alg, split in (("spd", False), ("spd-split", True)):
                for k, key in enumerate(spd_keys(w, h, split)):
                    uses.setdefault(key, []).append(f"{w}x{h} {alg} #{k}")
        if w % 4 == 0 and h % 4 == 0:
            uses.setdefault(LEVEL1_ALONE, []).append(f"{w}x{h} level 1 alone")
    return uses


def sm_count(ctx: Any) -> int | None:
    """shaderSMCount of VK_NV_shader_sm_builtins, where the device has it."""
    vk = ctx.vk
    if "VK_NV_shader_sm_builtins" not in ctx.device_extensions():
        return None
    props = vk.VkPhysicalDeviceShaderSMBuiltinsPropertiesNV()
    vk.vkGetPhysicalDeviceProperties2(ctx.physical, vk.VkPhysicalDeviceProperties2(pNext=props))
    return int(props.shaderSMCount)


def max_sm_clock_mhz() -> int | None:
    """The largest SM clock nvidia-smi reports, where it runs."""
    if not shutil.which("nvidia-smi"):
        return None
    res = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True)
    try:
        return int(res.stdout.split()[0])
    except (IndexError, ValueError):
        return None


def read_breakdown(path: Path | None) -> tuple[dict[tuple[str, int, int], float], float]:
    """bench/mipmap_breakdown.py's level-1-alone times by (format, width, height), and its copy
    bandwidth (bytes a second); nothing without a file. :class:`ScenarioError` (``--breakdown``)
    where the file cannot be read as such."""
    if path is None:
        return {}, 0.0
    try:
        bd = json.loads(path.read_text())
        measured = {(c["format"], *c["size"]): float(c["level1_alone_us"]) for c in bd["cells"]
                    if c.get("level1_alone_us") is not None}
        return measured, float(bd["bandwidth"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ScenarioError("--breakdown", f"not a bench/mipmap_breakdown.py JSON file ({type(e).__name__}: {e})") \
            from None


def key_name(key: PipelineKey) -> str:
    kernel, levels, tail, input_level, whole = key
    return f"{kernel} M={levels}{' +hand-off' if tail else ''} from level {input_level}{' whole' if whole else ''}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="device index or name substring")
    ap.add_argument("--formats", default=",".join(FORMAT_NAMES))
    ap.add_argument("--breakdown", type=Path, default=None,
                    help="bench/mipmap_breakdown.py's JSON (same device): the measured level-1 times")
    ap.add_argument("--out", type=Path, required=True, help="Markdown report (and .json beside)")
    args = ap.parse_args(argv)
    # bad input refused before the device opens: one line, exit 2, nothing written
    try:
        formats = [get_format(name) for name in args.formats.split(",")]
        measured, bandwidth = read_breakdown(args.breakdown)
    except ScenarioError as e:
        print(f"mipmap_occupancy: {e.label}: {e}", file=sys.stderr)
        return 2
    try:
        ctx = open_device(args.device, setup=statistics_setup)
    except NotSupported as e:
        print(f"mipmap_occupancy: not supported: {e}", file=sys.stderr)
        return 2
    with ctx:
        if STATISTICS_EXTENSION not in ctx.enabled_extensions:
            print(f"mipmap_occupancy: not supported: device {ctx.info.name} has no {STATISTICS_EXTENSION}",
                  file=sys.stderr)
            return 2
        sms, clock = sm_count(ctx), max_sm_clock_mhz()
        rows, level1 = [], []
        for fmt in formats:
            name = fmt.name
            runner = MipmapRunner(ctx, fmt, capture_statistics=True)
            for key, used in cell_keys(name).items():
                print(f"{name}: {key_name(key)}", file=sys.stderr, flush=True)
                st = runner.pipeline_statistics(key)
                row: dict[str, Any] = {"format": name, "pipeline": key_name(key), "key": list(key),
                                       "used_by": used, "statistics": st}
                regs, smem = st.get("Register Count"), st.get("Shared Memory Size")
                if isinstance(regs, int) and isinstance(smem, int):
                    row.update(occupancy(regs, smem, local_size(key)))
                # 16-byte machine instructions: NVIDIA's encoding (Volta on); nothing assumed elsewhere
                if isinstance(st.get("Binary Size"), int) and ctx.info.vendor_id == NVIDIA_VENDOR_ID:
                    row["instructions"] = int(st["Binary Size"]) // INSTRUCTION_BYTES
                rows.append(row)
                if key == LEVEL1_ALONE and "instructions" in row and sms and clock:
                    for w, h in SIZES:
                        if w % 4 or h % 4:
                            continue
                        outputs = (w // 2) * (h // 2)
                        issue_us = outputs / 32 * row["instructions"] / (ISSUE_PER_CLOCK * sms * clock * 1e6) * 1e6
                        nbytes = (w * h + outputs) * fmt.bytes_per_texel
                        entry = {"format": name, "size": [w, h], "instructions": row["instructions"],
                                 "issue_us": round(issue_us, 1)}
                        if (name, w, h) in measured:
                            entry["measured_us"] = measured[(name, w, h)]
                            entry["floor_us"] = round(nbytes / bandwidth * 1e6, 1)
                        level1.append(entry)
        info = ctx.info
    out = {"device": info.name, "driver": f"{info.driver_name} {info.driver_info}", "sm_count": sms,
           "max_sm_clock_mhz": clock, "pipelines": rows, "level1": level1,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    args.out.write_text(render(out))
    print(f"wrote {args.out} and {args.out.with_suffix('.json')}")
    return 0


def render(out: dict[str, Any]) -> str:
    lines = [f"# Mip-chain pipelines on the {out['device']}: registers, shared memory, occupancy "
             "(bench/mipmap_occupancy.py)", "",
             f"- driver {out['driver']}; {out['sm_count']} SMs; largest SM clock {out['max_sm_clock_mhz']} MHz; "
             f"{out['date']}",
             "- *regs*, *shared B*, *instr.*: the driver's Register Count, Shared Memory Size and Binary Size / 16",
             "- *groups/SM* by registers / warps / shared memory, and the least: resident workgroups per SM "
             "(CUDA's occupancy rules, Hopper); *occ.*: resident warps of 64", ""]
    fmts = sorted({r["format"] for r in out["pipelines"]}, key=list(FORMAT_NAMES).index)
    for f in fmts:
        lines += [f"## {f}", "", "| pipeline | regs | shared B | instr. | groups/SM (regs / warps / shared) | "
                  "occ. | used by |", "|---|---|---|---|---|---|---|"]
        for r in (r for r in out["pipelines"] if r["format"] == f):
            st = r["statistics"]
            lim = (f"{r['groups']} ({r['groups_by_registers']} / {r['groups_by_warps']} / {r['groups_by_shared']})"
                   if "groups" in r else "—")
            occ = f"{r['occupancy_pct']}%" if "occupancy_pct" in r else "—"
            lines.append(f"| {r['pipeline']} | {st.get('Register Count', '—')} | {st.get('Shared Memory Size', '—')} "
                         f"| {r.get('instructions', '—')} | {lim} | {occ} | {'; '.join(r['used_by'])} |")
        lines.append("")
    if out["level1"]:
        lines += ["## Level 1 alone (fast M = 1): instruction issue against the memory floor", "",
                  "*issue µs*: level-1 texels / 32 x instructions / (4 x SMs x clock), the time the SMs "
                  "take to issue the pass's instructions at the largest clock (an estimate); "
                  "*measured µs*: bench/mipmap_breakdown.py's level 1 alone; *floor µs*: its bytes "
                  "(level 0 read, level 1 written) at the copy bandwidth.",
                  "", "| format | size | instr. | issue µs | measured µs | floor µs | issue / floor |",
                  "|---|---|---|---|---|---|---|"]
        for e in out["level1"]:
            ratio = f"{e['issue_us'] / e['floor_us']:.2f}" if e.get("floor_us") else "—"
            lines.append(f"| {e['format']} | {e['size'][0]}x{e['size'][1]} | {e['instructions']} | {e['issue_us']} | "
                         f"{e.get('measured_us', '—')} | {e.get('floor_us', '—')} | {ratio} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
