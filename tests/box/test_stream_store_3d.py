"""The 3D-blit store of a multisampled attachment (``store_3d_blit``), on hand-made streams whose
answers are written out from adreno_pm4.xml / a6xx.xml and turnip's tu_clear_blit.cc (pop-os/mesa
@ 05b96fda, the same in 26.2.0-rc1), not from the code under test; and one planted model bug the
box must catch on a shipped scenario.

* ``tu_store_gmem_attachment`` stores an attachment whose destination has ``samples > 1`` with
  ``store_3d_blit`` wherever the fast path is refused (without FDM: ``tu_attachment_store_unaligned``);
  a stored multisampled attachment turns the FDM off (``tu_render_pass_disable_fdm``), so the 3D
  store is never scaled and has no FDM patchpoint;
* ``store_3d_blit`` runs after the bin's draws (after ``CP_SET_MARKER`` RM6_RESOLVE, mode 6):
  ``r3d_coords(render_area.offset, render_area.offset, render_area.extent)`` -
  ``r3d_coords_raw``'s ``CP_LOAD_STATE6_GEOM`` (0x32: ``CP_LOAD_STATE6_0`` DST_OFF 0-13 = 0,
  STATE_TYPE 14-15 = ST6_CONSTANTS 1, STATE_SRC 16-17 = SS6_INDIRECT 2, STATE_BLOCK 18-21 =
  SB6_VS_SHADER 8, NUM_UNIT 22-31 = 2; then the address) of float dst x1, y1, src x1, y1, dst x2,
  y2, src x2, y2 - then one rect list (``CP_DRAW_INDX_OFFSET`` 0x38, prim type 0-5 =
  DI_PT_RECTLIST 8); one per layer of each stored attachment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import fdm
import fdm.patch
from fdm.patch import BLT_NO_COORD, r3d_coords, store_3d_blit_coords, takes_store_3d_blit
from turnip_box import compare as C
from turnip_box.decode import Phase, driver_pass
from turnip_box.rd import read_rd
from turnip_box.root import Box

from .streams import f32bits, pkt4, pkt7, rd_file, xy

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "examples/msaa_store_3d.toml"
IB1, STORE_COORDS, LOAD_COORDS = 0x1000, 0x6000, 0x7000

#: CP_LOAD_STATE6_0 of r3d_coords_raw (module docstring)
LOAD_COORDS_D0 = (2 << 22) | (8 << 18) | (2 << 16) | (1 << 14)

#: the render area (40, 30) 900x500 as r3d_coords writes it: dst = src = (40, 30)-(940, 530)
AREA = (40.0, 30.0, 40.0, 30.0, 940.0, 530.0, 940.0, 530.0)












def rect_list(coords_addr: int) -> list[int]:
    return pkt7(0x32, LOAD_COORDS_D0, coords_addr & 0xFFFFFFFF, coords_addr >> 32) + pkt7(0x38, 0x88, 1, 2)


def _bin(stores: int) -> list[int]:
    words = pkt7(0x65, 4)                                         # CP_SET_MARKER: RM6_BIN_RENDER_START
    words += rect_list(LOAD_COORDS)                               # a 3D load before the draws
    words += pkt7(0x38, 0x84, 1, 3)                               # the application's triangle list
    words += pkt7(0x65, 6)                                        # RM6_RESOLVE: the stores
    for _ in range(stores):                                       # colour and depth: store_3d_blit each
        words += rect_list(STORE_COORDS)
    # an A2D store of a single-sampled attachment beside them (CP_BLIT 0x2c)
    words += pkt4(0x8405, xy(40, 30)) + pkt4(0x8406, xy(939, 529)) + pkt7(0x2C, 0x3F)
    return words


def _dump(tmp: Path, coords: bool = True, stores: int = 2) -> Any:
    ib = _bin(stores)
    buffers = {IB1: ib, LOAD_COORDS: [f32bits(v) for v in (0.0, 0.0, 0.0, 0.0, 96.0, 64.0, 96.0, 64.0)]}
    if coords:
        buffers[STORE_COORDS] = [f32bits(v) for v in AREA]
    return read_rd(rd_file(tmp, buffers, IB1, len(ib)))


@pytest.mark.parametrize("chip", [6, 7, 8])
def test_3d_store_after_the_draws(tmp_path: Path, chip: int) -> None:
    (b,) = driver_pass(_dump(tmp_path), 1, chip).bins
    # the rect lists after RM6_RESOLVE are stores, with the 8 floats as loaded; the one before the
    # draws stays a load
    assert b.stores[:2] == (("3d", AREA), ("3d", AREA))
    assert b.stores[2][0] == "a2d"
    assert b.loads == (("3d", ((0, 0), (96, 64)), ((0, 0), (96, 64))),)


def test_3d_store_coords_the_dump_lacks_are_left_out(tmp_path: Path) -> None:
    (b,) = driver_pass(_dump(tmp_path, coords=False), 1, 7).bins
    assert [s[0] for s in b.stores] == ["a2d"]


def test_r3d_coords_is_the_c_arithmetic() -> None:
    assert store_3d_blit_coords((40, 30, 900, 500)) == AREA
    # blt_no_coord reads from 0
    assert r3d_coords((8, 4), BLT_NO_COORD, (16, 8)) == (8.0, 4.0, 0.0, 0.0, 24.0, 12.0, 16.0, 8.0)
    # int32_t offset + uint32_t extent is uint32_t: a negative end wraps before the float conversion
    assert r3d_coords((-20, 0), (0, 0), (16, 4))[4] == 4294967296.0


def test_which_stores_take_the_3d_blit() -> None:
    ms_stored, ms_not_stored, ss_stored = (4, True), (4, False), (1, True)
    assert takes_store_3d_blit([ms_stored, ss_stored], store_unaligned=True, fdm_enabled=False)
    assert not takes_store_3d_blit([ms_stored], store_unaligned=False, fdm_enabled=False)  # the fast path
    assert not takes_store_3d_blit([ms_not_stored, ss_stored], store_unaligned=True, fdm_enabled=False)


def _plan() -> Any:
    from turnip_box.jobs import model_scenario
    return fdm.plan_render_pass(model_scenario(fdm.load_scenario(str(ROOT / SCENARIO))))


def _phase(stores: tuple[Any, ...]) -> Phase:
    return Phase(kind="gmem", drawn=True, window_scissor=((0, 0), (0, 0)), window_offset=(0, 0), bin_size=(0, 0),
                 force_lrz_dis=False, lrz_enable=False, foveat=None, slots=(), slot_count=0, stores=stores)


def test_compare_3d_store_coords() -> None:
    plan = _plan()
    t = plan.tiles[5]
    view1 = (8.0, 0.0, 8.0, 0.0, 968.0, 600.0, 968.0, 600.0)   # the second view's render area (8, 0) 960x600
    assert {b.store_3d for b in t.blits} == {AREA, view1}
    d = C._Diff("s", "a750")
    # colour and depth of both views: a set over attachments and layers
    C._stores(d, t.index, _phase((("3d", AREA), ("3d", view1)) * 2), t, plan, 7)
    assert d.out == [] and d.compared == 1
    # a stream without the 3D stores the model plans, and one with a rectangle one pixel short
    d = C._Diff("s", "a750")
    C._stores(d, t.index, _phase(()), t, plan, 7)
    C._stores(d, t.index, _phase((("3d", AREA[:4] + (939.0, 530.0, 939.0, 530.0)), ("3d", view1))), t, plan, 7)
    assert [x.field for x in d.out] == ["store_3d_coords", "store_3d_coords"]
    assert C.cause_rank("store_rects") < C.cause_rank("store_3d_coords") < C.cause_rank("fast_store_rects")


# ---- a planted model bug the box catches -------------------------------------------------------

@pytest.mark.box
def test_planted_inclusive_3d_store_corners_are_caught(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    """``r3d_coords`` writes half-open ends (``offset + extent``); a model that gives the 3D store
    the A2D store's inclusive corners (``offset + extent - 1``) agrees on every other field and
    differs in ``store_3d_coords`` on the shipped scenario, on a6xx, a7xx and a8xx."""
    from turnip_box.check import AGREE, DIFFER, check, items_of

    items = items_of([("msaa_store_3d", fdm.load_scenario(str(ROOT / SCENARIO)))], ["a618", "a750", "a830"])
    clean = check(box, items)
    assert all(o.status == AGREE for o in clean), [x.line() for o in clean for x in o.differences]
    orig = fdm.patch.store_3d_blit_coords
    monkeypatch.setattr(fdm.patch, "store_3d_blit_coords",
                        lambda r: orig((r[0], r[1], r[2] - 1, r[3] - 1)))
    planted = check(box, items)
    assert all(o.status == DIFFER for o in planted)
    assert {x.field for o in planted for x in o.differences} == {"store_3d_coords"}
