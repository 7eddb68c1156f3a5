"""The unit of the device suite: a case is a scene, a way to run it, and a judge.

* ``run(device, scene)`` renders (or, for host cases, computes) and returns what was read back
  (:class:`CaseOutput`); it raises :class:`turnip_base.errors.NotSupported` naming what the device
  lacks, never passes without rendering.
* ``judge(scene, output)`` is pure: it compares the output with the oracle and returns a
  :class:`Verdict`.  ``turnip-fdm vk check BUNDLE`` calls it again offline on a stored scene and
  stored images, so a run recorded on another machine is re-derived with the current model.

Scenes are JSON-able mappings (the bundle stores them as they are); images are numpy arrays
``(height, width, channels)`` of the read-back format.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs
import numpy as np
import numpy.typing as npt

#: CTS-style results, and the two verdicts of a case judged on a driver's command stream instead of
#: pixels (the box, ``vk_tests.box.device``: the GPU never executes there): ``StreamAgree``, every
#: value turnip programmed equals the model's plan; ``StreamDiffer``, some value does not (a failure);
#: ``ModelRefused``, turnip recorded the pass and the model refused to plan it (a failure), unless
#: the case's finding expects that refusal: ``RefusedAsExpected`` (nothing compared, nothing failed).
#: None is a pixel pass.
Status = Literal["Pass", "Fail", "NotSupported", "QualityWarning", "StreamAgree", "StreamDiffer", "ModelRefused",
                 "RefusedAsExpected"]
STATUSES: tuple[Status, ...] = ("Pass", "Fail", "NotSupported", "QualityWarning", "StreamAgree", "StreamDiffer",
                                "ModelRefused", "RefusedAsExpected")
#: the statuses that fail a run
FAILING: tuple[Status, ...] = ("Fail", "StreamDiffer", "ModelRefused")
#: how a case runs: on the host only, turnip's per-bin scheme replayed with ordinary Vulkan, a
#: real FDM render pass, or a shading-rate attachment derived from the model's areas (a new
#: backend adds its name here and its ``cases()`` to the table of :mod:`vk_tests.registry`)
Backend = Literal["host", "replay", "fdm", "fsr"]
BACKENDS: tuple[Backend, ...] = ("host", "replay", "fdm", "fsr")
#: the mismatches a verdict keeps (the bundle and JUnit show the first ones)
FIRST_MISMATCHES = 8
#: a case name: dotted components of letters, digits, ``_``, ``-``, ``+``, ``=``, at least three
NAME_RE = re.compile(r"[A-Za-z0-9_+=-]+(\.[A-Za-z0-9_+=-]+){2,}")

Scene = Mapping[str, Any]
ImageArray = npt.NDArray[Any]


@attrs.frozen(kw_only=True)
class Verdict:
    """The outcome of one case: ``status``, one line of ``message``, and the first mismatching
    pixels or values (each a JSON-able mapping, e.g. ``{"image", "x", "y", "got", "want"}``)."""

    status: Status
    message: str
    mismatches: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen(kw_only=True)
class CaseOutput:
    """What a case read back: named images and JSON-able facts (device, counts, ...)."""

    images: Mapping[str, ImageArray] = attrs.field(factory=dict)
    info: Mapping[str, Any] = attrs.field(factory=dict)


Device = Any  # turnip_base.harness.Vulkan, or None for host cases
RunFn = Callable[[Device, Scene], CaseOutput]
JudgeFn = Callable[[Scene, CaseOutput], Verdict]


@attrs.frozen(kw_only=True)
class Case:
    """One case of the suite, named ``backend.group.variant[...]`` (dotted, CTS style)."""

    name: str
    backend: Backend
    description: str
    scene: Scene
    run: RunFn
    judge: JudgeFn
    needs_device: bool = True


def case(name: str, description: str, scene: Scene, run: RunFn, judge: JudgeFn, needs_device: bool = True) -> Case:
    """A case of the backend its name begins with (``replay.group.variant`` is a ``replay`` case);
    ``ValueError`` when that is not one of :data:`BACKENDS`."""
    head = name.split(".")[0]
    for backend in BACKENDS:
        if backend == head:
            return Case(name=name, backend=backend, description=description, scene=scene, run=run, judge=judge,
                        needs_device=needs_device)
    raise ValueError(f"case name {name!r} must begin with one of {', '.join(BACKENDS)}")


def first_mismatches(name: str, got: ImageArray, want: ImageArray, limit: int = 8,
                     tolerance: int = 0) -> tuple[Mapping[str, Any], ...]:
    """The first ``limit`` pixels (raster order) where ``got`` and ``want`` differ by more than
    ``tolerance`` in any channel, as JSON-able mappings."""
    if got.shape != want.shape:
        return ({"image": name, "shape_got": list(got.shape), "shape_want": list(want.shape)},)
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    if diff.ndim == 3:
        diff = diff.max(axis=2)
    ys, xs = np.nonzero(diff > tolerance)
    return tuple({"image": name, "x": int(x), "y": int(y), "got": np.atleast_1d(got[y, x]).tolist(),
                  "want": np.atleast_1d(want[y, x]).tolist()} for y, x in zip(ys[:limit], xs[:limit], strict=True))


def jsonable(value: Any, strict: bool = True) -> Any:
    """``value`` with attrs instances, dataclasses, mappings, sequences and numpy scalars/arrays
    turned into JSON types (dict, list, int, float, str, bool, None); anything else raises
    ``TypeError`` (``strict``) or becomes its ``str()``."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if attrs.has(type(value)):
        return {k: jsonable(v, strict) for k, v in attrs.asdict(value, recurse=False).items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), strict) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, strict) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, strict) for v in value]
    if not strict:
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-able: {value!r:.80}")
