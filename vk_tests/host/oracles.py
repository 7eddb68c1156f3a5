"""Host-only spec oracles A1-A3 of the CTS-like device suite (issue 9).

``docs/spec/vulkan-fdm-and-cts.md`` §3 "A. Host-only oracles" proposes three CPU checks that
run everywhere, CI included.  Each compares the model (``fdm``, which follows turnip) with an
*independent* statement of the Vulkan rule, written here from the spec text quoted in that
document (§1.2 texel size and fetch, §1.3 area, §1.7 layers, §1.9 offsets) in integer or
``Fraction`` arithmetic.  The spec side never calls the model function it checks.

* ``oracle.texel_size`` (A1, :func:`texel_size`): the FDM texel size turnip uses against the
  spec-v3 formula ``clamp(2^ceil(log2(floor(fb/fdm))), min, max)``.
* ``oracle.area_chooser`` (A2, :func:`area_chooser`): turnip's fragment area for every R8G8
  byte pair against ``w*h <= (255/bx)(255/by)``, ``w, h >= 1``.
* ``oracle.fetch_coords`` (A3, :func:`fetch_coords`): the density texel each bin samples and
  the map layer each view or layer reads, against the region -> texel and layer rules.

The model functions are looked up on their modules at call time (``turnip.tu_calc_frag_area``,
not a name bound at import), so a test can plant a bug with ``monkeypatch`` and see the oracle
report it.  This module never imports ``vulkan`` or :mod:`turnip_base.harness`; docs/host-oracles.md
describes the formulas and the documented differences.

Usage::

    from vk_tests.host.oracles import run_oracle
    print(run_oracle("oracle.area_chooser"))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction

import attrs
import numpy as np
import numpy.typing as npt

from fdm import density as fdm_density
from fdm import tiles as fdm_tiles
from fdm import turnip
from fdm.scenario import make_scenario

from ..spec import texel_size_axis, texel_size_pre_v3, texel_size_undefined

#: the oracles :func:`run_oracle` knows, in suite order (A1, A2, A3)
ORACLES: tuple[str, ...] = ("oracle.texel_size", "oracle.area_chooser", "oracle.fetch_coords")

#: mismatches (and examples of each documented difference) kept per result
MAX_EXAMPLES = 8

#: turnip's advertised limits (tu_device.cc @ 8afad928; spec doc §1.11): ``minFragmentDensityTexelSize``
#: (32, 32), ``maxFragmentDensityTexelSize`` (1024, 1024), ``fragmentDensityOffsetGranularity`` (8, 8).
#: Written out here rather than imported: they are the device's *properties*, the spec side's input.
TU_MIN_TEXEL = 32
TU_MAX_TEXEL = 1024
TU_OFFSET_GRANULARITY = 8

Inputs = tuple[tuple[str, object], ...]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


@attrs.frozen(kw_only=True)
class Case:
    """One checked case: its inputs, what the model gives, what the spec rule says."""

    inputs: Inputs
    model: object
    spec: object

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.inputs)
        return f"{args}: model {self.model!r}; spec {self.spec!r}"


@attrs.frozen(kw_only=True)
class DocumentedDifference:
    """Cases where turnip knowingly departs from the spec text (or takes a reading the spec
    leaves open): the reason, how many cases, and the first few."""

    reason: str
    count: int
    examples: tuple[Case, ...]


@attrs.frozen(kw_only=True)
class OracleResult:
    """What one oracle found.  ``passed`` is true when no case mismatches; documented
    differences are expectations, not failures.  ``mismatches`` holds the first
    :data:`MAX_EXAMPLES` of ``mismatch_count``; ``notes`` say what the count of cases means."""

    name: str
    cases: int
    mismatches: tuple[Case, ...]
    mismatch_count: int
    documented_differences: tuple[DocumentedDifference, ...]
    notes: tuple[str, ...] = ()
    passed: bool

    def __str__(self) -> str:
        lines = [f"{self.name}: {'PASS' if self.passed else 'FAIL'}: {self.cases} cases, "
                 f"{self.mismatch_count} mismatches, "
                 f"{sum(d.count for d in self.documented_differences)} documented differences"]
        for m in self.mismatches:
            lines.append(f"  mismatch: {m}")
        for d in self.documented_differences:
            lines.append(f"  documented ({d.count}): {d.reason}")
            for e in d.examples[:2]:
                lines.append(f"    e.g. {e}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


class _Tally:
    """Collects cases, mismatches and documented differences while an oracle runs."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cases = 0
        self.mismatch_count = 0
        self.mismatches: list[Case] = []
        self.documented: dict[str, tuple[int, list[Case]]] = {}
        self.notes: list[str] = []

    def mismatch(self, case: Case, count: int = 1) -> None:
        self.mismatch_count += count
        if len(self.mismatches) < MAX_EXAMPLES:
            self.mismatches.append(case)

    def document(self, reason: str, case: Case | None, count: int = 1) -> None:
        n, examples = self.documented.get(reason, (0, []))
        if case is not None and len(examples) < MAX_EXAMPLES:
            examples.append(case)
        self.documented[reason] = (n + count, examples)

    def result(self) -> OracleResult:
        docs = tuple(DocumentedDifference(reason=r, count=n, examples=tuple(ex))
                     for r, (n, ex) in self.documented.items() if n)
        return OracleResult(name=self.name, cases=self.cases, mismatches=tuple(self.mismatches),
                            mismatch_count=self.mismatch_count, documented_differences=docs,
                            notes=tuple(self.notes), passed=self.mismatch_count == 0)


# --------------------------------------------------------------------------------------------
# The spec side (docs/spec/vulkan-fdm-and-cts.md §1.2, §1.3, §1.7, §1.9), integers only.


def spec_texel(x: int, offset: int, texel_size: int, fdm: int) -> int:
    """§1.2 and §1.9 (:30-80), one axis: the texel read for framebuffer position ``x`` (a pixel
    index; its centre is ``x + 1/2``): ``clamp(floor((x + 1/2 - offset) / T), 0, fdm - 1)``.
    For integer ``x``, ``offset`` and ``T >= 1`` the half pixel never crosses a texel edge, so
    this is ``floor((x - offset) / T)`` clamped to the edge."""
    return min(max((x - offset) // texel_size, 0), fdm - 1)


def spec_layer(unit: int, *, multiview: bool, fdm_layer_count: int, per_layer: bool, base: int) -> int:
    """§1.2 "Layer used" (:121-142) and §1.7: the FDM image layer read for view ``unit``
    (multiview) or framebuffer layer ``unit`` (otherwise)."""
    if multiview and fdm_layer_count > 1:
        return base + unit  # baseArrayLayer + ViewIndex
    if per_layer:
        return base + unit  # VALVE per-layer: baseArrayLayer + Layer
    return base             # one layer applies to every view and layer


def spec_area_ok(w: int, h: int, bx: int, by: int) -> bool:
    """§1.3 (:166-207): with density ``(bx/255, by/255)``, ``bx, by > 0``, an area is conformant
    iff ``w, h >= 1`` and ``w*h <= (255/bx)(255/by)`` (the clamp rule is on the product; one
    texel per bin makes the filter allowance min = max).  ``(255, 255)`` allows only (1, 1)."""
    return w >= 1 and h >= 1 and Fraction(w * h) <= Fraction(255, bx) * Fraction(255, by)


# --------------------------------------------------------------------------------------------
# A1 oracle.texel_size

A1_FRAMEBUFFERS = (31, 33, 60, 64, 1025, 1040, 4096)
A1_FDM_SIZES = (16, 64)
#: (minFragmentDensityTexelSize, maxFragmentDensityTexelSize) per axis; None = no upper bound
A1_LIMITS: tuple[tuple[int, int | None], ...] = ((1, None), (TU_MIN_TEXEL, TU_MAX_TEXEL))
A1_MODES = ("render_pass", "dynamic_full", "dynamic_sub")

PRE_V3_REASON = ("pre-v3 texel size 2^ceil(log2(fb/fdm)) (tu-old DIV_ROUND_UP, pop-os 0fa430cb): conformant only "
                 "for a device advertising VK_EXT_fragment_density_map specVersion < 3 (spec doc §1.2 NOTE); "
                 "the modelled turnip (tu_image.cc @ 9cad4086) uses the v3 floor")


@contextmanager
def driver_texel_limits(t_min: int, t_max: int | None) -> Iterator[None]:
    """Evaluate turnip's texel-size code as if the device advertised other limits: rebinds
    ``fdm.turnip.MIN/MAX_FDM_TEXEL_SIZE_LOG2`` (read at call time by ``fdm_texel_shift``,
    as the C reads its macros) for the duration, then restores them.  ``t_max=None`` means no
    upper bound (2^30).  Not thread-safe: the constants are module globals."""
    saved = (turnip.MIN_FDM_TEXEL_SIZE_LOG2, turnip.MAX_FDM_TEXEL_SIZE_LOG2)
    turnip.MIN_FDM_TEXEL_SIZE_LOG2 = t_min.bit_length() - 1
    turnip.MAX_FDM_TEXEL_SIZE_LOG2 = 30 if t_max is None else t_max.bit_length() - 1
    try:
        yield
    finally:
        turnip.MIN_FDM_TEXEL_SIZE_LOG2, turnip.MAX_FDM_TEXEL_SIZE_LOG2 = saved


def _fetch_texel_size(axis: int, fb: tuple[int, int], fdm: tuple[int, int]) -> int:
    """The texel size turnip's fetch actually uses on ``axis``: the smallest position whose
    index (``tu_fragment_density_map_sample``) is not 0 (binary search; needs ``fdm >= 2``)."""
    lo, hi = 1, 1 << 31
    while lo < hi:
        mid = (lo + hi) // 2
        pos = (mid, 0) if axis == 0 else (0, mid)
        if turnip.tu_fragment_density_map_sample(pos, fb, fdm)[axis] >= 1:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _a1_geometry(mode: str, f: tuple[int, int]) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """The render area ``(ox, oy, ew, eh)`` of a case and the size turnip passes as ``fb`` to
    ``tu_fragment_density_map_sample``: the framebuffer for a render pass (``VkFramebufferCreateInfo``
    width/height), ``renderArea.offset + renderArea.extent`` for dynamic rendering
    (``tu_setup_dynamic_framebuffer``, tu_device.cc @ 025a3b4d).  ``dynamic_sub`` leaves a
    strip of the attachments right of/below the render area."""
    fw, fh = f
    if mode == "render_pass":
        area = (fw // 2, fh // 3, fw - fw // 2, fh - fh // 3)
        return area, (fw, fh)
    if mode == "dynamic_full":
        area = (1, 3, fw - 1, fh - 3)
    else:
        area = (fw // 2, fh // 3, fw - fw // 2 - fw // 4, fh - fh // 3 - fh // 5)
    return area, (area[0] + area[2], area[1] + area[3])


def _spec_fb(mode: str, f: tuple[int, int], area: tuple[int, int, int, int]) -> tuple[int, int]:
    """§1.2 (:100-112): ``fb`` is the framebuffer size in a render pass and
    ``renderArea.offset + renderArea.extent`` with ``vkCmdBeginRendering``."""
    if mode == "render_pass":
        return f
    return (area[0] + area[2], area[1] + area[3])


def texel_size() -> OracleResult:
    """A1 ``oracle.texel_size``: the FDM texel size turnip uses vs the spec-v3 formula.

    Model side: ``1 << fdm.turnip.fdm_texel_shift(W, fdm)`` (``tu_fragment_density_map_sample``,
    src/freedreno/vulkan/tu_image.cc @ 9cad4086 / pop-os aee40d4a), and the texel size the fetch
    itself uses (the first position ``tu_fragment_density_map_sample`` maps to texel 1); the two
    must agree.  ``W`` is what turnip passes: the framebuffer size in a render pass,
    ``renderArea.offset + extent`` with dynamic rendering (``tu_setup_dynamic_framebuffer``).
    The ``(1, ∞)`` limit rows run the same driver code with its clamp macros rebound
    (:func:`driver_texel_limits`); the ``(32, 1024)`` rows are turnip's advertised limits.

    Spec side (§1.2, Docs:chapters/fragmentdensitymapops.adoc:82-119): :func:`vk_tests.spec.texel_size_axis`
    with ``fb`` per :func:`_spec_fb`.  What the spec constrains: every case with
    ``floor(fb/fdm) >= 1`` on a device exposing revision >= 3.  Where ``floor(fb/fdm) == 0`` (a
    map with more texels than the framebuffer has pixels) ``log2 0`` is undefined; the oracle
    takes the limit ``T' -> 0``, i.e. the lower clamp, and counts those cases in a note.  A
    model value equal to the pre-v3 formula but not to v3 is reported as a documented
    difference (:data:`PRE_V3_REASON`), anything else as a mismatch.
    """
    tally = _Tally("oracle.texel_size")
    n_fb = len(A1_FRAMEBUFFERS)
    undefined = distinguishing = 0
    for i, fw in enumerate(A1_FRAMEBUFFERS):
        fh = A1_FRAMEBUFFERS[(i + 3) % n_fb]
        for k, mw in enumerate(A1_FDM_SIZES):
            mh = A1_FDM_SIZES[(k + 1) % len(A1_FDM_SIZES)]
            fdm = (mw, mh)
            for t_min, t_max in A1_LIMITS:
                for mode in A1_MODES:
                    area, w_turnip = _a1_geometry(mode, (fw, fh))
                    w_spec = _spec_fb(mode, (fw, fh), area)
                    with driver_texel_limits(t_min, t_max):
                        shifts = (turnip.fdm_texel_shift(w_turnip[0], mw), turnip.fdm_texel_shift(w_turnip[1], mh))
                        fetched = (_fetch_texel_size(0, w_turnip, fdm), _fetch_texel_size(1, w_turnip, fdm))
                    for axis in (0, 1):
                        tally.cases += 1
                        model_t = 1 << shifts[axis]
                        inputs: Inputs = (("mode", mode), ("axis", "xy"[axis]), ("framebuffer", (fw, fh)),
                                          ("render_area", area), ("fdm", fdm),
                                          ("limits", (t_min, "inf" if t_max is None else t_max)))
                        if fetched[axis] != model_t:
                            tally.mismatch(Case(inputs=inputs, model=f"fdm_texel_shift -> {model_t}, fetch uses "
                                                                     f"{fetched[axis]}",
                                                spec="one texel size"))
                            continue
                        v3 = texel_size_axis(w_spec[axis], fdm[axis], t_min, t_max)
                        pre = texel_size_pre_v3(w_spec[axis], fdm[axis], t_min, t_max)
                        if texel_size_undefined(w_spec[axis], fdm[axis]):
                            undefined += 1  # compared with the limit reading of 2^ceil(log2 0): the lower clamp
                        if v3 != pre:
                            distinguishing += 1
                        if model_t == v3:
                            continue
                        case = Case(inputs=inputs, model=model_t, spec=f"v3 {v3} (pre-v3 {pre})")
                        if model_t == pre:
                            tally.document(PRE_V3_REASON, case)
                        else:
                            tally.mismatch(case)
    tally.notes.append(f"{undefined} axis cases have floor(fb/fdm) = 0 (log2 0 undefined in the spec formula): "
                       f"compared with the lower clamp")
    tally.notes.append(f"{distinguishing} axis cases tell v3 (floor) from pre-v3 (ceil) after the clamp")
    tally.notes.append("W for the model: framebuffer size (render pass), renderArea.offset + extent "
                       "(dynamic rendering, tu_setup_dynamic_framebuffer)")
    return tally.result()


# --------------------------------------------------------------------------------------------
# A2 oracle.area_chooser

A2_TILE0 = (32, 96, 256)
A2_OFFSETS = (False, True)
#: (views, shared viewport): one view; two views with their own areas; two views sharing the min
A2_VIEW_MODES: tuple[tuple[int, bool], ...] = ((1, False), (2, False), (2, True))

DENSITY0_REASON = ("density 0 (a zero byte): the spec leaves the area undefined (§1.3, :166-171); turnip skips the "
                   "bin for that view (tu_calc_frag_area !isfinite(area) clears visible_views, 'blob compat', "
                   "tu_tile_config.cc @ aee40d4a)")
UNORM_MAX = 255


def _raw_areas_per_byte() -> tuple[list[np.float32], list[np.float32]]:
    """``raw_frag_area`` (float32 ``1/density``, ``tu_fragment_density_map_sample``) of every byte,
    per axis.  The unpack (``unorm8_to_float``) and the reciprocal are per component, so the
    256 values per axis give the raw area of every pair."""
    layer = np.zeros((1, 256, 2), dtype=np.uint8)
    layer[0, :, 0] = np.arange(256)
    layer[0, :, 1] = np.arange(256)
    dmap = fdm_density.DensityMap(format="R8G8_UNORM", layers=(layer,))
    rx: list[np.float32] = []
    ry: list[np.float32] = []
    for b in range(256):
        a = fdm_density.raw_frag_area(dmap, 0, (b, 0))
        rx.append(a[0])
        ry.append(a[1])
    return rx, ry


def _area_table(rx: Sequence[np.float32], ry: Sequence[np.float32], tile0: int, offsets: bool,
                num_views: int, pairs: Sequence[tuple[int, int]] | None = None) -> tuple[I64, I64]:
    """``tu_calc_frag_area`` for every byte pair (or just ``pairs``): ``(W, H)`` indexed
    ``[bx, by]``, ``-1`` where the model returns None (view skipped)."""
    w = np.full((256, 256), -1, dtype=np.int64)
    h = np.full((256, 256), -1, dtype=np.int64)
    calc = turnip.tu_calc_frag_area
    todo = pairs if pairs is not None else [(bx, by) for bx in range(256) for by in range(256)]
    for bx, by in todo:
        fa = calc((rx[bx], ry[by]), (tile0, tile0), has_fdm_offsets=offsets, num_views=num_views)
        if fa is not None:
            w[bx, by] = min(fa[0], 1 << 40)
            h[bx, by] = min(fa[1], 1 << 40)
    return w, h


def _shared_table(w: I64, h: I64) -> tuple[I64, I64]:
    """The model's shared-viewport area (``shared_viewport_frag_area``) of view 0 with bytes
    ``(bx, by)`` and view 1 with ``(255 - bx, 255 - by)``; skipped views carry
    ``INVISIBLE_FRAG_AREA`` as ``fdm.tiles.calc_frag_areas`` gives them."""
    inv = turnip.INVISIBLE_FRAG_AREA
    sw = np.empty((256, 256), dtype=np.int64)
    sh = np.empty((256, 256), dtype=np.int64)
    shared = turnip.shared_viewport_frag_area
    wl, hl = w.tolist(), h.tolist()
    for bx in range(256):
        for by in range(256):
            a0 = (wl[bx][by], hl[bx][by]) if wl[bx][by] >= 0 else inv
            a1 = (wl[255 - bx][255 - by], hl[255 - bx][255 - by]) if wl[255 - bx][255 - by] >= 0 else inv
            s = shared([a0, a1])
            sw[bx, by] = min(s[0], 1 << 40)
            sh[bx, by] = min(s[1], 1 << 40)
    return sw, sh


def _bound(bx: int, by: int) -> str:
    """``(255/bx)(255/by)`` as a fraction and its value, for messages."""
    b = Fraction(UNORM_MAX ** 2, bx * by)
    return f"{b} ({float(b):.4f})"


def _spec_check_view(tally: _Tally, inputs: Inputs, bx: I64, by: I64, skipped: Bools, w: I64, h: I64,
                     other: tuple[I64, I64] | None) -> int:
    """Check one view of all 65,536 cases against §1.3 (vectorised; exact integer products).
    Returns how many visible cases have one axis above its own ``1/d`` (allowed by the product
    rule: the §1.3 NOTE lets (1, 4) become (2, 2))."""
    zero = (bx == 0) | (by == 0)
    visible = ~skipped

    def record(mask: Bools, spec: Callable[[int, int], str], model_of: Callable[[int, int], object]) -> None:
        count = int(mask.sum())
        if not count:
            return
        for ix, iy in np.argwhere(mask)[:MAX_EXAMPLES]:
            b = (int(bx[ix, iy]), int(by[ix, iy]))
            extra: Inputs = ()
            if other is not None:
                extra = (("partner_bytes", (int(other[0][ix, iy]), int(other[1][ix, iy]))),)
            tally.mismatch(Case(inputs=inputs + (("bytes", b),) + extra, model=model_of(ix, iy),
                                spec=spec(*b)), count=0)
        tally.mismatch_count += count

    def model_of(ix: int, iy: int) -> object:
        return "skipped" if skipped[ix, iy] else (int(w[ix, iy]), int(h[ix, iy]))

    # density 0: expected "bin skipped" (documented), anything else is a mismatch
    doc = zero & skipped
    n_doc = int(doc.sum())
    if n_doc:
        ix, iy = np.argwhere(doc)[0]
        tally.document(DENSITY0_REASON, Case(inputs=inputs + (("bytes", (int(bx[ix, iy]), int(by[ix, iy]))),),
                                             model="skipped", spec="undefined"), count=n_doc)
    record(zero & visible, lambda x, y: "density 0: undefined; documented expectation: bin skipped", model_of)
    # non-zero density: the view is rendered, with 1 <= w, h and w*h*bx*by <= 255^2 (exact)
    nz = ~zero
    record(nz & skipped, lambda x, y: f"rendered with w*h <= {_bound(x, y)}", model_of)
    ok = (w >= 1) & (h >= 1) & (np.minimum(w, 1 << 20) * np.minimum(h, 1 << 20) * bx * by <= UNORM_MAX ** 2)
    record(nz & visible & ~ok, lambda x, y: f"w, h >= 1 and w*h <= 255^2/(bx*by) = {_bound(x, y)}", model_of)
    return int((nz & visible & ok & ((w * bx > UNORM_MAX) | (h * by > UNORM_MAX))).sum())


def area_chooser() -> OracleResult:
    """A2 ``oracle.area_chooser``: turnip's fragment area for every R8G8_UNORM byte pair.

    Model side: ``fdm.density.raw_frag_area`` (float32 ``1/(b * (1/255))``) then
    ``fdm.turnip.tu_calc_frag_area`` (tu_tile_config.cc @ aee40d4a: floor, round one axis up
    within the float32 area, power of two, <= 8 with offsets, <= 4 for <= 6 views, divides
    ``tile0``) and, for two views sharing a viewport, ``shared_viewport_frag_area`` (per-axis
    min).  View 1 gets the complementary bytes ``(255 - bx, 255 - by)``.

    ``tu_calc_frag_area`` couples the axes (the round-up compares both fractions and uses the
    product), so it is called on every pair, once per ``(tile0, offsets)``; ``num_views`` enters
    only as ``num_views <= MAX_HW_SCALED_VIEWS`` (6), which 1 and 2 both satisfy, so the one-view
    table serves two views (checked on 4,096 pairs each run: a difference is a mismatch).

    Spec side (§1.3, :166-207): :func:`spec_area_ok` in exact integers, vectorised over the
    65,536 pairs; a zero byte expects "bin skipped" (:data:`DENSITY0_REASON`, documented).
    """
    tally = _Tally("oracle.area_chooser")
    rx, ry = _raw_areas_per_byte()
    grid_x, grid_y = np.meshgrid(np.arange(256, dtype=np.int64), np.arange(256, dtype=np.int64), indexing="ij")
    comp_x, comp_y = UNORM_MAX - grid_x, UNORM_MAX - grid_y
    premise_pairs = [(bx, by) for bx in range(256) for by in range(256) if (bx + by) % 16 == 0]
    per_axis = 0
    for tile0 in A2_TILE0:
        for offsets in A2_OFFSETS:
            w, h = _area_table(rx, ry, tile0, offsets, num_views=1)
            w2, h2 = _area_table(rx, ry, tile0, offsets, num_views=2, pairs=premise_pairs)
            for bx, by in premise_pairs:
                if (w2[bx, by], h2[bx, by]) != (w[bx, by], h[bx, by]):
                    tally.mismatch(Case(inputs=(("tile0", tile0), ("offsets", offsets), ("bytes", (bx, by))),
                                        model=f"num_views=2 gives {(int(w2[bx, by]), int(h2[bx, by]))}, "
                                              f"num_views=1 {(int(w[bx, by]), int(h[bx, by]))}",
                                        spec="(premise of reuse) the same area"))
            skipped = w < 0
            sw, sh = _shared_table(w, h)
            for views, share in A2_VIEW_MODES:
                base: Inputs = (("views", views), ("shared_viewport", share), ("tile0", tile0), ("offsets", offsets))
                if views == 1:
                    tally.cases += 65536
                    per_axis += _spec_check_view(tally, base + (("view", 0),), grid_x, grid_y, skipped, w, h, None)
                    continue
                # every array is indexed by the view's own bytes; its partner has the complement.
                # A view's skip and unshared area depend on its own bytes only; the shared area
                # of view 1 with bytes q is the one computed for view 0 with bytes 255 - q.
                v0 = (sw, sh) if share else (w, h)
                v1 = (sw[::-1, ::-1], sh[::-1, ::-1]) if share else (w, h)
                tally.cases += 2 * 65536
                per_axis += _spec_check_view(tally, base + (("view", 0),), grid_x, grid_y, skipped, v0[0], v0[1],
                                             (comp_x, comp_y))
                per_axis += _spec_check_view(tally, base + (("view", 1),), grid_x, grid_y, skipped, v1[0], v1[1],
                                             (comp_x, comp_y))
    tally.notes.append(f"{per_axis} rendered view cases use an axis above its own 1/d with the product within "
                       f"bounds (allowed: the clamp rule is on w*h, §1.3 NOTE (1,4) -> (2,2))")
    tally.notes.append("one texel per bin: the filter allowance (§1.3, :173-184) reduces to the clamp rule")
    return tally.result()


# --------------------------------------------------------------------------------------------
# A3 oracle.fetch_coords

A3_FRAMEBUFFERS: tuple[tuple[int, int], ...] = ((1040, 600), (256, 192))
A3_TILES: tuple[tuple[int, int], ...] = ((96, 96), (256, 128), (64, 32))
A3_VIEWS = 2

UNCLAMPED_CENTRE_REASON = ("with FDM offsets turnip samples at the centre of the whole (shifted) bin, not clamped "
                           "to the framebuffer (tu_calc_frag_area comment: clamping would make edge tiles 'pop'; "
                           "tu_tile_config.cc @ aee40d4a); for an edge bin whose centre lies outside the "
                           "framebuffer that texel is read by no framebuffer region of the bin")


def _a3_fdm_sizes(fb: tuple[int, int]) -> tuple[tuple[str, tuple[int, int]], ...]:
    """A map with one 32-px texel per framebuffer cell, a coarse one, and an oversized one
    (twice the cells: allowed with the offset feature, VUIDs 06514/06515, §1.9)."""
    normal = (-(-fb[0] // TU_MIN_TEXEL), -(-fb[1] // TU_MIN_TEXEL))
    return (("normal", normal), ("coarse", (8, 4)), ("oversized", (2 * normal[0], 2 * normal[1])))


def _a3_offsets(fb: tuple[int, int]) -> tuple[tuple[tuple[int, int], ...] | None, ...]:
    """Per-view offsets (§1.9): none, zero, +-granularity, +-fb, an odd mix, and 3x the
    framebuffer (clamp to edge, oversized shifts).  All are multiples of the granularity 8."""
    g = TU_OFFSET_GRANULARITY
    w, h = fb
    return (None, ((0, 0), (0, 0)), ((g, g), (-g, -g)), ((g, -g), (-g, g)), ((w, h), (-w, -h)),
            ((-w, h), (w, -h)), ((3 * g, -5 * g), (-7 * g, 11 * g)), ((-3 * w, 0), (0, 3 * h)))


def _bin_window(start: int, size: int, fb: int, offset: int, t: int, fdm: int) -> tuple[int, int] | None:
    """The spec's texels of the framebuffer pixels ``[start, start + size) ∩ [0, fb)`` (an
    interval: the texel is monotone in x), or None when the bin has no framebuffer pixel."""
    lo, hi = max(start, 0), min(start + size, fb)
    if lo >= hi:
        return None
    return (spec_texel(lo, offset, t, fdm), spec_texel(hi - 1, offset, t, fdm))


def _fetch_cases(tally: _Tally) -> int:
    """Bin -> texel part of A3; returns how many bins cover more than one texel."""
    wide = 0
    for fb in A3_FRAMEBUFFERS:
        for fdm_name, fdm in _a3_fdm_sizes(fb):
            # the spec texel size with turnip's advertised limits (A1 checks the model agrees)
            t = (texel_size_axis(fb[0], fdm[0], TU_MIN_TEXEL, TU_MAX_TEXEL),
                 texel_size_axis(fb[1], fdm[1], TU_MIN_TEXEL, TU_MAX_TEXEL))
            for tile in A3_TILES:
                cells = (-(-fb[0] // tile[0]) + 1, -(-fb[1] // tile[1]) + 1)  # + the extra offset column/row
                for offsets in _a3_offsets(fb):
                    for shared in (False, True):
                        for v in range(A3_VIEWS):
                            u = offsets[v] if offsets is not None else None
                            wide += _fetch_view(tally, fb, fdm_name, fdm, t, tile, cells, u, shared, v)
    return wide


def _fetch_view(tally: _Tally, fb: tuple[int, int], fdm_name: str, fdm: tuple[int, int], t: tuple[int, int],
                tile: tuple[int, int], cells: tuple[int, int], u: tuple[int, int] | None, shared: bool,
                v: int) -> int:
    """Every visible bin of one view: the model's sampled texel must lie in the spec window."""
    wide = 0
    # turnip's bin grid (fdm.rst "Fragment density map offset"): with offsets and per-view
    # viewports the bins slide with the map by b_o = (-u) mod T; under a shared viewport they stay
    b_spec = (0, 0) if (u is None or shared) else ((-u[0]) % tile[0], (-u[1]) % tile[1])
    b_model = None if (u is None or shared) else turnip.tu_bin_offset(u, tile)
    off = (0, 0) if u is None else u
    for py in range(cells[1]):
        for px in range(cells[0]):
            if not turnip.tu_calc_bin_visibility((px, py), tile, (0, 0, fb[0], fb[1]), b_model):
                continue
            tally.cases += 1
            sample = turnip.fdm_sample_position((px, py), tile, fb, u, b_model)
            texel = turnip.tu_fragment_density_map_sample(sample, fb, fdm)
            start = (px * tile[0] - b_spec[0], py * tile[1] - b_spec[1])
            wx = _bin_window(start[0], tile[0], fb[0], off[0], t[0], fdm[0])
            wy = _bin_window(start[1], tile[1], fb[1], off[1], t[1], fdm[1])
            inputs: Inputs = (("framebuffer", fb), ("fdm", (fdm_name, fdm)), ("tile", tile), ("offset", u),
                              ("shared_viewport", shared), ("view", v), ("bin", (px, py)))
            if wx is None or wy is None:
                tally.mismatch(Case(inputs=inputs, model=f"bin rendered, texel {texel}",
                                    spec="the bin has no framebuffer pixel"))
                continue
            if wx[0] != wx[1] or wy[0] != wy[1]:
                wide += 1
            inside = (wx[0] <= texel[0] <= wx[1], wy[0] <= texel[1] <= wy[1])
            if all(inside):
                continue
            case = Case(inputs=inputs, model=texel, spec=f"texel window x {wx}, y {wy}")
            documented = u is not None
            for axis in (0, 1):
                if inside[axis]:
                    continue
                # the centre of the whole bin, in framebuffer space (not clamped with offsets)
                c = start[axis] + tile[axis] // 2
                n = fb[axis]
                at_centre = spec_texel(c, off[axis], t[axis], fdm[axis])
                documented = documented and not (0 <= c < n) and texel[axis] == at_centre
            if documented:
                tally.document(UNCLAMPED_CENTRE_REASON, case)
            else:
                tally.mismatch(case)
    return wide


#: tags for FDM layers: each gives a distinct turnip area, so the area tells which layer was read
LAYER_TAGS: tuple[tuple[int, int], ...] = ((255, 255), (127, 255), (255, 127), (127, 127), (63, 255), (255, 63))

#: (label, multiview views, framebuffer layers, VALVE per-layer, FDM view layerCount)
A3_LAYER_CONFIGS: tuple[tuple[str, int, int, bool, int], ...] = (
    ("multiview, FDM layerCount = views", 2, 1, False, 2),
    ("multiview, FDM layerCount = views", 3, 1, False, 3),
    ("multiview, FDM layerCount 1", 2, 1, False, 1),
    ("multiview, FDM layerCount 1", 3, 1, False, 1),
    ("VALVE per-layer", 1, 3, True, 3),
    ("layered, not per-layer", 1, 3, False, 1),
    ("single view", 1, 1, False, 1),
)
A3_BASE_LAYERS = (0, 3)


def _layer_inputs(views: int, fb_layers: int, per_layer: bool, tags: Sequence[tuple[int, int]]) -> fdm_tiles.FdmInputs:
    """The model's inputs for a pass whose FDM view holds ``tags`` (one scenario density entry
    per FDM layer; one entry is shared by all views: the scenario convention, docs/scenario.md)."""
    sc = make_scenario(gpu="a750", framebuffer=(256, 256), views=views, layers=fb_layers, fdm_per_layer=per_layer,
                       density={"views": [{"generator": "constant", "size": [8, 8],
                                           "density": [bx / UNORM_MAX, by / UNORM_MAX]} for bx, by in tags]})
    return fdm_tiles.FdmInputs(fb_size=sc.framebuffer, tile_size=(96, 96), views=sc.fdm_layers, density=sc.density,
                               render_areas=sc.render_areas, fdm_offsets=None, shared_viewport=False)


def _layer_cases(tally: _Tally) -> None:
    """Layer part of A3: which FDM layer each view (multiview) or framebuffer layer reads."""
    decode: dict[tuple[int, int], int] = {}
    for k, tag in enumerate(LAYER_TAGS):
        area = fdm_tiles.calc_frag_areas(_layer_inputs(1, 1, False, [tag]), (0, 0), 1)[0][0]
        decode.setdefault(area, k)
    if len(decode) != len(LAYER_TAGS):
        tally.mismatch(Case(inputs=(("tags", LAYER_TAGS),), model=f"areas {sorted(decode)}",
                            spec="distinct areas (layer tags cannot be told apart)"))
        return
    for label, views, fb_layers, per_layer, layer_count in A3_LAYER_CONFIGS:
        inp = _layer_inputs(views, fb_layers, per_layer, LAYER_TAGS[:layer_count])
        areas, _ = fdm_tiles.calc_frag_areas(inp, (0, 0), (1 << inp.views) - 1)
        multiview = views > 1
        for base in A3_BASE_LAYERS:
            for unit in range(max(views, fb_layers)):
                tally.cases += 1
                # HW slot i uses FDM layer min(i, layers - 1): a layered pass that is not
                # per-layer broadcasts layer 0's area (tu6_emit_tile_select, turnip-fdm spec §5.7)
                area = areas[min(unit, len(areas) - 1)]
                read = decode.get(area)
                model = None if read is None else base + read  # the view's offset adds baseArrayLayer
                spec = spec_layer(unit, multiview=multiview, fdm_layer_count=layer_count, per_layer=per_layer,
                                  base=base)
                if model != spec:
                    tally.mismatch(Case(inputs=(("config", label), ("views", views), ("framebuffer_layers", fb_layers),
                                                ("fdm_layer_count", layer_count), ("base_array_layer", base),
                                                ("view_or_layer", unit)),
                                        model=f"layer {model} (area {area})", spec=f"layer {spec}"))


def fetch_coords() -> OracleResult:
    """A3 ``oracle.fetch_coords``: which density texel each bin samples, and which layer.

    Model side (turnip samples once per bin, tu_calc_frag_area, tu_tile_config.cc @ aee40d4a):
    ``fdm.turnip.fdm_sample_position`` (bin centre; with offsets the nominal tile's centre minus
    ``u`` and, without a shared viewport, minus ``b_o = tu_bin_offset(u, T)``; without offsets the
    centre of the tile clamped to the framebuffer), then ``tu_fragment_density_map_sample``
    (tu_image.cc @ 9cad4086: arithmetic shift, clamp to the map), for every bin
    ``tu_calc_bin_visibility`` renders.  Layers: ``fdm.tiles.calc_frag_areas`` on the model's
    inputs built from a scenario (``make_scenario``), decoded through layer tags.

    Spec side (§1.2 :30-80, §1.9): a framebuffer pixel ``x`` reads texel
    ``clamp(floor((x - offset[layer]) / T), 0, fdm - 1)`` (:func:`spec_texel`) with ``T`` from
    :func:`vk_tests.spec.texel_size_axis` and turnip's advertised limits; the regions are taken to move with
    the map (the offset proposal: shift the local regions the opposite way).  turnip fetches one
    texel per bin, so only membership in the bin's texel window is asserted (the filter
    allowance, §1.3 :173-184): the texels of the bin's framebuffer pixels; the bin is the
    nominal tile shifted by ``(-u) mod T`` when offsets apply without a shared viewport.  An edge
    bin sampled at its unclamped centre outside the framebuffer is a documented difference
    (:data:`UNCLAMPED_CENTRE_REASON`).  Layers: :func:`spec_layer` (§1.2 :121-142, §1.7), with
    ``baseArrayLayer`` in {0, 3} added to the model's index within the view (the model has no
    base layer: turnip's view address already starts there, fdl6_view_init ``view->offset``).
    """
    tally = _Tally("oracle.fetch_coords")
    wide = _fetch_cases(tally)
    bins = tally.cases
    _layer_cases(tally)
    tally.notes.append(f"{bins} bin/view cases, {tally.cases - bins} view/layer selections")
    tally.notes.append(f"{wide} bins cover more than one texel: turnip's single sample is checked against the "
                       f"window (filter allowance), not one texel")
    tally.notes.append("multiview with a 1-layer FDM view: the model reads the one layer for every view (scenario "
                       "convention, = spec); tu_image.cc @ 9cad4086 addresses view.offset + layer_size * view "
                       "without looking at layerCount (see docs/host-oracles.md)")
    return tally.result()


# --------------------------------------------------------------------------------------------

_RUNNERS: dict[str, Callable[[], OracleResult]] = {
    "oracle.texel_size": texel_size,
    "oracle.area_chooser": area_chooser,
    "oracle.fetch_coords": fetch_coords,
}


def run_oracle(name: str) -> OracleResult:
    """Run one of :data:`ORACLES` and return what it found; an unknown name is a ValueError."""
    try:
        runner = _RUNNERS[name]
    except KeyError:
        raise ValueError(f"unknown oracle {name!r}; known: {', '.join(ORACLES)}") from None
    return runner()
