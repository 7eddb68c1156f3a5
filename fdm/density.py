"""The fragment density map as the driver reads it on the CPU.

A :class:`DensityMap` holds one 2-component layer per view, stored the way the image memory
holds it (``R8G8_UNORM`` bytes or ``R32G32_SFLOAT`` floats).  Generators build maps a person
would draw by hand (a constant map, a foveated radial map); :func:`raw_frag_area` reads one
texel the way ``tu_fragment_density_map_sample`` (src/freedreno/vulkan/tu_image.cc) does.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np
import numpy.typing as npt

from turnip_base.errors import DriverAssertion

from .cmath import F32
from .options import DENSITY_FORMATS, DensityFormat
from .turnip import fdm_texel_shift, unorm8_to_float

FORMATS: tuple[DensityFormat, ...] = DENSITY_FORMATS

#: one stored layer: ``(fdm_h, fdm_w, 2)`` uint8 (R8G8_UNORM) or float32 (R32G32_SFLOAT) texels
Layer = npt.NDArray[np.uint8] | npt.NDArray[np.float32]


@attrs.frozen(eq=False)
class DensityMap:
    """``layers[v]`` is an ``(fdm_h, fdm_w, 2)`` array: uint8 for R8G8_UNORM, float32 for
    R32G32_SFLOAT.  All layers have the same size (one image, one layer per view)."""

    format: DensityFormat
    layers: tuple[Layer, ...]
    #: array layers of the density-map image (``density.image_layers``); None: one per entry of
    #: ``layers`` (a shared entry is then replicated into every layer)
    image_layers: int | None = None

    @property
    def size(self) -> tuple[int, int]:
        h, w = self.layers[0].shape[:2]
        return (int(w), int(h))

    def density(self, view: int, i: int, j: int) -> tuple[np.float32, np.float32]:
        """The unpacked (float32) density of texel ``(i, j)`` of layer ``view``."""
        return unpack_density(self.format, *stored_texel(self, view, (i, j)))


def encode_unorm8(values: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Store densities in [0, 1] as UNORM8 the way an application's upload does
    (``_mesa_float_to_unorm``: round to nearest, ties to even, of ``d * 255``)."""
    v = np.asarray(values, dtype=np.float64)
    return np.rint(v * 255.0).astype(np.uint8)


def encode_layer(values: npt.ArrayLike, fmt: str) -> Layer:
    """Densities in [0, 1] stored as ``fmt`` (``R8G8_UNORM`` bytes, else float32)."""
    if fmt == "R8G8_UNORM":
        return encode_unorm8(values)
    return np.asarray(values, dtype=np.float32)


def check_density_layers(dmap: DensityMap, fdm_layers: int) -> None:
    """turnip samples FDM layer ``i`` from image layer ``i``: ``tu_calc_frag_area``
    (src/freedreno/vulkan/tu_tile_config.cc) passes the view index as the layer of
    ``tu_fragment_density_map_sample`` (tu_image.cc), which reads ``offset + layer_size * layer``
    whatever the view's ``layerCount``.  A map image with fewer layers than the pass's FDM layers
    (multiview views, or per-layer framebuffer layers) is read past its end — undefined; the spec
    has every view read ``baseArrayLayer``.  The box saw it on turnip 26.2.6 (docs/findings.md,
    finding v): view 1 of a one-layer map read zeros, frag area ``UINT32_MAX``.  Raises
    :class:`~turnip_base.errors.DriverAssertion`."""
    n = dmap.image_layers
    if n is not None and n < fdm_layers:
        raise DriverAssertion("tu_fragment_density_map_sample",
                              f"FDM layer {n} reads image layer {n} of a {n}-layer density map, past its end "
                              f"(tu_calc_frag_area passes the view index as the layer; the spec reads "
                              f"baseArrayLayer for every view)")


def raw_frag_area(dmap: DensityMap, view: int, texel: tuple[int, int]) -> tuple[np.float32, np.float32]:
    """``(1.0f / density.x, 1.0f / density.y)`` in float32, as ``tu_fragment_density_map_sample``
    returns it; a density of 0 gives infinity."""
    return raw_frag_area_of(dmap.format, *stored_texel(dmap, view, texel))


def stored_texel(dmap: DensityMap, view: int, texel: tuple[int, int]) -> tuple[float, float]:
    """The two components of texel ``(i, j)`` of layer ``view`` as stored (bytes as ints,
    float32 values as Python floats, exactly)."""
    t = dmap.layers[view][texel[1], texel[0]]
    return t[0].item(), t[1].item()


def unpack_density(fmt: DensityFormat, t0: float, t1: float) -> tuple[np.float32, np.float32]:
    """The float32 density of a texel holding ``(t0, t1)`` as stored: UNORM8 bytes times
    ``1.0f/255`` (:func:`~fdm.turnip.unorm8_to_float`), or the float32 values."""
    if fmt == "R8G8_UNORM":
        return unorm8_to_float(int(t0)), unorm8_to_float(int(t1))
    return F32(t0), F32(t1)


def raw_frag_area_of(fmt: DensityFormat, t0: float, t1: float) -> tuple[np.float32, np.float32]:
    """:func:`raw_frag_area` of a texel holding ``(t0, t1)`` as stored (UNORM8 bytes or float32
    values): the density unpacked and inverted in float32 as ``tu_fragment_density_map_sample``
    (src/freedreno/vulkan/tu_image.cc) does."""
    dx, dy = unpack_density(fmt, t0, t1)
    with np.errstate(divide="ignore"):
        return F32(F32(1.0) / dx), F32(F32(1.0) / dy)


def texel_centres(fb_size: tuple[int, int],
                  fdm_size: tuple[int, int]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Framebuffer-space centres of the map's texels, using the driver's texel size."""
    sx = fdm_texel_shift(fb_size[0], fdm_size[0])
    sy = fdm_texel_shift(fb_size[1], fdm_size[1])
    xs = (np.arange(fdm_size[0], dtype=np.float64) + 0.5) * (1 << sx)
    ys = (np.arange(fdm_size[1], dtype=np.float64) + 0.5) * (1 << sy)
    return xs, ys


def constant_layer(fdm_size: tuple[int, int], density: tuple[float, float]) -> npt.NDArray[np.float64]:
    """A layer with the same density everywhere, as float64 densities."""
    out = np.empty((fdm_size[1], fdm_size[0], 2), dtype=np.float64)
    out[..., 0] = density[0]
    out[..., 1] = density[1]
    return out


def radial_layer(fb_size: tuple[int, int], fdm_size: tuple[int, int], center: tuple[float, float],
                 radii: Sequence[float], densities: Sequence[tuple[float, float]]) -> npt.NDArray[np.float64]:
    """A foveated map: density ``densities[k]`` in ring ``k``, where ring 0 is within
    ``radii[0]`` framebuffer pixels of ``center`` and the last entry applies beyond the last
    radius (``len(densities) == len(radii) + 1``).  Returns float64 densities."""
    xs, ys = texel_centres(fb_size, fdm_size)
    dist = np.hypot(xs[None, :] - center[0], ys[:, None] - center[1])
    ring = np.searchsorted(np.asarray(radii, dtype=np.float64), dist, side="right")
    table = np.asarray(densities, dtype=np.float64).reshape(-1, 2)
    return table[ring]
