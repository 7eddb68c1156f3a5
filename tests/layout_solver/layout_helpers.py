"""Scenario builders shared by the layout-solver tests."""

from __future__ import annotations

from collections.abc import Callable

from fdm.plan import plan_render_pass
from fdm.scenario import parse_scenario
from fdm.turnip import fdm_texel_shift


def texel_values(fb, fdm_size, density_at: Callable[[int, int], float]) -> list[list]:
    """Rows of densities for an FDM of ``fdm_size`` texels over framebuffer ``fb``: each texel
    gets ``density_at(x, y)`` of its framebuffer-space centre (texels are the driver's
    power-of-two size, so choose ``density_at`` by the tile sample points it must serve)."""
    sx = 1 << fdm_texel_shift(fb[0], fdm_size[0])
    sy = 1 << fdm_texel_shift(fb[1], fdm_size[1])
    return [[density_at(i * sx + sx // 2, j * sy + sy // 2) for i in range(fdm_size[0])]
            for j in range(fdm_size[1])]


def scenario(fb=(1000, 600), tile=(192, 160), gpu="a740", values=None, constant=None, fdm_size=(32, 20),
             **kw):
    if values is not None:
        layer = {"values": values}
    else:
        layer = {"generator": "constant", "size": list(fdm_size), "density": constant}
    d = {"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile), "bin_merging": "off",
         "density": {"format": "R32G32_SFLOAT", "views": [layer]}}
    d.update(kw)
    return parse_scenario(d)


def plan(**kw):
    return plan_render_pass(scenario(**kw))
