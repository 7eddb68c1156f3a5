"""Fixtures of the layout-solver tests: a scenario builder, a density-map builder and the
worked examples of docs/spec/turnip-fdm-spec.md that several test modules use.

(Test modules are imported with ``--import-mode=importlib`` and cannot import one another; what
they share lives here.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from fdm.plan import RenderPassPlan, plan_render_pass
from fdm.scenario import make_scenario
from fdm.turnip import fdm_texel_shift

Pair = tuple[int, int]
Density = Any  # a density (float) or a pair [x, y] of one texel
TexelValues = Callable[[Pair, Pair, Callable[[int, int], Density]], list[list[Density]]]


def _texel_values(fb: Pair, fdm_size: Pair, density_at: Callable[[int, int], Density]) -> list[list[Density]]:
    """Rows of densities for an FDM of ``fdm_size`` texels over framebuffer ``fb``: each texel
    gets ``density_at(x, y)`` of its framebuffer-space centre (texels are the driver's
    power-of-two size, so choose ``density_at`` by the tile sample points it must serve)."""
    sx = 1 << fdm_texel_shift(fb[0], fdm_size[0])
    sy = 1 << fdm_texel_shift(fb[1], fdm_size[1])
    return [[density_at(i * sx + sx // 2, j * sy + sy // 2) for i in range(fdm_size[0])]
            for j in range(fdm_size[1])]


def _plan(*, fb: Pair = (1000, 600), tile: Pair = (192, 160), gpu: str = "a740",
          values: Sequence[Sequence[Density]] | None = None, constant: float | None = None,
          fdm_size: Pair | None = (32, 20), **kw: Any) -> RenderPassPlan:
    """A one-layer R32G32_SFLOAT density map (``values`` rows, or ``constant`` over ``fdm_size``
    texels), bin merging off unless ``kw`` says otherwise; ``kw`` are further scenario fields."""
    if values is not None:
        layer: dict[str, Any] = {"values": values}
    else:
        layer = {"generator": "constant", "size": list(fdm_size or ()), "density": constant}
    fields: dict[str, Any] = {"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile), "bin_merging": "off",
                              "density": {"format": "R32G32_SFLOAT", "views": [layer]}}
    fields.update(kw)
    return plan_render_pass(make_scenario(**fields))


@pytest.fixture(scope="session")
def texel_values() -> TexelValues:
    """``texel_values(fb, fdm_size, density_at)``: the rows of a density map whose texels take
    ``density_at`` of their framebuffer-space centres."""
    return _texel_values


@pytest.fixture(scope="session")
def make_plan() -> Callable[..., RenderPassPlan]:
    """``make_plan(fb=, tile=, gpu=, values= | constant= [, fdm_size=], **fields)``: the plan of a
    one-layer scenario (a740, 1000 x 600, T = 192 x 160, 32 x 20 texels by default)."""
    return _plan


@pytest.fixture(scope="session")
def plan_11_7() -> RenderPassPlan:
    """§11.7: a740, 1000x600, T = 192x160, column 0 fa (1,1), the others (2,2).  32-px FDM texels:
    tile centres x = 96 (texel 3) for column 0 and >= 288 for the others."""
    return _plan(values=_texel_values((1000, 600), (32, 20), lambda x, y: 1.0 if x < 192 else 0.5))


@pytest.fixture(scope="session")
def plan_11_9() -> RenderPassPlan:
    """§11.9: §11.7's framebuffer with a constant density 0.5 and FDM offset (40, -16)."""
    return _plan(constant=0.5, fdm_offset_create_flag=True, fdm_offsets=[[40, -16]])


@pytest.fixture(scope="session")
def plan_11_13() -> RenderPassPlan:
    """§11.13: T = 96x32, 97x94 (last column 1 px), rows 0-1 fa (1,1), (0,2) (2,2), (1,2) (1,4).
    FDM 4x3 texels of 32 px: sample points x = 48 / 96, y = 16 / 48 / 79."""
    vals = _texel_values((97, 94), (4, 3),
                         lambda x, y: [1.0, 1.0] if y < 64 else ([0.5, 0.5] if x < 96 else [1.0, 0.25]))
    return _plan(fb=(97, 94), tile=(96, 32), values=vals)


@pytest.fixture(scope="session")
def plan_merged_stick() -> RenderPassPlan:
    """a740, 193 x 65, T = 96 x 32, FDM offsets (0, 0): rows 1-2 of columns 1 and 2 have fa
    (1, 2) and are merged into one vertical tile that sticks to the bottom edge."""
    vals = _texel_values((193, 65), (6, 4), lambda x, y: [1.0, 1.0] if (y < 32 or x < 96) else [1.0, 0.5])
    return _plan(fb=(193, 65), tile=(96, 32), values=vals, fdm_offset_create_flag=True, fdm_offsets=[[0, 0]],
                 bin_merging="upstream")
