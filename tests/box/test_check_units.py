"""The box check's bookkeeping, without the box: shards, exit statuses, cause-before-effect order,
the per-field summary, the kept TOML scenarios, the variables passed to turnip, the progress line."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fdm
from fdm.scenario import decode_scenario_text
from turnip_base.errors import EXIT_FAILURE, EXIT_NOTHING_COMPARED, ScenarioError
from turnip_box import cli as box_cli
from turnip_box.check import (
    AGREE,
    DIFFER,
    ERROR,
    EXPECTED,
    MODEL_REFUSED,
    NOT_SUPPORTED,
    Item,
    Outcome,
    chunks_of,
    closing_line,
    exit_status,
    field_summary,
    items_of,
    shard,
)
from turnip_box.compare import CAUSE_ORDER, Difference, first_cause
from turnip_box.export import to_toml
from turnip_box.generate import generated, generated_scenarios, scenario_dict
from turnip_box.jobs import tu_debug_of
from turnip_box.root import OWN_VARIABLES, steering_variables


def _toml(text: str) -> Any:
    return decode_scenario_text(text, "toml")


ITEMS = items_of(generated_scenarios(60, 11), ["a750", "a618"])


def _o(status: str, diffs: Sequence[Difference] = ()) -> Outcome:
    return Outcome(item=ITEMS[0], status=status, differences=tuple(diffs), compared=10 if status in (AGREE, DIFFER)
                   else 0, bins=2)


@pytest.mark.parametrize("total", [1, 2, 3, 7, 120])
def test_shards_partition_the_run(total: int) -> None:
    parts = [shard(ITEMS, k, total) for k in range(1, total + 1)]
    names = [(it.name, it.gpu) for p in parts for it in p]
    assert sorted(names) == sorted((it.name, it.gpu) for it in ITEMS)   # the union is the whole run
    assert len(names) == len(set(names)) == len(ITEMS)                  # and no run is in two shards
    assert max(map(len, parts)) - min(map(len, parts)) <= 1             # and they are balanced


def test_chunks_cover_each_recordable_item_once_per_gpu_and_flags() -> None:
    chunks, unrecordable = chunks_of(ITEMS, 7)
    members = [n for c in chunks for n in c.members]
    assert sorted(members + list(unrecordable)) == list(range(len(ITEMS)))
    for c in chunks:
        assert len(c.members) <= 7
        assert len({(ITEMS[n].gpu, tu_debug_of(ITEMS[n].scenario)) for n in c.members}) == 1


@pytest.mark.parametrize("statuses,want", [
    ([AGREE], 0), ([AGREE, NOT_SUPPORTED, EXPECTED], 0),
    ([NOT_SUPPORTED], EXIT_NOTHING_COMPARED), ([], EXIT_NOTHING_COMPARED), ([EXPECTED], EXIT_NOTHING_COMPARED),
    ([AGREE, DIFFER], EXIT_FAILURE), ([MODEL_REFUSED], EXIT_FAILURE), ([MODEL_REFUSED, NOT_SUPPORTED], EXIT_FAILURE),
    ([ERROR, AGREE], EXIT_FAILURE),
])
def test_exit_status_is_zero_only_when_compared_and_nothing_failed(statuses: list[str], want: int) -> None:
    assert exit_status([_o(s) for s in statuses]) == want


def test_closing_line_counts_what_was_compared() -> None:
    line = closing_line([_o(AGREE), _o(AGREE), _o(NOT_SUPPORTED), _o(MODEL_REFUSED)], 1.25)
    assert line == ("2 agree, 0 differ, 1 not supported, 1 model refused: 2 of 4 scenario runs compared, "
                    "4 bins, 20 values, in 1.2 s")


def _d(field: str, b: int | None, v: int | None = None) -> Difference:
    return Difference("s", "a750", field, b, v, 1, 2)


def test_first_difference_is_the_cause() -> None:
    # the viewport of bin 0 is computed from the fragment area of bin 3's view: the area is read first
    diffs = [_d("viewport", 0, 0), _d("scissor", 0, 0), _d("fs_params.frag_area", 3, 0), _d("lrz", 1)]
    assert first_cause(diffs).field == "fs_params.frag_area"
    assert CAUSE_ORDER.index("fs_params.frag_area") < CAUSE_ORDER.index("viewport")
    ordered = sorted(diffs, key=lambda d: d.order())
    assert [d.field for d in ordered] == ["viewport", "scissor", "lrz", "fs_params.frag_area"]  # by bin


def test_field_summary_counts_per_field_and_run_cause_first() -> None:
    a = _o(DIFFER, [_d("viewport", 0, 0), _d("viewport", 1, 0), _d("fs_params.frag_area", 0, 0)])
    b = _o(DIFFER, [_d("viewport", 2, 0)])
    assert field_summary([a, b, _o(AGREE)]) == [("fs_params.frag_area", 1, 1), ("viewport", 3, 2)]


def test_generated_scenarios_export_as_toml_that_parses_back() -> None:
    rng = np.random.default_rng(3)
    for i in range(200):
        d = scenario_dict(rng, i)
        assert _toml(to_toml(d, "a\ncomment")) == d
    for name, sc, mapping in generated(20, 4):
        again = fdm.parse_scenario(_toml(to_toml(mapping)))
        assert fdm.plan_render_pass(again).render_mode == fdm.plan_render_pass(sc).render_mode, name


def test_tu_debug_and_the_box_own_variables_are_refused_others_passed() -> None:
    for k in OWN_VARIABLES:
        with pytest.raises(ScenarioError) as e:
            steering_variables({k: "x", "HOME": "/root"})
        assert e.value.field == k
    assert "tu_debug" in str(_refusal("TU_DEBUG"))
    got = steering_variables({"MESA_DEBUG": "silent", "TU_FOO": "1", "HOME": "/root", "PATH": "/bin"})
    assert got == {"MESA_DEBUG": "silent", "TU_FOO": "1"}


def _refusal(k: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        steering_variables({k: "nobinmerging"})
    return e.value


def test_shard_flag_and_ci_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    class A:
        shard: str | None = None

    monkeypatch.delenv("CI_NODE_INDEX", raising=False)
    monkeypatch.delenv("CI_NODE_TOTAL", raising=False)
    assert box_cli._shard(A()) is None  # type: ignore[arg-type]
    monkeypatch.setenv("CI_NODE_INDEX", "2")
    monkeypatch.setenv("CI_NODE_TOTAL", "4")
    assert box_cli._shard(A()) == (2, 4)  # type: ignore[arg-type]
    for bad in ("0/3", "4/3", "x/2", "3", "1/0"):
        A.shard = bad
        with pytest.raises(ScenarioError):
            box_cli._shard(A())  # type: ignore[arg-type]


def test_progress_is_periodic_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(box_cli.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    p = box_cli.Progress(100, out)
    for k in range(1, 101):
        clock[0] = k * 1.0  # one outcome a second
        p.update(k, f"{k} agree")
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[0] == "box check: 30 of 100 (30 agree), 30 s"


def test_expect_raises_read_from_the_finding() -> None:
    root = Path(__file__).resolve().parents[2]
    assert box_cli._read_expect(str(root / "docs/findings/v_multiview_single_layer_map.toml")) == \
        "tu_fragment_density_map_sample"
    assert box_cli._read_expect(str(root / "docs/findings/v_multiview_two_layer_map.toml")) is None


def test_item_keeps_its_expectation() -> None:
    it = Item(name="x", gpu="a750", scenario=ITEMS[0].scenario, expect_raises="f")
    assert it.expect_raises == "f"


def test_junit_carries_no_character_xml_forbids() -> None:
    import xml.etree.ElementTree as ET

    from turnip_box.check import junit

    bad = Outcome(item=ITEMS[0], status=DIFFER, differences=(Difference("s\x01", "a750", "viewport", 0, 0,
                                                                        "\x1b[31m", "\x00"),), compared=1)
    doc = junit([bad, _o(AGREE), _o(NOT_SUPPORTED)], "26.2.6", {"env.X": "a\x02b"})
    suite = ET.fromstring(doc)  # parses: the control characters became '?'
    assert suite.get("failures") == "1" and suite.get("skipped") == "1" and suite.get("tests") == "3"
    assert "\x1b" not in doc.decode() and "?[31m" in doc.decode()


def test_box_without_the_vk_extra_names_it(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    from turnip_fdm import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("vulkan", "cffi")
                        else real(name, *a))
    for argv in (["box", "info"], ["box", "check", "fdm/data/demo.toml"], ["box", "plan", "fdm/data/demo.toml"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "pip install 'turnip-fdm[vk]'" in err[0], err
