"""Dispatch plans."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mipmap.plan import HANDOFF_GROUPS, TAIL_MAX_TEXELS, spd_handoff, spd_plan, tiled_plan
from mipmap.reference import level_sizes
from turnip_base.errors import ScenarioError


@settings(deadline=None)
@given(st.integers(1, 20000), st.integers(1, 20000), st.booleans(), st.booleans())
def test_tiled_plan_makes_every_level_once(w, h, tail, split):
    plan = tiled_plan(w, h, tail=tail, split=split)
    sizes = level_sizes(w, h)
    nvpro = tiled_plan(w, h, tail=tail)
    if split and nvpro and nvpro[0].kernel == "fast":
        # level 1 alone first, then nvpro's rule from level 1
        assert plan[0].kernel == "fast" and plan[0].levels == 1 and plan[0].input_level == 0
        if not tail:   # (with the continuation, the first dispatch may already hand off the rest)
            rest = tiled_plan(*sizes[1]) if len(sizes) > 2 else []
            assert [(d.kernel, d.levels) for d in plan[1:]] == [(d.kernel, d.levels) for d in rest]
    elif split:
        assert plan == nvpro
    level = 0
    for d in plan:
        assert d.input_level == level and (d.width, d.height) == sizes[level]
        if d.kernel == "fast":
            assert 1 <= d.levels <= 6 and w >= 1
            assert d.width % (1 << d.levels) == 0 and d.height % (1 << d.levels) == 0
            assert d.workgroups * 256 * (16 if d.levels == 6 else 4) >= d.width * d.height
        else:
            assert d.levels in (1, 2)
        level += d.levels
        if d.tail_levels:
            # the continuation starts only on a small level and finishes the chain
            nw, nh = sizes[level + 1]
            assert nw * nh <= TAIL_MAX_TEXELS and d is plan[-1]
            level += d.tail_levels
    assert level == len(sizes) - 1
    if not tail:
        # the default plan hands off only in a small dispatch the single pass's kernel can finish
        assert all(spd_handoff(d) and d.workgroups <= HANDOFF_GROUPS for d in plan if d.tail_levels)
        assert not any(d.tail_levels for d in tiled_plan(w, h, split=split, tail_groups=0))
        return
    # a plan never stops short of a level it could have continued from
    for d in plan[:-1]:
        nw, nh = sizes[d.input_level + d.levels + 1]
        assert nw * nh > TAIL_MAX_TEXELS


# nvpro's rule applied to the sizes of docs/spec/compute-mipmap.md §1.2 (the default plan)
@pytest.mark.parametrize("size,want", [
    ((4096, 4096), [("fast", 0, 6, 4096), ("fast", 6, 6, 1)]),
    ((8192, 8192), [("fast", 0, 6, 16384), ("fast", 6, 6, 4), ("general", 12, 1, 1)]),
    ((192, 64), [("fast", 0, 6, 3), ("general", 6, 1, 1)]),
    ((2048, 2048), [("fast", 0, 6, 1024), ("fast", 6, 5, 1)]),
    ((1920, 1080), [("fast", 0, 3, 2025), ("general", 3, 2, None), ("general", 5, 2, None),
                    ("general", 7, 2, None), ("general", 9, 1, None)]),
    ((4095, 4095), [("general", 0, 2, None)] * 5 + [("general", 10, 1, None)]),
    ((2052, 2052), [("fast", 0, 2, None), ("general", 2, 2, None), ("fast", 4, 6, None), ("general", 10, 1, None)]),
])
def test_known_plans(size, want):
    plan = tiled_plan(*size, tail_groups=0)   # nvpro's rule alone
    assert len(plan) == len(want)
    for d, (kernel, level, m, groups) in zip(plan, want, strict=True):
        assert d.kernel == kernel and d.levels == m and d.tail_levels == 0
        if kernel == "fast" or level:
            assert d.input_level == level
        if groups is not None:
            assert d.workgroups == groups


# the same cut short by the last-workgroup continuation (tail: the levels the last workgroup makes)
@pytest.mark.parametrize("size,want", [
    ((4096, 4096), [("fast", 0, 6, 4096, 6)]),
    ((8192, 8192), [("fast", 0, 6, 16384, 0), ("fast", 6, 6, 4, 1)]),
    ((2048, 2048), [("fast", 0, 6, 1024, 5)]),
    ((1920, 1080), [("fast", 0, 3, 2025, 0), ("general", 3, 2, 40, 5)]),
    ((4095, 4095), [("general", 0, 2, None, 0), ("general", 2, 2, None, 0), ("general", 4, 2, 64, 5)]),
    ((2052, 2052), [("fast", 0, 2, None, 0), ("general", 2, 2, None, 0), ("fast", 4, 6, None, 1)]),
])
def test_known_plans_with_the_continuation(size, want):
    plan = tiled_plan(*size, tail=True)
    assert len(plan) == len(want)
    for d, (kernel, level, m, groups, tail) in zip(plan, want, strict=True):
        assert d.kernel == kernel and d.levels == m and d.tail_levels == tail
        assert d.input_level == level
        if groups is not None:
            assert d.workgroups == groups

@settings(deadline=None)
@given(st.integers(1, 20000), st.integers(1, 20000), st.sampled_from([1, 4, 64, 1024]))
def test_continuation_on_small_dispatches_only(w, h, tail_groups):
    """tail_groups=N: nvpro's plan up to the first dispatch of at most N workgroups after which
    the next level is small; that dispatch's last workgroup makes every remaining level."""
    plan = tiled_plan(w, h, tail_groups=tail_groups)
    nvpro = tiled_plan(w, h, tail_groups=0)
    sizes = level_sizes(w, h)
    assert [(d.kernel, d.input_level, d.levels, d.workgroups) for d in plan] == \
        [(d.kernel, d.input_level, d.levels, d.workgroups) for d in nvpro[:len(plan)]]
    for d in plan[:-1]:
        assert d.tail_levels == 0
        nw, nh = sizes[d.input_level + d.levels + 1] if d.input_level + d.levels + 1 < len(sizes) else (0, 0)
        assert d.workgroups > tail_groups or nw * nh > TAIL_MAX_TEXELS
    if plan and plan[-1].tail_levels:
        last = plan[-1]
        nw, nh = sizes[last.input_level + last.levels + 1]
        assert last.workgroups <= tail_groups and nw * nh <= TAIL_MAX_TEXELS
        assert last.input_level + last.total_levels == len(sizes) - 1
    elif plan:
        assert plan == nvpro


# the default plan: nvpro's, but a fast M = 6 dispatch of at most HANDOFF_GROUPS whole tiles whose
# next level halves evenly to 1 x 1 hands the rest to its last workgroup (the single pass's kernel)
@pytest.mark.parametrize("size,want", [
    ((8192, 8192), [(6, 16384, 0), (6, 4, 1)]),
    ((8192, 4096), [(6, 8192, 0), (6, 2, 1)]),
    ((128, 128), [(6, 4, 1)]),
    ((4096, 4096), [(6, 4096, 0), (6, 1, 0)]),          # nothing left after level 12
    ((16384, 16384), [(6, 65536, 0), (6, 16, 0), (2, 1, 0)]),   # 16 workgroups: too many
    ((192, 64), [(6, 3, 0), (1, 1, 0)]),                # level 6 is 3 x 1: odd, no hand-off
])
def test_default_plan_hands_off_where_the_single_pass_can(size, want):
    plan = tiled_plan(*size)
    assert [(d.levels, d.workgroups, d.tail_levels) for d in plan] == want
    assert [spd_handoff(d) for d in plan] == [bool(t) for _, _, t in want]


def test_known_plans_with_the_continuation_on_small_dispatches():
    # 8192²: the 4-workgroup dispatch of levels 7-12 makes level 13 (bench/results/h100.experiments.md)
    assert [(d.levels, d.workgroups, d.tail_levels) for d in tiled_plan(8192, 8192, tail_groups=4)] == \
        [(6, 16384, 0), (6, 4, 1)]
    assert [(d.levels, d.tail_levels) for d in tiled_plan(1920, 1080, tail_groups=4)] == [(3, 0), (2, 0), (2, 3)]
    assert tiled_plan(4096, 4096, tail_groups=4) == tiled_plan(4096, 4096, tail_groups=0)


def test_one_texel_needs_no_dispatch():
    assert tiled_plan(1, 1) == []


def test_spd_plan_and_limit():
    p = spd_plan(4096, 4096)
    assert (p.groups_x, p.groups_y, p.mips, p.main_levels, p.tail_levels) == (64, 64, 12, 6, 6)
    assert spd_plan(7, 4).mips == 2
    with pytest.raises(ScenarioError, match="at most 4096x4096"):
        spd_plan(4097, 16)
