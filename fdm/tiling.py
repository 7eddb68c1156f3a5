"""Tiling: tile size, tile count, VSC pipes and the order in which tiles are rendered.

Models ``tu_tiling_config_update_tile_layout``, ``tu_tiling_config_update_pipe_layout``,
``tu_tiling_config_update_pipes`` and ``tu_framebuffer_init_tiling_config``
(src/freedreno/vulkan/tu_util.cc) and the tile walk of ``tu_cmd_render_tiles``
(src/freedreno/vulkan/tu_cmd_buffer.cc).
"""

from __future__ import annotations

import attrs

from .cmath import UINT32_MAX, align_npot, ctz, div_round_up
from .geometry import Rect

#: pipe size used for FDM passes on GPUs with bin merging (tu_util.cc)
FDM_PIPE0 = (4, 8)
#: tiles per VSC pipe the hardware can bin (tu_util.cc is_hw_binning_possible)
MAX_TILES_PER_PIPE = 32


@attrs.frozen(kw_only=True)
class VscConfig:
    """One VSC configuration (``tu_vsc_config``): tile count and pipes, in cells."""

    tile_count: tuple[int, int]
    pipe0: tuple[int, int]
    pipe_count: tuple[int, int]
    pipes: tuple[Rect, ...]  # row-major, index = py * pipe_count.w + px
    binning_possible: bool

    def pipe_index(self, px: int, py: int) -> int:
        return py * self.pipe_count[0] + px


@attrs.frozen(kw_only=True)
class TilingConfig:
    """``tu_tiling_config``: the tile size and the VSC config in use for this pass."""

    tile_size: tuple[int, int]
    vsc: VscConfig
    tile_size_selected: bool  # False when the scenario fixed the tile size


def pipe_layout(tile_count: tuple[int, int], num_vsc_pipes: int,
                fdm_merging: bool) -> tuple[tuple[int, int], tuple[int, int], bool]:
    """``tu_tiling_config_update_pipe_layout``: ``(pipe0, pipe_count, binning_possible)``.

    FDM passes on GPUs with bin merging use fixed 4x8 pipes.  Otherwise pipes start at 1x1 and
    grow (the narrower dimension first) until the pipe count fits the VSC.
    """
    tcw, tch = tile_count
    if fdm_merging:
        pipe0 = FDM_PIPE0
        pipe_count = (div_round_up(tcw, pipe0[0]), div_round_up(tch, pipe0[1]))
        return pipe0, pipe_count, pipe_count[0] * pipe_count[1] <= num_vsc_pipes
    pw, ph = 1, 1
    pcw, pch = tcw, tch
    while pcw * pch > num_vsc_pipes:
        if pw < ph:
            pw += 1
            pcw = div_round_up(tcw, pw)
        else:
            ph += 1
            pch = div_round_up(tch, ph)
    return (pw, ph), (pcw, pch), pw * ph <= MAX_TILES_PER_PIPE


def vsc_config(tile_count: tuple[int, int], num_vsc_pipes: int, fdm_merging: bool) -> VscConfig:
    """``tu_tiling_config_update_pipes``: the pipe rectangles, clipped to the tile grid."""
    pipe0, pipe_count, possible = pipe_layout(tile_count, num_vsc_pipes, fdm_merging)
    pipes: list[Rect] = []
    for py in range(pipe_count[1]):
        for px in range(pipe_count[0]):
            x, y = px * pipe0[0], py * pipe0[1]
            pipes.append(Rect(x, y, min(pipe0[0], tile_count[0] - x), min(pipe0[1], tile_count[1] - y)))
    return VscConfig(tile_count=tile_count, pipe0=pipe0, pipe_count=pipe_count, pipes=tuple(pipes),
                     binning_possible=possible)


def tile_count(fb_size: tuple[int, int], tile_size: tuple[int, int], fdm_offset: bool) -> tuple[int, int]:
    """Tiles covering the framebuffer; the FDM-offset VSC (``fdm_offset_vsc``) adds one
    column and one row so that the grid can be shifted by ``b_o``."""
    n = (div_round_up(fb_size[0], tile_size[0]), div_round_up(fb_size[1], tile_size[1]))
    return (n[0] + 1, n[1] + 1) if fdm_offset else n


def walk_order(vsc: VscConfig) -> list[tuple[int, int]]:
    """Cells in the order ``tu_cmd_render_tiles`` visits them: pipe rows top to bottom, odd
    pipe rows right to left; inside a pipe, rows top to bottom, odd absolute tile rows right to
    left."""
    order: list[tuple[int, int]] = []
    pcw, pch = vsc.pipe_count
    for py in range(pch):
        pxs = range(pcw - 1, -1, -1) if py & 1 else range(pcw)
        for px in pxs:
            p = vsc.pipes[vsc.pipe_index(px, py)]
            for ty in range(p.y, p.y2):
                txs = range(p.x2 - 1, p.x - 1, -1) if ty & 1 else range(p.x, p.x2)
                order.extend((tx, ty) for tx in txs)
    return order


@attrs.frozen(kw_only=True)
class GmemConfig:
    """What ``tu_render_pass_gmem_config`` (src/freedreno/vulkan/tu_pass.cc) derives for the
    pass: the pass tile alignment and the pixel budget of one tile layer."""

    tile_align: tuple[int, int]   # pass->tile_align_w, and tile_align_h after the layer fix-up
    gmem_pixels: int              # 0: the attachments do not fit (sysmem rendering)
    min_cpp: int


def gmem_config(attachment_cpps: tuple[int, ...], device_tile_align: tuple[int, int], gmem_bytes: int,
                layers: int) -> GmemConfig:
    """``tu_render_pass_gmem_config`` for attachments that each get their own allocation.

    ``attachment_cpps`` are bytes per pixel times samples.  A 1-byte attachment doubles
    ``tile_align_w`` (once it is a multiple of 64 it stays).  GMEM is split in blocks of
    ``8 * tile_align_w * tile_align_h`` bytes (device alignment) shared in proportion to cpp;
    the budget is the smallest ``blocks * block / cpp``.  ``tile_align_h`` is then shifted left
    (``tu_tiling_config_update_tile_layout``) for layered passes until a tile layer of the
    smallest attachment is a multiple of 4096 bytes.
    """
    aw, ah = device_tile_align
    block_align_shift = 3
    gmem_align = (1 << block_align_shift) * aw * ah
    tile_align_w = aw
    for cpp in attachment_cpps:
        if cpp == 1 and tile_align_w % 64 != 0:
            tile_align_w *= 2
            block_align_shift -= 1
    cpp_total = sum(attachment_cpps)
    min_cpp = min(attachment_cpps)
    gmem_blocks = gmem_bytes // gmem_align
    pixels = UINT32_MAX
    for cpp in attachment_cpps:
        align = max(1, cpp >> block_align_shift)
        nblocks = max((gmem_blocks * cpp // cpp_total) & ~(align - 1), align)
        if nblocks > gmem_blocks:
            pixels = 0
            break
        gmem_blocks -= nblocks
        cpp_total -= cpp
        pixels = min(pixels, nblocks * gmem_align // cpp)
    tile_align_h = ah
    stride = tile_align_h * tile_align_w * min_cpp
    if layers > 1 and stride % 4096:
        tile_align_h <<= 12 - ctz(stride)
    return GmemConfig(tile_align=(tile_align_w, tile_align_h), gmem_pixels=pixels, min_cpp=min_cpp)


def select_tile_size(fb_size: tuple[int, int], tile_align: tuple[int, int], tile_max: tuple[int, int],
                     gmem_pixels: int, layers: int, fdm: bool) -> tuple[int, int] | None:
    """``tu_tiling_config_update_tile_layout``: the tile size with the fewest tiles (None: no
    tile fits, i.e. the pass renders in sysmem).

    For each width ``Tw`` = k * tile_align_w up to ``min(tile_max_w, align(W, tile_align_w))``:
    ``Th = min(gmem_pixels / (Tw * layers), max_tile_h)`` rounded down to tile_align_h, where
    ``max_tile_h = min(tile_max_h, align(H, tile_align_h))``; FDM passes add a penalty of 1000
    tiles when ``Tw > 2*Th`` or ``Th > 2*Tw`` (before re-balancing); ``Th`` is re-balanced to
    ``align(ceil(H / tiles_h), tile_align_h)``; the smallest count + penalty wins, ties going to
    the strictly squarer tile (so the narrowest of equals).
    """
    W, H = fb_size
    aw, ah = tile_align
    max_w = min(tile_max[0], align_npot(W, aw))
    max_h = min(tile_max[1], align_npot(H, ah))
    best: tuple[tuple[int, int], tuple[int, int]] | None = None
    tw = aw
    while tw <= max_w:
        th = min(gmem_pixels // (tw * layers), max_h)
        th = (th // ah) * ah
        if th > 0:
            penalty = 1000 if fdm and (tw > 2 * th or th > 2 * tw) else 0
            count_w, count_h = div_round_up(W, tw), div_round_up(H, th)
            th = align_npot(div_round_up(H, count_h), ah)
            key = (count_w * count_h + penalty, abs(tw - th))
            if best is None or key < best[0]:
                best = (key, (tw, th))
        tw += aw
    return None if best is None else best[1]
