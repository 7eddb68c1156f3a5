"""String options validated in one place (:func:`choice`), so that a wrong value gives the same
one-line :class:`~turnip_base.errors.ScenarioError` wherever it enters (file, command line or
Python)."""

from __future__ import annotations

from typing import Any, TypeVar

from .errors import ScenarioError

S = TypeVar("S", bound=str)


def choice(field: str, value: Any, allowed: tuple[S, ...]) -> S:
    """``value`` if it is one of ``allowed``, else :class:`ScenarioError` naming ``field``."""
    for a in allowed:
        if isinstance(value, str) and value == a:
            return a
    raise ScenarioError(field, f"must be one of {', '.join(allowed)}, got {value!r}")
