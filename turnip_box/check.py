"""``turnip-fdm box check``: every scenario through turnip and through the model, compared.

The driver side runs in box processes (:mod:`turnip_box.record`), the model side in the calling
process or in workers forked from it, so a monkeypatched model is the one compared.

* **Chunks.**  The items (a scenario on a GPU) are grouped by what a box process is started with
  (the GPU id and the ``TU_DEBUG`` flags) and cut, in item order, into chunks of at most
  :data:`CHUNK` items.  A chunk is recorded by one box process (a crash of turnip makes its job an
  error and a new process takes the rest) and then judged; its outcomes depend on nothing else,
  so ``--jobs 1`` and ``--jobs N`` give the same verdicts.
* **Workers.**  ``jobs = 1`` runs the chunks one after the other in this process; ``jobs > 1``
  runs them in ``jobs`` workers forked from this process (each records, then judges: one core
  at a time), and :func:`check_iter` yields the outcomes as chunks finish.
* **Shards.**  :func:`shard` takes every N-th item (``--shard K/N``, CI's ``CI_NODE_INDEX`` /
  ``CI_NODE_TOTAL``): the shards of a run partition it.

Each item ends in one :class:`Outcome`, whose status is one of :data:`STATUSES`:
``agree``, ``differ`` (with its differences), ``model refused`` (turnip recorded the pass and the
model refused to plan it: a failure unless the scenario's ``[expect] raises`` names the refusal,
then ``refused as expected``), ``not supported`` (what the box, the decoder or turnip lacks,
named) or ``error`` (the recorder or the decoder failed: a bug of the box).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

import fdm
from fdm.plan import RenderPassPlan, SysmemPlan
from fdm.scenario import Scenario
from turnip_base.errors import TurnipFdmError
from turnip_base.junit import ERROR as J_ERROR
from turnip_base.junit import FAILURE, PASSED, SKIPPED, TestCase, document

from .compare import Difference, differences, first_cause
from .decode import DriverPass, driver_pass
from .jobs import DECODED_CHIPS, SHIM_GPU_IDS, Unrecordable, job_of, model_scenario, tu_debug_of
from .pm4 import StreamError
from .rd import read_rd
from .root import Box, environment, launch
from .utrace import PassTrace

AGREE, DIFFER, MODEL_REFUSED, EXPECTED, NOT_SUPPORTED, ERROR = (
    "agree", "differ", "model refused", "refused as expected", "not supported", "error")
#: every status, in the order the closing line counts them
STATUSES = (AGREE, DIFFER, MODEL_REFUSED, EXPECTED, NOT_SUPPORTED, ERROR)
#: the statuses that fail a check
FAILING = (DIFFER, MODEL_REFUSED, ERROR)
#: the statuses of an item whose values were compared
COMPARED = (AGREE, DIFFER)
#: items a box process records before they are judged (a process start costs ~0.7 s of CPU: imports, the device)
CHUNK = 48

Plan = RenderPassPlan | SysmemPlan


@attrs.frozen(kw_only=True)
class Item:
    """One scenario on one GPU.  ``mapping`` is the scenario as a mapping of the file schema when
    it is known (generated scenarios, the suite's scenes): ``--keep`` writes it as TOML;
    ``expect_raises`` is the refusal a finding expects (``[expect] raises``); ``mesa`` the Mesa
    release whose reading the model follows (``--mesa``: :data:`fdm.variants.MESA_READINGS`)."""

    name: str
    gpu: str
    scenario: Scenario          # as both sides run it (model_scenario)
    expect_raises: str | None = None
    mesa: str | None = None
    mapping: Mapping[str, Any] | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen(kw_only=True)
class Recording:
    status: str                 # Recorded, NotSupported, Error, Crashed
    why: str
    rd: tuple[str, ...]
    validation: tuple[str, ...] = ()
    #: the pass's end_render_pass tracepoint(s) (turnip_box.utrace), or why the recorder read none
    u_trace: tuple[PassTrace, ...] | str = ()


@attrs.frozen(kw_only=True)
class Outcome:
    """The verdict on one item; ``bins`` and ``compared`` count the bins and values compared;
    ``driver`` and ``plan`` are kept only where asked (``box plan``)."""

    item: Item
    status: str
    why: str = ""
    differences: tuple[Difference, ...] = ()
    compared: int = 0
    bins: int = 0
    seconds: float = 0.0
    driver: DriverPass | None = None
    plan: Plan | None = None
    #: a pass with a subsampled attachment: its decoded stores, metadata and aprons (``box plan``)
    subsampled: Any = None

    def line(self) -> str:
        """The one line of a verdict that is not an agreement (the first difference, cause first)."""
        head = f"{self.item.name} [{self.item.gpu}]: {self.status}"
        if self.status == DIFFER:
            fields = sorted({d.field for d in self.differences})
            first = first_cause(self.differences)
            return (f"{head}: {len(self.differences)} of {self.compared} values in {len(fields)} field(s); first "
                    f"(cause before effect): {first.line(scenario=False)}")
        return f"{head}: {self.why}" if self.why else head


def items_of(scenarios: Sequence[tuple[str, Scenario]], gpus: Sequence[str],
             expect: Mapping[str, str] | None = None,
             mappings: Mapping[str, Mapping[str, Any]] | None = None, mesa: str | None = None) -> list[Item]:
    """Every scenario on every GPU (or on its own GPU when ``gpus`` is empty), planned with the
    model's reading of Mesa ``mesa`` (None: upstream, the 26.2 reading)."""
    out = []
    for name, sc in scenarios:
        for g in gpus or [sc.gpu.name]:
            out.append(Item(name=name, gpu=g, scenario=model_scenario(sc, g, mesa),
                            expect_raises=(expect or {}).get(name), mapping=(mappings or {}).get(name), mesa=mesa))
    return out


def shard(items: Sequence[Item], index: int, total: int) -> list[Item]:
    """Shard ``index`` of ``total`` (1-based): every ``total``-th item from the ``index``-th;
    the shards 1..total partition ``items``."""
    return [it for n, it in enumerate(items) if n % total == index - 1]


# ---- recording ---------------------------------------------------------------------------------
@attrs.frozen
class Chunk:
    """Items recorded by one box process: their indices in the run, the GPU id and flags."""

    index: int
    gpu_id: int
    flags: tuple[str, ...]
    members: tuple[int, ...]


def chunks_of(items: Sequence[Item], size: int = CHUNK) -> tuple[list[Chunk], dict[int, str]]:
    """The chunks of a run (module docstring) and the items the box cannot record (index -> why)."""
    groups: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    unrecordable: dict[int, str] = {}
    for n, it in enumerate(items):
        if it.gpu not in SHIM_GPU_IDS:
            unrecordable[n] = f"the freedreno noop shim opens {', '.join(SHIM_GPU_IDS)}, not {it.gpu}"
            continue
        groups.setdefault((SHIM_GPU_IDS[it.gpu], tu_debug_of(it.scenario)), []).append(n)
    out: list[Chunk] = []
    for (gpu_id, flags), members in groups.items():
        for k in range(0, len(members), size):
            out.append(Chunk(index=len(out), gpu_id=gpu_id, flags=flags, members=tuple(members[k:k + size])))
    return out, unrecordable


def _record_chunk(box: Box, items: Sequence[Item], chunk: Chunk, scratch: Path, validation: bool,
                  passed: Mapping[str, str]) -> dict[int, Recording]:
    """Record one chunk in a box process; a job on which the process dies is ``Crashed`` and a new
    process takes the rest."""
    results: dict[int, Recording] = {}
    jobs: list[tuple[int, dict[str, Any]]] = []
    for n in chunk.members:
        try:
            jobs.append((n, job_of(items[n].scenario, f"{n}", str(scratch / f"{n:05d}"), items[n].mesa)))
        except Unrecordable as e:
            results[n] = Recording(status="NotSupported", why=str(e), rd=())
    scratch.mkdir(parents=True, exist_ok=True)
    env = environment(box, chunk.gpu_id, scratch, chunk.flags, validation=validation, passed=passed)
    pending = jobs
    while pending:
        jobs_file = scratch / "jobs.json"
        jobs_file.write_text(json.dumps({"jobs": [j for _, j in pending]}))
        by_name = {j["name"]: n for n, j in pending}
        # the box process ignores Ctrl-C: the host ends the run and says what was compared
        proc = subprocess.Popen(launch(box, "turnip_box.record", [str(jobs_file)], env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        try:
            out, err = proc.communicate()
        except BaseException:
            # interrupted (Ctrl-C, a worker ended): the box process goes first, before anyone
            # removes its scratch folder (turnip_box.inside.die_with_parent covers a host killed outright)
            proc.kill()
            proc.wait()
            raise
        for line in out.splitlines():
            rec = json.loads(line) if line.startswith("{") else {}
            if "name" not in rec or rec["name"] not in by_name:
                continue
            n = by_name.pop(rec["name"])
            results[n] = Recording(status=rec["status"], why=rec["why"], rd=tuple(rec["rd"]),
                                   validation=tuple(rec.get("validation", ())), u_trace=_u_trace(rec))
        pending = [(n, j) for n, j in pending if j["name"] in by_name]
        if pending:
            n, _ = pending.pop(0)
            tail = (err.strip().splitlines() or [""])[-1][:200]
            how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
            why = f"the box process died ({how})" + (f": {tail}" if tail else "")
            results[n] = Recording(status="Crashed", why=why, rd=())
    return results


def _u_trace(rec: Mapping[str, Any]) -> tuple[PassTrace, ...] | str:
    got = rec.get("u_trace", ())
    return got if isinstance(got, str) else tuple(PassTrace.from_json(p) for p in got)


# ---- judging -----------------------------------------------------------------------------------
def slots_of(plan: Plan) -> int:
    """How many viewport slots the plan programs (at most)."""
    if isinstance(plan, SysmemPlan):
        return len(plan.slots)
    return max((len(t.slots) for t in plan.tiles), default=len(plan.binning.slots))


def views_of(plan: Plan) -> int:
    """How many views the FS constants carry (the plan's FS parameters per view)."""
    if isinstance(plan, SysmemPlan):
        return len(plan.fs_params)
    return max((len(t.fs_params) for t in plan.tiles), default=1)


def _refused(it: Item, e: TurnipFdmError, driver_did: str) -> Outcome:
    if it.expect_raises is not None and e.field == it.expect_raises:
        return Outcome(item=it, status=EXPECTED, why=f"the model: {e} (the scenario's [expect] raises); {driver_did}")
    return Outcome(item=it, status=MODEL_REFUSED, why=f"{driver_did}, the model refused: {e}")


def judge(it: Item, rec: Recording, detail: bool = True) -> Outcome:
    """Compare one recording with the model's plan of the same scenario (``detail``: keep the
    decoded pass and the plan in the outcome)."""
    if rec.status == "NotSupported":
        return Outcome(item=it, status=NOT_SUPPORTED, why=rec.why)
    if rec.status == "Crashed":
        # turnip crashed: the model saying turnip asserts there is agreement of a kind (both refuse)
        try:
            fdm.plan_render_pass(it.scenario)
        except TurnipFdmError as e:
            return Outcome(item=it, status=NOT_SUPPORTED, why=f"turnip crashed ({rec.why}); the model: {e}")
        return Outcome(item=it, status=ERROR, why=f"turnip crashed ({rec.why}) where the model plans the pass")
    if rec.status != "Recorded" or not rec.rd:
        return Outcome(item=it, status=ERROR, why=rec.why or "no command stream was dumped")
    if rec.validation:
        return Outcome(item=it, status=ERROR, why=f"validation: {rec.validation[0][:300]}")
    try:
        plan = fdm.plan_render_pass(it.scenario)
    except TurnipFdmError as e:
        return _refused(it, e, "turnip recorded the pass")
    chip = it.scenario.gpu.chip
    if chip not in DECODED_CHIPS:
        return Outcome(item=it, status=NOT_SUPPORTED,
                       why=f"turnip recorded the pass on {it.gpu}, but the box's stream decoder has no register "
                           f"table for a{chip}xx (it reads a6xx, a7xx and a8xx)")
    if isinstance(rec.u_trace, str) or len(rec.u_trace) != 1:
        return Outcome(item=it, status=ERROR, why=f"turnip's u_trace: {rec.u_trace or 'no render pass'}")
    try:
        dump = read_rd(Path(rec.rd[-1]))
        dp = driver_pass(dump, slots_of(plan), chip, views_of(plan))
    except (StreamError, TurnipFdmError, KeyError, ValueError) as e:
        return Outcome(item=it, status=ERROR, why=f"decoding the stream: {e}")
    diffs, n = differences(it.name, it.gpu, dp, plan, rec.u_trace[0])
    sub = None
    if it.scenario.subsampled:
        # the subsampled store path, metadata and aprons (turnip_box.subsampled)
        from . import subsampled

        try:
            sub = subsampled.driver_subsampled(dump, chip)
            sd, sn = subsampled.differences(it.name, it.gpu, sub, plan, chip)
        except (StreamError, KeyError, ValueError) as e:
            return Outcome(item=it, status=ERROR, why=f"decoding the subsampled stores: {e}")
        except TurnipFdmError as e:
            return _refused(it, e, "turnip recorded the pass")
        diffs, n = diffs + sd, n + sn
    if it.scenario.custom_resolve:
        # the custom-resolve subpass's draw in each bin (turnip_box.custom_resolve)
        from . import custom_resolve

        try:
            crb = custom_resolve.driver_resolve(dump, chip, slots_of(plan), views_of(plan))
            cd, cn = custom_resolve.differences(it.name, it.gpu, crb, plan, chip, it.scenario.draws)
        except (StreamError, KeyError, ValueError) as e:
            return Outcome(item=it, status=ERROR, why=f"decoding the custom-resolve subpass: {e}")
        except TurnipFdmError as e:
            return _refused(it, e, "turnip recorded the pass")
        diffs, n = diffs + cd, n + cn
    bins = min(len(dp.bins), len(plan.tiles)) if isinstance(plan, RenderPassPlan) else 1
    return Outcome(item=it, status=DIFFER if diffs else AGREE, differences=tuple(diffs), compared=n, bins=bins,
                   driver=dp if detail else None, plan=plan if detail else None,
                   subsampled=sub if detail else None)


# ---- running -----------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class Run:
    """What a check runs with (one per call; the workers inherit it when they are forked)."""

    box: Box
    items: tuple[Item, ...]
    work: Path
    validation: bool = True
    passed: Mapping[str, str] = attrs.field(factory=dict)
    detail: bool = False
    keep: bool = False


_RUN: list[Run] = []  # the run the forked workers serve (set before the fork)


def _chunk_outcomes(run: Run, chunk: Chunk) -> list[tuple[int, Outcome]]:
    t0 = time.perf_counter()
    scratch = run.work / f"chunk{chunk.index:04d}-{chunk.gpu_id}-{'-'.join(chunk.flags) or 'stock'}"
    recs = _record_chunk(run.box, run.items, chunk, scratch, run.validation, run.passed)
    out = []
    for n in chunk.members:
        o = judge(run.items[n], recs[n], detail=run.detail)
        out.append((n, o))
    if not run.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    each = (time.perf_counter() - t0) / max(1, len(chunk.members))
    return [(n, attrs.evolve(o, seconds=each)) for n, o in out]


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C for the run


def _in_worker(chunk: Chunk) -> list[tuple[int, Outcome]]:
    run = _RUN[0]
    # the item travels back as its index: the parent holds the items
    return [(n, attrs.evolve(o, item=_STUB)) for n, o in _chunk_outcomes(run, chunk)]


_STUB = Item(name="", gpu="", scenario=None)  # type: ignore[arg-type]  # replaced by the parent


def check_iter(box: Box, items: Sequence[Item], *, jobs: int = 1, keep: Path | None = None,
               validation: bool = True, passed: Mapping[str, str] | None = None,
               detail: bool = False) -> Iterator[tuple[int, Outcome]]:
    """Record and judge every item; yields ``(index, outcome)`` as they are reached (module
    docstring).  ``keep`` keeps each chunk's streams under that folder."""
    chunks, unrecordable = chunks_of(items)
    for n, why in sorted(unrecordable.items()):
        yield n, Outcome(item=items[n], status=NOT_SUPPORTED, why=why)
    with tempfile.TemporaryDirectory(prefix="turnip-fdm-box-") as tmp:
        run = Run(box=box, items=tuple(items), work=keep if keep is not None else Path(tmp),
                  validation=validation, passed=dict(passed or {}), detail=detail, keep=keep is not None)
        if jobs <= 1 or len(chunks) <= 1:
            for c in chunks:
                yield from _chunk_outcomes(run, c)
            return
        _RUN[:] = [run]
        pool = multiprocessing.get_context("fork").Pool(min(jobs, len(chunks)), initializer=_worker_init)
        try:
            for got in pool.imap_unordered(_in_worker, chunks):
                for n, o in got:
                    yield n, attrs.evolve(o, item=items[n])
            pool.close()
        finally:
            pool.terminate()
            pool.join()
            _RUN.clear()


def check(box: Box, items: Sequence[Item], *, jobs: int = 1, keep: Path | None = None, validation: bool = True,
          passed: Mapping[str, str] | None = None, detail: bool = True,
          progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Every item's outcome, in item order (:func:`check_iter`)."""
    got: dict[int, Outcome] = {}
    for n, o in check_iter(box, items, jobs=jobs, keep=keep, validation=validation, passed=passed, detail=detail):
        got[n] = o
        if progress is not None:
            progress(o)
    return [got[n] for n in range(len(items))]


# ---- reporting ---------------------------------------------------------------------------------
def counts(outcomes: Iterable[Outcome]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for o in outcomes:
        out[o.status] += 1
    return out


def summary_line(outcomes: Iterable[Outcome] | Mapping[str, int]) -> str:
    """``A agree, D differ, N not supported`` and the other statuses that occurred (of the
    outcomes, or of their :func:`counts`)."""
    c = outcomes if isinstance(outcomes, Mapping) else counts(outcomes)
    parts = [f"{c[AGREE]} agree", f"{c[DIFFER]} differ", f"{c[NOT_SUPPORTED]} not supported"]
    parts += [f"{c[s]} {s if s != ERROR else 'errors'}" for s in (MODEL_REFUSED, EXPECTED, ERROR) if c[s]]
    return ", ".join(parts)


def closing_line(outcomes: Sequence[Outcome], seconds: float) -> str:
    """The summary, then what was compared: items, bins, values and the time."""
    compared = [o for o in outcomes if o.status in COMPARED]
    return (f"{summary_line(outcomes)}: {len(compared)} of {len(outcomes)} scenario runs compared, "
            f"{sum(o.bins for o in compared)} bins, {sum(o.compared for o in compared)} values, in {seconds:.1f} s")


def exit_status(outcomes: Sequence[Outcome]) -> int:
    """1 when anything failed, 3 when nothing was compared, else 0."""
    from turnip_base.errors import EXIT_FAILURE, EXIT_NOTHING_COMPARED

    if any(o.status in FAILING for o in outcomes):
        return EXIT_FAILURE
    if not any(o.status in COMPARED for o in outcomes):
        return EXIT_NOTHING_COMPARED
    return 0


def field_summary(outcomes: Sequence[Outcome]) -> list[tuple[str, int, int]]:
    """Per field that differs: (field, differences, scenario runs), cause before effect."""
    from .compare import cause_rank

    per: dict[str, tuple[int, set[int]]] = {}
    for k, o in enumerate(outcomes):
        for d in o.differences:
            n, s = per.get(d.field, (0, set()))
            s.add(k)
            per[d.field] = (n + 1, s)
    return sorted(((f, n, len(s)) for f, (n, s) in per.items()), key=lambda r: (cause_rank(r[0]), r[0]))


def junit(outcomes: Sequence[Outcome], mesa: str, properties: Mapping[str, str] | None = None) -> bytes:
    """One JUnit test case per (scenario, GPU): a failure per differing or refused one (its
    differences, cause first), an error per error, a skip per not-supported one."""
    cases = []
    for o in outcomes:
        kind = {AGREE: PASSED, EXPECTED: PASSED, NOT_SUPPORTED: SKIPPED, ERROR: J_ERROR}.get(o.status, FAILURE)
        text = ""
        if o.status == DIFFER:
            text = "\n".join(d.line() for d in sorted(o.differences, key=lambda d: d.order()))
        elif o.status in (AGREE, EXPECTED):
            text = f"{o.status}: {o.compared} values in {o.bins} bins" if o.status == AGREE else o.why
        cases.append(TestCase(classname=f"box.{o.item.gpu}", name=o.item.name, outcome=kind, seconds=o.seconds,
                              message=o.line(), text=text, kind=o.status if kind == FAILURE else ""))
    return document(f"turnip-fdm box (Mesa {mesa})", cases, properties)


def cpu_count() -> int:
    """The cores this process may run on (the default of ``--jobs``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
