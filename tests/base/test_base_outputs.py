"""turnip_base.outputs: a user-given output path that cannot be written is a ScenarioError naming
the flag and the path (never an OSError), and nothing partial is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnip_base.errors import ScenarioError
from turnip_base.outputs import make_dir, write_bytes, write_text

FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this machine")


def test_writes_a_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    write_text("--json", target, "{}\n")
    write_bytes("--json", target, b"[]\n")  # replaces
    assert target.read_bytes() == b"[]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


@needs_dev_full
def test_a_full_device_is_the_users_condition() -> None:
    with pytest.raises(ScenarioError) as e:
        write_bytes("--junit", FULL, b"x" * 10)
    assert str(e.value) == "--junit: cannot write /dev/full: No space left on device"
    assert FULL.is_char_device()  # written in place, never replaced by a rename


@pytest.mark.parametrize(("make", "reason"), [
    (lambda d: d / "missing" / "x.txt", "No such file or directory"),
    (lambda d: d, "Is a directory"),
    (lambda d: d / "file.txt" / "x.txt", "Not a directory"),
])
def test_unwritable_file_paths(tmp_path: Path, make: object, reason: str) -> None:
    (tmp_path / "file.txt").write_text("keep")
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(ScenarioError) as e:
        write_text("--out", path, "data")
    assert str(e.value) == f"--out: cannot write {path}: {reason}"
    assert (tmp_path / "file.txt").read_text() == "keep"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_make_dir(tmp_path: Path) -> None:
    assert make_dir("--out", tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").is_dir()
    assert make_dir("--out", str(tmp_path)) == tmp_path  # an existing one is fine
    (tmp_path / "f").write_text("")
    for bad in (tmp_path / "f", tmp_path / "f" / "sub"):
        with pytest.raises(ScenarioError) as e:
            make_dir("--keep", bad)
        assert str(e.value) == f"--keep: cannot write {bad}: Not a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only-mode directory")
def test_a_directory_without_write_permission(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ScenarioError, match="Permission denied"):
        write_text("--out", locked / "x", "data")
    with pytest.raises(ScenarioError, match="Permission denied"):
        make_dir("--out", locked)


@pytest.mark.parametrize("bad", ["", "a\0b"])
def test_empty_or_nul_paths(bad: str) -> None:
    with pytest.raises(ScenarioError, match="^--out: must be a non-empty path"):
        write_text("--out", bad, "x")
    with pytest.raises(ScenarioError, match="^--out: must be a non-empty path"):
        make_dir("--out", bad)
