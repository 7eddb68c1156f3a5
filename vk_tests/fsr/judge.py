"""The ``fsr`` backend's judge (pure): the large-fragment oracle of the plan with the areas the
device could use (:func:`oracle_fsr`), compared with what was read back (:func:`judge_fsr`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from fdm.geometry import Rect
from fdm.plan import RenderPassPlan

from ..replay.judge import oracle_view
from ..replay.scene import BG, CLEAR
from ..suite.cases import CaseOutput, Scene, Verdict, first_mismatches
from .scene import clamped_areas, image_names, plan_fsr, rates_of

Pair = tuple[int, int]


#: the gradient attachment may differ by one step from the exact value (UNORM rounding)
GRADIENT_TOLERANCE = 1


def _with_areas(plan: RenderPassPlan, areas: Sequence[Sequence[Pair]]) -> RenderPassPlan:
    """``plan`` with the fragment area of tile ``i``, view ``v`` replaced by ``areas[v][i]``."""
    tiles = tuple(attrs.evolve(t, views=tuple(attrs.evolve(tv, frag_area=areas[v][i]) for v, tv in enumerate(t.views)))
                  for i, t in enumerate(plan.tiles))
    return attrs.evolve(plan, tiles=tiles)


# ---- the oracle ----------------------------------------------------------------------------
def _gradient(coord: npt.NDArray[np.uint16], size: Pair, view: int) -> npt.NDArray[np.uint8]:
    """The UNORM8 gradient of a coordinate image (``2·c`` in channels 0, 1): round(c/size·255)
    in red and green, round((0.25 + 0.5·view)·255) in blue, 255 in alpha."""
    out = np.empty(coord.shape[:2] + (4,), dtype=np.uint8)
    for ch in (0, 1):
        # c / size * 255 rounded half up, in integers: (2c·255 + size) // (2·size)
        out[..., ch] = (coord[..., ch].astype(np.int64) * 255 + size[ch]) // (2 * size[ch])
    out[..., 2] = round((0.25 + 0.5 * view) * 255)
    out[..., 3] = 255
    return out


def oracle_fsr(scene: Scene, info: Mapping[str, Any]) -> tuple[dict[str, npt.NDArray[Any]], list[str], list[str]]:
    """The images FSR must produce: per view, :func:`vk_tests.replay.judge.oracle_view` with the
    plan's areas clamped to the recorded supported rates and the scissor lifted, then the
    scissor applied per pixel (FSR coverage: a sample set per pixel); the ids image
    ``(encoded rate, view, 0, 0)``; the gradient.  Undrawn pixels hold ``CLEAR`` (0 for the
    gradient).  Also the problems of the bins (from the oracle) and the notes where FSR's
    coverage differs from FDM's (pixels the FDM oracle would give otherwise)."""
    sc, plan, samples = plan_fsr(scene)
    rates = rates_of(info)
    areas = [clamped_areas(plan, v, rates, samples) for v in range(sc.fdm_layers)]
    fsr_plan = _with_areas(plan, areas)
    w, h = sc.framebuffer
    full = attrs.evolve(sc, scissors=(Rect(0, 0, w, h),))
    s = sc.scissors[0]
    inside = np.zeros((h, w), dtype=bool)
    inside[max(s.y, 0):min(s.y + s.h, h), max(s.x, 0):min(s.x + s.w, w)] = True
    wants: dict[str, npt.NDArray[Any]] = {}
    problems: list[str] = []
    notes: list[str] = []
    for v in range(sc.fdm_layers):
        want, probs = oracle_view(full, fsr_plan, v, "clear")
        problems += probs
        want[~inside] = CLEAR
        fdm_want, _ = oracle_view(sc, fsr_plan, v, "clear")
        differ = int(np.count_nonzero(np.any(fdm_want != want, axis=2)))
        if differ:
            notes.append(f"view{v}: {differ} pixel(s) where FSR's per-pixel coverage differs from FDM's per-fragment "
                         "coverage (the FSR rule is judged)")
        drawn = np.any(want != np.array(CLEAR, dtype=np.uint16), axis=2) & np.any(want != np.array(BG), axis=2)
        ids = np.zeros_like(want)
        ids[...] = CLEAR
        fw, fh = want[..., 2].astype(np.int64), want[..., 3].astype(np.int64)
        enc = np.where(fw == 4, 8, np.where(fw == 2, 4, 0)) | np.where(fh == 4, 2, np.where(fh == 2, 1, 0))
        ids[..., 0] = np.where(drawn, enc, CLEAR[0])
        ids[..., 1] = np.where(drawn, v, CLEAR[1])
        ids[..., 2] = np.where(drawn, 0, CLEAR[2])
        ids[..., 3] = np.where(drawn, 0, CLEAR[3])
        grad = _gradient(want, (w, h), v)
        grad[~drawn] = 0
        names = image_names(v)
        wants[names[0]], wants[names[1]], wants[names[2]] = want, ids, grad
    return wants, problems, notes


def judge_fsr(scene: Scene, out: CaseOutput) -> Verdict:
    """Every image against :func:`oracle_fsr`: exact, the gradient within one UNORM8 step.
    An output rendered without a shading-rate attachment fails."""
    if out.info.get("rate_attachment") is not True:
        return Verdict(status="Fail", message="rendered without a shading-rate attachment: nothing of FSR was checked")
    wants, problems, notes = oracle_fsr(scene, out.info)
    mismatches: list[Mapping[str, Any]] = []
    pixels = 0
    for name, want in wants.items():
        got = out.images.get(name)
        if got is None:
            problems.append(f"{name}: no image read back")
            continue
        tol = GRADIENT_TOLERANCE if name.endswith("_gradient") else 0
        mm = first_mismatches(name, np.asarray(got), want, tolerance=tol)
        pixels += want.shape[0] * want.shape[1]
        if mm:
            if got.shape == want.shape:
                diff = np.abs(np.asarray(got, dtype=np.int64) - want.astype(np.int64)).max(axis=2) > tol
                problems.append(f"{name}: {int(np.count_nonzero(diff))} of {want.shape[0] * want.shape[1]} pixels "
                                "differ from the oracle")
            else:
                problems.append(f"{name}: shape {list(got.shape)}, want {list(want.shape)}")
            mismatches += mm[:4]
    note = f"; {'; '.join(notes)}" if notes else ""
    if problems:
        return Verdict(status="Fail", message="; ".join(problems) + note, mismatches=tuple(mismatches))
    return Verdict(status="Pass", message=f"{pixels} pixels of {len(wants)} image(s) equal the large-fragment oracle "
                                          f"at the clamped shading rates{note}")
