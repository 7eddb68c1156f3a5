"""The driver findings of docs/findings.md: each minimal scenario plans, and shows the finding."""

from __future__ import annotations

import glob
import os

from fdm.plan import plan_render_pass
from fdm.scenario import load_scenario

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "findings")


def plan(name):
    return plan_render_pass(load_scenario(os.path.join(DOCS, name)))


def test_every_finding_scenario_plans():
    files = sorted(glob.glob(os.path.join(DOCS, "*.toml")))
    assert len(files) >= 6
    for f in files:
        assert plan_render_pass(load_scenario(f)).tiles


def test_fast_store_selected_for_scaled_bins_without_hw_scaling():
    p = plan("c_fast_store_scaled.toml")
    scaled = [t for t in p.tiles if t.bin_is_scaled]
    assert scaled and all(t.fast_store and not t.bin_scale_en for t in scaled)
    # the event-blit path stores GMEM 1:1, but the bin is a quarter of the framebuffer area it covers
    t = scaled[0]
    fw, fh = t.views[0].frag_area
    assert (fw, fh) != (1, 1)
    (sx0, sy0), (sx1, sy1) = t.blits[0].store_src
    (dx0, dy0), (dx1, dy1) = t.blits[0].store_dst
    assert (dx1 - dx0 + 1) == fw * (sx1 - sx0 + 1) and (dy1 - dy0 + 1) == fh * (sy1 - sy0 + 1)


def test_unorm8_half_density_gives_anisotropic_area():
    p = plan("e_unorm8_half.toml")
    assert {t.views[0].frag_area for t in p.tiles} == {(1, 2)}


def test_density0_view_turns_lrz_off_without_hw_scaling():
    p = plan("f_density0_lrz.toml")
    assert all(t.visible_views == 1 and t.bin_is_scaled and not t.lrz for t in p.tiles)


def test_viewport_scissor_of_scaled_viewport():
    import numpy as np

    from fdm.turnip import tu6_emit_viewport_scissor
    f = np.float32
    assert tu6_emit_viewport_scissor((f(0), f(0), f(500), f(300))) == ((0, 0), (499, 299))
    # fractional start truncates, end rounds up; negative height flips y
    assert tu6_emit_viewport_scissor((f(76.5), f(8), f(10.25), f(-4))) == ((76, 4), (86, 7))
    # zero width grows to one pixel; negative start clamps to 0
    assert tu6_emit_viewport_scissor((f(-3), f(5), f(0), f(1))) == ((0, 5), (0, 5))
