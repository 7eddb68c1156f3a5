"""The recorded device runs under ``results/`` are re-derived by this version's judges.

``results/h100/`` (outside the installed packages) keeps every image the NVIDIA H100 read back (bundle version 2), so
``turnip-fdm vk check`` judges its replay and fsr cases again from the pixels: a change of the
model or an oracle that would have turned one of the device's verdicts shows up here, with the
case's name, and no device is needed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from turnip_fdm.cli import main

H100 = Path(__file__).resolve().parents[2] / "results" / "h100"

#: re-deriving a whole bundle judges every stored image again (a minute on 2 cores)
pytestmark = pytest.mark.slow


def check(capsys: pytest.CaptureFixture[str], bundle: Path) -> tuple[int, list[str]]:
    status = main(["vk", "check", str(bundle)])
    return status, capsys.readouterr().out.splitlines()


def test_the_h100_run_is_re_derived(capsys: pytest.CaptureFixture[str]) -> None:
    summary = json.loads((H100 / "summary.json").read_text())
    status, lines = check(capsys, H100)
    n = len(summary["cases"])
    assert status == 0, [ln for ln in lines if not ln.startswith("same")]
    assert lines[-1] == f"{n} same, 0 differ, 0 unknown, 0 unchecked"
    ran = {c["backend"] for c in summary["cases"] if c["status"] == "Pass"}
    assert {"host", "replay", "fsr"} <= ran  # replay and fsr ran for real on the H100


def test_a_changed_pixel_of_the_h100_run_is_seen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The re-derivation reads the stored pixels: one fragment of an fsr case changed differs."""
    import io
    import lzma

    import numpy as np

    copy = tmp_path / "h100"
    shutil.copytree(H100, copy)
    case = copy / "cases" / "fsr.attachment_grid.uniform_2x2.a730"
    doc = json.loads((case / "case.json").read_text())
    name = doc["images"][0]["npy"]
    raw = lzma.decompress((case / name).read_bytes())
    img = np.load(io.BytesIO(raw), allow_pickle=False)
    img[0, 0] = img[0, 0] + 1
    buf = io.BytesIO()
    np.save(buf, img)
    (case / name).write_bytes(lzma.compress(buf.getvalue()))
    status, lines = check(capsys, copy)
    assert status == 1
    assert any(ln.startswith("DIFFERS") and "fsr.attachment_grid.uniform_2x2.a730" in ln for ln in lines)
