"""Dispatch plans of the tiled generator (nvpro's rule) and of the single-pass downsampler.

Tiled rule, per dispatch, with the current input level of size (w, h) and r levels left:

* both w and h divisible by 4: the *fast* kernel; M = how often both halve evenly, capped at
  min(6, r); 256-invocation workgroups, ``ceil(w*h/4096)`` of them for M = 6 (each
  invocation reads 4x4 texels) and ``ceil(w*h/1024)`` otherwise (2x2 texels each), except
  M = 1: a 16 x 16 block of level-L+1 texels per workgroup, ``ceil(w/32) * ceil(h/32)`` of
  them (this project's change: the access pattern of bench/mipmap_sol.py's down1);
* otherwise the *general* kernel with M = min(2, r): M = 1 runs one invocation per output
  texel in 128-invocation workgroups; M = 2 runs one 128-invocation workgroup per 8x8 tile
  of level L+2 (overlapping input tiles, see tiled_model).

Then w = max(1, w >> M), h = max(1, h >> M). A one-level image needs no dispatch.

Last-workgroup continuation (``tail=True``; this project's addition to nvpro's rule, in the
manner of SPD's hand-off): when the level after a dispatch's last output has at most
``TAIL_MAX_TEXELS`` texels, the workgroup that finishes that dispatch last makes all the
remaining levels itself, one level at a time, and the plan ends there: 4096² takes one
dispatch instead of two, 4095² three instead of six and 1920x1080 two instead of five.
Measured on the H100 it is slower than the dispatches it replaces (run of 6922ff8 with
``--tail``: 4096² r32f 64.5 against 41.7 µs, 4095² 133.1 against 102.4, 1920x1080 37.9
against 28.7: one workgroup walking six small levels with coherent loads and a barrier per
level costs more than a barrier and a launch per level pair), so the default plan is
nvpro's; the single-pass downsampler is the one-dispatch path.  Nor does it pay where the
dispatch is small (``tail_groups``: only dispatches of at most that many workgroups hand off):
run of 2026-11-27 (bench/results/h100.experiments.md, fifth round), tail_groups 4 / 64 against
none, 8192² r32f 133.9 / 133.6 against 133.1 µs, 4095² r32f 106.8 / 133.1 against 102.1,
1920x1080 r32f 31.7 / 37.6 against 29.4: even in a 4-workgroup dispatch the hand-off costs
more than the launch it saves.
"""
from __future__ import annotations

from typing import Literal, get_args

import attrs

from turnip_base.errors import ScenarioError

from .reference import level_sizes

#: the generators a device can run (the ``--algorithm`` option): the tiled plan, the
#: single-pass downsampler, SPD's rule in two dispatches, or a vkCmdBlitImage chain.
#: ``spd-split``: levels 1-6 as SPD's main pass, the rest (from level 6) by one workgroup of a
#: second dispatch instead of the hand-off to the last workgroup: no workgroup waits for a fence
#: and an atomic (the hand-off cost the single pass 8 µs at 4096² on the H100, where the two
#: dispatches of the tiled plan cost one launch, bench/results/h100.breakdown.md)
Algorithm = Literal["tiled", "spd", "spd-split", "blit"]
ALGORITHMS: tuple[Algorithm, ...] = get_args(Algorithm)
#: the algorithms with SPD's rule (the drop-odd reduction, :func:`mipmap.spd_model.spd_reference`)
SPD_RULE: tuple[Algorithm, ...] = ("spd", "spd-split")
#: the kernels of the tiled plan
Kernel = Literal["fast", "general"]

FAST_LOCAL = 256
GENERAL_LOCAL = 128
GENERAL_TILE = 8  # L+2 tile edge of the general M = 2 kernel
SPD_TILE = 64
SPD_LOCAL = 256
SPD_MAX_SIZE = 4096
TAIL_MAX_TEXELS = 1024  # the last workgroup continues when the next level has at most this many
MAX_GROUPS_X = 32768


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def split_groups(n: int) -> tuple[int, int]:
    """A 2D grid of at least n workgroups (the shaders flatten it: y * width + x)."""
    x = min(n, MAX_GROUPS_X)
    return x, _ceil_div(n, x)


@attrs.frozen
class Dispatch:
    kernel: Kernel
    input_level: int
    width: int  # size of the input level
    height: int
    levels: int  # M, levels written by the main pass of this dispatch
    workgroups: int
    local_size: int
    tail_levels: int = 0  # levels the last workgroup writes after the main pass

    @property
    def invocations(self) -> int:
        return self.workgroups * self.local_size

    @property
    def grid(self) -> tuple[int, int]:
        return split_groups(self.workgroups)

    @property
    def total_levels(self) -> int:
        return self.levels + self.tail_levels


def fast_levels(width: int, height: int, remaining: int) -> int:
    m = 0
    while m < min(6, remaining) and width % (2 << m) == 0 and height % (2 << m) == 0:
        m += 1
    return m


def spd_handoff(d: Dispatch) -> bool:
    """Whether :meth:`mipmap.gpu.MipmapRunner.record_tiled` runs dispatch ``d`` with the single-pass
    kernel: a fast M = 6 dispatch of whole 64 x 64 tiles whose last workgroup makes the
    remaining levels, at most six from a level of at most 64 x 64 (one tile) whose sides are powers
    of two. The single pass's
    64 x 64 pass is the fast kernel's (tile.glsl), and on even sizes SPD's rule is the box, so
    the values are the plan's; its hand-off fences in one invocation (arriveLast(true)) and its
    continuation is the 64 x 64 pass, where the fast kernel's is tailChain, a barrier per level."""
    if d.kernel != "fast" or d.levels != 6 or not d.tail_levels or d.tail_levels > 6:
        return False
    if d.width % 64 or d.height % 64:
        return False
    tw, th = d.width >> 6, d.height >> 6
    # one tile of at most 64 x 64 for the last workgroup, and sizes that halve evenly down to 1
    # (SPD's rule drops an odd texel where nvpro's filters three: they agree on even sizes only)
    return tw <= 64 and th <= 64 and tw & (tw - 1) == 0 and th & (th - 1) == 0


#: the default plan's hand-off: a fast M = 6 dispatch of at most this many workgroups hands the
#: remaining levels to its last workgroup where :func:`spd_handoff` holds (the single pass's
#: kernel does it). H100, same call, two runs (h100.experiments.md, fifth round): 8192² r32f
#: 133.4 -> 132.1 µs (94% -> 95% of the floor), RGBA8 134.7 -> 133.6, sRGBA8 187.4 -> 185.6,
#: RGBA16F 250.9 -> 250.4; in the fast kernel (tailChain) the same hand-off was slower
HANDOFF_GROUPS = 4


def tiled_plan(width: int, height: int, tail: bool = False, split: bool = False,
               tail_groups: int | None = None) -> list[Dispatch]:
    """The dispatches that generate levels 1.. of a width x height image: nvpro's plan, or with
    ``tail=True`` cut short by the last-workgroup continuation (slower on the H100, see the
    module docstring).  ``tail_groups``: the continuation only where the dispatch has at most
    that many workgroups (its hand-off then costs a few atomics, not thousands of fences);
    None (the default): only where :data:`HANDOFF_GROUPS` and :func:`spd_handoff` allow it.
    ``split=True``: where nvpro's first dispatch is the fast kernel with
    M > 1, a fast M = 1 dispatch writes level 1 alone first (one 2x2 quad per invocation: the
    pass that carries most of the traffic, in the access pattern that reached 89-98% of the
    copy bandwidth at 8192² in bench/results/h100.sol.md), then nvpro's rule from level 1."""
    sizes = level_sizes(width, height)
    plan: list[Dispatch] = []
    level, w, h = 0, width, height
    while level < len(sizes) - 1:
        remaining = len(sizes) - 1 - level
        if w % 4 == 0 and h % 4 == 0:
            m = fast_levels(w, h, remaining)
            if split and level == 0:
                m = 1
            if m == 1:   # 16 x 16 level-L+1 texels per workgroup
                groups = _ceil_div(w // 2, 16) * _ceil_div(h // 2, 16)
            else:
                groups = _ceil_div(w * h, 4096 if m == 6 else 1024)
            kernel: Kernel = "fast"
            local = FAST_LOCAL
        else:
            m = min(2, remaining)
            dw, dh = sizes[level + m]
            if m == 1:
                groups = _ceil_div(dw * dh, GENERAL_LOCAL)
            else:
                groups = _ceil_div(dw, GENERAL_TILE) * _ceil_div(dh, GENERAL_TILE)
            kernel, local = "general", GENERAL_LOCAL
        rest = 0
        small = groups <= (HANDOFF_GROUPS if tail_groups is None else tail_groups)
        if (tail or small) and level + m < len(sizes) - 1:
            nw, nh = sizes[level + m + 1]
            if nw * nh <= TAIL_MAX_TEXELS:
                rest = len(sizes) - 1 - level - m
        d = Dispatch(kernel, level, w, h, m, groups, local, rest)
        if rest and not tail and tail_groups is None and not spd_handoff(d):
            d = attrs.evolve(d, tail_levels=0)   # the default hands off only in the single pass's kernel
        plan.append(d)
        level += d.total_levels
        w, h = sizes[level]
    return plan


@attrs.frozen
class SpdPlan:
    width: int
    height: int
    mips: int  # levels written, 1..12
    groups_x: int
    groups_y: int

    @property
    def workgroups(self) -> int:
        return self.groups_x * self.groups_y

    @property
    def main_levels(self) -> int:
        """Levels every workgroup writes from its 64x64 tile (1..6)."""
        return min(6, self.mips)

    @property
    def tail_levels(self) -> int:
        """Levels 7.. that the last workgroup writes from level 6 (0..6)."""
        return self.mips - self.main_levels


def spd_plan(width: int, height: int) -> SpdPlan:
    """One dispatch of ceil(w/64) x ceil(h/64) workgroups; at most 4096 x 4096."""
    if width > SPD_MAX_SIZE or height > SPD_MAX_SIZE:
        raise ScenarioError(
            "size", f"the single-pass downsampler takes at most {SPD_MAX_SIZE}x{SPD_MAX_SIZE}, got {width}x{height}")
    mips = len(level_sizes(width, height)) - 1
    return SpdPlan(width, height, mips, _ceil_div(width, SPD_TILE), _ceil_div(height, SPD_TILE))
