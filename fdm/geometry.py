"""Small frozen value types shared by the model."""

from __future__ import annotations

import attrs


@attrs.frozen
class Rect:
    """An integer rectangle ``(x, y, w, h)`` (``VkRect2D``; extents are never negative here)."""

    x: int
    y: int
    w: int
    h: int

    @property
    def offset(self) -> tuple[int, int]:
        return (self.x, self.y)

    @property
    def extent(self) -> tuple[int, int]:
        return (self.w, self.h)

    @property
    def x2(self) -> int:
        return self.x + self.w

    @property
    def y2(self) -> int:
        return self.y + self.h

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.x, self.y, self.w, self.h)

    def contains(self, other: Rect) -> bool:
        return (self.x <= other.x and self.y <= other.y
                and other.x2 <= self.x2 and other.y2 <= self.y2)
