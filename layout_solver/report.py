"""``turnip-fdm layout``: the layout pictures, the per-tile table and the interactive ``index.html``
(:mod:`layout_solver.page`)."""

from __future__ import annotations

import os
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.report import plan_table

from .aprons import tu_calc_subsampled_aprons
from .draw import Canvas, to_png, to_svg
from .metadata import sysmem_metadata
from .page import (
    JsonDoc,
    ViewPictures,
    finish_layout_page_data,
    json_parts,
    json_text,
    layout_page_base,
    offset_sweep,
    page_html,
    pictures_json,
    sysmem_page_data,
)
from .pictures import framebuffer_picture, gray_rgb, heat_rgb, heat_rgb_near, raster_picture, subsampled_picture
from .progress import Progress
from .solver import SubsampledLayout, tu_calc_subsampled

if TYPE_CHECKING:
    from .reconstruct import PictureRasters


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


def _reconstruction(plan: RenderPassPlan, layout: SubsampledLayout, view: int, workers: int | None = None
                    ) -> tuple[list[tuple[str, Canvas, str]], ViewPictures]:
    """(c): the image in memory, the reconstruction sampled through the metadata transform and
    its error against the expanded image, from the CPU reconstruction; and the same memory
    image and error heat map for the interactive page (with its colour scale).  The rasters are
    bounded (:func:`~layout_solver.reconstruct.picture_rasters`: at most 1280 pixels a side,
    larger framebuffers reduced by an integer factor, the error max-pooled); the heat map has
    the colours of the exact errors (:func:`_heat`)."""
    from .reconstruct import picture_rasters
    im = picture_rasters(plan, layout, view, workers=workers)
    lo, hi = im.value_range
    span = (hi - lo) or 1.0
    worst = im.max_error
    note = f"largest |error| {worst:.4g} (value range {span:.3g}); white = 0"
    shown = ""
    if im.factor > 1:
        shown = f", every {im.factor}th pixel shown"
        note += f"; each pixel shows the largest error of a {im.factor}x{im.factor} block"
    memory, heat = _gray(im.subsampled, lo, span), _heat(im)
    page_pictures = ViewPictures(view=view, memory=memory, error=heat, error_max=worst or 1.0,
                                 ramp=heat_rgb(np.linspace(0.0, 1.0, 64)[None, :], vmax=1.0),
                                 memory_size=(layout.width0, layout.height0), error_size=plan.scenario.framebuffer)
    canvases = (
        raster_picture(f"(c) view {view}: subsampled image in memory after the apron blits "
                       f"({layout.width0}x{layout.height0}{shown})", memory),
        raster_picture(f"(c) view {view}: sampled through the metadata transform (LINEAR, clamp to edge{shown})",
                       _gray(im.reconstructed, lo, span)),
        raster_picture(f"(c) view {view}: |subsampled - expanded| sampling error", heat, note),
    )
    return [(f"{stem}_v{view}", canvas, caption)
            for (stem, caption), canvas in zip(C_PICTURES, canvases, strict=True)], page_pictures


#: the (c) pictures of a view: (stem without ``_vN``, caption), in order
C_PICTURES = (("memory", "(c) subsampled image contents"), ("reconstruction", "(c) reconstruction"),
              ("error", "(c) error heat map"))


def _heat(im: PictureRasters) -> np.ndarray:
    """``heat_rgb(nan_to_num(exact errors))``, the same bytes, from errors known to within
    :data:`~layout_solver.reconstruct.PICTURE_SLACK` where ``im.near``: where that slack could
    move a colour (:func:`heat_rgb_near`) the reduced pixels are sampled again exactly
    (``im.exact``).  The scale's top is the exact largest error, as ``heat_rgb`` takes it from
    the exact array."""
    from .reconstruct import PICTURE_SLACK
    top = im.max_error or 1.0
    # NaN (nothing rendered) as 0 a strip at a time inside: no copy of the whole error raster
    heat, unsure = heat_rgb_near(im.error, im.near, PICTURE_SLACK, top)
    if unsure.any():
        ys, xs = np.nonzero(unsure)
        heat[ys, xs] = heat_rgb(np.nan_to_num(im.exact(ys, xs), nan=0.0)[None, :], vmax=top)[0]
    return heat


def _gray(a: np.ndarray, lo: float, span: float) -> np.ndarray:
    """Scene values to grey levels; NaN (nothing rendered there) shows as pale blue."""
    return gray_rgb(a, lo, span, (210, 225, 240))


#: views whose (c) pictures :func:`layout_files` computes at the same time where it can fork:
#: one forked child process per view (:class:`_ViewJobs`), up to one per CPU.  A view's work is
#: numpy with Python between its calls (about 1,200 blocks and blits a view): threads of one
#: process shared the GIL and used about 1.4 of 2 CPUs (issue 22); processes use both.  Where
#: it cannot fork, one view at a time in a thread, its sampling shared by :data:`THREAD_WORKERS`
VIEWS_AT_ONCE: int | None = None   # None: the CPUs
#: largest framebuffer (pixels) whose CPU reconstruction pictures (c) are drawn: the
#: reconstruction samples in bounded blocks (the expanded image a band of rows at a time), but
#: each view's child holds its subsampled float32 image and its fragments (vr4096: 164 MB a
#: process, bench/results/layout.md), and the children run at once, so larger passes get (a)
#: and (b) only, and the summary says so
MAX_RECONSTRUCTION_PIXELS = 4096 * 4096


def reconstruction_drawn(plan: RenderPassPlan) -> bool:
    """Whether :func:`layout_files` draws the (c) pictures for ``plan`` (memory bound)."""
    w, h = plan.scenario.framebuffer
    return w * h <= MAX_RECONSTRUCTION_PIXELS


def layout_files(plan: RenderPassPlan, views: Sequence[int] | None = None, *,
                 progress: Progress | None = None, reconstruction: bool = True) -> tuple[dict[str, bytes], str]:
    """Solve the subsampled layout of ``plan`` and draw, per view, (a) framebuffer bins,
    (b) the subsampled image and (c) the reconstruction and its error, as SVG and PNG, plus
    ``layout.txt`` and ``index.html``.  Returns the files (name -> bytes, nothing written yet)
    and the one-line layout summary.  (c) is drawn only up to
    :data:`MAX_RECONSTRUCTION_PIXELS` framebuffer pixels, and only with ``reconstruction``
    (``layout --no-reconstruction``: the bins and the stored image alone, for iterating on a
    density map; the summary says so).  ``progress`` (optional) is told
    ``(steps done, steps in all, step)`` after each view is drawn, each picture encoded and the
    page built (:mod:`layout_solver.progress`)."""
    # the page's offset sweep (Python: plans) and every view's (c) pictures (numpy with Python
    # between the calls) in forked child processes, while this process draws and encodes (a)
    # and (b) and builds the page's data.  Every fork happens while no other thread runs (this
    # process starts none where it forks): see _Forked
    sweep = _Forked(offset_sweep, plan)
    jobs: _ViewJobs | None = None
    try:
        _import_pillow()
        layout = tu_calc_subsampled(plan)
        views = list(range(plan.scenario.fdm_layers)) if views is None else list(views)
        draw_c = reconstruction and reconstruction_drawn(plan)
        jobs = _ViewJobs(plan, layout, views if layout.solved and draw_c else [])
        return _layout_files(plan, layout, views, progress, sweep, jobs, reconstruction)
    finally:
        # an error or a Ctrl-C ends the children still running instead of waiting for them
        sweep.cancel()
        if jobs is not None:
            jobs.cancel()


def _import_pillow() -> None:
    """Pillow's modules and its image plugins (``Image.preinit``, which the first save runs),
    imported here before the views' children are forked, so that they inherit them instead of
    importing them each (about 40 ms a process, 3 processes on vr3840); called after the sweep's
    child is forked, which has the other CPU meanwhile."""
    from PIL import Image, ImageDraw, ImageFont, PngImagePlugin  # noqa: F401

    Image.preinit()


class _Forked:
    """``fn(*args)`` (a pure function of picklable data to a picklable result) computed in a
    forked child process, its result pickled back through a pipe.  Where there is no
    ``os.fork`` or another thread runs already (forking it could deadlock the child), in a
    thread instead (as before issue 22); where the child fails in any way (its exception is not
    carried over), :meth:`result` computes it here, so an error is raised as if nothing had
    been forked.  The child writes nothing else, ends with ``os._exit`` (no cleanup of the
    parent's objects) and dies with a Ctrl-C (default SIGINT)."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.fn, self.args = fn, args
        self.pid: int | None = None
        self.fd = -1
        self.thread: Future[Any] | None = None
        if not self.can_fork():
            ex = ThreadPoolExecutor(1)
            self.thread = ex.submit(fn, *args)
            ex.shutdown(wait=False)
            return
        # SIGINT blocked around the fork: a Ctrl-C that arrives while os.fork runs its at-fork
        # hooks (logging's) would raise KeyboardInterrupt inside one, where Python prints it as
        # "Exception ignored" and goes on (seen in tests/cli/test_interrupt.py: the command
        # finished with status 0); blocked, it waits until the child is recorded here
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            r, w = os.pipe()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            raise
        try:
            pid = os.fork()
        except BaseException:   # no child (EAGAIN, ENOMEM): the error as it is, Ctrl-C as before
            os.close(r)
            os.close(w)
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            raise
        if pid == 0:   # the child
            status = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
                os.close(r)
                data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as f:
                    f.write(data)
                status = 0
            finally:
                os._exit(status)
        os.close(w)
        self.pid, self.fd = pid, r
        try:
            # a Ctrl-C that came meanwhile is raised here (pthread_sigmask runs the handlers)
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        except BaseException:
            self.cancel()
            raise

    @staticmethod
    def can_fork() -> bool:
        """Whether a :class:`_Forked` made now forks (else it runs in a thread)."""
        return hasattr(os, "fork") and hasattr(signal, "pthread_sigmask") and threading.active_count() == 1

    def result(self) -> Any:
        if self.thread is not None:
            return self.thread.result()
        if self.pid is None:
            return self.fn(*self.args)
        with os.fdopen(self.fd, "rb") as f:
            data = f.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if status != 0:
            return self.fn(*self.args)
        return pickle.loads(data)

    def cancel(self) -> None:
        """End the child if it still runs (an error or a Ctrl-C before :meth:`result`; a thread
        is left to end by itself, as an executor's running work is)."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            os.close(self.fd)
            self.pid = None


def _encode(item: tuple[str, Canvas, str]) -> tuple[bytes, bytes]:
    return to_svg(item[1]).encode("utf-8"), to_png(item[1])


#: one encoded picture: (stem, SVG, PNG, caption)
Encoded = tuple[str, bytes, bytes, str]
#: sampling threads of a view computed in this process (where :class:`_ViewJobs` cannot fork)
THREAD_WORKERS = 2


def view_pictures(plan: RenderPassPlan, layout: SubsampledLayout, view: int, workers: int | None = None
                  ) -> tuple[list[Encoded], JsonDoc]:
    """The (c) pictures of ``view`` encoded and its entry of the page's pictures
    (:func:`~layout_solver.page.pictures_json`): what a view's child process returns (bytes
    and small arrays: a cheap pickle)."""
    drawn, page_pics = _reconstruction(plan, layout, view, workers=workers)
    return [(stem, *_encode((stem, canvas, caption)), caption) for stem, canvas, caption in drawn], \
        pictures_json(page_pics)


class _ViewJobs:
    """:func:`view_pictures` of ``views``, each in a forked child (:class:`_Forked`, one
    sampling thread), at most :data:`VIEWS_AT_ONCE` (the CPUs) at a time: they start in view
    order, the next when :meth:`result` collects one (each child holds about 10 bytes per
    framebuffer pixel while it runs).  Where :class:`_Forked` would not fork, one at a time in
    a thread with :data:`THREAD_WORKERS` sampling threads (the work of issue 22's first part)."""

    def __init__(self, plan: RenderPassPlan, layout: SubsampledLayout, views: Sequence[int]) -> None:
        self.plan, self.layout = plan, layout
        self.fork = _Forked.can_fork()
        cpus = os.cpu_count() or 1
        self.at_once = max(1, min(len(views), VIEWS_AT_ONCE or cpus)) if self.fork else 1
        self.waiting = list(enumerate(views))   # (place in ``views``, view): a view may come twice
        self.running: dict[int, _Forked] = {}
        try:
            self._start()
        except BaseException:   # a Ctrl-C between two forks: the caller has no object to cancel yet
            self.cancel()
            raise

    def _start(self) -> None:
        while self.waiting and len(self.running) < self.at_once:
            i, v = self.waiting.pop(0)
            self.running[i] = _Forked(view_pictures, self.plan, self.layout, v, 1 if self.fork else THREAD_WORKERS)

    def result(self, i: int) -> tuple[list[Encoded], JsonDoc]:
        """The result of ``views[i]`` (waiting for it); then the next waiting view starts."""
        job = self.running.pop(i)
        try:
            return job.result()   # type: ignore[no-any-return]
        finally:
            self._start()

    def cancel(self) -> None:
        """End every child still running; start no other."""
        self.waiting.clear()
        for job in self.running.values():
            job.cancel()
        self.running.clear()


def _layout_files(plan: RenderPassPlan, layout: SubsampledLayout, views: list[int], progress: Progress | None,
                  sweep: _Forked, jobs: _ViewJobs, reconstruction: bool) -> tuple[dict[str, bytes], str]:
    draw_c = reconstruction and reconstruction_drawn(plan)
    steps = len(views) * (1 + (5 if layout.solved and draw_c else 2)) + 1
    done = 0

    def tick(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps, what)

    # (a) and (b) need no reconstruction: drawn and encoded here while the children compute (c)
    ab: dict[int, list[Encoded]] = {}
    outside = 0
    for v in views:
        aprons = tu_calc_subsampled_aprons(layout, v) if layout.solved else ()
        outside += sum(1 for a in aprons if a.dst.x < 0 or a.dst.y < 0 or a.dst.x + a.dst.w > layout.width0
                       or a.dst.y + a.dst.h > layout.height0)
        ab[v] = [(stem, *_encode((stem, canvas, caption)), caption) for stem, canvas, caption in (
            (f"framebuffer_v{v}", framebuffer_picture(plan, v), "(a) framebuffer bins"),
            (f"subsampled_v{v}", subsampled_picture(layout, v, aprons), "(b) subsampled image"))]
    summary = layout_summary(layout)
    if outside:
        summary += (f"; {outside} apron blit(s) write outside the {layout.width0}x{layout.height0} image "
                    f"(blit_subsampled_apron asserts; see docs/findings.md)")
    if layout.solved and not reconstruction:
        summary += "; reconstruction pictures (c) not drawn (--no-reconstruction)"
    elif layout.solved and not draw_c:
        w, h = plan.scenario.framebuffer
        summary += (f"; reconstruction pictures (c) not drawn: {w}x{h} exceeds the "
                    f"{MAX_RECONSTRUCTION_PIXELS}-pixel limit of the CPU reconstruction")
    ltable = _layout_table(layout)
    # the page's data but the sweep and the (c) pictures, made while the children work
    statics: list[tuple[str, str]] = []
    for v in views:
        statics += [(stem, caption) for stem, _, _, caption in ab[v]]
        if layout.solved and draw_c:
            statics += [(f"{stem}_v{v}", caption) for stem, caption in C_PICTURES]
    page = layout_page_base(plan, layout, views, summary, statics)
    # and in JSON, with the sweep (its child ends before the views' do), for the bound and the
    # page: only the (c) pictures are left to encode after the last view's child ends
    sweep_doc = sweep.result()
    parts = json_parts(page)
    parts["sweep"] = (sweep_doc, json_text(sweep_doc))
    pictures: list[Encoded] = []
    page_pictures: list[JsonDoc] = []
    for i, v in enumerate(views):
        pictures += ab[v]
        if layout.solved and draw_c:
            drawn, page_pics = jobs.result(i)
            pictures += drawn
            page_pictures.append(page_pics)
        tick(f"view {v} drawn")
    files: dict[str, bytes] = {}
    for stem, svg, png, _caption in pictures:
        files[stem + ".svg"], files[stem + ".png"] = svg, png
        tick(stem)
    if statics != [(stem, caption) for stem, _, _, caption in pictures]:   # never: C_PICTURES names them
        raise AssertionError("the (c) pictures are not the ones C_PICTURES names")
    files["layout.txt"] = (summary + "\n\n" + ltable + "\n").encode("utf-8")
    files["index.html"] = page_html(finish_layout_page_data(page, plan, page_pictures, sweep=sweep_doc, parts=parts),
                                    parts).encode("utf-8")
    tick("index.html")
    return files, summary


def sysmem_layout_files(plan: SysmemPlan) -> tuple[dict[str, bytes], str]:
    """``layout.txt`` and ``index.html`` for a pass turnip renders in sysmem: no bin is laid out;
    each layer gets the dummy metadata of ``tu6_sysmem_render_end``.  Returns the files and the
    one-line summary."""
    metas = sysmem_metadata(plan)
    summary = (f"subsampled layout: none - turnip renders this pass in sysmem ({plan.sysmem_reason}); "
               f"every layer gets dummy metadata: header scale 1, offset 0, one bin scaling by "
               f"{float(metas[0].bins[0].scale[0]):.9g} x {float(metas[0].bins[0].scale[1]):.9g}")
    text = summary + "\n\n" + plan_table(plan) + "\n"
    page = page_html(sysmem_page_data(plan, summary))
    return {"layout.txt": text.encode("utf-8"), "index.html": page.encode("utf-8")}, summary


def _layout_table(layout: SubsampledLayout) -> str:
    """One line per stored bin and view; the column names are the keys of ``layout --json``."""
    rows = [["pos", "root_cell", "extent", "view", "subsampled_pos", "effective_frag_area", "subsampled",
             "subsampled_border", "fast_store"]]
    for t in layout.tiles:
        for v in range(len(t.subsampled_pos)):
            r = t.subsampled_pos[v]
            if r is None:
                continue
            fa = t.effective_frag_area(v)
            rows.append([f"{t.pos[0]},{t.pos[1]}", f"{t.cell[0]},{t.cell[1]}", f"{t.extent[0]}x{t.extent[1]}", str(v),
                         f"{r.x},{r.y},{r.w},{r.h}", f"{fa[0]}x{fa[1]}", "yes" if t.is_subsampled(v) else "no",
                         "yes" if t.subsampled_border else "no", "yes" if t.fast_store else "no"])
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join(" ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
