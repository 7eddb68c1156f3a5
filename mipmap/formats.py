"""Texel formats of the mipmap generators and their exact float32 encode/decode rules.

Every quantisation the shaders perform is defined here once, as float32 operations or
table look-ups, so that numpy and GLSL produce the same bits:

* ``r32f``: stored as float32, no quantisation.
* ``rgba16f``: stored as float16 (round to nearest even).
* ``rgba8``: UNORM8; decode is ``float32(k) * float32(1/255)`` (one rounded product, the
  same in GLSL); encode is ``floor(clamp(v, 0, 1) * 255 + 0.5)`` in float32.
* ``srgba8``: colour channels decode through a 256-entry sRGB table and encode by counting
  255 float32 thresholds (the linear values of the sRGB code mid-points); alpha is UNORM8.

The tables travel to the GPU in one storage buffer whose layout is :func:`tables`.
"""
from __future__ import annotations

from typing import Any, Literal, get_args

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from turnip_base.options import choice

F32 = np.float32

#: float32 values, as the shaders compute on them
F32Array = NDArray[np.float32]
#: stored texels, H x W x C in a format's storage dtype (uint8, float16 or float32)
Texels = NDArray[Any]

#: names of the texel formats (the ``--format`` option)
FormatName = Literal["r32f", "rgba8", "srgba8", "rgba16f"]
FORMAT_NAMES: tuple[FormatName, ...] = get_args(FormatName)


@attrs.frozen
class Format:
    name: FormatName
    channels: int
    storage_dtype: type[np.generic]
    vk_format_name: str  # the image's format
    vk_view_format_name: str  # the format of the storage view the shaders use
    srgb: bool = False

    @property
    def bytes_per_texel(self) -> int:
        return self.channels * np.dtype(self.storage_dtype).itemsize

    @property
    def quantised_8bit(self) -> bool:
        return self.storage_dtype is np.uint8


FORMATS: dict[FormatName, Format] = {
    "r32f": Format("r32f", 1, np.float32, "VK_FORMAT_R32_SFLOAT", "VK_FORMAT_R32_SFLOAT"),
    "rgba8": Format("rgba8", 4, np.uint8, "VK_FORMAT_R8G8B8A8_UNORM", "VK_FORMAT_R32_UINT"),
    "srgba8": Format("srgba8", 4, np.uint8, "VK_FORMAT_R8G8B8A8_SRGB", "VK_FORMAT_R32_UINT", srgb=True),
    "rgba16f": Format("rgba16f", 4, np.float16, "VK_FORMAT_R16G16B16A16_SFLOAT", "VK_FORMAT_R16G16B16A16_SFLOAT"),
}


def get_format(name: str) -> Format:
    """The format called ``name``; :class:`~turnip_base.errors.ScenarioError` (field ``format``) otherwise."""
    return FORMATS[choice("format", name, FORMAT_NAMES)]


def _srgb_to_linear64(v: ArrayLike) -> NDArray[np.float64]:
    u = np.asarray(v, dtype=np.float64)
    return np.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)


UNORM_SCALE = F32(1) / F32(255)  # 0x3b808081


def unorm_lut() -> F32Array:
    """Decode table of UNORM8: entry k is float32(k) * float32(1/255), rounded once."""
    lut: F32Array = np.arange(256, dtype=F32) * UNORM_SCALE
    return lut


def srgb_lut() -> F32Array:
    """Decode table of sRGB8 colour channels: entry k is float32(linear(k / 255))."""
    return _srgb_to_linear64(np.arange(256) / 255.0).astype(F32)


def srgb_thresholds() -> F32Array:
    """255 increasing float32 thresholds: the linear value of sRGB code k + 1/2, k = 0..254.

    A linear value v encodes to the number of thresholds t with t <= v.
    """
    return _srgb_to_linear64((np.arange(255) + 0.5) / 255.0).astype(F32)


def rcp_table(max_n: int) -> F32Array:
    """float32(1) / float32(2n + 1) for n = 0..max_n (IEEE division, correctly rounded)."""
    n = np.arange(max_n + 1, dtype=F32)
    rcp: F32Array = (F32(1) / (F32(2) * n + F32(1))).astype(F32)
    return rcp


# Layout of the tables buffer (float32 words), shared with shaders/common.glsl.
TAB_UNORM = 0
TAB_SRGB = 256
TAB_THRESH = 512
TAB_RCP = 768


def tables(max_dim: int) -> F32Array:
    """The float32 tables buffer: UNORM LUT, sRGB LUT, sRGB thresholds (+1 pad), 1/(2n+1)."""
    return np.concatenate([
        unorm_lut(), srgb_lut(), srgb_thresholds(), np.zeros(1, F32), rcp_table(max(1, max_dim // 2)),
    ]).astype(F32)


def encode_unorm(values: ArrayLike) -> NDArray[np.uint8]:
    v = np.asarray(values, dtype=F32)
    t = np.clip(v, F32(0), F32(1)) * F32(255) + F32(0.5)
    codes: NDArray[np.uint8] = np.floor(t).astype(np.uint8)
    return codes


def encode_srgb(values: ArrayLike) -> NDArray[np.uint8]:
    v = np.asarray(values, dtype=F32)
    return np.searchsorted(srgb_thresholds(), v, side="right").astype(np.uint8)


def decode(stored: Texels, fmt: Format) -> F32Array:
    """Stored texels (H x W x C in the storage dtype) -> float32 values the shaders compute on."""
    if fmt.storage_dtype is np.uint8:
        out = unorm_lut()[stored]
        if fmt.srgb:
            out[..., :3] = srgb_lut()[stored[..., :3]]
        return out
    return np.asarray(stored).astype(F32)


def encode(values: ArrayLike, fmt: Format) -> Texels:
    """float32 values -> stored texels, exactly as the shaders quantise them."""
    v = np.asarray(values, dtype=F32)
    if fmt.storage_dtype is np.uint8:
        out = encode_unorm(v)
        if fmt.srgb:
            out[..., :3] = encode_srgb(v[..., :3])
        return out
    return v.astype(fmt.storage_dtype)


def random_level0(width: int, height: int, fmt: Format, seed: int = 0) -> Texels:
    """Random stored texels for level 0 (floats in [0, 1), away from subnormals)."""
    rng = np.random.default_rng(seed)
    shape = (height, width, fmt.channels)
    if fmt.storage_dtype is np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    vals = rng.random(shape, dtype=np.float32) * F32(0.9) + F32(0.05)
    texels: Texels = vals.astype(fmt.storage_dtype)
    return texels
