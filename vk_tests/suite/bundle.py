"""The result bundle of a suite run: what ran, on what, with what verdict, and every image read
back, so that ``turnip-fdm vk check`` can judge the run again offline.

::

    OUT/summary.json             written last: the device, the counts, one line per case
    OUT/junit.xml                the same results for CI (vk_tests.junit)
    OUT/cases/<name>/case.json   one case: scene, device, verdict, validation messages, info, images
    OUT/cases/<name>/<image>.npy.xz each image read back, exact (numpy .npy, no pickles, xz-compressed)
    OUT/cases/<name>/<image>.png the same image as an 8-bit picture for people

Each case directory is written all-or-nothing (:func:`fdm.outputs.write_files`) as soon as
the case ends; ``summary.json`` is written after ``junit.xml``, so a directory without it is
a run that did not finish (:func:`load_bundle` refuses it).  The fields of every file are
described in ``docs/device-suite.md``.  Version 1 bundles (plain ``<image>.npy``) are still read.
"""

from __future__ import annotations

import io
import json
import lzma
import math
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs
import numpy as np

from fdm.outputs import check_output_dir, write_files
from turnip_base.errors import ScenarioError

from .cases import NAME_RE, STATUSES, CaseOutput, ImageArray, Verdict, jsonable

FORMAT = "turnip-fdm vk bundle"
VERSION = 2
#: the versions :func:`load_bundle` reads: 1 stored images as plain ``.npy``, 2 as ``.npy.xz``
READ_VERSIONS = (1, 2)
#: how version 2 compresses an image's ``.npy``: an xz stream whose filters are a delta of one
#: pixel (``channels × itemsize`` bytes: neighbouring pixels of the suite's coordinate images
#: and gradients differ little) and LZMA2 preset 1.  The images of a whole lavapipe run (147
#: cases, 24 MB as ``.npy``) become 0.37 MB in under a second; ``xz -d`` restores the ``.npy``.
XZ_PRESET = 1
#: the memory the xz decoder may use (preset 1 needs 1 MiB; a file asking for more is refused)
XZ_MEMLIMIT = 64 << 20
#: the longest ``.npy`` header :func:`load_npy` accepts in a compressed image
MAX_NPY_HEADER = 1 << 16
#: images larger than this are left out of the bundle when large images are not wanted
LARGE_IMAGE_BYTES = 4 << 20
#: the largest JSON file and .npy image :func:`load_bundle` reads (checked before reading)
MAX_JSON_BYTES = 64 << 20
MAX_NPY_BYTES = 1 << 30
#: an image name: a file name without its extension
IMAGE_NAME_RE = re.compile(r"[A-Za-z0-9_+=-][A-Za-z0-9_.+=-]{0,99}")
#: the status of a case the run never reached (interrupted)
NOT_RUN: Final = "NotRun"
RecordStatus = Literal["Pass", "Fail", "NotSupported", "QualityWarning", "StreamAgree", "StreamDiffer",
                       "ModelRefused", "RefusedAsExpected", "NotRun"]
COUNT_ORDER: tuple[RecordStatus, ...] = ("Pass", "Fail", "NotSupported", "QualityWarning", "StreamAgree",
                                         "StreamDiffer", "ModelRefused", "RefusedAsExpected", "NotRun")
#: the statuses of a case whose output was compared with its oracle (a run that has none of them
#: compared nothing: ``vk run`` exits :data:`turnip_base.errors.EXIT_NOTHING_COMPARED`, never 0)
COMPARED: tuple[RecordStatus, ...] = ("Pass", "QualityWarning", "StreamAgree")
#: what a bundle may contain; an --out directory holding anything else is refused
BUNDLE_ENTRIES = ("summary.json", "junit.xml", "cases")


@attrs.frozen(kw_only=True)
class ImageRecord:
    """One image of a case: ``name.npy`` and ``name.png``, or ``omitted`` saying why not."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    npy: str | None = None
    png: bool = False
    png_view: str = ""
    omitted: str | None = None


@attrs.frozen(kw_only=True)
class CaseRecord:
    """What the bundle keeps of one case.

    ``verdict`` is None for a case the run never reached.  ``ran`` is true when ``run()``
    returned an output (so the judge can be called again on the stored images and info);
    false when it raised (NotSupported, an exception) or was not called."""

    name: str
    backend: str
    description: str
    needs_device: bool
    scene: Mapping[str, Any]
    device: Mapping[str, Any] | None
    verdict: Verdict | None
    ran: bool = False
    validation: tuple[str, ...] = ()
    seconds: float = 0.0
    info: Mapping[str, Any] = attrs.field(factory=dict)
    images: tuple[ImageRecord, ...] = ()

    @property
    def status(self) -> RecordStatus:
        return self.verdict.status if self.verdict is not None else NOT_RUN

    @property
    def message(self) -> str:
        return self.verdict.message if self.verdict is not None else "not run: the run was interrupted"


@attrs.frozen(kw_only=True)
class Bundle:
    """A bundle read back by :func:`load_bundle`."""

    path: str
    device: Mapping[str, Any] | None
    interrupted: bool
    records: tuple[CaseRecord, ...]


# ---- counts and the closing line --------------------------------------------------------------

def counts(records: Iterable[CaseRecord]) -> dict[str, int]:
    out: dict[str, int] = dict.fromkeys(COUNT_ORDER, 0)
    for r in records:
        out[r.status] += 1
    return out


def closing_line(c: Mapping[str, int]) -> str:
    """``N passed, N failed, N not supported`` (``, N quality warning``, ``, N stream agree, N
    stream differ`` and ``, N not run`` only when there are some)."""
    line = f"{c['Pass']} passed, {c['Fail']} failed, {c['NotSupported']} not supported"
    if c.get("QualityWarning"):
        line += f", {c['QualityWarning']} quality warning"
    if c.get("StreamAgree") or c.get("StreamDiffer"):
        line += f", {c.get('StreamAgree', 0)} stream agree, {c.get('StreamDiffer', 0)} stream differ"
    if c.get("ModelRefused"):
        line += f", {c['ModelRefused']} model refused"
    if c.get("RefusedAsExpected"):
        line += f", {c['RefusedAsExpected']} refused as expected"
    if c.get(NOT_RUN):
        line += f", {c[NOT_RUN]} not run"
    return line


def compared(c: Mapping[str, int]) -> int:
    """How many cases were compared (:data:`COMPARED`)."""
    return sum(c.get(s, 0) for s in COMPARED)


def nothing_compared_line(c: Mapping[str, int], where: str) -> str:
    """The line after the closing line of a run that compared nothing: ``nothing compared: 0 of N
    case(s) compared WHERE (every one not supported)`` (or the count of each status); ``where``
    is ``on DEVICE``, ``with no device (REASON)`` or ``on the host``."""
    total = sum(c.values())
    if total == 0:
        return "nothing compared: no case was selected"
    present = [s for s in COUNT_ORDER if c.get(s)]
    words = {"NotSupported": "not supported", "NotRun": "not run", "Fail": "failed", "StreamDiffer": "stream differ",
             "ModelRefused": "model refused", "RefusedAsExpected": "refused as expected"}
    why = (f"every one {words.get(present[0], present[0])}" if len(present) == 1
           else ", ".join(f"{c[s]} {words.get(s, s)}" for s in present))
    return f"nothing compared: 0 of {total} case(s) compared {where} ({why})"


# ---- writing ----------------------------------------------------------------------------------

def _dumps(doc: Any) -> bytes:
    return (json.dumps(doc, indent=1) + "\n").encode("utf-8")


def verdict_json(v: Verdict | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {"status": v.status, "message": v.message, "mismatches": jsonable(list(v.mismatches))}


def prepare(field: str, out_dir: str) -> None:
    """Make ``out_dir`` ready for a new bundle: it may be new, empty, or hold an earlier bundle
    (whose ``summary.json``, ``junit.xml`` and ``cases/`` are removed, summary first).  A
    directory holding anything else is refused (:class:`ScenarioError` naming ``field``)."""
    check_output_dir(field, out_dir)
    if not os.path.isdir(out_dir):
        return
    others = sorted(set(os.listdir(out_dir)) - set(BUNDLE_ENTRIES))
    if others:
        raise ScenarioError(field, f"{out_dir!r} is neither empty nor a result bundle (it holds {others[0]!r})")
    try:
        for entry in BUNDLE_ENTRIES:
            p = os.path.join(out_dir, entry)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.remove(p)
    except OSError as e:
        raise ScenarioError(field, f"cannot remove the earlier bundle in {out_dir!r}: {e.strerror or e}") from None


def png_view(a: ImageArray) -> tuple[bytes | None, str]:
    """An 8-bit PNG of ``a`` for people, and how its values were mapped.  uint8 images are
    stored as they are; other integers and floats are scaled linearly so that ``lo`` (0, or the
    smallest value when negative; 0..1 floats keep 0..1) becomes 0 and the largest value 255;
    two channels get a zero blue channel; alpha is dropped (the .npy keeps it)."""
    from PIL import Image as PILImage

    a = np.asarray(a)
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.size == 0 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] > 4):
        return None, f"no PNG for shape {list(a.shape)}"
    if a.dtype == np.uint8:
        v, how = a, "as stored"
    elif a.dtype == np.bool_:
        v, how = a.astype(np.uint8) * np.uint8(255), "false 0, true 255"
    elif a.dtype.kind in "iuf":
        f = a.astype(np.float64)
        finite = np.isfinite(f)
        if not finite.any():
            f, finite = np.zeros_like(f), np.ones_like(finite)
        lo_v, hi_v = float(f[finite].min()), float(f[finite].max())
        lo = min(0.0, lo_v)
        hi = 1.0 if a.dtype.kind == "f" and lo_v >= 0.0 and hi_v <= 1.0 else hi_v
        scale = 255.0 / (hi - lo) if hi > lo else 0.0
        v = np.where(finite, np.clip(np.rint((f - lo) * scale), 0, 255), 0).astype(np.uint8)
        how = f"scaled linearly: {lo:g} -> 0, {hi:g} -> 255" + ("; NaN/inf -> 0" if not finite.all() else "")
    else:
        return None, f"no PNG for dtype {a.dtype}"
    if v.ndim == 3 and v.shape[2] == 2:
        v = np.concatenate([v, np.zeros_like(v[:, :, :1])], axis=2)
    if v.ndim == 3 and v.shape[2] == 4:
        v, how = v[:, :, :3], how + "; alpha dropped"
    buf = io.BytesIO()
    PILImage.fromarray(np.ascontiguousarray(v)).save(buf, format="PNG")
    return buf.getvalue(), how


def check_output(output: CaseOutput) -> None:
    """Raise ``ValueError`` when an output cannot be stored: an image name that is not a file
    name, an image that is not a plain numeric array, or info that is not JSON-able."""
    for name, img in output.images.items():
        if not isinstance(name, str) or not IMAGE_NAME_RE.fullmatch(name) or name == "case":
            raise ValueError(f"image name {name!r} is not a file name")
        if not isinstance(img, np.ndarray) or img.dtype.kind not in "biuf":
            raise ValueError(f"image {name!r} is not a numeric numpy array")
    json.dumps(jsonable(output.info))


def case_files(record: CaseRecord, output: CaseOutput | None,
               large_images: bool = True) -> tuple[CaseRecord, dict[str, bytes]]:
    """The files of one case directory and the record with its images listed.  Images larger
    than :data:`LARGE_IMAGE_BYTES` are omitted (and listed as omitted) unless ``large_images``."""
    files: dict[str, bytes] = {}
    images: list[ImageRecord] = []
    if output is not None:
        for name, img in output.images.items():
            meta = ImageRecord(name=name, shape=tuple(int(n) for n in img.shape), dtype=img.dtype.str,
                               nbytes=int(img.nbytes))
            if not large_images and img.nbytes > LARGE_IMAGE_BYTES:
                images.append(attrs.evolve(meta, omitted=f"larger than {LARGE_IMAGE_BYTES} bytes "
                                                         "(--no-large-images)"))
                continue
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(img), allow_pickle=False)
            npy = f"{name}.npy.xz"
            pixel = img.dtype.itemsize * (img.shape[2] if img.ndim == 3 else 1)
            filters = [{"id": lzma.FILTER_DELTA, "dist": max(1, min(pixel, 256))},
                       {"id": lzma.FILTER_LZMA2, "preset": XZ_PRESET}]
            files[npy] = lzma.compress(buf.getvalue(), format=lzma.FORMAT_XZ, filters=filters)
            png, how = png_view(img)
            if png is not None:
                files[f"{name}.png"] = png
            images.append(attrs.evolve(meta, npy=npy, png=png is not None, png_view=how))
        record = attrs.evolve(record, info=jsonable(output.info), images=tuple(images))
    files["case.json"] = _dumps(case_json(record))
    return record, files


def case_json(r: CaseRecord) -> dict[str, Any]:
    return {
        "name": r.name, "backend": r.backend, "description": r.description, "needs_device": r.needs_device,
        "scene": jsonable(r.scene), "device": jsonable(r.device), "status": r.status,
        "verdict": verdict_json(r.verdict), "ran": r.ran, "validation_messages": list(r.validation),
        "seconds": round(r.seconds, 6), "info": jsonable(r.info),
        "images": [{"name": i.name, "shape": list(i.shape), "dtype": i.dtype, "bytes": i.nbytes,
                    "npy": None if i.omitted else i.npy,
                    "png": f"{i.name}.png" if i.png else None, "png_view": i.png_view, "omitted": i.omitted}
                   for i in r.images],
    }


def case_dir(out_dir: str, name: str) -> str:
    return os.path.join(out_dir, "cases", name)


def write_case(field: str, out_dir: str, name: str, files: Mapping[str, bytes]) -> None:
    write_files(field, case_dir(out_dir, name), files)


def summary_json(device: Mapping[str, Any] | None, records: Sequence[CaseRecord], interrupted: bool,
                 selection: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "format": FORMAT, "version": VERSION, "device": jsonable(device), "selection": jsonable(selection),
        "interrupted": interrupted, "counts": counts(records), "closing_line": closing_line(counts(records)),
        "cases": [{"name": r.name, "backend": r.backend, "status": r.status, "message": r.message,
                   "seconds": round(r.seconds, 6)} for r in records],
    }


def write_summary(field: str, out_dir: str, device: Mapping[str, Any] | None, records: Sequence[CaseRecord],
                  interrupted: bool, selection: Mapping[str, Any], junit: bytes) -> None:
    """``junit.xml`` (the document ``junit``, :func:`vk_tests.suite.junit.junit_xml` of the
    records), then ``summary.json`` (renamed into place in that order)."""
    write_files(field, out_dir, {
        "junit.xml": junit,
        "summary.json": _dumps(summary_json(device, records, interrupted, selection)),
    })


# ---- reading ----------------------------------------------------------------------------------

def _read_json(field: str, path: str) -> Any:
    try:
        size = os.path.getsize(path)
        if size > MAX_JSON_BYTES:
            raise ScenarioError(field, f"{path}: {size} bytes, more than {MAX_JSON_BYTES}")
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except ScenarioError:
        raise
    except OSError as e:
        raise ScenarioError(field, f"cannot read {path}: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:
        raise ScenarioError(field, f"{path} is not JSON: {e}") from None


def _want(field: str, doc: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    """``doc[key]`` if it is a ``kind`` (a bool is not a number here), else a refusal."""
    v = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(v, kind) or (isinstance(v, bool) and kind is not bool):
        raise ScenarioError(field, f"'{key}' is missing or has the wrong type")
    return v


def _verdict(field: str, v: Any) -> Verdict | None:
    if v is None:
        return None
    status = _want(field, v, "status", str)
    if status not in STATUSES:
        raise ScenarioError(field, f"verdict status must be one of {', '.join(STATUSES)}, got {status!r}")
    mismatches = _want(field, v, "mismatches", list)
    if not all(isinstance(m, dict) for m in mismatches):
        raise ScenarioError(field, "verdict mismatches must be objects")
    return Verdict(status=status, message=_want(field, v, "message", str), mismatches=tuple(mismatches))


def _image(field: str, d: Any, version: int) -> ImageRecord:
    name = _want(field, d, "name", str)
    if not IMAGE_NAME_RE.fullmatch(name):
        raise ScenarioError(field, f"image name {name!r} is not a file name")
    npy = d.get("npy")
    want = f"{name}.npy" if version == 1 else f"{name}.npy.xz"
    if npy is not None and npy != want:
        raise ScenarioError(field, f"image {name!r}: 'npy' must be {want!r} in a version {version} bundle, got {npy!r}")
    shape = _want(field, d, "shape", list)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise ScenarioError(field, f"image {name!r}: shape must be a list of sizes")
    omitted = d.get("omitted")
    return ImageRecord(name=name, shape=tuple(shape), dtype=_want(field, d, "dtype", str),
                       nbytes=_want(field, d, "bytes", int), npy=npy, png=d.get("png") is not None,
                       png_view=str(d.get("png_view", "")),
                       omitted=None if omitted is None else str(omitted))


def _record(field: str, doc: Any, name: str, version: int) -> CaseRecord:
    if not isinstance(doc, dict):
        raise ScenarioError(field, "must be a JSON object")
    if doc.get("name") != name:
        raise ScenarioError(field, f"names case {doc.get('name')!r}, the summary {name!r}")
    images = tuple(_image(f"{field}.images", d, version) for d in _want(field, doc, "images", list))
    device = doc.get("device")
    return CaseRecord(
        name=name, backend=_want(field, doc, "backend", str), description=_want(field, doc, "description", str),
        needs_device=_want(field, doc, "needs_device", bool), scene=_want(field, doc, "scene", dict),
        device=device if isinstance(device, dict) else None, verdict=_verdict(f"{field}.verdict", doc.get("verdict")),
        ran=_want(field, doc, "ran", bool), validation=tuple(str(m) for m in _want(field, doc,
                                                                                    "validation_messages", list)),
        seconds=float(_want(field, doc, "seconds", (int, float))), info=_want(field, doc, "info", dict),
        images=images)


def load_bundle(path: str, field: str = "bundle") -> Bundle:
    """Read a bundle written by a suite run (refusals: :class:`ScenarioError` naming ``field``)."""
    summary_path = os.path.join(path, "summary.json")
    if not os.path.isdir(path):
        raise ScenarioError(field, f"{path!r} is not a directory")
    if not os.path.isfile(summary_path):
        raise ScenarioError(field, f"{path!r} has no summary.json (not a bundle, or a run that did not finish)")
    summary = _read_json(field, summary_path)
    if not isinstance(summary, dict) or summary.get("format") != FORMAT:
        raise ScenarioError(field, f"{summary_path} is not a {FORMAT}")
    version = summary.get("version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise ScenarioError(field, f"bundle version {version!r}; this turnip-fdm reads versions "
                                   f"{', '.join(map(str, READ_VERSIONS))}")
    records = []
    for i, row in enumerate(_want(field, summary, "cases", list)):
        name = _want(f"{field}.cases[{i}]", row, "name", str)
        if not NAME_RE.fullmatch(name):
            raise ScenarioError(f"{field}.cases[{i}]", f"{name!r} is not a case name")
        d = case_dir(path, name)
        records.append(_record(f"{field}: cases/{name}/case.json", _read_json(field, os.path.join(d, "case.json")),
                               name, version))
    device = summary.get("device")
    return Bundle(path=path, device=device if isinstance(device, dict) else None,
                  interrupted=bool(summary.get("interrupted")), records=tuple(records))


def _check_header(field: str, path: str, shape: tuple[int, ...], dtype: np.dtype[Any]) -> int:
    """The data size a ``.npy`` header announces, refused unless a numeric image of at most
    :data:`MAX_NPY_BYTES`."""
    if dtype.hasobject or dtype.kind not in "biuf":
        raise ScenarioError(field, f"{path}: dtype {dtype} is not a numeric image")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > MAX_NPY_BYTES:
        raise ScenarioError(field, f"{path}: {nbytes} bytes, more than {MAX_NPY_BYTES}")
    return int(nbytes)


def _read_header(f: Any) -> tuple[tuple[int, ...], np.dtype[Any]]:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
    else:
        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    return shape, dtype


def _header_end(head: bytes) -> int | None:
    """Where the ``.npy`` header of ``head`` ends (None: not yet known), from its magic and
    length field; refuses a header longer than :data:`MAX_NPY_HEADER`."""
    if len(head) < 12:
        return None
    if head[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy (bad magic)")
    size, length = (10, int.from_bytes(head[8:10], "little")) if head[6] == 1 else \
        (12, int.from_bytes(head[8:12], "little"))
    if length > MAX_NPY_HEADER:
        raise ValueError(f"header of {length} bytes, more than {MAX_NPY_HEADER}")
    return size + length


def _load_xz(field: str, path: str) -> ImageArray:
    """A ``.npy.xz`` image, decompressed piecewise: the header is checked before the data is
    decompressed, and never more than the header announces is decompressed (a compressed
    file cannot make the reader allocate more than :data:`MAX_NPY_BYTES`)."""
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=XZ_MEMLIMIT)
    out = bytearray()
    limit = 12 + MAX_NPY_HEADER
    header_end: int | None = None
    with open(path, "rb") as f:
        while not dec.eof:
            chunk = f.read(1 << 16) if dec.needs_input else b""
            if dec.needs_input and not chunk:
                raise ValueError("truncated xz stream")
            out += dec.decompress(chunk, max_length=limit + 1 - len(out))
            if header_end is None:
                header_end = _header_end(bytes(out[:12]))
                if header_end is not None and len(out) >= header_end:
                    shape, dtype = _read_header(io.BytesIO(bytes(out[:header_end])))
                    limit = header_end + _check_header(field, path, shape, dtype)
                elif header_end is not None:
                    header_end = None  # the whole header is not decompressed yet
            if len(out) > limit:
                raise ValueError(f"more data than its header announces ({limit} bytes)")
        if f.read(1) or dec.unused_data:
            raise ValueError("data after the xz stream")
    if header_end is None or len(out) != limit:
        raise ValueError("truncated image")
    return np.load(io.BytesIO(bytes(out)), allow_pickle=False)


def load_npy(field: str, path: str) -> ImageArray:
    """One stored image (``.npy``, or ``.npy.xz`` from a version 2 bundle); its header is
    checked (no objects, at most :data:`MAX_NPY_BYTES`) before the data is read."""
    try:
        if path.endswith(".xz"):
            return _load_xz(field, path)
        with open(path, "rb") as f:
            shape, dtype = _read_header(f)
        _check_header(field, path, shape, dtype)
        return np.load(path, allow_pickle=False)
    except ScenarioError:
        raise
    except OSError as e:
        raise ScenarioError(field, f"cannot read {path}: {e.strerror or e}") from None
    except (ValueError, EOFError, lzma.LZMAError) as e:
        raise ScenarioError(field, f"{path} is not a .npy image: {e}") from None


def load_output(bundle: Bundle, record: CaseRecord, field: str = "bundle") -> CaseOutput:
    """The stored output of a case that ran (every image must be stored, none omitted)."""
    d = case_dir(bundle.path, record.name)
    images = {i.name: load_npy(field, os.path.join(d, i.npy or f"{i.name}.npy")) for i in record.images}
    return CaseOutput(images=images, info=record.info)
