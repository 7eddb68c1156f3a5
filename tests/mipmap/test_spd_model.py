"""The single-pass downsampler model: hand-off, documented odd-size rule, 4096 limit."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipmap.formats import FORMATS, random_level0
from mipmap.plan import spd_plan
from mipmap.reference import stored_chain
from mipmap.spd_model import spd_chain, spd_reference
from mipmap.tiled_model import Device
from turnip_base.errors import ScenarioError

DEVICES = st.sampled_from([Device(8, True), Device(32, True), Device(32, False)])
SIDE = st.one_of(st.integers(1, 70), st.sampled_from([64, 100, 128, 200, 256, 300]))


def bits(a):
    return a if a.dtype == np.uint8 else a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


@settings(max_examples=50, deadline=None)
@given(SIDE, SIDE, st.sampled_from(sorted(FORMATS)), DEVICES, st.data())
def test_spd_model_matches_its_rule_for_any_arrival_order(w, h, fmt_name, device, data):
    fmt = FORMATS[fmt_name]
    level0 = random_level0(w, h, fmt, w * 1000 + h)
    plan = spd_plan(w, h)
    order = data.draw(st.permutations(range(plan.workgroups)))
    got, tr, last = spd_chain(level0, fmt, device, arrival=order, trace=True)
    for g, r in zip(got, spd_reference(level0, fmt), strict=True):
        assert np.array_equal(bits(g), bits(r))
    if plan.mips:
        assert last == order[-1]  # the workgroup that arrives last runs the tail
    if plan.tail_levels:
        for level in range(7, plan.mips + 1):
            assert set(np.unique(tr.writer[level]) // 256) == {last}
    for level in range(1, plan.mips + 1):
        assert tr.writes[level].min() == 1 and tr.writes[level].max() == 1


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 64, 128, 256]), st.sampled_from([1, 2, 16, 32, 64, 256]), st.integers(0, 99))
def test_spd_equals_the_box_filter_on_powers_of_two(w, h, seed):
    fmt = FORMATS["r32f"]
    level0 = random_level0(w, h, fmt, seed)
    got, _, _ = spd_chain(level0, fmt)
    for g, r in zip(got, stored_chain(level0, fmt), strict=True):
        assert np.array_equal(bits(g), bits(r))


def test_spd_drops_the_odd_last_row_and_column():
    fmt = FORMATS["r32f"]
    level0 = random_level0(7, 4, fmt, 3)
    a, _, _ = spd_chain(level0, fmt)
    changed = level0.copy()
    changed[:, 6] = 0.5  # the last column of the 7x4 level
    b, _, _ = spd_chain(changed, fmt)
    assert a[1].shape[:2] == (2, 3)
    assert np.array_equal(a[1], b[1])  # 3x2 made from the 6x4 sub-region only
    box = stored_chain(level0, fmt)
    assert not np.array_equal(a[1], box[1])  # so it is not the box filter


@pytest.mark.parametrize("size", [(4097, 1), (1, 4097), (8192, 8192)])
def test_spd_refuses_more_than_4096(size):
    with pytest.raises(ScenarioError, match="at most 4096x4096"):
        spd_chain(np.zeros(size[::-1] + (1,), np.float32), FORMATS["r32f"])


@settings(max_examples=30, deadline=None)
@given(SIDE, SIDE, st.sampled_from(sorted(FORMATS)), DEVICES)
def test_spd_split_is_the_same_chain_with_the_tail_in_a_dispatch_of_its_own(w, h, fmt_name, device):
    """``spd-split``: SPD's main pass, then levels 7.. by the one workgroup of a second dispatch
    (no counter): the same values as the single pass, each texel written once."""
    fmt = FORMATS[fmt_name]
    level0 = random_level0(w, h, fmt, w * 7 + h)
    plan = spd_plan(w, h)
    got, tr, last = spd_chain(level0, fmt, device, trace=True, split=True)
    for g, r in zip(got, spd_reference(level0, fmt), strict=True):
        assert np.array_equal(bits(g), bits(r))
    assert last == -1
    for level in range(7, plan.mips + 1):
        assert set(np.unique(tr.writer[level])) <= set(range(256))  # workgroup 0 of the second dispatch
    for level in range(1, plan.mips + 1):
        assert tr.writes[level].min() == 1 and tr.writes[level].max() == 1
