"""The committed SPIR-V is what the GLSL sources compile to."""
import os
import subprocess

import pytest

from mipmap import build_spirv


def test_committed_spirv_is_up_to_date(tmp_path):
    compiler = build_spirv.find_compiler()
    if compiler is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("no shader compiler in CI (glslang-tools)")
        pytest.skip("no glslangValidator or glslc")
    built = build_spirv.build(tmp_path)
    names = sorted(p.name for p in built)
    committed = sorted(p.name for p in build_spirv.SPV.glob("*.spv"))
    assert names == committed
    version = subprocess.run([compiler[0], "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    stale = [p.name for p in built if p.read_bytes() != (build_spirv.SPV / p.name).read_bytes()]
    assert not stale, f"rebuild with `python -m mipmap.build_spirv` ({version}): {stale}"
