"""The error contract of the driver-level functions: a driver ``assert`` or C undefined
behaviour raises :class:`turnip_base.errors.DriverAssertion` naming the driver function or macro; a bad
argument or option raises :class:`turnip_base.errors.ScenarioError`."""

from __future__ import annotations

import numpy as np
import pytest

from fdm import derivations
from fdm.cmath import div_round_up, f32_to_i32, f32_to_u32, logbase2
from fdm.patch import blit_rects
from fdm.tiles import TileConfig, try_merge_tiles
from fdm.turnip import euclid_rem, hw_bin_offset, tu_calc_frag_area, tu_fdm_per_bin_offset
from turnip_base.errors import DriverAssertion, ScenarioError


def _field(exc: pytest.ExceptionInfo[DriverAssertion]) -> str:
    return exc.value.field


def test_driver_assertions_name_the_driver_function():
    with pytest.raises(DriverAssertion) as e:
        euclid_rem(5, 0)
    assert _field(e) == "euclid_rem"
    with pytest.raises(DriverAssertion) as e:
        tu_fdm_per_bin_offset((2, 2), (3, 0), (0, 0))
    assert _field(e) == "tu_fdm_per_bin_offset" and "bin.offset % frag_area == 0" in e.value.rule
    with pytest.raises(DriverAssertion) as e:
        hw_bin_offset((192, 160), (3, 1))
    assert _field(e) == "tu6_emit_tile_select"
    with pytest.raises(DriverAssertion) as e:
        blit_rects([(2, 2)], [(0, 0, 5, 4)], (0, 0), [(0, 0)])
    assert _field(e) == "fdm_apply_load_coords"
    with pytest.raises(DriverAssertion) as e:
        derivations.per_bin_offset(0, 3, 2)
    assert _field(e) == "tu_fdm_per_bin_offset"


def test_c_macros_and_undefined_casts():
    with pytest.raises(DriverAssertion) as e:
        div_round_up(-1, 4)
    assert _field(e) == "DIV_ROUND_UP"
    with pytest.raises(DriverAssertion) as e:
        div_round_up(1, 0)
    assert _field(e) == "DIV_ROUND_UP"
    with pytest.raises(DriverAssertion) as e:
        logbase2(-1)
    assert _field(e) == "util_logbase2"
    with pytest.raises(DriverAssertion, match="undefined behaviour"):
        f32_to_u32(np.float32(-1.0))
    with pytest.raises(DriverAssertion, match="undefined behaviour"):
        f32_to_i32(np.float32(3e9))
    # a huge but finite area (density 1e-30 on one axis) makes tu_calc_frag_area's cast overflow
    with pytest.raises(DriverAssertion) as e:
        tu_calc_frag_area((np.float32(1e30), np.float32(1.0)), (96, 32), has_fdm_offsets=False, num_views=1)
    assert _field(e) == "tu_calc_frag_area"


def test_bad_arguments_are_scenario_errors():
    with pytest.raises(ScenarioError) as e:
        hw_bin_offset((-8, 0), (1, 1))
    assert e.value.field == "common_bin_start"
    a = TileConfig(cell=(1, 0), pos=(1, 0), visible_views=1, frag_areas=((2, 2),))
    b = TileConfig(cell=(0, 0), pos=(0, 0), visible_views=1, frag_areas=((2, 2),))
    with pytest.raises(ScenarioError, match="upstream, fixed"):
        try_merge_tiles(a, b, views=1, has_abs_bin_mask=True, shared_viewport=False, variant="bogus")
    assert try_merge_tiles(a, b, views=1, has_abs_bin_mask=True, shared_viewport=False, variant="fixed") is not None
