"""``turnip-fdm box info``: one box process per GPU, asked what turnip reports."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from .jobs import SHIM_GPU_IDS
from .root import Box, environment, launch


def device_info(box: Box, gpu: str) -> str:
    """One line: the device name, driver, FDM extensions, texel sizes and FDM formats of ``gpu``."""
    with tempfile.TemporaryDirectory(prefix="turnip-fdm-box-") as tmp:
        env = environment(box, SHIM_GPU_IDS[gpu], Path(tmp), validation=False)
        r = subprocess.run(launch(box, "turnip_box.record", ["--info"], env), capture_output=True, text=True,
                           env=env, timeout=120)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        return f"{gpu}: not supported: {tail[:200]}"
    d = json.loads(lines[-1])
    if "error" in d:
        return f"{gpu}: not supported: {d['error']}"
    (lo, hi) = d["texel_size"]
    return (f"{gpu}: {d['device']} ({d['driver']}); {' '.join(d['fdm_extensions'])}; texel size "
            f"{lo[0]}x{lo[1]}..{hi[0]}x{hi[1]}; FDM formats {', '.join(d['fdm_formats']) or 'none'}")
