"""The GMEM loads and the fast stores' rectangles, on hand-made streams whose answers are written
out from adreno_pm4.xml / a6xx.xml and turnip's tu_clear_blit.cc (pop-os/mesa @ 05b96fda), not
from the code under test; and one planted model bug the box must catch.

* ``load_3d_blit`` (the load of an FDM pass): ``r3d_coords_raw`` loads 2 vec4s of VS constants
  from memory (``CP_LOAD_STATE6_GEOM``, 0x32: ``CP_LOAD_STATE6_0`` DST_OFF 0-13 = 0, STATE_TYPE
  14-15 = ST6_CONSTANTS 1, STATE_SRC 16-17 = SS6_INDIRECT 2, STATE_BLOCK 18-21 = SB6_VS_SHADER 8,
  NUM_UNIT 22-31 = 2; then the address), float dst x1, y1, src x1, y1, dst x2, y2, src x2, y2
  (``fdm_apply_load_coords`` patches the packet per bin), and draws a rect list
  (``CP_DRAW_INDX_OFFSET`` 0x38, prim type 0-5 = DI_PT_RECTLIST 8);
* ``tu_emit_blit`` of a load (a pass without FDM): ``RB_RESOLVE_OPERATION`` (0x88e3) TYPE 0-1 =
  BLIT_EVENT_LOAD 3, a ``CP_EVENT_WRITE`` (0x46) BLIT (0x1e) over ``RB_RESOLVE_CNTL_1/2``
  (0x88d1/0x88d2, ``a6xx_reg_xy``; no variants: a8xx too);
* the loads run under ``CP_COND_REG_EXEC`` (0x47) PRED_TEST (MODE 28-31 = 1) of predicate bit 0,
  which ``tu6_emit_cond_for_load_stores``'s plain ``CP_REG_TEST`` (0x39) of VSC_STATE sets when
  the bin has geometry: the walk takes it as set;
* a fast store: TYPE 0 (BLIT_EVENT_STORE), the same registers.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

import fdm
import fdm.plan
from fdm.clears import tu6_emit_blit_scissor
from turnip_box import compare as C
from turnip_box.decode import Phase, driver_pass
from turnip_box.rd import read_rd
from turnip_box.root import Box

from .streams import f32bits, pkt4, pkt7, rd_file, xy

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - Python 3.10
    import tomli as _toml

IB1, COORDS = 0x1000, 0x5000
ROOT = Path(__file__).resolve().parents[2]

#: CP_LOAD_STATE6_0 of r3d_coords_raw (module docstring)
LOAD_COORDS_D0 = (2 << 22) | (8 << 18) | (2 << 16) | (1 << 14)












def load_3d(coords_addr: int) -> list[int]:
    return pkt7(0x32, LOAD_COORDS_D0, coords_addr & 0xFFFFFFFF, coords_addr >> 32) + pkt7(0x38, 0x88, 1, 2)


def _bin(reg_test: bool, event_load: bool = False) -> list[int]:
    words = pkt7(0x65, 4)                                         # CP_SET_MARKER: RM6_BIN_RENDER_START
    if reg_test:
        words += pkt7(0x39, 0x2040000)                            # CP_REG_TEST (no PRED_UPDATE)
    body = load_3d(COORDS)
    words += pkt7(0x47, 1 << 28, len(body)) + body                # COND_REG_EXEC PRED_TEST bit 0
    if event_load:
        words += (pkt4(0x88D1, xy(0, 0)) + pkt4(0x88D2, xy(511, 255)) + pkt4(0x88E3, 3)
                  + pkt7(0x46, 0x1E))                             # BLIT event, BLIT_EVENT_LOAD
    words += pkt7(0x38, 0x84, 1, 3)                               # the application's triangle list
    words += pkt7(0x65, 6)                                        # RM6_RESOLVE: the stores
    words += pkt4(0x88E3, 0) + pkt4(0x88D1, xy(16, 4)) + pkt4(0x88D2, xy(127, 63)) + pkt7(0x46, 0x1E)
    return words


#: dst (96, 80)-(192, 160), src (192, 160)-(384, 320): a 2x2 fragment area
COORDS_WORDS = [f32bits(v) for v in (96.0, 80.0, 192.0, 160.0, 192.0, 160.0, 384.0, 320.0)]


@pytest.mark.parametrize("chip", [6, 7, 8])
def test_3d_load_fast_store_and_event_load(tmp_path: Path, chip: int) -> None:
    ib = _bin(True, event_load=True)
    dp = driver_pass(read_rd(rd_file(tmp_path, {IB1: ib, COORDS: COORDS_WORDS}, IB1, len(ib))), 1, chip)
    (b,) = dp.bins
    assert b.loads == (("3d", ((96, 80), (192, 160)), ((192, 160), (384, 320))),
                       ("event", ((0, 0), (511, 255))))
    assert b.stores == (("fast", ((16, 4), (127, 63))),)
    assert b.clears == ()


def test_load_under_the_geometry_predicate_needs_the_reg_test(tmp_path: Path) -> None:
    ib = _bin(False)
    dp = driver_pass(read_rd(rd_file(tmp_path, {IB1: ib, COORDS: COORDS_WORDS}, IB1, len(ib))), 1, 7)
    assert dp.bins[0].loads == ()


def test_coords_the_dump_lacks_are_left_out(tmp_path: Path) -> None:
    ib = _bin(True)
    dp = driver_pass(read_rd(rd_file(tmp_path, {IB1: ib}, IB1, len(ib))), 1, 7)
    assert dp.bins[0].loads == ()


def test_blit_scissor_aligned() -> None:
    # tu6_emit_blit_scissor(align): x1 & ~15, y1 & ~3, ALIGN_POT(x2 + 1, 16) - 1, ALIGN_POT(y2 + 1, 4) - 1
    assert tu6_emit_blit_scissor((8, 5, 100, 50)) == ((8, 5), (107, 54))
    assert tu6_emit_blit_scissor((8, 5, 100, 50), (16, 4)) == ((0, 4), (111, 55))
    assert tu6_emit_blit_scissor((0, 0, 512, 256), (16, 4)) == ((0, 0), (511, 255))


# ---- the comparison against a plan -------------------------------------------------------------

def _offset_load() -> dict[str, Any]:
    """The demo's two-view a750 pass with FDM offsets (its bins scaled in hardware, ``o'`` not
    zero), its colour attachment loaded and its depth loaded, and a render area off the 16x4 grid."""
    with open(ROOT / "fdm" / "data" / "demo.toml", "rb") as f:
        d = _toml.load(f)
    d["attachments"] = [{"cpp": 4, "load_op": "load"}, {"cpp": 4}]
    d["depth_load_op"] = "load"
    d["render_areas"] = [[8, 5, 1800, 1800]]
    return d


def _plan() -> Any:
    from turnip_box.jobs import model_scenario
    return fdm.plan_render_pass(model_scenario(fdm.parse_scenario(_offset_load())))


def _phase(loads: tuple[Any, ...], stores: tuple[Any, ...] = ()) -> Phase:
    return Phase(kind="gmem", drawn=True, window_scissor=((0, 0), (0, 0)), window_offset=(0, 0), bin_size=(0, 0),
                 force_lrz_dis=False, lrz_enable=False, foveat=None, slots=(), slot_count=0, stores=stores,
                 loads=loads)


def _want_3d(t: Any) -> tuple[Any, ...]:
    out = []
    for bl in t.blits:
        if bl.load_dst is None:
            continue
        (dx, dy, dw, dh), (sx, sy, sw, sh) = bl.load_dst, bl.load_src
        out.append(("3d", ((dx, dy), (dx + dw, dy + dh)), ((sx, sy), (sx + sw, sy + sh))))
    return tuple(out)


def test_compare_loads_and_fast_store_rects() -> None:
    plan = _plan()
    t = next(t for t in plan.tiles if any(v.frag_area != (1, 1) for v in t.views))
    d = C._Diff("s", "a750")
    # two attachments load the same rectangles; an empty bin's zero-area rectangle is left out
    C._loads(d, t.index, _phase(_want_3d(t) * 2 + (("3d", ((0, 0), (0, 0)), ((0, 0), (0, 0))),)), t, plan)
    # the render area (8, 5, 1800, 1800) aligned to 16x4: (0, 4)-(1807, 1807)
    C._stores(d, t.index, _phase((), (("fast", ((0, 4), (1807, 1807))),) * 2), t, plan, 7)
    C._loads(d, t.index, _phase((("event", ((0, 4), (1807, 1807))),)), t, plan)
    assert d.out == [] and d.compared == 3
    bad = _want_3d(t)[0]
    d = C._Diff("s", "a750")
    C._loads(d, t.index, _phase((("3d", bad[1], ((bad[2][0][0] + 1, bad[2][0][1]), bad[2][1])),)), t, plan)
    C._stores(d, t.index, _phase((), (("fast", ((8, 5), (1807, 1804))),)), t, plan, 7)
    assert [x.field for x in d.out] == ["load_rects", "fast_store_rects"]
    assert C.cause_rank("store_rects") < C.cause_rank("fast_store_rects") < C.cause_rank("load_rects")


# ---- a planted model bug the box catches -------------------------------------------------------

@pytest.mark.box
def test_planted_load_coords_without_hw_offset_is_caught(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fdm_apply_load_coords`` subtracts viewport 0's ``o'`` from ``b_cs``: a model that forgets
    it agrees on every other field and differs in ``load_rects`` (a750 scales bins in hardware)."""
    from turnip_box.check import AGREE, DIFFER, check, items_of

    items = items_of([("offset_load", fdm.parse_scenario(_offset_load()))], ["a750"])
    (clean,) = check(box, items)
    assert clean.status == AGREE, [x.line() for x in clean.differences] or clean.why
    orig = fdm.plan.blit_rects
    monkeypatch.setattr(fdm.plan, "blit_rects",
                        lambda fa, bins, cbs, hw: orig(fa, bins, cbs, ((0, 0),) * len(hw)))
    (planted,) = check(box, items)
    assert planted.status == DIFFER
    assert {x.field for x in planted.differences} == {"load_rects"}


def test_phase_loads_default_is_empty() -> None:
    assert attrs.fields_dict(Phase)["loads"].default == ()
