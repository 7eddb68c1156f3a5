"""Vulkan fixtures: one validated device per session; any validation message fails the test.

When the device cannot be opened the tests are skipped locally but FAIL when CI=true (the
CI must run them on lavapipe).
"""
import os

import pytest

from turnip_base.errors import NotSupported
from turnip_base.harness import open_device


def _unavailable(reason: str):
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"Vulkan device required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vk_ctx():
    try:
        ctx = open_device(validation=True)
    except NotSupported as e:
        _unavailable(str(e))
    yield ctx
    ctx.close()


@pytest.fixture()
def vk(vk_ctx):
    """The session device; the test fails if the validation layer reported anything during it."""
    start = len(vk_ctx.messages)
    yield vk_ctx
    new = vk_ctx.messages[start:]
    assert not new, f"{len(new)} validation message(s): {new[0]}"
