"""The exact area-weighted box filter ("NP2 box"), level by level.

Per axis with input size D and output size n = max(1, D >> 1):

* D == 1: copy;
* D even: ``(a[2j] + a[2j+1]) * 0.5``;
* D odd (D = 2n + 1): weights ``(n - j, n, j + 1) / (2n + 1)`` on ``a[2j], a[2j+1], a[2j+2]``.

The vertical pass runs first, then the horizontal one. In float32 the operations are the
shaders' own, in their order: ``rcp = 1 / (2n + 1)`` (from the host table),
``w0 = rcp * (n - j)``, ``w1 = rcp * n``, ``w2 = (1 - w0) - w1``,
``(w0 * a0 + w1 * a1) + w2 * a2``; every product and sum is rounded separately (the
shaders mark them ``precise``). In float64 the weights are the exact quotients.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from turnip_base.errors import ScenarioError

from .formats import F32, F32Array, Format, Texels, decode, encode

#: one level of float32 values -> the next (the box filter, or SPD's rule)
Reduce = Callable[[F32Array], F32Array]


def level_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """(width, height) of every level, level 0 first, down to 1x1."""
    if width < 1 or height < 1:
        raise ScenarioError("size", f"width and height must be >= 1, got {width}x{height}")
    sizes = [(width, height)]
    while sizes[-1] != (1, 1):
        w, h = sizes[-1]
        sizes.append((max(1, w >> 1), max(1, h >> 1)))
    return sizes


def axis_weights(d: int, dtype: DTypeLike = np.float64) -> NDArray[Any]:
    """Weights of one axis reduction from size d: an (n, k) array, k = 1, 2 or 3 taps."""
    n = max(1, d >> 1)
    if d == 1:
        return np.ones((1, 1), dtype=dtype)
    if d % 2 == 0:
        return np.full((n, 2), 0.5, dtype=dtype)
    j = np.arange(n)
    if np.dtype(dtype) == np.float64:
        return np.stack([(n - j), np.full(n, n), (j + 1)], axis=1) / float(2 * n + 1)
    rcp = F32(1) / (F32(2) * F32(n) + F32(1))  # = rcp_table(n)[n], the shaders' table entry
    w0 = rcp * (F32(n) - j.astype(F32))
    w1 = np.full(n, rcp * F32(n), dtype=F32)
    w2 = (F32(1) - w0) - w1
    return np.stack([w0, w1, w2], axis=1).astype(F32)


def reduce_axis(a: NDArray[Any], axis: int) -> NDArray[Any]:
    """One axis of one level, in a's dtype (float32: the shaders' operation order)."""
    a = np.moveaxis(a, axis, 0)
    d = a.shape[0]
    dtype = a.dtype.type
    w = axis_weights(d, a.dtype)
    n = w.shape[0]
    extra = (slice(None),) + (None,) * (a.ndim - 1)
    if d == 1:
        out = a.copy()
    elif d % 2 == 0:
        out = (a[0:2 * n:2] + a[1:2 * n:2]) * dtype(0.5)
    else:
        out = (w[:, 0][extra] * a[0:2 * n:2] + w[:, 1][extra] * a[1:2 * n + 1:2]) + w[:, 2][extra] * a[2:2 * n + 1:2]
    return np.moveaxis(out.astype(a.dtype, copy=False), 0, axis)


def reduce_level(a: NDArray[Any]) -> NDArray[Any]:
    """Next level of an H x W (x C) array: vertical pass first, then horizontal."""
    return reduce_axis(reduce_axis(a, 0), 1)


def reference_chain(image: ArrayLike, dtype: DTypeLike = np.float64) -> list[NDArray[Any]]:
    """Box-filter mip chain of an H x W or H x W x C array: level 0 first, down to 1x1.

    ``dtype`` float64 gives the ideal filter; float32 replays the shaders' operations.
    """
    a = np.asarray(image)
    if a.ndim not in (2, 3):
        raise ScenarioError("image", f"must be H x W or H x W x C, got shape {a.shape}")
    level_sizes(a.shape[1], a.shape[0])  # validates the size
    a = a.astype(dtype)
    chain = [a]
    while chain[-1].shape[:2] != (1, 1):
        chain.append(reduce_level(chain[-1]))
    return chain


def stored_chain(level0: Texels, fmt: Format, reduce: Reduce = reduce_level) -> list[Texels]:
    """The chain a GPU stores: each level decoded, filtered in float32, encoded to the format.

    ``level0`` holds stored texels (H x W x C in the format's storage dtype). ``reduce``
    maps a float32 level to the next (the box filter by default; SPD's rule in spd_model).
    """
    chain = [np.asarray(level0)]
    while chain[-1].shape[:2] != (1, 1):
        chain.append(encode(reduce(decode(chain[-1], fmt)), fmt))
    return chain
