"""The subsampled attachment key and :func:`layout_solver.subsampled_pass.subsampled_pass` (the box's
decoder of the same: tests/box/test_stream_subsampled.py)."""

from __future__ import annotations

from typing import Any

import pytest

import fdm
from fdm.plan import RenderPassPlan
from layout_solver.subsampled_pass import stored_attachments, subsampled_pass
from turnip_base.errors import ScenarioError
from turnip_box.jobs import job_of

BASE: dict[str, Any] = {
    "gpu": "a750", "framebuffer": [1152, 640], "bin_merging": "off", "fdm_offset_create_flag": True,
    "fdm_offsets": [[16, 8]],
    "attachments": [{"cpp": 16, "subsampled": True}, {"cpp": 16}, {"cpp": 16}, {"cpp": 4}],
    "density": {"format": "R32G32_SFLOAT", "views": [{"generator": "radial", "size": [36, 20], "center": [576, 320],
                                                      "radii": [150, 300, 450],
                                                      "densities": [1.0, [0.5, 1.0], 0.5, [0.25, 0.5]]}]},
}


def _sc(**kw: Any) -> fdm.Scenario:
    return fdm.parse_scenario({**BASE, **kw})


def test_key_and_refusals() -> None:
    assert _sc().subsampled and not _sc(attachments=[{"cpp": 4}, {"cpp": 4}]).subsampled
    with pytest.raises(ScenarioError, match=r"attachments\[0\]\.subsampled: a subsampled attachment must be "
                                            r"single-sampled, got samples = 4"):
        _sc(attachments=[{"cpp": 4, "samples": 4, "subsampled": True}, {"cpp": 4, "samples": 4}])
    with pytest.raises(ScenarioError, match=r"attachments\[1\]\.subsampled: the last attachment is the depth"):
        _sc(attachments=[{"cpp": 4}, {"cpp": 4, "subsampled": True}])
    with pytest.raises(ScenarioError, match="must be true or false"):
        _sc(attachments=[{"cpp": 4, "subsampled": 1}, {"cpp": 4}])
    assert [a["subsampled"] for a in job_of(_sc(), "x", "/tmp")["attachments"]] == [True, False, False, False]


def test_stored_attachments_and_slop() -> None:
    """Every stored attachment is visited (fdm_subsampled is pass-wide); only the image with both
    the SUBSAMPLED and the FDM_OFFSET create bits has tile_align of slop (tu_image_init; a750: 96x32)."""
    plan = fdm.plan_render_pass(_sc())
    atts = stored_attachments(plan)
    assert [(a.index, a.subsampled, a.size0) for a in atts] == [
        (0, True, (1152 + 96, 640 + 32)), (1, False, (1152, 640)), (2, False, (1152, 640)), (3, False, (1152, 640))]
    stored = fdm.parse_scenario({**BASE, "attachments": [{"cpp": 4, "subsampled": True, "store_op": "dont_care"},
                                                         {"cpp": 4}]})
    assert [a.index for a in stored_attachments(fdm.plan_render_pass(stored))] == [1]


def test_subsampled_pass_parts() -> None:
    plan = fdm.plan_render_pass(_sc())
    assert isinstance(plan, RenderPassPlan)
    sp = subsampled_pass(plan)
    assert sp is not None and sp.layout is not None
    assert len(sp.stores) == len(sp.fast_store) == len(plan.tiles)
    assert len(sp.metadata) == 4  # 4 stored attachments x 1 layer
    # the subsampled image's metadata scales by extent / width0 (slop); the others do not
    assert sp.metadata[0].bins != sp.metadata[1].bins and sp.metadata[1].bins == sp.metadata[2].bins
    assert len(sp.aprons) == 4 and len(set(sp.aprons)) == 1
    assert any(e.kind == "shift" for e in sp.layout.log) and any(e.kind == "unsubsample" for e in sp.layout.log)
    assert subsampled_pass(fdm.plan_render_pass(_sc(attachments=[{"cpp": 4}, {"cpp": 4}]))) is None
    sysmem = subsampled_pass(fdm.plan_render_pass(_sc(tu_debug=["sysmem"])))
    assert sysmem is not None and sysmem.layout is None and not sysmem.aprons
    assert [m.fallback for m in sysmem.metadata] == [True] * 4
