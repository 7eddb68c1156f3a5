"""The reference scene of the CPU reconstruction: a deterministic procedural single-channel
image of continuous framebuffer coordinates (smooth gradients plus a disc, a stripe and a thin
diagonal line), values in [0, 1].  Every rendered fragment is coloured with it
(:mod:`layout_solver.reconstruct.render`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._types import FloatArray, Pair


def scene(x: npt.ArrayLike, y: npt.ArrayLike, fb_size: Pair) -> FloatArray:
    """The reference scene at framebuffer positions ``(x, y)`` (any shape, float64 result in
    [0, 1]): a smooth gradient, a disc (sharp circular edge), a vertical stripe and a thin
    diagonal line, in coordinates normalized by the framebuffer size."""
    a = np.asarray(x, dtype=np.float64) / fb_size[0]
    b = np.asarray(y, dtype=np.float64) / fb_size[1]
    v = 0.45 + 0.2 * np.sin(2 * np.pi * (1.3 * a + 0.4 * b)) + 0.1 * np.cos(2 * np.pi * 2.1 * b) * a
    v = v + 0.25 * (((a - 0.62) ** 2 + (b - 0.41) ** 2) < 0.17 ** 2)
    v = v - 0.15 * ((a >= 0.30) & (a < 0.33))
    v = v + 0.2 * (np.abs(a - b + 0.1) < 0.004)
    return np.clip(v, 0.0, 1.0)
