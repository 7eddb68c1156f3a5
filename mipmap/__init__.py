"""Compute-shader mip chains and their exact models (no Vulkan needed to import this).

The entry points::

    import mipmap
    chain = mipmap.reference_chain(image)                   # exact box filter, float64
    fmt = mipmap.get_format("srgba8")
    level0 = mipmap.random_level0(37, 21, fmt)
    want = mipmap.stored_chain(level0, fmt)                 # what a GPU stores, format by format
    got, trace = mipmap.tiled_chain(level0, fmt)            # invocation-level model of the kernels
    assert mipmap.compare_chain(got, want, fmt).ok

Running the generators on a device (``mipmap.gpu``, which needs the ``vulkan`` package) and
the ``mipmap`` sub-command (``mipmap.cli``) are layers above and are not imported here.
Bad input raises :class:`turnip_base.errors.ScenarioError`.
"""
from __future__ import annotations

from .compare import Comparison, compare_chain
from .formats import FORMAT_NAMES, FORMATS, Format, FormatName, decode, encode, get_format, random_level0
from .plan import ALGORITHMS, SPD_MAX_SIZE, Algorithm, Dispatch, SpdPlan, spd_plan, tiled_plan
from .reference import level_sizes, reference_chain, stored_chain
from .spd_model import spd_chain, spd_reference
from .tiled_model import Device, Trace, tiled_chain

__all__ = [
    "ALGORITHMS",
    "FORMATS",
    "FORMAT_NAMES",
    "SPD_MAX_SIZE",
    "Algorithm",
    "Comparison",
    "Device",
    "Dispatch",
    "Format",
    "FormatName",
    "SpdPlan",
    "Trace",
    "compare_chain",
    "decode",
    "encode",
    "get_format",
    "level_sizes",
    "random_level0",
    "reference_chain",
    "spd_chain",
    "spd_plan",
    "spd_reference",
    "stored_chain",
    "tiled_chain",
    "tiled_plan",
]
