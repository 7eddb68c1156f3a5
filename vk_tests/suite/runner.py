"""Run a selection of cases: one validated device, one verdict per case, a bundle on disk.

Rules (``docs/device-suite.md``):

* The device is opened once, with the Khronos validation layer on, and only when a selected
  case needs one.  When it cannot be opened every device case is NotSupported with the reason;
  nothing passes without running.
* Per case: ``run`` then ``judge``.  :class:`turnip_base.errors.NotSupported` from either is
  NotSupported with its reason; any other exception (a lost device, out of memory, a bug of
  the case) is Fail with the exception's one line, and the run goes on; after a lost device
  (``VkErrorDeviceLost``) the device is closed and opened again for the next case.  Any message
  of the validation layer recorded while the case ran fails it.
* Ctrl-C stops the run: the cases not reached are recorded as not run, and the results so far
  are still written (``summary.json``, ``junit.xml``).
* Each case is written to the bundle as soon as it ends (all-or-nothing per case).
* A device may run and judge the cases itself: when the opened device has ``run_case(case)``
  (returning the :class:`CaseOutput`, raising like ``run``) and ``judge_case(case, scene,
  output)``, those replace ``case.run(device, scene)`` and ``case.judge(scene, output)`` for the
  cases that need a device.  The box (``vk_tests.box.device``) is such a device: it runs each case
  on turnip in a process of its own and judges the recorded command stream.  Such an output says
  how it was judged in ``info["judged_on"]`` (``"stream"``), and :func:`recheck` judges it again
  with the judge given for that kind.
* The device selector is checked before anything runs (:func:`check_selector`, called by
  ``vk run``): one that names no device of this machine is refused (ScenarioError); a machine
  without Vulkan cannot check it, and the run goes on to NotSupported device cases.
* A run that compared nothing (no Pass, QualityWarning or StreamAgree: every case NotSupported or
  not run) says so (:attr:`SuiteResult.nothing_compared`); ``vk run`` then exits
  :data:`turnip_base.errors.EXIT_NOTHING_COMPARED`, never 0.  Likewise :func:`recheck`: a check
  that judged nothing again (:func:`nothing_rejudged`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TextIO

import attrs

from turnip_base.errors import NotSupported, ScenarioError
from turnip_base.harness import DEVICE_ENV, list_devices, open_device, parse_selector, select_device

from . import bundle
from .bundle import CaseRecord
from .cases import FAILING, Case, CaseOutput, Scene, Verdict, jsonable
from .junit import junit_xml

#: opens the device of a run: ``opener(selector)`` -> a turnip_base.harness.Vulkan (or a stand-in with
#: ``messages``, ``info``, ``vk`` and ``close()``); raises NotSupported when it cannot
Opener = Callable[[Any], Any]
#: the field named by refusals about the output directory
OUT_FIELD = "--out"
#: the field named by refusals about the device selector
DEVICE_FIELD = "--device"


def open_validated(selector: Any) -> Any:
    """:func:`turnip_base.harness.open_device` with the validation layer on."""
    return open_device(selector, validation=True)


def device_names() -> list[str] | None:
    """The names of this machine's Vulkan devices (:func:`turnip_base.harness.list_devices`);
    None when it has no Vulkan (no binding, loader or driver: nothing to check a selector against)."""
    try:
        return list_devices()
    except NotSupported:
        return None
    except Exception as e:
        vk = sys.modules.get("vulkan")
        if vk is not None and isinstance(e, getattr(vk, "VkError", ())):  # the instance could not be created
            return None
        raise


def check_selector(selector: Any, field: str = DEVICE_FIELD) -> None:
    """Refuse (:class:`ScenarioError` on ``field``) a device selector that names no device of this
    machine: ``selector``, else ``$TURNIP_FDM_DEVICE``; an index or a name substring, as
    :func:`turnip_base.harness.select_device` reads it.  No selector (the first device) and a
    machine without Vulkan or without a device pass: the run's device cases are NotSupported then,
    with the reason.  The check does not depend on the selection: a selector is refused even when
    no selected case needs a device."""
    from_env = selector is None
    sel = parse_selector(os.environ.get(DEVICE_ENV) if from_env else selector)
    if sel is None:
        return
    names = device_names()
    if not names:
        return
    try:
        select_device(names, sel)
    except NotSupported:
        what = f"device index {sel} is out of range" if isinstance(sel, int) else f"no device name contains {sel!r}"
        source = f" (${DEVICE_ENV}, the default of {field})" if from_env else ""
        listed = ", ".join(f"{i} {n!r}" for i, n in enumerate(names))
        raise ScenarioError(field, f"{what}{source}; the devices (an index or a name substring): {listed}; "
                                   f"or box:GPU") from None


def one_line(e: BaseException) -> str:
    """``Type: message`` of an exception, on one line (``Type`` alone when it has no text)."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


#: a device's own judge (``judge_case``) or a judge of :func:`recheck`: (case, scene, output) -> verdict
DeviceJudge = Callable[[Case, Scene, CaseOutput], Verdict]


def judge_safely(case: Case, scene: Scene, output: CaseOutput, judge: DeviceJudge | None = None) -> Verdict:
    """``case.judge(scene, output)`` (``judge(case, scene, output)`` when given); NotSupported and
    exceptions become verdicts."""
    try:
        return judge(case, scene, output) if judge is not None else case.judge(scene, output)
    except NotSupported as e:
        return Verdict(status="NotSupported", message=str(e))
    except Exception as e:  # noqa: BLE001 - a judge that raises fails its case, not the run
        return Verdict(status="Fail", message=f"the judge raised {one_line(e)}")


def conclude(verdict: Verdict, validation: Sequence[str]) -> Verdict:
    """The case's verdict: ``verdict``, unless the validation layer said something."""
    if not validation:
        return verdict
    first = " ".join(validation[0].split())
    return Verdict(status="Fail", message=f"{len(validation)} validation message(s) (the case alone: "
                                          f"{verdict.status}); first: {first}", mismatches=verdict.mismatches)


def _is_device_lost(ctx: Any, e: Exception) -> bool:
    lost = getattr(getattr(ctx, "vk", None), "VkErrorDeviceLost", None)
    return isinstance(lost, type) and isinstance(e, lost)


def _close_quietly(ctx: Any) -> None:
    try:
        ctx.close()
    except Exception:  # noqa: BLE001, S110 - a lost device cannot always be destroyed cleanly
        pass


class _Device:
    """The run's device: opened once, reopened after a loss; ``reason`` says why there is none."""

    def __init__(self, selector: Any, opener: Opener) -> None:
        self.selector, self.opener = selector, opener
        self.ctx: Any = None
        self.reason = ""
        self.description: dict[str, Any] = {}
        self._open()

    def _open(self) -> None:
        try:
            self.ctx = self.opener(self.selector)
        except NotSupported as e:
            self.ctx, self.reason = None, str(e)
            self.description = {"opened": False, "reason": self.reason}
            return
        info = self.ctx.info
        self.description = {"opened": True, "description": info.describe(), "info": jsonable(info)}

    def reopen(self, after: str) -> None:
        _close_quietly(self.ctx)
        self.ctx = None
        self._open()
        if self.ctx is None:
            self.reason = f"the device was lost in {after} and could not be opened again: {self.reason}"

    def close(self) -> None:
        if self.ctx is not None:
            _close_quietly(self.ctx)
            self.ctx = None


@attrs.frozen(kw_only=True)
class SuiteResult:
    """The records of a run, in case order (cases not reached have no verdict)."""

    device: Mapping[str, Any] | None
    records: tuple[CaseRecord, ...]
    interrupted: bool
    out_dir: str | None

    @property
    def counts(self) -> dict[str, int]:
        return bundle.counts(self.records)

    @property
    def closing_line(self) -> str:
        return bundle.closing_line(self.counts)

    @property
    def failed(self) -> bool:
        return any(self.counts[s] > 0 for s in FAILING)

    @property
    def compared(self) -> int:
        """How many cases were compared (Pass, QualityWarning, StreamAgree)."""
        return bundle.compared(self.counts)

    @property
    def where(self) -> str:
        """``on NAME`` (the device opened), ``with no device (REASON)``, or ``on the host`` (no
        selected case needed a device)."""
        d = self.device
        if d is None:
            return "on the host (no selected case needs a device)"
        if not d.get("opened"):
            return f"with no device ({d.get('reason', '')})"
        info = d.get("info")
        name = info.get("name") if isinstance(info, Mapping) else None
        return f"on {name or d.get('description', '')}"

    @property
    def nothing_compared(self) -> str | None:
        """The line saying that nothing was compared (:func:`bundle.nothing_compared_line`); None
        when some case was."""
        return None if self.compared else bundle.nothing_compared_line(self.counts, self.where)


def _record(case: Case, device: Mapping[str, Any] | None, verdict: Verdict | None) -> CaseRecord:
    return CaseRecord(name=case.name, backend=case.backend, description=case.description,
                      needs_device=case.needs_device, scene=case.scene, device=device, verdict=verdict)


def _run_case(case: Case, dev: _Device | None) -> tuple[CaseRecord, CaseOutput | None]:
    """Run and judge one case: its record (without images) and the output to store."""
    device = dev.description if (dev is not None and case.needs_device) else None
    ctx = dev.ctx if (dev is not None and case.needs_device) else None
    if dev is not None and case.needs_device and ctx is None:
        return _record(case, device, Verdict(status="NotSupported", message=f"no device: {dev.reason}")), None
    mark = len(ctx.messages) if ctx is not None else 0
    start = time.perf_counter()
    output: CaseOutput | None = None
    lost = False
    run_case = getattr(ctx, "run_case", None) if ctx is not None else None
    judge: DeviceJudge | None = getattr(ctx, "judge_case", None) if ctx is not None else None
    try:
        out = run_case(case) if callable(run_case) else case.run(ctx, case.scene)
        bundle.check_output(out)
        output = out
    except NotSupported as e:
        verdict = Verdict(status="NotSupported", message=str(e))
    except Exception as e:  # noqa: BLE001 - one case's failure never ends the run
        lost = _is_device_lost(ctx, e)
        verdict = Verdict(status="Fail", message=one_line(e) + (" (device lost; opened again for the next case)"
                                                                 if lost else ""))
    else:
        verdict = judge_safely(case, case.scene, output, judge)
    seconds = time.perf_counter() - start
    validation = tuple(ctx.messages[mark:]) if ctx is not None else ()
    if lost and dev is not None:
        dev.reopen(case.name)
    rec = attrs.evolve(_record(case, device, conclude(verdict, validation)), ran=output is not None,
                       validation=validation, seconds=seconds)
    return rec, output


def _store(rec: CaseRecord, output: CaseOutput | None, out_dir: str | None, large_images: bool) -> CaseRecord:
    try:
        stored, files = bundle.case_files(rec, output, large_images)
    except (TypeError, ValueError) as e:  # a verdict the bundle cannot hold (mismatches not JSON-able)
        bad = Verdict(status="Fail", message=f"the result cannot be stored: {one_line(e)}")
        stored, files = bundle.case_files(attrs.evolve(rec, verdict=bad, ran=False), None, large_images)
    if out_dir is not None:
        bundle.write_case(OUT_FIELD, out_dir, stored.name, files)
    return stored


def _draw(stream: TextIO, done: int, total: int, name: str) -> None:
    width = shutil.get_terminal_size((80, 24)).columns
    filled = 20 * done // max(total, 1)
    line = f"[{'#' * filled}{'.' * (20 - filled)}] {done + 1}/{total} {name}"
    stream.write("\r" + line[: max(20, width - 1)] + "\x1b[K")
    stream.flush()


def run_suite(cases: Sequence[Case], device_selector: Any = None, out_dir: str | None = None,
              progress: TextIO | None = None, *, large_images: bool = True, opener: Opener | None = None,
              selection: Mapping[str, Any] | None = None) -> SuiteResult:
    """Run ``cases`` in order (see the module docstring) and write the bundle to ``out_dir``
    (None: nothing written).  ``progress``: a terminal stream for a one-line progress bar.
    ``opener`` opens the device (default :func:`open_validated`); ``selection`` is recorded in
    the summary."""
    if out_dir is not None:
        bundle.prepare(OUT_FIELD, out_dir)
    dev: _Device | None = None
    records: list[CaseRecord] = []
    interrupted = False
    try:
        if any(c.needs_device for c in cases):
            dev = _Device(device_selector, opener or open_validated)
        for i, case in enumerate(cases):
            if progress is not None:
                _draw(progress, i, len(cases), case.name)
            rec, output = _run_case(case, dev)
            records.append(_store(rec, output, out_dir, large_images))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if progress is not None:
            progress.write("\r\x1b[K")
            progress.flush()
        if dev is not None:
            dev.close()
    device = dev.description if dev is not None else None
    for case in cases[len(records):]:
        records.append(_store(_record(case, device if case.needs_device else None, None), None, out_dir,
                              large_images))
    if out_dir is not None:
        bundle.write_summary(OUT_FIELD, out_dir, device, records, interrupted, selection or {},
                             junit_xml(records, device=device))
    return SuiteResult(device=device, records=tuple(records), interrupted=interrupted, out_dir=out_dir)


# ---- vk check: the stored verdicts judged again ----------------------------------------------

#: how a stored case compares: the same verdict, a different one, a case this version does not
#: have, or one that cannot be judged again (not run, an image left out of the bundle)
CheckOutcome = Literal["same", "DIFFERS", "unknown", "unchecked"]


@attrs.frozen(kw_only=True)
class Recheck:
    name: str
    outcome: CheckOutcome
    stored: Verdict | None
    now: Verdict | None
    note: str = ""
    #: a judge of this version ran on the stored output (``now`` is its verdict)
    judged: bool = False

    @property
    def compared(self) -> bool:
        """Judged again, and the judge compared something (its verdict is not NotSupported)."""
        return self.judged and self.now is not None and self.now.status != "NotSupported"


def _same(a: Verdict | None, b: Verdict | None) -> bool:
    return json.dumps(bundle.verdict_json(a), sort_keys=True) == json.dumps(bundle.verdict_json(b), sort_keys=True)


def recheck(stored: bundle.Bundle, cases: Mapping[str, Case],
            judges: Mapping[str, DeviceJudge] | None = None) -> list[Recheck]:
    """Every case of ``stored`` judged again with this version's judge (looked up in
    ``cases`` by name) on the stored scene, images and info, with the stored validation
    messages; a case whose run raised (NotSupported, an exception) is re-derived as what it
    recorded, since there is nothing to judge.  An output judged by its device
    (``info["judged_on"]``, e.g. ``"stream"``) is judged by ``judges[that]``; without one it
    is unchecked."""
    out = []
    for rec in stored.records:
        case = cases.get(rec.name)
        omitted = [i.name for i in rec.images if i.omitted]
        judged_on = rec.info.get("judged_on") if rec.ran else None
        judge = (judges or {}).get(str(judged_on)) if judged_on is not None else None
        if rec.verdict is None:
            out.append(Recheck(name=rec.name, outcome="unchecked", stored=None, now=None, note="not run"))
        elif case is None:
            out.append(Recheck(name=rec.name, outcome="unknown", stored=rec.verdict, now=None,
                               note="not a case of this version"))
        elif not rec.ran:
            out.append(Recheck(name=rec.name, outcome="same", stored=rec.verdict, now=rec.verdict,
                               note="the run itself ended the case; nothing to judge"))
        elif omitted:
            out.append(Recheck(name=rec.name, outcome="unchecked", stored=rec.verdict, now=None,
                               note=f"image {omitted[0]!r} was left out of the bundle"))
        elif judged_on is not None and judge is None:
            out.append(Recheck(name=rec.name, outcome="unchecked", stored=rec.verdict, now=None,
                               note=f"judged on the {judged_on}: no judge of that kind was given"))
        else:
            now = conclude(judge_safely(case, rec.scene, bundle.load_output(stored, rec), judge), rec.validation)
            out.append(Recheck(name=rec.name, outcome="same" if _same(now, rec.verdict) else "DIFFERS",
                               stored=rec.verdict, now=now, judged=True))
    return out


def nothing_rejudged(results: Sequence[Recheck]) -> str | None:
    """The line saying that :func:`recheck` compared nothing again (``nothing re-judged: 0 of N
    stored case(s) judged again (...)``, why for each); None when some case was."""
    if any(r.compared for r in results):
        return None
    if not results:
        return "nothing re-judged: the bundle holds no case"
    why = {"with nothing to judge (the run ended the case)": sum(r.outcome == "same" and not r.judged for r in results),
           "not supported": sum(r.judged for r in results),
           "unknown": sum(r.outcome == "unknown" for r in results),
           "unchecked": sum(r.outcome == "unchecked" for r in results)}
    return (f"nothing re-judged: 0 of {len(results)} stored case(s) judged again ("
            + ", ".join(f"{n} {k}" for k, n in why.items() if n) + ")")
