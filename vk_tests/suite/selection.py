"""Which cases a run takes: the names checked once (:func:`check_names`), a selection by
backend and shell pattern (:func:`select`), and the look-up by name of ``vk check``."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from .cases import BACKENDS, NAME_RE, Case


def check_names(cases: Iterable[Case]) -> None:
    """Raise ``ValueError`` (a bug of the suite) on a duplicate or malformed case name."""
    seen: set[str] = set()
    for c in cases:
        if c.backend not in BACKENDS:
            raise ValueError(f"case {c.name!r}: backend {c.backend!r} is not one of {', '.join(BACKENDS)}")
        if not NAME_RE.fullmatch(c.name) or not c.name.startswith(f"{c.backend}."):
            raise ValueError(f"case name {c.name!r} must be '{c.backend}.group.variant' (dotted components of "
                             "letters, digits, _ - + =)")
        if c.name in seen:
            raise ValueError(f"case name {c.name!r} is used twice")
        seen.add(c.name)


def select(cases: Sequence[Case], backends: Iterable[str] = (), glob: str | None = None) -> list[Case]:
    """The cases of one of ``backends`` (all when empty) whose name matches the shell pattern
    ``glob`` (:func:`fnmatch.fnmatchcase`; all when None), in registry order."""
    wanted = set(backends)
    return [c for c in cases
            if (not wanted or c.backend in wanted) and (glob is None or fnmatch.fnmatchcase(c.name, glob))]


def by_name(cases: Iterable[Case]) -> dict[str, Case]:
    return {c.name: c for c in cases}
