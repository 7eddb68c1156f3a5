"""``static_viewport``: parsed as a boolean, carried into the box's job as ``dynamic_viewport``."""

from __future__ import annotations

from typing import Any

import pytest

from fdm.scenario import make_scenario
from turnip_base.errors import ScenarioError
from turnip_box.jobs import job_of

DENSITY: dict[str, Any] = {"format": "R32G32_SFLOAT",
                           "views": [{"generator": "constant", "size": [2, 2], "density": 0.5}]}


def test_default_is_dynamic() -> None:
    sc = make_scenario(gpu="a750", framebuffer=[64, 64], density=DENSITY)
    assert sc.static_viewport is False
    assert job_of(sc, "x", "/tmp/x")["dynamic_viewport"] is True


def test_static_viewport_reaches_the_job() -> None:
    sc = make_scenario(gpu="a750", framebuffer=[64, 64], density=DENSITY, static_viewport=True)
    assert job_of(sc, "x", "/tmp/x")["dynamic_viewport"] is False


@pytest.mark.parametrize("bad", [1, "yes"])
def test_static_viewport_must_be_a_boolean(bad: Any) -> None:
    with pytest.raises(ScenarioError, match="static_viewport: must be true or false"):
        make_scenario(gpu="a750", framebuffer=[64, 64], density=DENSITY, static_viewport=bad)
