"""Named driver variants: alternative readings of a turnip function that the model can select,
per scenario (``[driver]`` table) or per command (``--variant NAME=VALUE``).  The default of each
is upstream turnip 26.2 (pop-os/mesa 26.2.0-rc3; ``tu_emit_subsampled``: Mesa 26.2.6 as the box
records it, which hands the solver's offsets); the other values name the fork and commit the
reading comes from (docs/driver-revisions.md lists them with :data:`fdm.revisions.DRIVER_VARIANTS`).

``bin_merging`` (``upstream`` / ``fixed`` = the tencentmalos fork's ``try_merge_tiles``
adjacency / ``off``) stays a top-level scenario field; ``--variant bin_merging=fixed`` sets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

import attrs

from turnip_base.errors import ScenarioError

from .options import choice

#: the offsets ``tu_calc_tile_config`` hands ``tu_calc_subsampled`` under a shared viewport:
#: NULL (upstream, pop-os @ aee40d4a) or the real ones (sailfish @ 9429b474)
TileConfigOffsets = Literal["upstream", "sailfish-9429b474"]
#: the offsets ``tu_emit_subsampled`` hands the metadata and apron code under a shared viewport:
#: the solver's, NULL (upstream: Mesa 26.2.6 as the box records it - the header offset is 0 -, and
#: tencentmalos @ 16ad8431), or the real ones (pop-os @ 4ff7b570 as read: finding n).  Mesa 26.1.6
#: hands the real ones to both (tu_calc_tile_config = "sailfish-9429b474", either value here)
EmitSubsampledOffsets = Literal["upstream", "pop-os-4ff7b570", "tencentmalos-16ad8431"]
#: the "adjacent in subsampled space" skip of ``tu_calc_subsampled_aprons``: edge equality and
#: overlap of the other axis (upstream, pop-os @ 4ff7b570) or edge equality only (sailfish @ 9429b474)
ApronAdjacency = Literal["upstream", "sailfish-9429b474"]


@attrs.frozen(kw_only=True)
class DriverVariants:
    """Which reading of each varying turnip function the model follows (default: upstream 26.2)."""

    tu_calc_tile_config: TileConfigOffsets = "upstream"
    tu_emit_subsampled: EmitSubsampledOffsets = "upstream"
    tu_calc_subsampled_aprons: ApronAdjacency = "upstream"


UPSTREAM = DriverVariants()
VARIANT_VALUES: dict[str, tuple[str, ...]] = {
    "tu_calc_tile_config": get_args(TileConfigOffsets),
    "tu_emit_subsampled": get_args(EmitSubsampledOffsets),
    "tu_calc_subsampled_aprons": get_args(ApronAdjacency),
}


def parse_driver_variants(v: Any, field: str = "driver") -> DriverVariants:
    """The scenario's ``[driver]`` table (every key optional)."""
    if not isinstance(v, Mapping):
        raise ScenarioError(field, f"must be a table/object, got {type(v).__name__}")
    for k in v:
        if k not in VARIANT_VALUES:
            raise ScenarioError(f"{field}.{k}", f"unknown driver function; known: {', '.join(VARIANT_VALUES)}")
    d = UPSTREAM
    if "tu_calc_tile_config" in v:
        d = attrs.evolve(d, tu_calc_tile_config=choice(f"{field}.tu_calc_tile_config", v["tu_calc_tile_config"],
                                                       get_args(TileConfigOffsets)))
    if "tu_emit_subsampled" in v:
        d = attrs.evolve(d, tu_emit_subsampled=choice(f"{field}.tu_emit_subsampled", v["tu_emit_subsampled"],
                                                      get_args(EmitSubsampledOffsets)))
    if "tu_calc_subsampled_aprons" in v:
        d = attrs.evolve(d, tu_calc_subsampled_aprons=choice(f"{field}.tu_calc_subsampled_aprons",
                                                             v["tu_calc_subsampled_aprons"], get_args(ApronAdjacency)))
    return d


def apply_variant_flags(data: Any, flags: list[str] | tuple[str, ...]) -> Any:
    """A decoded scenario with ``--variant NAME=VALUE`` flags applied (``bin_merging`` or a key
    of the ``[driver]`` table); values are checked when the scenario is parsed."""
    if not flags:
        return data
    if not isinstance(data, Mapping):
        return data
    out = dict(data)
    driver = dict(out.get("driver", {})) if isinstance(out.get("driver", {}), Mapping) else {}
    for flag in flags:
        name, sep, value = flag.partition("=")
        if not sep or not name or not value:
            raise ScenarioError("--variant", f"must be NAME=VALUE, got {flag!r}")
        if name == "bin_merging":
            out["bin_merging"] = value
        elif name in VARIANT_VALUES:
            driver[name] = value
        else:
            raise ScenarioError("--variant", f"unknown NAME {name!r}; known: bin_merging, {', '.join(VARIANT_VALUES)}")
    if driver:
        out["driver"] = driver
    return out
