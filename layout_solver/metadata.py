"""Subsampled-image metadata and the shader-side coordinate transform.

Models ``tu_emit_subsampled_metadata`` and ``tu_get_subsampled_coordinates``
(src/freedreno/vulkan/tu_subsampled_image.cc) with the metadata structs of
tu_subsampled_image.h.  All metadata values are float32 (``numpy.float32``) computed in the
driver's order.  Spec: docs/spec/turnip-fdm-spec.md §7.6, §7.7.

Undefined behaviour of the shader (``f2u16`` of a value outside ``[0, 65536)``, a read of a
metadata slot that was never written) raises :class:`~turnip_base.errors.DriverAssertion`
(:class:`UndefinedMetadataRead` for the latter); a framebuffer position the pass does not render
given to :func:`framebuffer_to_subsampled` is a :class:`~turnip_base.errors.ScenarioError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import attrs
import numpy as np

from fdm.cmath import F32
from fdm.plan import SysmemPlan
from turnip_base.errors import DriverAssertion, ScenarioError

from .options import OffsetsUnderSharedViewport
from .solver import TU_SUBSAMPLED_MAX_BINS, SubsampledLayout, fb_bin_start, image_size0

Pair = tuple[int, int]
FPair = tuple[np.float32, np.float32]
#: one component of a metadata vec4: float32 everywhere except the bin stride (a uint)
Scalar = float | np.float32
Vec4 = tuple[Scalar, Scalar, Scalar, Scalar]

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


def sysmem_metadata(plan: SysmemPlan) -> tuple[LayerMetadata, ...]:
    """What ``tu6_sysmem_render_end`` (tu_cmd_buffer.cc, pop-os @ 4ff7b570) writes for a stored
    subsampled attachment of a pass rendered in sysmem: ``tu_emit_subsampled_metadata`` with no
    tiles, i.e. :func:`fallback_metadata` for every layer (one per view of a multiview pass)."""
    size0 = image_size0(plan)
    return tuple(fallback_metadata(plan.scenario.framebuffer, size0, layer=v, view=v)
                 for v in range(plan.scenario.gmem_layers))


def tu_emit_subsampled_metadata(layout: SubsampledLayout, layer: int, *, image_extent: Pair | None = None,
                                offsets_under_shared_viewport: OffsetsUnderSharedViewport | None = None
                                ) -> LayerMetadata:
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
    views = plan.scenario.fdm_layers  # tu_fdm_num_layers
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
    bins: list[MetadataBin] = []
    for y in range(tch):
        for x in range(tcw):
            t = layout.tile(x, y)
            if t is None or not t.visible(view) or not t.subsampled:
                bins.append(IDENTITY_BIN)
                continue
            fa = t.effective_frag_area(view)
            sub = t.stored_pos(view)
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
    out: list[Vec4 | None] = []
    for lm in layers:
        h = lm.header
        out.append((h.scale[0], h.scale[1], h.offset[0], h.offset[1]))
        out.append((h.bin_stride, 0, 0, 0))
        written = [(b.scale[0], b.scale[1], b.offset[0], b.offset[1]) for b in lm.bins]
        out.extend(written + [None] * (TU_SUBSAMPLED_MAX_BINS - len(written)))
    return tuple(out)


def layout_metadata(layout: SubsampledLayout, *, image_extent: Pair | None = None,
                    offsets_under_shared_viewport: OffsetsUnderSharedViewport | None = None
                    ) -> tuple[LayerMetadata, ...]:
    """Metadata of every layer: one per view of a multiview pass, one per framebuffer layer
    otherwise (``for_each_layer(used_views | resolve_views, fb->layers)``; layer ``i`` describes
    view ``min(i, tu_fdm_num_layers - 1)``, so a layered pass without per-layer FDM repeats
    layer 0's layout).  Keywords: as :func:`tu_emit_subsampled_metadata`."""
    return tuple(tu_emit_subsampled_metadata(layout, i, image_extent=image_extent,
                                             offsets_under_shared_viewport=offsets_under_shared_viewport)
                 for i in range(layout.plan.scenario.gmem_layers))


# --------------------------------------------------------------------------------------------
# float32 helpers of the shader

class UndefinedMetadataRead(DriverAssertion):
    """The transform reads a metadata slot that was never written (or lies past the buffer):
    undefined behaviour of the shader.  ``field`` is the shader function."""


def f2u16(x: Scalar) -> int:
    """NIR ``f2u16``: truncation towards zero; negative, NaN and >= 65536 inputs are undefined
    (refused here with :class:`~turnip_base.errors.DriverAssertion`)."""
    xf = float(x)
    if not 0.0 <= xf < 65536.0:
        raise DriverAssertion("f2u16", f"is undefined outside [0, 65536), got {xf!r}")
    return int(xf)


def _round_f32(exact: Fraction) -> np.float32:
    """Round an exact rational to the nearest float32 (ties to even), once."""
    guess = F32(float(exact))   # float64 then float32: may be off by one ulp (double rounding)
    if not np.isfinite(guess):
        return guess
    cands = (np.nextafter(guess, F32(-np.inf), dtype=np.float32), guess,
             np.nextafter(guess, F32(np.inf), dtype=np.float32))
    best: tuple[Fraction, np.float32] | None = None
    for c in cands:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - exact)
        if best is None or d < best[0] or (d == best[0] and int(c.view(np.uint32)) & 1 == 0):
            best = (d, c)
    if best is None:
        raise AssertionError(f"no finite float32 next to {guess!r} (a bug of the model)")
    return F32(best[1])


def ffma(a: Scalar, b: Scalar, c: Scalar, fused: bool) -> np.float32:
    """``a * b + c`` in float32: ``fused`` rounds the exact result once (``nir_ffma`` as a
    hardware FMA); otherwise the product is rounded first (``nir_ffma_weak`` split into
    ``fmul`` + ``fadd``).  The product of two float32 is exact in float64, but the sum in
    float64 is not always exact, so the fused result is rounded from the exact rational."""
    a32, b32, c32 = F32(a), F32(b), F32(c)
    if not fused:
        return F32(F32(a32 * b32) + c32)
    if not (np.isfinite(a32) and np.isfinite(b32) and np.isfinite(c32)):
        return F32(float(a32) * float(b32) + float(c32))
    exact = Fraction(float(a32)) * Fraction(float(b32)) + Fraction(float(c32))
    if exact == 0:
        # an exact zero takes IEEE 754's sign of a sum: -0 only for (-0) + (-0) (the float64
        # product of float32 zeros is signed and exact); a rational has no signed zero
        return F32(float(a32) * float(b32) + float(c32))
    return _round_f32(exact)


def tu_get_subsampled_coordinates(ubo: Sequence[Vec4 | None], coord: Sequence[Scalar], *,
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
        raise UndefinedMetadataRead("tu_get_subsampled_coordinates",
                                    f"reads only written metadata, but vec4 {idx} was not written")
    return ffma(u, bd[0], bd[2], fused), ffma(v, bd[1], bd[3], fused)


def subsampled_bin(ubo: Sequence[Vec4 | None], coord: Sequence[Scalar], *, fused: bool = True
                   ) -> tuple[int, int, int]:
    """The bin lookup of ``tu_get_subsampled_coordinates``: ``(bin.x, bin.y, vec4 index)``."""
    u, v = F32(coord[0]), F32(coord[1])
    layer = f2u16(F32(coord[2])) if len(coord) > 2 else 0
    hdr, stride = layer_header(ubo, layer)
    bx = f2u16(ffma(u, hdr[0], hdr[2], fused))
    by = f2u16(ffma(v, hdr[1], hdr[3], fused))
    return bx, by, by * stride + bx + layer * LAYER_VEC4S + 2


def layer_header(ubo: Sequence[Vec4 | None], layer: int) -> tuple[Vec4, int]:
    """The header vec4 and the bin stride of ``layer`` as the shader reads them (vec4s
    ``514·layer`` and ``514·layer + 1``); reading a layer never written is undefined."""
    base = layer * LAYER_VEC4S
    hdr = ubo[base] if base < len(ubo) else None
    stride_v = ubo[base + 1] if base + 1 < len(ubo) else None
    if hdr is None or stride_v is None:
        raise UndefinedMetadataRead("tu_get_subsampled_coordinates",
                                    f"reads only written metadata, but layer {layer} has no header")
    return hdr, int(stride_v[0])


def shader_pixel(layout: SubsampledLayout, ubo: Sequence[Vec4 | None], x: float, y: float,
                 layer: int | None = None, *, fused: bool = True) -> tuple[float, float]:
    """Framebuffer pixel position ``(x, y)`` -> subsampled-image pixel position through the
    shader transform: normalize by the image extent (float32), transform, scale by
    ``width0 x height0``."""
    W, H = layout.fb_size
    c: list[Scalar] = [F32(x / W), F32(y / H)]
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
        raise ScenarioError("x, y", f"must lie in a cell rendered for view {view}; ({x}, {y}) lies in cell "
                                    f"({cx}, {cy})")
    fa = t.effective_frag_area(view)
    sub = t.stored_pos(view)
    bs = fb_bin_start(t, T, b_o)
    return sub.x + (x - bs[0]) / fa[0], sub.y + (y - bs[1]) / fa[1]
