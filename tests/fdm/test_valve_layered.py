"""VK_VALVE_fragment_density_map_layered (issue 8 item 8), worked examples checked by hand.

C followed: ``tu_fdm_num_layers`` (tu_cmd_buffer.h), ``tu_calc_frag_area`` /
``tu_fragment_density_map_sample`` (tu_tile_config.cc / tu_image.cc, pop-os @ aee40d4a: layer i
reads density layer i), ``tu_nir_lower_layered_fdm`` (tu_shader.cc, pop-os @ 025a3b4d),
``tu_emit_program_state`` / ``tu6_emit_viewport_fdm`` (tu_pipeline.cc, pop-os @ 26e5c1f9),
``tu6_emit_tile_select`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570), ``tu_emit_subsampled_metadata``
and ``tu_emit_subsampled`` (layers and views, pop-os @ 4ff7b570)."""

from __future__ import annotations

import pytest

from fdm import make_scenario, plan_render_pass
from fdm.plan import RenderPassPlan
from layout_solver import tu_calc_subsampled
from layout_solver.metadata import layout_metadata
from turnip_base.errors import DriverAssertion, ScenarioError


def _layer(density: float) -> dict[str, object]:
    return {"generator": "constant", "size": [24, 16], "density": density}


def _plan(**kw: object) -> RenderPassPlan:
    d: dict[str, object] = dict(gpu="a750", framebuffer=(768, 512), tile_size=(192, 256), bin_merging="off")
    d.update(kw)
    p = plan_render_pass(make_scenario(**d))
    assert isinstance(p, RenderPassPlan)
    return p


def test_per_layer_fdm_three_layers() -> None:
    """a750, 768x512, 3 framebuffer layers with per-layer FDM, densities 1, 0.5, 0.25 per layer.
    tu_fdm_num_layers = fb->layers = 3: every tile has 3 frag areas, (1,1), (2,2), (4,4).  The
    shader writes no viewport, so gl_Layer is copied to gl_ViewportIndex: per_layer_viewport,
    3 slots (max_fdm_layers defaults to the layers), slot i transforms user viewport 0 with layer
    i's scale.  HW bin scaling (layers 3 <= 6, no shared viewport): tile (1,1) at b_cs
    (192, 256) programs o'_i = b_cs - b_cs/fa_i = (0,0), (96,128), (144,192); the patched
    viewport of slot i is then the user viewport scaled by 1/fa_i about the origin:
    (0,0,768,512), (0,0,384,256), (0,0,192,128)."""
    p = _plan(layers=3, fdm_per_layer=True,
              density={"format": "R32G32_SFLOAT", "views": [_layer(1.0), _layer(0.5), _layer(0.25)]})
    assert p.scenario.fdm_layers == 3 and not p.shared_viewport
    assert p.viewport_state.per_layer_viewport and p.viewport_state.slot_count == 3
    t = next(t for t in p.tiles if t.pos == (1, 1))
    assert [v.frag_area for v in t.views] == [(1, 1), (2, 2), (4, 4)]
    assert t.bin_scale_en and t.common_bin_start == (192, 256)
    assert t.foveat.hw_offsets[:3] == ((0, 0), (96, 128), (144, 192))
    assert [s.view for s in t.slots] == [0, 1, 2]
    assert [s.viewport for s in t.slots] == [(0.0, 0.0, 768.0, 512.0), (0.0, 0.0, 384.0, 256.0),
                                             (0.0, 0.0, 192.0, 128.0)]
    # metadata: one layer per framebuffer layer, layer i describing view i
    metas = layout_metadata(tu_calc_subsampled(p))
    assert [(m.layer, m.view) for m in metas] == [(0, 0), (1, 1), (2, 2)]


def test_layered_without_per_layer_fdm_broadcasts_layer_0() -> None:
    """The same 3-layer pass without the per-layer flag: tu_fdm_num_layers = 1 (one density
    layer, one frag area per tile: (2,2) from density 0.5); GMEM still holds 3 layers and
    HW bin scaling counts layers = MAX2(num_views, fb->layers) = 3, so FOVEAT slots 0..2 all
    take view min(i, 0) = 0: o' = (96, 128) on each for tile (1,1); slots 3..5 get 0.  The
    metadata of every framebuffer layer describes view 0."""
    p = _plan(layers=3, density={"format": "R32G32_SFLOAT", "views": [_layer(0.5)]})
    assert p.scenario.fdm_layers == 1 and p.pass_state.layers == 3
    t = next(t for t in p.tiles if t.pos == (1, 1))
    assert [v.frag_area for v in t.views] == [(2, 2)]
    assert t.foveat.hw_offsets == ((96, 128),) * 3 + ((0, 0),) * 3
    assert t.foveat.xscale[:4] == (1, 1, 1, 0)
    metas = layout_metadata(tu_calc_subsampled(p))
    assert [(m.layer, m.view) for m in metas] == [(0, 0), (1, 0), (2, 0)]


def test_layered_schema_rules() -> None:
    dens = {"format": "R32G32_SFLOAT", "views": [_layer(1.0), _layer(0.5)]}
    with pytest.raises(ScenarioError, match="^layers: a multiview pass"):
        make_scenario(gpu="a750", framebuffer=(768, 512), views=2, layers=2, density=dens)
    # per-layer FDM reads one density layer per framebuffer layer: 1 or 3 entries, not 2
    with pytest.raises(ScenarioError, match="density.views"):
        make_scenario(gpu="a750", framebuffer=(768, 512), layers=3, fdm_per_layer=True, density=dens)
    # offsets are per FDM layer
    with pytest.raises(ScenarioError, match="fdm_offsets"):
        make_scenario(gpu="a750", framebuffer=(768, 512), layers=2, fdm_per_layer=True, density=dens,
                      fdm_offset_create_flag=True, fdm_offsets=[[8, 8]])


def test_more_fdm_layer_slots_than_layers_is_undefined() -> None:
    """Finding p: max_fdm_layers 4 on a 2-layer per-layer pass."""
    dens = {"format": "R32G32_SFLOAT", "views": [_layer(1.0), _layer(0.5)]}
    with pytest.raises(DriverAssertion, match="^fdm_apply_viewports: "):
        _plan(layers=2, fdm_per_layer=True, max_fdm_layers=4, density=dens)
    # max_fdm_layers == layers is fine
    assert _plan(layers=2, fdm_per_layer=True, max_fdm_layers=2, density=dens).tiles
