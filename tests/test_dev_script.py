"""``./dev`` tells a new user what it is doing before the slow parts: the first run says it is
setting up ``.venv`` before pip runs (and is quiet once it is set up), and ``./dev test`` names
the Debian packages it will apt-install (chromium, ...) before apt-get runs.  The script runs in
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


def dev(work: Path, env: dict[str, str], *argv: str) -> list[str]:
    r = subprocess.run(["bash", str(work / "dev"), *argv], cwd=work, env=env, capture_output=True, text=True,
                       timeout=60)
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
