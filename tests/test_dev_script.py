"""``./dev`` tells a new user what it is doing before the slow parts: the first run says it is
setting up ``.venv`` before pip runs (and is quiet once it is set up), and ``./dev test`` names
the Debian packages it will apt-install (chromium, ...) before apt-get runs, and that apt-get
waits for a package lock another apt or dpkg holds (``DPkg::Lock::Timeout``) instead of failing;
an unknown task is named, with the task list, status 2.  The script runs in
a scratch copy with stub ``python3``, ``dpkg``, ``apt-get`` and ``sudo`` on PATH: nothing is
installed."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("bash") is None, reason="a bash script")

STUB_PYTHON = """#!/bin/sh
# python3 -m venv DIR: makes DIR/bin/python (this stub again) and DIR/bin/turnip-fdm
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"; cp "$0" "$3/bin/python"
    printf '#!/bin/sh\\necho "STUB turnip-fdm $*" >&2\\n' > "$3/bin/turnip-fdm"; chmod +x "$3/bin/turnip-fdm"; exit 0
fi
echo "STUB python $*" >&2
"""


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def scratch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy2(REPO / "dev", work / "dev")
    (work / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    executable(stubs / "python3", STUB_PYTHON)
    executable(stubs / "dpkg", '#!/bin/sh\ncase "$2" in chromium|glslang-tools) exit 1;; esac\nexit 0\n')
    executable(stubs / "apt-get", '#!/bin/sh\necho "STUB apt-get $*" >&2\n')
    executable(stubs / "sudo", '#!/bin/sh\nexec "$@"\n')
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}")
    return work, env


def run_dev(work: Path, env: dict[str, str], *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(work / "dev"), *argv], cwd=cwd or work, env=env, capture_output=True,
                          text=True, timeout=60)


def dev(work: Path, env: dict[str, str], *argv: str) -> list[str]:
    r = run_dev(work, env, *argv)
    assert r.returncode == 0, r.stderr
    return r.stderr.splitlines()


def first(lines: list[str], words: str) -> int:
    return next(i for i, ln in enumerate(lines) if words in ln)


def test_first_run_says_it_is_setting_up(scratch: tuple[Path, dict[str, str]]) -> None:
    work, env = scratch
    lines = dev(work, env, "demo")
    assert first(lines, "dev: first run: setting up .venv") < first(lines, "STUB python -m pip install")
    assert first(lines, "STUB python -m pip install") < first(lines, ". .venv/bin/activate' puts turnip-fdm on PATH")
    assert lines[-1] == "STUB turnip-fdm demo"
    again = dev(work, env, "demo")
    assert again == ["STUB turnip-fdm demo"]   # set up: nothing more to say


def test_test_names_the_debian_packages_before_installing(scratch: tuple[Path, dict[str, str]]) -> None:
    work, env = scratch
    lines = dev(work, env, "test")
    said = first(lines, "dev: installing Debian packages with apt-get")
    assert "glslang-tools chromium" in lines[said]
    assert said < first(lines, "STUB apt-get update") < first(lines, "STUB apt-get install")
    assert first(lines, "the whole suite: about 7 minutes") < first(lines, "STUB python -m pytest")
    assert not any("about 7 minutes" in ln for ln in dev(work, env, "test", "tests/cli"))


TASKS = ("demo", "test", "test-fast", "lint", "fuzz [N]", "suite ARGS...", "run ARGS...", "help")


@pytest.mark.parametrize("argv", [["bogus"], [], ["--bogus"]])
def test_an_unknown_task_is_named_with_the_task_list(scratch: tuple[Path, dict[str, str]], argv: list[str],
                                                     tmp_path: Path) -> None:
    work, env = scratch
    r = run_dev(work, env, *argv, cwd=tmp_path)   # from another directory too
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and r.stdout == ""
    assert lines[0] == (f"dev: unknown task '{argv[0]}'" if argv else "dev: no task given")
    assert lines[1] == "tasks:"
    assert [ln.split()[1] for ln in lines[2:]] == [t.split()[0] for t in TASKS]
    assert "set -euo pipefail" not in r.stderr


def test_help_prints_the_task_list(scratch: tuple[Path, dict[str, str]]) -> None:
    work, env = scratch
    r = run_dev(work, env, "help")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "tasks:"
    assert all(f"  ./dev {t}" in r.stdout for t in TASKS)


def test_apt_get_waits_for_the_package_lock(scratch: tuple[Path, dict[str, str]]) -> None:
    work, env = scratch
    lines = dev(work, env, "test", "tests/cli")
    assert any("waits up to 10 minutes" in ln for ln in lines)
    calls = [ln for ln in lines if ln.startswith("STUB apt-get")]
    assert len(calls) == 2 and all("-o DPkg::Lock::Timeout=600" in c for c in calls), calls


def test_a_busy_lock_without_the_wait_fails_like_apt(scratch: tuple[Path, dict[str, str]]) -> None:
    """The stub apt-get fails as apt does when the lock is held and the timeout is not given:
    the check above is what keeps ./dev test from failing that way."""
    work, env = scratch
    stubs = Path(env["PATH"].split(":")[0])
    busy = ('#!/bin/sh\ncase "$*" in *DPkg::Lock::Timeout=*) echo "STUB apt-get $*" >&2; exit 0;; esac\n'
            'echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2; exit 100\n')
    executable(stubs / "apt-get", busy)
    assert dev(work, env, "test", "tests/cli")[-1] == "STUB python -m pytest tests/cli"
    (work / "dev").write_text((work / "dev").read_text().replace(' "${lock[@]}"', ""))
    r = run_dev(work, env, "test", "tests/cli")
    assert r.returncode == 100 and "Could not get lock" in r.stderr
