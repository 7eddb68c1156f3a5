"""Rebuild vk_tests/spv/*.spv from vk_tests/shaders/* (run: python -m vk_tests.build_spirv).

Every GLSL source (``NAME.vert``, ``NAME.frag``, ``NAME.comp``) compiles to ``NAME.STAGE.spv``
with glslangValidator (Debian ``glslang-tools``) or, if that is missing, glslc.  The device
machines have no compiler: the modules are committed, with the compiler version and a digest
of the sources in ``spv/BUILD_INFO.json`` (tests/vk/test_replay.py checks the digest).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHADERS = HERE / "shaders"
SPV = HERE / "spv"
STAGES = ("vert", "frag", "comp")
BUILD_INFO = "BUILD_INFO.json"
TARGET_ENV = "vulkan1.0"


def sources() -> list[Path]:
    return sorted(p for p in SHADERS.iterdir() if p.suffix.lstrip(".") in STAGES)


def module_name(source: Path) -> str:
    return f"{source.name}.spv"


def find_compiler() -> list[str] | None:
    if shutil.which("glslangValidator"):
        return ["glslangValidator", "-V", "--target-env", TARGET_ENV, "-Os"]
    if shutil.which("glslc"):
        return ["glslc", f"--target-env={TARGET_ENV}", "-O"]
    return None


def compiler_version(compiler: list[str]) -> str:
    res = subprocess.run([compiler[0], "--version"], capture_output=True, text=True)
    return (res.stdout or res.stderr).splitlines()[0].strip()


def sources_digest() -> str:
    """sha256 over the shader sources (names and bytes) and the target environment."""
    h = hashlib.sha256(TARGET_ENV.encode() + b"\0")
    for path in sources():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def build(out_dir: Path = SPV) -> list[Path]:
    compiler = find_compiler()
    if compiler is None:
        raise RuntimeError("shader compiler: need glslangValidator (glslang-tools) or glslc")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for src in sources():
        out = out_dir / module_name(src)
        res = subprocess.run(compiler + [str(src), "-o", str(out)], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{src.name}: shader compiler failed:\n{res.stdout}{res.stderr}")
        paths.append(out)
    info = {"compiler": compiler_version(compiler), "sources_sha256": sources_digest()}
    (out_dir / BUILD_INFO).write_text(json.dumps(info, indent=1) + "\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, default=SPV, help="output folder (default: vk_tests/spv)")
    args = ap.parse_args(argv)
    try:
        paths = build(args.out)
    except RuntimeError as e:
        print(f"build_spirv: {e}", file=sys.stderr)
        return 2
    print(f"wrote {len(paths)} SPIR-V modules to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
