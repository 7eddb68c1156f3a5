"""The quantisation rules shared by the models and the shaders."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mipmap.formats import (
    FORMATS,
    decode,
    encode,
    encode_srgb,
    encode_unorm,
    srgb_lut,
    srgb_thresholds,
    tables,
    unorm_lut,
)


def test_8bit_codes_survive_decode_then_encode():
    k = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(4, axis=2)
    for name in ("rgba8", "srgba8"):
        assert np.array_equal(encode(decode(k, FORMATS[name]), FORMATS[name]), k)


def test_srgb_thresholds_increase_and_separate_the_codes():
    t = srgb_thresholds()
    lut = srgb_lut()
    assert np.all(np.diff(t) > 0)
    assert np.all(lut[:-1] < t) and np.all(t < lut[1:])


@given(st.floats(0.0, 1.0, width=32))
def test_srgb_encode_is_the_nearest_code(v):
    k = int(encode_srgb(np.array([v], np.float32))[0])
    srgb_lut().astype(np.float64)
    # the chosen code is at least as close (in sRGB space) as its neighbours
    def s(x):
        return 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055
    target = s(float(v)) * 255
    assert abs(k - target) <= 0.5 + 1e-4


@given(st.floats(0.0, 1.0, width=32))
def test_unorm_encode_rounds_half_up(v):
    k = int(encode(np.array([[[v, v, v, v]]], np.float32), FORMATS["rgba8"])[0, 0, 0])
    assert abs(k - float(v) * 255) <= 0.5 + 1e-5


def test_tables_layout():
    t = tables(100)
    assert t.dtype == np.float32
    assert t[768 + 3] == np.float32(1) / np.float32(7)


# The shaders' sRGB encode (shaders/common.glsl, encodeSrgb): a guess g = floor(y - 1/16)
# from y = s(v) * 255 + 0.5 computed with the device's pow, then one threshold look-up.
GUESS_SLACK = 1.0 / 16   # subtracted from y before the floor
DEVICE_Y_ERROR = 1e-3    # what the proof below allows the device's y to be off by


def _ulp(a):
    return np.spacing(np.abs(np.asarray(a, np.float64)).astype(np.float32)).astype(np.float64)


def test_srgb_guess_error_bound_at_the_vulkan_precision_of_pow():
    # pow(c, 1/2.4) as exp2(log2(c) / 2.4): log2 within 3 ulp outside [0.5, 2] and 2^-21
    # absolute inside, exp2 within 3 + 2|x| ulp (Vulkan spec, precision of operations);
    # every other operation rounded once. The worst error of y stays below DEVICE_Y_ERROR.
    c = np.linspace(0.0031308, 1.0, 400001)
    lg = np.log2(c)
    e_lg = np.where(c < 0.5, 3 * _ulp(lg), 2.0 ** -21)
    x = lg / 2.4
    e_x = e_lg / 2.4 + _ulp(x)
    p = 2.0 ** x
    e_p = p * np.log(2) * e_x + (3 + 2 * np.abs(x)) * _ulp(p)
    s = 1.055 * p - 0.055
    e_s = 1.055 * e_p + _ulp(1.055 * p) + _ulp(s)
    y = 255 * s + 0.5
    e_y = 255 * e_s + _ulp(255 * s) + _ulp(y)
    assert e_y.max() < DEVICE_Y_ERROR
    # the linear segment: c * 12.92 rounded once, then the same two roundings
    lin = np.linspace(0.0, 0.0031308, 10001) * 12.92
    assert (255 * _ulp(lin) + _ulp(255 * lin) + _ulp(255 * lin + 0.5)).max() < DEVICE_Y_ERROR


def _guess(v, delta):
    c = np.clip(v.astype(np.float64), 0.0, 1.0)
    s = np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)
    return np.floor(np.clip(s * 255 + 0.5 + delta - GUESS_SLACK, 0, 254)).astype(np.int64)


def test_srgb_one_threshold_decides_after_the_guess():
    # every threshold, its float32 neighbours, random values and values out of [0, 1]
    t = srgb_thresholds()
    v = t.copy()
    up, down = t.copy(), t.copy()
    for _ in range(8):
        up = np.nextafter(up, np.float32(np.inf))
        down = np.nextafter(down, np.float32(-np.inf))
        v = np.concatenate([v, up, down])
    rng = np.random.default_rng(3)
    v = np.concatenate([v, rng.random(200000, dtype=np.float32),
                        np.array([-1.0, -0.0, 0.0, 1.0, 2.0, 1e-30], np.float32)])
    want = encode_srgb(v).astype(np.int64)
    for delta in (-DEVICE_Y_ERROR, 0.0, DEVICE_Y_ERROR):
        g = _guess(v, delta)
        got = np.where(t[g] <= v, g + 1, g)
        assert np.array_equal(got, want)


def _reduce_defining(tl, tr, bl, br):
    h = np.float32(0.5)
    return ((tl + bl) * h + (tr + br) * h) * h


def _reduce_short(tl, tr, bl, br):
    return ((tl + bl) + (tr + br)) * np.float32(0.25)


def test_short_box_form_is_exact_for_the_quantised_formats():
    # shaders/common.glsl reduce4: rgba8, srgba8 and rgba16f use ((TL + BL) + (TR + BR)) / 4;
    # their values are 0 or >= 2^-24, so the halvings of the defining form are exact
    rng = np.random.default_rng(11)
    values = {
        "unorm": decode(np.arange(256, dtype=np.uint8).reshape(1, 256, 1).repeat(4, 2), FORMATS["rgba8"])[0, :, 0],
        "srgb": srgb_lut(),
        "half": rng.integers(0, 0x7c00, 4096).astype(np.uint16).view(np.float16).astype(np.float32),
    }
    values["half"] = np.concatenate([values["half"], np.float16([2.0 ** -24, 65504.0, 0.0]).astype(np.float32)])
    for name, pool in values.items():
        q = pool[rng.integers(0, len(pool), (4, 400000))]
        # means of stored values too: what level L+2 and up reduce
        for quad in (q, _reduce_defining(*q)[None].repeat(4, 0)[:, rng.permutation(400000)]):
            want = _reduce_defining(*quad)
            got = _reduce_short(*quad)
            assert np.array_equal(want.view(np.uint32), got.view(np.uint32)), name


def test_short_box_form_differs_on_float32_subnormals():
    # why r32f keeps the defining form: halving a subnormal loses its last bit
    tiny = np.float32(2.0 ** -149)  # the smallest subnormal
    quad = [np.array([tiny], np.float32)] * 3 + [np.array([0.0], np.float32)]
    assert _reduce_defining(*quad)[0] != _reduce_short(*quad)[0]


def test_unorm_box_is_the_code_sum():
    """For UNORM8, the float32 box ((TL + BL) + (TR + BR)) * 0.25 of four decoded codes,
    encoded, is (a + b + c + d + 2) >> 2 for every a, b, c, d: the rule the tile passes'
    packed RGBA8 box (shaders/common.glsl, PACKED8) computes on integer codes.

    Exhaustive: a pair sum fl(dec(a) + dec(b)) takes 859 distinct float32 values, each with
    one code sum a + b; every pair of them is tried, which covers all 2^32 inputs in any
    pairing (the partners the edge rules repeat included)."""
    dec = unorm_lut()
    a, b = np.meshgrid(np.arange(256), np.arange(256))
    pair = (dec[a] + dec[b]).astype(np.float32).ravel()
    code_sum = (a + b).ravel()
    sums, first = np.unique(pair, return_index=True)
    owner = code_sum[first]
    # each pair-sum value has one code sum (distinct code sums are 1/255 apart)
    assert np.unique(np.stack([pair.view(np.uint32), code_sum.astype(np.uint32)]), axis=1).shape[1] == sums.size
    box = ((sums[:, None] + sums[None, :]).astype(np.float32) * np.float32(0.25)).astype(np.float32)
    got = encode_unorm(box).astype(np.int64)
    want = (owner[:, None] + owner[None, :] + 2) >> 2
    assert got.shape == (859, 859)
    assert np.array_equal(got, want)
    # ties (code sum = 2 mod 4) go up: rounding them down would differ
    assert not np.array_equal(got, (owner[:, None] + owner[None, :] + 1) >> 2)


def _magic_to_half(x: np.ndarray) -> np.ndarray:
    """common.glsl's toHalf in numpy float32 (the same operations, each rounded to nearest even)."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32)
    a = u & np.uint32(0x7FFFFFFF)
    with np.errstate(invalid="ignore", over="ignore"):   # the inf and nan lanes, replaced below
        m = np.maximum(a & np.uint32(0x7F800000), np.uint32(0x38800000)).view(np.float32) * np.float32(12288.0)
        y = (x + m) - m
    out = (y.view(np.uint32) | (u & np.uint32(0x80000000))).view(np.float32)
    big = a >= np.uint32(0x477FF000)
    inf = ((u & np.uint32(0x80000000)) | np.uint32(0x7F800000)).view(np.float32)
    return np.where(big, np.where(a > np.uint32(0x7F800000), x, inf), out)


def test_shader_half_rounding_is_float16_round_to_nearest_even():
    """The shader's float32 -> float16 rounding (a magic number, three float operations) gives
    numpy's float16 conversion, bit for bit, on every exponent, every kept mantissa, both signs,
    and the dropped 13 bits at and around the tie (0, 1, 0xfff, 0x1000, 0x1001, 0x1fff), plus
    2^20 random bit patterns; NaN stays NaN."""
    exps = np.arange(256, dtype=np.uint32) << np.uint32(23)
    kept = np.arange(1024, dtype=np.uint32) << np.uint32(13)
    low = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    bits = (exps[:, None, None] | kept[None, :, None] | low[None, None, :]).ravel()
    rng = np.random.default_rng(22)
    bits = np.concatenate([bits, bits | np.uint32(0x80000000), rng.integers(0, 2**32, 2**20, dtype=np.uint32)])
    x = bits.view(np.float32)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    got = _magic_to_half(x)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(got[~nan].view(np.uint32) != want[~nan].view(np.uint32))
    assert bad.size == 0, f"{bad.size} differ, first {x[~nan][bad[:3]]}: {got[~nan][bad[:3]]} vs {want[~nan][bad[:3]]}"
