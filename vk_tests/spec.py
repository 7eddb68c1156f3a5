"""The spec's formulas (docs/spec/vulkan-fdm-and-cts.md) that the host oracles and the fdm
judges share, on integers: the texel size of §1.2 (one definition) and the extents it is
computed from (§1.2, §1.4).  Pure; imports no other module of the suite."""

from __future__ import annotations

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]


def pow2_at_least(q: int) -> int:
    """``2^ceil(log2 q)`` for an integer ``q >= 1``: the smallest power of two not below ``q``."""
    t = 1
    while t < q:
        t *= 2
    return t


def texel_size_undefined(fb: int, fdm: int) -> bool:
    """Where the spec formula has no value: ``floor(fb / fdm) == 0`` (``log2 0``).  The map then
    has more texels than the framebuffer has pixels, which is legal (VUIDs 02555/02556 bound the
    map only from below)."""
    return fb // fdm == 0


def texel_size_axis(fb: int, fdm: int, t_min: int, t_max: int | None) -> int:
    """§1.2 (Docs:chapters/fragmentdensitymapops.adoc:82-119), spec revision 3, one axis:
    ``T' = 2^ceil(log2(floor(fb / fdm)))``, ``T = clamp(T', t_min, t_max)`` (``t_max`` None: no
    upper bound).  Where ``floor(fb / fdm) == 0`` (:func:`texel_size_undefined`) the limit
    ``T' -> 0`` is taken: the lower clamp ``t_min`` (turnip's ``logbase2_ceil(0) = 0``, ``T' = 1``,
    gives the same after the clamp)."""
    q = fb // fdm
    t = t_min if q == 0 else max(pow2_at_least(q), t_min)
    return t if t_max is None else min(t, t_max)


def texel_size_pre_v3(fb: int, fdm: int, t_min: int, t_max: int | None) -> int:
    """The pre-revision-3 reading (§1.2 NOTE at :90-98, §1.11 tu-old), one axis:
    ``2^ceil(log2(fb / fdm))`` on the real quotient, i.e. of ``ceil(fb / fdm)``, clamped."""
    t = max(pow2_at_least(max(1, -(-fb // fdm))), t_min)
    return t if t_max is None else min(t, t_max)


def spec_texel_size(extent: Pair, fdm_extent: Pair, min_texel: Pair, max_texel: Pair) -> Pair:
    """:func:`texel_size_axis` on both axes: the texel size of a pass over ``extent``
    (:func:`render_extent`) with a map of ``fdm_extent`` texels."""
    return (texel_size_axis(extent[0], fdm_extent[0], min_texel[0], max_texel[0]),
            texel_size_axis(extent[1], fdm_extent[1], min_texel[1], max_texel[1]))


def render_extent(path: str, framebuffer: Pair, render_area: Rect4) -> Pair:
    """The extent the texel size is computed from: the framebuffer for a render pass; for
    ``vkCmdBeginRendering`` (``path`` ``dynrend``) ``renderArea.offset + renderArea.extent``
    (fragmentdensitymapops.adoc :100-112)."""
    if path == "dynrend":
        return (render_area[0] + render_area[2], render_area[1] + render_area[3])
    return framebuffer


def min_map_extent(extent: Pair, max_texel: Pair) -> Pair:
    """The smallest map the pass may use: ``ceil(extent / maxFragmentDensityTexelSize)``
    (VUID-VkFramebufferCreateInfo-renderPass-02555/02556; dynamic rendering 06112/06114)."""
    return (-(-extent[0] // max_texel[0]), -(-extent[1] // max_texel[1]))
