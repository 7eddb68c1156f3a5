"""Custom-resolve subpasses (VK_EXT_custom_resolve) in the box: finding q's pass, written into a
subsampled image and into a plain one, agrees with turnip in every ``custom_resolve.*`` field
(``turnip_box.custom_resolve``), and planted bugs of the model's custom-resolve path
(:mod:`layout_solver.custom_resolve`, the custom-resolve functions of :mod:`fdm.patch`) make
``box check`` differ, each naming the field that carries it.  The model is patched in this process;
``turnip_box.check.check`` judges in it (one job: no worker to fork)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomllib

import fdm
import fdm.patch
import layout_solver.custom_resolve as cr
from fdm.scenario import parse_scenario
from turnip_box.check import AGREE, DIFFER, Outcome, check, items_of
from turnip_box.root import Box

ROOT = Path(__file__).resolve().parents[2]
FINDING = "docs/findings/q_custom_resolve_viewport_early_out.toml"
#: a618 (a6xx: no FOVEAT), a750 (HW bin scaling cleared in the subpass), a830 (a8xx registers)
GPUS = ["a618", "a750", "a830"]
pytestmark = pytest.mark.box


def _scenarios() -> list[tuple[str, fdm.Scenario]]:
    sc = fdm.load_scenario(str(ROOT / FINDING))
    assert sc.custom_resolve and sc.subsampled
    # the same pass at density 0.5 without a subsampled attachment: the subpass writes framebuffer
    # space, unscaled, and reads GMEM scaled by the fragment area 2x2
    d = tomllib.loads((ROOT / FINDING).read_text())
    d.pop("expect", None)
    del d["attachments"]
    d["density"]["views"][0]["density"] = 0.5
    return [("q_subsampled", sc), ("q_plain", parse_scenario(d))]


def _run(box: Box, mesa: str | None = None) -> list[Outcome]:
    return check(box, items_of(_scenarios(), GPUS, mesa=mesa), jobs=1)


def _fields(outcomes: list[Outcome]) -> set[str]:
    return {d.field for o in outcomes for d in o.differences}


def test_custom_resolve_passes_agree(box: Box) -> None:
    out = _run(box)
    assert all(o.status == AGREE for o in out), [o.line() for o in out]
    # every run rendered GMEM bins with the FDM on: its custom-resolve subpass was compared per bin
    # (the planted bugs below show those comparisons have teeth)
    assert all(o.bins > 0 and o.plan is not None and getattr(o.plan, "fdm_enabled", False) for o in out)


def test_custom_resolve_passes_agree_on_mesa_26_1(open_box: Callable[..., Box]) -> None:
    """Mesa 26.1.6 (its validation layer knows the subpass flag only as QCOM's shader-resolve bit:
    ``turnip_box.record.VVL_NO_CUSTOM_RESOLVE``) with the model's 26.1 reading."""
    out = _run(open_box("26.1"), mesa="26.1")
    assert all(o.status == AGREE for o in out), [o.line() for o in out]


# ---- planted bugs ----------------------------------------------------------------------------

def _early_out_fixed(orig: Callable[..., bool]) -> Callable[..., bool]:
    """Finding q "fixed" in the model: the viewport never keeps the user's (turnip does)."""
    return lambda *a: False


def _tile_start_framebuffer(orig: Callable[..., Any]) -> Callable[..., Any]:
    """``tile_start`` always the framebuffer bin, never the tile's subsampled position."""
    return lambda st, view, bin_rect: (bin_rect[0], bin_rect[1])


def _gmem_unscaled(orig: Callable[..., Any]) -> Callable[..., Any]:
    """The GMEM fragment area of an unsubsampled view taken as 1 (GMEM read unscaled)."""
    def planted(frag_area: Any, view_subsampled: bool) -> Any:
        rfa, gfa = orig(frag_area, view_subsampled)
        return rfa, (1, 1)
    return planted


def _solver_always(orig: Callable[..., Any]) -> Callable[..., Any]:
    """The solver's layout even where the pass has no subsampled attachment (turnip never runs it)."""
    return lambda layout: layout


PLANTED: dict[str, tuple[Any, str, Callable[[Any], Any], str, str]] = {
    # (module, name, wrapper, the field that must differ, the scenario it must differ on)
    "early_out_fixed": (fdm.patch, "viewport_early_out", _early_out_fixed, "custom_resolve.viewport", "q_subsampled"),
    "tile_start_framebuffer": (cr, "custom_resolve_tile_start", _tile_start_framebuffer,
                               "custom_resolve.fs_params.frag_offset", "q_subsampled"),
    "gmem_unscaled": (fdm.patch, "custom_resolve_frag_areas", _gmem_unscaled, "custom_resolve.fs_params.gmem_scale",
                      "q_plain"),
    "solver_without_subsampled_attachment": (cr, "unsolved_layout", _solver_always, "custom_resolve.scissor",
                                             "q_plain"),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_planted_custom_resolve_bug_is_caught(box: Box, monkeypatch: pytest.MonkeyPatch, bug: str) -> None:
    mod, name, wrap, field, scenario = PLANTED[bug]
    monkeypatch.setattr(mod, name, wrap(getattr(mod, name)))
    out = _run(box)
    differ = [o for o in out if o.status == DIFFER and o.item.name == scenario]
    assert differ, [o.line() for o in out]
    assert field in _fields(differ), sorted(_fields(differ))


def _static(sc_list: list[tuple[str, fdm.Scenario]]) -> list[tuple[str, fdm.Scenario]]:
    """The two passes with their viewports and scissors baked into the pipelines (``static_viewport``)."""
    out = []
    for name, _sc in sc_list:
        d = tomllib.loads((ROOT / FINDING).read_text())
        d.pop("expect", None)
        if name == "q_plain":
            del d["attachments"]
            d["density"]["views"][0]["density"] = 0.5
        d["static_viewport"] = True
        out.append((name + "_static", parse_scenario(d)))
    return out


def test_static_viewports_stay_baked_in_the_subpass_on_mesa_26_1(open_box: Callable[..., Box],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Before Mesa 26.2.2 a pipeline bakes its static viewports and scissors
    (``fdm.patch.bakes_static_viewport``): the custom-resolve subpass's pipeline too, so its
    slots are the user's in every bin (Mesa 26.1.6; the generated sweep found it, seed 7). The
    model without that rule for the subpass differs in ``custom_resolve`` viewports or scissors."""
    box = open_box("26.1")
    items = items_of(_static(_scenarios()), ["a618"], mesa="26.1")
    out = check(box, items, jobs=1)
    assert all(o.status == AGREE for o in out), [o.line() for o in out]
    monkeypatch.setattr(cr, "bakes_static_viewport", lambda *a: False)
    out = check(box, items, jobs=1)
    assert any(o.status == DIFFER for o in out), [o.line() for o in out]
    assert _fields(out) & {"custom_resolve.viewport", "custom_resolve.scissor", "custom_resolve.viewport_scissor"}
