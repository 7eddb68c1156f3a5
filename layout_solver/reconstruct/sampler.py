"""The Vulkan sampler of the CPU reconstruction, on a single-level single-channel image
(sampling rules of docs/spec/vulkan-fdm-and-cts.md §1.8).

NEAREST / LINEAR (texel centres at +0.5, ``i0 = floor(u*w - 0.5)``, weights in float64),
CLAMP_TO_EDGE or CLAMP_TO_BORDER (border colour :data:`BORDER`).  The ``filter`` and
``addressing`` options are validated here (:mod:`layout_solver.options`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..options import Addressing, Filter, as_addressing, as_filter
from ._types import F32Array, FloatArray, IntArray

#: border colour for CLAMP_TO_BORDER (VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK, one channel)
BORDER = 0.0


def _fetch(image: F32Array, i: IntArray, j: IntArray, addressing: Addressing, border: float) -> FloatArray:
    h, w = image.shape
    if addressing == "clamp_to_edge":
        return image[np.clip(j, 0, h - 1), np.clip(i, 0, w - 1)].astype(np.float64)
    inside = (i >= 0) & (i < w) & (j >= 0) & (j < h)
    val = image[np.clip(j, 0, h - 1), np.clip(i, 0, w - 1)].astype(np.float64)
    return np.where(inside, val, border)


def sample(image: F32Array, sx: npt.ArrayLike, sy: npt.ArrayLike, filter: Filter, addressing: Addressing,
           border: float = BORDER) -> FloatArray:
    """Vulkan sampling of a single-level image at texel-space coordinates ``(u*w, v*h)``
    (float64).  NEAREST: texel ``floor``; LINEAR: ``i0 = floor(u*w - 0.5)``, weights from the
    fraction, each of the 4 texels addressed on its own."""
    filter = as_filter(filter)
    addressing = as_addressing(addressing)
    x = np.asarray(sx, dtype=np.float64)
    y = np.asarray(sy, dtype=np.float64)
    if filter == "nearest":
        return _fetch(image, np.floor(x).astype(np.int64), np.floor(y).astype(np.int64), addressing, border)
    x, y = x - 0.5, y - 0.5
    fi0, fj0 = np.floor(x), np.floor(y)
    a, b = x - fi0, y - fj0
    i0, j0 = fi0.astype(np.int64), fj0.astype(np.int64)
    t00 = _fetch(image, i0, j0, addressing, border)
    t10 = _fetch(image, i0 + 1, j0, addressing, border)
    t01 = _fetch(image, i0, j0 + 1, addressing, border)
    t11 = _fetch(image, i0 + 1, j0 + 1, addressing, border)
    return (1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 + a * b * t11
