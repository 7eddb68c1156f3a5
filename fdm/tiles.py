"""Per-tile configuration: visibility, fragment areas and a7xx bin merging.

Models ``tu_calc_tile_config``, ``tu_calc_bin_visibility``, ``tu_calc_frag_area``,
``try_merge_tiles`` and ``tu_merge_tiles`` (src/freedreno/vulkan/tu_tile_config.cc).
"""

from __future__ import annotations

import functools

import attrs

from .cmath import ctz
from .density import DensityMap, raw_frag_area_of, stored_texel
from .geometry import Rect
from .options import MERGING_VARIANTS, DensityFormat, MergingVariant, choice
from .tiling import VscConfig
from .turnip import (
    INVISIBLE_FRAG_AREA,
    fdm_sample_position,
    shared_viewport_frag_area,
    tu_bin_offset,
    tu_calc_bin_visibility,
    tu_calc_frag_area,
    tu_fragment_density_map_sample,
)

Pair = tuple[int, int]


@attrs.frozen(kw_only=True)
class TileConfig:
    """``struct tu_tile_config`` for one cell (a root describes its whole merged group)."""

    cell: Pair                       # grid cell of this entry
    pos: Pair                        # top-left cell of the (merged) tile
    extent: Pair = (1, 1)            # E, in cells (the driver names it after sysmem rendering)
    gmem_extent: Pair = (1, 1)       # G, in cells (width always 1)
    pipe: int = 0
    slot_mask: int = 0
    visible_views: int = 0
    frag_areas: tuple[Pair, ...] = ()
    merged_into: Pair | None = None  # cell of the tile this one was merged into; None = root

    @property
    def is_root(self) -> bool:
        return self.merged_into is None

    def visible(self, view: int) -> bool:
        return bool(self.visible_views >> view & 1)


@attrs.frozen(kw_only=True)
class FdmInputs:
    """What tile configuration needs from the render pass."""

    fb_size: Pair
    tile_size: Pair
    views: int
    density: DensityMap
    render_areas: tuple[Rect, ...]   # one, or one per view
    fdm_offsets: tuple[Pair, ...] | None
    shared_viewport: bool

    def render_area(self, view: int) -> Rect:
        return self.render_areas[view if len(self.render_areas) > 1 else 0]

    def bin_offset(self, view: int) -> Pair | None:
        """``b_o`` of a view where bins are shifted, None where they are not."""
        if self.fdm_offsets is None or self.shared_viewport:
            return None
        return tu_bin_offset(self.fdm_offsets[view], self.tile_size)


def calc_visibility(inp: FdmInputs, cell: Pair) -> int:
    """``tu_calc_bin_visibility`` over all views: the bitmask of views whose (shifted) nominal
    bin intersects their render area."""
    mask = 0
    for v in range(inp.views):
        if tu_calc_bin_visibility(cell, inp.tile_size, inp.render_area(v).as_tuple(), inp.bin_offset(v)):
            mask |= 1 << v
    return mask


@functools.lru_cache(maxsize=1 << 16)
def _texel_frag_area(fmt: DensityFormat, t0: float, t1: float, tile_size: Pair, has_fdm_offsets: bool,
                     num_views: int) -> Pair | None:
    """``tu_calc_frag_area`` of a texel holding ``(t0, t1)`` (bytes or floats as stored): a pure
    function of these values, cached (a pass reads a few distinct densities many times, and the
    layout page's offset sweep plans the same pass 16 times)."""
    return tu_calc_frag_area(raw_frag_area_of(fmt, t0, t1), tile_size, has_fdm_offsets=has_fdm_offsets,
                             num_views=num_views)


def calc_frag_areas(inp: FdmInputs, cell: Pair, visible: int) -> tuple[tuple[Pair, ...], int]:
    """``tu_calc_frag_area`` over all views of one cell: ``(frag_areas, visible_views)``.

    A density of 0 removes the view from ``visible_views`` and gives it ``UINT32_MAX`` areas;
    with a shared viewport every view gets the per-axis minimum.
    """
    areas: list[Pair] = []
    for v in range(inp.views):
        u = inp.fdm_offsets[v] if inp.fdm_offsets is not None else None
        sample = fdm_sample_position(cell, inp.tile_size, inp.fb_size, u, inp.bin_offset(v))
        texel = tu_fragment_density_map_sample(sample, inp.fb_size, inp.density.size)
        t0, t1 = stored_texel(inp.density, v, texel)
        fa = _texel_frag_area(inp.density.format, t0, t1, inp.tile_size, inp.fdm_offsets is not None, inp.views)
        if fa is None:
            visible &= ~(1 << v)
            fa = INVISIBLE_FRAG_AREA
        areas.append(fa)
    if inp.shared_viewport:
        shared = shared_viewport_frag_area(areas)
        areas = [shared] * inp.views
    return tuple(areas), visible


#: the merging variants that have an adjacency rule (``"off"`` never reaches try_merge_tiles)
MERGE_RULES: tuple[MergingVariant, ...] = ("upstream", "fixed")


def try_merge_tiles(dst: TileConfig, src: TileConfig, *, views: int, has_abs_bin_mask: bool,
                    shared_viewport: bool, variant: MergingVariant) -> TileConfig | None:
    """``try_merge_tiles`` (tu_tile_config.cc): the merged ``dst`` or None when refused.

    ``variant`` selects the adjacency check: ``"upstream"`` (same column needs equal heights,
    same row equal widths: groups of at most 2x2) or ``"fixed"`` (matching extent across the
    merge axis); anything else is a :class:`~turnip_base.errors.ScenarioError`.  ``dst`` is the later
    (right/lower) tile; ``src`` its left or upper neighbour.
    """
    variant = choice("variant", variant, MERGE_RULES)
    vis = dst.visible_views | src.visible_views
    slot = dst.slot_mask | src.slot_mask
    both = dst.visible_views & src.visible_views
    for v in range(views):
        if both >> v & 1 and dst.frag_areas[v] != src.frag_areas[v]:
            return None
    (dx, dy), (sx, sy) = dst.pos, src.pos
    (dw, dh), (sw, sh) = dst.extent, src.extent
    if variant == "upstream":
        if dx == sx:
            if dh != sh:
                return None
        elif dy == sy:
            if dw != sw:
                return None
        else:
            return None
    else:  # "fixed"
        if dx == sx:
            if dw != sw:
                return None
        elif dy == sy:
            if dh != sh:
                return None
        else:
            return None
    if dst.gmem_extent != src.gmem_extent:
        return None
    if not has_abs_bin_mask and (slot >> ctz(slot)) >= (1 << 16):
        return None
    ext = (dw + dx - sx, dh + dy - sy)
    if vis == 1 and views > 1 and dst.gmem_extent[1] == 1 and not shared_viewport:
        hm = views
    else:
        hm = dst.gmem_extent[1]
    for t in (dst, src):
        for v in range(views):
            if t.visible_views >> v & 1:
                fw, fh = t.frag_areas[v]
                if fw < ext[0] or fh * hm < ext[1]:
                    return None
    areas = list(dst.frag_areas)
    gh = dst.gmem_extent[1]
    for v in range(views):
        if src.visible_views >> v & 1 and not dst.visible_views >> v & 1:
            areas[v] = src.frag_areas[v]
        if vis >> v & 1 and areas[v][1] < ext[1]:
            gh = hm
    return attrs.evolve(dst, pos=src.pos, extent=ext, gmem_extent=(dst.gmem_extent[0], gh),
                        visible_views=vis, slot_mask=slot, frag_areas=tuple(areas))


@attrs.frozen
class TileGrid:
    """All cells of the active VSC config after ``tu_calc_tile_config``."""

    tile_count: Pair
    cells: tuple[TileConfig, ...]  # row-major, index y * TCw + x

    def cell(self, x: int, y: int) -> TileConfig:
        return self.cells[y * self.tile_count[0] + x]

    def root(self, x: int, y: int) -> TileConfig:
        t = self.cell(x, y)
        while t.merged_into is not None:
            t = self.cell(*t.merged_into)
        return t

    def roots(self) -> list[TileConfig]:
        return [t for t in self.cells if t.is_root]


def calc_tile_config(inp: FdmInputs, vsc: VscConfig, *, merging: MergingVariant, has_bin_mask: bool,
                     has_abs_bin_mask: bool) -> TileGrid:
    """``tu_calc_tile_config``: initialise every cell per pipe, then merge inside each pipe
    (``merging`` is ``"upstream"``, ``"fixed"`` or ``"off"``; merging needs ``has_bin_mask``)."""
    merging = choice("merging", merging, MERGING_VARIANTS)
    tcw, tch = vsc.tile_count
    cells: dict[Pair, TileConfig] = {}
    for pipe_idx, p in enumerate(vsc.pipes):
        for ty in range(p.y, p.y2):
            for tx in range(p.x, p.x2):
                vis = calc_visibility(inp, (tx, ty))
                areas, vis = calc_frag_areas(inp, (tx, ty), vis)
                slot = 1 << (p.w * (ty - p.y) + (tx - p.x))
                cells[(tx, ty)] = TileConfig(cell=(tx, ty), pos=(tx, ty), pipe=pipe_idx, slot_mask=slot,
                                             visible_views=vis, frag_areas=areas)
        if merging != "off" and has_bin_mask:
            _merge_pipe(cells, p, inp, merging, has_abs_bin_mask)
    return TileGrid(tile_count=(tcw, tch), cells=tuple(cells[(x, y)] for y in range(tch) for x in range(tcw)))


def identity_tile_config(inp: FdmInputs, vsc: VscConfig) -> TileGrid:
    """The tiles ``tu_cmd_render_tiles`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570) builds when the pass
    has no FDM (``has_fdm`` false: no ``tu_calc_tile_config``): per pipe, each cell its own 1x1
    tile with slot ``1 << (slot_row + tx)``, ``tu_calc_bin_visibility`` against the render
    areas without offsets, and ``tu_identity_frag_area`` (1x1 for every view); no merging."""
    assert inp.fdm_offsets is None  # "If not using FDM make sure not to accidentally apply the offsets"
    tcw, tch = vsc.tile_count
    cells: dict[Pair, TileConfig] = {}
    for pipe_idx, p in enumerate(vsc.pipes):
        for ty in range(p.y, p.y2):
            for tx in range(p.x, p.x2):
                cells[(tx, ty)] = TileConfig(cell=(tx, ty), pos=(tx, ty), pipe=pipe_idx,
                                             slot_mask=1 << (p.w * (ty - p.y) + (tx - p.x)),
                                             visible_views=calc_visibility(inp, (tx, ty)),
                                             frag_areas=((1, 1),) * inp.views)
    return TileGrid(tile_count=(tcw, tch), cells=tuple(cells[(x, y)] for y in range(tch) for x in range(tcw)))


def _merge_pipe(cells: dict[Pair, TileConfig], p: Rect, inp: FdmInputs, variant: MergingVariant,
                has_abs_bin_mask: bool) -> None:
    """``tu_merge_tiles`` for one pipe: raster order, try the left cell, then the upper cell if
    it is still a root.  Updates ``cells`` (the working copy owned by calc_tile_config)."""
    for y in range(p.y, p.y2):
        for x in range(p.x, p.x2):
            if cells[(x, y)].visible_views == 0:
                continue
            for nb in ([(x - 1, y)] if x > p.x else []) + ([(x, y - 1)] if y > p.y else []):
                src = cells[nb]
                if nb == (x, y - 1) and src.merged_into is not None:
                    continue
                merged = try_merge_tiles(cells[(x, y)], src, views=inp.views, has_abs_bin_mask=has_abs_bin_mask,
                                         shared_viewport=inp.shared_viewport, variant=variant)
                if merged is not None:
                    cells[(x, y)] = merged
                    cells[nb] = attrs.evolve(src, merged_into=(x, y))

