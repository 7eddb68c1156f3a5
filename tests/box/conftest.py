"""The box the box tests run on: the built root (``turnip-fdm box setup``), or a skip naming the
command that builds it - a failure under CI, which builds the box before the tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from turnip_base.errors import NotSupported
from turnip_box.root import Box, find_box

#: ``open_box(mesa, driver)``: the built box, or the test skips (fails under CI)
BoxOpener = Callable[..., Box]


def _open_box(mesa: str = "26.2", driver: str | None = None) -> Box:
    try:
        return find_box(mesa, driver)
    except NotSupported as e:
        if os.environ.get("CI"):
            pytest.fail(f"CI builds the box before the tests: {e}")
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def open_box() -> BoxOpener:
    return _open_box


@pytest.fixture(scope="module")
def box(open_box: BoxOpener) -> Iterator[Box]:
    yield open_box()
