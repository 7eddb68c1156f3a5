"""Register fields that the FDM per-tile and per-pass state is written into, and a check of every
value the plan says turnip programs against its field.

The field table follows the register database ``src/freedreno/registers/adreno/a6xx.xml`` of
pop-os/mesa @ 26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41 (:data:`REGISTER_DB`); which register
turnip writes with which value follows ``src/freedreno/vulkan/tu_cmd_buffer.cc`` @
4ff7b570d4e91a807c7f671eb29c58015d4a4816 (:data:`DRIVER_SOURCE`) and ``tu_pipeline.cc`` @
26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41:

* ``tu6_emit_tile_select`` (per tile): ``GRAS_BIN_FOVEAT`` scales and the per-slot offsets
  ``frag_offsets[i] = x1 - x1 / fa`` (``o'``) into ``GRAS_BIN_FOVEAT_OFFSET_0..3`` (a7xx) or the
  ``GRAS/RB_BIN_FOVEAT_XY[_FDM]`` arrays (a8xx), only when ``bin_scale_en``;
* ``tu6_emit_window_scissor`` (``GRAS_SC_WINDOW_SCISSOR_TL/BR`` and ``GRAS_A2D_SCISSOR_TL/BR``)
  from ``tu6_emit_tile_select`` and ``tu6_emit_binning_pass``;
* ``tu6_emit_window_offset`` (``RB_WINDOW_OFFSET``, ``RB_RESOLVE_WINDOW_OFFSET``,
  ``SP_WINDOW_OFFSET``, ``TPL1_WINDOW_OFFSET``, a7xx+ ``TPL1_A2D_WINDOW_OFFSET``) with ``b_cs``;
* ``tu6_emit_bin_size`` via ``tu6_emit_bin_size_gmem``: ``GRAS_SC_BIN_CNTL``, ``RB_CNTL``,
  ``RB_RESOLVE_CNTL_3`` and on a8xx ``TPL1_BIN_SIZE``, ``TPL1_A2D_BIN_SIZE``, ``SP_BIN_SIZE``,
  ``RB_MRT_GMEM_DIMENSION[0..7]``, ``RB_DEPTH/STENCIL_GMEM_DIMENSION`` with
  ``(tile0.width * G.w, tile0.height * G.h)`` (``G`` = the tile's ``gmem_extent``, whose height is
  the bin-merging height multiplier);
* ``update_vsc_pipe`` (per pass, from ``tu6_emit_binning_pass``): ``VSC_BIN_SIZE = tile0`` and
  ``VSC_EXPANDED_BIN_CNTL = tile count``;
* the FDM patchpoints (tu_pipeline.cc): ``fdm_apply_scissors`` → ``tu6_emit_scissor``
  (``GRAS_SC_SCREEN_SCISSOR_TL/BR[i]``) and ``fdm_apply_viewports`` → ``tu6_emit_viewport``
  (``GRAS_SC_VIEWPORT_SCISSOR_TL/BR[i]``), per tile and for the binning pass.

A value fits a field of bits ``low..high`` with ``shr`` when it is ``>= 0``, ``value >> shr``
fits in ``high - low + 1`` bits, and the low ``shr`` bits are zero (the shift would drop them):
see :func:`field_rule`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs

from .plan import RenderPassPlan, SysmemPlan, TilePlan

#: the register database every row of :data:`FIELDS` was read from
REGISTER_DB = "pop-os/mesa src/freedreno/registers/adreno/a6xx.xml @ 26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41"
#: the driver source that says which value goes to which register
DRIVER_SOURCE = "pop-os/mesa src/freedreno/vulkan/tu_cmd_buffer.cc @ 4ff7b570d4e91a807c7f671eb29c58015d4a4816"

#: the three rules of :func:`field_rule`
RULE_NEGATIVE = "negative"
RULE_TOO_LARGE = "too large for the field"
RULE_NOT_MULTIPLE = "not a multiple of 2^shr"

#: number of HW bin-scaling slots (MAX_HW_SCALED_VIEWS, tu_common.h)
HW_SLOTS = 6


@attrs.frozen
class RegisterField:
    """One bitfield of one register, as a6xx.xml @ 26e5c1f9 defines it for the chip
    generations in ``chips`` (``GpuProfile.chip``: 6, 7, 8).

    ``writer`` names the turnip function that writes it, ``value`` the plan quantity written
    (a key of the value maps :func:`register_warnings` builds; empty for rows built by hand)."""

    register: str
    field: str
    low: int
    high: int
    shr: int
    chips: tuple[int, ...]
    writer: str = ""
    value: str = ""

    @property
    def bits(self) -> int:
        return self.high - self.low + 1

    @property
    def max(self) -> int:
        """The largest value the field holds: ``(2^bits - 1) << shr``."""
        return ((1 << self.bits) - 1) << self.shr


@attrs.frozen(kw_only=True)
class RegisterWarning:
    """A value the plan says turnip programs that does not fit its register field.

    ``tile`` is the ``TilePlan.index`` (None for per-pass values: ``VSC_BIN_SIZE``, the tile
    count, and the binning pass's window scissor and patched scissors); ``view`` the view the
    value belongs to (None for values shared by all views)."""

    tile: int | None
    view: int | None
    register: str
    field: str
    value: int
    max: int
    rule: str


def field_rule(value: int, f: RegisterField) -> str | None:
    """None when ``value`` fits ``f``, else the first rule it breaks: :data:`RULE_NEGATIVE`
    (``value < 0``), :data:`RULE_TOO_LARGE` (``value >> shr`` needs more than ``bits`` bits, i.e.
    ``value > f.max`` once the low bits are zero) or :data:`RULE_NOT_MULTIPLE` (the low ``shr``
    bits, which the shift drops, are not zero)."""
    if value < 0:
        return RULE_NEGATIVE
    if value >> f.shr > (1 << f.bits) - 1:
        return RULE_TOO_LARGE
    if value & ((1 << f.shr) - 1):
        return RULE_NOT_MULTIPLE
    return None


def fits(value: int, f: RegisterField) -> bool:
    return field_rule(value, f) is None


# ----------------------------------------------------------------------------------------------
# the field table (a6xx.xml @ 26e5c1f98bb93ce72fd1cfd58a83d626fa8e9b41)

A6, A7, A8 = (6,), (7,), (8,)
A6_A7 = (6, 7)
A7_ = (7, 8)
ALL = (6, 7, 8)

_TILE_SELECT = "tu6_emit_tile_select"
_WINDOW_SCISSOR = "tu6_emit_window_scissor (from tu6_emit_tile_select / tu6_emit_binning_pass)"
_WINDOW_OFFSET = "tu6_emit_window_offset (from tu6_emit_tile_select)"
_BIN_SIZE = "tu6_emit_bin_size (from tu6_emit_bin_size_gmem in tu6_emit_tile_select)"
_VSC = "update_vsc_pipe (from tu6_emit_binning_pass)"
_SCISSOR = "tu6_emit_scissor (fdm_apply_scissors patchpoint, tu_pipeline.cc)"
_VP_SCISSOR = "tu6_emit_viewport (fdm_apply_viewports patchpoint, tu_pipeline.cc)"


def _xy(register: str, chips: tuple[int, ...], writer: str, value: str, bits: int = 14) -> list[RegisterField]:
    """``a6xx_reg_xy`` (X 0-13, Y 16-29) or ``a6xx_scissor_xy`` (X 0-15, Y 16-31, ``bits=16``)."""
    return [RegisterField(register, "X", 0, bits - 1, 0, chips, writer, f"{value}.x"),
            RegisterField(register, "Y", 16, 16 + bits - 1, 0, chips, writer, f"{value}.y")]


def _bin_wh(register: str, chips: tuple[int, ...], writer: str, value: str, a8: bool) -> list[RegisterField]:
    """``a6xx_bin_cntl`` BINW 0-5 shr 5, BINH 8-14 shr 4; ``a8xx_bin_cntl`` / ``a8xx_bin_size``
    BINW 0-9 shr 5, BINH 16-26 shr 4."""
    if a8:
        return [RegisterField(register, "BINW", 0, 9, 5, chips, writer, f"{value}.w"),
                RegisterField(register, "BINH", 16, 26, 4, chips, writer, f"{value}.h")]
    return [RegisterField(register, "BINW", 0, 5, 5, chips, writer, f"{value}.w"),
            RegisterField(register, "BINH", 8, 14, 4, chips, writer, f"{value}.h")]


def _gmem_dim(register: str) -> list[RegisterField]:
    """``a8xx_gmem_dimension``: WIDTH 0-14, HEIGHT 16-30."""
    return [RegisterField(register, "WIDTH", 0, 14, 0, A8, _BIN_SIZE, "bin_size.w"),
            RegisterField(register, "HEIGHT", 16, 30, 0, A8, _BIN_SIZE, "bin_size.h")]


def _foveat() -> list[RegisterField]:
    rows: list[RegisterField] = []
    # GRAS_BIN_FOVEAT (0x8008 A7XX, 0x8206 A8XX-): XSCALE_i/YSCALE_i, 2-bit a7xx_bin_scale,
    # X_i at 8+4i..9+4i, Y_i at 10+4i..11+4i
    for i in range(HW_SLOTS):
        rows.append(RegisterField("GRAS_BIN_FOVEAT", f"XSCALE_{i}", 8 + 4 * i, 9 + 4 * i, 0, A7_, _TILE_SELECT,
                                  f"hw_scale.x[{i}]"))
        rows.append(RegisterField("GRAS_BIN_FOVEAT", f"YSCALE_{i}", 10 + 4 * i, 11 + 4 * i, 0, A7_, _TILE_SELECT,
                                  f"hw_scale.y[{i}]"))
    # GRAS_BIN_FOVEAT_OFFSET_0..3 (0x8009-0x800c, variants="A7XX"): XOFFSET_0..2 in _0, XOFFSET_3..5 in
    # _1, YOFFSET_0..2 in _2, YOFFSET_3..5 in _3, each low=10k high=10k+9 shr=2 type=uint
    for i in range(HW_SLOTS):
        k = i % 3
        rows.append(RegisterField(f"GRAS_BIN_FOVEAT_OFFSET_{i // 3}", f"XOFFSET_{i}", 10 * k, 10 * k + 9, 2, A7,
                                  _TILE_SELECT, f"hw_offset.x[{i}]"))
        rows.append(RegisterField(f"GRAS_BIN_FOVEAT_OFFSET_{2 + i // 3}", f"YOFFSET_{i}", 10 * k, 10 * k + 9, 2, A7,
                                  _TILE_SELECT, f"hw_offset.y[{i}]"))
    # a8xx: arrays of 6 OFFSET regs of type a8xx_bin_foveat_xy (XOFFSET 0-13, YOFFSET 16-29, uint):
    # GRAS_BIN_FOVEAT_XY 0x8220, GRAS_BIN_FOVEAT_XY_FDM 0x8228, RB_BIN_FOVEAT_XY 0x8950,
    # RB_BIN_FOVEAT_XY_FDM 0x8960 (all variants="A8XX-"); turnip writes all four with o'
    for base in ("GRAS_BIN_FOVEAT_XY", "RB_BIN_FOVEAT_XY", "GRAS_BIN_FOVEAT_XY_FDM", "RB_BIN_FOVEAT_XY_FDM"):
        for i in range(HW_SLOTS):
            rows.append(RegisterField(f"{base}[{i}]", "XOFFSET", 0, 13, 0, A8, _TILE_SELECT, f"hw_offset.x[{i}]"))
            rows.append(RegisterField(f"{base}[{i}]", "YOFFSET", 16, 29, 0, A8, _TILE_SELECT, f"hw_offset.y[{i}]"))
    return rows


def _table() -> tuple[RegisterField, ...]:
    rows = _foveat()
    # window scissor: GRAS_SC_WINDOW_SCISSOR_TL/BR (0x80f0/1 A6XX-A7XX, 0x8235/6 A8XX-) and
    # GRAS_A2D_SCISSOR_TL/BR (0x840a/b A6XX-A7XX, 0x8507/8 A8XX-), all a6xx_reg_xy
    for reg in ("GRAS_SC_WINDOW_SCISSOR", "GRAS_A2D_SCISSOR"):
        rows += _xy(f"{reg}_TL", ALL, _WINDOW_SCISSOR, "window_scissor.tl")
        rows += _xy(f"{reg}_BR", ALL, _WINDOW_SCISSOR, "window_scissor.br")
    # window offset (b_cs): RB_WINDOW_OFFSET 0x8890, RB_RESOLVE_WINDOW_OFFSET 0x88d4,
    # SP_WINDOW_OFFSET (0xb4d1 A6XX, 0xab21 A7XX, 0xab07 A8XX-), TPL1_WINDOW_OFFSET 0xb307,
    # TPL1_A2D_WINDOW_OFFSET 0xb2d1 (A7XX-; written when CHIP >= A7XX), all a6xx_reg_xy
    for reg in ("RB_WINDOW_OFFSET", "RB_RESOLVE_WINDOW_OFFSET", "SP_WINDOW_OFFSET", "TPL1_WINDOW_OFFSET"):
        rows += _xy(reg, ALL, _WINDOW_OFFSET, "window_offset")
    rows += _xy("TPL1_A2D_WINDOW_OFFSET", A7_, _WINDOW_OFFSET, "window_offset")
    # bin size: GRAS_SC_BIN_CNTL (0x80a1 A6XX-A7XX a6xx_bin_cntl; 0x8231 A8XX- a8xx_bin_cntl),
    # RB_CNTL (0x8800, same types), RB_RESOLVE_CNTL_3 (0x88d3; A6XX-A7XX BINW 0-5 shr 5, BINH 8-14
    # shr 4; A8XX- a8xx_bin_size)
    for reg in ("GRAS_SC_BIN_CNTL", "RB_CNTL", "RB_RESOLVE_CNTL_3"):
        rows += _bin_wh(reg, A6_A7, _BIN_SIZE, "bin_size", a8=False)
        rows += _bin_wh(reg, A8, _BIN_SIZE, "bin_size", a8=True)
    # a8xx only: TPL1_BIN_SIZE 0xb304, TPL1_A2D_BIN_SIZE 0xb2d6, SP_BIN_SIZE 0xab06 (a8xx_bin_size);
    # RB_MRT_GMEM_DIMENSION[8] 0x8930, RB_DEPTH_GMEM_DIMENSION 0x8813, RB_STENCIL_GMEM_DIMENSION
    # 0x8814 (a8xx_gmem_dimension)
    for reg in ("TPL1_BIN_SIZE", "TPL1_A2D_BIN_SIZE", "SP_BIN_SIZE"):
        rows += _bin_wh(reg, A8, _BIN_SIZE, "bin_size", a8=True)
    for reg in ("RB_MRT_GMEM_DIMENSION[0..7]", "RB_DEPTH_GMEM_DIMENSION", "RB_STENCIL_GMEM_DIMENSION"):
        rows += _gmem_dim(reg)
    # VSC_BIN_SIZE 0x0c02: A6XX-A7XX BINW 0-7 shr 5, BINH 8-16 shr 4; A8XX a8xx_bin_size
    rows += [RegisterField("VSC_BIN_SIZE", "BINW", 0, 7, 5, A6_A7, _VSC, "vsc_bin_size.w"),
             RegisterField("VSC_BIN_SIZE", "BINH", 8, 16, 4, A6_A7, _VSC, "vsc_bin_size.h")]
    rows += _bin_wh("VSC_BIN_SIZE", A8, _VSC, "vsc_bin_size", a8=True)
    # VSC_EXPANDED_BIN_CNTL 0x0c06: NX 1-10, NY 11-20 (uint), all chips
    rows += [RegisterField("VSC_EXPANDED_BIN_CNTL", "NX", 1, 10, 0, ALL, _VSC, "tile_count.x"),
             RegisterField("VSC_EXPANDED_BIN_CNTL", "NY", 11, 20, 0, ALL, _VSC, "tile_count.y")]
    # patchpoints: GRAS_SC_SCREEN_SCISSOR[16] (0x80b0 A6XX-A7XX, 0x8240 A8XX-) and
    # GRAS_SC_VIEWPORT_SCISSOR[16] (0x80d0 A6XX-A7XX, 0x8270 A8XX-), TL/BR a6xx_scissor_xy (16/16)
    rows += _xy("GRAS_SC_SCREEN_SCISSOR_TL", ALL, _SCISSOR, "scissor.tl", bits=16)
    rows += _xy("GRAS_SC_SCREEN_SCISSOR_BR", ALL, _SCISSOR, "scissor.br", bits=16)
    rows += _xy("GRAS_SC_VIEWPORT_SCISSOR_TL", ALL, _VP_SCISSOR, "viewport_scissor.tl", bits=16)
    rows += _xy("GRAS_SC_VIEWPORT_SCISSOR_BR", ALL, _VP_SCISSOR, "viewport_scissor.br", bits=16)
    return tuple(rows)


#: every register field the FDM state is written into (a6xx.xml @ 26e5c1f9), in walk order
FIELDS: tuple[RegisterField, ...] = _table()


def fields_for(chip: int) -> tuple[RegisterField, ...]:
    """The rows of :data:`FIELDS` that exist on chip generation ``chip``."""
    return tuple(f for f in FIELDS if chip in f.chips)


def lookup(register: str, field: str, chip: int) -> RegisterField:
    """The row for ``register.field`` on ``chip`` (KeyError if there is none)."""
    for f in FIELDS:
        if f.register == register and f.field == field and chip in f.chips:
            return f
    raise KeyError(f"{register}.{field} on chip {chip}")


# ----------------------------------------------------------------------------------------------
# the values the plan says turnip programs

Values = dict[str, int]


def _pair(prefix: str, p: tuple[int, int], names: tuple[str, str] = ("x", "y")) -> Values:
    return {f"{prefix}.{names[0]}": p[0], f"{prefix}.{names[1]}": p[1]}


def _corners(prefix: str, tl_br: tuple[tuple[int, int], tuple[int, int]]) -> Values:
    return {**_pair(f"{prefix}.tl", tl_br[0]), **_pair(f"{prefix}.br", tl_br[1])}


def _tile_values(t: TilePlan, plan: RenderPassPlan) -> Iterator[tuple[int | None, Values]]:
    """``(view, values)`` for one rendered tile (``tu6_emit_tile_select`` and the patchpoints)."""
    T = plan.tiling.tile_size
    # tu6_emit_bin_size_gmem: tile0.width * gmem_extent.width, tile0.height * gmem_extent.height
    shared: Values = {**_corners("window_scissor", t.window_scissor),
                      **_pair("window_offset", t.common_bin_start),
                      **_pair("bin_size", (T[0] * t.gmem_extent[0], T[1] * t.gmem_extent[1]), ("w", "h"))}
    yield None, shared
    views = len(t.views)
    if t.foveat.binscaleen:   # the FOVEAT scales and offsets are only written with bin_scale_en
        for i in range(HW_SLOTS):
            yield min(i, views - 1), {f"hw_offset.x[{i}]": t.foveat.hw_offsets[i][0],
                                      f"hw_offset.y[{i}]": t.foveat.hw_offsets[i][1],
                                      f"hw_scale.x[{i}]": t.foveat.xscale[i],
                                      f"hw_scale.y[{i}]": t.foveat.yscale[i]}
    for s in t.slots:
        yield s.view, {**_corners("scissor", s.scissor), **_corners("viewport_scissor", s.viewport_scissor)}


def _pass_values(plan: RenderPassPlan) -> Iterator[tuple[int | None, Values]]:
    """``(view, values)`` of the per-pass state: ``update_vsc_pipe`` and the binning pass."""
    yield None, {**_pair("vsc_bin_size", plan.tiling.tile_size, ("w", "h")),
                 **_pair("tile_count", plan.tiling.vsc.tile_count),
                 **_corners("window_scissor", plan.binning.window_scissor)}
    for s in plan.binning.slots:
        yield s.view, {**_corners("scissor", s.scissor), **_corners("viewport_scissor", s.viewport_scissor)}


def _check(tile: int | None, view: int | None, values: Mapping[str, int],
           rows: tuple[RegisterField, ...]) -> Iterator[RegisterWarning]:
    for f in rows:
        if f.value in values:
            v = values[f.value]
            rule = field_rule(v, f)
            if rule is not None:
                yield RegisterWarning(tile=tile, view=view, register=f.register, field=f.field, value=v,
                                      max=f.max, rule=rule)


def register_warnings(plan: RenderPassPlan | SysmemPlan) -> tuple[RegisterWarning, ...]:
    """Every value the plan says turnip programs that does not fit its register field on the
    plan's chip (``plan.scenario.gpu.chip``), per-pass values first, then the tiles in walk order
    (none for a pass rendered in sysmem: no bin is programmed).

    A value written to several registers (the window offset goes to five, o' on a8xx to four
    arrays) gives one warning per register.  Values come from ``RenderPassPlan``: per tile the
    FOVEAT offsets ``o'`` and scales of each HW slot (only when ``foveat.binscaleen``), the window
    scissor, the window offset ``b_cs``, the bin size ``T * gmem_extent`` and the patched scissors
    and viewport scissors of each slot; per pass ``VSC_BIN_SIZE = T``, the tile count and the
    binning pass's window scissor and patched scissors."""
    if isinstance(plan, SysmemPlan):
        return ()
    rows = fields_for(plan.scenario.gpu.chip)
    out: list[RegisterWarning] = []
    for view, values in _pass_values(plan):
        out.extend(_check(None, view, values, rows))
    for t in plan.tiles:
        for view, values in _tile_values(t, plan):
            out.extend(_check(t.index, view, values, rows))
    return tuple(out)


def warning_json(w: RegisterWarning) -> dict[str, int | str | None]:
    """JSON form: keys ``tile``, ``view``, ``register``, ``field``, ``value``, ``max``, ``rule``."""
    return {"tile": w.tile, "view": w.view, "register": w.register, "field": w.field, "value": w.value,
            "max": w.max, "rule": w.rule}
