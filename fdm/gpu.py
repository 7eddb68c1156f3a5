"""Per-GPU facts that the FDM code depends on.

Values from ``src/freedreno/common/freedreno_devices.py`` (Mesa; see docs/gpus.md for the
commit and the argument each value comes from).
"""

from __future__ import annotations

import attrs

from turnip_base.errors import ScenarioError


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
    def has_lrz_dir_tracking(self) -> bool:
        """``has_lrz_dir_tracking`` (freedreno_devices.py, pop-os @ 26e5c1f9): set in
        ``a6xx_gen3``, ``a6xx_gen4`` and ``a7xx_base`` (which a8xx inherits), not in gen1/gen2."""
        return self.chip >= 7 or self.generation in ("a6xx_gen3", "a6xx_gen4")

    @property
    def has_generic_clear(self) -> bool:
        """``has_generic_clear`` (freedreno_devices.py): a7xx gen3 (a750) and a8xx clear GMEM at
        the start of a subpass with ``tu7_generic_clear_attachment``; a6xx and a7xx gen1/gen2
        (a725, a730, a740) with the resolve engine's BLIT-event clear (``tu_clear_gmem_attachment``,
        :mod:`fdm.clears`), as the box's streams show."""
        return self.chip >= 8 or self.generation == "a7xx_gen3"

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


@attrs.frozen(kw_only=True)
class GmemCacheConfig:
    """The GMEM-mode cache layout turnip computes once per device
    (``fd6_calc_gmem_cache_offsets``, src/freedreno/common/fd6_gmem_cache.h, sailfish @ 04f9a827,
    called from ``tu_physical_device_init``, tu_device.cc, pop-os @ 8afad928)."""

    usable: int             # usable_gmem_size_gmem: the FULL layout's budget
    color_ccu_offset: int   # config_gmem.color_ccu_offset: the AVOID_CCU layout's budget
    depth_ccu_offset: int   # config_gmem.depth_ccu_offset (0 where the chip keeps depth out of GMEM)

    @property
    def depth_cache(self) -> tuple[int, int]:
        """``[start, end)`` of the depth CCU cache inside GMEM in GMEM mode (empty before a8xx:
        ``emit_rb_ccu_cntl`` places it at ``depth_ccu_offset`` up to the colour cache on a8xx)."""
        if self.depth_ccu_offset == 0:
            return (0, 0)
        return (self.depth_ccu_offset, self.color_ccu_offset)


def fd6_calc_gmem_cache_offsets(gpu: GpuProfile) -> GmemCacheConfig:
    """``fd6_calc_gmem_cache_offsets`` for GMEM mode (src/freedreno/common/fd6_gmem_cache.h,
    sailfish @ 04f9a827; per-chip sizes from freedreno_devices.py, pop-os @ 26e5c1f9).

    a6xx and a7xx gen1-2: the colour cache takes ``num_ccu * 64K >> fraction`` (QUARTER on
    a6xx, EIGHTH on a7xx) at the top of GMEM; usable = all of GMEM.  a7xx gen3 (a750) first
    carves ``num_ccu * 48K`` of VPC attribute buffer; usable ends there.  a8xx carves
    downward from the top, ``num_ccu`` copies each: the VPC bv_pos, attribute and position
    buffers, the colour cache (16K), the depth cache (256K); usable = ``depth_ccu_offset``.
    """
    g = gpu.gmem_size
    n = gpu.num_ccu
    if gpu.chip == 8:
        if gpu.name == "a810":
            bv_pos, attr, pos = 20480, 16384, 12288
        else:
            bv_pos, attr, pos = 32768, 49152, 24576
        vpc_pos_buf_offset = g - n * (bv_pos + attr + pos)
        color_ccu_offset = vpc_pos_buf_offset - n * 16384
        depth_ccu_offset = color_ccu_offset - n * 262144
        return GmemCacheConfig(usable=depth_ccu_offset, color_ccu_offset=color_ccu_offset,
                               depth_ccu_offset=depth_ccu_offset)
    fraction = 8 if gpu.chip == 7 else 4
    color_cache_gmem = n * 64 * 1024 // fraction
    usable = g - n * 0xC000 if gpu.generation == "a7xx_gen3" else g
    return GmemCacheConfig(usable=usable, color_ccu_offset=usable - color_cache_gmem, depth_ccu_offset=0)


def gmem_budget(gpu: GpuProfile, avoid_ccu: bool = True) -> int:
    """GMEM bytes available to attachments: ``tu_render_pass_gmem_config`` (tu_pass.cc, pop-os @
    c02c8b9f) takes ``usable_gmem_size_gmem`` for ``TU_GMEM_LAYOUT_FULL`` and
    ``config_gmem.color_ccu_offset`` for ``TU_GMEM_LAYOUT_AVOID_CCU``, with no ``MIN2``.

    FDM passes always use AVOID_CCU (``tu_choose_gmem_layout``, tu_clear_blit.cc, pop-os @
    4ff7b570: ``pass->has_fdm``).  On a8xx that budget is *larger* than FULL's: it reaches over
    the depth CCU cache, which sits between ``depth_ccu_offset`` and ``color_ccu_offset`` in
    GMEM mode (docs/findings.md, finding l).
    """
    cfg = fd6_calc_gmem_cache_offsets(gpu)
    return cfg.color_ccu_offset if avoid_ccu else cfg.usable
