"""Suite-wide settings.

``TURNIP_FDM_FAST=1`` (set by ``./dev test-fast``) divides every Hypothesis test's
``max_examples`` by 8 (at least 5 examples each): the edit-run loop, not a proof.  The whole
suite (``./dev test``, CI) runs every test with its full budget.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

FAST = bool(os.environ.get("TURNIP_FDM_FAST"))
FAST_DIVISOR = 8


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not FAST:
        return
    for item in items:
        fn = getattr(item, "obj", None)
        current = getattr(fn, "_hypothesis_internal_use_settings", None)
        if current is not None:
            fn._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                current, max_examples=max(5, current.max_examples // FAST_DIVISOR))


#: the benchmark scripts (not a package: each is run as a file)
BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load_bench_module(name: str) -> ModuleType:
    """``bench/NAME.py`` loaded from its file, with ``bench/`` on ``sys.path`` while it loads
    (the scripts import each other as siblings)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="session")
def load_bench() -> Callable[[str], ModuleType]:
    """:func:`_load_bench_module`: ``load_bench("mipmap_bench")`` is bench/mipmap_bench.py."""
    return _load_bench_module
