"""Property tests: one test per invariant of the spec, §10.1 items 1-21 and 30-32
(docs/spec/turnip-fdm-spec.md).  Items 22-29 (subsampled layout) are left to a later issue.

Every test states the invariant with its own arithmetic (the spec's formulas, recomputed here)
over generated *valid* scenarios (``strategies.scenario_dicts``) or, for the pure driver
functions, over directly generated inputs.  No test compares a model function with itself.

(Named ``test_fdm_invariants.py`` rather than ``test_invariants.py``: the test directories have no
``__init__.py``, so basenames must be unique across ``tests/`` and
``tests/layout_solver/test_invariants.py`` already exists.)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, note, settings
from hypothesis import strategies as st

from fdm import strategies as S
from fdm.patch import lower_frag_coord
from fdm.plan import plan_render_pass
from fdm.scenario import parse_scenario
from fdm.turnip import hw_bin_offset, tu_bin_offset, tu_calc_frag_area, tu_fdm_per_bin_offset
from turnip_base.errors import DriverAssertion

F32 = np.float32
UINT32_MAX = 0xFFFFFFFF
INVISIBLE = (UINT32_MAX, UINT32_MAX)
MAX_VIEWPORT_SIZE = 16384

PURE = settings(max_examples=400, deadline=None)
PLAN = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------------------------
# independent helpers (spec formulas, not model calls)

class Facts:
    """What the spec derives from a scenario dict, computed here from the dict itself."""

    def __init__(self, d: dict):
        self.d = d
        self.gpu = S.GPUS[d["gpu"]]
        self.W, self.H = d["framebuffer"]
        self.T = tuple(d["tile_size"])
        self.views = d.get("views", 1)
        self.layers = self.views
        self.offsets = [tuple(u) for u in d["fdm_offsets"]] if d.get("fdm_offsets") else None
        self.writes_vpi = d.get("writes_viewport_index", False)
        self.qcom = d.get("multiview_per_view_viewports", False)
        # §5.2: per_view_viewport = !writes_viewport && (QCOM per-view viewports || has_per_view_viewport)
        self.pvv = (not self.writes_vpi) and (self.qcom or self.gpu.has_per_view_viewport)
        self.fake_single = self.pvv and not self.qcom
        self.shared = not self.pvv                      # §3.5 rp.shared_viewport
        self.shifted = self.offsets is not None and not self.shared
        full = [0, 0, self.W, self.H]
        ras = d.get("render_areas", [full])
        self.render_areas = [tuple(ras[v] if len(ras) > 1 else ras[0]) for v in range(self.views)]
        self.scissors = [tuple(s) for s in d.get("scissors", [full])]
        self.viewports = [tuple(v) for v in d.get("viewports", [full])]

    def bo(self, v: int):
        """§3.2 b_o = (-u) mod T (Python's % is the mathematical modulo)."""
        if self.offsets is None:
            return (0, 0)
        ux, uy = self.offsets[v]
        return ((-ux) % self.T[0], (-uy) % self.T[1])

    def b_cs(self, pos):
        return (pos[0] * self.T[0], pos[1] * self.T[1])

    def expected_bin(self, pos, E, v, visible):
        """§3.3 B_v."""
        if not visible:
            return (0, 0, 0, 0)
        x1, y1 = self.b_cs(pos)
        w, h = self.T[0] * E[0], self.T[1] * E[1]
        if not self.shifted:
            return (x1, y1, w, h)
        bx, by = self.bo(v)
        sx, sy = max(0, x1 - bx), max(0, y1 - by)
        return (sx, sy, max(min(x1 + w - bx, MAX_VIEWPORT_SIZE) - sx, 0),
                max(min(y1 + h - by, MAX_VIEWPORT_SIZE) - sy, 0))

    def user_index(self, slot: int) -> int:
        return 0 if self.fake_single else slot

    def slot_view(self, slot: int) -> int:
        return 0 if (self.shared or self.views == 1) else slot

    # --- density sampling (§4.2, §4.3), for items 12 and 13
    def _ceil_log2(self, n: int) -> int:
        return 0 if n <= 1 else (n - 1).bit_length()

    def sample_texel(self, cell, v):
        T, W, H = self.T, self.W, self.H
        x1, y1 = cell[0] * T[0], cell[1] * T[1]
        x2, y2 = min(x1 + T[0], MAX_VIEWPORT_SIZE), min(y1 + T[1], MAX_VIEWPORT_SIZE)
        if self.offsets is not None:
            ox, oy = self.offsets[v]
            if not self.shared:
                bx, by = self.bo(v)
                ox, oy = ox + bx, oy + by
            sx, sy = (x1 + x2) // 2 - ox, (y1 + y2) // 2 - oy
        else:
            sx, sy = (x1 + min(x2, W)) // 2, (y1 + min(y2, H)) // 2
        layers = self.d["density"]["views"]
        vals = layers[v if len(layers) > 1 else 0]["values"]
        fh, fw = len(vals), len(vals[0])
        shx = min(max(self._ceil_log2(W // fw), 5), 10)
        shy = min(max(self._ceil_log2(H // fh), 5), 10)
        i = min(max(sx >> shx, 0), fw - 1)
        j = min(max(sy >> shy, 0), fh - 1)
        return vals[j][i]

    def density_f32(self, cell, v):
        """The density pair as the driver unpacks it (float32)."""
        dx, dy = self.sample_texel(cell, v)
        if self.d["density"]["format"] == "R8G8_UNORM":
            inv255 = F32(F32(1.0) / F32(255.0))
            return tuple(F32(F32(int(np.rint(c * 255.0))) * inv255) for c in (dx, dy))
        return (F32(dx), F32(dy))

    def raw_area(self, cell, v):
        dx, dy = self.density_f32(cell, v)
        with np.errstate(divide="ignore"):
            return (F32(F32(1.0) / dx), F32(F32(1.0) / dy))

    def ra_visible(self, cell, v) -> bool:
        """§4.5 visibility of the (shifted) nominal cell against the view's render area."""
        x, y = self.b_cs(cell)
        if self.shifted:
            bx, by = self.bo(v)
            x, y = x - bx, y - by
        rx, ry, rw, rh = self.render_areas[v]
        return x < rx + rw and rx < x + self.T[0] and y < ry + rh and ry < y + self.T[1]


def build(d: dict, in_hypothesis: bool = True):
    if in_hypothesis:
        note(f"scenario = {d!r}")
    sc = parse_scenario(d)
    return Facts(d), plan_render_pass(sc)


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def signed32(u: int) -> int:
    return u - (1 << 32) if u >= (1 << 31) else u


def scissor_empty(sc) -> bool:
    (tlx, tly), (brx, bry) = sc
    return brx < tlx or bry < tly


def wrap_case(patch) -> bool:
    """§5.4 SUSPECT: a negative extent wraps as uint32 and BR = off + ext - 1 underflows to
    0xFFFFFFFF (then clamped to 0x7fff), which opens the scissor.  Excluded from item 8."""
    ew, eh = patch.scissor_extent
    if ew == 0 or eh == 0:
        return False
    for off, e in zip(patch.scissor_offset, patch.scissor_extent, strict=True):
        es = signed32(e)
        if es < 0 and off + es <= 0:
            return True
    return False


def intersect(a, b):
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    return (x1, y1, x2 - x1, y2 - y1) if x2 > x1 and y2 > y1 else None


def unmerged_cells(plan):
    """Cells whose TileConfig still holds their own (pre-merge) visibility and frag areas."""
    # a cell that absorbed a neighbour has E != (1,1) (even if it was later absorbed itself)
    return [c for c in plan.grid.cells if tuple(c.extent) == (1, 1)]


def root_of(plan, cell):
    tc = plan.grid.tile_count
    t = cell
    seen = 0
    while t.merged_into is not None:
        t = plan.grid.cells[t.merged_into[1] * tc[0] + t.merged_into[0]]
        seen += 1
        assert seen <= len(plan.grid.cells), "merged_into chain does not end"
    return t


# ----------------------------------------------------------------------------------------------
# 1-3: tu_bin_offset

@PURE
@given(st.tuples(st.integers(1, 4096), st.integers(1, 4096)),
       st.tuples(st.integers(-20000, 20000), st.integers(-20000, 20000)))
def test_inv01_bin_offset_in_range(T, u):
    bo = tu_bin_offset(u, T)
    for a in (0, 1):
        assert isinstance(bo[a], int)
        assert 0 <= bo[a] < T[a]


@PURE
@given(st.tuples(st.integers(1, 4096), st.integers(1, 4096)),
       st.tuples(st.integers(-20000, 20000), st.integers(-20000, 20000)),
       st.integers(-8, 8))
@example((192, 160), (40, -16), 1)
def test_inv02_bin_offset_wraps_with_period_T(T, u, k):
    bo = tu_bin_offset(u, T)
    for a in (0, 1):
        assert (u[a] + bo[a]) % T[a] == 0
    shifted = (u[0] + k * T[0], u[1] + k * T[1])
    assert tu_bin_offset(shifted, T) == bo
    assert tu_bin_offset((0, 0), T) == (0, 0)
    neg = tu_bin_offset((-u[0], -u[1]), T)
    assert neg == ((T[0] - bo[0]) % T[0], (T[1] - bo[1]) % T[1])


@PURE
@given(st.tuples(st.integers(1, 512).map(lambda k: 8 * k), st.integers(1, 512).map(lambda k: 8 * k)),
       st.tuples(S.offset_axis, S.offset_axis))
def test_inv03_bin_offset_granularity(T, u):
    bo = tu_bin_offset(u, T)
    assert bo[0] % 8 == 0 and bo[1] % 8 == 0


# ----------------------------------------------------------------------------------------------
# 4-9: per-bin offset and transforms

@PURE
@given(st.tuples(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4, 8])),
       st.tuples(st.integers(-4096, 4096), st.integers(-4096, 4096)),
       st.tuples(st.integers(-20000, 20000), st.integers(-20000, 20000)))
def test_inv04_per_bin_offset_maps_bin_start_to_common_start(fa, k, c):
    b_s = (k[0] * fa[0], k[1] * fa[1])      # the precondition: b_s is a multiple of fa
    o = tu_fdm_per_bin_offset(fa, b_s, c)
    assert (Fraction(b_s[0], fa[0]) + o[0], Fraction(b_s[1], fa[1]) + o[1]) == c
    # the driver asserts the precondition
    if fa[0] > 1:
        with pytest.raises(DriverAssertion):
            tu_fdm_per_bin_offset(fa, (b_s[0] + 1, b_s[1]), c)


@PURE
@given(st.tuples(S.tile_axis, S.tile_axis), st.tuples(st.integers(0, 64), st.integers(0, 64)),
       st.tuples(S.frag_axis, S.frag_axis))
def test_inv05_no_offset_hw_offset_equals_per_bin_offset_pure(T, p, fa):
    b_cs = (p[0] * T[0], p[1] * T[1])
    o = tu_fdm_per_bin_offset(fa, b_cs, b_cs)          # no offsets: b_s == b_cs
    expect = (b_cs[0] - b_cs[0] // fa[0], b_cs[1] - b_cs[1] // fa[1])
    assert o == expect
    assert hw_bin_offset(b_cs, fa) == expect           # o' == o, so o - o' == 0


@PLAN
@given(S.scenario_dicts(offsets=False))
def test_inv05_no_offset_viewport_offset_is_zero_with_hw_scaling(d):
    f, plan = build(d)
    for t in plan.tiles:
        b_cs = f.b_cs(t.pos)
        assert t.common_bin_start == b_cs
        for vp in t.views:
            if not vp.visible:
                continue
            fa = vp.frag_area
            o = (b_cs[0] - b_cs[0] // fa[0], b_cs[1] - b_cs[1] // fa[1])
            assert vp.offset == o
            if t.bin_scale_en:
                assert vp.hw_offset == o
        if not t.bin_scale_en:
            continue
        for s in t.slots:
            vp = t.views[s.view]
            if not vp.visible or vp.frag_area == (1, 1):
                continue
            ux, uy, uw, uh = f.viewports[f.user_index(s.slot)]
            fw, fh = vp.frag_area
            # x' = x/fa + (o - o') = x/fa exactly (powers of two)
            assert s.viewport[0] == ux / fw and s.viewport[1] == uy / fh
            assert s.viewport[2] == uw / fw and s.viewport[3] == uh / fh


@PURE
@given(st.tuples(S.tile_axis, S.tile_axis), st.tuples(st.integers(1, 64), st.integers(1, 64)),
       st.tuples(S.offset_axis, S.offset_axis), st.tuples(S.frag_axis, S.frag_axis))
def test_inv06_offset_lrz_space_consistent_pure(T, p, u, fa):
    bo = ((-u[0]) % T[0], (-u[1]) % T[1])
    b_cs = (p[0] * T[0], p[1] * T[1])
    b_s = (b_cs[0] - bo[0], b_cs[1] - bo[1])           # non-first row/column: no clamping
    o = tu_fdm_per_bin_offset(fa, b_s, b_cs)
    o_hw = hw_bin_offset(b_cs, fa)
    for a in (0, 1):
        assert bo[a] % fa[a] == 0
        assert o[a] - o_hw[a] == bo[a] // fa[a]


@PLAN
@given(S.scenario_dicts(offsets=True))
def test_inv06_offset_lrz_space_consistent_in_plan(d):
    f, plan = build(d)
    assume(not f.shared)
    for t in plan.tiles:
        b_cs = f.b_cs(t.pos)
        for vp in t.views:
            if not vp.visible:
                continue
            fa, bo = vp.frag_area, f.bo(vp.view)
            o_hw = (b_cs[0] - b_cs[0] // fa[0], b_cs[1] - b_cs[1] // fa[1])
            for a in (0, 1):
                if t.pos[a] >= 1:
                    assert bo[a] % fa[a] == 0
                    assert vp.offset[a] - o_hw[a] == bo[a] // fa[a]
            if t.bin_scale_en:
                assert vp.hw_offset == o_hw
        if not t.bin_scale_en:
            continue
        for s in t.slots:
            vp = t.views[s.view]
            if not vp.visible:
                continue
            fw, fh = vp.frag_area
            bx, by = f.bo(s.view)
            ux, uy, _, _ = f.viewports[f.user_index(s.slot)]
            # LRZ-space viewport: x/fa + b_o/fa (the same for every non-first tile of the view)
            if t.pos[0] >= 1:
                assert s.viewport[0] == (ux + bx) / fw
            if t.pos[1] >= 1:
                assert s.viewport[1] == (uy + by) / fh


@PLAN
@given(S.scenario_dicts())
def test_inv07_unscaled_unshifted_bin_leaves_viewport_and_scissor(d):
    f, plan = build(d)
    for t in plan.tiles:
        b_cs = f.b_cs(t.pos)
        for s in t.slots:
            vp = t.views[s.view]
            if vp.frag_area != (1, 1) or tuple(vp.bin[:2]) != b_cs:
                continue
            ui = f.user_index(s.slot)
            x, y, w, h = f.viewports[ui]
            assert s.viewport == (float(F32(x)), float(F32(y)), float(F32(w)), float(F32(h)))
            # the scissor is the user scissor, only clipped to the bin (window-scissor replacement)
            r = intersect(f.scissors[ui], vp.bin)
            if r is not None:
                assert s.scissor == ((r[0], r[1]), (r[0] + r[2] - 1, r[1] + r[3] - 1))
            elif not wrap_case(s):
                assert scissor_empty(s.scissor)


@PLAN
@given(S.scenario_dicts())
def test_inv08_scissor_within_scaled_bin_and_covers_user_scissor(d):
    f, plan = build(d)
    for t in plan.tiles:
        b_cs = f.b_cs(t.pos)
        for s in t.slots:
            v = s.view
            assert v == f.slot_view(s.slot)
            vp = t.views[v]
            B = f.expected_bin(t.pos, t.extent, v, vp.visible)
            assert tuple(vp.bin) == B
            ui = f.user_index(s.slot)
            r = intersect(f.scissors[ui], B)
            if wrap_case(s):
                assert r is None  # the wrap only happens for an empty intersection
                continue
            if not vp.visible:
                assert scissor_empty(s.scissor)
                continue
            fw, fh = vp.frag_area
            hw = (b_cs[0] - b_cs[0] // fw, b_cs[1] - b_cs[1] // fh) if t.bin_scale_en else (0, 0)
            ts = (b_cs[0] - hw[0], b_cs[1] - hw[1])      # tile_start, in LRZ/rendering space
            (tlx, tly), (brx, bry) = s.scissor
            if not scissor_empty(s.scissor):
                # ⊆ the scaled bin [ts, ts + B.w/fa)
                assert ts[0] <= tlx and brx < ts[0] + B[2] // fw
                assert ts[1] <= tly and bry < ts[1] + B[3] // fh
            if r is None:
                # (a zero-size user scissor not aligned to fa is rounded outwards to one
                # fragment, so the emitted scissor may be non-empty here; see the report)
                continue
            assert not scissor_empty(s.scissor)
            # ⊇ the exact image of the user scissor restricted to the bin: x -> (x - b_s)/fa + ts
            lo_x = Fraction(r[0] - B[0], fw) + ts[0]
            hi_x = Fraction(r[0] + r[2] - B[0], fw) + ts[0]
            lo_y = Fraction(r[1] - B[1], fh) + ts[1]
            hi_y = Fraction(r[1] + r[3] - B[1], fh) + ts[1]
            assert tlx <= math.floor(lo_x) and brx + 1 >= math.ceil(hi_x)
            assert tly <= math.floor(lo_y) and bry + 1 >= math.ceil(hi_y)


@PLAN
@given(S.scenario_dicts(), st.randoms(use_true_random=False))
def test_inv09_lowered_fragcoord_round_trip(d, rnd):
    f, plan = build(d)
    for t in plan.tiles:
        b_cs = f.b_cs(t.pos)
        for vp in t.views:
            if not vp.visible:
                continue
            fs = t.fs_params[vp.view]
            fw, fh = fs.frag_size
            bx, by, bw, bh = vp.bin
            xs = {bx, bx + bw - 1, bx + rnd.randrange(bw)}
            ys = {by, by + bh - 1, by + rnd.randrange(bh)}
            for px in xs:
                xc = px + 0.5
                hw = xc / fw + fs.frag_offset[0]
                # the pixel lands in the tile's rendering-space region [b_cs, b_cs + B.w/fa)
                assert b_cs[0] <= hw < b_cs[0] + Fraction(bw, fw)
                assert float(lower_frag_coord(hw, fw, fs.frag_offset[0])) == xc
            for py in ys:
                yc = py + 0.5
                hw = yc / fh + fs.frag_offset[1]
                assert b_cs[1] <= hw < b_cs[1] + Fraction(bh, fh)
                assert float(lower_frag_coord(hw, fh, fs.frag_offset[1])) == yc


# ----------------------------------------------------------------------------------------------
# 10-14: fragment area

def raw_component():
    """A float32 raw area component 1/density, densities as the driver unpacks them."""
    inv255 = F32(F32(1.0) / F32(255.0))
    unorm = st.integers(1, 255).map(lambda k: F32(F32(1.0) / F32(F32(k) * inv255)))
    flt = st.floats(min_value=float(F32(1e-3)), max_value=1.0, width=32).map(lambda x: F32(F32(1.0) / F32(x)))
    exact = st.sampled_from([F32(1.0), F32(2.0), F32(4.0), F32(8.0), F32(16.0)])
    big = st.floats(min_value=1.0 / 64, max_value=1.0, width=32).map(lambda x: F32(F32(1.0) / F32(x)))
    return st.one_of(unorm, flt, exact, big)


@PURE
@given(st.tuples(raw_component(), raw_component()), st.tuples(S.tile_axis, S.tile_axis), st.booleans(),
       st.integers(1, 12))
def test_inv10_frag_area_pow2_clamped_divides_tile_pure(raw, T, has_off, views):
    fa = tu_calc_frag_area(raw, T, has_fdm_offsets=has_off, num_views=views)
    assert fa is not None
    for a in (0, 1):
        assert is_pow2(fa[a])
        if views <= 6:
            assert fa[a] <= 4
        if has_off:
            assert fa[a] <= 8
        assert T[a] % fa[a] == 0


@PLAN
@given(S.scenario_dicts())
def test_inv10_frag_area_pow2_clamped_divides_tile_in_plan(d):
    f, plan = build(d)
    for c in plan.grid.cells:
        for _v, fa in enumerate(c.frag_areas):
            if fa == INVISIBLE:
                continue
            for a in (0, 1):
                assert is_pow2(fa[a]) and fa[a] <= 4 and f.T[a] % fa[a] == 0
                if f.offsets is not None:
                    assert fa[a] <= 8


@PURE
@given(st.tuples(raw_component(), raw_component()), st.tuples(S.tile_axis, S.tile_axis), st.booleans(),
       st.integers(1, 12))
@example((F32(1.0) / (F32(66) * (F32(1.0) / F32(255))),) * 2, (192, 160), False, 1)
def test_inv11_frag_area_bounded_by_raw_area(raw, T, has_off, views):
    assume(raw[0] >= 1 and raw[1] >= 1)
    fa = tu_calc_frag_area(raw, T, has_fdm_offsets=has_off, num_views=views)
    exact_area = Fraction(float(raw[0])) * Fraction(float(raw[1]))
    assert fa[0] * fa[1] <= exact_area
    assert fa[0] <= math.floor(raw[0]) + 1
    assert fa[1] <= math.floor(raw[1]) + 1


@PURE
@given(raw_component(), st.tuples(S.tile_axis, S.tile_axis), st.booleans(), st.integers(1, 12), st.booleans())
def test_inv12_zero_density_pure(other, T, has_off, views, x_axis):
    inf = F32(np.inf)
    raw = (inf, other) if x_axis else (other, inf)
    assert tu_calc_frag_area(raw, T, has_fdm_offsets=has_off, num_views=views) is None


@PLAN
@given(S.scenario_dicts(allow_zero=True))
def test_inv12_zero_density_makes_view_invisible(d):
    f, plan = build(d)
    for c in unmerged_cells(plan):
        for v in range(f.views):
            dx, dy = f.density_f32(c.cell, v)
            vis = bool(c.visible_views >> v & 1)
            if dx == 0 or dy == 0:
                assert not vis
                if not f.shared:
                    assert c.frag_areas[v] == INVISIBLE
            else:
                assert vis == f.ra_visible(c.cell, v)
                assert c.frag_areas[v] != INVISIBLE


@PLAN
@given(S.scenario_dicts().map(lambda d: {**d, "writes_viewport_index": True}))
def test_inv13_shared_viewport_frag_area_is_per_axis_min(d):
    f, plan = build(d)
    assert f.shared
    has_off = f.offsets is not None
    for c in unmerged_cells(plan):
        per_view = []
        for v in range(f.views):
            fa = tu_calc_frag_area(f.raw_area(c.cell, v), f.T, has_fdm_offsets=has_off, num_views=f.views)
            per_view.append(INVISIBLE if fa is None else fa)
        expect = (min(a[0] for a in per_view), min(a[1] for a in per_view))
        assert all(tuple(a) == expect for a in c.frag_areas)


#: Found by a property test over rendered tiles: two cells with disjoint visible views (per-view
#: render areas) and different shared frag areas merge (try_merge_tiles only compares views
#: visible in *both*), and the merged tile copies the src cell's area for the view visible only
#: there, so a shared-viewport tile ends up with fa = [(2,2), (4,4)].  Slot 0 (the only slot,
#: share_scale) renders every view at view 0's (2,2) while view 1 is loaded/stored at (4,4).
INV13_MERGED_COUNTEREXAMPLE = {
    "gpu": "a740", "framebuffer": [192, 32], "views": 2, "tile_size": [96, 32],
    "writes_viewport_index": True, "bin_merging": "upstream",
    "render_areas": [[0, 0, 96, 32], [96, 0, 96, 32]],
    "density": {"format": "R32G32_SFLOAT", "views": [{"values": [[[0.5, 0.5], [0.25, 0.25]]]}]},
}


@pytest.mark.xfail(strict=True, reason=(
    "spec §10.1 item 13 holds per cell (tu_calc_frag_area) but not for merged tiles: §6.3 step 8 "
    "(and tu_tile_config.cc try_merge_tiles, which the model follows) copies src's frag area for "
    "views visible only in src, with no shared-viewport guard, so a merged shared-viewport tile can "
    "carry different areas per view (latent driver bug)"))
def test_inv13_shared_viewport_merged_tile_identical_fa():
    f, plan = build(INV13_MERGED_COUNTEREXAMPLE, in_hypothesis=False)
    assert f.shared
    for t in plan.tiles:
        fas = {tuple(vp.frag_area) for vp in t.views}
        assert len(fas) == 1, (t.pos, t.extent, [vp.frag_area for vp in t.views])


@PLAN
@given(S.scenario_dicts(offsets=True))
def test_inv14_offset_bin_start_multiple_of_frag_area(d):
    f, plan = build(d)
    for t in plan.tiles:
        for vp in t.views:
            if not vp.visible:
                continue
            fa = vp.frag_area
            assert vp.bin[0] % fa[0] == 0 and vp.bin[1] % fa[1] == 0
            if f.shifted:
                bo = f.bo(vp.view)
                assert bo[0] % fa[0] == 0 and bo[1] % fa[1] == 0


# ----------------------------------------------------------------------------------------------
# 15: bins

@PLAN
@given(S.scenario_dicts(allow_zero=False))
def test_inv15_bins_partition_render_area(d):
    f, plan = build(d)
    for v in range(f.views):
        pieces = []
        for t in plan.tiles:
            vp = t.views[v]
            bx, by, bw, bh = vp.bin
            assert 0 <= bx and 0 <= by and bx + bw <= MAX_VIEWPORT_SIZE and by + bh <= MAX_VIEWPORT_SIZE
            assert tuple(vp.bin) == f.expected_bin(t.pos, t.extent, v, vp.visible)
            if not vp.visible:
                assert bw == 0 and bh == 0
                continue
            assert bw > 0 and bh > 0
            if f.shifted and t.pos[0] == 0:
                assert bx == 0 and bw == f.T[0] * t.extent[0] - f.bo(v)[0]
            if f.shifted and t.pos[1] == 0:
                assert by == 0 and bh == f.T[1] * t.extent[1] - f.bo(v)[1]
            r = intersect(vp.bin, f.render_areas[v])
            if r is not None:
                pieces.append(r)
        ra = f.render_areas[v]
        for i in range(len(pieces)):
            for j in range(i + 1, len(pieces)):
                assert intersect(pieces[i], pieces[j]) is None, (v, pieces[i], pieces[j])
        assert sum(p[2] * p[3] for p in pieces) == ra[2] * ra[3]


# ----------------------------------------------------------------------------------------------
# 16-21: merging

def groups(plan):
    out = {}
    for c in plan.grid.cells:
        out.setdefault(root_of(plan, c).cell, []).append(c)
    return out


@PLAN
@given(S.scenario_dicts())
def test_inv16_groups_partition_pipes(d):
    f, plan = build(d)
    tcw, tch = plan.grid.tile_count
    pipes = plan.tiling.vsc.pipes
    covered = {}
    for rc, members in groups(plan).items():
        r = plan.grid.cells[rc[1] * tcw + rc[0]]
        (px, py), (ew, eh) = r.pos, r.extent
        rect = {(x, y) for x in range(px, px + ew) for y in range(py, py + eh)}
        assert {m.cell for m in members} == rect
        pipe = pipes[r.pipe]
        for (x, y) in rect:
            assert pipe.x <= x < pipe.x + pipe.w and pipe.y <= y < pipe.y + pipe.h
            assert (x, y) not in covered
            covered[(x, y)] = rc
        assert all(m.pipe == r.pipe for m in members)
    assert len(covered) == tcw * tch


@PLAN
@given(S.scenario_dicts())
def test_inv17_groups_share_frag_area_and_fit(d):
    f, plan = build(d)
    tcw = plan.grid.tile_count[0]
    for rc, members in groups(plan).items():
        r = plan.grid.cells[rc[1] * tcw + rc[0]]
        for m in members:
            if m is r:
                continue
            for v in range(f.views):
                if m.visible_views >> v & 1:
                    assert r.visible_views >> v & 1
                    assert tuple(r.frag_areas[v]) == tuple(m.frag_areas[v])
        for v in range(f.views):
            if r.visible_views >> v & 1:
                fa = r.frag_areas[v]
                assert fa[0] >= r.extent[0]
                assert fa[1] * r.gmem_extent[1] >= r.extent[1]


@PLAN
@given(S.scenario_dicts(max_views=3))
def test_inv18_gmem_extent(d):
    f, plan = build(d)
    for c in plan.grid.cells:
        gw, gh = c.gmem_extent
        assert gw == 1
        assert gh in (1, f.views)
        if gh == f.views and f.views > 1:
            assert c.visible_views == 1 and not f.shared


@PLAN
@given(S.scenario_dicts())
def test_inv19_slot_mask(d):
    f, plan = build(d)
    tcw = plan.grid.tile_count[0]
    pipes = plan.tiling.vsc.pipes
    for rc, members in groups(plan).items():
        r = plan.grid.cells[rc[1] * tcw + rc[0]]
        p = pipes[r.pipe]
        mask = 0
        for m in members:
            mask |= 1 << (p.w * (m.cell[1] - p.y) + (m.cell[0] - p.x))
        assert r.slot_mask == mask
        if not f.gpu.has_abs_bin_mask:
            low = (mask & -mask).bit_length() - 1
            assert mask >> low < (1 << 16)


@PLAN
@given(S.scenario_dicts().map(lambda d: {**d, "bin_merging": "upstream"}))
def test_inv20_upstream_groups_at_most_2x2(d):
    f, plan = build(d)
    for c in plan.grid.roots():
        assert c.extent[0] in (1, 2) and c.extent[1] in (1, 2)


@PLAN
@given(S.scenario_dicts())
def test_inv21_merged_bin_fits_one_unscaled_tile(d):
    f, plan = build(d)
    Tw, Th = f.T
    for t in plan.tiles:
        gh = t.gmem_extent[1]
        for vp in t.views:
            if not vp.visible:
                continue
            fw, fh = vp.frag_area
            # nominal merged extent and the actual bin, both scaled to rendering space
            assert Fraction(t.extent[0] * Tw, fw) <= Tw
            assert Fraction(t.extent[1] * Th, fh) <= Th * gh
            assert Fraction(vp.bin[2], fw) <= Tw
            assert Fraction(vp.bin[3], fh) <= Th * gh


# ----------------------------------------------------------------------------------------------
# 30-32: HW scaling / LRZ

def expected_scaling(f: Facts, t):
    """§8.1: (bin_is_scaled, bin_scale_en) from the tile's frag areas (invisible views included)."""
    scaled = any(tuple(vp.frag_area) != (1, 1) for vp in t.views)
    en = f.gpu.has_hw_bin_scaling and f.layers <= 6 and not f.shared and scaled
    return scaled, en


@PLAN
@given(S.scenario_dicts())
def test_inv30_hw_offset_nonnegative_and_8_aligned_on_a7xx(d):
    f, plan = build(d)
    for t in plan.tiles:
        b_cs = f.b_cs(t.pos)
        offs = t.foveat.hw_offsets
        if not t.bin_scale_en:
            assert all(tuple(o) == (0, 0) for o in offs)
            continue
        for i in range(6):
            v = min(i, f.views - 1)
            if not (t.visible_views >> v & 1) or i >= f.layers:
                assert tuple(offs[i]) == (0, 0)
                continue
            fa = t.views[v].frag_area
            expect = (b_cs[0] - b_cs[0] // fa[0], b_cs[1] - b_cs[1] // fa[1])
            assert tuple(offs[i]) == expect
            assert offs[i][0] >= 0 and offs[i][1] >= 0
            if f.gpu.chip == 7:
                assert offs[i][0] % 8 == 0 and offs[i][1] % 8 == 0


def test_inv30_a810_counterexample():
    """Spec §8.2 / §11.11 last row: a810 (tile_align_h 16), Th = 48, tile (0,1), fa (1,4) programs
    o'.y = 48 - 48/4 = 36, which is not 8-aligned (the driver does not check; SUSPECT)."""
    d = {"gpu": "a810", "framebuffer": [64, 96], "views": 1, "tile_size": [32, 48], "bin_merging": "off",
         "density": {"format": "R32G32_SFLOAT", "views": [{"values": [[[1.0, 0.25]]]}]}}
    f, plan = build(d, in_hypothesis=False)
    tile = next(t for t in plan.tiles if t.pos == (0, 1))
    assert tile.views[0].frag_area == (1, 4)
    assert tile.bin_is_scaled and tile.bin_scale_en
    assert tuple(tile.foveat.hw_offsets[0]) == (0, 36)
    assert tile.foveat.hw_offsets[0][1] % 8 != 0
    assert tile.lrz  # LRZ stays on for it


@PLAN
@given(S.scenario_dicts())
def test_inv31_lrz_disable_rule(d):
    f, plan = build(d)
    for t in plan.tiles:
        scaled, en = expected_scaling(f, t)
        assert t.bin_is_scaled == scaled and t.bin_scale_en == en
        disable = (scaled and not en) or (f.offsets is not None and (t.pos[0] == 0 or t.pos[1] == 0))
        assert t.force_lrz_dis == (disable and f.gpu.chip >= 7)
        if f.gpu.chip >= 7:
            assert t.lrz == (not disable)
        elif plan.fdm_enabled:
            # tu_shader_create: an FDM pipeline's fragment shader forces LRZ off on a6xx (finding m)
            assert not t.lrz


@PLAN
@given(S.scenario_dicts())
def test_inv32_window_scissor(d):
    f, plan = build(d)
    for t in plan.tiles:
        if t.bin_scale_en:
            assert t.window_scissor == ((0, 0), (f.W + f.T[0], f.H + f.T[1]))
        else:
            # §5.4: the GMEM bin at b_cs, T.w x T.h * G.h
            x1, y1 = f.b_cs(t.pos)
            x2 = min(x1 + f.T[0], MAX_VIEWPORT_SIZE)
            y2 = min(y1 + f.T[1] * t.gmem_extent[1], MAX_VIEWPORT_SIZE)
            assert t.window_scissor == ((x1, y1), (x2 - 1, y2 - 1))
