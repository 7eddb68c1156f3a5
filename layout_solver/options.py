"""String options of the subsampled-layout API, as ``Literal`` types, each validated in one
place through :func:`fdm.options.choice` (a wrong value is a one-line
:class:`~turnip_base.errors.ScenarioError` naming the option).

* :data:`ApronRevision` - which ``tu_calc_subsampled_aprons`` adjacency test: ``"newest"``
  (pop-os @ 4ff7b570: edge equality and overlap/touch of the other axis) or ``"older"``
  (sailfish @ 9429b474: edge equality only).  Validated by :func:`as_apron_revision`.
* :data:`OffsetsUnderSharedViewport` - the FDM offsets the solver (and ``tu_emit_subsampled``)
  get under a shared viewport: ``"null"`` (pop-os @ aee40d4a, tencentmalos) or ``"real"``
  (sailfish @ 9429b474; pop-os @ 4ff7b570 for the metadata and aprons).  Validated by
  :func:`as_offsets_mode`.
* :data:`Filter` / :data:`Addressing` - the Vulkan sampler of the CPU reconstruction
  (``VK_FILTER_NEAREST`` / ``_LINEAR``; ``VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE`` /
  ``_CLAMP_TO_BORDER``).  Validated by :func:`as_filter` / :func:`as_addressing`.
"""

from __future__ import annotations

from typing import Literal, get_args

from fdm.options import choice

ApronRevision = Literal["newest", "older"]
APRON_REVISIONS: tuple[ApronRevision, ...] = get_args(ApronRevision)

OffsetsUnderSharedViewport = Literal["null", "real"]
OFFSET_MODES: tuple[OffsetsUnderSharedViewport, ...] = get_args(OffsetsUnderSharedViewport)

Filter = Literal["nearest", "linear"]
FILTERS: tuple[Filter, ...] = get_args(Filter)

Addressing = Literal["clamp_to_edge", "clamp_to_border"]
ADDRESSING: tuple[Addressing, ...] = get_args(Addressing)


def as_apron_revision(value: object) -> ApronRevision:
    """``value`` as an :data:`ApronRevision` (the ``revision`` argument)."""
    return choice("revision", value, APRON_REVISIONS)


def as_offsets_mode(value: object) -> OffsetsUnderSharedViewport:
    """``value`` as an :data:`OffsetsUnderSharedViewport` (the argument of that name)."""
    return choice("offsets_under_shared_viewport", value, OFFSET_MODES)


def as_filter(value: object) -> Filter:
    """``value`` as a :data:`Filter` (the ``filter`` argument)."""
    return choice("filter", value, FILTERS)


def as_addressing(value: object) -> Addressing:
    """``value`` as an :data:`Addressing` mode (the ``addressing`` argument)."""
    return choice("addressing", value, ADDRESSING)
