"""Feed malformed inputs through the command line and check the error contract.

``python tests/tools/fuzz.py [N] [--seed S] [--mem-limit-gb G] [--case-timeout S]`` (or
``./dev fuzz N``) draws ``N`` malformed inputs deterministically from ``S``: mutated scenario
files (wrong types, huge and non-finite numbers, strings and booleans as densities, unknown
and missing fields, nesting 1,000 deep, truncated and binary text), density images that lie
about their size (a PNG header claiming 60000 x 100000 pixels, ``.npy`` headers claiming
gigabytes, complex and object arrays), and bad flags (unknown options, ``--view`` out of
range, ``--out`` naming a directory, a file, an unwritable or over-long path).  The user's own
conditions come too: output paths that cannot be written (``/dev/full``, under a device, in
``/proc`` or ``/sys``), big inputs (a 16 MB density map, 100,000 viewports, a dotted TOML key of
300,000 parts, 1 MiB of escapes), and, in real processes of the console script, a closed
standard output (``>&-``), a full one (``> /dev/full``) and Ctrl-C (SIGINT) at a random moment
0.05-0.6 s after the start.

Each input runs in-process through :func:`turnip_fdm.cli.main` in a fresh directory, and must:
exit 0 (the mutation happened to stay valid) or 2 with exactly one line
``turnip-fdm: error: …`` / ``turnip-fdm: not supported: …`` and nothing on standard output;
never exit 1 with an internal error (a traceback); finish within the case timeout; leave no
output file, staging directory or ``*.tmp`` behind when it is refused.  A big input is refused
within :data:`BIG_INPUT_SECONDS`; standard output that cannot be written gives status 2 and the
one ``standard output`` line; an interrupted process exits 130 with the one line
``turnip-fdm: interrupted`` (or, when the signal came after the command ended, as the command
would have), never with a traceback, and leaves nothing partial behind.  Every child starts with
SIGINT at its default, whatever the fuzzer inherited.  A Ctrl-C that lands while the interpreter
itself is still starting (before the first turnip-fdm module runs: about the first 10-30 ms,
longer under load) gets Python's own handling and is counted apart, not as a break.  The process runs under
an address-space limit, so an input that tried to allocate gigabytes fails as a MemoryError
(counted as a traceback).  The summary gives the counts and the peak resident memory.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import attrs

from turnip_fdm.cli import main as cli_main

Json = Any
Mode = Literal["in-process", "stdout-closed", "stdout-full", "sigint"]

REPO = Path(__file__).resolve().parents[2]
#: a big input must be refused within this many seconds (in this process, without the start-up)
BIG_INPUT_SECONDS = 2.0
STDOUT_LINE = "turnip-fdm: error: standard output: cannot write"
INTERRUPTED = "turnip-fdm: interrupted\n"


@attrs.frozen(kw_only=True)
class Case:
    """One malformed input: the command line, the files it reads, the outputs it names."""

    kind: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    outputs: tuple[str, ...] = ()
    pre_existing: tuple[str, ...] = ()  # paths created before the run (a file or directory named by --out)
    #: how it runs: in this process, or as a real process with standard output closed, on
    #: /dev/full, or sent SIGINT ``sigint_after`` seconds after its start
    mode: Mode = "in-process"
    sigint_after: float = 0.0
    #: what the refusal must be (a prefix of the one error line), where the case knows it
    expect: str = ""


@attrs.frozen(kw_only=True)
class Outcome:
    case: Case
    status: int
    stdout: str
    stderr: str
    seconds: float
    problem: str  # "" when the contract held
    #: a Ctrl-C that came while the interpreter was still starting, before any turnip-fdm code
    #: (about the first 10-30 ms; longer under load): Python's own handling, counted apart
    startup: bool = False


# ---------------------------------------------------------------------------------------------
# valid bases

def _base_scenarios() -> list[dict[str, Json]]:
    const = {"generator": "constant", "size": [32, 20], "density": [0.5, 0.5]}
    return [
        {"gpu": "a740", "bin_merging": "off", "framebuffer": [1000, 600], "tile_size": [192, 160], "views": 2,
         "fdm_offset_create_flag": True, "fdm_offsets": [[40, -16], [-40, 0]],
         "density": {"format": "R32G32_SFLOAT", "views": [const]}},
        {"gpu": "a650", "framebuffer": [640, 480], "views": 1,
         "density": {"views": [{"values": [[1.0, 0.5, 0.25], [0.5, 0.25, 1.0]]}]}},
        {"gpu": "a750", "framebuffer": [768, 512], "views": 2, "writes_viewport_index": True,
         "viewports": [[0, 0, 768, 512], [10.5, -4, 300, -200, 0, 1]], "scissors": [[0, 0, 768, 512], [5, 5, 9, 9]],
         "render_areas": [[0, 0, 700, 500]], "attachments": [{"cpp": 4, "samples": 2}, {"cpp": 2}],
         "density": {"format": "R8G8_UNORM", "views": [
             {"generator": "radial", "size": [24, 16], "center": [384, 256], "radii": [100, 200],
              "densities": [1.0, 0.5, 0.25]}, {"generator": "constant", "size": [24, 16], "density": 0.5}]}},
        {"gpu": "a830", "framebuffer": [1024, 1024], "views": 1, "bin_merging": "fixed",
         "density": {"views": [{"generator": "constant", "size": [32, 32], "density": 0.25}]}},
        {"gpu": "a750", "framebuffer": [768, 512], "layers": 3, "fdm_per_layer": True, "max_fdm_layers": 3,
         "depth_load_op": "load", "custom_resolve": True, "tu_debug": ["gmem"],
         "driver": {"tu_emit_subsampled": "tencentmalos-16ad8431", "tu_calc_subsampled_aprons": "upstream"},
         "fdm_offset_create_flag": True, "fdm_offsets": [[8, 8], [16, -8], [0, 0]],
         "density": {"format": "R32G32_SFLOAT", "views": [const, const, const]}},  # 768x512 / 32x20: 32 px texels
        {"gpu": "a630", "framebuffer": [2000, 1000], "tu_debug": ["sysmem"], "depth_load_op": "none",
         "density": {"views": [const]}},
    ]


WEIRD: list[Json] = [
    None, True, False, "", "x", "0.5", "NaN", 0, -1, 1, 2, 255, 256, 65535, -(2 ** 31) - 1, 2 ** 31, 2 ** 63,
    10 ** 40, -(10 ** 400), 0.5, -0.5, 1.5, 1e30, -1e30, 1e-320, float("inf"), float("-inf"), [], [[]], {},
    {"a": 1}, [1], [1, 2, 3], [0.5, "a"], [True, False], [[1, 2], [3]], [16384, 16384], [100000, 100000],
    [60000, 1], [-8, -8], [7, 9], "a" * 5000, "\x00\x01", [[0.5, 0.5]] * 3,
]

TOP_KEYS = ["name", "gpu", "framebuffer", "views", "tile_size", "attachments", "fdm_offset_create_flag",
            "fdm_offsets", "writes_viewport_index", "multiview_per_view_viewports", "render_areas", "bin_merging",
            "viewports", "scissors", "density", "expect", "unknown_field", "depth_load_op", "driver", "tu_debug",
            "layers", "fdm_per_layer", "max_fdm_layers", "custom_resolve"]


def _paths(d: Json, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside nested dicts/lists (bounded: lists longer than 8 sampled)."""
    yield prefix
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d[:8]):
            yield from _paths(v, prefix + (i,))


def _set(d: Json, path: tuple[Any, ...], value: Json) -> Json:
    """``d`` with the value at ``path`` replaced; where an earlier mutation removed the path,
    the value goes to the top level under the path's first key instead."""
    if not path:
        return value
    d = json.loads(json.dumps(d))
    cur = d
    try:
        for p in path[:-1]:
            cur = cur[p]
        cur[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        if not isinstance(d, dict):
            return value
        d[str(path[0])] = value
    return d


def _get(d: Json, path: tuple[Any, ...]) -> Json:
    for p in path:
        d = d[p]
    return d


def _delete(d: Json, path: tuple[Any, ...]) -> Json:
    d = json.loads(json.dumps(d))
    cur = d
    for p in path[:-1]:
        cur = cur[p]
    if isinstance(cur, dict):
        cur.pop(path[-1], None)
    elif isinstance(cur, list) and cur:
        cur.pop(path[-1])
    return d


def _deep(n: int) -> Json:
    v: Json = 0.5
    for _ in range(n):
        v = [v]
    return v


def _mutate(rng: random.Random, d: dict[str, Json]) -> tuple[str, Json]:
    paths = [p for p in _paths(d) if p]
    choice = rng.randrange(11)
    if choice <= 3:
        p = rng.choice(paths)
        return f"set {'.'.join(map(str, p))}", _set(d, p, rng.choice(WEIRD))
    if choice == 4:
        p = rng.choice(paths)
        return f"delete {'.'.join(map(str, p))}", _delete(d, p)
    if choice == 5:
        return "set top-level key", _set(d, (rng.choice(TOP_KEYS),), rng.choice(WEIRD))
    if choice == 6:
        p = rng.choice(paths)
        return f"nest {'.'.join(map(str, p))}", _set(d, p, _deep(rng.choice([9, 50, 200])))
    if choice == 7:
        # a density layer of a size that must be refused before it is allocated
        size = rng.choice([[16384, 16384], [4097, 1], [2048, 1024], [1 << 31, 2], [0, 5]])
        return f"generator size {size}", _set(d, ("density", "views", 0),
                                              {"generator": rng.choice(["constant", "radial"]), "size": size,
                                               "density": 0.5, "center": [0, 0], "radii": [1], "densities": [1, 1]})
    if choice == 8:
        return "not a table", rng.choice([[], [d], 1, "scenario", None])
    if choice == 9:
        # a plausible numeric tweak: stays well-typed, so the deeper rules (alignment, GMEM fit,
        # VSC pipes, viewport bounds) have to catch it
        numeric = [p for p in paths if isinstance(_get(d, p), (int, float)) and not isinstance(_get(d, p), bool)]
        if numeric:
            p = rng.choice(numeric)
            v = _get(d, p)
            factor, term = rng.choice([2, 4, 16, -1, 0.5]), rng.choice([0, 1, -1, 8, 96, 0.5])
            # ints in exact arithmetic: an earlier mutation may have made v hundreds of digits
            # long, too large for a float
            new = int(Fraction(v) * Fraction(factor) + Fraction(term)) if isinstance(v, int) else v * factor + term
            return f"tweak {'.'.join(map(str, p))}", _set(d, p, new)
    # two mutations
    _, d2 = _mutate(rng, d)
    return _mutate(rng, d2) if isinstance(d2, dict) else ("not a table", d2)


# ---------------------------------------------------------------------------------------------
# files

def _png_header(w: int, h: int) -> bytes:
    """A PNG that claims ``w x h`` pixels but carries no image data (68 bytes)."""
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def _npy(shape: tuple[int, ...], descr: str, payload: bytes = b"", version: int = 1) -> bytes:
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + payload


def _image_files(rng: random.Random) -> tuple[str, str, bytes]:
    """(kind, file name, bytes) of a density image that must be refused."""
    options: list[tuple[str, str, bytes]] = [
        ("png bomb", "map.png", _png_header(60000, 100000)),
        ("png 5000x5000 header", "map.png", _png_header(5000, 5000)),
        ("png truncated", "map.png", _png_header(32, 20)[:30]),
        ("npy 18.6 GiB header", "map.npy", _npy((50000, 50000, 2), "<f8")),
        ("npy complex", "map.npy", _npy((2, 2, 2), "<c16", b"\0" * 128)),
        ("npy object", "map.npy", _npy((2, 2, 2), "|O", b"\0" * 64)),
        ("npy truncated", "map.npy", _npy((20, 32, 2), "<f4", b"\0" * 100)),
        ("npy bad shape", "map.npy", _npy((20, 32), "<f4", b"\0" * 2560)),
        ("npy bool", "map.npy", _npy((20, 32, 2), "|b1", b"\1" * 1280)),
        ("npy v2 huge", "map.npy", _npy((1 << 40, 1, 2), "<f4", version=2)),
        ("garbage", rng.choice(["map.png", "map.npy"]), bytes(rng.randrange(256) for _ in range(rng.randrange(200)))),
    ]
    return rng.choice(options)


def _text(rng: random.Random, d: Json, fmt: str) -> bytes:
    text = json.dumps(d, allow_nan=True) if fmt == "json" else _toml_text(d)
    r = rng.randrange(12)
    if r == 0:
        return text[: rng.randrange(len(text) + 1)].encode()
    if r == 1:
        b = bytearray(text.encode())
        for _ in range(rng.randrange(1, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if r == 2:
        depth = rng.choice([100, 1000, 5000])
        return (f'gpu = "a740"\nx = {"[" * depth}{"]" * depth}\n' if fmt == "toml"
                else "[" * depth + "]" * depth).encode()
    if r == 3:
        return b"\xff\xfe\x00garbage"
    return text.encode()


def _toml_value(v: Json) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return '"null"'
    if isinstance(v, (int, float)):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"


def _toml_text(d: Json) -> str:
    if not isinstance(d, dict):
        return f"x = {_toml_value(d)}\n"
    return "".join(f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in d.items())


# ---------------------------------------------------------------------------------------------
# cases

def _scenario_case(rng: random.Random, base: dict[str, Json]) -> Case:
    what, d = _mutate(rng, base)
    fmt = rng.choice(["json", "toml"])
    name = f"s.{fmt}"
    files: list[tuple[str, bytes]] = []
    if rng.randrange(6) == 0 and isinstance(d, dict):
        kind, fname, data = _image_files(rng)
        d = _set(d, ("density",), {"format": "R8G8_UNORM", "views": [{"image": fname}]})
        what = kind
        files.append((fname, data))
    files.append((name, _text(rng, d, fmt)))
    cmd = rng.choice(["plan", "plan-json", "check", "layout", "plan-out", "diff"])
    outputs: tuple[str, ...] = ()
    if cmd == "plan":
        argv: tuple[str, ...] = ("plan", name)
    elif cmd == "plan-json":
        argv = ("plan", name, "--json")
    elif cmd == "plan-out":
        argv, outputs = ("plan", name, "--out", "o/plan"), ("o",)
    elif cmd == "check":
        argv = ("check", name)
    elif cmd == "diff":
        # the mutated scenario on one side or both, or against itself under another variant
        other = rng.choice([(name,), ("--variant", "bin_merging=fixed"), ("--json",)])
        argv, outputs = ("diff", name, *other, "--out", "d"), ("d",)
    else:
        argv, outputs = ("layout", name, "--out", "lay", "--view", str(rng.choice([0, 1, -1, 7]))), ("lay",)
    return Case(kind=f"{cmd}: {what}", argv=argv, files=tuple(files), outputs=outputs)


def _flag_case(rng: random.Random) -> Case:
    good = json.dumps(_base_scenarios()[1]).encode()
    files = (("s.json", good),)
    long_part = "d" * 300
    choices: list[Case] = [
        Case(kind="no command", argv=()),
        Case(kind="unknown command", argv=("frobnicate",)),
        Case(kind="unknown flag", argv=("plan", "s.json", "--frob")),
        Case(kind="missing scenario", argv=("plan",)),
        Case(kind="missing file", argv=("plan", "nope.toml")),
        Case(kind="wrong extension", argv=("check", "s.txt"), files=(("s.txt", good),)),
        Case(kind="directory as scenario", argv=("plan", "adir.json"), pre_existing=("adir.json/",)),
        Case(kind="plan --out is a file", argv=("plan", "s.json", "--out", "afile"), files=files,
             pre_existing=("afile",)),
        Case(kind="--out under a file", argv=("plan", "s.json", "--out", "afile/x.json"), files=files,
             pre_existing=("afile",)),
        Case(kind="layout --out is a file", argv=("layout", "s.json", "--out", "afile"), files=files,
             pre_existing=("afile",)),
        Case(kind="--out over-long component", argv=("plan", "s.json", "--out", f"{long_part}/x.json"), files=files,
             outputs=(long_part[:10],)),
        Case(kind="--out over-long path", argv=("plan", "s.json", "--out", "/".join(["p" * 200] * 25)),
             files=files, outputs=("p" * 200,)),
        Case(kind="--out unwritable", argv=("plan", "s.json", "--out", "/proc/turnip-fdm/x.json"), files=files),
        Case(kind="--out empty", argv=("plan", "s.json", "--out", ""), files=files),
        Case(kind="--view not an int", argv=("layout", "s.json", "--out", "lay", "--view", "x"), files=files,
             outputs=("lay",)),
        Case(kind="--view out of range", argv=("layout", "s.json", "--out", "lay", "--view", "5"), files=files,
             outputs=("lay",)),
        Case(kind="demo --out is a file", argv=("demo", "--out", "afile"), pre_existing=("afile",)),
        Case(kind="mipmap no sub-command", argv=("mipmap",)),
        Case(kind="mipmap bad size", argv=("mipmap", "run", "--size", "0", "3")),
        Case(kind="mipmap size not int", argv=("mipmap", "run", "--size", "a", "3")),
        Case(kind="mipmap bad format", argv=("mipmap", "run", "--size", "4", "4", "--format", "bgr5")),
        Case(kind="mipmap bad algorithm", argv=("mipmap", "run", "--size", "4", "4", "--algorithm", "magic")),
        Case(kind="diff bad variant", argv=("diff", "s.json", "--variant", "bin_merging=sideways"), files=files),
        Case(kind="diff variant without value", argv=("diff", "s.json", "--variant", "bin_merging"), files=files),
        Case(kind="diff missing second file", argv=("diff", "s.json", "nope.toml"), files=files),
        Case(kind="diff --out is a file", argv=("diff", "s.json", "--out", "afile"), files=files,
             pre_existing=("afile",)),
        Case(kind="vk bad backend", argv=("vk", "list", "--backend", "gpu")),
        Case(kind="vk filter matching nothing", argv=("vk", "run", "--filter", "nothing.*", "--out", "vkout"),
             outputs=("vkout",)),
        Case(kind="vk check missing bundle", argv=("vk", "check", "nope")),
        Case(kind="vk check not a bundle", argv=("vk", "check", "adir"), pre_existing=("adir/",)),
        Case(kind="vk run --out is a file", argv=("vk", "run", "--backend", "host", "--out", "afile"),
             pre_existing=("afile",)),
    ]
    return rng.choice(choices)


#: paths no command can write, each with the errno words the refusal names
UNWRITABLE = ("/dev/full", "/dev/full/sub", "/dev/null/x", "/proc/turnip-fdm/x", "/proc/self/x", "/sys/turnip-fdm",
              "afile/sub", "afile")


def _unwritable_case(rng: random.Random) -> Case:
    good = (("s.json", json.dumps(_base_scenarios()[1]).encode()),)
    path = rng.choice(UNWRITABLE)
    argv = rng.choice([("plan", "s.json", "--out", path), ("layout", "s.json", "--out", path),
                       ("diff", "s.json", "--variant", "bin_merging=fixed", "--out", path), ("demo", "--out", path)])
    return Case(kind=f"unwritable --out {path}", argv=argv, files=good if "s.json" in argv else (),
                pre_existing=("afile",), expect="turnip-fdm: error: --out: ")


def _values_text(fmt: str, n: int) -> bytes:
    row = "[" + ",".join(["0.5"] * n) + "]"
    values = "[" + ",\n".join([row] * n) + "]"
    if fmt == "json":
        return ('{"gpu": "a650", "framebuffer": [2048, 2048], "views": 1, '
                f'"density": {{"views": [{{"values": {values}}}]}}}}').encode()
    return f'gpu = "a650"\nframebuffer = [2048, 2048]\nviews = 1\n[density]\nviews = [{{values = {values}}}]\n'.encode()


@functools.cache
def _big_input(kind: str) -> tuple[str, bytes]:
    """(file name, text) of a big input, made once per kind."""
    viewports = ", ".join(["[0, 0, 64, 64]"] * 100_000)
    head = '"gpu": "a650", "framebuffer": [640, 480], "views": 1'
    if kind == "16 MB density map (json)":
        return "s.json", _values_text("json", 2000)
    if kind == "16 MB density map (toml)":
        return "s.toml", _values_text("toml", 2000)
    if kind == "100,000 viewports (json)":
        return "s.json", f"{{{head}, \"viewports\": [{viewports}]}}".encode()
    if kind == "100,000 viewports (toml)":
        return "s.toml", f'gpu = "a650"\nviewports = [{viewports}]\n'.encode()
    if kind == "dotted key of 300,000 parts (toml)":
        return "s.toml", ("a" + ".a" * 300_000 + " = 1\n").encode()
    if kind == "1 MiB of escapes (toml)":
        return "s.toml", ('name = "' + "\\t" * 500_000 + '"\n').encode()
    if kind == "a 16 MiB name (json)":
        return "s.json", f'{{{head}, "name": "{"n" * ((16 << 20) - 100)}"}}'.encode()
    # just under the JSON comma limit, one density out of range at the very end
    n = 360
    row = "[" + ",".join(["[0.5,0.5]"] * n) + "]"
    rows = ",".join([row] * (n - 1) + ["[" + ",".join(["[0.5,0.5]"] * (n - 1) + ["[0.5,2]"]) + "]"])
    doc = f'"gpu": "a650", "framebuffer": [2048, 2048], "views": 1, "density": {{"views": [{{"values": [{rows}]}}]}}'
    return "s.json", f"{{{doc}}}".encode()


BIG_INPUTS = ("16 MB density map (json)", "16 MB density map (toml)", "100,000 viewports (json)",
              "100,000 viewports (toml)", "dotted key of 300,000 parts (toml)", "1 MiB of escapes (toml)",
              "a 16 MiB name (json)", "260,000 values, the last out of range (json)")


def _big_case(rng: random.Random) -> Case:
    kind = rng.choice(BIG_INPUTS)
    name, text = _big_input(kind)
    cmd = rng.choice([("plan", name), ("check", name), ("plan", name, "--json"), ("layout", name, "--json")])
    return Case(kind=f"big: {kind}", argv=cmd, files=((name, text),), expect="turnip-fdm: error: ")


def _stdout_case(rng: random.Random, mode: Mode) -> Case:
    """A command whose standard output is closed or full: one of the valid bases, or a malformed
    scenario (whose own refusal may come first)."""
    good = (("s.json", json.dumps(rng.choice(_base_scenarios())).encode()),)
    argv = rng.choice([("plan", "s.json"), ("plan", "s.json", "--json"), ("check", "s.json"),
                       ("layout", "s.json", "--json"), ("diff", "s.json", "--variant", "bin_merging=fixed"),
                       ("--help",), ("plan", "--help"), ("vk", "list"), None])
    if argv is None:
        case = _scenario_case(rng, rng.choice(_base_scenarios()))
        return attrs.evolve(case, kind=f"{mode}: {case.kind}", mode=mode)
    return Case(kind=f"{mode}: {' '.join(argv)}", argv=argv, files=good, mode=mode, expect=STDOUT_LINE)


def _sigint_case(rng: random.Random) -> Case:
    good = (("s.json", json.dumps(rng.choice(_base_scenarios())).encode()),)
    argv, outputs = rng.choice([(("demo", "--out", "o"), ("o",)), (("plan", "s.json", "--json"), ()),
                                (("layout", "s.json", "--out", "lay"), ("lay",)), (("check", "s.json"), ()),
                                (("plan", "s.json", "--out", "p"), ("p",)),
                                (("diff", "s.json", "--variant", "bin_merging=fixed", "--out", "d"), ("d",))])
    after = round(rng.uniform(0.05, 0.6), 3)
    return Case(kind=f"sigint after {after:.2f} s: {' '.join(argv)}", argv=argv, files=good, outputs=outputs,
                mode="sigint", sigint_after=after)


def cases(n: int, seed: int = 0, processes: bool = True) -> Iterator[Case]:
    """``n`` malformed inputs, the same for the same seed; ``processes``: with the cases that
    run as real processes (standard output closed or full, Ctrl-C), about 1 in 25."""
    rng = random.Random(seed)
    bases = _base_scenarios()
    for _ in range(n):
        r = rng.randrange(100)
        if r < 4 and processes:
            yield _sigint_case(rng) if r < 2 else _stdout_case(rng, "stdout-closed" if r == 2 else "stdout-full")
        elif r < 7:
            yield _unwritable_case(rng)
        elif r < 9:
            yield _big_case(rng)
        elif r < 28:
            yield _flag_case(rng)
        else:
            yield _scenario_case(rng, rng.choice(bases))


# ---------------------------------------------------------------------------------------------
# running

class _Hang(BaseException):
    """Raised by the alarm: a BaseException, so that the shell's handler does not take it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang()


def _leftovers(work: str, before: set[str]) -> list[str]:
    found = []
    for root, dirs, names in os.walk(work):
        for n in dirs + names:
            rel = os.path.relpath(os.path.join(root, n), work)
            if rel not in before:
                found.append(rel)
    return found


def _prepare(case: Case, work: str) -> set[str]:
    """Write the case's files into ``work``; returns the paths there before the run."""
    for name, data in case.files:
        with open(os.path.join(work, name), "wb") as f:
            f.write(data)
    for p in case.pre_existing:
        full = os.path.join(work, p)
        if p.endswith("/"):
            os.makedirs(full, exist_ok=True)
        else:
            with open(full, "w") as f:
                f.write("x")
    return {os.path.relpath(os.path.join(r, n), work) for r, ds, ns in os.walk(work) for n in ds + ns}


def _judge(case: Case, status: int, stdout: str, stderr: str, work: str, before: set[str]) -> str:
    """The contract for one finished command: "" when it held, else what broke."""
    lines = stderr.splitlines()
    if "Traceback" in stderr or "KeyboardInterrupt" in stderr:
        return f"exit {status} with a traceback: {stderr.strip()[-300:]}"
    if status == 2:
        if len(lines) != 1 or not lines[0].startswith(("turnip-fdm: error: ", "turnip-fdm: not supported: ")):
            return f"exit 2 without exactly one error line: {stderr[:300]!r}"
        if stdout:
            return f"exit 2 but wrote to standard output: {stdout[:200]!r}"
        if case.expect and not lines[0].startswith(case.expect) and not case.mode.startswith("stdout"):
            return f"refused, but not with {case.expect!r}: {lines[0][:200]}"
        left = _leftovers(work, before)
        return f"refused but left files behind: {left[:5]}" if left else ""
    if status == 0:
        if case.expect:
            return f"exit 0, expected a refusal {case.expect!r}"
        return ""
    return f"exit {status}: {stderr.strip()[:300]}"


def run_case(case: Case, work: str, timeout: float = 60.0) -> Outcome:
    """Run one case in the empty directory ``work`` and judge it against the contract."""
    if case.mode != "in-process":
        return run_process_case(case, work, timeout)
    before = _prepare(case, work)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    t0 = time.perf_counter()
    problem = ""
    status = -1
    try:
        os.chdir(work)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli_main(list(case.argv))
    except _Hang:
        problem = f"hang: still running after {timeout:g} s"
    except SystemExit as e:  # --help and friends
        status = int(e.code or 0)
    except BaseException as e:  # noqa: BLE001 - an exception escaping main is exactly what we look for
        problem = f"escaped main: {type(e).__name__}: {e}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
    seconds = time.perf_counter() - t0
    stdout, stderr = out.getvalue(), err.getvalue()
    if not problem:
        problem = _judge(case, status, stdout, stderr, work, before)
    if not problem and case.kind.startswith("big: ") and seconds > BIG_INPUT_SECONDS:
        problem = f"slow refusal: a big input took {seconds:.2f} s (limit {BIG_INPUT_SECONDS:g} s)"
    return Outcome(case=case, status=status, stdout=stdout, stderr=stderr, seconds=seconds, problem=problem)


def _command() -> list[str]:
    """The console script beside this interpreter (what a user runs), else ``python -m turnip_fdm``."""
    script = Path(sys.executable).with_name("turnip-fdm")
    return [str(script)] if os.access(script, os.X_OK) else [sys.executable, "-m", "turnip_fdm"]


def _child_setup(close_stdout: bool) -> Callable[[], None]:
    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # not an ignored one inherited from the fuzzer
        if close_stdout:
            os.close(1)
    return setup


def run_process_case(case: Case, work: str, timeout: float = 60.0) -> Outcome:
    """Run one case as a real process of the console script and judge it."""
    before = _prepare(case, work)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with contextlib.ExitStack() as stack:
        if case.mode == "stdout-full":
            stdout: Any = stack.enter_context(open("/dev/full", "wb"))
        else:
            stdout = subprocess.DEVNULL if case.mode == "stdout-closed" else subprocess.PIPE
        t0 = time.perf_counter()
        proc = subprocess.Popen([*_command(), *case.argv], cwd=work, env=env, stdout=stdout,
                                stderr=subprocess.PIPE, preexec_fn=_child_setup(case.mode == "stdout-closed"))
        sent = False
        if case.mode == "sigint":
            try:
                proc.wait(timeout=case.sigint_after)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)
                sent = True
        try:
            out_b, err_b = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return Outcome(case=case, status=-1, stdout="", stderr="", seconds=timeout,
                           problem=f"hang: still running after {timeout:g} s")
    seconds = time.perf_counter() - t0
    out, err = (out_b or b"").decode(errors="replace"), err_b.decode(errors="replace")
    status = proc.returncode
    if sent and _in_startup(status, err):
        return Outcome(case=case, status=status, stdout=out, stderr=err, seconds=seconds, problem="", startup=True)
    return Outcome(case=case, status=status, stdout=out, stderr=err, seconds=seconds,
                   problem=_judge_process(case, status, out, err, work, before, sent))


def _in_startup(status: int, stderr: str) -> bool:
    """SIGINT reached the interpreter before its first turnip-fdm module: killed by it (no handler
    yet) or Python's KeyboardInterrupt in ``site`` or the console script's own imports, with no
    frame of a project package in the traceback."""
    if status == -signal.SIGINT:
        return True
    project = ("/turnip_fdm/", "/fdm/", "/layout_solver/", "/mipmap/", "/vk_tests/", "/turnip_box/", "/turnip_base/")
    return "KeyboardInterrupt" in stderr and not any(p in stderr for p in project)


def _judge_process(case: Case, status: int, stdout: str, stderr: str, work: str, before: set[str],
                   sent: bool) -> str:
    if sent and status == 130:
        if stderr != INTERRUPTED:
            return f"interrupted without exactly the one line: {stderr[-300:]!r}"
        left = _leftovers(work, before)
        return f"interrupted but left files behind: {left[:5]}" if left else ""
    if sent and status < 0:
        return f"killed by signal {-status}"
    if case.mode == "stdout-closed" and status != 2:
        return f"standard output closed, but exit {status}: {stderr.strip()[:300]}"
    if case.mode == "stdout-full" and status == 0:
        return "standard output full, but exit 0"
    problem = _judge(case, status, "" if case.mode == "sigint" else stdout, stderr, work, before)
    if not problem and case.mode.startswith("stdout") and case.expect and not stderr.startswith(case.expect):
        problem = f"expected {case.expect!r}: {stderr.strip()[:200]}"
    return problem


def fuzz(n: int, seed: int = 0, timeout: float = 60.0,
         progress: Callable[[int, Outcome], None] | None = None, processes: bool = True) -> list[Outcome]:
    outcomes = []
    top = tempfile.mkdtemp(prefix="turnip-fdm-fuzz-")
    try:
        for i, case in enumerate(cases(n, seed, processes)):
            work = os.path.join(top, str(i))
            os.mkdir(work)
            o = run_case(case, work, timeout)
            outcomes.append(o)
            shutil.rmtree(work, ignore_errors=True)
            if progress:
                progress(i, o)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return outcomes


def _user_conditions(outcomes: list[Outcome]) -> str:
    """One line on the user's own conditions: how many of each ran and how they ended."""
    def group(prefix: str) -> list[Outcome]:
        return [o for o in outcomes if o.case.kind.startswith(prefix)]

    sigint, big = group("sigint"), group("big: ")
    interrupted = sum(1 for o in sigint if o.status == 130)
    startup = sum(1 for o in sigint if o.startup)
    slowest_big = max((o.seconds for o in big), default=0.0)
    return (f"fuzz: user conditions: standard output closed {len(group('stdout-closed'))}, full "
            f"{len(group('stdout-full'))}; Ctrl-C {len(sigint)} ({interrupted} exit 130, {startup} still in "
            f"Python's start-up, {len(sigint) - interrupted - startup} ended first); "
            f"unwritable --out {len(group('unwritable'))}; "
            f"big inputs {len(big)} (slowest refusal {slowest_big:.2f} s); "
            f"{sum(1 for o in outcomes if o.problem and o.case.kind.startswith(USER_KINDS))} broke the contract")


USER_KINDS = ("stdout-closed", "stdout-full", "sigint", "unwritable", "big: ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tests/tools/fuzz.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, nargs="?", default=10000, help="number of malformed inputs (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mem-limit-gb", type=float, default=3.0,
                    help="address-space limit of the process in GiB (default 3)")
    ap.add_argument("--case-timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    a = ap.parse_args(argv)
    limit = int(a.mem_limit_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    t0 = time.perf_counter()
    tty = sys.stderr.isatty()

    def progress(i: int, o: Outcome) -> None:
        if o.problem:
            print(f"\nPROBLEM in case {i} ({o.case.kind}; argv {list(o.case.argv)}): {o.problem}", file=sys.stderr)
        if o.startup:
            print(f"\nnote: case {i} ({o.case.kind}): the signal came in Python's start-up, before turnip-fdm "
                  f"(exit {o.status}; {o.stderr.strip().splitlines()[-1:] or ''})", file=sys.stderr)
        if tty or (i + 1) % 1000 == 0:
            end = "\r" if tty else "\n"
            print(f"fuzz: {i + 1}/{a.n} inputs, {time.perf_counter() - t0:.0f} s", end=end, file=sys.stderr)

    outcomes = fuzz(a.n, a.seed, a.case_timeout, progress)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    by_status: dict[int, int] = {}
    for o in outcomes:
        by_status[o.status] = by_status.get(o.status, 0) + 1
    bad = [o for o in outcomes if o.problem]
    hangs = sum(1 for o in bad if o.problem.startswith("hang"))
    tracebacks = sum(1 for o in bad if "internal error" in o.problem or "escaped" in o.problem
                     or "Traceback" in o.problem)
    leftovers = sum(1 for o in bad if "left files" in o.problem)
    slowest = max(outcomes, key=lambda o: o.seconds) if outcomes else None
    print(f"\nfuzz: {len(outcomes)} inputs (seed {a.seed}) in {time.perf_counter() - t0:.0f} s; "
          f"exit statuses {dict(sorted(by_status.items()))}")
    print(f"fuzz: {tracebacks} tracebacks, {hangs} hangs, {leftovers} with partial output, "
          f"{len(bad) - tracebacks - hangs - leftovers} other contract breaks")
    print(_user_conditions(outcomes))
    print(f"fuzz: peak resident memory {peak_mb:.0f} MiB under an address-space limit of {a.mem_limit_gb:g} GiB; "
          f"slowest case {slowest.seconds if slowest else 0:.2f} s ({slowest.case.kind if slowest else '-'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
