"""Rebuild mipmap/spv/*.spv from mipmap/shaders/*.comp (run: python -m mipmap.build_spirv).

Each kernel is compiled once per format (and, for the kernels with a reduction tree, once
with and once without subgroup shuffles) by glslangValidator (Debian ``glslang-tools``) or,
if that is missing, by glslc. An installed package uses the committed SPIR-V and needs no
compiler.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import attrs

from turnip_base.errors import ScenarioError
from turnip_base.outputs import make_dir, write_text

HERE = Path(__file__).resolve().parent
SHADERS = HERE / "shaders"
SPV = HERE / "spv"
FORMAT_MACROS = {"r32f": "FMT_R32F", "rgba16f": "FMT_RGBA16F", "rgba8": "FMT_RGBA8", "srgba8": "FMT_SRGBA8"}
TREE_KERNELS = ("fast", "spd")  # kernels with a shuffle and a shared-memory variant
BUILD_INFO = "BUILD_INFO.json"  # compiler version and source digest of the committed modules


@attrs.frozen
class Variant:
    kernel: str
    fmt: str
    shuffle: bool

    @property
    def name(self) -> str:
        if self.kernel in ("copy", "mix", "mixsync", "probe", "probe_srgb"):
            return f"{self.kernel}.spv"
        suffix = ("_shuffle" if self.shuffle else "_shared") if self.kernel in TREE_KERNELS else ""
        return f"{self.kernel}_{self.fmt}{suffix}.spv"

    @property
    def source(self) -> Path:
        return SHADERS / f"{self.kernel}.comp"

    @property
    def defines(self) -> list[str]:
        return [f"-D{FORMAT_MACROS[self.fmt]}", f"-DUSE_SHUFFLE={int(self.shuffle)}"]


def variants() -> list[Variant]:
    out = []
    for kernel in ("fast", "general", "spd"):
        for fmt in FORMAT_MACROS:
            for shuffle in ((False, True) if kernel in TREE_KERNELS else (False,)):
                out.append(Variant(kernel, fmt, shuffle))
    out.append(Variant("copy", "r32f", False))  # format-free bandwidth reference
    out.append(Variant("mix", "r32f", False))  # a chain's read/write mix (bench/mipmap_breakdown.py)
    out.append(Variant("mixsync", "r32f", False))  # the mix and a single pass's least hand-off (same)
    out.append(Variant("probe", "r32f", False))  # does fma round once (gpu.fma_rounds_once)
    out.append(Variant("probe_srgb", "r32f", False))  # is the sampler's sRGB decode exact (gpu.srgb_decode_exact)
    return out


def variant_name(kernel: str, fmt: str, shuffle: bool) -> str:
    return Variant(kernel, fmt, shuffle and kernel in TREE_KERNELS).name


def find_compiler() -> list[str] | None:
    if shutil.which("glslangValidator"):
        return ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-Os"]
    if shutil.which("glslc"):
        return ["glslc", "--target-env=vulkan1.1", "-O", "-fshader-stage=compute"]
    return None


def compile_variant(v: Variant, out: Path, compiler: list[str]) -> None:
    cmd = compiler + v.defines + [str(v.source), "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{v.name}: shader compiler failed:\n{res.stdout}{res.stderr}")


def compiler_version(compiler: list[str]) -> str:
    res = subprocess.run([compiler[0], "--version"], capture_output=True, text=True)
    return (res.stdout or res.stderr).splitlines()[0].strip()


def sources_digest() -> str:
    """sha256 over the GLSL sources (names and bytes) and this script's variant list."""
    h = hashlib.sha256()
    for path in sorted(SHADERS.glob("*")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for v in variants():
        h.update(f"{v.name}:{' '.join(v.defines)}\n".encode())
    return h.hexdigest()


def build(out_dir: Path = SPV) -> list[Path]:
    """Compile every variant into out_dir and record the compiler and source digest."""
    compiler = find_compiler()
    if compiler is None:
        raise RuntimeError("shader compiler: need glslangValidator (glslang-tools) or glslc")
    make_dir("--out", out_dir)
    paths = []
    for v in variants():
        path = out_dir / v.name
        compile_variant(v, path, compiler)
        paths.append(path)
    info = {"compiler": compiler_version(compiler), "sources_sha256": sources_digest()}
    write_text("--out", out_dir / BUILD_INFO, json.dumps(info, indent=1) + "\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=SPV, help="output folder (default: mipmap/spv)")
    args = ap.parse_args(argv)
    try:
        paths = build(args.out)
    except (RuntimeError, ScenarioError) as e:  # ScenarioError: --out cannot be written
        print(f"build_spirv: {e}", file=sys.stderr)
        return 2
    print(f"wrote {len(paths)} SPIR-V modules to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
