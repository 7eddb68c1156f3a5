"""Symbolic proofs (sympy) of the design note's derivations (docs/spec/turnip-fdm-design-note.md), evaluated
on the same functions (``fdm.derivations``) that ``fdm.turnip`` evaluates on integers."""

from __future__ import annotations

import sympy as sp

from fdm import derivations as d
from fdm.turnip import hw_bin_offset, tu_fdm_per_bin_offset

b_cs, b_s, b_o, x = sp.symbols("b_cs b_s b_o x", real=True)
fa = sp.symbols("fa", positive=True)
s = 1 / fa


def test_rendering_transform_maps_bin_start_to_common_bin_start():
    o = d.per_bin_offset(b_cs, b_s, fa)
    assert sp.simplify(s * b_s + o - b_cs) == 0
    assert sp.simplify(o - (b_cs - s * b_s)) == 0          # o = b_cs - s*b_s


def test_lrz_offsets_sum_to_rendering_offset():
    o_lrz = d.lrz_viewport_offset(b_o, fa)
    o_hw = d.ideal_hw_offset(b_cs, b_s, b_o, fa)
    # o + o' = b_cs - b_s*s
    assert sp.simplify(o_lrz + o_hw - d.per_bin_offset(b_cs, b_s, fa)) == 0


def test_binning_origin_maps_to_lrz_origin():
    # 0 = -b_o*s + o  =>  o = b_o*s
    assert sp.simplify(-b_o * s + d.lrz_viewport_offset(b_o, fa)) == 0


def test_ideal_hw_offset_rearranged():
    assert sp.simplify(d.ideal_hw_offset(b_cs, b_s, b_o, fa) - (b_cs - b_s * s - b_o * s)) == 0


def test_ideal_hw_offset_interior_simplifies_to_programmed_value():
    # past the first row/column b_s = b_cs - b_o, so o' = b_cs - b_cs*s (what the driver programs)
    ideal = d.ideal_hw_offset(b_cs, d.shifted_bin_start(b_cs, b_o), b_o, fa)
    assert sp.simplify(ideal - d.hw_offset(b_cs, fa)) == 0


def test_ideal_hw_offset_first_row_column():
    # first row/column: b_s = b_cs = 0 in that axis => o' = -b_o*s, which the driver cannot program
    ideal = d.ideal_hw_offset(0, 0, b_o, fa)
    assert sp.simplify(ideal + b_o * s) == 0
    assert d.hw_offset(sp.Integer(0), fa) == 0


def test_viewport_offset_minus_hw_offset_is_bin_offset_over_fa():
    # the driver's o - o' for interior tiles equals b_o*s: one LRZ space for every tile
    diff = d.per_bin_offset(b_cs, d.shifted_bin_start(b_cs, b_o), fa) - d.hw_offset(b_cs, fa)
    assert sp.simplify(diff - b_o * s) == 0


def test_integer_evaluation_uses_the_same_expressions():
    # the integer path of fdm.turnip agrees with the symbolic expression at sample points
    for bcs, bs, f in [(384, 232, 2), (960, 808, 4), (192, 40, 2), (0, 0, 4)]:
        sym = d.per_bin_offset(b_cs, b_s, fa).subs({b_cs: bcs, b_s: bs, fa: f})
        assert tu_fdm_per_bin_offset((f, f), (bs, bs), (bcs, bcs)) == (int(sym), int(sym))
        sym_hw = d.hw_offset(b_cs, fa).subs({b_cs: bcs, fa: f})
        assert hw_bin_offset((bcs, bcs), (f, f)) == (int(sym_hw), int(sym_hw))
