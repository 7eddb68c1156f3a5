"""The device suite on the box: ``turnip-fdm vk run --backend fdm --device box:a750``.

A *box device* (``box:GPU``, GPU one of :data:`turnip_box.jobs.SHIM_GPU_IDS`; ``--mesa V``
picks the box's Mesa) is Mesa's real turnip under the noop DRM shim.  It is a device of the
suite's runner (:mod:`vk_tests.suite.runner`) that runs and judges the cases itself:

* **Where a case runs.**  :class:`BoxDevice` (the host side) starts one worker process inside
  the box (:func:`turnip_box.root.launch` of this module with
  :func:`turnip_box.root.environment`: the shim preloaded, ``FD_GPU_ID``, ``FD_RD_DUMP_PATH``,
  the validation layer required).  The worker opens the suite's device there as the box's
  scenario recorder does (:func:`turnip_box.inside.open_box_device`: the harness's device with the
  Khronos validation layer; a box without the layer refuses, naming its package) and, per case
  the host asks for, calls the
  case's own ``run`` on it: the ``fdm`` backend's passes, unchanged, on turnip.  A worker that
  dies (turnip crashing) fails its case and is started again for the next.
* **What is kept.**  Every FDM pass announces its submission
  (:data:`vk_tests.graphics.fdm_pass.PASS_LISTENERS`); the worker takes the ``.rd`` files turnip
  dumped between the pass's ``begin`` and ``end`` (:class:`turnip_box.inside.RdCapture`) and
  the scenario fields the pass renders (:meth:`vk_tests.graphics.fdm_pass.FdmPass.as_rendered`:
  its attachments, depth, draws).  The images read back are dropped: the GPU never executes
  under the shim, so they hold nothing.  Validation messages go to the runner, which fails the
  case on any.
* **How it is judged** (:func:`judge_stream`, pure, on the host, so a monkeypatched model is the
  one compared and ``turnip-fdm vk check`` judges a stored bundle again): for each FDM pass, the
  submit whose decode has GMEM bins or a sysmem pass with the application's draw
  (:func:`turnip_box.decode.driver_pass`) is compared with ``fdm.plan_render_pass`` of the
  case's scenario as the pass rendered it (:func:`rendered_scenario`: the pass's own
  attachments, depth and draws, turnip's own bin merging, through
  :func:`turnip_box.jobs.model_scenario` on the box's GPU with the model's reading of the box's
  Mesa release, ``info["mesa"]``: turnip picks its own tile size) by
  :func:`turnip_box.compare.differences`, and for a pass with a subsampled attachment (named in
  ``as_rendered``) its subsampled stores, metadata and aprons (:func:`turnip_box.subsampled.differences`).
  Left out, and said so, where the plan does not describe the pass: the FS-constants patch of a
  shader that reads no ``gl_FragCoord`` (``FdmPass.fs_fdm_constants``: turnip patches nothing) and,
  for a stored bundle whose pass as rendered does not name its subsampled attachment, the
  subsampled store path (:data:`SUBSAMPLED_STORE`).  The verdict is ``StreamAgree`` or ``StreamDiffer``
  (:data:`vk_tests.suite.cases.STATUSES`), never a pixel pass.  The output keeps the chosen
  ``.rd`` of each pass as an image of bytes (``stream<i>``) and ``info["judged_on"] = "stream"``.
* **Other cases.**  Host cases need no device and run as everywhere; any other case that needs a
  device is NotSupported ("the box executes nothing: pixel cases need a real GPU").
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import attrs
import numpy as np

import fdm
from turnip_base.errors import NotSupported, ScenarioError, TurnipFdmError
from turnip_box import subsampled
from turnip_box.check import slots_of, views_of
from turnip_box.compare import cause_rank, differences
from turnip_box.decode import DriverPass, driver_pass
from turnip_box.jobs import DECODED_CHIPS, SHIM_GPU_IDS, model_scenario
from turnip_box.pm4 import StreamError
from turnip_box.rd import read_rd
from turnip_box.root import DEFAULT_MESA, Box, check_mesa, environment, find_box, launch

from ..suite.cases import Case, CaseOutput, Scene, Verdict, jsonable
from ..suite.runner import DeviceJudge, Opener

#: the selector prefix of a box device (``box:a750``)
PREFIX = "box:"
#: the backends whose cases the box runs (the others need pixels)
BACKENDS = ("fdm",)
#: the reason of every other case that needs a device
NO_PIXELS = "the box executes nothing: pixel cases need a real GPU"
#: the image name of the i-th FDM pass's command stream
STREAM = "stream{}"
#: the differences a StreamDiffer verdict keeps
FIRST_DIFFERENCES = 8
#: how long the host waits for the worker's answer (one case, or opening the device)
ANSWER_TIMEOUT_S = 600
#: the fields not compared for a pass with a subsampled attachment (:func:`judge_stream`)
SUBSAMPLED_STORE = ("fast_store", "store_rects")


def box_gpu(selector: Any) -> str | None:
    """The GPU of a box device selector (``box:a750`` -> ``a750``); None for any other device."""
    if not isinstance(selector, str) or not selector.startswith(PREFIX):
        return None
    gpu = selector[len(PREFIX):]
    if gpu not in SHIM_GPU_IDS:
        raise ScenarioError("--device", f"a box device is box:GPU with GPU one of {', '.join(SHIM_GPU_IDS)} (the "
                                        f"GPUs Mesa's noop DRM shim opens), got {selector!r}")
    return gpu


@attrs.frozen(kw_only=True)
class BoxInfo:
    """The box device as the bundle records it (``device.info``)."""

    kind: str = "box"
    gpu: str
    mesa: str
    mesa_version: str
    driver: str | None
    name: str
    validation: bool
    device: Mapping[str, Any] = attrs.field(factory=dict)

    def describe(self) -> str:
        own = f", driver {self.driver}" if self.driver else ""
        return (f"{self.name} under Mesa's noop DRM shim (the box: Mesa {self.mesa_version}{own}; "
                f"judged on the command stream, no pixels)")


class BoxDevice:
    """The host side of a box device: the worker process, its scratch folder, the validation
    messages of the cases it ran (``messages``), ``run_case`` and ``judge_case`` for the runner."""

    def __init__(self, box: Box, gpu: str) -> None:
        self.box, self.gpu = box, gpu
        self.messages: list[str] = []
        self.vk = None
        self.scratch = Path(tempfile.mkdtemp(prefix=f"turnip-fdm-box-suite-{gpu}-"))
        self.proc: subprocess.Popen[str] | None = None
        self._n = 0
        try:
            hello = self._start()
        except BaseException:
            self.close()
            raise
        self.info = BoxInfo(gpu=gpu, mesa=box.mesa, mesa_version=box.mesa_version,
                            driver=str(box.driver) if box.driver else None, name=str(hello["name"]),
                            validation=bool(hello["validation"]), device=hello.get("info", {}))

    # -- the worker
    def _start(self) -> dict[str, Any]:
        # the suite runs only under the validation layer: the worker refuses a box without it
        env = environment(self.box, SHIM_GPU_IDS[self.gpu], self.scratch, validation=True)
        self._stderr: IO[str] = open(self.scratch / "worker.stderr", "a")  # noqa: SIM115 - lives with the worker
        self.proc = subprocess.Popen(launch(self.box, "vk_tests.box.device", ["--worker", str(self.scratch)], env),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                     env=env)
        hello = self._read()
        if hello is None or "name" not in hello:
            why = (hello or {}).get("error") or self._tail()
            self._stop()
            raise NotSupported(f"the box did not open {self.gpu}: {why}")
        return hello

    def _tail(self) -> str:
        try:
            lines = (self.scratch / "worker.stderr").read_text(errors="replace").strip().splitlines()
        except OSError:
            lines = []
        code = self.proc.poll() if self.proc is not None else None
        return (lines[-1][:300] if lines else "") or f"the worker ended (exit status {code})"

    def _read(self) -> dict[str, Any] | None:
        """The worker's next line (it writes whole lines, one per request); None when it ended or
        said nothing for :data:`ANSWER_TIMEOUT_S` (then it is killed)."""
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], ANSWER_TIMEOUT_S)
        if not ready:
            self.proc.kill()
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def _stop(self) -> None:
        if self.proc is not None:
            try:
                if self.proc.stdin:
                    self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
            self.proc = None
            self._stderr.close()

    def close(self) -> None:
        self._stop()
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- the runner's hooks
    def run_case(self, case: Case) -> CaseOutput:
        """Run ``case`` in the box (module docstring); NotSupported for a pixel case."""
        if case.backend not in BACKENDS:
            raise NotSupported(NO_PIXELS)
        if self.proc is None or self.proc.poll() is not None:
            self._stop()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        self._n += 1
        out_dir = self.scratch / f"case{self._n:04d}"
        self.proc.stdin.write(json.dumps({"case": case.name, "out": str(out_dir)}) + "\n")
        self.proc.stdin.flush()
        rep = self._read()
        if rep is None:
            why = self._tail()
            self._stop()
            raise RuntimeError(f"the box's worker ended during the case: {why}")
        try:
            self.messages.extend(rep.get("validation", []))
            if rep["status"] == "NotSupported":
                raise NotSupported(rep["why"])
            if rep["status"] != "ran":
                raise RuntimeError(rep["why"])
            return self._output(rep)
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)

    def _output(self, rep: Mapping[str, Any]) -> CaseOutput:
        images: dict[str, Any] = {}
        passes = []
        for i, p in enumerate(rep["passes"]):
            rd = chosen_rd([Path(f) for f in p["rd"]], self.gpu)
            entry: dict[str, Any] = {"rendered": p["rendered"], "fs_constants": p["fs_constants"],
                                     "subsampled": p["subsampled"],
                                     "rd_files": len(p["rd"]), "stream": None}
            if rd is not None:
                images[STREAM.format(i)] = np.frombuffer(rd.read_bytes(), dtype=np.uint8).copy()
                entry["stream"] = STREAM.format(i)
            passes.append(entry)
        info = {"judged_on": "stream", "gpu": self.gpu, "mesa": self.box.mesa, "mesa_version": self.box.mesa_version,
                "passes": passes, "run_info": rep.get("info", {})}
        return CaseOutput(images=images, info=info)

    def judge_case(self, case: Case, scene: Scene, output: CaseOutput) -> Verdict:
        return judge_stream(case, scene, output)


def chosen_rd(files: list[Path], gpu: str) -> Path | None:
    """Of the dumps of one FDM pass's submission, the one whose decode has GMEM bins or a sysmem
    pass with the application's draw (None: none has)."""
    chip = fdm.get_gpu(gpu).chip
    for f in files:
        try:
            if driver_pass(read_rd(f), 1, chip).render_mode != "none":
                return f
        except (StreamError, TurnipFdmError, KeyError, ValueError):
            continue
    return None


def opener(mesa: str | None = None, driver: str | None = None) -> Any:
    """The runner's opener of a box device selector (``box:GPU``): NotSupported when the box is
    not built or turnip does not open the GPU there."""
    check_mesa(mesa or DEFAULT_MESA)

    def open_box(selector: Any) -> BoxDevice:
        gpu = box_gpu(selector)
        assert gpu is not None
        return BoxDevice(find_box(mesa or DEFAULT_MESA, driver), gpu)

    return open_box


#: the judges of outputs their device judged (``info["judged_on"]``), for ``vk check``
DEVICE_JUDGES: dict[str, DeviceJudge] = {}


def device_opener(selector: Any, mesa: str | None = None) -> Opener | None:
    """The runner's opener of a device that runs and judges its cases itself (``box:GPU``: the
    box with Mesa ``mesa``), None for an ordinary Vulkan device."""
    if box_gpu(selector) is not None:
        return opener(mesa)
    return None


# ---- the judge (host) ---------------------------------------------------------------------------
def rendered_scenario(scene: Scene, rendered: Mapping[str, Any], gpu: str, mesa: str | None = None) -> fdm.Scenario:
    """The scenario the model plans for one recorded pass: the case's scenario with the pass's own
    attachments, depth and draws (``rendered``), turnip's own bin merging (the box runs turnip
    without ``TU_DEBUG``) on ``gpu``, no fixed tile size and the model's reading of the box's Mesa
    release ``mesa`` (:func:`turnip_box.jobs.model_scenario`, :data:`fdm.variants.MESA_READINGS`)."""
    mapping = {**scene["scenario"], **rendered, "bin_merging": "upstream"}
    mapping.pop("tu_debug", None)
    map_layers = scene.get("fdm", {}).get("map_layers")
    if map_layers is not None:  # the FDM view's layers: the image turnip samples layer by layer
        mapping["density"] = {**mapping["density"], "image_layers": int(map_layers)}
    return model_scenario(fdm.parse_scenario(mapping), gpu, mesa)


def _rd_of(output: CaseOutput, name: str, work: Path) -> Path:
    path = work / f"{name}.rd"
    path.write_bytes(np.asarray(output.images[name], dtype=np.uint8).tobytes())
    return path


def judge_stream(case: Case, scene: Scene, output: CaseOutput) -> Verdict:
    """StreamAgree when every FDM pass's decoded stream equals the model's plan of its scenario,
    StreamDiffer with the first differences otherwise (module docstring)."""
    info = output.info
    gpu = str(info["gpu"])
    chip = fdm.get_gpu(gpu).chip
    if chip not in DECODED_CHIPS:
        raise NotSupported(f"the box's stream decoder has no register table for a{chip}xx ({gpu}; it reads a6xx, "
                           "a7xx and a8xx)")
    passes = info.get("passes", [])
    if not passes:
        return Verdict(status="Fail", message="the case recorded no FDM pass")
    diffs: list[Mapping[str, Any]] = []
    notes: set[str] = set()
    compared = 0
    modes = []
    with tempfile.TemporaryDirectory(prefix="turnip-fdm-stream-") as tmp:
        for i, p in enumerate(passes):
            if p.get("stream") is None:
                return Verdict(status="Fail", message=f"FDM pass {i}: none of its {p.get('rd_files', 0)} dump(s) holds "
                                                      "a render pass with the application's draw")
            try:
                sc = rendered_scenario(scene, p["rendered"], gpu, info.get("mesa"))
                plan = fdm.plan_render_pass(sc)
            except TurnipFdmError as e:
                # turnip recorded the pass the model refuses: a verdict of its own, failing unless
                # the case's finding expects the refusal (the scene's fdm.expect_raises)
                if scene.get("fdm", {}).get("expect_raises") == e.field:
                    return Verdict(status="RefusedAsExpected", message=f"turnip recorded FDM pass {i}; the model "
                                                                       f"refuses it, as the case expects: {e}")
                return Verdict(status="ModelRefused",
                               message=f"turnip recorded FDM pass {i}; the model refused it: {e}")
            rd = read_rd(_rd_of(output, p["stream"], Path(tmp)))
            dp: DriverPass = driver_pass(rd, slots_of(plan), chip, views_of(plan))
            got, n = differences(case.name, gpu, dp, plan)
            if not p.get("fs_constants", True):
                # the pass's shader reads no FDM constants: turnip patches none, the plan has them
                dropped = [d for d in got if d.field == "fs_params" and d.driver is None]
                got, n = [d for d in got if d not in dropped], n - len(dropped)
            if p.get("subsampled") and plan.scenario.subsampled:
                # the pass as rendered names its subsampled attachments: the subsampled stores,
                # metadata and aprons are compared (turnip_box.subsampled)
                sd, sn = subsampled.differences(case.name, gpu, subsampled.driver_subsampled(rd, chip), plan, chip)
                got, n = got + sd, n + sn
            elif p.get("subsampled"):
                # a bundle whose pass as rendered does not name its subsampled attachment: the
                # subsampled store path is left out
                dropped = [d for d in got if d.field in SUBSAMPLED_STORE]
                got, n = [d for d in got if d not in dropped], n - len(dropped)
                notes.add("the store path of subsampled attachments is not compared")
            compared += n
            modes.append(f"{dp.render_mode} {len(dp.bins)} bins" if dp.render_mode == "gmem" else dp.render_mode)
            # the first difference is the earliest cause (fragment area before the viewports computed from it)
            got = sorted(got, key=lambda d: (cause_rank(d.field), d.order()))
            diffs += [{"pass": i, "field": d.field, "bin": d.bin, "view": d.view, "driver": jsonable(d.driver, False),
                       "model": jsonable(d.model, False)} for d in got]
    where = f"{len(passes)} FDM pass(es) on turnip {gpu}: {', '.join(modes)}"
    where += "".join(f"; {n}" for n in sorted(notes))
    if diffs:
        first = diffs[0]
        return Verdict(status="StreamDiffer",
                       message=f"{len(diffs)} of {compared} values differ from the model ({where}); first: pass "
                               f"{first['pass']} {first['field']}"
                               + (f" bin {first['bin']}" if first["bin"] is not None else "")
                               + (f" slot {first['view']}" if first["view"] is not None else "")
                               + f": driver {first['driver']}, model {first['model']}",
                       mismatches=tuple(diffs[:FIRST_DIFFERENCES]))
    return Verdict(status="StreamAgree", message=f"the command stream agrees with the model: {compared} values "
                                                 f"({where}; judged on the stream, no pixels)")


DEVICE_JUDGES["stream"] = judge_stream


# ---- the worker (inside the box) ---------------------------------------------------------------
def worker(scratch: Path) -> int:
    """Serve cases from stdin (``{"case", "out"}`` per line), one JSON line each on stdout.  The
    device and the captures are the box's own (:mod:`turnip_box.inside`, as the scenario
    recorder's): the validation layer is required, and a box without it refuses with its name."""
    from turnip_base.errors import NotSupported as NS
    from turnip_box.inside import RdCapture, die_with_parent, open_box_device

    die_with_parent()

    from ..fdm import cases as fdm_cases
    from ..graphics import fdm_pass
    from ..suite.runner import one_line
    from ..suite.selection import by_name

    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else printed (the driver, a layer) goes to stderr
    sys.stdout = sys.stderr

    def say(doc: Mapping[str, Any]) -> None:
        proto.write(json.dumps(doc) + "\n")
        proto.flush()

    capture = RdCapture()
    try:
        ctx = open_box_device()
    except NS as e:
        say({"error": str(e)})
        return 0
    say({"name": ctx.info.name, "validation": ctx.messenger is not None, "info": jsonable(ctx.info, strict=False)})
    cases = by_name(fdm_cases.cases())  # the backends the box runs (BACKENDS)
    current: dict[str, Any] = {}

    def listen(event: str, p: fdm_pass.FdmPass) -> None:
        if event == "begin":
            capture.mark()
            return
        moved = capture.take(Path(current["out"]) / f"pass{len(current['passes'])}")
        current["passes"].append({"rd": moved, "rendered": p.as_rendered(), "fs_constants": p.fs_fdm_constants,
                                   "subsampled": p.subsampled})

    fdm_pass.PASS_LISTENERS.append(listen)
    for line in sys.stdin:
        req = json.loads(line)
        case = cases[req["case"]]
        current.clear()
        current.update(out=req["out"], passes=[])
        mark = len(ctx.messages)
        rep: dict[str, Any] = {"status": "ran", "why": ""}
        try:
            out = case.run(ctx, case.scene)
            rep["info"] = jsonable(out.info, strict=False)
        except NS as e:
            rep = {"status": "NotSupported", "why": str(e)}
        except Exception as e:  # noqa: BLE001 - the host records it as the case's failure
            traceback.print_exc()  # to the worker's stderr (kept in its scratch folder while it runs)
            rep = {"status": "error", "why": one_line(e)}
        capture.drop()  # the dumps of the other submits (uploads, read-backs)
        rep["passes"] = current["passes"]
        rep["validation"] = ctx.messages[mark:]
        say(rep)
    ctx.close()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker(Path(sys.argv[2])))
    sys.exit("usage: python -m vk_tests.box.device --worker SCRATCH (started by vk_tests.box.device.BoxDevice)")
