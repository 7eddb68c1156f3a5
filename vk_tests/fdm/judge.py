"""The ``fdm`` backend's judge of the core cases (:func:`judge_fdm`, pure): the spec bounds
everywhere (:func:`spec_bound_problems`, :func:`cts_bound_problems`), exact equality with the
large-fragment oracle of the model's plan on turnip (:mod:`vk_tests.fdm.expected`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan
from turnip_base.errors import NotModelled, ScenarioError

from ..replay.scene import BG, CLEAR, image_names
from ..spec import render_extent, spec_texel_size
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .device import DRIVER_ID_MESA_TURNIP
from .expected import device_scenario, oracle_images
from .scene import clear_rect_colour, clear_rects_of, parse, pass_render_area

Pair = tuple[int, int]
Rect4 = tuple[int, int, int, int]


def texel_table(sc: fdm.Scenario, layer: int) -> npt.NDArray[np.float64]:
    """``(1/dx)·(1/dy)`` of each texel of a layer (inf where a density is 0: the area is
    undefined there, §1.3), from the stored bytes or floats exactly as the device reads them."""
    raw = np.asarray(sc.density.layers[layer if len(sc.density.layers) > 1 else 0], dtype=np.float64)
    d = raw / 255.0 if sc.density.format == "R8G8_UNORM" else raw
    with np.errstate(divide="ignore"):
        return 1.0 / (d[..., 0] * d[..., 1])


def _max3(a: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The maximum over each texel's 3×3 neighbourhood (the filter allowance of §1.3)."""
    p = np.pad(a, 1, mode="edge")
    h, w = a.shape
    return np.max(np.stack([p[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)]), axis=0)


def zero_density_near(sc: fdm.Scenario, layer: int, texel: Pair) -> npt.NDArray[np.bool_]:
    """The framebuffer pixels within one texel (a 3×3 window) of a zero-density texel: the area
    is undefined there (§1.3; turnip skips a whole bin whose centre texel is 0), not checked."""
    w, h = sc.framebuffer
    table = texel_table(sc, layer)
    fh_, fw_ = table.shape
    off = tuple(sc.fdm_offsets[layer]) if sc.fdm_offsets else (0, 0)
    tx = np.clip((np.arange(w) - off[0]) // texel[0], 0, fw_ - 1)
    ty = np.clip((np.arange(h) - off[1]) // texel[1], 0, fh_ - 1)
    out: npt.NDArray[np.bool_] = ~np.isfinite(_max3(table)[ty[:, None], tx[None, :]])
    return out


def _texel_index(px: npt.NDArray[np.int64], off: int, t: int, n: int) -> npt.NDArray[np.int64]:
    out: npt.NDArray[np.int64] = np.clip((px - off) // t, 0, n - 1)
    return out


def bin_window(sc: fdm.Scenario, layer: int, texel: Pair, bins: Sequence[Rect4]) -> npt.NDArray[np.float64]:
    """The filter window of a driver that fetches the map once per bin (turnip: one texel at the
    bin's centre for every fragment of the bin, ``tu_calc_frag_area``): per pixel, the largest
    density product of the texels (3×3 window, offsets, clamp-to-edge) that the bin holding the
    pixel covers; 0 outside every bin.  The spec leaves the window implementation-defined and asks
    only that the area lie within the fetched set's (§1.3), so on turnip this is the bound."""
    w, h = sc.framebuffer
    out = np.zeros((h, w), dtype=np.float64)
    bound = _max3(texel_table(sc, layer))
    fh_, fw_ = bound.shape
    off = tuple(sc.fdm_offsets[layer]) if sc.fdm_offsets else (0, 0)
    for x, y, bw, bh in bins:
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + bw, w), min(y + bh, h)
        if x1 <= x0 or y1 <= y0:
            continue
        tx0, tx1 = (min(max((p - off[0]) // texel[0], 0), fw_ - 1) for p in (x0, x1 - 1))
        ty0, ty1 = (min(max((p - off[1]) // texel[1], 0), fh_ - 1) for p in (y0, y1 - 1))
        b = bound[ty0:ty1 + 1, tx0:tx1 + 1]
        fin = b[np.isfinite(b)]
        out[y0:y1, x0:x1] = np.maximum(out[y0:y1, x0:x1], float(fin.max()) if fin.size else 0.0)
    return out


def plan_bins(plan: RenderPassPlan, view: int) -> list[Rect4]:
    """The framebuffer-space bins ``B_v`` of ``view`` in which the view is visible."""
    return [t.views[view].bin for t in plan.tiles if t.views[view].visible]


def map_window(sc: fdm.Scenario, layer: int) -> npt.NDArray[np.float64]:
    """The widest window the spec allows (the whole map, §1.3): per pixel the largest finite
    density product of the layer, for drivers whose window is unknown."""
    t = texel_table(sc, layer)
    fin = t[np.isfinite(t)]
    w, h = sc.framebuffer
    return np.full((h, w), float(fin.max()) if fin.size else 0.0)


def fragment_block_problems(name: str, v: npt.NDArray[np.int64], drawn: npt.NDArray[np.bool_],
                            checked: npt.NDArray[np.bool_], sc: fdm.Scenario, layer: int, texel: Pair,
                            window: npt.NDArray[np.float64] | None = None
                            ) -> tuple[list[str], npt.NDArray[np.bool_], int]:
    """The per-fragment spec bounds of :func:`spec_bound_problems` on an ``(H, W, 4)`` image of
    ``(2·c.x, 2·c.y, fa.x, fa.y)`` (the other backends' images are turned into this form): a
    ``drawn`` pixel holds a fragment whose block contains it, every ``checked`` pixel of that
    block holds the same value, and the area is at most the density product of the texels the
    block fetches (3×3 filter window, offsets and clamp-to-edge of §1.2), or of ``window`` at the
    block's first pixel where that is larger (the driver's own window: :func:`bin_window`,
    :func:`map_window`).  Returns the problems, the pixels that hold a well-formed fragment, and
    the largest fragment extent seen."""
    h, w = v.shape[:2]
    problems: list[str] = []
    table = texel_table(sc, layer)
    fh_, fw_ = table.shape
    off = tuple(sc.fdm_offsets[layer]) if sc.fdm_offsets else (0, 0)
    x2, y2, fw, fh = v[..., 0], v[..., 1], v[..., 2], v[..., 3]
    bx2, by2 = x2 - fw, y2 - fh  # twice the block start
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    ok = ((fw >= 1) & (fh >= 1) & (bx2 % 2 == 0) & (by2 % 2 == 0) & (bx2 >= 0) & (by2 >= 0)
          & (bx2 // 2 <= xs) & (xs < bx2 // 2 + fw) & (by2 // 2 <= ys) & (ys < by2 // 2 + fh))
    bad = drawn & ~ok
    if bad.any():
        yy, xx = np.nonzero(bad)
        problems.append(f"{name}: {int(bad.sum())} pixel(s) hold neither the undrawn value nor a fragment that "
                        f"contains them (first x={int(xx[0])}, y={int(yy[0])}: {v[yy[0], xx[0]].tolist()})")
    good = drawn & ok
    max_dim = int(max(fw[good].max(initial=1), fh[good].max(initial=1)))
    if good.any():
        # uniform blocks: the checked pixels of each value's block all hold that value
        key = (x2 << 40) | (y2 << 20) | (fw << 10) | fh
        keys, first, counts = np.unique(key[good], return_index=True, return_counts=True)
        gy, gx = np.nonzero(good)
        fy, fx = gy[first], gx[first]
        sat = np.zeros((h + 1, w + 1), dtype=np.int64)
        sat[1:, 1:] = checked.astype(np.int64).cumsum(0).cumsum(1)
        bx0, by0 = bx2[fy, fx] // 2, by2[fy, fx] // 2
        bx1 = np.minimum(bx0 + fw[fy, fx], w)
        by1 = np.minimum(by0 + fh[fy, fx], h)
        in_block = sat[by1, bx1] - sat[by0, bx1] - sat[by1, bx0] + sat[by0, bx0]
        split = counts != in_block
        if split.any():
            i = int(np.argmax(split))
            problems.append(f"{name}: {int(split.sum())} fragment(s) do not cover their whole block (first at "
                            f"x={int(bx0[i])}, y={int(by0[i])}, size {int(fw[fy[i], fx[i]])}x{int(fh[fy[i], fx[i]])}: "
                            f"{int(counts[i])} of {int(in_block[i])} pixels)")
        # the area bound with the 3x3 filter window around the texels the block fetches
        bound = _max3(table)
        t0x, t1x = _texel_index(bx0, off[0], texel[0], fw_), _texel_index(bx1 - 1, off[0], texel[0], fw_)
        t0y, t1y = _texel_index(by0, off[1], texel[1], fh_), _texel_index(by1 - 1, off[1], texel[1], fh_)
        area = (fw[fy, fx] * fh[fy, fx]).astype(np.float64)
        # a block spans at most two texels per axis when it is no wider than a texel: the range
        # maximum is that of its corners (vectorized); wider blocks one by one
        b = np.maximum(np.maximum(bound[t0y, t0x], bound[t0y, t1x]), np.maximum(bound[t1y, t0x], bound[t1y, t1x]))
        for k in np.nonzero((t1x - t0x > 1) | (t1y - t0y > 1))[0]:
            b[k] = float(bound[t0y[k]:t1y[k] + 1, t0x[k]:t1x[k] + 1].max())
        if window is not None:
            b = np.maximum(b, window[np.minimum(by0, h - 1), np.minimum(bx0, w - 1)])
        over_mask = area > b * (1 + 1e-9)
        over = int(over_mask.sum())
        if over:
            i = int(np.argmax(over_mask))
            problems.append(f"{name}: {over} fragment(s) larger than the density allows (first at x={int(bx0[i])}, "
                            f"y={int(by0[i])}: area {int(area[i])} > {float(b[i]):.4g})")
    return problems, good, max_dim


def spec_bound_problems(sc: fdm.Scenario, view: int, images: Mapping[str, npt.NDArray[Any]], *, load_op: str,
                        texel: Pair, readback: str, clear_rects: Sequence[Rect4] = (), suffix: str = "",
                        window: npt.NDArray[np.float64] | None = None) -> list[str]:
    """What the spec requires of a view's images, independent of any driver's bins
    (docs/spec/vulkan-fdm-and-cts.md §1.2, §1.3, §1.5):

    * inside the render area, farther than one texel from a zero-density texel (undefined there),
      a pixel holds the
      undrawn value (``CLEAR`` or, for ``LOAD_OP_LOAD``, the background) or a fragment
      ``(2·c, fa)`` with ``fa ≥ 1`` whose block ``[c − fa/2, c + fa/2)`` contains the pixel, and
      every checked pixel of that block holds the same value (one fragment, one shading);
    * the area is at most the density product of the texels the block's regions fetch
      (``T`` = ``texel``, offsets and clamp-to-edge of §1.2), with a 3×3-texel filter window or
      the driver's ``window`` (:func:`fragment_block_problems`);
    * a drawn fragment's centre lies in the viewport and the scissor (the sample is the centre);
      an undrawn pixel does not lie farther than the largest fragment extent inside both;
    * the geometry image equals the FragCoord image (one sample at the centre: the interpolated
      position is the centre);
    * pixels outside the render area keep the background (non-subsampled readback only: a
      subsampled image is undefined there, §1.8);
    * ``clear_rects`` (``vkCmdClearAttachments``, clears.adoc:265-273): the cleared colour covers
      every pixel at least the largest fragment extent inside a rectangle and none farther than
      that outside one; cleared pixels are exempt from the fragment checks.
    """
    w, h = sc.framebuffer
    fc = np.asarray(images.get(f"view{view}{suffix}"))
    geo = images.get(f"view{view}_geometry{suffix}")
    name = f"view{view}{suffix}"
    if fc.shape != (h, w, 4):
        return [f"{name}: shape {list(fc.shape)}, want {[h, w, 4]}"]
    problems: list[str] = []
    if geo is None or np.asarray(geo).shape != fc.shape:
        problems.append(f"view{view}_geometry{suffix}: missing or of another shape")
    ra = pass_render_area(sc)
    inside = np.zeros((h, w), dtype=bool)
    inside[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] = True
    layer = view if sc.fdm_layers > 1 else 0
    checked = inside & ~zero_density_near(sc, layer, texel)
    v = fc.astype(np.int64)
    undrawn = np.array(CLEAR if load_op == "clear" else BG, dtype=np.int64)
    is_undrawn = np.all(v == undrawn, axis=2)
    cleared = np.zeros((h, w), dtype=bool)
    if clear_rects:
        cleared = np.all(v == np.array(clear_rect_colour(), dtype=np.int64), axis=2)
    drawn = checked & ~is_undrawn & ~cleared
    fragment_problems, good, max_dim = fragment_block_problems(name, v, drawn, checked, sc, layer, texel, window)
    problems += fragment_problems
    x2, y2 = v[..., 0], v[..., 1]
    xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
    vp, sci = sc.viewports[0], sc.scissors[0]
    vx0, vx1 = Fraction(vp.x), Fraction(vp.x) + Fraction(vp.w)
    vy0, vy1 = sorted((Fraction(vp.y), Fraction(vp.y) + Fraction(vp.h)))
    lo_x, hi_x = max(vx0, Fraction(sci.x)), min(vx1, Fraction(sci.x + sci.w))
    lo_y, hi_y = max(vy0, Fraction(sci.y)), min(vy1, Fraction(sci.y + sci.h))
    if good.any():
        # coverage by the centre sample
        cx2, cy2 = x2[good], y2[good]
        outside = ((cx2 < float(2 * lo_x)) | (cx2 >= float(2 * hi_x)) | (cy2 < float(2 * lo_y))
                   | (cy2 >= float(2 * hi_y)))
        if outside.any():
            problems.append(f"{name}: {int(outside.sum())} pixel(s) of fragments whose centre lies outside the "
                            "viewport or scissor")
    m = max_dim
    # the edges are quarter pixels at worst: exact as floats
    deep = ((xs >= float(lo_x + m)) & (xs + 1 <= float(hi_x - m)) & (ys >= float(lo_y + m))
            & (ys + 1 <= float(hi_y - m)))
    missed = checked & is_undrawn & deep & ~cleared
    if missed.any():
        yy, xx = np.nonzero(missed)
        problems.append(f"{name}: {int(missed.sum())} pixel(s) deep inside the viewport and scissor were not drawn "
                        f"(first x={int(xx[0])}, y={int(yy[0])})")
    for r in clear_rects:
        must = np.zeros((h, w), dtype=bool)
        must[max(r[1] + m, 0):max(r[1] + r[3] - m, 0), max(r[0] + m, 0):max(r[0] + r[2] - m, 0)] = True
        if (must & checked & ~cleared).any():
            problems.append(f"{name}: pixels well inside clear rect {list(r)} are not cleared")
    if clear_rects:
        near = np.zeros((h, w), dtype=bool)
        for r in clear_rects:
            near[max(r[1] - m, 0):r[1] + r[3] + m, max(r[0] - m, 0):r[0] + r[2] + m] = True
        if (cleared & ~near).any():
            problems.append(f"{name}: pixels farther than a fragment from every clear rect are cleared")
    if geo is not None and np.asarray(geo).shape == fc.shape:
        g = np.asarray(geo).astype(np.int64)
        diff = checked & np.any(g != v, axis=2)
        if diff.any():
            yy, xx = np.nonzero(diff)
            problems.append(f"view{view}_geometry{suffix}: {int(diff.sum())} pixel(s) differ from FragCoord (first "
                            f"x={int(xx[0])}, y={int(yy[0])}: {g[yy[0], xx[0]].tolist()} vs "
                            f"{v[yy[0], xx[0]].tolist()})")
    if readback != "subsampled" and not suffix:
        outside_ra = ~inside & np.any(v != np.array(BG, dtype=np.int64), axis=2)
        if outside_ra.any():
            problems.append(f"{name}: {int(outside_ra.sum())} pixel(s) outside the render area changed")
    return problems


def _exact(wants: Sequence[npt.NDArray[np.uint16]], images: Mapping[str, npt.NDArray[Any]], suffix: str,
           mask_outside: Rect4 | None) -> tuple[int, list[Mapping[str, Any]]]:
    """Pixels that differ from the oracle (over every attachment of every view); the first ones."""
    n, mm = 0, []
    for v, want in enumerate(wants):
        for base in image_names(v):
            got = np.asarray(images.get(base + suffix))
            if got.shape != want.shape:
                n += want.shape[0] * want.shape[1]
                mm += list(first_mismatches(base + suffix, got, want, limit=2))
                continue
            g, wnt = got, want
            if mask_outside is not None:  # subsampled readback: outside the render area is undefined
                x, y, rw, rh = mask_outside
                g, wnt = got[y:y + rh, x:x + rw], want[y:y + rh, x:x + rw]
            n += int(np.count_nonzero(np.any(g.astype(np.int64) != wnt, axis=2)))
            mm += list(first_mismatches(base + suffix, g, wnt, limit=2))
    return n, mm


def texel_size_for(sc: fdm.Scenario, path: str, device: Mapping[str, Any]) -> Pair:
    """The spec's texel size on the recorded device (its min/max texel size; (1,1)..(∞) when
    unknown)."""
    lo = tuple(device.get("min_texel") or (1, 1))
    hi = tuple(device.get("max_texel") or (1 << 30, 1 << 30))
    extent = render_extent(path, sc.framebuffer, pass_render_area(sc))
    return spec_texel_size(extent, sc.density.size, (int(lo[0]), int(lo[1])), (int(hi[0]), int(hi[1])))


def cts_bound_problems(sc: fdm.Scenario, view: int, images: Mapping[str, npt.NDArray[Any]], texel: Pair,
                       suffix: str = "", load_op: str = "clear") -> list[str]:
    """The CTS's checks of a main-tree case (docs/spec/vulkan-fdm-and-cts.md §2.4), on the
    ``(2·c, fa)`` image: per drawn pixel ``B·A + 0.01 ≥ dx·dy`` with ``B·A = 1/(fa.x·fa.y)`` and
    ``dx·dy`` the density of the texel the pixel fetches ("Wrong value of FragSizeEXT variable"),
    and every distinct value at most ``fa.x·fa.y`` times in the view ("Wrong color count"; the
    CTS's views side by side give ``viewCount·area`` over the image)."""
    v = np.asarray(images.get(f"view{view}{suffix}")).astype(np.int64)
    w, h = sc.framebuffer
    if v.shape != (h, w, 4):
        return [f"view{view}{suffix}: shape {list(v.shape)}, want {[h, w, 4]}"]
    undrawn = np.array(CLEAR if load_op == "clear" else BG, dtype=np.int64)
    ra = pass_render_area(sc)
    drawn = np.zeros((h, w), dtype=bool)
    drawn[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] = True
    drawn &= ~np.all(v == undrawn, axis=2) & (v[..., 2] >= 1) & (v[..., 3] >= 1)
    problems: list[str] = []
    table = texel_table(sc, view if sc.fdm_layers > 1 else 0)
    th, tw = table.shape
    off = tuple(sc.fdm_offsets[view]) if sc.fdm_offsets else (0, 0)
    xs = np.clip((np.arange(w) - off[0]) // texel[0], 0, tw - 1)
    ys = np.clip((np.arange(h) - off[1]) // texel[1], 0, th - 1)
    with np.errstate(divide="ignore"):
        dens = 1.0 / table[ys[:, None], xs[None, :]]
    area = (v[..., 2] * v[..., 3]).astype(np.float64)
    bad = drawn & (1.0 / np.maximum(area, 1.0) + 0.01 < dens)
    if bad.any():
        yy, xx = np.nonzero(bad)
        problems.append(f"view{view}{suffix}: {int(bad.sum())} pixel(s) fail the CTS FragSize check B*A + 0.01 >= "
                        f"dx*dy (first x={int(xx[0])}, y={int(yy[0])}: area {int(area[yy[0], xx[0]])})")
    if drawn.any():
        key = (v[..., 0] << 40) | (v[..., 1] << 20) | (v[..., 2] << 10) | v[..., 3]
        keys, first, counts = np.unique(key[drawn], return_index=True, return_counts=True)
        over = counts > area[drawn][first]
        if over.any():
            problems.append(f"view{view}{suffix}: {int(over.sum())} colour(s) appear more often than their area "
                            "(the CTS histogram check)")
    return problems


def area_windows(scene: Scene, sc: fdm.Scenario, texel: Pair, profile: str | None, path: str,
                 scenario: Mapping[str, Any] | None = None) -> tuple[list[npt.NDArray[np.float64]], str]:
    """The area bound's filter window per view (§1.3: implementation-defined): on turnip
    (``profile``) its bins in the model's plan of :func:`device_scenario` (or ``scenario``) —
    one fetch per bin, so a large bin may take a coarser area than the texels around a pixel
    allow; elsewhere the whole map (:func:`map_window`: the window is unknown, a 3×3 excess is
    information).  With the note for the message."""
    if profile is None:
        return [map_window(sc, v if sc.fdm_layers > 1 else 0) for v in range(sc.fdm_layers)], ""
    try:
        plan = fdm.plan_render_pass(fdm.parse_scenario(scenario or device_scenario(scene, profile, path)))
    except (NotModelled, ScenarioError) as e:
        return [map_window(sc, v if sc.fdm_layers > 1 else 0) for v in range(sc.fdm_layers)], \
            f"; area window: the whole map (no turnip plan: {e})"
    if not isinstance(plan, RenderPassPlan):
        return [map_window(sc, v if sc.fdm_layers > 1 else 0) for v in range(sc.fdm_layers)], ""
    return [bin_window(sc, v if sc.fdm_layers > 1 else 0, texel, plan_bins(plan, v)) for v in range(sc.fdm_layers)], \
        f"; area window: turnip {profile}'s {len(plan.tiles)} bin(s)"


def judge_fdm(scene: Scene, out: CaseOutput) -> Verdict:
    """The spec bounds everywhere; on turnip with a known profile also exact equality with the
    large-fragment oracle of the model's plan for that GPU; elsewhere exact agreement with
    turnip's plan for the scene's GPU is reported as information."""
    sc, path, _ = parse(scene)
    device = dict(out.info.get("device") or {})
    readback = str(out.info.get("readback", "nonsubsampled"))
    profile = device.get("profile")
    turnip = device.get("driver_id") == DRIVER_ID_MESA_TURNIP and profile is not None
    load_op = scene.get("load_op", "clear")
    rects = clear_rects_of(scene)
    texel = texel_size_for(sc, path, device)
    suffixes = [""] + (["_resampled"] if readback == "both" else [])
    problems: list[str] = []
    windows, window_note = area_windows(scene, sc, texel, str(profile) if turnip else None, path)
    narrow: list[str] = []
    for suffix in suffixes:
        for v in range(sc.fdm_layers):
            kw: dict[str, Any] = {"load_op": load_op, "texel": texel, "clear_rects": rects, "suffix": suffix,
                                  "readback": "subsampled" if suffix or readback == "subsampled" else readback}
            problems += spec_bound_problems(sc, v, out.images, window=windows[v], **kw)
            if not turnip:  # information: what a 3x3-texel window would reject
                narrow += [p for p in spec_bound_problems(sc, v, out.images, **kw) if "larger than the density" in p]
    mismatches: list[Mapping[str, Any]] = []
    ra = pass_render_area(sc)
    if readback == "both":
        for v in range(sc.fdm_layers):
            for base in image_names(v):
                a, b = np.asarray(out.images.get(base)), np.asarray(out.images.get(base + "_resampled"))
                x, y, rw, rh = ra
                if a.shape != b.shape or np.any(a[y:y + rh, x:x + rw] != b[y:y + rh, x:x + rw]):
                    problems.append(f"{base}_resampled: the subsampled image resampled with NEAREST differs from the "
                                    "non-subsampled one")
                    mismatches += list(first_mismatches(base + "_resampled", b[y:y + rh, x:x + rw],
                                                        a[y:y + rh, x:x + rw], limit=2))
    if (scene.get("fdm") or {}).get("cts"):
        for suffix in suffixes:
            for v in range(sc.fdm_layers):
                problems += cts_bound_problems(sc, v, out.images, texel, suffix, load_op)
    mask = ra if readback == "subsampled" else None
    note = ""
    if turnip:
        wants, probs, why = oracle_images(device_scenario(scene, str(profile), path), scene, sc.framebuffer)
        if why:
            note = f"; turnip {profile}: {why}, no exact expectation"
        else:
            problems += probs
            n, mm = _exact(wants, out.images, "", mask)
            if n:
                problems.append(f"{n} pixel(s) differ from the model's plan for turnip {profile}")
                mismatches += mm
            else:
                note = f"; equal to the model's plan for turnip {profile}"
    else:
        who = f"driver {device.get('driver_id')} ({device.get('name', '?')})"
        try:
            wants, _, why = oracle_images(scene["scenario"], scene, sc.framebuffer)
            n, _ = _exact(wants, out.images, "", mask) if not why else (-1, [])
            info = why or (f"{n} pixel(s) differ from turnip's plan for {sc.gpu.name}" if n
                           else f"equal to turnip's plan for {sc.gpu.name}")
        except (NotModelled, ScenarioError) as e:
            info = f"no turnip plan ({e})"
        if narrow:
            info += "; with a 3x3-texel window: " + "; ".join(narrow)
        note = f"; {who} is not a modelled turnip GPU: the spec bounds decide; information: {info}"
    note = window_note + note
    if problems:
        return Verdict(status="Fail", message="; ".join(problems) + note, mismatches=tuple(mismatches[:8]))
    views = sc.fdm_layers
    return Verdict(status="Pass", message=f"{views} view(s) within the spec bounds ({readback} readback, texel "
                                          f"{texel[0]}x{texel[1]}){note}")
