"""bench/layout_bench.py's tree variants (``COMMIT-nobound`` and the probes ``-freesampling``,
``-noc``) apply to this checkout's code, and refuse a tree they were not written for: a probe
whose substitution silently found nothing would time the unchanged code as if it were the
bound (bench/results/layout.md).  No timing here."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("layout_bench")


def _tree(tmp_path: Path, rel: str) -> Path:
    """A tree holding this checkout's ``rel`` only."""
    (tmp_path / rel).parent.mkdir(parents=True)
    shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


@pytest.mark.parametrize("variant", ["nobound", "noc", "freesampling"])
def test_each_variant_changes_this_checkout(bench: ModuleType, tmp_path: Path, variant: str) -> None:
    rel = bench.VARIANTS[variant][0]
    tree = _tree(tmp_path, rel)
    before = (tree / rel).read_text(encoding="utf-8")
    bench.apply_variant(tree, f"HEAD-{variant}", variant)
    after = (tree / rel).read_text(encoding="utf-8")
    assert after != before
    compile(after, rel, "exec")   # still Python
    if variant == "freesampling":
        # the sampling gone: the block walk stays, nothing is sampled or reduced, no exact pass
        body = after[after.index("    def work(i: int) -> FloatArray:"):]
        body = body[:body.index("        return err\n")]
        assert "grid.blocks" in body and "sample_grid" not in body and "_reduce_max" not in body
        assert "    if False:\n" in after
    else:
        value = "0" if variant == "noc" else "1 << 62"
        assert f"\nMAX_RECONSTRUCTION_PIXELS = {value}\n" in after


def test_a_tree_without_the_line_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    rel = bench.VARIANTS["freesampling"][0]
    tree = _tree(tmp_path, rel)
    path = tree / rel
    # planted: another tree, whose picture_rasters names its worker otherwise
    path.write_text(path.read_text(encoding="utf-8").replace("def work(i: int)", "def job(i: int)"),
                    encoding="utf-8")
    with pytest.raises(SystemExit, match="images.py has 0 lines"):
        bench.apply_variant(tree, "X-freesampling", "freesampling")


def test_an_unknown_variant_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unknown variant 'fast'"):
        bench.apply_variant(tmp_path, "HEAD-fast", "fast")
