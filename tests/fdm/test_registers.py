"""Register-field checks (fdm.registers): every value the plan says turnip programs against its
bitfield in a6xx.xml (pop-os/mesa @ 26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, note, settings
from hypothesis import strategies as st

import fdm
from fdm import strategies as S
from fdm.registers import (
    FIELDS,
    RULE_NEGATIVE,
    RULE_NOT_MULTIPLE,
    RULE_TOO_LARGE,
    RegisterField,
    field_rule,
    fields_for,
    fits,
    lookup,
    register_warnings,
    warning_json,
)
from turnip_base.errors import ScenarioError

REPO = Path(__file__).resolve().parents[2]
DEMO = Path(fdm.__file__).resolve().parent / "data" / "demo.toml"
FINDINGS = sorted((REPO / "docs" / "findings").glob("*.toml"))

PLAN = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.filter_too_much])

#: the issue's minimal scenario, as a scenario mapping
MINIMAL = {"gpu": "a750", "framebuffer": [8192, 512], "tile_size": [672, 512], "views": 1, "bin_merging": "off",
           "density": {"format": "R32G32_SFLOAT",
                       "views": [{"generator": "constant", "size": [256, 16], "density": 0.25}]}}


# -- the scenario ------------------------------------------------------------------------

def test_a750_foveat_xoffset_overflows_at_6048():
    """a750, 8192x512 framebuffer, 672x512 tiles, uniform density 0.25, one view, no merging.

    Driver (pop-os/mesa src/freedreno/vulkan/tu_cmd_buffer.cc, ``tu6_emit_tile_select``, @
    4ff7b570d4e91a807c7f671eb29c58015d4a4816)::

        const uint32_t x1 = tiling->tile0.width * tile->pos.x;
        ...
        frag_offsets[i].x = x1 - x1 / tile->frag_areas[view].width;
        ...
        crb.add(GRAS_BIN_FOVEAT_OFFSET_0(CHIP,
                 .xoffset_0 = frag_offsets[0].x, ...

    Register (src/freedreno/registers/adreno/a6xx.xml @ 26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41)::

        <reg32 offset="0x8009" name="GRAS_BIN_FOVEAT_OFFSET_0" variants="A7XX" usage="cmd">
            <bitfield name="XOFFSET_0" low="0" high="9" shr="2" type="uint"/>

    so the field holds at most (2^10 - 1) << 2 = 4092.  Density 0.25 gives fa = (4, 4)
    (tu_calc_frag_area clamps to 4 with one view; 4 divides 672 and 512).  13 tile columns
    (ceil(8192 / 672)); the last, pos.x = 12, starts at x1 = 12 * 672 = 8064, so
    o'.x = b_cs - b_cs / fa = 8064 - 8064 / 4 = 8064 - 2016 = 6048 > 4092.  Every column with
    x1 > 5456 (0.75 * x1 > 4092) overflows: pos.x 9..12 (x1 = 6048, 6720, 7392, 8064 give
    o'.x = 4536, 5040, 5544, 6048); pos.x 8 (x1 = 5376, o'.x = 4032) still fits.
    """
    plan = fdm.plan_render_pass(fdm.make_scenario(**MINIMAL))
    assert plan.tiling.vsc.tile_count == (13, 1)
    (last,) = [t for t in plan.tiles if t.pos == (12, 0)]
    assert last.common_bin_start == (8064, 0)
    assert last.views[0].frag_area == (4, 4)
    assert last.foveat.binscaleen and last.foveat.hw_offsets[0] == (6048, 0)

    ws = register_warnings(plan)
    hit = [w for w in ws if w.value == 6048]
    assert len(hit) == 1
    (w,) = hit
    assert (w.tile, w.view, w.register, w.field, w.max, w.rule) == (
        last.index, 0, "GRAS_BIN_FOVEAT_OFFSET_0", "XOFFSET_0", 4092, RULE_TOO_LARGE)

    # exactly the four right-most columns, x offset of slot 0 only (one view, y1 = 0)
    pos_of = {t.index: t.pos for t in plan.tiles}
    assert sorted((pos_of[w.tile], w.value) for w in ws) == [
        ((9, 0), 4536), ((10, 0), 5040), ((11, 0), 5544), ((12, 0), 6048)]
    assert {(w.register, w.field) for w in ws} == {("GRAS_BIN_FOVEAT_OFFSET_0", "XOFFSET_0")}
    assert warning_json(w) == {"tile": last.index, "view": 0, "register": "GRAS_BIN_FOVEAT_OFFSET_0",
                               "field": "XOFFSET_0", "value": 6048, "max": 4092, "rule": RULE_TOO_LARGE}


def test_same_pass_on_a830_fits():
    """a8xx programs o' into the 14-bit GRAS/RB_BIN_FOVEAT_XY[_FDM] arrays (no shr): 6048 fits."""
    plan = fdm.plan_render_pass(fdm.make_scenario(**{**MINIMAL, "gpu": "a830"}))
    assert any(t.foveat.binscaleen and t.foveat.hw_offsets[0][0] == 6048 for t in plan.tiles)
    assert register_warnings(plan) == ()


# -- shipped scenarios ---------------------------------------------------------------------------

#: the finding that is about a register overflow (its warnings are its [expect]), and the ones
#: turnip asserts on or reads out of bounds in (nothing is planned)
OVERFLOW_FINDINGS = {"o_foveat_offset_overflow.toml", "p_valve_layered_max_fdm_layers.toml",
                     "v_multiview_single_layer_map.toml"}


@pytest.mark.parametrize("path", [DEMO, *(f for f in FINDINGS if f.name not in OVERFLOW_FINDINGS)],
                         ids=lambda p: p.name)
def test_shipped_scenarios_fit(path):
    assert register_warnings(fdm.plan_render_pass(fdm.load_scenario(str(path)))) == ()


# -- the fit rule and the table ----------------------------------------------------------------

def test_fit_rule_with_shr():
    f = RegisterField("R", "F", 0, 9, 2, (7,))
    assert f.bits == 10 and f.max == 4092
    assert fits(0, f) and fits(4092, f) and fits(4, f)
    assert field_rule(4092 + 4, f) == RULE_TOO_LARGE          # max + one step: 4096 >> 2 == 1024 needs 11 bits
    assert field_rule(4092 + 1, f) == RULE_NOT_MULTIPLE       # max + 1: 4093 >> 2 == 1023 fits, the low 0b01 is lost
    assert not fits(4093, f)
    assert field_rule(4090, f) == RULE_NOT_MULTIPLE           # 4090 >> 2 == 1022 fits; the low bits 0b10 are lost
    assert field_rule(8190, f) == RULE_TOO_LARGE              # both: too large is reported first
    assert field_rule(6, f) == RULE_NOT_MULTIPLE
    assert field_rule(-4, f) == RULE_NEGATIVE


def test_fit_rule_without_shr():
    f = RegisterField("R", "X", 0, 13, 0, (6, 7, 8))
    assert f.max == 16383
    assert fits(16383, f) and fits(1, f)
    assert field_rule(16384, f) == RULE_TOO_LARGE
    assert field_rule(-1, f) == RULE_NEGATIVE


@pytest.mark.parametrize("register, field, chip, low, high, shr, maximum", [
    # each line of a6xx.xml @ 26e5c1f9 restated
    ("GRAS_BIN_FOVEAT_OFFSET_0", "XOFFSET_0", 7, 0, 9, 2, 4092),
    ("GRAS_BIN_FOVEAT_OFFSET_1", "XOFFSET_5", 7, 20, 29, 2, 4092),
    ("GRAS_BIN_FOVEAT_OFFSET_3", "YOFFSET_4", 7, 10, 19, 2, 4092),
    ("GRAS_BIN_FOVEAT_XY[0]", "XOFFSET", 8, 0, 13, 0, 16383),
    ("RB_BIN_FOVEAT_XY_FDM[5]", "YOFFSET", 8, 16, 29, 0, 16383),
    ("GRAS_BIN_FOVEAT", "YSCALE_5", 7, 30, 31, 0, 3),
    ("GRAS_SC_WINDOW_SCISSOR_BR", "X", 6, 0, 13, 0, 16383),
    ("RB_WINDOW_OFFSET", "Y", 8, 16, 29, 0, 16383),
    ("GRAS_SC_SCREEN_SCISSOR_TL", "Y", 7, 16, 31, 0, 65535),
    ("GRAS_SC_VIEWPORT_SCISSOR_BR", "X", 8, 0, 15, 0, 65535),
    ("GRAS_SC_BIN_CNTL", "BINW", 7, 0, 5, 5, 2016),
    ("RB_CNTL", "BINH", 6, 8, 14, 4, 2032),
    ("GRAS_SC_BIN_CNTL", "BINH", 8, 16, 26, 4, 32752),
    ("RB_RESOLVE_CNTL_3", "BINW", 8, 0, 9, 5, 32736),
    ("VSC_BIN_SIZE", "BINW", 7, 0, 7, 5, 8160),
    ("VSC_BIN_SIZE", "BINH", 6, 8, 16, 4, 8176),
    ("VSC_BIN_SIZE", "BINH", 8, 16, 26, 4, 32752),
    ("RB_MRT_GMEM_DIMENSION[0..7]", "WIDTH", 8, 0, 14, 0, 32767),
])
def test_table_rows(register, field, chip, low, high, shr, maximum):
    f = lookup(register, field, chip)
    assert (f.low, f.high, f.shr, f.max) == (low, high, shr, maximum)
    assert f.writer


def test_table_per_chip():
    with pytest.raises(KeyError):
        lookup("GRAS_BIN_FOVEAT_OFFSET_0", "XOFFSET_0", 8)     # variants="A7XX" only
    with pytest.raises(KeyError):
        lookup("TPL1_A2D_WINDOW_OFFSET", "X", 6)               # variants="A7XX-"
    assert not any(f.register.startswith("GRAS_BIN_FOVEAT") for f in fields_for(6))
    assert len({(f.register, f.field, f.chips) for f in FIELDS}) == len(FIELDS)
    for chip in (6, 7, 8):
        keys = [(f.register, f.field) for f in fields_for(chip)]
        assert len(keys) == len(set(keys)), chip


# -- properties ----------------------------------------------------------------------------------

#: the FOVEAT offset fields of a6xx.xml @ 26e5c1f9, restated: (bits, shr) per chip
FOVEAT_OFFSET_FIELD = {7: (10, 2), 8: (14, 0)}


def _check_plan(d: dict) -> None:
    note(f"scenario = {d!r}")
    try:
        plan = fdm.plan_render_pass(fdm.parse_scenario(d))
    except ScenarioError:
        assume(False)
        return
    chip = plan.scenario.gpu.chip
    ws = register_warnings(plan)
    for w in ws:
        f = lookup(w.register, w.field, chip)
        m = ((1 << (f.high - f.low + 1)) - 1) << f.shr
        assert w.max == m
        assert w.value < 0 or w.value > m or w.value % (1 << f.shr) != 0, w

    reported = {(w.tile, w.register, w.field) for w in ws}
    for t in plan.tiles:
        if not t.foveat.binscaleen:
            assert all(o == (0, 0) for o in t.foveat.hw_offsets)
            continue
        bits, shr = FOVEAT_OFFSET_FIELD[chip]
        top = ((1 << bits) - 1) << shr
        for i, (ox, oy) in enumerate(t.foveat.hw_offsets):
            for axis, v in (("X", ox), ("Y", oy)):
                if chip == 7:
                    key = (t.index, f"GRAS_BIN_FOVEAT_OFFSET_{i // 3 + (2 if axis == 'Y' else 0)}", f"{axis}OFFSET_{i}")
                else:
                    key = (t.index, f"GRAS_BIN_FOVEAT_XY[{i}]", f"{axis}OFFSET")
                if key not in reported:
                    assert 0 <= v <= top and v % (1 << shr) == 0, (key, v)
                else:
                    assert not (0 <= v <= top and v % (1 << shr) == 0), (key, v)


@PLAN
@given(S.scenario_dicts())
@example(MINIMAL)
def test_reported_values_exceed_and_unreported_offsets_fit(d):
    _check_plan(d)


@st.composite
def wide_passes(draw: st.DrawFn) -> dict:
    """Large passes on the GPUs with HW bin scaling: tiles up to the GPU maximum, up to 24 columns
    and 8 rows of them (framebuffer up to 16384 x 8192), a constant density per axis, sometimes
    FDM offsets and two views.  (``scenario_dicts`` rarely draws framebuffers wide enough for
    ``x1 - x1 / fa`` to pass 4092.)"""
    gpu = draw(st.sampled_from(["a740", "a750", "a830"]))
    g = fdm.get_gpu(gpu)
    views = draw(st.integers(1, 2))
    aw, ah = S.pass_tile_align(gpu, views)
    T = (aw * draw(st.integers(1, min(21, g.tile_max_w // aw))), ah * draw(st.integers(1, min(64, g.tile_max_h // ah))))
    cols = draw(st.integers(1, min(24, 16384 // T[0])))
    rows = draw(st.integers(1, max(1, min(8, 8192 // T[1]))))
    W = draw(st.integers((cols - 1) * T[0] + 1, cols * T[0]))
    H = draw(st.integers((rows - 1) * T[1] + 1, min(rows * T[1], 16384)))
    comp = st.sampled_from([1.0, 0.5, 0.25, 0.3])
    d: dict = {"gpu": gpu, "framebuffer": [W, H], "views": views, "tile_size": list(T),
               "bin_merging": draw(st.sampled_from(["off", "upstream", "fixed"])),
               "density": {"format": "R32G32_SFLOAT",
                           "views": [{"generator": "constant", "size": [-(-W // 512), -(-H // 512)],
                                      "density": [draw(comp), draw(comp)]}]}}
    if draw(st.booleans()):
        off = st.integers(-64, 64).map(lambda k: 8 * k)
        d["fdm_offset_create_flag"] = True
        d["fdm_offsets"] = [[draw(off), draw(off)] for _ in range(views)]
    return d


@PLAN
@given(wide_passes())
@example(MINIMAL)
def test_reported_values_exceed_wide_passes(d):
    """The same statement over wide passes, where a7xx FOVEAT offsets do overflow."""
    _check_plan(d)
