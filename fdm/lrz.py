"""LRZ of an FDM pass: whether the pass may use LRZ at all (``tu_lrz_init_state``), and the LRZ
over-allocation of depth images created for FDM offsets, which also caps the tile size
(``fdl6_lrz_get_max_fdm_extra_size``).

The per-tile disable (``disable_lrz`` / ``force_lrz_dis``) lives in :mod:`fdm.tile_select`;
the effective LRZ state of a tile is ``LrzPassState.valid and not force_lrz_dis`` (a6xx emits
no per-tile disable: docs/findings.md, finding m).
"""

from __future__ import annotations

from typing import Literal

import attrs

from .cmath import div_round_up
from .gpu import GpuProfile

#: the depth attachment's load op as ``tu_lrz_init_state`` sees it (``none``: no depth attachment)
DepthLoadOp = Literal["clear", "load", "dont_care", "none"]
DEPTH_LOAD_OPS: tuple[DepthLoadOp, ...] = ("clear", "load", "dont_care", "none")

#: ``fd_lrzfc_layout<CHIP>::FC_SIZE`` in bytes (the comment in fdl6_lrz_get_fc_size, freedreno_lrz_layout.h,
#: pop-os @ 3ebd859c: 512 on A6XX, 1024 on A7XX; a8xx taken as A7XX, freedreno_lrz.h not read)
LRZ_FC_SIZE = {6: 512, 7: 1024, 8: 1024}


@attrs.frozen(kw_only=True)
class LrzPassState:
    """LRZ for the whole pass after ``tu_lrz_init_state``: ``valid`` (LRZ may be used), and why not."""

    valid: bool
    reason: str  # "" when valid


def tu_lrz_init_state(gpu: GpuProfile, depth_load_op: DepthLoadOp, fdm_offset_image: bool) -> LrzPassState:
    """``tu_lrz_init_state`` (src/freedreno/vulkan/tu_lrz.cc, pop-os @ 8afad928) for a pass that
    is not resumed, in the driver's order:

    1. no depth attachment: no LRZ;
    2. without ``has_lrz_dir_tracking``, a pass that does not clear depth cannot use LRZ;
    3. a depth image created with ``VK_IMAGE_CREATE_FRAGMENT_DENSITY_MAP_OFFSET_BIT_EXT`` that is
       not cleared cannot reuse the previous pass's LRZ state ("the LRZ image is offsetted"):
       LRZ is off for the whole pass, whether or not this pass passes offsets;
    4. neither cleared nor loaded: no LRZ;
    5. otherwise valid (cleared, or loaded and reused).
    """
    if depth_load_op == "none":
        return LrzPassState(valid=False, reason="no depth attachment")
    clears = depth_load_op == "clear"
    if not gpu.has_lrz_dir_tracking and not clears:
        return LrzPassState(valid=False, reason=f"{gpu.name} has no LRZ direction tracking and depth is not cleared")
    if fdm_offset_image and not clears:
        return LrzPassState(valid=False, reason="FRAGMENT_DENSITY_MAP_OFFSET_BIT depth image not cleared: "
                                                "the previous LRZ state cannot be reused")
    if not clears and depth_load_op != "load":
        return LrzPassState(valid=False, reason="depth neither cleared nor loaded")
    return LrzPassState(valid=True, reason="")


def lrz_fc_size(gpu: GpuProfile, width: int, height: int, samples: int, layers: int) -> int:
    """The LRZ fast-clear buffer size (``fdl6_lrz_get_fc_size``, freedreno_lrz_layout.h, pop-os @ 3ebd859c):
    blocks of 16x4 LRZ pixels (an LRZ pixel is 8x8 samples), one bit each; 0 when it would
    exceed ``FC_SIZE`` (no fast clear)."""
    w, h = width, height
    if samples == 2:
        h *= 2
    elif samples == 4:
        w, h = w * 2, h * 2
    elif samples == 8:
        w, h = w * 2, h * 4
    nbx = div_round_up(div_round_up(w, 8), 16)
    nby = div_round_up(div_round_up(h, 8), 4)
    fc = div_round_up(nbx * nby, 8) * layers
    return 0 if fc > LRZ_FC_SIZE[gpu.chip] else fc


def max_fdm_extra_size(gpu: GpuProfile, width0: int, height0: int, samples: int, layers: int) -> tuple[int, int]:
    """``fdl6_lrz_get_max_fdm_extra_size`` (freedreno_lrz_layout.h @ 3ebd859c, called from
    ``tu_image_init``, tu_image.cc @ aee40d4a, for depth images with the FDM-offset flag): how
    much larger than the image the LRZ buffer is laid out, so that bins shifted by an FDM offset
    stay inside it.  The largest ``e`` from ``min(tile_max)`` down to ``max(step, 192)`` in steps
    of ``min(gmem_align)`` that keeps LRZ fast clear, rounded down to ``gmem_align`` per axis;
    ``tile_max`` when fast clear never fits.  The same value caps the tile size
    (``max_tile_{w,h}_constraint_fdm``)."""
    if lrz_fc_size(gpu, width0, height0, samples, layers) == 0:
        return (gpu.tile_max_w, gpu.tile_max_h)
    e = min(gpu.tile_max_w, gpu.tile_max_h)
    step = min(gpu.gmem_align_w, gpu.gmem_align_h)
    e_min = max(step, 192)
    while e > e_min:
        if lrz_fc_size(gpu, width0 + e, height0 + e, samples, layers) != 0:
            return (e // gpu.gmem_align_w * gpu.gmem_align_w, e // gpu.gmem_align_h * gpu.gmem_align_h)
        e -= step
    return (gpu.tile_max_w, gpu.tile_max_h)
