"""Small frozen value types shared by the model."""

from __future__ import annotations

from typing import Tuple

import attrs


@attrs.frozen
class Rect:
    """An integer rectangle ``(x, y, w, h)`` (``VkRect2D``; extents are never negative here)."""

    x: int
    y: int
    w: int
    h: int

    @property
    def offset(self) -> Tuple[int, int]:
        return (self.x, self.y)

    @property
    def extent(self) -> Tuple[int, int]:
        return (self.w, self.h)

    @property
    def x2(self) -> int:
        return self.x + self.w

    @property
    def y2(self) -> int:
        return self.y + self.h

    def as_tuple(self) -> Tuple[int, int, int, int]:
        return (self.x, self.y, self.w, self.h)

    def is_empty(self) -> bool:
        return self.w <= 0 or self.h <= 0

    def contains(self, other: "Rect") -> bool:
        return (self.x <= other.x and self.y <= other.y
                and other.x2 <= self.x2 and other.y2 <= self.y2)

    def intersection(self, other: "Rect") -> "Rect":
        x1, y1 = max(self.x, other.x), max(self.y, other.y)
        x2, y2 = min(self.x2, other.x2), min(self.y2, other.y2)
        return Rect(x1, y1, max(x2 - x1, 0), max(y2 - y1, 0))
