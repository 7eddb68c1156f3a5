"""The subsampled store path, metadata and aprons: what turnip programmed beside the model.

A pass with a subsampled attachment (``fdm_subsampled``: some attachment image created with
``VK_IMAGE_CREATE_SUBSAMPLED_BIT_EXT``) programs three more things (src/freedreno/vulkan,
pop-os @ 4ff7b570; the model: :mod:`layout_solver.subsampled_pass`):

* per bin, the store into the subsampled layout: under the ``FAST_STORE`` predicate the resolve
  engine (a ``CP_EVENT_WRITE`` BLIT, ``tu_emit_blit``) with ``RB_RESOLVE_CNTL_1/2`` and
  ``RB_RESOLVE_WINDOW_OFFSET`` patched by ``fdm_apply_blit_scissor``; under ``NO_FAST_STORE`` the
  A2D engine (``CP_BLIT``, ``store_cp_blit``) with ``GRAS_A2D_SCISSOR_TL/BR``
  (``fdm_apply_render_area``) and ``GRAS_A2D_DEST_TL/BR``, ``GRAS_A2D_SRC_*``
  (``fdm_apply_store_coords``);
* after the bins, ``tu_emit_subsampled`` (tu_cmd_buffer.cc): per stored attachment and layer one
  ``CP_MEM_WRITE`` of the metadata (``tu_emit_subsampled_metadata``, tu_subsampled_image.cc: the
  32-byte header ``{scale.xy, offset.xy, bin_stride, pad[3]}`` and ``tile_count`` 16-byte bins,
  float32); after a sysmem pass ``tu6_sysmem_render_end`` writes the one-bin fallback;
* then per layer, per stored attachment, the apron blits (``tu_blit_subsampled_apron``,
  tu_clear_blit.cc): a multi-rect 3D blit whose rectangles ``r3d_coords_multi`` puts in a UBO
  (``CP_LOAD_STATE6_GEOM``, ``ST6_UBO``, ``SS6_DIRECT``, ``SB6_VS_SHADER``) of 8 dwords a blit:
  ``fui`` of dst x0, y0, src x0, y0, dst x1, y1, src x1, y1.

Register offsets (Mesa's ``src/freedreno/registers/adreno/a6xx.xml``, A6XX-A7XX; a8xx: the chip's table,
:func:`turnip_box.registers.table`):
``RB_RESOLVE_CNTL_1/2`` 0x88d1/0x88d2 (``a6xx_reg_xy``; RB_BLIT_SCISSOR_TL/BR in older files),
``RB_RESOLVE_WINDOW_OFFSET`` 0x88d4 (``a6xx_reg_xy``; RB_WINDOW_OFFSET2 in older files),
``RB_RESOLVE_OPERATION`` 0x88e3 (RB_BLIT_INFO), ``GRAS_A2D_SRC_XMIN..YMAX`` 0x8401-0x8404 (24.8
fixed point), ``GRAS_A2D_DEST_TL/BR`` 0x8405/0x8406, ``GRAS_A2D_SCISSOR_TL/BR`` 0x840a/0x840b.
The stream shows the patches: ``4888d102 TL BR 4888d401 OFFSET`` (fast) and ``48840a02 TL BR`` /
``48840502 TL BR 40840104 SRC`` (slow) in each bin's ``CP_MEM_WRITE`` patches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from fdm.plan import RenderPassPlan, SysmemPlan
from layout_solver.aprons import AprBlit
from layout_solver.metadata import LayerMetadata
from layout_solver.store_path import EMPTY
from layout_solver.subsampled_pass import SubsampledPass, subsampled_pass

from . import registers as R
from .compare import Difference
from .decode import TU_PREDICATE_FAST_STORE
from .pm4 import (
    CP_BLIT,
    CP_DRAW_INDX_OFFSET,
    CP_LOAD_STATE6_GEOM,
    DI_PT_RECTLIST,
    BinPhases,
    walk,
)
from .rd import Dump

#: TU_PREDICATE_FAST_STORE (tu6_emit_tile_select sets it and NO_FAST_STORE with one CP_REG_TEST)
FAST_STORE_BIT = TU_PREDICATE_FAST_STORE
#: CP_LOAD_STATE6_0: STATE_TYPE bits 14-15 (ST6_UBO 2), STATE_SRC 16-17 (SS6_DIRECT 0), STATE_BLOCK
#: 18-21 (SB6_VS_SHADER 8) - adreno_pm4.xml
ST6_UBO, SB6_VS_SHADER = 2, 8

Corners = tuple[tuple[int, int], tuple[int, int]]


def bits(x: float | np.floating[Any]) -> int:
    """The float32 bits of ``x`` (rounded to float32 first)."""
    return int(np.float32(x).view(np.uint32))


@attrs.frozen(kw_only=True)
class SubsampledBin:
    """One rendered bin's subsampled store as the stream programs it."""

    fast_store: bool | None
    #: the resolve-engine stores: (RB_RESOLVE_CNTL_1/2, RB_RESOLVE_WINDOW_OFFSET)
    resolve: tuple[tuple[Corners, tuple[int, int]], ...]
    #: the A2D stores: (GRAS_A2D_DEST, GRAS_A2D_SRC, GRAS_A2D_SCISSOR)
    a2d: tuple[tuple[Corners, Corners, Corners], ...]


@attrs.frozen(kw_only=True)
class DriverSubsampled:
    """The subsampled programming of one pass's submit."""

    bins: tuple[SubsampledBin, ...]
    #: the metadata CP_MEM_WRITEs after the draws, their payload after the address (dwords)
    metadata: tuple[tuple[int, ...], ...]
    #: the apron blit lists in stream order, each blit its 8 dwords
    aprons: tuple[tuple[tuple[int, ...], ...], ...]


def _is_metadata(values: tuple[int, ...]) -> bool:
    """A ``tu_subsampled_metadata`` write: header (8 dwords, ``pad[3]`` zero, stride >= 1) and at
    least one 4-dword bin."""
    n = len(values)
    return n >= 12 and (n - 8) % 4 == 0 and values[4] >= 1 and values[5:8] == (0, 0, 0)


@attrs.define
class _Listener(BinPhases):
    table: R.Table = R.A6XX_A7XX
    metadata: list[tuple[int, ...]] = attrs.field(factory=list)
    #: metadata-shaped writes before any render-mode marker: a pass that renders no bin and runs no
    #: binning pass emits no marker at all (compare.stream_mode), yet tu_emit_subsampled writes
    unphased: list[tuple[int, ...]] = attrs.field(factory=list)
    ubos: list[tuple[int, int]] = attrs.field(factory=list)

    def new_phase(self, kind: str) -> dict[str, Any]:
        return {"kind": kind, "drawn": False, "resolving": False, "pred": None, "fast": [], "a2d": []}

    def predicate(self, bits: int, mask: int) -> None:
        cur = self.current
        if cur is not None and cur["kind"] == "gmem" and not cur["drawn"] and mask >> FAST_STORE_BIT & 1:
            cur["pred"] = bool(bits >> FAST_STORE_BIT & 1)

    def draw(self, opcode: int, payload: tuple[int, ...]) -> None:
        if opcode == CP_DRAW_INDX_OFFSET and payload and (payload[0] & 0x3F) == DI_PT_RECTLIST:
            return  # turnip's own clears and blits
        if self.current is not None:
            self.current["drawn"] = True

    def mem_write(self, addr: int, values: tuple[int, ...]) -> None:
        # after the last phase's draws: the last bin's, the sysmem pass's, or the binning pass's when
        # every tile is invisible (no bin is rendered; tu_emit_subsampled still writes the metadata)
        cur = self.current
        if cur is not None and cur["drawn"] and _is_metadata(values):
            self.metadata.append(values)
        elif cur is None and _is_metadata(values):
            self.unphased.append(values)

    def event(self, opcode: int, payload: tuple[int, ...]) -> None:
        cur = self.current
        if cur is None or cur["kind"] != "gmem" or not cur["resolving"]:
            return
        g = self.regs.get
        if opcode == CP_BLIT:
            t = self.table
            s = [g(t.gras_a2d_src + k, 0) >> 8 for k in range(4)]
            cur["a2d"].append(((R.reg_xy(g(t.gras_a2d_dest_tl, 0)), R.reg_xy(g(t.gras_a2d_dest_br, 0))),
                               ((s[0], s[2]), (s[1], s[3])),
                               (R.reg_xy(g(t.gras_a2d_scissor_tl, 0)), R.reg_xy(g(t.gras_a2d_scissor_br, 0)))))
        elif payload and (payload[0] & 0x7F) == 0x1E and g(self.table.rb_resolve_operation, 0) & 3 in (0, 1):
            t = self.table
            cur["fast"].append(((R.reg_xy(g(t.rb_blit_scissor_tl, 0)), R.reg_xy(g(t.rb_blit_scissor_br, 0))),
                                R.reg_xy(g(t.rb_resolve_window_offset, 0))))

    def load_state(self, opcode: int, payload: tuple[int, ...], data: tuple[int, ...]) -> None:
        if opcode != CP_LOAD_STATE6_GEOM or len(payload) < 5:
            return
        d0 = payload[0]
        if (d0 >> 14) & 3 == ST6_UBO and (d0 >> 16) & 3 == 0 and (d0 >> 18) & 0xF == SB6_VS_SHADER:
            # the UBO descriptor: A6XX_UBO_0 address low, A6XX_UBO_1 address bits 32-48 and SIZE (vec4s) 17+
            self.ubos.append((payload[3] | (payload[4] & 0x1FFFF) << 32, payload[4] >> 17))


def driver_subsampled(dump: Dump, chip: int = 7) -> DriverSubsampled:
    """Decode the subsampled stores, metadata and apron blits of one pass's submit of a
    ``chip``-generation GPU (6, 7 or 8: the A2D registers moved on a8xx)."""
    lis = _Listener(table=R.table(chip))
    w = walk(dump, lis)
    aprons = []
    for addr, size in lis.ubos:
        dw = w.memory.dwords(addr, 4 * size)
        aprons.append(tuple(tuple(dw[8 * k:8 * k + 8]) for k in range(size // 2)))
    bins = tuple(SubsampledBin(fast_store=b["pred"], resolve=tuple(b["fast"]), a2d=tuple(b["a2d"])) for b in lis.bins)
    metadata = lis.metadata if lis.current is not None else lis.unphased
    return DriverSubsampled(bins=bins, metadata=tuple(metadata), aprons=tuple(aprons))


# ---- the model in the register domain ------------------------------------------------------------
def metadata_dwords(m: LayerMetadata) -> tuple[int, ...]:
    """The dwords ``tu_emit_subsampled_metadata`` writes for one layer (header, then the bins)."""
    h = m.header
    out = [bits(h.scale[0]), bits(h.scale[1]), bits(h.offset[0]), bits(h.offset[1]), h.bin_stride, 0, 0, 0]
    for b in m.bins:
        out += [bits(b.scale[0]), bits(b.scale[1]), bits(b.offset[0]), bits(b.offset[1])]
    return tuple(out)


def apron_dwords(b: AprBlit) -> tuple[int, ...]:
    """``r3d_coords_multi``'s 8 dwords of one blit."""
    d = b.dst
    return (bits(d.x), bits(d.y), bits(b.src[0]), bits(b.src[1]), bits(d.x + d.w), bits(d.y + d.h),
            bits(b.src[2]), bits(b.src[3]))


def _floats(dw: Sequence[int]) -> tuple[float, ...]:
    return tuple(R.f32(v) for v in dw)


def _packed(x: int, y: int) -> tuple[int, int]:
    """``(x, y)`` through turnip's packer of an ``a6xx_reg_xy`` register and back: the dword is
    ``x | y << 16`` unmasked (a release build does not mask the fields: a negative X, the A2D
    scissor start of a bin left of the render area, fills Y's bits - the box shows Y 0x3fff), read
    as X bits 0-13, Y bits 16-29.  The model gives the ``uint32`` values before packing."""
    return R.reg_xy((int(x) | int(y) << 16) & 0xFFFFFFFF)


def _corners(c: Corners) -> Corners:
    """Model corners as the stream holds them (:func:`_packed`)."""
    return _packed(*c[0]), _packed(*c[1])


def differences(name: str, gpu: str, drv: DriverSubsampled, plan: RenderPassPlan | SysmemPlan, chip: int,
                model: SubsampledPass | None = None) -> tuple[list[Difference], int]:
    """The subsampled fields (:data:`turnip_box.compare.CAUSE_ORDER`, ``subsampled.*``) of the
    decoded pass against :func:`layout_solver.subsampled_pass.subsampled_pass`; with how many
    values were compared."""
    sp = model if model is not None else subsampled_pass(plan)
    out: list[Difference] = []
    n = 0

    def eq(field: str, driver: Any, want: Any, bin: int | None = None, view: int | None = None) -> None:
        nonlocal n
        n += 1
        if driver != want:
            out.append(Difference(name, gpu, field, bin, view, driver, want))

    if sp is None:
        return out, n
    if isinstance(plan, RenderPassPlan) and sp.layout is not None:
        for i, (b, stores) in enumerate(zip(drv.bins, sp.stores, strict=False)):
            if chip >= 7 and b.fast_store is not None:
                eq("subsampled.fast_store", b.fast_store, sp.fast_store[i], i)
            if b.resolve:
                want_r = sorted({(_corners(s.resolve_scissor), (int(s.resolve_window_offset[0]),
                                                                 int(s.resolve_window_offset[1])))
                                 for s in stores})
                eq("subsampled.store_resolve", sorted(set(b.resolve)), want_r, i)
            if b.a2d:
                got = sorted({(d, s, sc if d != EMPTY else None) for d, s, sc in b.a2d})
                want_a = sorted({(_corners(s.store_dst), _corners(s.store_src),
                                  _corners(s.a2d_scissor) if s.a2d_scissor is not None and s.store_dst != EMPTY
                                  else None) for s in stores})
                eq("subsampled.store_a2d", got, want_a, i)
    want_m = [metadata_dwords(m) for m in sp.metadata]
    eq("subsampled.metadata.count", len(drv.metadata), len(want_m))
    for k, (g, m) in enumerate(zip(drv.metadata, want_m, strict=False)):
        eq("subsampled.metadata.header", (k, _floats(g[:4]), g[4]), (k, _floats(m[:4]), m[4]))
        if len(g) != len(m):
            eq("subsampled.metadata.bins", (k, (len(g) - 8) // 4), (k, (len(m) - 8) // 4))
            continue
        for j in range(8, len(g), 4):
            if g[j:j + 4] != m[j:j + 4]:
                eq("subsampled.metadata.bin", (k, (j - 8) // 4, _floats(g[j:j + 4])),
                   (k, (j - 8) // 4, _floats(m[j:j + 4])))
            else:
                n += 1
    want_a2 = [[apron_dwords(b) for b in group] for group in sp.aprons]
    eq("subsampled.aprons", len(drv.aprons), len(want_a2))
    for k, (g2, m2) in enumerate(zip(drv.aprons, want_a2, strict=False)):
        eq("subsampled.apron.count", (k, len(g2)), (k, len(m2)))
        for j, (gb, mb) in enumerate(zip(g2, m2, strict=False)):
            eq("subsampled.apron", (k, j, _floats(gb)), (k, j, _floats(mb)))
    return out, n
