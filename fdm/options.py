"""String options of the public API and the scenario schema, as ``Literal`` types, validated
by :func:`turnip_base.options.choice` (re-exported here) so that a wrong value gives the same
one-line :class:`~turnip_base.errors.ScenarioError` wherever it enters (file, command line or Python)."""

from __future__ import annotations

from typing import Literal, get_args

from turnip_base.options import choice

__all__ = ["DENSITY_FORMATS", "MERGING_VARIANTS", "DensityFormat", "MergingVariant", "choice"]

#: bin-merging variant: turnip 26.2 (``upstream``), the tencentmalos fork's adjacency rule
#: (``fixed``), or merging disabled (``off``)
MergingVariant = Literal["upstream", "fixed", "off"]
MERGING_VARIANTS: tuple[MergingVariant, ...] = get_args(MergingVariant)

#: density-map formats the model reads
DensityFormat = Literal["R8G8_UNORM", "R32G32_SFLOAT"]
DENSITY_FORMATS: tuple[DensityFormat, ...] = get_args(DensityFormat)
