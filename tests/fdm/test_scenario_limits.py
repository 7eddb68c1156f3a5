"""Big scenario files are refused before they are decoded: the limits of the scenario's text
(docs/scenario.md, "Limits") are counted over the text, so a 16 MB density map or 100,000
viewports cost milliseconds, not the decoder's seconds (tomllib: half a minute for 16 MB) or,
for a long dotted TOML key, minutes and gigabytes.  Each test plants a decoder that fails the
test if it is called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import fdm
from fdm import scenario
from turnip_base.errors import ScenarioError

HEAD = {"gpu": "a650", "framebuffer": [640, 480], "views": 1}
DENSITY = {"views": [{"generator": "constant", "size": [20, 15], "density": 0.5}]}


@pytest.fixture
def no_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("the decoder ran on a text that is over a limit")

    monkeypatch.setattr(scenario.json, "loads", refuse)
    monkeypatch.setattr(scenario._toml, "loads", refuse)


def refusal(path: Path) -> str:
    with pytest.raises(ScenarioError) as e:
        fdm.load_scenario(str(path))
    return str(e.value)


def big_map_text(fmt: str, n: int = 2000) -> str:
    """A density map of n x n values, the way a user would write it (16 MB at n = 2000)."""
    row = "[" + ",".join(["0.5"] * n) + "]"
    values = "[" + ",\n".join([row] * n) + "]"
    if fmt == "json":
        return ('{"gpu": "a650", "framebuffer": [2048, 2048], "views": 1, '
                f'"density": {{"views": [{{"values": {values}}}]}}}}')
    return f'gpu = "a650"\nframebuffer = [2048, 2048]\nviews = 1\n[density]\nviews = [{{values = {values}}}]\n'


@pytest.mark.usefixtures("no_decoding")
def test_a_16_mb_density_map_is_refused_before_decoding(tmp_path: Path) -> None:
    (tmp_path / "map.json").write_text(big_map_text("json"))
    (tmp_path / "map.toml").write_text(big_map_text("toml"))
    assert refusal(tmp_path / "map.json") == "scenario: a JSON scenario has at most 262144 commas (values), got 4000003"
    assert "has 16006082 bytes, more than the limit 1048576" in refusal(tmp_path / "map.toml")


@pytest.mark.usefixtures("no_decoding")
def test_100000_viewports_in_toml_are_refused_before_decoding(tmp_path: Path) -> None:
    viewports = ", ".join(["[0, 0, 64, 64]"] * 100_000)
    (tmp_path / "vp.toml").write_text(f'gpu = "a650"\nviewports = [{viewports}]\n')
    assert "more than the limit 1048576" in refusal(tmp_path / "vp.toml")
    viewports = ", ".join(["[0, 0, 64, 64]"] * 20_000)   # under the byte limit: the commas
    (tmp_path / "vp2.toml").write_text(f'gpu = "a650"\nviewports = [{viewports}]\n')
    assert refusal(tmp_path / "vp2.toml") == ("scenario: a TOML scenario has at most 65536 commas and line breaks "
                                              "(values and keys), got 80001 (a large density map: JSON or an image)")


def test_100000_viewports_in_json_are_refused_by_their_commas_or_count(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "vp2.json").write_text(json.dumps(dict(HEAD, density=DENSITY, viewports=[[0, 0, 64, 64]] * 20_000)))
    assert refusal(tmp_path / "vp2.json") == "viewports: must have at most 64 elements, got 20000"
    monkeypatch.setattr(scenario.json, "loads", None)   # not decoded: a call would raise TypeError
    (tmp_path / "vp.json").write_text(json.dumps(dict(HEAD, density=DENSITY, viewports=[[0, 0, 64, 64]] * 100_000)))
    assert refusal(tmp_path / "vp.json") == "scenario: a JSON scenario has at most 262144 commas (values), got 400007"


@pytest.mark.usefixtures("no_decoding")
@pytest.mark.parametrize("key", ["a" + ".a" * 300_000, "[x" + ".x" * 20 + "]", '"q".b.c.d.e.f.g.h.i',
                                 "{ y = 1, a.b.c.d.e.f.g.h.i"])
def test_a_long_dotted_toml_key_is_refused_before_decoding(tmp_path: Path, key: str) -> None:
    """tomllib needs time and memory in the square of a dotted key's parts (300,000 parts: more
    than 5 minutes, then the kernel kills it for memory)."""
    line = f"{key} = 1\n" if not key.startswith("[") else f"{key}\nb = 1\n"
    (tmp_path / "key.toml").write_text(line if not key.startswith("{") else f"t = {key} = 2 }}\n")
    assert refusal(tmp_path / "key.toml") == ("scenario: a dotted key has at most 8 parts "
                                              "(arrays and tables nest at most 8 deep)")


@pytest.mark.parametrize("text", [
    'name = "v1.2.3.4.5.6.7.8.9.10"\n',                 # dots in a string are not a key
    "name = 'x, a.b.c.d.e.f.g.h.i.j'\n",
    "a.b.c.d.e.f.g.h = 1\n",                            # 8 parts: the limit
    'x = [\n  "a.b.c.d.e.f.g.h.i.j",\n]\n',
])
def test_what_the_text_limits_let_through(text: str) -> None:
    scenario.check_scenario_text(text, "toml")


def test_the_counts_at_their_limits() -> None:
    scenario.check_scenario_text("," * scenario.MAX_JSON_COMMAS, "json")
    with pytest.raises(ScenarioError, match="262144 commas"):
        scenario.check_scenario_text("," * (scenario.MAX_JSON_COMMAS + 1), "json")
    scenario.check_scenario_text("\n" * scenario.MAX_TOML_ITEMS, "toml")
    with pytest.raises(ScenarioError, match="65536 commas and line breaks"):
        scenario.check_scenario_text("\n," * (scenario.MAX_TOML_ITEMS // 2 + 1), "toml")


def test_an_inline_map_under_the_limit_still_loads(tmp_path: Path) -> None:
    (tmp_path / "map.json").write_text(big_map_text("json", 360).replace("[2048, 2048]", "[360, 360]"))
    sc = fdm.load_scenario(str(tmp_path / "map.json"))
    assert sc.framebuffer == (360, 360)


@pytest.mark.parametrize(("values", "words"), [
    ([[0, 2]], "got 2"), ([[0.5, True]], "got bool"), ([[[0.5, 0.5], [0.5, "x"]]], "got str"),
    ([[1, 0.5]] * 3 + [[-1, 0.5]], "got -1"), ([[[[0.5]]]], "nest at most 3 deep"),
])
def test_the_fast_density_check_keeps_every_rule(tmp_path: Path, values: object, words: str) -> None:
    d = dict(HEAD, density={"views": [{"values": values}]})
    (tmp_path / "s.json").write_text(json.dumps(d))
    assert words in refusal(tmp_path / "s.json")


@pytest.mark.parametrize(("data", "deep"), [
    ({"a": [[[[[[[1]]]]]]]}, False), ({"a": [[[[[[[[1]]]]]]]]}, True), ([[[[[[[[[]]]]]]]]], False),
    ([[[[[[[[[[]]]]]]]]]], True), ({"a": {"b": [{"c": [[[[{}]]]]}]}}, False),
    ({"a": {"b": [{"c": [[[[{"d": 0}]]]]}]}}, True),
])
def test_the_nesting_walk_counts_as_before(data: object, deep: bool) -> None:
    if deep:
        with pytest.raises(ScenarioError, match="nest at most 8 deep"):
            scenario._check_nesting(data)
    else:
        scenario._check_nesting(data)
