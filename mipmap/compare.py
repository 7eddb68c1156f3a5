"""Compare a chain read back from a device with a model chain, level by level."""
from __future__ import annotations

import attrs
import numpy as np

from .formats import Format


@attrs.frozen
class Comparison:
    per_level: tuple  # worst difference of each level (ulp or LSB)
    tolerance: int

    @property
    def max_error(self) -> int:
        return max(self.per_level) if self.per_level else 0

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance


def ordered_int(a: np.ndarray) -> np.ndarray:
    """Floats as integers in the order of their values (ulp distance = integer distance)."""
    bits = {2: np.int16, 4: np.int32}[a.dtype.itemsize]
    i = a.view(bits).astype(np.int64)
    return np.where(i < 0, np.iinfo(bits).min - i, i)


def level_error(got: np.ndarray, want: np.ndarray) -> int:
    if got.shape != want.shape:
        raise ValueError(f"level shape: got {got.shape}, model {want.shape}")
    if got.size == 0:
        return 0
    if got.dtype == np.uint8:
        return int(np.abs(got.astype(np.int64) - want.astype(np.int64)).max())
    return int(np.abs(ordered_int(got) - ordered_int(want)).max())


def tolerance(fmt: Format) -> int:
    """R32F must match bit for bit; 8-bit formats within 1 LSB; RGBA16F within 1 ulp."""
    return 0 if fmt.name == "r32f" else 1


def compare_chain(got: list, want: list, fmt: Format) -> Comparison:
    if len(got) != len(want):
        raise ValueError(f"levels: got {len(got)}, model {len(want)}")
    return Comparison(tuple(level_error(g, w) for g, w in zip(got, want, strict=False)), tolerance(fmt))
