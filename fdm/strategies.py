"""Hypothesis strategies for valid FDM scenarios and for the inputs of the pure driver functions.

Public, so that the model's tests, the layout tests and anyone writing device tests (CTS-like
cases) generate scenarios the same way::

    from hypothesis import given
    from fdm import parse_scenario, plan_render_pass
    from fdm.strategies import scenario_dicts

    @given(scenario_dicts(gpus=["a750"], max_views=2))
    def test_something(d):
        plan = plan_render_pass(parse_scenario(d))

Scenario dicts are built the way a user writes them (``fdm.parse_scenario`` input) and are
always *valid*: tile sizes are multiples of the pass tile alignment, offsets are multiples of
the 8-pixel FDM offset granularity and come with ``fdm_offset_create_flag``, render areas lie
inside the framebuffer, and the framebuffer spans at most ``max_tiles`` tiles per axis.  (A
valid scenario may still be one turnip renders in sysmem; ``plan_render_pass`` then refuses it.)

Nothing here calls the model: the pass alignment is recomputed from the spec
(docs/spec/turnip-fdm-spec.md §9.3: with more than one layer ``tile_align_h`` is doubled until
a tile row of the smallest attachment, 4 bytes per pixel for the default attachments, is a
multiple of 4096 bytes).  Needs the ``hypothesis`` package (the ``test`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from turnip_base.errors import ScenarioError

from .gpu import GpuProfile, gpu_profiles
from .options import DENSITY_FORMATS, MERGING_VARIANTS, DensityFormat, MergingVariant
from .turnip import MAX_VIEWS

GPUS: dict[str, GpuProfile] = gpu_profiles()
GPU_NAMES: tuple[str, ...] = tuple(sorted(GPUS))
FORMATS: tuple[DensityFormat, ...] = DENSITY_FORMATS
MERGING: tuple[MergingVariant, ...] = MERGING_VARIANTS
DEFAULT_MIN_CPP = 4  # the default attachments are two 4-byte colour attachments

ScenarioDict = dict[str, Any]


def pass_tile_align(gpu_name: str, views: int) -> tuple[int, int]:
    """The pass tile alignment for the default attachments (spec §9.3)."""
    g = GPUS[gpu_name]
    aw, ah = g.tile_align_w, g.tile_align_h
    if views > 1:
        while (aw * ah * DEFAULT_MIN_CPP) % 4096:
            ah *= 2
    return aw, ah


def density_values(allow_zero: bool) -> st.SearchStrategy[float]:
    """One density component: k/255, an exact power of two (1, 0.5, 0.25) or, optionally, 0."""
    choices = [st.integers(1, 255).map(lambda k: k / 255.0), st.sampled_from([1.0, 0.5, 0.25])]
    if allow_zero:
        choices.append(st.just(0.0))
    return st.one_of(*choices)


def _check_args(gpus: Sequence[str] | None, max_views: int, max_tiles: int,
                formats: Sequence[str] | None, densities: Sequence[float] | None,
                merging: Sequence[str] | None) -> None:
    """Argument checks of :func:`scenario_dicts` (raised when the strategy is built)."""
    if gpus is not None:
        if isinstance(gpus, str) or not gpus:
            raise ScenarioError("gpus", "must be a non-empty list of GPU names")
        for g in gpus:
            if g not in GPUS:
                raise ScenarioError("gpus", f"unknown GPU {g!r}; known: {', '.join(GPU_NAMES)}")
    if not 1 <= max_views <= MAX_VIEWS:
        raise ScenarioError("max_views", f"must be in [1, {MAX_VIEWS}], got {max_views}")
    if not 1 <= max_tiles <= 64:
        raise ScenarioError("max_tiles", f"must be in [1, 64], got {max_tiles}")
    for f in formats or ():
        if f not in FORMATS:
            raise ScenarioError("formats", f"must be among {', '.join(FORMATS)}, got {f!r}")
    if formats is not None and not formats:
        raise ScenarioError("formats", "must not be empty")
    if densities is not None:
        if not densities:
            raise ScenarioError("densities", "must not be empty")
        for x in densities:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0.0 <= x <= 1.0:
                raise ScenarioError("densities", f"must be numbers in [0, 1], got {x!r}")
    if merging is not None:
        if not merging:
            raise ScenarioError("merging", "must not be empty")
        for m in merging:
            if m not in MERGING:
                raise ScenarioError("merging", f"must be among {', '.join(MERGING)}, got {m!r}")


@st.composite
def density_maps(draw: st.DrawFn, views: int, fb: tuple[int, int], allow_zero: bool = True,
                 formats: Sequence[DensityFormat] = FORMATS,
                 densities: Sequence[float] | None = None, max_extra_texels: int = 3) -> ScenarioDict:
    """A ``density`` table: one layer shared by all views or one per view, each covering ``fb``.
    ``densities``: draw components from this list instead of :func:`density_values`."""
    fmt = draw(st.sampled_from(list(formats)))
    # the map must cover the framebuffer with texels of at most 1024 px
    nw, nh = -(-fb[0] // 1024), -(-fb[1] // 1024)
    fw = draw(st.integers(nw, nw + max_extra_texels))
    fh = draw(st.integers(nh, nh + max_extra_texels))
    comp = density_values(allow_zero) if densities is None else st.sampled_from(list(densities))
    pair = st.tuples(comp, comp).map(list)
    n_layers = draw(st.sampled_from([1, views])) if views > 1 else 1
    layers = []
    for _ in range(n_layers):
        rows = draw(st.lists(st.lists(pair, min_size=fw, max_size=fw), min_size=fh, max_size=fh))
        layers.append({"values": rows})
    return {"format": fmt, "views": layers}


def _rect_in(draw: st.DrawFn, W: int, H: int) -> list[int]:
    x = draw(st.integers(0, W - 1))
    y = draw(st.integers(0, H - 1))
    w = draw(st.integers(1, W - x))
    h = draw(st.integers(1, H - y))
    return [x, y, w, h]


def _scissor(draw: st.DrawFn, W: int, H: int, T: tuple[int, int]) -> list[int]:
    """A user scissor: the framebuffer, a random rectangle (possibly reaching past the
    framebuffer), or a degenerate zero-size one."""
    kind = draw(st.sampled_from(["full", "random", "random", "zero"]))
    if kind == "full":
        return [0, 0, W, H]
    if kind == "zero":
        return [draw(st.integers(0, W)), draw(st.integers(0, H)), draw(st.sampled_from([0, 1, W])),
                draw(st.sampled_from([0, 1, H]))]
    x = draw(st.integers(0, W + T[0]))
    y = draw(st.integers(0, H + T[1]))
    return [x, y, draw(st.integers(0, W + T[0])), draw(st.integers(0, H + T[1]))]


def _viewport(draw: st.DrawFn, W: int, H: int) -> list[int]:
    if draw(st.booleans()):
        return [0, 0, W, H]
    x = draw(st.integers(-W // 2, W))
    y = draw(st.integers(-H // 2, H))
    w = draw(st.integers(1, 2 * W))
    h = draw(st.integers(1, 2 * H)) * draw(st.sampled_from([1, 1, 1, -1]))
    return [x, y, w, h]


def scenario_dicts(*, allow_zero: bool = True, offsets: bool | None = None, gpus: Sequence[str] | None = None,
                   max_views: int = 6, max_tiles: int = 6, formats: Sequence[DensityFormat] | None = None,
                   densities: Sequence[float] | None = None, merging: Sequence[MergingVariant] | None = None,
                   max_extra_texels: int = 3) -> st.SearchStrategy[ScenarioDict]:
    """Valid scenario dicts (``fdm.parse_scenario`` input).

    ``offsets``: None = sometimes, True = always (per-view offsets), False = never.
    ``allow_zero``: whether densities may be 0 (views dropped in a tile).
    ``gpus``: GPU names to draw from (default: all).  ``max_views`` in [1, 6], ``max_tiles``
    (tiles per axis) in [1, 64].  ``formats``, ``densities`` and ``merging`` restrict the
    density format, the density components and the bin-merging variant; ``max_extra_texels``
    (0..64) is how many texels per axis the density map may have beyond the fewest that cover
    the framebuffer.  Bad arguments raise
    :class:`~turnip_base.errors.ScenarioError` when the strategy is built.
    """
    _check_args(gpus, max_views, max_tiles, formats, densities, merging)
    if not 0 <= max_extra_texels <= 64:
        raise ScenarioError("max_extra_texels", f"must be in [0, 64], got {max_extra_texels}")
    return _scenario_dicts(allow_zero=allow_zero, offsets=offsets, gpus=gpus, max_views=max_views,
                           max_tiles=max_tiles, formats=tuple(formats) if formats else FORMATS,
                           densities=densities, merging=tuple(merging) if merging else MERGING,
                           max_extra_texels=max_extra_texels)


@st.composite
def _scenario_dicts(draw: st.DrawFn, *, allow_zero: bool, offsets: bool | None, gpus: Sequence[str] | None,
                    max_views: int, max_tiles: int, formats: Sequence[DensityFormat],
                    densities: Sequence[float] | None, merging: Sequence[MergingVariant],
                    max_extra_texels: int) -> ScenarioDict:
    gpu = draw(st.sampled_from(sorted(gpus) if gpus else GPU_NAMES))
    g = GPUS[gpu]
    views = draw(st.integers(1, max_views))
    aw, ah = pass_tile_align(gpu, views)
    kx = draw(st.integers(1, max(1, min(4, g.tile_max_w // aw))))
    ky = draw(st.integers(1, max(1, min(4, g.tile_max_h // ah))))
    T = (aw * kx, ah * ky)
    W = draw(st.integers(1, max_tiles * T[0]))
    H = draw(st.integers(1, max_tiles * T[1]))
    d: ScenarioDict = {"gpu": gpu, "framebuffer": [W, H], "views": views, "tile_size": list(T),
                       "bin_merging": draw(st.sampled_from(list(merging)))}

    use_off = draw(st.booleans()) if offsets is None else offsets
    if use_off:
        d["fdm_offset_create_flag"] = True
        off = st.one_of(st.integers(-64, 64), st.integers(-512, 512)).map(lambda k: 8 * k)
        d["fdm_offsets"] = [[draw(off), draw(off)] for _ in range(views)]
    elif offsets is None and draw(st.integers(0, 4)) == 0:
        d["fdm_offset_create_flag"] = True  # extra row/column, but no offsets supplied

    if draw(st.integers(0, 3)) == 0:
        d["writes_viewport_index"] = True
    qcom = views >= 2 and draw(st.integers(0, 3)) == 0
    if qcom:
        d["multiview_per_view_viewports"] = True
    n_vp = views if qcom else draw(st.sampled_from([1, 1, 1, 2]))
    if qcom or n_vp > 1 or draw(st.booleans()):
        d["viewports"] = [_viewport(draw, W, H) for _ in range(n_vp)]
        d["scissors"] = [_scissor(draw, W, H, T) for _ in range(n_vp)]

    ra = draw(st.integers(0, 3))
    if ra == 1:
        d["render_areas"] = [_rect_in(draw, W, H)]
    elif ra == 2:
        d["render_areas"] = [_rect_in(draw, W, H) for _ in range(views)]

    d["density"] = draw(density_maps(views, (W, H), allow_zero, formats, densities, max_extra_texels))
    return d


# ----------------------------------------------------------------------------------------------
# inputs of the pure driver functions

#: tile sizes per axis: multiples of 16 (every pass alignment is a multiple of 16)
tile_axis = st.integers(1, 128).map(lambda k: 16 * k)
#: user FDM offsets per axis: multiples of 8 (fragmentDensityOffsetGranularity)
offset_axis = st.integers(-2048, 2048).map(lambda k: 8 * k)
#: fragment areas per axis
frag_axis = st.sampled_from([1, 2, 4])
