"""The design note's offset formulas, written once for integers and for sympy symbols.

``fdm.turnip`` evaluates these functions on integers (exact division, checked), and
``tests/fdm/test_symbolic.py`` evaluates the very same functions on sympy symbols to prove the
identities of fdm.rst ("Coordinate Space Soup", "Hardware scaling registers and LRZ").
Symbols: ``b_cs`` common bin start, ``b_s`` framebuffer bin start, ``b_o`` bin offset,
``fa`` fragment area (``s = 1/fa``).
"""

from __future__ import annotations


def exact_div(a, b):
    """``a / b``: for integers the division must be exact (the driver asserts it); for
    symbolic values, the rational quotient."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0 or a % b:
            raise ValueError(f"{a} is not a multiple of {b}")
        return a // b
    return a / b


def per_bin_offset(b_cs, b_s, fa):
    """o = b_cs - s*b_s: the offset of x -> s*x + o that sends b_s to b_cs."""
    return b_cs - exact_div(b_s, fa)


def hw_offset(b_cs, fa):
    """o' as programmed: b_cs - s*b_cs."""
    return b_cs - exact_div(b_cs, fa)


def lrz_viewport_offset(b_o, fa):
    """The LRZ-space viewport offset fdm.rst derives: o = b_o*s (binning origin -b_o maps to 0)."""
    return exact_div(b_o, fa)


def ideal_hw_offset(b_cs, b_s, b_o, fa):
    """The o' that makes LRZ space consistent: b_cs - (b_s + b_o)*s."""
    return b_cs - exact_div(b_s + b_o, fa)


def shifted_bin_start(b_cs, b_o):
    """b_s = b_cs - b_o (tiles past the first row/column)."""
    return b_cs - b_o
