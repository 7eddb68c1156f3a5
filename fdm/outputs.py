"""Writing command output with the error contract: checked before any work is done, written
all-or-nothing after it.

One rule for ``--json`` and ``--out`` in every command (:func:`check_json_or_out`): ``--json``
prints one JSON document to standard output and writes no file; ``--out DIR`` writes the
command's files into DIR and prints only a summary; the two together are refused (exit 2,
``turnip-fdm: error: --out: ...``) before any work.

Every command that writes files (``plan --out``, ``layout --out``, ``demo --out``) first calls
:func:`check_output_dir` (so a bad path is refused before a plan is computed), then hands
everything it writes to :func:`write_files` at once (a single file: :func:`turnip_base.outputs.write_bytes`).
A failure while writing removes what this call created and raises
:class:`~turnip_base.errors.ScenarioError` naming the flag and the path (``cannot write PATH: REASON``,
the words of the bottom layer's one writer, :mod:`turnip_base.outputs`): nothing partial stays
behind (no ``*.tmp``, no half-filled directory).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Mapping

from turnip_base.errors import ScenarioError
from turnip_base.outputs import cannot_write, check_writable_dir

#: longest output path accepted (bytes of the absolute path; Linux PATH_MAX is 4096)
MAX_PATH_BYTES = 4000
#: longest path component (bytes; NAME_MAX of the common Linux file systems)
MAX_NAME_BYTES = 255


#: the rule's refusal, the same words for every command
JSON_OR_OUT = ("--json prints one JSON document to standard output and writes no file, --out writes the "
               "files into a directory: give one of them")


def check_json_or_out(json: bool, out: str | None) -> None:
    """The one ``--json`` / ``--out`` rule of every command: both at once are refused."""
    if json and out is not None:
        raise ScenarioError("--out", JSON_OR_OUT)


def _check_path(field: str, path: str) -> str:
    if not isinstance(path, str) or not path or "\0" in path:
        raise ScenarioError(field, "must be a non-empty path")
    full = os.path.abspath(path)
    if len(os.fsencode(full)) > MAX_PATH_BYTES:
        raise ScenarioError(field, f"path is longer than {MAX_PATH_BYTES} bytes")
    for part in full.split(os.sep):
        if len(os.fsencode(part)) > MAX_NAME_BYTES:
            raise ScenarioError(field, f"a path component is longer than {MAX_NAME_BYTES} bytes")
    return full


def _existing_ancestor(field: str, full: str) -> str:
    """The nearest existing ancestor of ``full``; it must be a writable directory."""
    parent = os.path.dirname(full)
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise cannot_write(field, full, NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), parent))
    check_writable_dir(field, parent)
    return parent


def check_output_dir(field: str, path: str) -> None:
    """Refuse an output directory path that cannot be written, before any work is done."""
    full = _check_path(field, path)
    if os.path.lexists(full):
        if not os.path.isdir(full):
            raise cannot_write(field, path, NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path))
        check_writable_dir(field, full)
        return
    _existing_ancestor(field, full)


#: the list of files the last ``write_files(..., replace=True)`` wrote into a directory
MANIFEST = ".turnip-fdm-files"


def _manifest(full: str) -> list[str]:
    try:
        with open(os.path.join(full, MANIFEST), encoding="utf-8") as f:
            names = f.read().splitlines()
    except OSError:
        return []
    return [n for n in names if n and os.path.basename(n) == n and n not in (".", "..", MANIFEST)]


def write_files(field: str, out_dir: str, files: Mapping[str, bytes], *, replace: bool = False) -> list[str]:
    """Write ``files`` (name -> bytes) into ``out_dir``, all or nothing; returns their paths.

    The files are first written to a staging directory beside or inside ``out_dir``; only when
    all are written are they renamed into place.  On any ``OSError`` everything this call
    created is removed and :class:`ScenarioError` (``field``: the reason) is raised.

    ``replace``: ``out_dir`` is the output of one command (``layout``, ``demo``, ``plan``,
    ``diff``): the files an earlier such run wrote there (listed in :data:`MANIFEST`) that this
    run does not write are removed after the new ones are in place, so a reused folder holds no
    stale pictures; files the command never wrote are left alone."""
    full = _check_path(field, out_dir)
    if replace:
        files = {**files, MANIFEST: "".join(f"{n}\n" for n in sorted(files)).encode("utf-8")}
    created: list[str] = []  # directories this call made, outermost first
    stage = ""
    try:
        missing = []
        d = full
        while not os.path.isdir(d):
            missing.append(d)
            d = os.path.dirname(d)
        for m in reversed(missing):
            os.mkdir(m)
            created.append(m)
        stage = tempfile.mkdtemp(prefix=".turnip-fdm-", dir=full)
        for name, data in files.items():
            if os.path.basename(name) != name or name in ("", ".", ".."):
                raise ScenarioError(field, f"bad output file name {name!r}")
            with open(os.path.join(stage, name), "wb") as f:  # staged: an error names out_dir, below
                f.write(data)
        stale = [n for n in _manifest(full) if n not in files] if replace else []
        paths = []
        for name in files:
            dst = os.path.join(full, name)
            if os.path.isdir(dst):
                raise cannot_write(field, dst, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), dst))
            os.replace(os.path.join(stage, name), dst)
            if name != MANIFEST:
                paths.append(dst)
        for name in stale:
            old = os.path.join(full, name)
            if os.path.isfile(old) and not os.path.islink(old):
                os.remove(old)
        return paths
    except OSError as e:
        for m in reversed(created):
            shutil.rmtree(m, ignore_errors=True)
        raise cannot_write(field, full, e) from None
    except ScenarioError:
        for m in reversed(created):
            shutil.rmtree(m, ignore_errors=True)
        raise
    finally:
        if stage and os.path.isdir(stage):
            shutil.rmtree(stage, ignore_errors=True)
