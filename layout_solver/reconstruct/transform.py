"""The shader-side coordinate transform, vectorised: ``tu_get_subsampled_coordinates`` over
numpy arrays of normalized framebuffer coordinates (docs/spec/turnip-fdm-spec.md §7.7).

float32 throughout, with a correctly rounded fused multiply-add (:func:`ffma_np`); both agree
bit for bit with the scalar model of :mod:`layout_solver.metadata` (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fdm.errors import DriverAssertion

from ..metadata import LAYER_VEC4S, UndefinedMetadataRead, Vec4, layer_header
from ._types import F32Array


def ffma_np(a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike, fused: bool) -> F32Array:
    """float32 ``a * b + c`` element-wise, as :func:`layout_solver.metadata.ffma`: ``fused``
    rounds the exact result once.  The float32 product is exact in float64; the float64 sum
    ``s`` is off by ``e`` (TwoSum), which only matters when ``s`` is exactly halfway between two
    float32 values (any other float64 lies at least one float64 ulp from such a midpoint)."""
    a32, b32, c32 = (np.asarray(t, dtype=np.float32) for t in (a, b, c))
    if not fused:
        return (a32 * b32).astype(np.float32) + c32
    p = a32.astype(np.float64) * b32.astype(np.float64)
    c64 = c32.astype(np.float64)
    s = p + c64
    bb = s - p
    e = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    toward = np.nextafter(r, np.where(s > r64, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
    mid = (r64 != s) & ((s - r64) == (toward.astype(np.float64) - s))
    up = np.maximum(r, toward)
    down = np.minimum(r, toward)
    fix = np.where(e > 0, up, down)
    return np.where(mid & (e != 0), fix, r).astype(np.float32)


def subsampled_coordinates(ubo: Sequence[Vec4 | None], u: npt.ArrayLike, v: npt.ArrayLike, layer: int = 0, *,
                           fused: bool = True) -> tuple[F32Array, F32Array]:
    """``tu_get_subsampled_coordinates`` for arrays of normalized framebuffer coordinates
    (converted to float32): bin ``f2u16(c * hdr.scale + hdr.offset)``, result
    ``c * bin.scale + bin.offset``.  Raises :class:`~layout_solver.metadata.UndefinedMetadataRead`
    / :class:`~fdm.errors.DriverAssertion` (``f2u16``) where the scalar model would."""
    u32 = np.asarray(u, dtype=np.float32)
    v32 = np.asarray(v, dtype=np.float32)
    base = layer * LAYER_VEC4S
    hdr, stride = layer_header(ubo, layer)
    slots = ubo[base + 2:base + LAYER_VEC4S]
    written = np.array([s is not None for s in slots])
    table = np.array([s if s is not None else (0, 0, 0, 0) for s in slots], dtype=np.float32)
    fx = ffma_np(u32, hdr[0], hdr[2], fused)
    fy = ffma_np(v32, hdr[1], hdr[3], fused)
    for f in (fx, fy):
        if not np.all((f >= 0) & (f < 65536)):
            raise DriverAssertion("f2u16", "is undefined outside [0, 65536), and a bin coordinate lies there")
    idx = fy.astype(np.int64) * stride + fx.astype(np.int64)
    if np.any(idx >= len(slots)) or not np.all(written[np.minimum(idx, len(slots) - 1)]):
        raise UndefinedMetadataRead("tu_get_subsampled_coordinates",
                                    "reads only written metadata, but a bin slot that was never written is read")
    bd = table[idx]
    return ffma_np(u32, bd[..., 0], bd[..., 2], fused), ffma_np(v32, bd[..., 1], bd[..., 3], fused)
