"""``python -m mipmap.build_spirv --out DIR``: a folder that cannot be written is one line and
status 2 (through turnip_base.outputs), not a traceback; nothing is compiled first."""

from __future__ import annotations

from pathlib import Path

import pytest

from mipmap import build_spirv


@pytest.mark.parametrize("out", ["afile", "afile/sub"])
def test_an_unwritable_out_is_one_line(tmp_path: Path, out: str, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(build_spirv, "find_compiler", lambda: ["true"])

    def never(*args: object) -> None:
        raise AssertionError("compiled into a folder that cannot be written")

    monkeypatch.setattr(build_spirv, "compile_variant", never)
    (tmp_path / "afile").write_text("x")
    assert build_spirv.main(["--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err
    assert err == f"build_spirv: --out: cannot write {tmp_path / out}: Not a directory\n"
