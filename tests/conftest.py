"""Suite-wide settings.

``TURNIP_FDM_FAST=1`` (set by ``./dev test-fast``) divides every Hypothesis test's
``max_examples`` by 8 (at least 5 examples each): the edit-run loop, not a proof.  The whole
suite (``./dev test``, CI) runs every test with its full budget.
"""

from __future__ import annotations

import os

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
