"""``turnip-fdm box plan``: the driver's per-bin programming beside the model's, one row per bin."""

from __future__ import annotations

from typing import Any

from . import registers as R
from .check import Outcome


def _ws(ws: Any) -> str:
    (x0, y0), (x1, y1) = ws
    return f"{x0},{y0}-{x1},{y1}"


def _xy(p: Any) -> str:
    return f"{p[0]},{p[1]}"


def _wh(p: Any) -> str:
    return f"{p[0]}x{p[1]}"


def _fs(p: Any) -> str:
    return "-" if p is None else f"{p[0][0]}x{p[0][1]}@{p[1][0]:g},{p[1][1]:g}"


def _fov(f: Any) -> str:
    if not f:
        return "-"
    return ("on " if f["binscaleen"] else "off ") + "/".join(f"{x}{y}" for x, y in zip(f["xscale"][:2],
                                                                                     f["yscale"][:2], strict=True))


def side_by_side(o: Outcome) -> str:
    """The table; differing values are marked ``*``."""
    it = o.item
    lines = [f"{it.name} on {it.gpu}: {o.status}" + (f" ({o.why})" if o.why else "")]
    if o.driver is None or o.plan is None:
        return "\n".join(lines)
    d, p = o.driver, o.plan
    lines.append(f"render mode   driver {d.render_mode:<8} model {p.render_mode}")
    if p.render_mode == "gmem" and d.render_mode == "gmem":
        lines.append(f"tile size     driver {d.tile_size}  model {tuple(p.tiling.tile_size)}")
        lines.append(f"binning pass  driver {d.binning is not None}  model {p.binning_pass}")
        bad = {(x.bin, x.field) for x in o.differences}
        lines.append(f"{'bin':>4} {'side':<6} {'window_scissor':<20} {'common_bin_start':<16} {'bin_size':<10} "
                     f"{'lrz':<4} {'foveat':<12} {'view0 fa@o':<16} slot0 viewport (x,w,y,h)")
        for i in range(max(len(d.bins), len(p.tiles))):
            mark = "*" if any(b == i for b, _ in bad) else " "
            if i < len(d.bins):
                b = d.bins[i]
                vp = [R.f32(v) for v in b.slots[0].viewport_regs[:4]] if b.slots else []
                vps = f"{vp[0] - vp[1]:g},{2 * vp[1]:g},{vp[2] - vp[3]:g},{2 * vp[3]:g}" if vp else "-"
                lines.append(f"{i:>4}{mark}{'driver':<6} {_ws(b.window_scissor):<20} "
                             f"{_xy(b.window_offset):<16} {_wh(b.bin_size):<10} "
                             f"{'off' if b.force_lrz_dis or not b.lrz_enable else 'on':<4} {_fov(b.foveat):<12} "
                             f"{_fs(b.fs_params[0] if b.fs_params else None):<16} {vps}")
            if i < len(p.tiles):
                t = p.tiles[i]
                ts = p.tiling.tile_size
                s0 = t.slots[0].viewport if t.slots else None
                fs0 = (t.fs_params[0].frag_size, t.fs_params[0].frag_offset) if t.fs_params else None
                f = {"binscaleen": t.foveat.binscaleen, "xscale": list(t.foveat.xscale),
                     "yscale": list(t.foveat.yscale)}
                lines.append(f"{i:>4}{mark}{'model':<6} {_ws(t.window_scissor):<20} "
                             f"{_xy(t.common_bin_start):<16} "
                             f"{_wh((ts[0] * t.gmem_extent[0], ts[1] * t.gmem_extent[1])):<10} "
                             f"{'on' if t.lrz else 'off':<4} {_fov(f):<12} "
                             f"{_fs(fs0):<16} "
                             + (f"{s0[0]:g},{s0[2]:g},{s0[1]:g},{s0[3]:g}" if s0 else "-"))
    if o.subsampled is not None:
        lines.extend(_subsampled(o))
    for x in o.differences:
        lines.append("  " + x.line())
    return "\n".join(lines)


def _subsampled(o: Outcome) -> list[str]:
    """A pass with a subsampled attachment: per bin the store turnip ran (fast: the resolve
    scissor @ RB_RESOLVE_WINDOW_OFFSET; a2d: destination <- source), then the metadata writes and
    the apron blit lists, beside the model's (turnip_box.subsampled)."""
    from layout_solver.subsampled_pass import subsampled_pass

    d = o.subsampled
    sp = subsampled_pass(o.plan) if o.plan is not None else None
    out = ["subsampled: per bin the store (fast: resolve scissor @ window offset; a2d: dst <- src)"]
    for i, b in enumerate(d.bins):
        drv = [f"fast {_ws(r[0])} @ {_xy(r[1])}" for r in b.resolve]
        drv += [f"a2d {_ws(a[0])} <- {_ws(a[1])}" for a in b.a2d]
        out.append(f"{i:>4} driver {'; '.join(sorted(set(drv))) or '-'}")
        if sp is not None and i < len(sp.stores):
            fast = sp.fast_store[i] if i < len(sp.fast_store) else False
            mod = [f"fast {_ws(s.resolve_scissor)} @ {_xy(s.resolve_window_offset)}" if fast
                   else f"a2d {_ws(s.store_dst)} <- {_ws(s.store_src)}" for s in sp.stores[i]]
            out.append(f"{i:>4} model  {'; '.join(sorted(set(mod)))}")
    blits = sum(len(a) for a in d.aprons)
    out.append(f"metadata writes driver {len(d.metadata)}, model {len(sp.metadata) if sp else '-'}; apron lists "
               f"driver {len(d.aprons)} ({blits} blits), model "
               + (f"{len(sp.aprons)} ({sum(len(a) for a in sp.aprons)} blits)" if sp else "-"))
    return out
