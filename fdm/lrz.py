"""LRZ of an FDM pass: whether the pass may use LRZ at all (``tu_lrz_init_state``), and the LRZ
over-allocation of depth images created for FDM offsets, which also caps the tile size
(``fdl6_lrz_get_max_fdm_extra_size``).

The per-tile disable (``disable_lrz`` / ``force_lrz_dis``) lives in :mod:`fdm.tile_select`;
the LRZ at the draws (:func:`tu6_calculate_lrz_state`) is off in every FDM pass on a6xx, whose
fragment shader is compiled with ``TU_LRZ_FORCE_DISABLE_LRZ`` (:func:`fs_forces_lrz_off`).  The
effective LRZ state of a tile is ``LrzDrawState.enabled and not force_lrz_dis``
(docs/findings.md, finding m).
"""

from __future__ import annotations

from typing import Literal

import attrs

from .cmath import div_round_up
from .gpu import GpuProfile

#: the depth attachment's load op as ``tu_lrz_init_state`` sees it (``none``: no depth attachment)
DepthLoadOp = Literal["clear", "load", "dont_care", "none"]
DEPTH_LOAD_OPS: tuple[DepthLoadOp, ...] = ("clear", "load", "dont_care", "none")

#: ``fd_lrzfc_layout<CHIP>::FC_SIZE`` in bytes (src/freedreno/common/freedreno_lrz.h, Mesa 26.2.0-rc1
#: at leegao/mesa-26.2 3c34d70: 512 on A6XX, 1024 on A7XX, 2048 on A8XX; the box: a 4-view a830 pass
#: with the FDM-offset flag keeps its uncapped tile, gen166008712-00146)
LRZ_FC_SIZE = {6: 512, 7: 1024, 8: 2048}


@attrs.frozen(kw_only=True)
class LrzPassState:
    """LRZ for the whole pass after ``tu_lrz_init_state``: ``valid`` (LRZ may be used), and why not."""

    valid: bool
    reason: str  # "" when valid


@attrs.frozen(kw_only=True)
class LrzDrawState:
    """LRZ at the pass's draws after ``tu6_calculate_lrz_state``: ``enabled`` is
    ``GRAS_LRZ_CNTL.ENABLE`` as every draw (and so every bin: the value is an unpatched draw
    state) programs it; ``valid_after`` is ``cmd->state.lrz.valid`` once the draws are recorded
    (false when a draw invalidated LRZ for the rest of the pass); ``reason`` says why LRZ is off
    ("" when enabled)."""

    enabled: bool
    valid_after: bool
    reason: str


#: the ``tu_lrz_disable_reason`` text of ``tu6_calculate_lrz_state`` for a fragment shader marked
#: ``TU_LRZ_FORCE_DISABLE_LRZ`` on a GPU with LRZ direction tracking (the cause is the FDM)
LRZ_FS_DISABLE_REASON = "FS writes depth or has side-effects (TODO: fix for gpu-direction-tracking case)"


def fs_forces_lrz_off(gpu: GpuProfile, fdm_pipeline: bool) -> bool:
    """``tu_shader_create`` (src/freedreno/vulkan/tu_shader.cc, pop-os @ 025a3b4d), fragment
    stage: ``if (key->fragment_density_map && chip < 7) fs.lrz.status =
    TU_LRZ_FORCE_DISABLE_LRZ`` ("FDM isn't compatible with LRZ, because the LRZ image uses the
    original resolution"; a7xx uses ``GRAS_SC_BIN_CNTL::FORCE_LRZ_DIS`` per bin instead).

    ``fdm_pipeline`` is the key's ``fragment_density_map``: the pipeline was created with
    ``VK_PIPELINE_CREATE_2_RENDERING_FRAGMENT_DENSITY_MAP_ATTACHMENT_BIT_EXT``, which
    ``vk_get_pipeline_rendering_flags`` (the common runtime's vk_render_pass.c) sets exactly when
    the render pass's ``fragment_density_map.attachment`` is used.  ``tu_CreateRenderPass2``
    (tu_pass.cc, pop-os @ c02c8b9f) leaves that attachment ``VK_ATTACHMENT_UNUSED`` when
    ``tu_render_pass_disable_fdm`` turns the FDM off, so a pass whose FDM is off has no FDM key:
    ``fdm_pipeline`` is ``pass->has_fdm``.  Decided per pipeline at compile time: density, bin
    scaling and ``gl_FragCoord`` play no part."""
    return fdm_pipeline and gpu.chip < 7


def tu6_calculate_lrz_state(gpu: GpuProfile, pass_lrz: LrzPassState, fs_force_disable: bool) -> LrzDrawState:
    """``tu6_calculate_lrz_state`` (src/freedreno/vulkan/tu_lrz.cc, pop-os @ 4ff7b570) for the
    pass's draws (the box's pipeline: depth test ``LESS`` with writes, no other LRZ trigger):

    1. ``!lrz.valid`` (:func:`tu_lrz_init_state`): ``GRAS_LRZ_CNTL`` = 0;
    2. ``disable_lrz_due_to_fs`` (:func:`fs_forces_lrz_off`): without ``has_lrz_dir_tracking``
       (a618, a630) ``temporary_disable_lrz``: every draw has LRZ off and ``lrz.valid`` stays;
       with it (``prev_direction`` still ``TU_LRZ_UNKNOWN`` at the first draw) ``disable_lrz``:
       ``lrz.valid = false`` for the rest of the pass (the later draws stop at step 1);
    3. otherwise enabled.

    ``lrz.enabled = valid && enable``; when false the whole ``GRAS_LRZ_CNTL`` is zeroed.  The
    value is written into the ``TU_DRAW_STATE_LRZ_AND_DEPTH_PLANE`` draw state, which no FDM
    patchpoint rewrites: every bin replays it."""
    if not pass_lrz.valid:
        return LrzDrawState(enabled=False, valid_after=False, reason=pass_lrz.reason)
    if fs_force_disable:
        if gpu.has_lrz_dir_tracking:
            return LrzDrawState(enabled=False, valid_after=False,
                                reason=f"fragment shader compiled for FDM on a6xx (TU_LRZ_FORCE_DISABLE_LRZ): "
                                       f"LRZ invalidated for the pass ({LRZ_FS_DISABLE_REASON})")
        return LrzDrawState(enabled=False, valid_after=True,
                            reason="fragment shader compiled for FDM on a6xx (TU_LRZ_FORCE_DISABLE_LRZ): "
                                   "LRZ temporarily disabled at every draw")
    return LrzDrawState(enabled=True, valid_after=True, reason="")


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
