"""Compare a chain read back from a device with a model chain, level by level."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from .formats import Format, Texels


@attrs.frozen
class Comparison:
    per_level: tuple[int, ...]  # worst difference of each level (ulp or LSB)
    tolerance: int

    @property
    def max_error(self) -> int:
        return max(self.per_level) if self.per_level else 0

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance


#: the signed integer type of a float's size (float16, float32)
_SIGNED_OF_SIZE: dict[int, type[np.signedinteger[Any]]] = {2: np.int16, 4: np.int32}


def ordered_int(a: NDArray[Any]) -> NDArray[np.int64]:
    """Floats as integers in the order of their values (ulp distance = integer distance)."""
    bits = _SIGNED_OF_SIZE[a.dtype.itemsize]
    i = a.view(bits).astype(np.int64)
    out: NDArray[np.int64] = np.where(i < 0, np.iinfo(bits).min - i, i)
    return out


def level_error(got: Texels, want: Texels) -> int:
    """Worst difference of one level: LSB for 8-bit texels, ulp for floats."""
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


def compare_chain(got: Sequence[Texels], want: Sequence[Texels], fmt: Format) -> Comparison:
    """Level-by-level comparison of a chain read back (``got``) with a model chain (``want``)."""
    if len(got) != len(want):
        raise ValueError(f"levels: got {len(got)}, model {len(want)}")
    return Comparison(tuple(level_error(g, w) for g, w in zip(got, want, strict=True)), tolerance(fmt))
