"""The model against Mesa's real turnip (the box), and the teeth: planted model bugs that the box
must catch on named scenarios.  Needs the box (`turnip-fdm box setup`); CI builds it first, and
under ``CI=true`` a missing box fails instead of skipping."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

import fdm
import fdm.gpu
import fdm.plan
import fdm.tile_select
import fdm.turnip
from turnip_box.check import AGREE, DIFFER, Item, Outcome, check, items_of
from turnip_box.inside import VALIDATION_ENV
from turnip_box.jobs import SHIM_GPU_IDS, job_of, model_scenario
from turnip_box.root import Box, environment, launch

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = sorted((ROOT / "docs" / "findings").glob("*.toml"))
pytestmark = pytest.mark.box




#: a pass whose depth image carries the FDM-offset flag and is loaded: tu_lrz_init_state turns
#: LRZ off ("the previous LRZ state cannot be reused")
LOADED_OFFSET_DEPTH = {"gpu": "a730", "framebuffer": [1000, 600], "fdm_offset_create_flag": True,
                       "depth_load_op": "load",
                       "density": {"views": [{"generator": "constant", "size": [32, 20], "density": 1.0}]}}


def _run(box: Box, names: Sequence[str | dict[str, Any]], gpus: list[str]) -> list[Outcome]:
    scs = [(n, fdm.load_scenario(str(ROOT / n))) if isinstance(n, str) else ("inline", fdm.parse_scenario(n))
           for n in names]
    return check(box, items_of(scs, gpus))


def _differ(outcomes: list[Outcome]) -> list[str]:
    return [d.line() for o in outcomes for d in o.differences] + [f"{o.item.name}: {o.why}" for o in outcomes
                                                                 if o.status == "error"]


def test_findings_agree_with_turnip(box: Box) -> None:
    names: list[str | dict[str, Any]] = [str(p.relative_to(ROOT)) for p in FINDINGS]
    names.append("fdm/data/demo.toml")
    out = _run(box, names, ["a730", "a750"])
    assert not _differ(out)
    assert sum(o.status == AGREE for o in out) >= 2 * 25


# ---- teeth: each planted bug must make named scenarios differ -------------------------------

def _neg_hw_offset(orig: Callable[..., Any]) -> Callable[..., Any]:
    def planted(cbo: tuple[int, int], fa: tuple[int, int]) -> tuple[int, int]:
        x, y = orig(cbo, fa)
        return (-x, -y) if (x, y) != (0, 0) else (x, y)
    return planted


def _no_wrap(a: int, m: int) -> int:
    return a  # b_o without the wrap-around: (-u) instead of (-u) mod T


def _lrz_always(gpu: Any, depth_load_op: str, fdm_offset_image: bool) -> Any:
    from fdm.lrz import LrzPassState
    return LrzPassState(valid=depth_load_op != "none", reason="")


TEETH: list[tuple[str, Callable[[pytest.MonkeyPatch], None], list[str | dict[str, Any]], str]] = [
    ("the sign of o'", lambda mp: mp.setattr(fdm.tile_select, "hw_bin_offset",
                                             _neg_hw_offset(fdm.turnip.hw_bin_offset)),
     ["fdm/data/demo.toml"], "a750"),
    ("b_o without wrap-around", lambda mp: mp.setattr(fdm.turnip, "euclid_rem", _no_wrap),
     ["fdm/data/demo.toml"], "a750"),
    ("the tile alignment", lambda mp: mp.setattr(
        fdm.gpu, "get_gpu", (lambda orig: lambda name: attrs.evolve(orig(name), tile_align_w=128))(fdm.gpu.get_gpu)),
     ["fdm/data/demo.toml"], "a730"),
    ("the LRZ rule", lambda mp: mp.setattr(fdm.plan, "tu_lrz_init_state", _lrz_always),
     [LOADED_OFFSET_DEPTH], "a730"),
    ("the MSAA rule", lambda mp: mp.setattr(fdm.plan, "tu_render_pass_disable_fdm", lambda atts: None),
     ["docs/findings/u_msaa_stored_disables_fdm.toml"], "a730"),
]


@pytest.mark.parametrize("label,plant,names,gpu", TEETH, ids=[t[0] for t in TEETH])
def test_planted_model_bug_is_caught(box: Box, monkeypatch: pytest.MonkeyPatch, label: str,
                                     plant: Callable[[pytest.MonkeyPatch], None], names: list[str | dict[str, Any]],
                                     gpu: str) -> None:
    clean = _run(box, names, [gpu])
    assert all(o.status == AGREE for o in clean), _differ(clean)
    plant(monkeypatch)
    planted = _run(box, names, [gpu])
    assert any(o.status == DIFFER for o in planted), f"{label}: the box did not notice"


def test_cli_check_lines_and_status(box: Box, tmp_path: Path) -> None:
    junit = tmp_path / "box.xml"
    r = subprocess.run([sys.executable, "-m", "turnip_fdm", "box", "check", "fdm/data/demo.toml", "--gpu", "a750",
                        "--junit", str(junit)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith("1 agree, 0 differ, 0 not supported: 1 of 1 scenario runs")
    assert b'<testcase classname="box.a750" name="demo"' in junit.read_bytes()


def test_cli_bad_input_is_one_line(box: Box) -> None:
    for argv, field in ((["box", "check", "fdm/data/demo.toml", "--gpu", "a999"], "--gpu"),
                        (["box", "check", "fdm/data/demo.toml", "--mesa", "9.0"], "--mesa"),
                        (["box", "check"], "SCENARIO")):
        r = subprocess.run([sys.executable, "-m", "turnip_fdm", *argv], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == ""
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"turnip-fdm: error: {field}"), r.stderr


def test_unrecordable_is_not_supported_naming_it(box: Box) -> None:
    (o,) = check(box, [Item(name="fork", gpu="a750", scenario=fdm.parse_scenario(
        {"gpu": "a750", "framebuffer": [256, 128], "bin_merging": "fixed",
         "density": {"views": [{"generator": "constant", "size": [8, 4], "density": 0.5}]}}))])
    assert o.status == "not supported" and "tencentmalos" in o.why


def _recorder_lines(box: Box, tmp: Path, validation: str) -> list[dict[str, Any]]:
    """The recorder's lines for two jobs of the demo on a750, with no validation layer to be found
    (VK_LAYER_PATH an empty folder) and ``TURNIP_FDM_BOX_VALIDATION=validation``."""
    sc = model_scenario(fdm.load_scenario(str(ROOT / "fdm/data/demo.toml")), "a750")
    tmp.mkdir()
    jobs = tmp / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [job_of(sc, n, str(tmp / n)) for n in ("one", "two")]}))
    (tmp / "no-layers").mkdir()
    env = environment(box, SHIM_GPU_IDS["a750"], tmp / "scratch")
    assert env[VALIDATION_ENV] == "1"  # the host's default: required
    env.update({"VK_LAYER_PATH": str(tmp / "no-layers"), VALIDATION_ENV: validation})
    r = subprocess.run(launch(box, "turnip_box.record", [str(jobs)], env), env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]


def test_recorder_refuses_without_the_layer_unless_told(box: Box, tmp_path: Path) -> None:
    required = _recorder_lines(box, tmp_path / "required", "1")
    assert [r["name"] for r in required] == ["one", "two"]
    for r in required:
        assert set(r) == {"name", "status", "why", "rd", "validation", "seconds"}
        assert r["status"] == "NotSupported" and not r["rd"]
        assert "VK_LAYER_KHRONOS_validation" in r["why"] and "vulkan-validationlayers" in r["why"], r["why"]
    off = _recorder_lines(box, tmp_path / "off", "0")
    assert [(r["name"], r["status"], r["validation"]) for r in off] == [(n, "Recorded", []) for n in ("one", "two")]
    assert all(len(r["rd"]) == 1 and Path(r["rd"][0]).is_file() for r in off)


#: 1-byte depth attachments, recorded as the stencil-only S8_UINT: cleared, loaded, neither; a
#: 3-view pass with offsets whose S8 image would cap the tiles if it had LRZ; the same pass with
#: the S8 stored and the FDM off (a stored S8 asks for AVOID_CCU)
_S8_MAP = {"views": [{"generator": "constant", "size": [60, 34], "density": 0.5}]}
_S8_OFFSETS = {"framebuffer": [1920, 1080], "views": 3, "fdm_offset_create_flag": True,
               "fdm_offsets": [[96, -72], [-168, 224], [-48, 144]], "density": _S8_MAP}
S8_PASSES: list[str | dict[str, Any]] = [
    *({"gpu": "a750", "framebuffer": [1000, 600], "attachments": [{"cpp": 4}, {"cpp": 1, "store_op": store}],
       "depth_load_op": load, "density": _S8_MAP} for load, store in (("clear", "store"), ("load", "store"),
                                                                      ("dont_care", "dont_care"))),
    {"gpu": "a750", **_S8_OFFSETS, "attachments": [{"cpp": 4, "samples": 4, "store_op": "dont_care"},
                                                   {"cpp": 1, "samples": 4, "store_op": "dont_care"}]},
    {"gpu": "a730", **_S8_OFFSETS, "tu_debug": ["gmem"],
     "attachments": [{"cpp": 4, "samples": 4}, {"cpp": 1, "samples": 4}]},
]


def test_one_byte_depth_is_recorded_as_s8_and_agrees(box: Box) -> None:
    out = _run(box, S8_PASSES, ["a618", "a730", "a750"])
    assert not _differ(out)
    assert all(o.status == AGREE for o in out), [(o.item.name, o.status, o.why) for o in out]
