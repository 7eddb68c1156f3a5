"""The quantisation rules shared by the models and the shaders."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mipmap.formats import FORMATS, decode, encode, encode_srgb, srgb_lut, srgb_thresholds, tables


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
