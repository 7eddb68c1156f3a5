"""The shader-side coordinate transform, vectorised: ``tu_get_subsampled_coordinates`` over
numpy arrays of normalized framebuffer coordinates (docs/spec/turnip-fdm-spec.md §7.7).

float32 throughout, with a correctly rounded fused multiply-add (:func:`ffma_np`); both agree
bit for bit with the scalar model of :mod:`layout_solver.metadata` (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from turnip_base.errors import DriverAssertion

from ..metadata import LAYER_VEC4S, UndefinedMetadataRead, Vec4, layer_header
from ._types import F32Array

#: the float64 bits below a float32 significand (52 - 23): a float64 ``s`` of the float32 normal
#: range lies exactly halfway between two float32 values iff these bits are ``100...0``
_LOW_BITS = np.uint64((1 << 29) - 1)
_HALF_BITS = np.uint64(1 << 28)
#: the float32 normal range ``[2**-126, 2**128)``, where that test holds
_F32_NORMAL_MIN = 2.0 ** -126
_F32_RANGE_END = 2.0 ** 128


def _ffma_fused_general(a32: F32Array, b32: F32Array, c32: F32Array) -> F32Array:
    """The fused float32 ``a * b + c`` for any inputs (subnormal and overflowing results,
    infinities): float64 sum ``s`` and its TwoSum error ``e``; where ``s`` is exactly halfway
    between two float32 values, ``e`` says which of them the exact sum is nearer to."""
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


def ffma_np(a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike, fused: bool) -> F32Array:
    """float32 ``a * b + c`` element-wise, as :func:`layout_solver.metadata.ffma`, bit for bit:
    ``fused`` rounds the exact result once, otherwise the product is rounded first.

    Fused: the product of two float32 is exact in float64 and the float64 sum ``s`` is the
    exact sum correctly rounded, so rounding ``s`` to float32 gives the correctly rounded
    result unless ``s`` lies exactly halfway between two float32 values while the exact sum
    does not (double rounding: a float32 midpoint strictly between ``s`` and the exact sum
    would be a float64 nearer to it than ``s``).  Midpoints are found from the bits of ``s``
    (float32 normal range) and only those elements get the TwoSum error term that decides
    the side; results outside the normal range take :func:`_ffma_fused_general`."""
    a32, b32, c32 = np.broadcast_arrays(*(np.asarray(t, dtype=np.float32) for t in (a, b, c)))
    if not fused:
        return np.asarray((a32 * b32).astype(np.float32) + c32, dtype=np.float32)
    p = a32.astype(np.float64) * b32.astype(np.float64)
    c64 = c32.astype(np.float64)
    s = p + c64
    r = s.astype(np.float32)
    mag = np.abs(s)
    regular = (mag >= _F32_NORMAL_MIN) & (mag < _F32_RANGE_END)
    mid = regular & ((s.view(np.uint64) & _LOW_BITS) == _HALF_BITS)
    irregular = ~regular & (s != 0)
    if mid.any():
        k = np.flatnonzero(mid)
        sk, pk, ck = s.flat[k], p.flat[k], c64.flat[k]
        bb = sk - pk
        e = (pk - (sk - bb)) + (ck - bb)   # TwoSum: exact = s + e
        # the float32 neighbours of s: toward zero (s with the midpoint bit cleared) and away
        toward0 = (sk.view(np.uint64) & ~_LOW_BITS).view(np.float64).astype(np.float32)
        away = np.nextafter(toward0, np.where(sk > 0, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
        pick = np.where((e > 0) == (sk > 0), away, toward0)
        r.flat[k] = np.where(e != 0, pick, r.flat[k])
    if irregular.any():
        k = np.flatnonzero(irregular)
        r.flat[k] = _ffma_fused_general(a32.flat[k], b32.flat[k], c32.flat[k])
    return r


def subsampled_coordinates(ubo: Sequence[Vec4 | None], u: npt.ArrayLike, v: npt.ArrayLike, layer: int = 0, *,
                           fused: bool = True) -> tuple[F32Array, F32Array]:
    """``tu_get_subsampled_coordinates`` for arrays of normalized framebuffer coordinates
    (converted to float32): bin ``f2u16(c * hdr.scale + hdr.offset)``, result
    ``c * bin.scale + bin.offset``.  Raises :class:`~layout_solver.metadata.UndefinedMetadataRead`
    / :class:`~turnip_base.errors.DriverAssertion` (``f2u16``) where the scalar model would."""
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
