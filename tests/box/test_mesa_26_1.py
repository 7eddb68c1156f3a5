"""Mesa 26.1.6 (``--mesa 26.1``) against the model's 26.1 reading (fdm.variants.MESA_READINGS):
the two Mesa 26.2.2 fixes it lacks (docs/box.md, "The paths real bugs were in") agree once the
reading's variants model them, and the 26.2 reading differs there in the fixed field - so the
reading, not a laxer comparison, is what makes them agree."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import fdm
from turnip_box.check import AGREE, DIFFER, Outcome, check, items_of
from turnip_box.compare import first_cause
from turnip_box.root import Box

ROOT = Path(__file__).resolve().parents[2]
#: scenario -> (its GPUs, the field the 26.2 reading's first difference carries on 26.1.6)
FIXES = {
    "examples/static_viewport.toml": (["a618"], "viewport"),
    "examples/static_viewport_shared.toml": (["a730"], "viewport"),
    "examples/gmem_clear_offset.toml": (["a618", "a730"], "gmem_clears"),
}
pytestmark = pytest.mark.box


@pytest.fixture(scope="module")
def box(open_box: Callable[..., Box]) -> Iterator[Box]:
    yield open_box("26.1")


def _run(box: Box, scenario: str, mesa: str) -> list[Outcome]:
    sc = fdm.load_scenario(str(ROOT / scenario))
    return check(box, items_of([(Path(scenario).stem, sc)], FIXES[scenario][0], mesa=mesa), jobs=1)


@pytest.mark.parametrize("scenario", sorted(FIXES))
def test_the_26_1_reading_agrees(box: Box, scenario: str) -> None:
    out = _run(box, scenario, "26.1")
    assert [o.status for o in out] == [AGREE] * len(out), [o.line() for o in out]
    assert all(o.compared > 50 for o in out)


@pytest.mark.parametrize("scenario", sorted(FIXES))
def test_the_26_2_reading_differs_where_the_fix_is(box: Box, scenario: str) -> None:
    out = _run(box, scenario, "26.2")
    assert [o.status for o in out] == [DIFFER] * len(out), [o.line() for o in out]
    for o in out:
        assert first_cause(o.differences).field == FIXES[scenario][1], o.line()
