"""Named driver variants: alternative readings of a turnip function that the model can select,
per scenario (``[driver]`` table) or per command (``--variant NAME=VALUE``).  The default of each
is upstream turnip 26.2 (pop-os/mesa 26.2.0-rc3; ``tu_emit_subsampled``: Mesa 26.2.6 as the box
records it, which hands the solver's offsets); the other values name the fork and commit the
reading comes from (docs/driver-revisions.md lists them with :data:`fdm.revisions.DRIVER_VARIANTS`).
``tu_clear_gmem_attachment`` and ``tu_pipeline_builder_emit_state`` default to Mesa 26.2.2 and
later (the box's 26.2.6); their ``mesa-26.1`` values are the code before those fixes.
:data:`MESA_READINGS` names the variants of each Mesa release the box runs (``--mesa``).

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
#: the render-pass load-op clear of a GPU without the generic clear (a6xx, a725/a730/a740: the
#: resolve engine's BLIT-event clear, ``tu_clear_gmem_attachment`` in tu_clear_blit.cc) under FDM:
#: one ``fdm_apply_gmem_clear_coords`` patchpoint per layer, mapping the render area into each bin
#: (upstream: Mesa 26.2.2 and later, whose release notes - pop-os @ 9cad4086,
#: docs/relnotes/26.2.2.rst - list "tu: Fix GMEM clears with an FDM offset on the blit-event clear
#: path"; the box records it on 26.2.6), or no patchpoint: ``tu_clear_gmem_attachment`` hands
#: ``tu_emit_clear_gmem_attachment`` a NULL ``fdm_rect`` and every bin clears the unmapped render
#: area that ``tu6_emit_blit_scissor`` wrote (mesa-26.1: pop-os @ 05b96fda and 26.2.0-rc1, leegao/
#: mesa-26.2 @ 3c34d70f, read; Mesa 26.1.6 as the box records it)
ClearGmemAttachment = Literal["upstream", "mesa-26.1"]
#: a pipeline with static (non-dynamic) viewports and scissors in an FDM pass: emitted through the
#: FDM patchpoints like dynamic ones (upstream: Mesa 26.2.2 and later, "tu: Do not bake static
#: viewport/scissor when FDM is enabled", pop-os @ 9cad4086 docs/relnotes/26.2.2.rst; the box
#: records it on 26.2.6), or, where the pipeline has no per-view and no per-layer viewport (every
#: a6xx FDM pipeline; a7xx/a8xx under a shared viewport), baked by ``tu_pipeline_builder_emit_state``
#: into pipeline draw state that no bin patches, and ``rp.shared_viewport`` never set (mesa-26.1:
#: tu_pipeline.cc pop-os @ 26e5c1f9 and 26.2.0-rc1 @ 3c34d70f, read; Mesa 26.1.6 as the box records it)
StaticViewportBake = Literal["upstream", "mesa-26.1"]


@attrs.frozen(kw_only=True)
class DriverVariants:
    """Which reading of each varying turnip function the model follows (default: upstream 26.2)."""

    tu_calc_tile_config: TileConfigOffsets = "upstream"
    tu_emit_subsampled: EmitSubsampledOffsets = "upstream"
    tu_calc_subsampled_aprons: ApronAdjacency = "upstream"
    tu_clear_gmem_attachment: ClearGmemAttachment = "upstream"
    tu_pipeline_builder_emit_state: StaticViewportBake = "upstream"


UPSTREAM = DriverVariants()
VARIANT_VALUES: dict[str, tuple[str, ...]] = {
    "tu_calc_tile_config": get_args(TileConfigOffsets),
    "tu_emit_subsampled": get_args(EmitSubsampledOffsets),
    "tu_calc_subsampled_aprons": get_args(ApronAdjacency),
    "tu_clear_gmem_attachment": get_args(ClearGmemAttachment),
    "tu_pipeline_builder_emit_state": get_args(StaticViewportBake),
}
#: the [driver] functions only a pass with a subsampled attachment reaches (the layout solver's
#: offsets, the metadata's, the apron adjacency); the others apply to every FDM pass
SUBSAMPLED_ONLY = ("tu_calc_tile_config", "tu_emit_subsampled", "tu_calc_subsampled_aprons")

#: the model's reading of each Mesa release the box runs (``turnip-fdm box check --mesa V``): 26.2
#: is upstream (Mesa 26.2.6 as the box records it); 26.1 (Debian's 26.1.6) predates three turnip
#: FDM fixes of Mesa 26.2.2 - it hands the real FDM offsets to the subsampled solver under a shared
#: viewport ("tu: Ignore FDM offsets for subsampled images when shared viewport is active"), clears
#: the unmapped render area in every bin on the blit-event clear path and bakes static viewports
#: unpatched.  26.2.0-rc1 (the build of docs/box-driver.md, ``--driver``; compared with
#: ``--reading 26.2.0-rc1``) predates the same fixes and also skips apron blits by the older
#: adjacency (``tu_calc_subsampled_aprons``: examples/subsampled_box.toml on a618 tells them apart).
MESA_READINGS: dict[str, DriverVariants] = {
    "26.2": UPSTREAM,
    "26.1": DriverVariants(tu_calc_tile_config="sailfish-9429b474", tu_clear_gmem_attachment="mesa-26.1",
                           tu_pipeline_builder_emit_state="mesa-26.1"),
    "26.2.0-rc1": DriverVariants(tu_calc_tile_config="sailfish-9429b474", tu_clear_gmem_attachment="mesa-26.1",
                                 tu_pipeline_builder_emit_state="mesa-26.1",
                                 tu_calc_subsampled_aprons="sailfish-9429b474"),
}


def mesa_reading(release: str | None) -> DriverVariants:
    """The variants of the model's reading of Mesa ``release`` (:data:`MESA_READINGS`); upstream
    for None or a release without a reading of its own."""
    return MESA_READINGS.get(release or "", UPSTREAM)


def with_reading(own: DriverVariants, reading: DriverVariants) -> DriverVariants:
    """A scenario's ``[driver]`` variants on top of a Mesa release's reading: each function the
    scenario sets to other than upstream keeps its value, the others take the reading's."""
    fields = {k: (v if v != "upstream" else getattr(reading, k)) for k, v in attrs.asdict(own).items()}
    return DriverVariants(**fields)


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
    if "tu_clear_gmem_attachment" in v:
        d = attrs.evolve(d, tu_clear_gmem_attachment=choice(
            f"{field}.tu_clear_gmem_attachment", v["tu_clear_gmem_attachment"], get_args(ClearGmemAttachment)))
    if "tu_pipeline_builder_emit_state" in v:
        d = attrs.evolve(d, tu_pipeline_builder_emit_state=choice(
            f"{field}.tu_pipeline_builder_emit_state", v["tu_pipeline_builder_emit_state"],
            get_args(StaticViewportBake)))
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
