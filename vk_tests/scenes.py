"""The one home of the scene builders every backend's cases use: density layers and maps,
the scenarios of the GPU profiles the cases run on, and the ``floor(255/n)`` bytes of the
R8G8_UNORM maps.  Pure (no Vulkan); imports no other module of the suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from turnip_base.errors import ScenarioError

Pair = tuple[int, int]

#: the profiles every replay group runs on: a6xx (no HW bin scaling, LRZ rule not emitted), a7xx
#: gen1 (no HW bin scaling), a7xx gen3 (HW bin scaling: o')
GPUS: tuple[str, ...] = ("a650", "a730", "a750")
#: per GPU: a framebuffer of 4×4 tiles (3×4 on a750) and the tile size (every bin edge on the
#: 16-pixel grid)
GPU_LAYOUTS: dict[str, tuple[Pair, Pair]] = {"a650": ((288, 128), (96, 32)), "a730": ((256, 128), (64, 32)),
                                             "a750": ((288, 128), (96, 32))}

#: docs/spec/vulkan-fdm-and-cts.md §1.3: the largest UNORM8 byte whose 1/density is at least n
#: (a (2,2) area needs 255/b >= 2: b = 127, not the naive round(255/2) = 128)
AREA_BYTES: dict[int, int] = {n: 255 // n for n in (1, 2, 4, 8, 16)}


def density_byte(n: int) -> int:
    """The R8G8_UNORM byte for a requested fragment extent ``n`` along an axis:
    ``floor(255/n)``, so that ``255/byte >= n`` (§1.3; CTS commit 2f2a73364)."""
    if n < 1:
        raise ScenarioError("n", f"must be >= 1, got {n}")
    return 255 // n


def density_value(n: int) -> float:
    """The density the scenario stores as :func:`density_byte` (``round_half_even(d·255)`` of
    docs/scenario.md gives the byte back)."""
    return density_byte(n) / 255


def bytes_density(nx: int, ny: int | None = None) -> float | list[float]:
    """The scenario density whose stored R8G8 bytes are ``floor(255/n)`` per axis."""
    if ny is None or ny == nx:
        return density_value(nx)
    return [density_value(nx), density_value(ny)]


def hw_note(gpu: str) -> str:
    """How the profile's viewports and scissors are programmed, for a case's description."""
    return "HW bin scaling: viewports and scissors carry o'" if gpu == "a750" else "no HW bin scaling"


# ---- density maps and layers --------------------------------------------------------------
def constant(density: float | Sequence[float], views: int = 1, fmt: str = "R32G32_SFLOAT",
             size: Pair = (8, 8)) -> dict[str, Any]:
    """A map of ``views`` identical constant layers."""
    d: Any = list(density) if isinstance(density, Sequence) else density
    return {"format": fmt, "views": [{"generator": "constant", "size": list(size), "density": d}] * views}


def constant_bytes(nx: int, ny: int, size: Pair, views: int = 1) -> dict[str, Any]:
    """An R8G8_UNORM map of ``views`` constant layers of the bytes for area ``nx`` × ``ny``."""
    return {"format": "R8G8_UNORM",
            "views": [{"generator": "constant", "size": list(size), "density": bytes_density(nx, ny)}] * views}


def radial(size: Pair, center: Sequence[float], radii: Sequence[float] = (48, 96),
           densities: Sequence[float] = (1.0, 0.5, 0.25)) -> dict[str, Any]:
    """A radial layer: ``densities`` in rings of ``radii`` around ``center`` (framebuffer pixels)."""
    return {"generator": "radial", "size": list(size), "center": list(center), "radii": list(radii),
            "densities": list(densities)}


def radial_bytes(size: Pair, center: Sequence[float], radii: Sequence[float], areas: Sequence[int | None]
                 ) -> dict[str, Any]:
    """A radial layer with rings of ``floor(255/n)`` bytes (None: density 0)."""
    return radial(size, center, radii, [0.0 if n is None else density_value(n) for n in areas])


def checker(w: int, h: int) -> dict[str, Any]:
    """A ``w``×``h`` R8G8_UNORM map of bytes 255 / 63 (areas 1x1 / 4x4) alternating per texel."""
    rows = [[density_value(1 if (i + j) % 2 == 0 else 4) for i in range(w)] for j in range(h)]
    return {"format": "R8G8_UNORM", "views": [{"values": rows}]}


def values(rows: Sequence[Sequence[float]]) -> dict[str, Any]:
    """A one-layer R32G32_SFLOAT map of explicit per-texel densities."""
    return {"format": "R32G32_SFLOAT", "views": [{"values": [list(r) for r in rows]}]}


# ---- scenarios ---------------------------------------------------------------------------------
def scenario(gpu: str, **fields: Any) -> dict[str, Any]:
    """A scenario on ``gpu``: the framebuffer and tile size of :data:`GPU_LAYOUTS`, bin merging
    off, then ``fields`` (which may replace any of them)."""
    fb, tile = GPU_LAYOUTS[gpu]
    sc: dict[str, Any] = {"gpu": gpu, "framebuffer": list(fb), "tile_size": list(tile), "bin_merging": "off"}
    sc.update(fields)
    return sc
