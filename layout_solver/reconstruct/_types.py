"""Array and tuple types shared by the reconstruction modules."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]
#: float64 arrays: positions, texel coordinates, sampled values, bounds
FloatArray = npt.NDArray[np.float64]
#: float32 arrays: images in memory, normalized coordinates of the shader
F32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
