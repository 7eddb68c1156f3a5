"""The turnip FDM fixes of Mesa 26.2.2 that the box reaches (docs/box.md, "The paths real bugs
were in"): each shipped scenario agrees with the box's Mesa, and Mesa 26.2.0-rc1 built locally
(``/work/rc1/libvulkan_freedreno.so``, docs/box-driver.md; skipped where it is absent, as in CI)
differs on it in the field that carries the fix:

* "Do not bake static viewport/scissor when FDM is enabled": ``examples/static_viewport.toml``
  (a618: no per-view viewport) and ``examples/static_viewport_shared.toml`` (a730, shared
  viewport) - rc1 keeps the pipeline's viewport unpatched in every bin (``viewport``);
* "Fix GMEM clears with an FDM offset on the blit-event clear path":
  ``examples/gmem_clear_offset.toml`` (a730: no generic clear) - rc1 clears the unmapped render
  area in every bin (``gmem_clears``);
* "Ignore FDM offsets for subsampled images when shared viewport is active":
  ``examples/subsampled_shared_offsets.toml`` (a subsampled attachment, the shared viewport, FDM
  offsets; a730) - rc1 hands the subsampled layout solver the offsets the pass does not apply: the
  bins it solves store differently (``subsampled.fast_store``) and the metadata header carries the
  offsets (``subsampled.metadata.header``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import fdm
from turnip_box.check import AGREE, DIFFER, Outcome, check, items_of
from turnip_box.compare import first_cause
from turnip_box.root import Box

ROOT = Path(__file__).resolve().parents[2]
RC1 = Path(os.environ.get("TURNIP_FDM_RC1_DRIVER", "/work/rc1/libvulkan_freedreno.so"))
#: scenario -> (its GPUs, the field rc1's first difference carries)
FIXES = {
    "examples/static_viewport.toml": (["a618"], "viewport"),
    "examples/static_viewport_shared.toml": (["a730"], "viewport"),
    "examples/gmem_clear_offset.toml": (["a618", "a730"], "gmem_clears"),
    "examples/subsampled_shared_offsets.toml": (["a730"], "subsampled.fast_store"),
}
pytestmark = pytest.mark.box


@pytest.fixture(scope="module")
def rc1(open_box: Callable[..., Box]) -> Iterator[Box]:
    if not RC1.is_file():
        pytest.skip(f"no Mesa 26.2.0-rc1 build at {RC1} (docs/box-driver.md)")
    yield open_box("26.2", str(RC1))


def _run(box: Box, scenario: str) -> list[Outcome]:
    sc = fdm.load_scenario(str(ROOT / scenario))
    return check(box, items_of([(Path(scenario).stem, sc)], FIXES[scenario][0]), jobs=1)


@pytest.mark.parametrize("scenario", sorted(FIXES))
def test_shipped_scenario_agrees(box: Box, scenario: str) -> None:
    out = _run(box, scenario)
    assert [o.status for o in out] == [AGREE] * len(out), [o.line() for o in out]
    assert all(o.compared > 50 for o in out)


@pytest.mark.parametrize("scenario", sorted(FIXES))
def test_rc1_differs_where_the_fix_is(rc1: Box, scenario: str) -> None:
    field = FIXES[scenario][1]
    out = _run(rc1, scenario)
    assert [o.status for o in out] == [DIFFER] * len(out), [o.line() for o in out]
    for o in out:
        assert first_cause(o.differences).field == field, o.line()


def test_static_viewport_rc1_patches_nothing(rc1: Box) -> None:
    """rc1's baked viewport is the application's, unscaled, in every bin."""
    out = _run(rc1, "examples/static_viewport.toml")
    vps = {d.driver for d in out[0].differences if d.field == "viewport"}
    assert vps == {(512.0, 512.0, 512.0, 512.0)}


def test_gmem_clear_rc1_clears_the_render_area(rc1: Box) -> None:
    out = _run(rc1, "examples/gmem_clear_offset.toml")
    for o in out:
        got = {tuple(map(tuple, d.driver)) for d in o.differences if d.field == "gmem_clears"}
        assert got == {(((0, 0), (1023, 1023)),)}, o.line()


def test_subsampled_rc1_header_carries_the_offsets(rc1: Box) -> None:
    """rc1 writes the offset (96, -64) the shared viewport does not apply into the metadata header."""
    for o in _run(rc1, "examples/subsampled_shared_offsets.toml"):
        headers = [d for d in o.differences if d.field == "subsampled.metadata.header"]
        assert headers, o.line()
        for h in headers:  # (attachment, (texel scale x, y, offset x, y), bins)
            assert h.model[1][2:] == (0.0, 0.0) and h.driver[1][2:] != (0.0, 0.0), h.line()
