"""Per-GPU facts that the FDM code depends on.

Values from ``src/freedreno/common/freedreno_devices.py`` (Mesa; see docs/gpus.md for the
commit and the argument each value comes from).
"""

from __future__ import annotations

import attrs

from .errors import ScenarioError


@attrs.frozen(kw_only=True)
class GpuProfile:
    """The device-info properties that turnip's FDM code reads."""

    name: str
    chip: int  # 6, 7 or 8 (A6XX, A7XX, A8XX)
    generation: str
    tile_align_w: int
    tile_align_h: int
    tile_max_w: int
    tile_max_h: int
    num_vsc_pipes: int
    has_bin_mask: bool
    has_abs_bin_mask: bool
    has_hw_bin_scaling: bool
    has_per_view_viewport: bool
    gmem_size: int  # bytes, as the kernel reports it (not in freedreno_devices.py)
    num_ccu: int
    gmem_size_source: str = "drm-shim"
    gmem_align_w: int = 16
    gmem_align_h: int = 4

    @property
    def tile_align(self) -> tuple[int, int]:
        return (self.tile_align_w, self.tile_align_h)


def _p(name: str, chip: int, gen: str, align: tuple[int, int], tmax: tuple[int, int], pipes: int, bin_mask: bool,
       abs_mask: bool, hw_scale: bool, pvv: bool, gmem: int, ccu: int, src: str = "drm-shim") -> GpuProfile:
    """One table row, in the column order of the table below."""
    return GpuProfile(name=name, chip=chip, generation=gen, tile_align_w=align[0], tile_align_h=align[1],
                      tile_max_w=tmax[0], tile_max_h=tmax[1], num_vsc_pipes=pipes, has_bin_mask=bin_mask,
                      has_abs_bin_mask=abs_mask, has_hw_bin_scaling=hw_scale, has_per_view_viewport=pvv,
                      gmem_size=gmem, num_ccu=ccu, gmem_size_source=src)


def gpu_profiles() -> dict[str, GpuProfile]:
    """All modelled GPUs by name (a fresh dict on each call: no module-level state)."""
    ks = 1024
    table = [
        _p("a618", 6, "a6xx_gen1", (32, 32), (1024, 1024), 32, False, False, False, False, 512 * ks, 1),
        _p("a630", 6, "a6xx_gen1", (32, 16), (1024, 1024), 32, False, False, False, False, 1024 * ks, 2),
        _p("a650", 6, "a6xx_gen3", (96, 16), (1024, 1024), 32, False, False, False, True, 1024 * ks + 128 * ks, 3,
           "kernel a6xx catalog"),
        _p("a660", 6, "a6xx_gen4", (96, 16), (1024, 1024), 32, False, False, False, True, 1024 * ks + 512 * ks, 3),
        _p("a690", 6, "a6xx_gen4", (64, 32), (1024, 1024), 32, False, False, False, True, 4096 * ks, 8,
           "kernel a6xx catalog"),
        _p("a725", 7, "a7xx_gen1", (64, 32), (1024, 1024), 32, True, False, False, True, 2048 * ks, 4,
           "assumed equal to a730 (not found in Mesa or kernel sources read)"),
        _p("a730", 7, "a7xx_gen1", (64, 32), (1024, 1024), 32, True, False, False, True, 2048 * ks, 4),
        _p("a740", 7, "a7xx_gen2", (96, 32), (2016, 2032), 32, True, False, True, True, 3072 * ks, 6),
        _p("a750", 7, "a7xx_gen3", (96, 32), (2016, 2032), 32, True, True, True, True, 3072 * ks, 6),
        _p("a810", 8, "a8xx_gen1", (32, 16), (16384, 16384), 32, True, True, True, True, 576 * ks, 1),
        _p("a830", 8, "a8xx_gen1", (96, 32), (16416, 16384), 32, True, True, True, True, 12288 * ks, 6),
    ]
    return {p.name: p for p in table}


def get_gpu(name: str, field: str = "gpu") -> GpuProfile:
    profiles = gpu_profiles()
    key = str(name).lower()
    if key not in profiles:
        raise ScenarioError(field, f"unknown GPU {name!r}; known: {', '.join(sorted(profiles))}")
    return profiles[key]


def gmem_budget(gpu: GpuProfile, avoid_ccu: bool = True) -> int:
    """GMEM bytes available to attachments (``fd6_calc_gmem_cache_offsets``,
    src/freedreno/common/fd6_gmem_cache.h, and ``tu_render_pass_gmem_config``).

    FDM passes always use the ``TU_GMEM_LAYOUT_AVOID_CCU`` layout, whose budget ends where the
    colour CCU cache starts.  a6xx/a7xx gen1-2: the colour cache takes
    ``num_ccu * 64K / fraction`` (fraction 4 on a6xx, 8 on a7xx) at the top of GMEM; a7xx gen3
    first carves ``num_ccu * 48K`` of VPC attribute buffer; a8xx carves, per CCU, the VPC
    position/attribute buffers, then the colour (16K) and depth (256K) caches.
    """
    g = gpu.gmem_size
    if gpu.chip == 8:
        if gpu.name == "a810":
            bv_pos, attr, pos = 20480, 16384, 12288
        else:
            bv_pos, attr, pos = 32768, 49152, 24576
        color_ccu_offset = g - gpu.num_ccu * (bv_pos + attr + pos)
        usable = color_ccu_offset - gpu.num_ccu * (16384 + 262144)
        return min(usable, color_ccu_offset) if avoid_ccu else usable
    fraction = 8 if gpu.chip == 7 else 4
    color_cache_gmem = gpu.num_ccu * 64 * 1024 // fraction
    if gpu.generation == "a7xx_gen3":
        usable = g - gpu.num_ccu * 0xC000
    else:
        usable = g
    color_ccu_offset = usable - color_cache_gmem
    return min(usable, color_ccu_offset) if avoid_ccu else usable
