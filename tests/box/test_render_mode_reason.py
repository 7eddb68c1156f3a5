"""The render mode's reason: turnip's u_trace ``end_render_pass`` (``tilingDisableReason``, read by
:mod:`turnip_box.utrace` in the box) against the plan's ``gmem_disable_reason`` (``fdm.plan``,
``use_sysmem_rendering``, tu_cmd_buffer.cc pop-os @ 4ff7b570), and planted model bugs the box
must catch.  The reasons are turnip's texts, written out here from the C, not from the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import fdm
import fdm.plan
from turnip_box.check import AGREE, DIFFER, Outcome, check, items_of
from turnip_box.compare import first_cause
from turnip_box.root import Box
from turnip_box.utrace import PassTrace, render_passes

_MAP = {"views": [{"generator": "constant", "size": [32, 20], "density": 0.5}]}
_FB = [1000, 600]

#: one pass per reason use_sysmem_rendering sets on the paths a scenario reaches: (gpu, scenario,
#: tilingDisableReason as turnip prints it, None for the empty string, tiledRender)
PASSES: list[tuple[str, dict[str, Any], str | None, bool]] = [
    # an FDM pass: the autotuner picks GMEM and sets no reason
    ("a750", {"framebuffer": _FB, "density": _MAP}, None, True),
    # TU_DEBUG=gmem is checked after the tiling and returns false with a reason: GMEM, named
    ("a730", {"framebuffer": _FB, "density": _MAP, "tu_debug": ["gmem"]}, "TU_DEBUG(GMEM)", True),
    ("a618", {"framebuffer": _FB, "density": _MAP, "tu_debug": ["sysmem"]}, "TU_DEBUG(SYSMEM)", False),
    # four 16-byte 4x colour attachments in four views: 1 KiB a pixel, no tile_align block fits
    # a618's GMEM
    ("a618", {"framebuffer": _FB, "density": _MAP, "views": 4, "depth_load_op": "none",
              "attachments": [{"cpp": 16, "samples": 4}] * 4},
     "Can't fit attachments into gmem", False),
    # a618 has no bin mask and 32 VSC pipes: 64x64 tiles cannot be binned
    ("a618", {"framebuffer": [4096, 4096], "density": _MAP, "draws": 5, "depth_load_op": "none",
              "attachments": [{"cpp": 16, "samples": 4}] * 2}, "Too many tiles and HW binning is not possible", False),
    # a stored 4x attachment turns the FDM off; with fewer than 5 draws the autotuner keeps sysmem
    ("a750", {"framebuffer": _FB, "density": _MAP, "attachments": [{"cpp": 4, "samples": 4}] * 2},
     "Autotune selected sysmem", False),
]


def _scenario(gpu: str, d: dict[str, Any]) -> tuple[str, fdm.Scenario]:
    name = f"{gpu}-" + "-".join(d.get("tu_debug", [])) + f"-{len(d.get('attachments', []))}att"
    return name, fdm.parse_scenario({"gpu": gpu, **d})


def _run(box: Box, passes: list[tuple[str, dict[str, Any], str | None, bool]]) -> list[Outcome]:
    return check(box, items_of([_scenario(g, d) for g, d, _, _ in passes], []))


def test_the_printed_line_is_parsed() -> None:
    """u_trace's text printer (u_trace.c print_txt_event) and turnip's end_render_pass print (its
    end_args in tu_tracepoints.py order), as Mesa 26.2.6 printed them in the box."""
    text = ("+----- NS -----+ +-- Δ --+  +----- MSG -----\n"
            "0000000000000000        +0: start_render_pass maxSamples=1, clearCPP=8, cbDisableReason=, width=1000\n"
            "0000000000000000        +0: end_render_pass tiledRender=false, tilingDisableReason=Autotune selected "
            "sysmem, drawCount=1, avgPerSampleBandwidth=0, lrz=true, lrzDisableReason=, lrzStatus=DISABLED, \n"
            "ELAPSED: 0 ns\n"
            "0000000000000000        +0: end_render_pass tiledRender=true, tilingDisableReason=, drawCount=1, \n"
            # Mesa 26.1.6's printer: a colon after the name
            "0000000000000000        +0: end_render_pass: tiledRender=true, tilingDisableReason=TU_DEBUG(GMEM), "
            "drawCount=1, \n")
    assert render_passes(text) == (PassTrace(tiled=False, reason="Autotune selected sysmem"),
                                   PassTrace(tiled=True, reason=None), PassTrace(tiled=True, reason="TU_DEBUG(GMEM)"))


@pytest.mark.box
def test_each_reason_is_turnips(box: Box) -> None:
    """Every pass agrees, and the driver printed the reason written out above for it: GMEM passes
    none (except under TU_DEBUG=gmem), sysmem passes the check that decided."""
    out = _run(box, PASSES)
    assert [o.status for o in out] == [AGREE] * len(PASSES), [(o.item.name, o.status, o.why) for o in out]
    for o, (_, _, reason, tiled) in zip(out, PASSES, strict=True):
        assert o.plan is not None and o.plan.gmem_disable_reason == reason, o.item.name
        assert (o.plan.render_mode == "gmem") == tiled, o.item.name


def _drop_gmem_debug(orig: Callable[..., str | None]) -> Callable[..., str | None]:
    def planted(*a: Any, **k: Any) -> str | None:
        r = orig(*a, **k)
        return None if r == fdm.plan.GMEM_DEBUG else r
    return planted


def _autotune_as_no_fit(orig: Callable[..., str | None]) -> Callable[..., str | None]:
    def planted(*a: Any, **k: Any) -> str | None:
        r = orig(*a, **k)
        return fdm.plan.SYSMEM_NO_FIT if r == fdm.plan.SYSMEM_AUTOTUNE else r
    return planted


TEETH = [("TU_DEBUG=gmem without its reason", _drop_gmem_debug, 1),
         ("the autotuner's sysmem named as no fit", _autotune_as_no_fit, 5)]


@pytest.mark.box
@pytest.mark.parametrize("label,plant,k", TEETH, ids=[t[0] for t in TEETH])
def test_a_wrong_reason_is_caught(box: Box, monkeypatch: pytest.MonkeyPatch, label: str,
                                  plant: Callable[[Callable[..., str | None]], Callable[..., str | None]],
                                  k: int) -> None:
    """The same render mode with the wrong reason: only ``render_mode.reason`` can see it."""
    monkeypatch.setattr(fdm.plan, "gmem_disable_reason", plant(fdm.plan.gmem_disable_reason))
    (o,) = _run(box, [PASSES[k]])
    assert o.status == DIFFER, f"{label}: the box did not notice"
    assert {d.field for d in o.differences} == {"render_mode.reason"}
    d = first_cause(o.differences)
    assert d.driver == PASSES[k][2] and d.model != d.driver
