"""The host-only oracles A1-A3 (vk_tests/oracles.py, docs/host-oracles.md): no Vulkan device.

Each oracle passes on the model, and each can fail: a planted bug in the model function it
checks (monkeypatched on its module) must show up as mismatches.  The A2 runs are the
exhaustive 65,536-pair sweep (about 4 s each) and are marked ``slow``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fdm import tiles as fdm_tiles
from fdm import turnip
from fdm.cmath import logbase2_ceil
from vk_tests import spec
from vk_tests.host import oracles
from vk_tests.host.oracles import ORACLES, OracleResult, run_oracle


def _assert_passes(r: OracleResult, name: str) -> None:
    assert r.name == name
    assert r.passed, str(r)
    assert r.mismatch_count == 0 and r.mismatches == ()
    assert r.cases > 0


# ---------------------------------------------------------------- the spec side on its own


def test_spec_texel_size_matches_the_worked_table() -> None:
    """docs/spec/vulkan-fdm-and-cts.md §1.2, the worked texel sizes (v3 / ceil / with tu's clamp)."""
    rows = [(64, 4, 4, 32, 32), (60, 4, 4, 32, 32), (33, 2, 4, 32, 32), (1025, 64, 128, 64, 128), (31, 1, 2, 32, 32)]
    for fb, v3, ceil, v3_tu, ceil_tu in rows:
        assert spec.texel_size_axis(fb, 16, 1, None) == v3
        assert spec.texel_size_pre_v3(fb, 16, 1, None) == ceil
        assert spec.texel_size_axis(fb, 16, 32, 1024) == v3_tu
        assert spec.texel_size_pre_v3(fb, 16, 32, 1024) == ceil_tu
    # floor(31/64) = 0: log2 0 is undefined; the limit T' -> 0 is the lower clamp
    assert spec.texel_size_undefined(31, 64) and not spec.texel_size_undefined(64, 64)
    assert spec.texel_size_axis(31, 64, 1, None) == 1 and spec.texel_size_axis(31, 64, 32, 1024) == 32


def test_one_texel_size_for_oracles_and_judges() -> None:
    """The host oracle's axis formula and the fdm judge's pair formula are one: they agree on
    every small framebuffer, a map larger than the framebuffer included."""
    for fb in range(1, 70):
        for fdm_size in (1, 3, 16, 64, 100):
            for lo, hi in ((1, 1 << 20), (32, 1024), (4, 8)):
                axis = spec.texel_size_axis(fb, fdm_size, lo, hi)
                assert spec.spec_texel_size((fb, fb), (fdm_size, fdm_size), (lo, lo), (hi, hi)) == (axis, axis)


def test_spec_area_rule_on_the_unorm_table() -> None:
    """§1.3: 127 allows 2 but 128 does not; (1,4) may become (2,2); 255/255 allows only (1,1)."""
    assert oracles.spec_area_ok(2, 1, 127, 255)
    assert not oracles.spec_area_ok(2, 1, 128, 255)
    assert oracles.spec_area_ok(2, 2, 255, 63)       # fetched (1, 4.05): the product rule
    assert oracles.spec_area_ok(4, 4, 63, 63)
    assert not oracles.spec_area_ok(2, 2, 128, 128)  # 1.992^2 < 4
    assert oracles.spec_area_ok(1, 1, 255, 255) and not oracles.spec_area_ok(1, 2, 255, 255)
    assert not oracles.spec_area_ok(0, 1, 200, 200)
    assert Fraction(255, 63) * Fraction(255, 63) >= 16


def test_spec_texel_and_layer_rules() -> None:
    # clamp to the edge on both sides, floor for negative positions
    assert oracles.spec_texel(0, 8, 32, 10) == 0
    assert oracles.spec_texel(39, 8, 32, 10) == 0 and oracles.spec_texel(40, 8, 32, 10) == 1
    assert oracles.spec_texel(5000, 0, 32, 10) == 9
    assert oracles.spec_texel(0, -64, 32, 10) == 2
    kw = {"base": 3}
    assert oracles.spec_layer(1, multiview=True, fdm_layer_count=2, per_layer=False, **kw) == 4
    assert oracles.spec_layer(1, multiview=True, fdm_layer_count=1, per_layer=False, **kw) == 3
    assert oracles.spec_layer(2, multiview=False, fdm_layer_count=3, per_layer=True, **kw) == 5
    assert oracles.spec_layer(2, multiview=False, fdm_layer_count=1, per_layer=False, **kw) == 3


def test_unknown_oracle_is_refused() -> None:
    assert ORACLES == ("oracle.texel_size", "oracle.area_chooser", "oracle.fetch_coords")
    with pytest.raises(ValueError, match="unknown oracle"):
        run_oracle("oracle.nope")


def test_driver_texel_limits_restores_the_constants() -> None:
    before = (turnip.MIN_FDM_TEXEL_SIZE_LOG2, turnip.MAX_FDM_TEXEL_SIZE_LOG2)
    with oracles.driver_texel_limits(1, None):
        assert turnip.fdm_texel_shift(33, 16) == 1  # the unclamped v3 value, 2
    assert (turnip.MIN_FDM_TEXEL_SIZE_LOG2, turnip.MAX_FDM_TEXEL_SIZE_LOG2) == before == (5, 10)


# ---------------------------------------------------------------- A1 oracle.texel_size


def test_texel_size_passes() -> None:
    r = run_oracle("oracle.texel_size")
    _assert_passes(r, "oracle.texel_size")
    assert r.cases == 7 * 2 * 2 * 3 * 2
    # the modelled turnip follows revision 3: nothing is explained by the pre-v3 formula
    assert r.documented_differences == ()


def test_texel_size_catches_an_off_by_one_shift(monkeypatch: pytest.MonkeyPatch) -> None:
    orig = turnip.fdm_texel_shift
    monkeypatch.setattr(turnip, "fdm_texel_shift", lambda fb, fdm: orig(fb, fdm) + 1)
    r = run_oracle("oracle.texel_size")
    assert not r.passed
    # every texel size doubles: a mismatch, except where doubling happens to give the pre-v3
    # value (33/16 unclamped: v3 2, pre-v3 4), which is reported as that documented difference
    documented = sum(d.count for d in r.documented_differences)
    assert r.mismatch_count + documented == r.cases and r.mismatch_count > documented
    assert r.mismatches


def test_texel_size_marks_the_pre_v3_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    """tu-old's DIV_ROUND_UP reading is reported as a documented (pre-v3) difference, not a mismatch."""
    def tu_old(fb: int, fdm: int) -> int:
        return min(max(logbase2_ceil(-(-fb // fdm)), turnip.MIN_FDM_TEXEL_SIZE_LOG2), turnip.MAX_FDM_TEXEL_SIZE_LOG2)

    monkeypatch.setattr(turnip, "fdm_texel_shift", tu_old)
    r = run_oracle("oracle.texel_size")
    assert r.passed, str(r)
    (d,) = r.documented_differences
    assert d.reason == oracles.PRE_V3_REASON and d.count > 0
    for e in d.examples:  # the model gives the pre-v3 value, which differs from v3
        assert str(e.spec).endswith(f"(pre-v3 {e.model})") and not str(e.spec).startswith(f"v3 {e.model} ")


# ---------------------------------------------------------------- A2 oracle.area_chooser


@pytest.mark.slow
def test_area_chooser_passes() -> None:
    r = run_oracle("oracle.area_chooser")
    _assert_passes(r, "oracle.area_chooser")
    assert r.cases == 65536 * (1 + 2 + 2) * 3 * 2
    (d,) = r.documented_differences
    # 511 byte pairs have a zero byte; every view case with one is "bin skipped"
    assert d.reason == oracles.DENSITY0_REASON and d.count == 511 * (1 + 2 + 2) * 3 * 2


@pytest.mark.slow
def test_area_chooser_catches_rounding_up(monkeypatch: pytest.MonkeyPatch) -> None:
    orig = turnip.tu_calc_frag_area

    def round_up(raw: tuple[np.float32, np.float32], tile: tuple[int, int], *, has_fdm_offsets: bool,
                 num_views: int) -> tuple[int, int] | None:
        up = (np.float32(np.ceil(raw[0])), np.float32(np.ceil(raw[1])))
        return orig(up, tile, has_fdm_offsets=has_fdm_offsets, num_views=num_views)

    monkeypatch.setattr(turnip, "tu_calc_frag_area", round_up)
    r = run_oracle("oracle.area_chooser")
    assert not r.passed
    assert r.mismatch_count > 0 and r.mismatches
    m = r.mismatches[0]
    bx, by = dict(m.inputs)["bytes"]
    w, h = m.model
    assert not oracles.spec_area_ok(w, h, bx, by)


# ---------------------------------------------------------------- A3 oracle.fetch_coords


def test_fetch_coords_passes() -> None:
    r = run_oracle("oracle.fetch_coords")
    _assert_passes(r, "oracle.fetch_coords")
    # the only departure: edge bins sampled at their unclamped centre, and only with offsets
    (d,) = r.documented_differences
    assert d.reason == oracles.UNCLAMPED_CENTRE_REASON
    assert all(dict(e.inputs)["offset"] is not None for e in d.examples)


def test_fetch_coords_catches_a_sample_position_without_the_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    orig = turnip.fdm_sample_position
    monkeypatch.setattr(turnip, "fdm_sample_position",
                        lambda pos, tile, fb, fdm_offset, bin_offset: orig(pos, tile, fb, None, None))
    r = run_oracle("oracle.fetch_coords")
    assert not r.passed
    assert r.mismatch_count > 100
    assert all(dict(m.inputs)["offset"] not in (None, (0, 0)) for m in r.mismatches)


def test_fetch_coords_catches_a_wrong_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every view reading FDM layer 0: the multiview (layerCount > 1) and VALVE cases fail."""
    orig = fdm_tiles.stored_texel
    monkeypatch.setattr(fdm_tiles, "stored_texel", lambda dmap, view, texel: orig(dmap, 0, texel))
    r = run_oracle("oracle.fetch_coords")
    assert not r.passed
    configs = {dict(m.inputs)["config"] for m in r.mismatches}
    assert configs <= {"multiview, FDM layerCount = views", "VALVE per-layer"} and configs
