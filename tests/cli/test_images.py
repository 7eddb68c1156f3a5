"""Density images refused by their header, in the documented words (docs/scenario.md, Limits):
``FIELD: 'P' is WxH texels; ...``, once, before any pixel is decoded - not Pillow's
decompression-bomb text, not the same refusal wrapped in ``cannot read image``."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from turnip_fdm import cli

FIELD = "density.views[0].image"


def png_header(w: int, h: int) -> bytes:
    """A PNG that claims ``w x h`` pixels but carries no image data."""
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def plan_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], image: str) -> str:
    scenario = {"gpu": "a750", "framebuffer": [1920, 1920], "views": 1, "density": {"views": [{"image": image}]}}
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    status = cli.main(["plan", str(tmp_path / "s.json")])
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (status, out)
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(("w", "h"), [(60000, 60000), (60000, 100000), (5000, 5000), (5000, 10), (10, 4097)])
def test_oversized_header_one_documented_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              w: int, h: int) -> None:
    (tmp_path / "map.png").write_bytes(png_header(w, h))
    line = plan_line(tmp_path, capsys, "map.png")
    path = str(tmp_path / "map.png")
    assert line == (f"turnip-fdm: error: {FIELD}: {path!r} is {w}x{h} texels; a density-map layer has at most "
                    f"4096 per axis and 1048576 in all")
    assert line.count(FIELD) == 1 and "bomb" not in line and "cannot read" not in line


def test_a_real_oversized_image_is_refused_the_same_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Image.new("RGB", (5000, 10)).save(tmp_path / "wide.bmp")
    line = plan_line(tmp_path, capsys, "wide.bmp")
    assert line.endswith("is 5000x10 texels; a density-map layer has at most 4096 per axis and 1048576 in all")
    assert line.count(FIELD) == 1


def test_pillows_own_limit_is_restored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = Image.MAX_IMAGE_PIXELS
    (tmp_path / "map.png").write_bytes(png_header(60000, 60000))
    plan_line(tmp_path, capsys, "map.png")
    assert Image.MAX_IMAGE_PIXELS == before


def test_unreadable_image_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "map.png").write_bytes(png_header(32, 20)[:30])
    line = plan_line(tmp_path, capsys, "map.png")
    assert line.startswith(f"turnip-fdm: error: {FIELD}: cannot read image ") and line.count(FIELD) == 1
    (tmp_path / "map.png").write_bytes(png_header(32, 20))   # a header and no pixels: decoding fails
    line = plan_line(tmp_path, capsys, "map.png")
    assert line.startswith(f"turnip-fdm: error: {FIELD}: cannot read image ") and line.count(FIELD) == 1


def test_a_good_image_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Image.new("RGB", (60, 60), (128, 255, 0)).save(tmp_path / "map.png")
    scenario = {"gpu": "a750", "framebuffer": [1920, 1920], "views": 1, "density": {"views": [{"image": "map.png"}]}}
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    assert cli.main(["check", str(tmp_path / "s.json")]) == 0
    assert "valid" in capsys.readouterr().out
