"""The ``replay`` backend's oracle and judge (pure): the spec's large-fragment semantics over the
plan's bins and areas (:func:`oracle_view`), compared exactly with what was read back
(:func:`judge_replay`).  See :mod:`vk_tests.replay.render` for the scheme and docs/replay.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

import fdm
from fdm.plan import RenderPassPlan

from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .scene import BG, CLEAR, CLEAR_RECT, clear_rects, image_names, plan_scene, user_index, view_render_area

Rect4 = tuple[int, int, int, int]


# ---- the oracle -----------------------------------------------------------------------------
def _centres(start: int, end: int, origin: int, fa: int) -> list[Fraction]:
    """The centre of the fragment of size ``fa`` aligned to ``origin`` that covers each pixel
    ``p`` in ``[start, end)``: ``origin + fa·floor((p − origin)/fa) + fa/2``."""
    return [Fraction(origin + fa * ((p - origin) // fa)) + Fraction(fa, 2) for p in range(start, end)]


def _in_span(c: Fraction, lo: Fraction, hi: Fraction) -> bool:
    """A sample on the low edge is inside, on the high edge outside (``[lo, hi)``)."""
    return lo <= c < hi


def _density_positive(sc: fdm.Scenario, view: int) -> bool:
    layers = sc.density.layers
    layer = layers[view] if len(layers) > 1 else layers[0]
    values: npt.NDArray[Any] = np.asarray(layer)
    return bool(np.all(values > 0))


def oracle_view(sc: fdm.Scenario, plan: RenderPassPlan, view: int, load_op: str, *,
                clear_rects: Sequence[Rect4] = ()) -> tuple[npt.NDArray[np.uint16], list[str]]:
    """The framebuffer of ``view`` the spec's large-fragment semantics give for the plan's bins
    and fragment areas, and the problems of the bins themselves (overlaps; holes where the
    density map has no zero).  ``clear_rects`` (``vkCmdClearAttachments`` after the draw,
    clears.adoc: each rect is rasterized like a primitive): a fragment is cleared, all its pixels,
    iff its sample (the centre) lies in the rect, ``[x, x + w)`` per axis."""
    w, h = sc.framebuffer
    want = np.empty((h, w, 4), dtype=np.uint16)
    want[...] = BG
    cover = np.zeros((h, w), dtype=np.int32)
    ra = view_render_area(sc, view)
    u = user_index(sc, view)
    vp, sci = sc.viewports[u], sc.scissors[u]
    vx0, vx1 = Fraction(vp.x), Fraction(vp.x) + Fraction(vp.w)
    vy0, vy1 = sorted((Fraction(vp.y), Fraction(vp.y) + Fraction(vp.h)))
    sx0, sx1 = Fraction(sci.x), Fraction(sci.x + sci.w)
    sy0, sy1 = Fraction(sci.y), Fraction(sci.y + sci.h)
    undrawn = np.array(CLEAR if load_op == "clear" else BG, dtype=np.uint16)
    for tile in plan.tiles:
        tv = tile.views[view]
        bx, by, bw, bh = tv.bin
        if not tv.visible or bw <= 0 or bh <= 0:
            continue
        fw, fh = tv.frag_area
        x0, x1 = max(bx, ra[0], 0), min(bx + bw, ra[0] + ra[2], w)
        y0, y1 = max(by, ra[1], 0), min(by + bh, ra[1] + ra[3], h)
        if x0 >= x1 or y0 >= y1:
            continue
        cx = _centres(x0, x1, bx, fw)
        cy = _centres(y0, y1, by, fh)
        drawn_x = np.array([_in_span(c, vx0, vx1) and _in_span(c, sx0, sx1) for c in cx])
        drawn_y = np.array([_in_span(c, vy0, vy1) and _in_span(c, sy0, sy1) for c in cy])
        val = np.empty((y1 - y0, x1 - x0, 4), dtype=np.uint16)
        val[..., 0] = np.array([int(2 * c) for c in cx], dtype=np.uint16)[None, :]
        val[..., 1] = np.array([int(2 * c) for c in cy], dtype=np.uint16)[:, None]
        val[..., 2] = fw
        val[..., 3] = fh
        drawn = drawn_y[:, None] & drawn_x[None, :]
        want[y0:y1, x0:x1] = np.where(drawn[..., None], val, undrawn)
        for rx, ry, rw, rh in clear_rects:
            in_x = np.array([_in_span(c, Fraction(rx), Fraction(rx + rw)) for c in cx])
            in_y = np.array([_in_span(c, Fraction(ry), Fraction(ry + rh)) for c in cy])
            hit = in_y[:, None] & in_x[None, :]
            want[y0:y1, x0:x1][hit] = CLEAR_RECT
        cover[y0:y1, x0:x1] += 1
    problems = []
    over = int(np.count_nonzero(cover > 1))
    if over:
        problems.append(f"view{view}: {over} pixel(s) lie in more than one rendered bin")
    if _density_positive(sc, view):
        hole = cover[ra[1]:ra[1] + ra[3], ra[0]:ra[0] + ra[2]] == 0
        holes = int(np.count_nonzero(hole))
        if holes:
            ys, xs = np.nonzero(hole)
            problems.append(f"view{view}: {holes} render-area pixel(s) lie in no rendered bin although the density "
                            f"map has no 0 (first at x={int(xs[0]) + ra[0]}, y={int(ys[0]) + ra[1]})")
    return want, problems


def judge_replay(scene: Scene, out: CaseOutput) -> Verdict:
    """Compare every view's framebuffer with :func:`oracle_view`, exactly."""
    sc, plan = plan_scene(scene)
    load_op = scene.get("load_op", "clear")
    problems: list[str] = []
    mismatches: list[Mapping[str, Any]] = []
    pixels = 0
    for v in range(sc.fdm_layers):
        want, probs = oracle_view(sc, plan, v, load_op, clear_rects=clear_rects(scene))
        problems += probs
        pixels += want.shape[0] * want.shape[1]
        for name in image_names(v):
            got = out.images.get(name)
            if got is None:
                problems.append(f"{name}: no image read back")
                continue
            mm = first_mismatches(name, np.asarray(got), want)
            if mm:
                if got.shape == want.shape:
                    n = int(np.count_nonzero(np.any(np.asarray(got, dtype=np.int64) != want, axis=2)))
                    problems.append(f"{name}: {n} of {want.shape[0] * want.shape[1]} pixels differ from the oracle")
                else:
                    problems.append(f"{name}: shape {list(got.shape)}, want {list(want.shape)}")
                mismatches += mm[:4]
    if problems:
        return Verdict(status="Fail", message="; ".join(problems), mismatches=tuple(mismatches))
    return Verdict(status="Pass", message=f"{pixels} pixels in {sc.fdm_layers} view(s) of {len(plan.tiles)} "
                                          f"tile(s) equal the large-fragment oracle")
