"""C integer and float32 arithmetic as turnip's C code performs it.

Every helper here is a pure function on Python ints (or numpy.float32 scalars) that
reproduces one C idiom used by the driver: truncating division, ``DIV_ROUND_UP``,
``util_logbase2``/``util_logbase2_ceil`` (src/util/u_math.h), uint32 wrap-around and
``modff`` on float32.
"""

from __future__ import annotations

import math

import numpy as np

from turnip_base.errors import DriverAssertion

UINT32_MAX = 0xFFFFFFFF
F32 = np.float32


def c_div(a: int, b: int) -> int:
    """C ``a / b`` on signed integers: the quotient truncated towards zero."""
    if b == 0:
        raise ZeroDivisionError("C division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def div_round_up(a: int, b: int) -> int:
    """``DIV_ROUND_UP(a, b)`` = ``(a + b - 1) / b`` for non-negative operands (u_math.h)."""
    if a < 0 or b <= 0:
        raise DriverAssertion("DIV_ROUND_UP", f"needs a >= 0 and b > 0, got a = {a}, b = {b}")
    return (a + b - 1) // b


def u32(x: int) -> int:
    """The value of ``x`` stored in a ``uint32_t`` (wraps modulo 2**32)."""
    return x & UINT32_MAX


def logbase2(n: int) -> int:
    """``util_logbase2``: floor(log2 n) for n >= 1 and 0 for n == 0."""
    if n < 0:
        raise DriverAssertion("util_logbase2", f"takes an unsigned value: n >= 0, got {n}")
    return n.bit_length() - 1 if n > 0 else 0


def logbase2_ceil(n: int) -> int:
    """``util_logbase2_ceil``: ceil(log2 n) for n > 1 and 0 for n <= 1."""
    if n <= 1:
        return 0
    return (n - 1).bit_length()


def is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def ctz(n: int) -> int:
    """Count of trailing zero bits of ``n > 0`` (``ffs(n) - 1``)."""
    return (n & -n).bit_length() - 1


def align_npot(v: int, a: int) -> int:
    """``align_npot``: round ``v >= 0`` up to a multiple of ``a`` (any ``a > 0``)."""
    return div_round_up(v, a) * a


def modff(x: np.float32) -> tuple[np.float32, np.float32]:
    """C ``modff`` on a finite float32: (integral part, fractional part), both float32 and exact."""
    x = F32(x)
    ip = F32(math.trunc(float(x)))
    return ip, F32(x - ip)


def f32_to_u32(x: np.float32, field: str = "(uint32_t)") -> int:
    """C ``(uint32_t)x`` for a float32 in [0, 2**32): truncation towards zero.

    Values outside that range are undefined behaviour in C; they raise
    :class:`~turnip_base.errors.DriverAssertion` naming ``field`` (the driver function doing the cast).
    """
    xf = float(x)
    if not (0.0 <= xf < 4294967296.0):
        raise DriverAssertion(field, f"(uint32_t){xf!r} is undefined behaviour in C: needs 0 <= x < 2**32")
    return int(xf)


def f32_to_i32(x: np.float32, field: str = "(int)") -> int:
    """C ``(int)x`` for a float32 in int32 range: truncation towards zero.

    Values outside that range are undefined behaviour in C; they raise
    :class:`~turnip_base.errors.DriverAssertion` naming ``field`` (the driver function doing the cast).
    """
    xf = float(x)
    if not (-2147483648.0 <= xf < 2147483648.0):
        raise DriverAssertion(field, f"(int){xf!r} is undefined behaviour in C: needs -2**31 <= x < 2**31")
    return math.trunc(xf)
