"""``turnip-fdm diff``: finding (d)'s two merging variants differ in the tiles the finding names;
a scenario against itself under the default variant does not differ; the error contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fdm.cli import load_and_plan
from layout_solver.diff import diff_plans, diff_table, flatten
from turnip_fdm.cli import main

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = str(REPO / "docs/findings/d_merge_upstream.toml")
FIXED = str(REPO / "docs/findings/d_merge_fixed.toml")


def call(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def check_finding_d(doc: dict) -> None:
    """Upstream renders four 2x2 groups, fixed one 4x4 group: the group at 0,0 changed and the
    other three exist only in A (docs/findings.md, finding d)."""
    tiles = {tuple(t["pos"]): t for t in doc["tiles"]}
    assert {p: t["status"] for p, t in tiles.items()} == {
        (0, 0): "changed", (2, 0): "only_a", (0, 2): "only_a", (2, 2): "only_a"}
    f = {c["field"]: (c["a"], c["b"]) for c in tiles[(0, 0)]["fields"]}
    assert f["extent"] == ([2, 2], [4, 4])
    assert f["slot_mask"] == (0b110011, 0xFFFF)
    assert f["views[0].bin"] == ([0, 0, 256, 256], [0, 0, 512, 512])
    assert f["views[0].blits.store_src"] == ([[0, 0], [63, 63]], [[0, 0], [127, 127]])
    assert "layout.views[0].subsampled_pos" in f and "layout.views[0].metadata_bins" in f
    assert [(c["field"], c["a"], c["b"]) for c in doc["pass"]] == [("bin_merging", "upstream", "fixed")]


def test_two_scenarios_finding_d(capsys):
    status, out, err = call(capsys, "diff", UPSTREAM, FIXED, "--json")
    assert status == 0 and err == ""
    check_finding_d(json.loads(out))


def test_one_scenario_two_variants_finding_d(capsys):
    status, out, _ = call(capsys, "diff", UPSTREAM, "--variant", "bin_merging=fixed", "--json")
    assert status == 0
    doc = json.loads(out)
    check_finding_d(doc)
    assert doc["b"]["label"].endswith("--variant bin_merging=fixed")


def test_table_names_the_tiles(capsys):
    status, out, _ = call(capsys, "diff", UPSTREAM, FIXED)
    assert status == 0
    lines = out.splitlines()
    assert lines[2].startswith("1 pass field(s) differ; 4 tile(s) differ: 1 changed, 3 only in A, 0 only in B")
    assert any(ln.split()[:3] == ["tile", "0,0", "extent"] and "[2,2]" in ln and "[4,4]" in ln for ln in lines)
    for pos in ("2,0", "0,2", "2,2"):
        assert any(ln.startswith(f"tile {pos} (only in A) extent") for ln in lines), pos


def test_no_difference_against_the_default_variant(capsys):
    # the scenario already says bin_merging = "upstream": naming the default changes nothing
    status, out, _ = call(capsys, "diff", UPSTREAM, "--variant", "bin_merging=upstream")
    assert status == 0 and "no difference: 4 rendered tiles" in out


def test_every_field_of_a_tile_is_compared():
    # a planted change of one number deep in a tile's document is found (the comparison is not
    # limited to a list of known fields)
    a = load_and_plan(UPSTREAM)
    d = diff_plans(a, a)
    assert d.same and "no difference" in diff_table(d)
    fa = flatten({"views": [{"blits": {"store_src": [[0, 0], [63, 63]]}}]})
    assert fa == {"views[0].blits.store_src": [[0, 0], [63, 63]]}


def test_out_writes_three_files_all_or_nothing(capsys, tmp_path):
    out = tmp_path / "d"
    status, stdout, _ = call(capsys, "diff", UPSTREAM, FIXED, "--out", str(out))
    assert status == 0 and "4 tile(s) differ" in stdout
    assert sorted(p.name for p in out.iterdir()) == [".turnip-fdm-files", "diff.json", "diff.txt", "index.html"]
    check_finding_d(json.loads((out / "diff.json").read_text()))
    page = (out / "index.html").read_text()
    assert '"mode":"diff"' in page and "<script src" not in page


@pytest.mark.parametrize("argv, field", [
    (("diff", UPSTREAM), "B"),
    (("diff", UPSTREAM, FIXED, "--json", "--out", "x"), "--out"),
    (("diff", UPSTREAM, "--variant", "bin_merging=sideways"), "bin_merging"),
    (("diff", UPSTREAM, "/nonexistent.toml"), ""),
])
def test_bad_input_one_line_exit_2(capsys, tmp_path, argv, field):
    status, out, err = call(capsys, *argv)
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnip-fdm: error: ") and field in lines[0]
    assert not (tmp_path / "x").exists()


def test_reused_out_folder_has_no_stale_files(capsys, tmp_path):
    """A folder written by one command and then another keeps only the second's files (and the
    files the user put there): the manifest names what the earlier run wrote."""
    out = tmp_path / "o"
    assert call(capsys, "plan", UPSTREAM, "--out", str(out))[0] == 0
    (out / "notes.md").write_text("mine")
    assert call(capsys, "diff", UPSTREAM, FIXED, "--out", str(out))[0] == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [".turnip-fdm-files", "diff.json", "diff.txt", "index.html", "notes.md"]
    assert call(capsys, "plan", UPSTREAM, "--out", str(out))[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [".turnip-fdm-files", "notes.md", "plan.json", "plan.txt"]


def test_table_is_not_padded_to_its_longest_value(capsys):
    """The A column is as wide as its values up to A_COLUMN_CAP: a long A value (the aprons, cut
    at MAX_CELL) runs on on its own line instead of pushing every B to column ~100."""
    from layout_solver.diff import A_COLUMN_CAP, MAX_CELL

    status, out, _ = call(capsys, "diff", UPSTREAM, FIXED)
    assert status == 0
    lines = out.splitlines()
    table = lines[lines.index("") + 1:]
    assert all(ln == ln.rstrip() for ln in lines)
    header = table[0]
    b_col = header.index(" B") + 1
    assert b_col <= header.index(" A") + 1 + A_COLUMN_CAP + 1
    aligned = [ln for ln in table[1:] if len(ln) > b_col and ln[b_col - 1] == " " and ln[b_col] != " "]
    assert len(aligned) >= len(table[1:]) - 2          # all but the long A values (the aprons)
    long_a = [ln for ln in table[1:] if "layout.views[0].aprons" in ln]
    assert long_a and long_a[0].endswith("...  -")      # cut with an ellipsis, B after two spaces
    assert max(len(ln) for ln in table) <= b_col + MAX_CELL


def test_docs_example_is_what_the_command_prints(capsys):
    """docs/diff.md's example is the command's whole output (regenerate it when the output
    changes: run the `$ turnip-fdm diff ...` line of the example from the repository root)."""
    text = (REPO / "docs/diff.md").read_text(encoding="utf-8")
    block = text.split("## Example: finding (d)", 1)[1].split("```\n", 2)[1]
    command, _, shown = block.partition("\n")
    argv = command.removeprefix("$ turnip-fdm ").split()
    status, out, _ = call(capsys, *[str(REPO / a) if a.startswith("docs/") else a for a in argv])
    assert status == 0
    assert shown == out.replace(str(REPO) + "/", ""), "docs/diff.md's example differs from the command's output"
