"""Writing a user-given output path under the error contract: one helper for every command.

A path the user named (``--out``, ``--json FILE``, ``--junit``, ``--keep`` ...) that cannot be
written - a full disk (``/dev/full``, ``ENOSPC``, ``EDQUOT``), a read-only file system
(``EROFS``), no permission (``EACCES``), a missing or non-directory parent (``ENOENT``,
``ENOTDIR``), a directory where a file is wanted (``EISDIR``) - is the user's condition, not a
bug: each function here turns the ``OSError`` into
:class:`~turnip_base.errors.ScenarioError` ``(field, "cannot write PATH: REASON")``, so the
command exits 2 with the one line ``turnip-fdm: error: FIELD: cannot write PATH: REASON``.

A regular file is written all or nothing: the bytes go to a temporary file beside it, which is
renamed over the path only once everything is written (a failure removes the temporary file and
leaves an existing file as it was).  A path that exists and is not a regular file (a character
device such as ``/dev/full`` or ``/dev/stdout``, a FIFO) is written in place: it is never
replaced by a rename.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from .errors import ScenarioError

__all__ = ["cannot_write", "check_writable_dir", "make_dir", "write_bytes", "write_text"]

PathArg = str | os.PathLike[str]


def cannot_write(field: str, path: PathArg, error: OSError | ValueError) -> ScenarioError:
    """The refusal for ``path`` that could not be written because of ``error``."""
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return ScenarioError(field, f"cannot write {os.fspath(path)}: {reason}")


def _check_name(field: str, name: str) -> None:
    if not name or "\0" in name:
        raise ScenarioError(field, "must be a non-empty path without NUL characters")


def _is_special(path: str) -> bool:
    """``path`` exists and is neither a regular file nor a directory (a device, a FIFO, ...)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _write_in_place(path: str, data: bytes) -> None:
    with open(path, "wb") as f:  # the flush on close reports ENOSPC of a device such as /dev/full
        f.write(data)


def _temporary_beside(path: str) -> tuple[int, str]:
    """A new file beside ``path``, created with the usual permissions (0666 less the umask)."""
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), directory)


def _write_atomically(path: str, data: bytes) -> None:
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)  # before a temporary file exists
    fd, tmp = _temporary_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_bytes(field: str, path: PathArg, data: bytes) -> None:
    """Write ``data`` to ``path`` (all or nothing for a regular file); a failure raises
    :class:`ScenarioError` ``(field, "cannot write PATH: REASON")``."""
    name = os.fspath(path)
    _check_name(field, name)
    try:
        if _is_special(name):
            _write_in_place(name, data)
        else:
            _write_atomically(name, data)
    except (OSError, ValueError) as e:
        raise cannot_write(field, path, e) from None


def write_text(field: str, path: PathArg, text: str, encoding: str = "utf-8") -> None:
    """:func:`write_bytes` of ``text`` encoded (UTF-8 by default)."""
    write_bytes(field, path, text.encode(encoding))


def make_dir(field: str, path: PathArg) -> Path:
    """Create directory ``path`` with its missing parents (an existing one is fine) and check
    that files can be created in it; returns it as a :class:`Path`.  A failure raises
    :class:`ScenarioError` ``(field, "cannot write PATH: REASON")``."""
    name = os.fspath(path)
    _check_name(field, name)
    try:
        os.makedirs(name, exist_ok=True)
    except FileExistsError as e:  # the path exists and is not a directory
        raise cannot_write(field, path, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), e.filename)) from None
    except (OSError, ValueError) as e:
        raise cannot_write(field, path, e) from None
    check_writable_dir(field, name)
    return Path(name)


def check_writable_dir(field: str, path: PathArg) -> None:
    """Refuse an existing directory in which no file can be created: ``cannot write PATH:
    Read-only file system`` (``EROFS``) or ``Permission denied`` (``EACCES``)."""
    if not os.access(path, os.W_OK | os.X_OK):
        err = errno.EROFS if _read_only(path) else errno.EACCES
        raise cannot_write(field, path, OSError(err, os.strerror(err), os.fspath(path)))


def _read_only(path: PathArg) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
