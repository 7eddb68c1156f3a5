"""``turnip-fdm box info`` and the probe every check starts with: one box process per GPU, asked
what turnip reports."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnip_base.errors import NotSupported

from .jobs import SHIM_GPU_IDS
from .root import Box, environment, launch

#: the GPUs whose FDM formats include R8G8_UNORM: none (turnip 26.x advertises the FDM format
#: feature on R16G16_SFLOAT and R32G32_SFLOAT only; an R8G8 scenario is recorded as the float32
#: values turnip would have read, docs/box.md)
R8G8_NOTE = "R8G8_UNORM maps are recorded as the float32 values turnip would read (no R8G8 FDM format)"


def probe(box: Box, gpu: str, passed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What turnip reports for ``gpu`` in the box: ``device``, ``driver`` (its driverInfo),
    ``fdm_extensions``, ``texel_size``, ``fdm_formats``; NotSupported with the process's last
    words when turnip does not open it."""
    with tempfile.TemporaryDirectory(prefix="turnip-fdm-box-") as tmp:
        env = environment(box, SHIM_GPU_IDS[gpu], Path(tmp), validation=False, passed=passed)
        try:
            r = subprocess.run(launch(box, "turnip_box.record", ["--info"], env), capture_output=True, text=True,
                               env=env, timeout=120, start_new_session=True)
        except subprocess.TimeoutExpired:
            raise NotSupported(f"turnip did not answer for {gpu} within 120 s") from None
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise NotSupported(tail[:300])
    d: dict[str, Any] = json.loads(lines[-1])
    if "error" in d:
        raise NotSupported(str(d["error"]))
    return d


def device_info(box: Box, gpu: str, passed: Mapping[str, str] | None = None) -> str:
    """One line: the device name, driver, FDM extensions, texel sizes and FDM formats of ``gpu``."""
    try:
        d = probe(box, gpu, passed)
    except NotSupported as e:
        return f"{gpu}: not supported: {e}"
    (lo, hi) = d["texel_size"]
    return (f"{gpu}: {d['device']} ({d['driver']}); {' '.join(d['fdm_extensions'])}; texel size "
            f"{lo[0]}x{lo[1]}..{hi[0]}x{hi[1]}; FDM formats {', '.join(d['fdm_formats']) or 'none'}")
