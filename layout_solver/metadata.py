"""Subsampled-image metadata and the shader-side coordinate transform.

Models ``tu_emit_subsampled_metadata`` and ``tu_get_subsampled_coordinates``
(src/freedreno/vulkan/tu_subsampled_image.cc) with the metadata structs of
tu_subsampled_image.h.  All metadata values are float32 (``numpy.float32``) computed in the
driver's order.  Spec: turnip-fdm-spec.md 7.6, 7.7.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import attrs
import numpy as np

from fdm.cmath import F32

from .solver import TU_SUBSAMPLED_MAX_BINS, SubsampledLayout, fb_bin_start

Pair = tuple[int, int]
FPair = tuple[np.float32, np.float32]
Vec4 = tuple[object, object, object, object]

#: vec4 slots per layer: header (2 vec4) + TU_SUBSAMPLED_MAX_BINS bins (8224 bytes)
LAYER_VEC4S = 2 + TU_SUBSAMPLED_MAX_BINS
LAYER_BYTES = 16 * LAYER_VEC4S


@attrs.frozen
class MetadataHeader:
    """``struct tu_subsampled_header``: ``{scale.xy, offset.xy; bin_stride; pad[3]}``."""

    scale: FPair
    offset: FPair
    bin_stride: int


@attrs.frozen
class MetadataBin:
    """``struct tu_subsampled_bin``: ``{scale.xy, offset.xy}``."""

    scale: FPair
    offset: FPair


IDENTITY_BIN = MetadataBin((F32(1), F32(1)), (F32(0), F32(0)))


@attrs.frozen
class LayerMetadata:
    """What is written for one layer: the header and the bins actually written (the
    fallback writes one bin, the normal path ``TCw * TCh``)."""

    layer: int
    view: int
    fallback: bool
    header: MetadataHeader
    bins: tuple[MetadataBin, ...]

    def bin(self, x: int, y: int) -> MetadataBin:
        return self.bins[y * self.header.bin_stride + x]


def size_ratio(image_extent: Pair, size0: Pair) -> FPair:
    """``(float)extent / width0`` per axis: below 1 only with slop."""
    return F32(F32(image_extent[0]) / F32(size0[0])), F32(F32(image_extent[1]) / F32(size0[1]))


def fallback_metadata(image_extent: Pair, size0: Pair, layer: int = 0, view: int = 0) -> LayerMetadata:
    """``tu_emit_subsampled_metadata`` without tiles (sysmem rendering, or more than
    ``TU_SUBSAMPLED_MAX_BINS`` bins): identity header, one bin scaling by ``size_ratio``."""
    r = size_ratio(image_extent, size0)
    hdr = MetadataHeader((F32(1), F32(1)), (F32(0), F32(0)), 1)
    return LayerMetadata(layer, view, True, hdr, (MetadataBin(r, (F32(0), F32(0))),))


def tu_emit_subsampled_metadata(layout: SubsampledLayout, layer: int, *, image_extent: Pair | None = None,
                                offsets_under_shared_viewport: str | None = None) -> LayerMetadata:
    """``tu_emit_subsampled_metadata`` (src/freedreno/vulkan/tu_subsampled_image.cc) for one
    layer of an attachment whose image is exactly covered by the framebuffer (``image_extent``
    defaults to it; ``width0 x height0`` come from the layout).

    ``view = min(layer, views - 1)``.  Header: ``scale = extent / T``, ``offset = b_o / T``,
    ``bin_stride = TCw``.  Bin of cell ``j`` (row-major): ``(1, 1, 0, 0)`` unless the cell's root
    is subsampled and visible in the view, else ``(size_ratio / fa_eff,
    (sub - fb_bin_start / fa_eff) / size0)`` with integer division inside.

    ``offsets_under_shared_viewport`` None uses the offsets the solver used; ``"real"`` models
    pop-os @ 4ff7b570 whose ``tu_emit_subsampled`` passes the real offsets even under a shared
    viewport (inconsistent with the layout), ``"null"`` the fixed fork.
    """
    plan = layout.plan
    views = plan.scenario.views
    view = min(layer, views - 1)
    ext = image_extent if image_extent is not None else layout.fb_size
    size0 = (layout.width0, layout.height0)
    if not layout.solved:
        return fallback_metadata(ext, size0, layer, view)
    b_o = layout.emit_bin_offset(view, offsets_under_shared_viewport)
    T = layout.tile_size
    tcw, tch = layout.tile_count
    r = size_ratio(ext, size0)
    hdr = MetadataHeader((F32(F32(ext[0]) / F32(T[0])), F32(F32(ext[1]) / F32(T[1]))),
                         (F32(F32(b_o[0]) / F32(T[0])), F32(F32(b_o[1]) / F32(T[1]))), tcw)
    bins = []
    for y in range(tch):
        for x in range(tcw):
            t = layout.tile(x, y)
            if t is None or not t.visible(view) or not t.subsampled:
                bins.append(IDENTITY_BIN)
                continue
            fa = t.effective_frag_area(view)
            sub = t.subsampled_pos[view]
            start = fb_bin_start(t, T, b_o)
            bins.append(MetadataBin(
                (F32(r[0] / F32(fa[0])), F32(r[1] / F32(fa[1]))),
                (F32(F32(sub.x - start[0] // fa[0]) / F32(size0[0])),
                 F32(F32(sub.y - start[1] // fa[1]) / F32(size0[1])))))
    return LayerMetadata(layer, view, False, hdr, tuple(bins))


def metadata_ubo(layers: Sequence[LayerMetadata]) -> tuple[Vec4 | None, ...]:
    """The metadata buffer as the shader's UBO sees it: ``LAYER_VEC4S`` vec4 per layer
    (layer ``i`` at ``i * LAYER_VEC4S``); header vec4 0 = ``(scale.xy, offset.xy)``, vec4 1 =
    ``(bin_stride, pad...)`` (the stride is a uint); unwritten bins are None."""
    out = []
    for lm in layers:
        h = lm.header
        out.append((h.scale[0], h.scale[1], h.offset[0], h.offset[1]))
        out.append((h.bin_stride, 0, 0, 0))
        written = [(b.scale[0], b.scale[1], b.offset[0], b.offset[1]) for b in lm.bins]
        out.extend(written + [None] * (TU_SUBSAMPLED_MAX_BINS - len(written)))
    return tuple(out)


def layout_metadata(layout: SubsampledLayout, **kw) -> tuple[LayerMetadata, ...]:
    """Metadata of every layer of a multiview pass (one per view) or of a single-layer pass."""
    return tuple(tu_emit_subsampled_metadata(layout, i, **kw) for i in range(layout.plan.scenario.views))


# --------------------------------------------------------------------------------------------
# float32 helpers of the shader

class UndefinedMetadataRead(ValueError):
    """The transform reads a metadata slot that was never written (or lies past the buffer)."""


def f2u16(x: np.float32) -> int:
    """NIR ``f2u16``: truncation towards zero; negative, NaN and >= 65536 inputs are undefined
    (refused here)."""
    xf = float(x)
    if not 0.0 <= xf < 65536.0:
        raise ValueError(f"f2u16({xf!r}) is undefined")
    return int(xf)


def _round_f32(exact: Fraction) -> np.float32:
    """Round an exact rational to the nearest float32 (ties to even), once."""
    guess = F32(float(exact))   # float64 then float32: may be off by one ulp (double rounding)
    if not np.isfinite(guess):
        return guess
    cands = (np.nextafter(guess, F32(-np.inf), dtype=np.float32), guess,
             np.nextafter(guess, F32(np.inf), dtype=np.float32))
    best = None
    for c in cands:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - exact)
        if best is None or d < best[0] or (d == best[0] and int(c.view(np.uint32)) & 1 == 0):
            best = (d, c)
    return F32(best[1])


def ffma(a: np.float32, b: np.float32, c: np.float32, fused: bool) -> np.float32:
    """``a * b + c`` in float32: ``fused`` rounds the exact result once (``nir_ffma`` as a
    hardware FMA); otherwise the product is rounded first (``nir_ffma_weak`` split into
    ``fmul`` + ``fadd``).  The product of two float32 is exact in float64, but the sum in
    float64 is not always exact, so the fused result is rounded from the exact rational."""
    a, b, c = F32(a), F32(b), F32(c)
    if not fused:
        return F32(F32(a * b) + c)
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return F32(float(a) * float(b) + float(c))
    return _round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def tu_get_subsampled_coordinates(ubo: Sequence[Vec4 | None], coord: Sequence[float], *,
                                  fused: bool = True) -> FPair:
    """``tu_get_subsampled_coordinates`` (src/freedreno/vulkan/tu_subsampled_image.cc): the
    normalized coordinate in the subsampled image for a normalized framebuffer-space
    coordinate ``coord = (u, v[, layer])`` (floats, converted to float32).

    ``layer = f2u16(c.z)``, ``L = layer * 514``; ``bin = f2u16(c.xy * hdr.scale +
    hdr.offset)``; ``idx = bin.y * stride + bin.x + L + 2``; result ``c.xy * bin.scale +
    bin.offset``, each multiply-add fused or not according to ``fused`` (``nir_ffma_weak`` in
    the newest version, ``nir_ffma`` before: whether ir3 fuses is an open question).
    """
    u, v = F32(coord[0]), F32(coord[1])
    _, _, idx = subsampled_bin(ubo, coord, fused=fused)
    bd = ubo[idx] if idx < len(ubo) else None
    if bd is None:
        raise UndefinedMetadataRead(f"vec4 {idx} of the metadata was not written")
    return ffma(u, bd[0], bd[2], fused), ffma(v, bd[1], bd[3], fused)


def subsampled_bin(ubo: Sequence[Vec4 | None], coord: Sequence[float], *, fused: bool = True
                   ) -> tuple[int, int, int]:
    """The bin lookup of ``tu_get_subsampled_coordinates``: ``(bin.x, bin.y, vec4 index)``."""
    u, v = F32(coord[0]), F32(coord[1])
    layer = f2u16(F32(coord[2])) if len(coord) > 2 else 0
    base = layer * LAYER_VEC4S
    if base + 1 >= len(ubo):
        raise UndefinedMetadataRead(f"layer {layer} has no metadata")
    hdr, stride_v = ubo[base], ubo[base + 1]
    bx = f2u16(ffma(u, hdr[0], hdr[2], fused))
    by = f2u16(ffma(v, hdr[1], hdr[3], fused))
    return bx, by, by * int(stride_v[0]) + bx + base + 2


def shader_pixel(layout: SubsampledLayout, ubo: Sequence[Vec4 | None], x: float, y: float,
                 layer: int | None = None, *, fused: bool = True) -> tuple[float, float]:
    """Framebuffer pixel position ``(x, y)`` -> subsampled-image pixel position through the
    shader transform: normalize by the image extent (float32), transform, scale by
    ``width0 x height0``."""
    W, H = layout.fb_size
    c = [F32(x / W), F32(y / H)]
    if layer is not None:
        c.append(F32(layer))
    u, v = tu_get_subsampled_coordinates(ubo, c, fused=fused)
    return float(u) * layout.width0, float(v) * layout.height0


def framebuffer_to_subsampled(layout: SubsampledLayout, view: int, x: int | Fraction | float,
                              y: int | Fraction | float) -> tuple[Fraction, Fraction]:
    """What the metadata encodes, in exact arithmetic: the subsampled-image pixel position of
    framebuffer position ``(x, y)`` of ``view``.  The bin is ``floor((x + b_o) / T)``; inside a
    stored tile ``sub + (x - b_s) / fa_eff``; identity where the tile is not stored subsampled
    (solver did not run)."""
    x, y = Fraction(x), Fraction(y)
    if not layout.solved:
        return x, y
    b_o = layout.bin_offset(view)
    T = layout.tile_size
    cx, cy = math.floor((x + b_o[0]) / T[0]), math.floor((y + b_o[1]) / T[1])
    t = layout.tile(cx, cy)
    if t is None or not t.visible(view):
        raise ValueError(f"({x}, {y}) lies in cell ({cx}, {cy}), which is not rendered for view {view}")
    fa = t.effective_frag_area(view)
    sub = t.subsampled_pos[view]
    bs = fb_bin_start(t, T, b_o)
    return sub.x + (x - bs[0]) / fa[0], sub.y + (y - bs[1]) / fa[1]
