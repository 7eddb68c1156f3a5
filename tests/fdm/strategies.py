"""Hypothesis strategies for FDM scenarios and for the inputs of the pure driver functions.

Scenario dicts are built the way a user writes them (``fdm.scenario.parse_scenario`` input) and
are always *valid*: tile sizes are multiples of the pass tile alignment, offsets are multiples
of the 8-pixel FDM offset granularity and come with ``fdm_offset_create_flag``, render areas lie
inside the framebuffer, and the framebuffer spans at most 6 tiles per axis.

Nothing here calls the model: the pass alignment is recomputed from the spec (§9.3: with more
than one layer ``tile_align_h`` is doubled until a tile row of the smallest attachment, 4 bytes
per pixel for the default attachments, is a multiple of 4096 bytes).
"""

from __future__ import annotations

from hypothesis import strategies as st

from fdm.gpu import gpu_profiles

GPUS = gpu_profiles()
GPU_NAMES = sorted(GPUS)
FORMATS = ("R8G8_UNORM", "R32G32_SFLOAT")
MERGING = ("upstream", "fixed", "off")
DEFAULT_MIN_CPP = 4  # the default attachments are two 4-byte colour attachments


def pass_tile_align(gpu_name: str, views: int) -> tuple:
    """The pass tile alignment for the default attachments (spec §9.3)."""
    g = GPUS[gpu_name]
    aw, ah = g.tile_align_w, g.tile_align_h
    if views > 1:
        while (aw * ah * DEFAULT_MIN_CPP) % 4096:
            ah *= 2
    return aw, ah


def density_values(allow_zero: bool):
    """One density component: k/255, an exact power of two (1, 0.5, 0.25) or, optionally, 0."""
    choices = [st.integers(1, 255).map(lambda k: k / 255.0), st.sampled_from([1.0, 0.5, 0.25])]
    if allow_zero:
        choices.append(st.just(0.0))
    return st.one_of(*choices)


@st.composite
def density_maps(draw, views: int, fb: tuple, allow_zero: bool = True):
    fmt = draw(st.sampled_from(FORMATS))
    # the map must cover the framebuffer with texels of at most 1024 px
    nw, nh = -(-fb[0] // 1024), -(-fb[1] // 1024)
    fw = draw(st.integers(nw, nw + 3))
    fh = draw(st.integers(nh, nh + 3))
    comp = density_values(allow_zero)
    pair = st.tuples(comp, comp).map(list)
    n_layers = draw(st.sampled_from([1, views])) if views > 1 else 1
    layers = []
    for _ in range(n_layers):
        rows = draw(st.lists(st.lists(pair, min_size=fw, max_size=fw), min_size=fh, max_size=fh))
        layers.append({"values": rows})
    return {"format": fmt, "views": layers}


def _rect_in(draw, W: int, H: int) -> list:
    x = draw(st.integers(0, W - 1))
    y = draw(st.integers(0, H - 1))
    w = draw(st.integers(1, W - x))
    h = draw(st.integers(1, H - y))
    return [x, y, w, h]


def _scissor(draw, W: int, H: int, T: tuple) -> list:
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


def _viewport(draw, W: int, H: int) -> list:
    if draw(st.booleans()):
        return [0, 0, W, H]
    x = draw(st.integers(-W // 2, W))
    y = draw(st.integers(-H // 2, H))
    w = draw(st.integers(1, 2 * W))
    h = draw(st.integers(1, 2 * H)) * draw(st.sampled_from([1, 1, 1, -1]))
    return [x, y, w, h]


@st.composite
def scenario_dicts(draw, *, allow_zero: bool = True, offsets: bool | None = None,
                   gpus=None, max_views: int = 6, max_tiles: int = 6):
    """A valid scenario dict.

    ``offsets``: None = sometimes, True = always (per-view offsets), False = never.
    ``allow_zero``: whether densities may be 0 (views dropped in a tile).
    """
    gpu = draw(st.sampled_from(sorted(gpus) if gpus else GPU_NAMES))
    g = GPUS[gpu]
    views = draw(st.integers(1, max_views))
    aw, ah = pass_tile_align(gpu, views)
    kx = draw(st.integers(1, max(1, min(4, g.tile_max_w // aw))))
    ky = draw(st.integers(1, max(1, min(4, g.tile_max_h // ah))))
    T = (aw * kx, ah * ky)
    W = draw(st.integers(1, max_tiles * T[0]))
    H = draw(st.integers(1, max_tiles * T[1]))
    d = {"gpu": gpu, "framebuffer": [W, H], "views": views, "tile_size": list(T),
         "bin_merging": draw(st.sampled_from(MERGING))}

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

    d["density"] = draw(density_maps(views, (W, H), allow_zero))
    return d


# ----------------------------------------------------------------------------------------------
# inputs of the pure driver functions

#: tile sizes per axis: multiples of 16 (every pass alignment is a multiple of 16)
tile_axis = st.integers(1, 128).map(lambda k: 16 * k)
#: user FDM offsets per axis: multiples of 8 (fragmentDensityOffsetGranularity)
offset_axis = st.integers(-2048, 2048).map(lambda k: 8 * k)
#: fragment areas per axis
frag_axis = st.sampled_from([1, 2, 4])
