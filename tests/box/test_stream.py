"""The box's stream side without a box: the .rd reader, the PM4 walk, the register fields, the
scenario translation and the apt-sources reading, on hand-made inputs whose answers are written
out from adreno_pm4.xml / a6xx.xml, not from the code under test."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fdm
from turnip_base.errors import NotSupported, ScenarioError
from turnip_box import registers as R
from turnip_box.compare import viewport_regs
from turnip_box.decode import driver_pass
from turnip_box.jobs import Unrecordable, job_of, model_scenario, tu_debug_of
from turnip_box.pm4 import Listener, StreamError, walk
from turnip_box.rd import RD_GPU_ID, read_rd
from turnip_box.root import apt_mirror

from .streams import f32bits, pkt4, pkt7, rd_file

IB1, IB2, DS, PATCHED = 0x1000, 0x2000, 0x3000, 0x4000












def _pass(tmp: Path) -> Path:
    """A two-bin pass: a draw-state group holds the viewport (a CONTEXT_REG_BUNCH), and each bin
    rewrites it with CP_MEM_WRITE before drawing, as turnip's FDM patchpoints do."""
    def vp_group(x_off: float, x_scale: float) -> list[int]:
        return pkt7(0x5C, R.GRAS_CL_VIEWPORT, f32bits(x_off), R.GRAS_CL_VIEWPORT + 1, f32bits(x_scale))

    group = vp_group(0.0, 0.0)
    draw = pkt7(0x38, 0x84, 1, 3)  # CP_DRAW_INDX_OFFSET, a triangle list
    ib2 = draw
    ib1: list[int] = []
    ib1 += pkt7(0x43, (len(group) << 0) | (3 << 24), DS, 0)          # SET_DRAW_STATE group 3
    for b, (xo, xs) in enumerate(((100.0, 50.0), (300.0, 25.0))):
        ib1 += pkt7(0x65, 0x14)                                     # CP_SET_MARKER: RM6_BIN_RENDER_START
        ib1 += pkt4(R.GRAS_SC_WINDOW_SCISSOR_TL, 0, (95 << 16) | (191 + 192 * b))
        ib1 += pkt4(R.GRAS_SC_BIN_CNTL, (6 | (2 << 8)) | ((1 << 27) if b else 0))
        ib1 += pkt7(0x3D, DS, 0, *vp_group(xo, xs))                 # CP_MEM_WRITE over the group
        ib1 += pkt7(0x47, (3 << 28) | (1 << 27), 2)                 # COND_REG_EXEC: sysmem only
        ib1 += pkt4(R.RB_WINDOW_OFFSET, 0xDEAD)                     # ... skipped in GMEM
        ib1 += pkt7(0x3F, IB2, 0, len(ib2))                         # CP_INDIRECT_BUFFER
    return rd_file(tmp, {IB1: ib1, IB2: ib2, DS: group + [0] * 4}, IB1, len(ib1))


def test_rd_reader_gzip_and_plain(tmp_path: Path) -> None:
    for gz in (True, False):
        d = read_rd(rd_file(tmp_path, {IB1: pkt4(0x8000, 7)}, IB1, 2, gz=gz))
        assert d.gpu_id == 730 and d.chip_id == 0x07030001
        assert d.cmdstreams == ((IB1, 2),)
        assert d.buffers[0].iova == IB1 and bytes(d.buffers[0].data or b"")[:4] == struct.pack("<I", 0x40800001)


def test_rd_truncated_is_one_error(tmp_path: Path) -> None:
    p = tmp_path / "t.rd"
    p.write_bytes(struct.pack("<II", RD_GPU_ID, 100) + b"\0" * 4)
    with pytest.raises(ScenarioError, match="claims 100 bytes"):
        read_rd(p)


def test_walk_applies_patches_per_bin(tmp_path: Path) -> None:
    dp = driver_pass(read_rd(_pass(tmp_path)), slots=1, chip=7)
    assert dp.render_mode == "gmem" and len(dp.bins) == 2 and dp.binning is None
    got = [tuple(R.f32(v) for v in b.slots[0].viewport_regs[:2]) for b in dp.bins]
    assert got == [(100.0, 50.0), (300.0, 25.0)]            # each bin sees its own patch
    assert [b.window_scissor for b in dp.bins] == [((0, 0), (191, 95)), ((0, 0), (383, 95))]
    assert [b.bin_size for b in dp.bins] == [(192, 32), (192, 32)]
    assert [b.force_lrz_dis for b in dp.bins] == [False, True]
    assert all(b.window_offset == (0, 0) for b in dp.bins)  # the sysmem-only write was skipped


def test_walk_refuses_garbage(tmp_path: Path) -> None:
    with pytest.raises(StreamError, match="unknown packet header"):
        walk(read_rd(rd_file(tmp_path, {IB1: [0x30000000]}, IB1, 1)), Listener())
    with pytest.raises(StreamError, match="not in a dumped buffer"):
        walk(read_rd(rd_file(tmp_path, {IB1: pkt7(0x3F, 0x9000, 0, 4)}, IB1, 4)), Listener())


def test_register_fields() -> None:
    assert R.reg_xy((239 << 16) | 2399) == (2399, 239)
    assert R.scissor_xy(0x7FFF7FFF) == (32767, 32767)
    assert R.bin_cntl(0x0204140F | (1 << 27)) == (480, 320, True)
    assert R.vsc_bin_count(0x380A) == (5, 7)
    fov: dict[str, Any] = R.foveat((1 << 6) | (1 << 8) | (2 << 10), ((120 << 0) | (3 << 10), 0, (5 << 0), 0))
    assert fov["binscaleen"] and fov["xscale"][:2] == [1, 0] and fov["yscale"][:2] == [2, 0]
    assert fov["offsets"][:2] == [[480, 20], [12, 0]]


def test_viewport_regs_is_float32_half_and_offset() -> None:
    # tu6_emit_viewport: scale = w / 2, offset = x + scale, float32
    assert viewport_regs(220.0, 0.0, 960.0, 960.0) == (700.0, 480.0, 480.0, 480.0)
    x = float(np.float32(16777216.0))
    assert viewport_regs(x, 0.0, 3.0, 2.0)[0] == float(np.float32(np.float32(x) + np.float32(1.5)))


def test_apt_mirror_reads_deb822_and_one_line_sources() -> None:
    deb822 = ("Types: deb\nURIs: http://security.debian.org/debian-security\nSuites: x\n\n"
              "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm\n")
    assert apt_mirror({"debian.sources": deb822}) == "http://mirror.example/debian"
    assert apt_mirror({"sources.list": "deb [arch=amd64] http://m.example/debian/ sid main\n"}) == \
        "http://m.example/debian"
    with pytest.raises(NotSupported, match="no Debian archive"):
        apt_mirror({"x.list": "deb http://ppa.example/ubuntu jammy main\n"})


def _sc(**kw: object) -> fdm.Scenario:
    base: dict[str, object] = {"gpu": "a750", "framebuffer": [256, 128],
                               "density": {"format": "R8G8_UNORM",
                                           "views": [{"generator": "constant", "size": [8, 4], "density": 0.5}]}}
    base.update(kw)
    return fdm.parse_scenario(base)


def test_job_translates_r8g8_to_the_floats_the_driver_reads() -> None:
    job = job_of(_sc(), "j", "/tmp/j")
    assert job["density"]["format"] == "R32G32_SFLOAT"
    # 0.5 is stored as byte 128; the driver reads float32(128) * float32(1/255)
    want = float(np.float32(np.float32(128) * np.float32(1.0 / 255.0)))
    assert job["density"]["layers"][0][0][0] == [want, want] and want != 0.5
    kinds = [a["kind"] for a in job["attachments"]]
    assert kinds == ["color", "depth"]                       # the default: colour + depth
    assert [a["kind"] for a in job_of(_sc(depth_load_op="none"), "j", "/t")["attachments"]] == ["color", "color"]
    # no depth format has one byte: a 1-byte depth attachment is the stencil-only S8_UINT (127)
    s8 = job_of(_sc(attachments=[{"cpp": 4}, {"cpp": 1}]), "j", "/t")["attachments"]
    assert [(a["kind"], a["format"]) for a in s8] == [("color", 37), ("depth", 127)]


def test_job_refusals_name_what_is_missing() -> None:
    with pytest.raises(Unrecordable, match="tencentmalos"):
        job_of(_sc(bin_merging="fixed"), "j", "/t")
    with pytest.raises(Unrecordable, match="shim opens"):
        job_of(_sc(gpu="a690"), "j", "/t")
    with pytest.raises(Unrecordable, match="no colour format with 3 bytes"):
        job_of(_sc(attachments=[{"cpp": 3}], depth_load_op="none"), "j", "/t")
    assert tu_debug_of(_sc(bin_merging="off", tu_debug=["sysmem"])) == ("nobinmerging", "sysmem")
    m = model_scenario(_sc(tile_size=[192, 32]), "a730")
    assert m.tile_size is None and m.gpu.name == "a730"


def test_without_a_box_or_root_one_not_supported_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess
    import sys

    from turnip_box import root

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(NotSupported, match="box setup"):
        root.find_box()
    monkeypatch.setattr(root.os, "geteuid", lambda: 1000)
    with pytest.raises(NotSupported, match="needs root"):
        root.setup()
    assert not any(tmp_path.iterdir())                          # nothing written
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "turnip_fdm", "box", "check", "fdm/data/demo.toml"],
                       cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == ["turnip-fdm: not supported: the box for Mesa 26.2 is not built: run "
                                     "`turnip-fdm box setup --mesa 26.2`"]


def test_environment_always_says_the_validation_choice(tmp_path: Path) -> None:
    from turnip_box.inside import VALIDATION_ENV, validation_required
    from turnip_box.root import Box, environment

    box = Box(root=tmp_path / "no-box", mesa="26.2", mesa_version="?")
    on, off = (environment(box, 750, tmp_path / s, validation=v) for s, v in (("a", True), ("b", False)))
    assert (on[VALIDATION_ENV], off[VALIDATION_ENV]) == ("1", "0")
    # the layers are the box's only (the process refuses when they are missing there)
    assert on["VK_LAYER_PATH"] == off["VK_LAYER_PATH"] == str(box.root / "usr/share/vulkan/explicit_layer.d")
    assert validation_required(on) and not validation_required(off) and validation_required({})


def test_thread_mode_follows_br_not_bv(tmp_path: Path) -> None:
    """CP_COND_REG_EXEC in THREAD_MODE (adreno_pm4.xml: BV bit 25, BR bit 26): the walk is the
    BR's, so a BR block runs and a BV-only block is skipped."""
    seen: list[tuple[int, int]] = []

    class Regs(Listener):
        def reg(self, reg: int, value: int) -> None:
            seen.append((reg, value))

    bv, br = pkt4(0x100, 1), pkt4(0x200, 2)
    ib = (pkt7(0x47, (5 << 28) | (1 << 25), len(bv)) + bv      # BV only: skipped
          + pkt7(0x47, (5 << 28) | (1 << 26), len(br)) + br)    # BR: run
    walk(read_rd(rd_file(tmp_path, {IB1: ib}, IB1, len(ib))), Regs())
    assert seen == [(0x200, 2)]
