"""``turnip-fdm layout``: the layout pictures, the per-tile table and an index.html."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.report import plan_table

from .aprons import tu_calc_subsampled_aprons
from .draw import Canvas, to_png, to_svg
from .metadata import sysmem_metadata
from .pictures import framebuffer_picture, heat_rgb, raster_picture, subsampled_picture, to_rgb8
from .solver import SubsampledLayout, tu_calc_subsampled


def layout_summary(layout: SubsampledLayout) -> str:
    if not layout.solved:
        n = layout.tile_count[0] * layout.tile_count[1]
        return (f"subsampled layout: not solved - {layout.tile_count[0]}x{layout.tile_count[1]} = {n} bins exceed "
                f"TU_SUBSAMPLED_MAX_BINS (512); turnip stores every bin full resolution at its framebuffer position "
                f"and writes single-bin fallback metadata")
    shifts = sum(1 for e in layout.log if e.kind == "shift")
    unsub = sum(1 for e in layout.log if e.kind == "unsubsample")
    border = sum(1 for t in layout.tiles if t.subsampled_border)
    return (f"subsampled layout: image {layout.width0}x{layout.height0}, {len(layout.tiles)} stored bins, "
            f"{shifts} shifts, {unsub} un-subsample steps, {border} border (stick) tiles")


def _reconstruction(plan: RenderPassPlan, layout: SubsampledLayout, view: int) -> list[tuple[str, Canvas, str]]:
    """(c): the image in memory, the reconstruction sampled through the metadata transform and
    its error against the expanded image, from the CPU reconstruction."""
    from .reconstruct import reconstruction_images
    im = reconstruction_images(plan, layout, view)
    lo, hi = float(np.nanmin(im.scene)), float(np.nanmax(im.scene))
    span = (hi - lo) or 1.0
    err = np.nan_to_num(im.error, nan=0.0)
    worst = float(err.max())
    note = f"largest |error| {worst:.4g} (scene range {span:.3g}); white = 0"
    return [
        (f"memory_v{view}", raster_picture(f"(c) view {view}: subsampled image in memory after the apron blits "
                                           f"({layout.width0}x{layout.height0})", _gray(im.subsampled, lo, span)),
         "(c) subsampled image contents"),
        (f"reconstruction_v{view}", raster_picture(f"(c) view {view}: sampled through the metadata transform "
                                                   f"(LINEAR, clamp to edge)", _gray(im.reconstructed, lo, span)),
         "(c) reconstruction"),
        (f"error_v{view}", raster_picture(f"(c) view {view}: |subsampled - expanded| sampling error", heat_rgb(err),
                                          note), "(c) error heat map"),
    ]


def _gray(a: np.ndarray, lo: float, span: float) -> np.ndarray:
    """Scene values to grey levels; NaN (nothing rendered there) shows as pale blue."""
    a = np.asarray(a, dtype=np.float64)
    g = to_rgb8((np.nan_to_num(a, nan=lo) - lo) / span)
    g[np.isnan(a)] = (210, 225, 240)
    return g


#: largest framebuffer (pixels) whose CPU reconstruction pictures (c) are drawn: the
#: reconstruction holds several whole-image float64 arrays per view (the 1920x1920 demo peaks
#: near 1 GB, the bound), so larger passes get (a) and (b) only, and the summary says so
MAX_RECONSTRUCTION_PIXELS = 1920 * 1920


def reconstruction_drawn(plan: RenderPassPlan) -> bool:
    """Whether :func:`layout_files` draws the (c) pictures for ``plan`` (memory bound)."""
    w, h = plan.scenario.framebuffer
    return w * h <= MAX_RECONSTRUCTION_PIXELS


def layout_files(plan: RenderPassPlan, views: Sequence[int] | None = None) -> tuple[dict[str, bytes], str]:
    """Solve the subsampled layout of ``plan`` and draw, per view, (a) framebuffer bins,
    (b) the subsampled image and (c) the reconstruction and its error, as SVG and PNG, plus
    ``layout.txt`` and ``index.html``.  Returns the files (name -> bytes, nothing written yet)
    and the one-line layout summary.  (c) is drawn only up to
    :data:`MAX_RECONSTRUCTION_PIXELS` framebuffer pixels."""
    layout = tu_calc_subsampled(plan)
    draw_c = reconstruction_drawn(plan)
    views = list(range(plan.scenario.fdm_layers)) if views is None else list(views)
    pictures: list[tuple[str, Canvas, str]] = []
    outside = 0
    for v in views:
        aprons = tu_calc_subsampled_aprons(layout, v) if layout.solved else ()
        outside += sum(1 for a in aprons if a.dst.x < 0 or a.dst.y < 0 or a.dst.x + a.dst.w > layout.width0
                       or a.dst.y + a.dst.h > layout.height0)
        pictures.append((f"framebuffer_v{v}", framebuffer_picture(plan, v), "(a) framebuffer bins"))
        pictures.append((f"subsampled_v{v}", subsampled_picture(layout, v, aprons), "(b) subsampled image"))
        if layout.solved and draw_c:
            pictures += _reconstruction(plan, layout, v)
    table = plan_table(plan)
    summary = layout_summary(layout)
    if outside:
        summary += (f"; {outside} apron blit(s) write outside the {layout.width0}x{layout.height0} image "
                    f"(blit_subsampled_apron asserts; see docs/findings.md)")
    if layout.solved and not draw_c:
        w, h = plan.scenario.framebuffer
        summary += (f"; reconstruction pictures (c) not drawn: {w}x{h} exceeds the "
                    f"{MAX_RECONSTRUCTION_PIXELS}-pixel limit of the CPU reconstruction")
    files: dict[str, bytes] = {}
    rows: list[tuple[str, str]] = []
    for stem, canvas, caption in pictures:
        files[stem + ".svg"] = to_svg(canvas).encode("utf-8")
        files[stem + ".png"] = to_png(canvas)
        rows.append((stem, caption))
    ltable = _layout_table(layout)
    files["layout.txt"] = (summary + "\n\n" + ltable + "\n").encode("utf-8")
    files["index.html"] = _html(plan, summary, table, ltable, rows).encode("utf-8")
    return files, summary


def sysmem_layout_files(plan: SysmemPlan) -> tuple[dict[str, bytes], str]:
    """``layout.txt`` and ``index.html`` for a pass turnip renders in sysmem: no bin is laid out;
    each layer gets the dummy metadata of ``tu6_sysmem_render_end``.  Returns the files and the
    one-line summary."""
    sc = plan.scenario
    metas = sysmem_metadata(plan)
    summary = (f"subsampled layout: none - turnip renders this pass in sysmem ({plan.sysmem_reason}); "
               f"every layer gets dummy metadata: header scale 1, offset 0, one bin scaling by "
               f"{float(metas[0].bins[0].scale[0]):.9g} x {float(metas[0].bins[0].scale[1]):.9g}")
    table = plan_table(plan)
    text = summary + "\n"
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>turnip-fdm: {html.escape(sc.name)}</title></head>
<body>
<h1>{html.escape(sc.name)}: {html.escape(sc.gpu.name)}, {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s)</h1>
<p>{html.escape(summary)}</p>
<h2>Plan</h2>
<pre>{html.escape(table)}</pre>
</body></html>
"""
    return {"layout.txt": text.encode("utf-8"), "index.html": page.encode("utf-8")}, summary


def _layout_table(layout: SubsampledLayout) -> str:
    lines = [f"{'cell':>7} {'pos':>7} {'ext':>4} {'view':>4} {'subsampled_pos (x,y,w,h)':>26} {'fa_eff':>6} "
             f"{'sub':>3} {'border':>6} {'fast':>4}"]
    for t in layout.tiles:
        for v in range(len(t.subsampled_pos)):
            r = t.subsampled_pos[v]
            if r is None:
                continue
            fa = t.effective_frag_area(v)
            lines.append(f"{t.cell[0]:>3},{t.cell[1]:<3} {t.pos[0]:>3},{t.pos[1]:<3} {t.extent[0]}x{t.extent[1]:<2} "
                         f"{v:>4} {f'{r.x},{r.y},{r.w},{r.h}':>26} {f'{fa[0]}x{fa[1]}':>6} "
                         f"{'yes' if t.is_subsampled(v) else 'no':>3} {'yes' if t.subsampled_border else 'no':>6} "
                         f"{'yes' if t.fast_store else 'no':>4}")
    return "\n".join(lines)


def _html(plan: RenderPassPlan, summary: str, table: str, ltable: str, rows: Sequence[tuple[str, str]]) -> str:
    sc = plan.scenario
    figs = "\n".join(
        f'<figure><a href="{stem}.svg"><img src="{stem}.png" alt="{html.escape(caption)}"></a>'
        f'<figcaption>{html.escape(caption)} — <a href="{stem}.svg">SVG</a> · <a href="{stem}.png">PNG</a>'
        f'</figcaption></figure>' for stem, caption in rows)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>turnip-fdm: {html.escape(sc.name)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #111; }}
figure {{ display: inline-block; margin: 0 1em 1em 0; vertical-align: top; }}
img {{ max-width: 100%; border: 1px solid #ccc; }}
pre {{ font-size: 12px; background: #f6f6f6; padding: 0.8em; overflow-x: auto; }}
</style></head>
<body>
<h1>{html.escape(sc.name)}: {html.escape(sc.gpu.name)}, {sc.framebuffer[0]}x{sc.framebuffer[1]}, {sc.views} view(s)</h1>
<p>{html.escape(summary)}</p>
{figs}
<h2>Per-tile plan (walk order)</h2>
<pre>{html.escape(table)}</pre>
<h2>Subsampled layout</h2>
<pre>{html.escape(ltable)}</pre>
</body></html>
"""
