"""The design note's offset formulas (docs/spec/turnip-fdm-design-note.md), written once for integers and
for sympy symbols.

``fdm.turnip`` evaluates these functions on integers (exact division, checked), and
``tests/fdm/test_symbolic.py`` evaluates the very same functions on sympy symbols to prove the
identities of fdm.rst ("Coordinate Space Soup", "Hardware scaling registers and LRZ").
Symbols: ``b_cs`` common bin start, ``b_s`` framebuffer bin start, ``b_o`` bin offset,
``fa`` fragment area (``s = 1/fa``).
"""

from __future__ import annotations

from typing import Protocol, overload

from turnip_base.errors import DriverAssertion


class Symbolic(Protocol):
    """A value with exact field arithmetic that is not a Python int: a sympy expression."""

    def __add__(self, other: Value, /) -> Symbolic: ...
    def __radd__(self, other: Value, /) -> Symbolic: ...
    def __sub__(self, other: Value, /) -> Symbolic: ...
    def __rsub__(self, other: Value, /) -> Symbolic: ...
    def __truediv__(self, other: Value, /) -> Symbolic: ...
    def __rtruediv__(self, other: Value, /) -> Symbolic: ...


#: an integer (the driver's arithmetic) or a symbolic value (the proofs)
Value = int | Symbolic


@overload
def exact_div(a: int, b: int) -> int: ...
@overload
def exact_div(a: Value, b: Value) -> Value: ...
def exact_div(a: Value, b: Value) -> Value:
    """``a / b``: for integers the division must be exact (the driver asserts it in
    ``tu_fdm_per_bin_offset``); for symbolic values, the rational quotient."""
    if isinstance(a, int):
        if isinstance(b, int):
            if b == 0 or a % b:
                raise DriverAssertion("tu_fdm_per_bin_offset",
                                      f"asserts an exact division: {a} is not a multiple of {b}")
            return a // b
        return a / b
    return a / b


@overload
def per_bin_offset(b_cs: int, b_s: int, fa: int) -> int: ...
@overload
def per_bin_offset(b_cs: Value, b_s: Value, fa: Value) -> Value: ...
def per_bin_offset(b_cs: Value, b_s: Value, fa: Value) -> Value:
    """o = b_cs - s*b_s: the offset of x -> s*x + o that sends b_s to b_cs."""
    return b_cs - exact_div(b_s, fa)


@overload
def hw_offset(b_cs: int, fa: int) -> int: ...
@overload
def hw_offset(b_cs: Value, fa: Value) -> Value: ...
def hw_offset(b_cs: Value, fa: Value) -> Value:
    """o' as programmed: b_cs - s*b_cs."""
    return b_cs - exact_div(b_cs, fa)


@overload
def lrz_viewport_offset(b_o: int, fa: int) -> int: ...
@overload
def lrz_viewport_offset(b_o: Value, fa: Value) -> Value: ...
def lrz_viewport_offset(b_o: Value, fa: Value) -> Value:
    """The LRZ-space viewport offset fdm.rst derives: o = b_o*s (binning origin -b_o maps to 0)."""
    return exact_div(b_o, fa)


@overload
def ideal_hw_offset(b_cs: int, b_s: int, b_o: int, fa: int) -> int: ...
@overload
def ideal_hw_offset(b_cs: Value, b_s: Value, b_o: Value, fa: Value) -> Value: ...
def ideal_hw_offset(b_cs: Value, b_s: Value, b_o: Value, fa: Value) -> Value:
    """The o' that makes LRZ space consistent: b_cs - (b_s + b_o)*s."""
    return b_cs - exact_div(b_s + b_o, fa)


@overload
def shifted_bin_start(b_cs: int, b_o: int) -> int: ...
@overload
def shifted_bin_start(b_cs: Value, b_o: Value) -> Value: ...
def shifted_bin_start(b_cs: Value, b_o: Value) -> Value:
    """b_s = b_cs - b_o (tiles past the first row/column)."""
    return b_cs - b_o
