"""``turnip-fdm box check``: every scenario through turnip and through the model, compared.

The driver side runs in box processes (:mod:`turnip_box.record`), one per GPU and
``TU_DEBUG`` set, each recording many passes; the model side runs here, in the calling process,
so a monkeypatched model is the one compared.  Each (scenario, GPU) pair ends in one
:class:`Outcome`: ``agree``, ``differ`` (with its differences), ``not supported`` (what the box
or turnip lacks, named) or ``error`` (the recorder or the decoder failed: a bug of the box).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

import fdm
from fdm.errors import TurnipFdmError
from fdm.scenario import Scenario

from .compare import Difference, differences
from .decode import DriverPass, driver_pass
from .jobs import DECODED_CHIPS, SHIM_GPU_IDS, Unrecordable, job_of, model_scenario, tu_debug_of
from .pm4 import StreamError
from .rd import read_rd
from .root import Box, environment, launch

AGREE, DIFFER, NOT_SUPPORTED, ERROR = "agree", "differ", "not supported", "error"


@attrs.frozen(kw_only=True)
class Item:
    """One scenario on one GPU."""

    name: str
    gpu: str
    scenario: Scenario          # as both sides run it (model_scenario)


@attrs.frozen(kw_only=True)
class Recording:
    status: str                 # Recorded, NotSupported, Error
    why: str
    rd: tuple[str, ...]
    validation: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Outcome:
    item: Item
    status: str
    why: str = ""
    differences: tuple[Difference, ...] = ()
    compared: int = 0
    driver: DriverPass | None = None
    plan: Any = None


def items_of(scenarios: Sequence[tuple[str, Scenario]], gpus: Sequence[str]) -> list[Item]:
    """Every scenario on every GPU (or on its own GPU when ``gpus`` is empty)."""
    out = []
    for name, sc in scenarios:
        for g in gpus or [sc.gpu.name]:
            out.append(Item(name=name, gpu=g, scenario=model_scenario(sc, g)))
    return out


def record(box: Box, items: Sequence[Item], work: Path,
           progress: Callable[[Item], None] | None = None) -> dict[tuple[str, str], Recording]:
    """Record every item in box processes, one per (GPU, TU_DEBUG) group."""
    results: dict[tuple[str, str], Recording] = {}
    groups: dict[tuple[int, tuple[str, ...]], list[tuple[Item, dict[str, Any]]]] = {}
    for n, it in enumerate(items):
        key = (it.name, it.gpu)
        try:
            job = job_of(it.scenario, f"{n}", str(work / f"{n:05d}"))
        except Unrecordable as e:
            results[key] = Recording(status="NotSupported", why=str(e), rd=())
            if progress:
                progress(it)
            continue
        groups.setdefault((SHIM_GPU_IDS[it.gpu], tu_debug_of(it.scenario)), []).append((it, job))
    for (gpu_id, flags), members in groups.items():
        scratch = work / f"gpu{gpu_id}-{'-'.join(flags) or 'stock'}"
        scratch.mkdir(parents=True, exist_ok=True)
        env = environment(box, gpu_id, scratch, flags)
        pending = list(members)
        while pending:
            # one process records the group; if turnip crashes on a job, that job is an error and a
            # new process takes the rest
            jobs_file = scratch / "jobs.json"
            jobs_file.write_text(json.dumps({"jobs": [j for _, j in pending]}))
            by_name = {j["name"]: it for it, j in pending}
            proc = subprocess.Popen(launch(box, "turnip_box.record", [str(jobs_file)], env),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            assert proc.stdout is not None
            for line in proc.stdout:
                rec = json.loads(line)
                if "name" not in rec:
                    continue
                it = by_name.pop(rec["name"])
                results[(it.name, it.gpu)] = Recording(status=rec["status"], why=rec["why"], rd=tuple(rec["rd"]),
                                                       validation=tuple(rec.get("validation", ())))
                if progress:
                    progress(it)
            err = proc.stderr.read() if proc.stderr else ""
            proc.wait()
            pending = [(it, j) for it, j in pending if j["name"] in by_name]
            if pending:
                it, _ = pending.pop(0)
                tail = (err.strip().splitlines() or [""])[-1][:200]
                how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
                results[(it.name, it.gpu)] = Recording(status="Crashed", why=f"the box process died ({how})"
                                                       + (f": {tail}" if tail else ""), rd=())
                if progress:
                    progress(it)
    return results


def slots_of(plan: Any) -> int:
    if getattr(plan, "render_mode", "gmem") == "sysmem":
        return len(plan.slots)
    return max((len(t.slots) for t in plan.tiles), default=len(plan.binning.slots))


def views_of(plan: Any) -> int:
    """How many views the FS constants carry (the plan's FS parameters per view)."""
    if getattr(plan, "render_mode", "gmem") == "sysmem":
        return len(plan.fs_params)
    return max((len(t.fs_params) for t in plan.tiles), default=1)


def judge(it: Item, rec: Recording) -> Outcome:
    """Compare one recording with the model's plan of the same scenario."""
    if rec.status == "NotSupported":
        return Outcome(item=it, status=NOT_SUPPORTED, why=rec.why)
    if rec.status == "Crashed":
        # the model saying turnip asserts there is agreement of a kind: both refuse the pass
        try:
            fdm.plan_render_pass(it.scenario)
        except TurnipFdmError as e:
            return Outcome(item=it, status=NOT_SUPPORTED, why=f"{rec.why}; the model: {e}")
        return Outcome(item=it, status=ERROR, why=rec.why)
    if rec.status != "Recorded" or not rec.rd:
        return Outcome(item=it, status=ERROR, why=rec.why or "no command stream was dumped")
    if rec.validation:
        return Outcome(item=it, status=ERROR, why=f"validation: {rec.validation[0][:300]}")
    try:
        plan = fdm.plan_render_pass(it.scenario)
    except TurnipFdmError as e:
        return Outcome(item=it, status=NOT_SUPPORTED, why=f"the model: {e}")
    try:
        dump = read_rd(Path(rec.rd[-1]))
        chip = it.scenario.gpu.chip
        if chip not in DECODED_CHIPS:
            return Outcome(item=it, status=NOT_SUPPORTED, why=f"the box decodes a6xx/a7xx streams, not a{chip}xx")
        dp = driver_pass(dump, slots_of(plan), chip, views_of(plan))
    except (StreamError, TurnipFdmError, KeyError, ValueError) as e:
        return Outcome(item=it, status=ERROR, why=f"decoding the stream: {e}")
    diffs, n = differences(it.name, it.gpu, dp, plan)
    return Outcome(item=it, status=DIFFER if diffs else AGREE, differences=tuple(diffs), compared=n, driver=dp,
                   plan=plan)


def check(box: Box, items: Sequence[Item], progress: Callable[[Item], None] | None = None,
          keep: Path | None = None) -> list[Outcome]:
    """Record and judge every item (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="turnip-fdm-box-") as tmp:
        work = keep if keep is not None else Path(tmp)
        recs = record(box, items, work, progress)
        return [judge(it, recs[(it.name, it.gpu)]) for it in items]


def summary_line(outcomes: Iterable[Outcome]) -> str:
    counts = {AGREE: 0, DIFFER: 0, NOT_SUPPORTED: 0, ERROR: 0}
    for o in outcomes:
        counts[o.status] += 1
    line = f"{counts[AGREE]} agree, {counts[DIFFER]} differ, {counts[NOT_SUPPORTED]} not supported"
    return line + (f", {counts[ERROR]} errors" if counts[ERROR] else "")


def junit(outcomes: Sequence[Outcome], mesa: str) -> bytes:
    """One JUnit test case per (scenario, GPU): a failure per difference, a skip per not-supported."""
    suite = ET.Element("testsuite", name=f"turnip-fdm box (Mesa {mesa})", tests=str(len(outcomes)),
                       failures=str(sum(o.status == DIFFER for o in outcomes)),
                       errors=str(sum(o.status == ERROR for o in outcomes)),
                       skipped=str(sum(o.status == NOT_SUPPORTED for o in outcomes)))
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname=f"box.{o.item.gpu}", name=o.item.name)
        if o.status == DIFFER:
            f = ET.SubElement(case, "failure", message=f"{len(o.differences)} differences")
            f.text = "\n".join(d.line() for d in o.differences)
        elif o.status == ERROR:
            ET.SubElement(case, "error", message=o.why)
        elif o.status == NOT_SUPPORTED:
            ET.SubElement(case, "skipped", message=o.why)
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True)
