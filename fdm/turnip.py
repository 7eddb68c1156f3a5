"""Driver-named functions, on plain tuples, for line-by-line comparison with turnip's C.

Each function names the turnip function and file it models.  They are the single home of
the formulas: the structured model (``fdm.tiles``, ``fdm.patch``, ``fdm.plan``) calls them.
Coordinates are ``(x, y)`` tuples of Python ints; float32 values are ``numpy.float32``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from turnip_base.errors import DriverAssertion, ScenarioError

from . import derivations
from .cmath import (
    F32,
    UINT32_MAX,
    c_div,
    div_round_up,
    f32_to_i32,
    f32_to_u32,
    is_pow2,
    logbase2,
    logbase2_ceil,
    modff,
    u32,
)

Pair = tuple[int, int]
Rect = tuple[int, int, int, int]  # x, y, w, h

#: tu_common.h
MAX_VIEWS = 6
MAX_HW_SCALED_VIEWS = 6
MAX_VIEWPORT_SIZE = 16384
MIN_FDM_TEXEL_SIZE_LOG2 = 5
MAX_FDM_TEXEL_SIZE_LOG2 = 10
TU_FDM_OFFSET_GRANULARITY = 8

#: frag area of a view whose density is 0 (tu_calc_frag_area marks it invisible)
INVISIBLE_FRAG_AREA: Pair = (UINT32_MAX, UINT32_MAX)


def euclid_rem(a: int, m: int) -> int:
    """``euclid_rem`` (src/freedreno/vulkan/tu_cmd_buffer.h): ``a`` modulo ``m`` in ``[0, m)``.

    The C version takes the non-negative branch with ``%`` and, for negative ``a``, computes
    ``m - ((-a) % m)`` and maps ``m`` back to 0; that is the mathematical modulo.
    """
    if m <= 0:
        # C's % by zero is undefined behaviour (and the driver's tile sizes are never <= 0)
        raise DriverAssertion("euclid_rem", f"modulus must be positive: m > 0, got m = {m}")
    if a >= 0:
        return a % m
    t = m - ((-a) % m)
    return 0 if t == m else t


def tu_bin_offset(fdm_offset: Pair, tile_size: Pair) -> Pair:
    """``tu_bin_offset`` (src/freedreno/vulkan/tu_cmd_buffer.h): b_o = (-u) mod T per axis.

    The user's FDM offset ``u`` moves the density map; the bin grid is shifted up/left by
    ``b_o`` so that ``u + b_o`` is a whole number of tiles (fdm.rst "Fragment density map offset").
    """
    return (euclid_rem(-fdm_offset[0], tile_size[0]), euclid_rem(-fdm_offset[1], tile_size[1]))


def check_frag_area(frag_area: Pair, field: str) -> None:
    """Fragment areas are powers of two (``tu_calc_frag_area`` rounds down to one), or
    ``UINT32_MAX`` for a view whose density is 0; anything else raises
    :class:`~turnip_base.errors.DriverAssertion` naming ``field``, the driver function that receives it."""
    for c in frag_area:
        if not (c == UINT32_MAX or (isinstance(c, int) and is_pow2(c))):
            raise DriverAssertion(field, f"frag_area components must be powers of two (or UINT32_MAX for a "
                                         f"density-0 view), got {tuple(frag_area)}")


def tu_fdm_per_bin_offset(frag_area: Pair, bin_start: Pair, common_bin_start: Pair) -> Pair:
    """``tu_fdm_per_bin_offset`` (src/freedreno/vulkan/tu_pipeline.cc): o = b_cs - b_s / fa.

    The affine map ``x -> x / fa + o`` sends the framebuffer-space bin start ``b_s`` to the
    common bin start ``b_cs`` (fdm.rst: o = b_cs - s*b_s).  The driver asserts that ``b_s`` is a
    multiple of ``fa``; here that raises :class:`~turnip_base.errors.DriverAssertion`.  Division is C
    truncating division (exact once the assertion holds, also for the negative ``-b_o`` of the
    binning pass).
    """
    check_frag_area(frag_area, "tu_fdm_per_bin_offset")
    fw, fh = frag_area
    bx, by = bin_start
    if bx % fw != 0 or by % fh != 0:
        raise DriverAssertion(
            "tu_fdm_per_bin_offset",
            f"asserts bin.offset % frag_area == 0: bin_start {tuple(bin_start)} is not a multiple of "
            f"frag_area {tuple(frag_area)}")
    # exact division: C truncation and the exact quotient agree once the assertion holds
    return (derivations.per_bin_offset(common_bin_start[0], bx, fw),
            derivations.per_bin_offset(common_bin_start[1], by, fh))


def hw_bin_offset(common_bin_start: Pair, frag_area: Pair) -> Pair:
    """o' = b_cs - b_cs / fa, the a7xx HW bin-scaling offset.

    Models the ``frag_offsets[]`` computation in ``tu6_emit_tile_select``
    (src/freedreno/vulkan/tu_cmd_buffer.cc) that is programmed into
    ``GRAS_BIN_FOVEAT_OFFSET_*`` and passed to patchpoints as ``hw_viewport_offsets``.
    """
    check_frag_area(frag_area, "tu6_emit_tile_select")
    cx, cy = common_bin_start
    fw, fh = frag_area
    if cx < 0 or cy < 0:
        # b_cs is a window offset (uint32_t in the driver): a negative one is a bad argument
        raise ScenarioError("common_bin_start", f"must be non-negative, got {tuple(common_bin_start)}")
    if cx % fw or cy % fh:
        # b_cs is a multiple of the tile size, which fa divides; C truncation otherwise
        return (cx - c_div(cx, fw), cy - c_div(cy, fh))
    return (derivations.hw_offset(cx, fw), derivations.hw_offset(cy, fh))


def unorm8_to_float(value: int) -> np.float32:
    """R8 UNORM unpacking as Mesa's generated u_format code does it: ``x * (1.0f/0xff)``."""
    d: np.float32 = F32(F32(value) * F32(F32(1.0) / F32(255.0)))  # (numpy's stubs make F32(...) Any)
    return d


def fdm_texel_shift(fb_size: int, fdm_size: int) -> int:
    """Texel-size log2 used by ``tu_fragment_density_map_sample`` (src/freedreno/vulkan/tu_image.cc).

    ``clamp(util_logbase2_ceil(fb_size / fdm_size), MIN_FDM_TEXEL_SIZE_LOG2, MAX_FDM_TEXEL_SIZE_LOG2)``
    with C integer division.
    """
    return min(max(logbase2_ceil(fb_size // fdm_size), MIN_FDM_TEXEL_SIZE_LOG2), MAX_FDM_TEXEL_SIZE_LOG2)


def tu_fragment_density_map_sample(sample: Pair, fb_size: Pair, fdm_size: Pair) -> Pair:
    """``tu_fragment_density_map_sample`` (src/freedreno/vulkan/tu_image.cc): the texel index.

    Texel size per axis is ``1 << fdm_texel_shift``; the index is the arithmetic right shift of
    the (possibly negative) sample position, clamped to the map.  Returns ``(i, j)``; the texel
    is read from layer ``view`` of the map by the caller (:func:`fdm.density.raw_frag_area`).
    """
    sx = fdm_texel_shift(fb_size[0], fdm_size[0])
    sy = fdm_texel_shift(fb_size[1], fdm_size[1])
    i = min(max(sample[0] >> sx, 0), fdm_size[0] - 1)
    j = min(max(sample[1] >> sy, 0), fdm_size[1] - 1)
    return (i, j)


def fdm_sample_position(tile_pos: Pair, tile_size: Pair, fb_size: Pair,
                        fdm_offset: Pair | None, bin_offset: Pair | None) -> Pair:
    """Framebuffer position at which ``tu_calc_frag_area`` (tu_tile_config.cc) samples the map.

    ``x1 = px*Tw``, ``x2 = min(x1 + Tw, MAX_VIEWPORT_SIZE)``.  With FDM offsets the midpoint of
    the nominal tile minus ``u`` (plus ``b_o`` unless the viewport is shared) is used and is not
    clamped; without offsets the midpoint of the tile clamped to the framebuffer.
    ``bin_offset`` is ``None`` for the shared-viewport case (no ``b_o`` added).
    """
    x1, y1 = tile_pos[0] * tile_size[0], tile_pos[1] * tile_size[1]
    x2 = min(x1 + tile_size[0], MAX_VIEWPORT_SIZE)
    y2 = min(y1 + tile_size[1], MAX_VIEWPORT_SIZE)
    if fdm_offset is not None:
        ox, oy = fdm_offset
        if bin_offset is not None:
            ox, oy = ox + bin_offset[0], oy + bin_offset[1]
        return ((x1 + x2) // 2 - ox, (y1 + y2) // 2 - oy)
    return ((x1 + min(x2, fb_size[0])) // 2, (y1 + min(y2, fb_size[1])) // 2)


def tu_calc_frag_area(raw_area: tuple[np.float32, np.float32], tile_size: Pair, *,
                      has_fdm_offsets: bool, num_views: int) -> Pair | None:
    """``tu_calc_frag_area`` (src/freedreno/vulkan/tu_tile_config.cc), one view, bit-exact float32.

    ``raw_area`` = (1/density_x, 1/density_y) as float32.  Returns ``None`` when the area is not
    finite (a density of 0): the driver then clears the view's visibility bit and stores
    ``UINT32_MAX`` as its frag area.  Steps: area = w*h; modff both; round up the axis with the
    larger fraction if the area still allows it (ties round y); truncate to uint32; round each
    down to a power of two (0 -> 1); clamp to 8 with offsets and to 4 when
    ``num_views <= MAX_HW_SCALED_VIEWS``; halve until it divides the tile size.
    """
    rw, rh = F32(raw_area[0]), F32(raw_area[1])
    area = F32(rw * rh)
    if not np.isfinite(area):
        return None
    floor_x, frac_x = modff(rw)
    floor_y, frac_y = modff(rh)
    if frac_x > frac_y:
        if F32(F32(floor_x + F32(1)) * floor_y) <= area:
            floor_x = F32(floor_x + F32(1))
    else:
        if F32(floor_x * F32(floor_y + F32(1))) <= area:
            floor_y = F32(floor_y + F32(1))
    w = 1 << logbase2(f32_to_u32(floor_x, "tu_calc_frag_area"))
    h = 1 << logbase2(f32_to_u32(floor_y, "tu_calc_frag_area"))
    if has_fdm_offsets:
        w = min(w, TU_FDM_OFFSET_GRANULARITY)
        h = min(h, TU_FDM_OFFSET_GRANULARITY)
    if num_views <= MAX_HW_SCALED_VIEWS:
        w = min(w, 4)
        h = min(h, 4)
    while tile_size[0] % w != 0:
        w //= 2
    while tile_size[1] % h != 0:
        h //= 2
    return (w, h)


def shared_viewport_frag_area(frag_areas: Sequence[Pair]) -> Pair:
    """The per-axis minimum over all views (``rp.shared_viewport`` branch of
    ``tu_calc_frag_area``, tu_tile_config.cc).  Density-0 views carry ``UINT32_MAX`` and so do
    not lower the minimum."""
    return (min(fa[0] for fa in frag_areas), min(fa[1] for fa in frag_areas))


def rects_intersect(a: Rect, b: Rect) -> bool:
    """Strict rectangle intersection as used by ``tu_calc_bin_visibility``."""
    return (a[0] < b[0] + b[2] and b[0] < a[0] + a[2]
            and a[1] < b[1] + b[3] and b[1] < a[1] + a[3])


def tu_calc_bin_visibility(tile_pos: Pair, tile_size: Pair, render_area: Rect,
                           bin_offset: Pair | None) -> bool:
    """``tu_calc_bin_visibility`` (src/freedreno/vulkan/tu_tile_config.cc), one view.

    The nominal tile ``((px*Tw, py*Th), T)``, shifted by ``-b_o`` when offsets apply and the
    viewport is not shared (pass ``bin_offset=None`` otherwise), must strictly intersect the
    view's render area.
    """
    x, y = tile_pos[0] * tile_size[0], tile_pos[1] * tile_size[1]
    if bin_offset is not None:
        x, y = x - bin_offset[0], y - bin_offset[1]
    return rects_intersect((x, y, tile_size[0], tile_size[1]), render_area)


def tile_select_bin(common_bin_start: Pair, bin_extent: Pair, bin_offset: Pair | None) -> Rect:
    """The per-view framebuffer bin ``B_v`` of a visible view, as ``tu6_emit_tile_select``
    (src/freedreno/vulkan/tu_cmd_buffer.cc) fills ``bins[]``.

    Without offsets (or with a shared viewport: pass ``bin_offset=None``) the bin is the
    nominal (possibly merged) tile.  With offsets: ``b_s = max(0, b_cs - b_o)`` and the end is
    ``min(b_cs + extent - b_o, MAX_VIEWPORT_SIZE)``; the width never goes negative.
    """
    x1, y1 = common_bin_start
    w, h = bin_extent
    if bin_offset is None:
        return (x1, y1, w, h)
    bx = max(0, x1 - bin_offset[0])
    by = max(0, y1 - bin_offset[1])
    bw = max(min(x1 + w - bin_offset[0], MAX_VIEWPORT_SIZE) - bx, 0)
    bh = max(min(y1 + h - bin_offset[1], MAX_VIEWPORT_SIZE) - by, 0)
    return (bx, by, bw, bh)


def binning_pass_bin(fb_size: Pair, bin_offset: Pair | None) -> Rect:
    """The per-view bin used when patching for the binning pass (``tu6_emit_binning_pass``,
    src/freedreno/vulkan/tu_cmd_buffer.cc): ``(-b_o, W + b_o)`` with offsets, else the framebuffer."""
    if bin_offset is None:
        return (0, 0, fb_size[0], fb_size[1])
    return (-bin_offset[0], -bin_offset[1], fb_size[0] + bin_offset[0], fb_size[1] + bin_offset[1])


def scissor_transform(user_scissor: Rect, frag_area: Pair, bin_rect: Rect, tile_start: Pair) -> tuple[Pair, Pair]:
    """The scissor patch of ``fdm_apply_scissors`` (src/freedreno/vulkan/tu_pipeline.cc).

    ``tile_start`` is ``b_cs - o'`` (the caller subtracts the HW offset).  The user scissor is
    rounded outwards into rendering/LRZ space and intersected with the scaled bin.  Returns
    ``(offset, extent)`` with the extent as the driver stores it: a ``uint32_t`` (negative
    results wrap modulo 2**32).

    The far edge is ``MIN2(max, tile_start + scaled)`` where ``scaled`` (``bin.extent / fa``) is a
    ``uint32_t``: the sum is unsigned, so the comparison is too, and a negative ``max`` (a user
    scissor wholly before the bin's start) compares as a huge value - the far edge is then the
    bin's, not ``max`` (the box showed it: Mesa 26.1.6 and 26.2.0-rc1 on a618, a custom-resolve
    subpass whose stored tile sits above its framebuffer bin, ``gen1-00227``).
    """
    x, y, w, h = user_scissor
    fw, fh = frag_area
    o = tu_fdm_per_bin_offset(frag_area, bin_rect[:2], tile_start)
    min_x, min_y = x // fw + o[0], y // fh + o[1]
    max_x, max_y = div_round_up(x + w, fw) + o[0], div_round_up(y + h, fh) + o[1]
    scaled_w, scaled_h = bin_rect[2] // fw, bin_rect[3] // fh
    off = (max(min_x, tile_start[0]), max(min_y, tile_start[1]))
    # MIN2 of an int and an unsigned int compares (and yields) unsigned: usual arithmetic conversions
    ext_w = min(u32(max_x), u32(tile_start[0] + scaled_w)) - off[0]
    ext_h = min(u32(max_y), u32(tile_start[1] + scaled_h)) - off[1]
    return off, (u32(ext_w), u32(ext_h))


SCISSOR_MAX = 0x7FFF


def tu6_emit_scissor(offset: Pair, extent: Pair) -> tuple[Pair, Pair]:
    """``tu6_emit_scissor`` (src/freedreno/vulkan/tu_pipeline.cc): (TL, BR) register values.

    An extent of 0 in either axis gives the empty scissor TL=(1,1), BR=(0,0).  Otherwise
    ``BR = offset + extent - 1`` in uint32 arithmetic and both corners are clamped to 0x7fff.
    """
    if extent[0] == 0 or extent[1] == 0:
        return (1, 1), (0, 0)
    tl = (min(u32(offset[0]), SCISSOR_MAX), min(u32(offset[1]), SCISSOR_MAX))
    br_x = u32(offset[0] + extent[0] - 1)
    br_y = u32(offset[1] + extent[1] - 1)
    return tl, (min(br_x, SCISSOR_MAX), min(br_y, SCISSOR_MAX))


F32x4 = tuple[np.float32, np.float32, np.float32, np.float32]


def fdm_apply_viewport(viewport: tuple[float, float, float, float], frag_area: Pair, bin_rect: Rect,
                       common_bin_start: Pair, hw_offset: Pair) -> F32x4:
    """One slot of ``fdm_apply_viewports`` (src/freedreno/vulkan/tu_pipeline.cc), float32.

    Returns the patched ``(x, y, width, height)``.  Early-out: ``fa == (1,1)`` and
    ``bin.offset == b_cs`` leaves the user viewport unchanged.  Otherwise ``scale = 1.0f/fa``,
    ``o = tu_fdm_per_bin_offset(fa, bin, b_cs) - o'`` and ``x' = scale*x + o``,
    ``w' = w*scale`` (the viewport ends up in LRZ space; the HW adds ``o'``).
    """
    x, y, w, h = (F32(v) for v in viewport)
    if tuple(frag_area) == (1, 1) and tuple(bin_rect[:2]) == tuple(common_bin_start):
        return x, y, w, h
    sx = F32(F32(1.0) / F32(frag_area[0]))
    sy = F32(F32(1.0) / F32(frag_area[1]))
    o = tu_fdm_per_bin_offset(frag_area, bin_rect[:2], common_bin_start)
    ox, oy = o[0] - hw_offset[0], o[1] - hw_offset[1]
    return (F32(F32(sx * x) + F32(ox)), F32(F32(sy * y) + F32(oy)), F32(w * sx), F32(h * sy))


def tu6_emit_viewport_scissor(viewport: F32x4) -> tuple[Pair, Pair]:
    """The ``GRAS_SC_VIEWPORT_SCISSOR_TL/BR`` pair derived in ``tu6_emit_viewport``
    (src/freedreno/vulkan/tu_pipeline.cc) from a (patched) float32 viewport.

    ``min = (int)x``, ``max = (int)ceilf(x + w)`` (negative heights flip y); an empty range is
    grown by one; ``min`` is clamped to >= 0 and ``max`` to >= 1; ``BR = max - 1``.
    """
    x, y, w, h = (F32(v) for v in viewport)
    fn = "tu6_emit_viewport"
    min_x = f32_to_i32(x, fn)
    max_x = f32_to_i32(np.ceil(F32(x + w)), fn)
    if h >= 0:
        min_y = f32_to_i32(y, fn)
        max_y = f32_to_i32(np.ceil(F32(y + h)), fn)
    else:
        min_y = f32_to_i32(F32(y + h), fn)
        max_y = f32_to_i32(np.ceil(y), fn)
    if min_y == max_y:
        max_y += 1
    if min_x == max_x:
        max_x += 1
    min_x, min_y = max(min_x, 0), max(min_y, 0)
    max_x, max_y = max(max_x, 1), max(max_y, 1)
    return (min_x, min_y), (max_x - 1, max_y - 1)
