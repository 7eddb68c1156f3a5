"""Pictures of a render pass a person can put in a bug report: (a) the framebuffer with each
view's bins, (b) the subsampled image in memory, (c) the reconstruction and its error."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fdm.plan import RenderPassPlan

from .aprons import AprBlit
from .draw import Box, Canvas, Label, Line, Raster, Shape
from .solver import SubsampledLayout

Color = tuple[int, int, int]

#: one colour per fragment area (w, h); anything else falls back to grey
FA_COLORS: dict[tuple[int, int], Color] = {
    (1, 1): (237, 248, 233), (1, 2): (199, 233, 192), (2, 1): (161, 217, 155), (2, 2): (116, 196, 118),
    (1, 4): (253, 208, 162), (4, 1): (253, 174, 107), (2, 4): (158, 202, 225), (4, 2): (107, 174, 214),
    (4, 4): (49, 130, 189), (8, 8): (8, 81, 156),
}
GRID = (150, 150, 150)
MERGED = (20, 40, 140)
APRON = (215, 25, 28)
UNSUB = (200, 200, 200)

DRAW_W = 760.0
MARGIN = 40.0
LEGEND_W = 190.0


def fa_color(fa: Sequence[int]) -> Color:
    return FA_COLORS.get((fa[0], fa[1]), (190, 190, 190))


def _scale(w: int, h: int) -> float:
    return min(DRAW_W / w, 620.0 / h)


def _legend(x: float, y: float, fas: Sequence[Sequence[int]], extra: Sequence[tuple[str, Box]]) -> list[Shape]:
    shapes: list[Shape] = [Label(x, y, "fragment area", 12)]
    y += 8
    for fa in sorted({(f[0], f[1]) for f in fas}):
        shapes.append(Box(x, y, 16, 12, fill=fa_color(fa), stroke=(60, 60, 60)))
        shapes.append(Label(x + 22, y + 10, f"{fa[0]}x{fa[1]}", 11))
        y += 17
    y += 6
    for text, proto in extra:
        shapes.append(Box(x, y, 16, 12, fill=proto.fill, stroke=proto.stroke, width=proto.width, hatch=proto.hatch,
                          dash=proto.dash))
        shapes.append(Label(x + 22, y + 10, text, 11))
        y += 17
    return shapes


def framebuffer_picture(plan: RenderPassPlan, view: int) -> Canvas:
    """(a) The framebuffer with the view's bins ``B_v``: colour = fragment area, hatched = LRZ
    off for that tile, thick outline = merged tile, dashed = the unshifted tile grid."""
    sc = plan.scenario
    W, H = sc.framebuffer
    s = _scale(W, H)
    ox, oy = MARGIN, MARGIN + 10
    shapes: list[Shape] = [Label(ox, 22, f"{sc.name}: view {view}, framebuffer {W}x{H}, bins (tile "
                                          f"{plan.tiling.tile_size[0]}x{plan.tiling.tile_size[1]}, b_o = "
                                          f"{plan.bin_offsets[view][0]},{plan.bin_offsets[view][1]})", 13)]
    fas: list[tuple[int, int]] = []
    for t in plan.tiles:
        v = t.views[view]
        if not v.visible:
            continue
        x, y, w, h = v.bin
        x2, y2 = min(x + w, W), min(y + h, H)
        if x2 <= x or y2 <= y:
            continue
        fas.append(v.frag_area)
        merged = t.extent != (1, 1)
        shapes.append(Box(ox + x * s, oy + y * s, (x2 - x) * s, (y2 - y) * s, fill=fa_color(v.frag_area),
                          stroke=MERGED if merged else (90, 90, 90), width=3 if merged else 1,
                          hatch=(0, 0, 0) if not t.lrz else None))
        if (x2 - x) * s > 34 and (y2 - y) * s > 26:
            cx, cy = ox + (x + x2) / 2 * s, oy + (y + y2) / 2 * s
            shapes.append(Label(cx, cy, f"{v.frag_area[0]}x{v.frag_area[1]}", 11, anchor="middle"))
            shapes.append(Label(cx, cy + 12, f"#{t.index}", 9, (70, 70, 70), anchor="middle"))
    T = plan.tiling.tile_size
    for k in range(1, plan.tiling.vsc.tile_count[0]):
        if k * T[0] < W:
            shapes.append(Line(ox + k * T[0] * s, oy, ox + k * T[0] * s, oy + H * s, GRID, 0.5))
    for k in range(1, plan.tiling.vsc.tile_count[1]):
        if k * T[1] < H:
            shapes.append(Line(ox, oy + k * T[1] * s, ox + W * s, oy + k * T[1] * s, GRID, 0.5))
    shapes.append(Box(ox, oy, W * s, H * s, stroke=(0, 0, 0), width=2))
    lx = ox + W * s + 20
    shapes += _legend(lx, oy + 10, fas, [("LRZ off", Box(0, 0, 1, 1, fill=(255, 255, 255), hatch=(0, 0, 0))),
                                         ("merged tile", Box(0, 0, 1, 1, stroke=MERGED, width=3)),
                                         ("tile grid (b_cs)", Box(0, 0, 1, 1, stroke=GRID, dash=True))])
    return Canvas(int(lx + LEGEND_W), int(oy + H * s + MARGIN), tuple(shapes), f"framebuffer view {view}")


def subsampled_picture(layout: SubsampledLayout, view: int, aprons: Sequence[AprBlit]) -> Canvas:
    """(b) The subsampled image in memory (``width0 x height0``): each stored bin at its
    ``subsampled_pos``, coloured by its effective fragment area; un-subsampled bins grey and
    dashed; bins moved by the solver marked; apron destinations in red."""
    W0, H0 = layout.width0, layout.height0
    s = _scale(W0, H0)
    ox, oy = MARGIN, MARGIN + 10
    shifted = {e.cell for e in layout.log if e.view == view and e.kind == "shift"}
    unsub = {e.cell for e in layout.log if e.view == view and e.kind == "unsubsample"}
    title = (f"subsampled image, view {view}: {W0}x{H0} allocated"
             + ("" if layout.solved else " - solver not run (more than 512 bins): stored full resolution"))
    shapes: list[Shape] = [Label(ox, 22, title, 13)]
    fas: list[tuple[int, int]] = []
    for t in layout.tiles:
        r = t.subsampled_pos[view]
        if not t.visible(view) or r is None:
            continue
        fa = t.effective_frag_area(view)
        sub = t.is_subsampled(view)
        fas.append(fa)
        shapes.append(Box(ox + r.x * s, oy + r.y * s, r.w * s, r.h * s,
                          fill=fa_color(fa) if sub or tuple(t.frag_areas[view]) == (1, 1) else UNSUB,
                          stroke=(60, 60, 60), dash=not sub and tuple(t.frag_areas[view]) != (1, 1)))
        if r.w * s > 30 and r.h * s > 24:
            tag = ", ".join(k for k, cells in (("shifted", shifted), ("un-subsampled", unsub)) if t.cell in cells)
            cx, cy = ox + (r.x + r.w / 2) * s, oy + (r.y + r.h / 2) * s
            shapes.append(Label(cx, cy, f"{t.pos[0]},{t.pos[1]}", 10, anchor="middle"))
            if tag:
                shapes.append(Label(cx, cy + 12, tag, 9, (150, 0, 0), anchor="middle"))
    for a in aprons:
        d = a.dst
        shapes.append(Box(ox + d.x * s, oy + d.y * s, max(d.w * s, 1.0), max(d.h * s, 1.0), fill=APRON, stroke=None))
    shapes.append(Box(ox, oy, W0 * s, H0 * s, stroke=(0, 0, 0), width=2))
    fw, fh = layout.fb_size
    if (fw, fh) != (W0, H0):
        shapes.append(Box(ox, oy, fw * s, fh * s, stroke=(120, 120, 120), dash=True))
    lx = ox + W0 * s + 20
    shapes += _legend(lx, oy + 10, fas, [("un-subsampled", Box(0, 0, 1, 1, fill=UNSUB, stroke=(60, 60, 60), dash=True)),
                                         ("apron (blit dst)", Box(0, 0, 1, 1, fill=APRON, stroke=None)),
                                         ("framebuffer extent", Box(0, 0, 1, 1, stroke=(120, 120, 120), dash=True))])
    return Canvas(int(lx + LEGEND_W), int(oy + H0 * s + MARGIN), tuple(shapes), f"subsampled view {view}")


#: rows converted at a time by :func:`to_rgb8` / :func:`heat_rgb`: the float64 temporaries of
#: a strip stay in the CPU cache (the same bytes as whole-image arrays, about twice as fast)
STRIP = 1 << 17


def _strip_rows(shape: tuple[int, ...]) -> int:
    """Rows per strip of about :data:`STRIP` pixels for an image of ``shape``."""
    return max(1, STRIP // max(1, shape[1] if len(shape) > 1 else 1))


def _channel8(a: np.ndarray) -> np.ndarray:
    """One float channel in [0, 1] to uint8: ``rint(clip(a, 0, 1) * 255)``."""
    c = np.minimum(np.maximum(np.asarray(a, dtype=np.float64), 0.0), 1.0)
    c *= 255.0
    return np.rint(c, out=c).astype(np.uint8)


def to_rgb8(img: np.ndarray) -> np.ndarray:
    """Float image in [0, 1] (H x W or H x W x 3) to RGB uint8 (a grey image converted once and
    copied into the three channels), strip by strip."""
    a = np.asarray(img)
    out = np.empty((a.shape[0], a.shape[1], 3), dtype=np.uint8)
    step = _strip_rows(a.shape)
    for y in range(0, a.shape[0], step):
        if a.ndim == 2:
            out[y:y + step] = _channel8(a[y:y + step])[..., None]
        else:
            for k in range(3):
                out[y:y + step, :, k] = _channel8(a[y:y + step, :, k])
    return out


def gray_rgb(a: np.ndarray, lo: float, span: float, missing: Color) -> np.ndarray:
    """Values to grey levels ``to_rgb8((nan_to_num(a, nan=lo) - lo) / span)``, NaN (nothing
    there) in the colour ``missing``; strip by strip (the same bytes as the whole-image formula;
    a float32 image is converted to float64 a strip at a time: no image-sized float64 copy, whose
    fresh pages cost a view's child more than the conversion, issue 22)."""
    a = np.asarray(a)
    out = np.empty((a.shape[0], a.shape[1], 3), dtype=np.uint8)
    step = _strip_rows(a.shape)
    for y in range(0, a.shape[0], step):
        x = np.asarray(a[y:y + step], dtype=np.float64)
        g = _channel8((np.nan_to_num(x, nan=lo) - lo) / span)
        o = out[y:y + step]
        o[...] = g[..., None]
        o[np.isnan(x)] = missing
    return out


def _heat_levels(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The heat map's three channels of ``t`` (the error over the top, clipped to [0, 1]) as
    levels in [0, 255] before rounding (:func:`_channel8` without its ``rint``)."""
    lo = t < 0.5
    chans = (np.where(lo, 1.0, 1.0 - (t - 0.5) * 1.2), np.where(lo, 1.0 - t * 0.4, 0.8 - (t - 0.5) * 1.6),
             np.where(t < 0.25, 1.0 - t * 4.0, 0.0))
    out = []
    for c in chans:
        c = np.minimum(np.maximum(c, 0.0), 1.0)
        c *= 255.0
        out.append(c)
    return out[0], out[1], out[2]


def heat_rgb(err: np.ndarray, vmax: float | None = None) -> np.ndarray:
    """Error magnitudes to a white-yellow-red-black heat map (0 = white)."""
    e = np.abs(np.asarray(err, dtype=np.float64))
    if e.ndim == 3:
        e = e.max(axis=-1)
    top = vmax if vmax else (float(e.max()) or 1.0)
    out = np.empty(e.shape + (3,), dtype=np.uint8)
    step = _strip_rows(e.shape)
    for y in range(0, e.shape[0], step):
        t = np.clip(e[y:y + step] / top, 0.0, 1.0)
        for k, level in enumerate(_heat_levels(t)):
            out[y:y + step, ..., k] = np.rint(level, out=level).astype(np.uint8)
    return out


def heat_rgb_near(err: np.ndarray, near: np.ndarray, slack: float, top: float) -> tuple[np.ndarray, np.ndarray]:
    """``heat_rgb(nan_to_num(err, nan=0), top)`` of errors ``err`` (>= 0; NaN: nothing there,
    coloured as 0, converted a strip at a time) known to within ``slack`` where
    ``near`` (exact elsewhere), and where that colour may not be the exact errors' one: a
    channel level (before rounding) within reach of a rounding boundary (``k + 0.5``) or of a
    seam of the formula (0.25, 0.5) in ``slack`` (the levels move by at most 255 * 4 * slack /
    top, their slope, plus float64 rounding: taken 2 * that + 1e-9).  Elsewhere the colour is
    the exact errors' one."""
    e = np.asarray(err, dtype=np.float64)
    out = np.empty(e.shape + (3,), dtype=np.uint8)
    unsure = np.zeros(e.shape, dtype=bool)
    reach = 2 * 255.0 * 4.0 * slack / top + 1e-9
    seam = 2 * slack / top + 1e-12
    step = _strip_rows(e.shape)
    for y in range(0, e.shape[0], step):
        t = np.clip(np.nan_to_num(e[y:y + step], nan=0.0) / top, 0.0, 1.0)
        n = near[y:y + step]
        u = n & ((np.abs(t - 0.25) < seam) | (np.abs(t - 0.5) < seam))
        for k, level in enumerate(_heat_levels(t)):
            r = np.rint(level)
            u |= n & (np.abs(np.abs(level - r) - 0.5) < reach)
            out[y:y + step, ..., k] = r.astype(np.uint8)
        unsure[y:y + step] = u
    return out, unsure


def raster_picture(title: str, pixels: np.ndarray, note: str = "") -> Canvas:
    h, w = pixels.shape[:2]
    s = _scale(w, h)
    ox, oy = MARGIN, MARGIN + 10
    shapes: list[Shape] = [Label(ox, 22, title, 13), Raster(ox, oy, w * s, h * s, pixels),
              Box(ox, oy, w * s, h * s, stroke=(0, 0, 0), width=1)]
    if note:
        shapes.append(Label(ox, oy + h * s + 22, note, 11))
    return Canvas(int(ox + w * s + MARGIN), int(oy + h * s + MARGIN + 16), tuple(shapes), title)
