"""String options of the public API and the scenario schema, as ``Literal`` types, validated
in one place (:func:`choice`) so that a wrong value gives the same one-line
:class:`~fdm.errors.ScenarioError` wherever it enters (file, command line or Python)."""

from __future__ import annotations

from typing import Any, Literal, TypeVar, get_args

from .errors import ScenarioError

#: bin-merging variant: turnip 26.2 (``upstream``), the tencentmalos fork's adjacency rule
#: (``fixed``), or merging disabled (``off``)
MergingVariant = Literal["upstream", "fixed", "off"]
MERGING_VARIANTS: tuple[MergingVariant, ...] = get_args(MergingVariant)

#: density-map formats the model reads
DensityFormat = Literal["R8G8_UNORM", "R32G32_SFLOAT"]
DENSITY_FORMATS: tuple[DensityFormat, ...] = get_args(DensityFormat)

S = TypeVar("S", bound=str)


def choice(field: str, value: Any, allowed: tuple[S, ...]) -> S:
    """``value`` if it is one of ``allowed``, else :class:`ScenarioError` naming ``field``."""
    for a in allowed:
        if isinstance(value, str) and value == a:
            return a
    raise ScenarioError(field, f"must be one of {', '.join(allowed)}, got {value!r}")
