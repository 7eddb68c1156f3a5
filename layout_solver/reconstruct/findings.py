"""Detectors of the layout findings the reconstruction exposes (docs/findings.md j, k; tests in
tests/layout_solver/test_reconstruct.py).

* :func:`detached_image_edges` - a framebuffer edge whose tiles are not stored at the image
  edge, so edge/border addressing blends never-written texels;
* :func:`inconsistent_adjacent_tiles` - a pair skipped by the apron code as adjacent whose
  mappings disagree;
* apron blits that write into another tile's stored pixels are counted by
  :func:`~layout_solver.reconstruct.apply_aprons` (``ApronStats.overwriting``,
  ``ViewReconstruction.contested``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from ..aprons import _adjacent, apron_revision
from ..options import ApronRevision
from ..solver import SubsampledLayout, SubsampledTile, fb_bin_start
from ._types import Pair

#: the side of a stored tile that faces a framebuffer edge
Side = Literal["left", "top", "right", "bottom"]


def detached_image_edges(layout: SubsampledLayout, view: int) -> tuple[tuple[Pair, Side, int], ...]:
    """``(cell, side, gap)`` for stored tiles of ``view`` whose framebuffer-edge side is not at
    the subsampled image's edge, so that CLAMP_TO_EDGE / CLAMP_TO_BORDER at that framebuffer edge
    blend never-written texels instead (no apron is made there); ``gap`` is the distance in
    texels.

    * ``"left"``/``"top"``: the tile starts at the framebuffer's left/top edge but is a stick
      tile on that axis (``get_default_tile_pos`` tests ``stick`` before ``px == 0``), so it is
      stored end-aligned at ``start = W + fo - ceil(W / fa_eff) > 0`` (a subsampled view, or any
      view with FDM offsets, ``fo = tile_align``).
    * ``"right"``/``"bottom"``: a stick tile ends at ``W + fo`` short of ``width0``: the image
      has FDM-offset slop (``width0 = W + tile_align``) but the solver got NULL offsets
      (``fo = 0``: no offsets this pass, or a shared viewport).
    """
    if not layout.solved:
        return ()
    size0 = (layout.width0, layout.height0)
    starts: tuple[Side, Side] = ("left", "top")
    ends: tuple[Side, Side] = ("right", "bottom")
    out: list[tuple[Pair, Side, int]] = []
    for t in layout.tiles:
        if not t.visible(view) or not t.subsampled:
            continue
        r = t.stored_pos(view)
        for axis, start, end in ((0, r.x, r.x + r.w), (1, r.y, r.y + r.h)):
            b_o = layout.bin_offset(view)[axis]
            T = layout.tile_size[axis]
            if t.pos[axis] * T - b_o <= 0 and start > 0:
                out.append((t.cell, starts[axis], start))
            if (t.pos[axis] + t.extent[axis]) * T - b_o >= layout.fb_size[axis] and end < size0[axis]:
                out.append((t.cell, ends[axis], size0[axis] - end))
    return tuple(out)


def inconsistent_adjacent_tiles(layout: SubsampledLayout, view: int, revision: ApronRevision | None = None
                                ) -> tuple[tuple[Pair, Pair, int], ...]:
    """``(cell_a, cell_b, axis)`` of neighbours sharing an edge in the tile grid (``b`` right of
    ``a`` for axis 0, below for axis 1) that ``tu_calc_subsampled_aprons`` skips as adjacent in
    subsampled space although their framebuffer-to-subsampled mappings disagree along the edge
    (different ``sub - b_s / fa_eff`` or ``fa_eff`` on the other axis): LINEAR across that edge
    reads texels that belong to other framebuffer positions, and no apron repairs it.  Happens
    with a merged stick tile stored end-aligned next to unmerged neighbours (FDM offsets)."""
    if not layout.solved:
        return ()
    revision = apron_revision(layout, revision)
    T = layout.tile_size
    b_o = layout.bin_offset(view)
    tiles = [t for t in layout.tiles if t.visible(view) and t.subsampled]
    out: list[tuple[Pair, Pair, int]] = []

    def origin(t: SubsampledTile, ax: int) -> Fraction:
        bs = fb_bin_start(t, T, b_o)[ax]
        r = t.stored_pos(view)
        return (r.x, r.y)[ax] - Fraction(bs, t.effective_frag_area(view)[ax])

    for a in tiles:
        for b in tiles:
            for axis in (0, 1):
                o = 1 - axis
                if b.pos[axis] != a.pos[axis] + a.extent[axis]:
                    continue
                if not (a.pos[o] < b.pos[o] + b.extent[o] and b.pos[o] < a.pos[o] + a.extent[o]):
                    continue
                if not _adjacent(a.stored_pos(view), b.stored_pos(view), axis, revision):
                    continue
                if (origin(a, o) != origin(b, o)
                        or a.effective_frag_area(view)[o] != b.effective_frag_area(view)[o]):
                    out.append((a.cell, b.cell, axis))
    return tuple(out)
