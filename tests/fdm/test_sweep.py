"""Exhaustive sweep of spec §10.1 items 1-6 and 14 (docs/spec/turnip-fdm-spec.md).

Domain: every tile size T = 16, 32, ..., 256 per axis (all 256 (Tw, Th) pairs), every user
offset u in [-2T, 2T) in steps of 8 per axis, every fragment area fa in {1,2,4}^2 (and
fa in {1,2,4,8}^2 for item 14, 8 being the offset-granularity clamp), and tile positions
p in {0..4}^2 (first row/column and interior tiles).  x and y are swept together: for each
(Tw, Th) the x offsets and the y offsets are each enumerated completely (paired in opposite
orders), so every per-axis case occurs.

The checks are the spec's statements in plain integer arithmetic:
 1. 0 <= b_o < T
 2. (u + b_o) mod T == 0; b_o(u) == b_o(u + k*T); b_o(0) == 0; b_o(-u) == (T - b_o(u)) mod T
 3. u, T multiples of 8 => b_o multiple of 8
 4. b_s/fa + tu_fdm_per_bin_offset(fa, b_s, b_cs) == b_cs
 5. no offset (b_o == 0): o == o' == b_cs - b_cs/fa, so o - o' == 0
 6. offsets, p >= 1 in an axis: o - o' == b_o/fa in that axis; p == 0: o == o' == 0 there
14. b_s = max(0, p*T - b_o) is a multiple of fa for every fa <= 8 (the driver's assertion)
with b_cs = p*T and o' = hw_bin_offset(b_cs, fa).
"""

from __future__ import annotations

import itertools
import time

import pytest

from fdm.turnip import hw_bin_offset, tu_bin_offset, tu_fdm_per_bin_offset

TS = tuple(range(16, 257, 16))
FAS = tuple(itertools.product((1, 2, 4), repeat=2))
FAS8 = tuple(itertools.product((1, 2, 4, 8), repeat=2))
POS = tuple(itertools.product(range(5), repeat=2))


def _offsets(T: int):
    return range(-2 * T, 2 * T, 8)


@pytest.mark.slow
def test_sweep_items_1_to_6_and_14():
    t0 = time.perf_counter()
    n_bo = n_fdm = n_14 = 0
    for Tw, Th in itertools.product(TS, TS):
        xs, ys = _offsets(Tw), _offsets(Th)
        L = max(len(xs), len(ys))
        for i in range(L):
            u = (xs[i % len(xs)], ys[(L - 1 - i) % len(ys)])
            T = (Tw, Th)
            # ---- items 1-3
            bo = tu_bin_offset(u, T)
            for a in (0, 1):
                assert 0 <= bo[a] < T[a], (u, T, bo)                       # 1
                assert (u[a] + bo[a]) % T[a] == 0, (u, T, bo)              # 2
                assert bo[a] % 8 == 0, (u, T, bo)                          # 3
            for k in (-2, -1, 1, 2):
                assert tu_bin_offset((u[0] + k * Tw, u[1] + k * Th), T) == bo, (u, T, k)
            neg = tu_bin_offset((-u[0], -u[1]), T)
            assert neg == ((Tw - bo[0]) % Tw, (Th - bo[1]) % Th), (u, T, bo, neg)
            n_bo += 1
            # ---- items 4-6 and 14
            for p in POS:
                b_cs = (p[0] * Tw, p[1] * Th)
                b_s = (max(0, b_cs[0] - bo[0]), max(0, b_cs[1] - bo[1]))
                for fa in FAS8:
                    assert b_s[0] % fa[0] == 0 and b_s[1] % fa[1] == 0, (u, T, p, fa, b_s)   # 14
                    n_14 += 1
                for fa in FAS:
                    o = tu_fdm_per_bin_offset(fa, b_s, b_cs)
                    oh = hw_bin_offset(b_cs, fa)
                    for a in (0, 1):
                        assert b_s[a] // fa[a] + o[a] == b_cs[a], (u, T, p, fa, o)          # 4
                        assert oh[a] == b_cs[a] - b_cs[a] // fa[a], (T, p, fa, oh)          # o'
                        if bo[a] == 0:                                                       # 5
                            assert o[a] == oh[a], (u, T, p, fa, o, oh)
                        elif p[a] >= 1:                                                      # 6
                            assert bo[a] % fa[a] == 0 and o[a] - oh[a] == bo[a] // fa[a], (u, T, p, fa, o, oh)
                        else:                        # first row/column with offsets
                            assert o[a] == 0 and oh[a] == 0, (u, T, p, fa, o, oh)
                    n_fdm += 1
    # item 5 without any offsets (b_s == b_cs), every T, fa and position
    n_5 = 0
    for Tw, Th in itertools.product(TS, TS):
        for p in POS:
            b_cs = (p[0] * Tw, p[1] * Th)
            for fa in FAS:
                o = tu_fdm_per_bin_offset(fa, b_cs, b_cs)
                assert o == hw_bin_offset(b_cs, fa) == (b_cs[0] - b_cs[0] // fa[0], b_cs[1] - b_cs[1] // fa[1])
                n_5 += 1
    dt = time.perf_counter() - t0
    total = n_bo + n_fdm + n_14 + n_5
    print(f"\nsweep: {n_bo} (T, u) cases for items 1-3, {n_fdm} (T, u, p, fa) cases for items 4-6, "
          f"{n_14} (T, u, p, fa<=8) cases for item 14, {n_5} no-offset cases for item 5; "
          f"{total} cases in {dt:.1f} s")
    assert n_bo == sum(max(len(_offsets(a)), len(_offsets(b))) for a, b in itertools.product(TS, TS))
