"""``turnip-fdm layout SCENARIO --json`` and :func:`layout_solver.layout_json.layout_json`
(schema: docs/layout-json.md).

The expected numbers are those of docs/spec/turnip-fdm-spec.md §11.7, §11.9 and §11.10 (and, where
the spec gives only the rule, derived by hand from §7.2/§7.6 in the comments), written as the
spec's fractions or decimals rounded to float32 - never taken from the metadata model itself.
The scenarios: fixtures of conftest.py."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from fdm.plan import plan_render_pass
from fdm.scenario import load_scenario
from layout_solver import tu_calc_subsampled
from layout_solver.layout_json import f32_json, layout_json
from layout_solver.metadata import layout_metadata
from turnip_base.errors import ScenarioError
from turnip_fdm.cli import main


def f32(x):
    return np.float32(x)


def q(a, b):
    """The float32 quotient ``f32(a) / f32(b)`` the driver computes, as the JSON double."""
    return float(np.float32(np.float32(a) / np.float32(b)))


def doc_of(plan, views=None):
    """The document as a reader sees it: dumped and parsed again."""
    return json.loads(json.dumps(layout_json(plan, tu_calc_subsampled(plan), views), indent=1))


def by_cell(view_doc):
    return {tuple(b["root_cell"]): b for b in view_doc["bins"]}


def is_float32(x):
    return float(np.float32(x)) == x


def all_metadata_numbers(view_doc):
    h = view_doc["header"]
    out = [*h["scale"], *h["offset"]]
    for b in view_doc["bins"] + ([view_doc["fallback_bin"]] if view_doc["fallback_bin"] else []):
        out += [*b["scale"], *b["offset"]]
    return out


# -- §11.7: no offsets, column 0 fa (1,1), the others (2,2) -----------------------------------------

def test_11_7_header_and_bins(plan_11_7):
    d = doc_of(plan_11_7)
    assert d["solved"] is True and d["gpu"] == "a740" and d["max_bins"] == 512
    assert d["framebuffer"] == [1000, 600] and d["tile_size"] == [192, 160] and d["tile_count"] == [6, 4]
    (v,) = d["views"]
    assert v["view"] == 0 and v["layer"] == 0 and v["ubo_base"] == 0
    assert v["image"] == [1000, 600] and v["bin_offset"] == [0, 0] and v["fallback_bin"] is None
    # header: scale = (1000/192, 600/160) = (5.2083335, 3.75), offset (0, 0), stride 6, 24 bins
    assert v["header"] == {"scale": [q(1000, 192), 3.75], "offset": [0.0, 0.0], "bin_stride": 6}
    assert f32(v["header"]["scale"][0]) == f32(5.2083335)
    assert v["bins_written"] == 24
    bins = by_cell(v)
    assert len(bins) == 24                                   # every cell is its own visible root
    # row 0: x = 0, 288, 480, 672, 864, 980 with widths 192, 96, 96, 96, 96, 20
    assert [bins[(x, 0)]["subsampled_pos"] for x in range(6)] == [
        [0, 0, 192, 160], [288, 0, 96, 80], [480, 0, 96, 80], [672, 0, 96, 80], [864, 0, 96, 80], [980, 0, 20, 80]]
    assert [bins[(x, 0)]["subsampled"] for x in range(6)] == [False] + [True] * 5
    assert bins[(1, 0)]["frag_area"] == [2, 2] and bins[(0, 0)]["effective_frag_area"] == [1, 1]
    # bin (1,0): (0.5, 0.5, (288 - 192/2)/1000 = 0.192, 0)
    b10 = bins[(1, 0)]
    assert b10["scale"] == [0.5, 0.5] and b10["offset"] == [q(192, 1000), 0.0]
    assert f32(b10["offset"][0]) == f32(0.192)
    assert b10["metadata_bins"] == [1] and b10["root_cell"] == b10["pos"] == [1, 0] and b10["extent"] == [1, 1]
    # bin (1,1): (0.5, 0.5, 0.192, (160 - 160/2)/600 = 0.13333334); bin index 1·6 + 1
    b11 = bins[(1, 1)]
    assert b11["subsampled_pos"] == [288, 160, 96, 80]
    assert b11["scale"] == [0.5, 0.5] and b11["offset"] == [q(192, 1000), q(80, 600)]
    assert f32(b11["offset"][1]) == f32(0.13333334) and b11["metadata_bins"] == [7]
    # bin (0,0): (1, 1, 0, 0) (fa (1,1): not subsampled)
    assert bins[(0, 0)]["scale"] == [1.0, 1.0] and bins[(0, 0)]["offset"] == [0.0, 0.0]
    # by hand from §7.2/§7.6: (5,0) sticks: [980, 1000), b_s.x = 960 -> (980 - 480)/1000 = 0.5;
    # row 3 sticks in y: [540, 600), b_s.y = 480 -> (540 - 240)/600 = 0.5; (0,3) unsubsampled [480, 600)
    assert bins[(5, 0)]["offset"] == [0.5, 0.0]
    assert bins[(1, 3)]["subsampled_pos"] == [288, 540, 96, 60] and bins[(1, 3)]["offset"] == [q(192, 1000), 0.5]
    assert bins[(5, 3)]["subsampled_pos"] == [980, 540, 20, 60] and bins[(5, 3)]["offset"] == [0.5, 0.5]
    assert bins[(0, 3)]["subsampled_pos"] == [0, 480, 192, 120] and bins[(0, 3)]["metadata_bins"] == [18]


def test_11_10_aprons(plan_11_7):
    (v,) = doc_of(plan_11_7)["views"]
    A = v["aprons"]
    assert len(A) == 130

    def blits(dst, src):
        return [(a["dst"], a["src"], a["edge"]) for a in A if a["dst_pos"] == dst and a["src_pos"] == src]

    assert blits([0, 0], [1, 0]) == [([192, 0, 2, 160], [288.0, 0.0, 289.0, 80.0], "vertical")]
    assert blits([1, 0], [0, 0]) == [([286, 0, 2, 80], [188.0, 0.0, 192.0, 160.0], "vertical")]
    assert blits([0, 0], [1, 1]) == [([192, 160, 2, 2], [288.0, 160.0, 289.0, 161.0], "vertical")]
    assert blits([1, 1], [0, 0]) == [([286, 158, 2, 2], [188.0, 156.0, 192.0, 160.0], "vertical")]
    assert blits([1, 0], [2, 0]) == [([384, 0, 2, 80], [480.0, 0.0, 482.0, 80.0], "vertical")]
    assert blits([1, 0], [1, 1]) == [([288, 80, 96, 2], [288.0, 160.0, 384.0, 162.0], "horizontal")]
    assert blits([1, 1], [1, 0]) == [([288, 158, 96, 2], [288.0, 78.0, 384.0, 80.0], "horizontal")]
    assert blits([0, 0], [0, 1]) == [] and blits([0, 1], [0, 0]) == []   # adjacent in subsampled space


# -- §11.9: FDM offset (40, -16), all fa (2,2), image 1096 x 632 -------------------------------------

def test_11_9_header_and_bins(plan_11_9):
    d = doc_of(plan_11_9)
    assert d["solved"] is True and d["tile_count"] == [7, 5]
    (v,) = d["views"]
    assert v["image"] == [1096, 632] and v["bin_offset"] == [152, 16]
    # header: scale (5.2083, 3.75), offset (152/192, 16/160) = (0.79167, 0.1), stride 7, 35 bins
    assert v["header"] == {"scale": [q(1000, 192), 3.75], "offset": [q(152, 192), q(16, 160)], "bin_stride": 7}
    assert (f32(v["header"]["offset"][0]), f32(v["header"]["offset"][1])) == (f32(0.7916667), f32(0.1))
    assert v["bins_written"] == 35
    bins = by_cell(v)
    # the extra column 6 and row 4 of the FDM-offset grid are not rendered: no entries
    assert set(bins) == {(x, y) for x in range(6) for y in range(4)}
    # column 0 [0, 20), columns 1-4 at 96, 288, 480, 672 (width 96), column 5 (stick) [1000, 1096)
    assert [bins[(x, 0)]["subsampled_pos"][0::2] for x in range(6)] == [[0, 20], [96, 96], [288, 96], [480, 96],
                                                                         [672, 96],
                                                            [1000, 96]]
    # row 0 [0, 72), rows 1-2 at 160, 320 (height 80), row 3 (stick) [564, 632)
    assert [bins[(1, y)]["subsampled_pos"][1::2] for y in range(4)] == [[0, 72], [160, 80], [320, 80], [564, 68]]
    # size_ratio / 2 = (1000/1096 / 2, 600/632 / 2) = (0.45620438, 0.47468355)
    scale = [float(f32(q(1000, 1096)) / f32(2)), float(f32(q(600, 632)) / f32(2))]
    assert all(b["scale"] == scale and b["subsampled"] for b in bins.values())
    assert (f32(scale[0]), f32(scale[1])) == (f32(0.45620438), f32(0.47468355))
    # bin (1,0): offset ((96 - 40/2)/1096 = 0.069343, 0)
    assert bins[(1, 0)]["offset"] == [q(76, 1096), 0.0] and f32(bins[(1, 0)]["offset"][0]) == f32(0.06934307)
    # bin (5,1): offset ((1000 - 808/2)/1096 = 0.54380, (160 - 144/2)/632 = 0.13924); index 1·7 + 5
    b51 = bins[(5, 1)]
    assert b51["subsampled_pos"] == [1000, 160, 96, 80] and b51["metadata_bins"] == [12]
    assert b51["offset"] == [q(596, 1096), q(88, 632)]
    assert (f32(b51["offset"][0]), f32(b51["offset"][1])) == (f32(0.54379565), f32(0.1392405))


def test_11_10_aprons_with_offset(plan_11_9):
    A = doc_of(plan_11_9)["views"][0]["aprons"]
    got = {(tuple(a["dst_pos"]), tuple(a["src_pos"])): (a["dst"], a["src"]) for a in A}
    assert got[(0, 0), (1, 0)] == ([20, 0, 2, 72], [96.0, 0.0, 98.0, 72.0])
    assert got[(1, 0), (0, 0)] == ([94, 0, 2, 72], [18.0, 0.0, 20.0, 72.0])
    assert got[(4, 0), (5, 0)] == ([768, 0, 2, 72], [1000.0, 0.0, 1002.0, 72.0])


# -- float32 exactness ------------------------------------------------------------------------------

def test_float32_values_round_trip_bit_for_bit(plan_11_9):
    """Every metadata number of the text is exactly a float32, and ``np.float32`` of the parsed
    number has the bits of what the driver writes (header and the bin of every listed cell)."""
    layout = tu_calc_subsampled(plan_11_9)
    text = json.dumps(layout_json(plan_11_9, layout), indent=1)
    (v,) = json.loads(text)["views"]
    (m,) = layout_metadata(layout)
    nums = all_metadata_numbers(v)
    assert nums and all(is_float32(x) for x in nums)

    def same_bits(j, ref):
        return np.float32(j).view(np.uint32) == np.float32(ref).view(np.uint32)

    h = m.header
    assert all(same_bits(j, r) for j, r in zip(v["header"]["scale"] + v["header"]["offset"],
                                                 [*h.scale, *h.offset], strict=True))
    for b in v["bins"]:
        for idx in b["metadata_bins"]:
            ref = m.bins[idx]
            assert all(same_bits(j, r) for j, r in zip(b["scale"] + b["offset"], [*ref.scale, *ref.offset],
                                                         strict=True))
    # the printed form is the shortest decimal of the double equal to the float32
    assert '0.7916666865348816' in text and '0.10000000149011612' in text
    assert str(f32_json(f32(0.1))) == "0.10000000149011612"


@pytest.mark.parametrize("x", [0.1, 1 / 3, 5.2083335, 1e-30, 3.4e38, 2.0 ** -149, -0.0])
def test_f32_json_is_exact(x):
    ref = np.float32(x)
    back = json.loads(json.dumps(f32_json(ref)))
    assert np.float32(back).view(np.uint32) == ref.view(np.uint32)
    assert back == float(ref)


# -- the fallback (more than 512 bins) -------------------------------------------------------------

def test_fallback_over_512_bins(make_plan):
    """a810 (tile_align 32 x 16), 768 x 352 with SUBSAMPLED + FDM_OFFSET: image 800 x 368;
    T = 32 x 16 with an FDM offset -> 25 x 23 = 575 bins > 512: nothing is solved, one bin
    ``size_ratio = (768/800, 352/368) = (0.96, 0.95652174)`` is written."""
    p = make_plan(gpu="a810", fb=(768, 352), tile=(32, 16), constant=0.5, fdm_size=(24, 11),
                  fdm_offset_create_flag=True, fdm_offsets=[[8, 8]])
    d = doc_of(p)
    assert d["solved"] is False and d["tile_count"] == [25, 23]
    (v,) = d["views"]
    assert v["image"] == [800, 368] and v["bin_offset"] is None
    assert v["header"] == {"scale": [1.0, 1.0], "offset": [0.0, 0.0], "bin_stride": 1}
    assert v["bins_written"] == 1 and v["bins"] == [] and v["aprons"] == []
    assert v["fallback_bin"] == {"scale": [q(768, 800), q(352, 368)], "offset": [0.0, 0.0]}
    assert (f32(v["fallback_bin"]["scale"][0]), f32(v["fallback_bin"]["scale"][1])) == (f32(0.96), f32(0.95652174))


# -- merged tiles and view selection --------------------------------------------------------------

def test_merged_tile_lists_every_metadata_bin(plan_merged_stick):
    """193 x 65, T = 96 x 32, offsets (0, 0): the tile grid is 4 x 4 and cells (2,1)+(2,2) form
    one group rooted at (2,2); both cells' bins (indices 6 and 10) carry the root's values."""
    (v,) = doc_of(plan_merged_stick)["views"]
    b = by_cell(v)[(2, 2)]
    assert b["pos"] == [2, 1] and b["extent"] == [1, 2] and b["metadata_bins"] == [6, 10]
    assert (2, 1) not in by_cell(v)                             # a merged-away cell has no entry of its own
    listed = [i for x in v["bins"] for i in x["metadata_bins"]]
    assert len(listed) == len(set(listed)) and set(listed) <= set(range(v["bins_written"]))


def test_views_selection_and_refusals(plan_11_7):
    layout = tu_calc_subsampled(plan_11_7)
    assert [v["view"] for v in layout_json(plan_11_7, layout, [0])["views"]] == [0]
    assert layout_json(plan_11_7, layout, [])["views"] == []
    with pytest.raises(ScenarioError, match=r"^views: must lie in \[0, 0\], got 1"):
        layout_json(plan_11_7, layout, [1])
    with pytest.raises(ScenarioError, match=r"^layout: "):
        layout_json(plan_render_pass(plan_11_7.scenario), layout)


# -- the command line ------------------------------------------------------------------------------

SCEN_11_9 = """name = "spec-11-9"
gpu = "a740"
framebuffer = [1000, 600]
tile_size = [192, 160]
bin_merging = "off"
fdm_offset_create_flag = true
fdm_offsets = [[40, -16]]
[density]
format = "R32G32_SFLOAT"
[[density.views]]
generator = "constant"
size = [32, 20]
density = 0.5
"""

SCEN_2_VIEWS = """name = "two-views"
gpu = "a740"
framebuffer = [1000, 600]
tile_size = [192, 160]
views = 2
bin_merging = "off"
[density]
format = "R32G32_SFLOAT"
[[density.views]]
generator = "constant"
size = [32, 20]
density = 0.5
[[density.views]]
generator = "constant"
size = [32, 20]
density = 1.0
"""


def files_under(path):
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)


def test_cli_json_to_stdout_writes_nothing(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.toml").write_text(SCEN_11_9)
    monkeypatch.chdir(tmp_path)
    assert main(["layout", "s.toml", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    d = json.loads(out)
    assert files_under(tmp_path) == ["s.toml"]                 # no out/layout, no pictures
    assert d["scenario"] == "spec-11-9" and d["gpu"] == "a740" and d["solved"] is True
    (v,) = d["views"]
    assert v["header"]["offset"] == [q(152, 192), q(16, 160)]
    assert by_cell(v)[(5, 1)]["offset"] == [q(596, 1096), q(88, 632)]
    plan = plan_render_pass(load_scenario(str(tmp_path / "s.toml")))
    assert d == json.loads(json.dumps(layout_json(plan, tu_calc_subsampled(plan))))
    assert out == json.dumps(layout_json(plan, tu_calc_subsampled(plan)), indent=1) + "\n"


def test_cli_json_view_restricts(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.toml").write_text(SCEN_2_VIEWS)
    monkeypatch.chdir(tmp_path)
    assert main(["layout", "s.toml", "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert [v["view"] for v in both["views"]] == [0, 1]
    assert main(["layout", "s.toml", "--json", "--view", "1"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [v["view"] for v in d["views"]] == [1] and d["views"][0] == both["views"][1]
    (v1,) = d["views"]
    assert v1["layer"] == 1 and v1["ubo_base"] == 514
    # view 1 has density 1.0: fa (1,1), nothing stored subsampled, identity-scale bins
    assert v1["bins"] and not any(b["subsampled"] for b in v1["bins"])
    assert all(b["scale"] == [1.0, 1.0] for b in v1["bins"])
    assert files_under(tmp_path) == ["s.toml"]


def test_cli_json_refusals(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.toml").write_text(SCEN_11_9)
    monkeypatch.chdir(tmp_path)
    assert main(["layout", "s.toml", "--json", "--out", "pics"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("turnip-fdm: error: --out: ") and len(err.splitlines()) == 1
    assert main(["layout", "s.toml", "--json", "--view", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("turnip-fdm: error: --view: must be in [0, 0]") and len(err.splitlines()) == 1
    assert files_under(tmp_path) == ["s.toml"]
