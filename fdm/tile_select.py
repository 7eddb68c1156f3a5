"""What ``tu6_emit_tile_select`` (src/freedreno/vulkan/tu_cmd_buffer.cc) programs per tile:
per-view bins, a7xx HW bin scaling (FOVEAT registers, ``o'``), the per-tile LRZ disable,
the window scissor and the fast-store predicate."""

from __future__ import annotations

import attrs

from .cmath import logbase2
from .tiles import TileConfig
from .turnip import MAX_HW_SCALED_VIEWS, MAX_VIEWPORT_SIZE, hw_bin_offset, tile_select_bin, tu_bin_offset

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]


@attrs.frozen(kw_only=True)
class PassState:
    """Render-pass facts that tile selection reads."""

    fb_size: Pair
    tile_size: Pair
    views: int                 # tu_fdm_num_layers
    layers: int                # max(num_views, fb layers)
    fdm_offsets: tuple[Pair, ...] | None
    shared_viewport: bool
    has_hw_bin_scaling: bool
    chip: int
    has_fdm_patchpoints: bool = True

    def bin_offset(self, view: int) -> Pair:
        if self.fdm_offsets is None:
            return (0, 0)
        return tu_bin_offset(self.fdm_offsets[view], self.tile_size)


@attrs.frozen(kw_only=True)
class Foveat:
    """``GRAS_BIN_FOVEAT`` / ``RB_BIN_FOVEAT`` and the per-slot offsets (a7xx: ``GRAS_BIN_FOVEAT_OFFSET_0..3``)."""

    binscaleen: bool
    xscale: tuple[int, ...]    # log2 of the HW frag area, 6 slots
    yscale: tuple[int, ...]
    hw_offsets: tuple[Pair, ...]  # o' (hw_offset) per slot


def common_bin_start(tile: TileConfig, st: PassState) -> Pair:
    """``b_cs`` = the window offset of the tile (its top-left cell times the tile size)."""
    return (tile.pos[0] * st.tile_size[0], tile.pos[1] * st.tile_size[1])


def view_bins(tile: TileConfig, st: PassState) -> tuple[Rect4, ...]:
    """``bins[]``: the framebuffer-space bin ``B_v`` of every view (empty for invisible views)."""
    b_cs = common_bin_start(tile, st)
    extent = (st.tile_size[0] * tile.extent[0], st.tile_size[1] * tile.extent[1])
    out: list[Rect4] = []
    for v in range(st.views):
        if not tile.visible(v):
            out.append((0, 0, 0, 0))
        elif st.fdm_offsets is None or st.shared_viewport:
            out.append(tile_select_bin(b_cs, extent, None))
        else:
            out.append(tile_select_bin(b_cs, extent, st.bin_offset(v)))
    return tuple(out)


def bin_is_scaled(tile: TileConfig, st: PassState) -> bool:
    """Some view (invisible ones included, with their computed area) has ``fa != (1,1)``."""
    return st.has_fdm_patchpoints and any(tuple(fa) != (1, 1) for fa in tile.frag_areas[:st.views])


def bin_scale_en(tile: TileConfig, st: PassState) -> bool:
    return (st.has_hw_bin_scaling and st.layers <= MAX_HW_SCALED_VIEWS and not st.shared_viewport
            and bin_is_scaled(tile, st))


def hw_slots(tile: TileConfig, st: PassState) -> tuple[tuple[Pair, ...], tuple[Pair, ...]]:
    """Per HW slot ``i`` in [0, 6): ``(frag_area, o')``; slot ``i`` uses view ``min(i, views-1)``;
    invisible views and slots past ``layers`` get ``(1,1)`` and ``(0,0)``; all offsets are 0
    when HW bin scaling is off for the tile."""
    b_cs = common_bin_start(tile, st)
    en = bin_scale_en(tile, st)
    fas: list[Pair] = []
    offs: list[Pair] = []
    for i in range(MAX_HW_SCALED_VIEWS):
        v = min(i, st.views - 1)
        if not tile.visible(v) or i >= st.layers:
            fas.append((1, 1))
            offs.append((0, 0))
        else:
            fa = tile.frag_areas[v]
            fas.append(fa)
            offs.append(hw_bin_offset(b_cs, fa) if en else (0, 0))
    return tuple(fas), tuple(offs)


def foveat(tile: TileConfig, st: PassState) -> Foveat:
    """FOVEAT register fields; all zero (and binscaleen false) without HW bin scaling."""
    en = bin_scale_en(tile, st)
    fas, offs = hw_slots(tile, st)
    if not en:
        zero = (0,) * MAX_HW_SCALED_VIEWS
        return Foveat(binscaleen=False, xscale=zero, yscale=zero, hw_offsets=((0, 0),) * MAX_HW_SCALED_VIEWS)
    return Foveat(binscaleen=True, xscale=tuple(logbase2(fa[0]) for fa in fas),
                  yscale=tuple(logbase2(fa[1]) for fa in fas), hw_offsets=offs)


def disable_lrz(tile: TileConfig, st: PassState) -> bool:
    """``disable_lrz`` passed to ``tu6_emit_bin_size_gmem``: scaled without HW scaling, or the
    first row/column whenever FDM offsets are supplied (o' would have to be ``-b_o*s``)."""
    return ((bin_is_scaled(tile, st) and not bin_scale_en(tile, st))
            or (st.fdm_offsets is not None and (tile.pos[0] == 0 or tile.pos[1] == 0)))


def force_lrz_dis(tile: TileConfig, st: PassState) -> bool:
    """``GRAS_SC_BIN_CNTL.force_lrz_dis``: only emitted on a7xx and later."""
    return st.chip >= 7 and disable_lrz(tile, st)


def window_scissor(tile: TileConfig, st: PassState) -> tuple[Pair, Pair]:
    """``tu6_emit_window_scissor``: opened to ``(W+Tw, H+Th)`` with HW bin scaling (it applies
    before the FOVEAT offset), else the GMEM bin ``Tw x Th*G.h`` at ``b_cs``."""
    if bin_scale_en(tile, st):
        return (0, 0), (st.fb_size[0] + st.tile_size[0], st.fb_size[1] + st.tile_size[1])
    x1, y1 = common_bin_start(tile, st)
    x2 = min(x1 + st.tile_size[0], MAX_VIEWPORT_SIZE)
    y2 = min(y1 + st.tile_size[1] * tile.gmem_extent[1], MAX_VIEWPORT_SIZE)
    return (x1, y1), (x2 - 1, y2 - 1)


def use_fast_store(tile: TileConfig, st: PassState, subsampled_views: int = 0,
                   subsampled_border: bool = False) -> bool:
    """Whether the tile's attachments take the fast (unscaled, ``BLIT_EVENT_STORE``) store path.

    ``tu_store_gmem_attachment`` (tu_clear_blit.cc, pop-os @ 4ff7b570) allows the fast path in
    an FDM pass only ``CHIP >= A7XX``; there ``tu6_emit_tile_select`` (tu_cmd_buffer.cc, pop-os
    @ 4ff7b570) sets the FAST_STORE predicate per tile to ``(!fdm_offsets && !bin_scale_en) ||
    (subsampled_views == visible_views && !subsampled_border)`` (modelled as written; see
    docs/findings.md for the scaled-without-HW-scaling case).  On a6xx every store of an FDM
    pass is the scaled A2D/3D blit and no predicate is emitted.  The per-attachment conditions
    of the fast path (aligned store, matching mutability, no D24S8-to-S8 resolve, a format
    ``blit_can_resolve`` takes) are not modelled: the scenario's attachments are taken to meet
    them (docs/decisions.md)."""
    if st.chip < 7:
        return False
    return ((st.fdm_offsets is None and not bin_scale_en(tile, st))
            or (subsampled_views == tile.visible_views and not subsampled_border))
