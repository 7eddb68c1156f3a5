"""The box's Debian root: building it once, finding it, and the environment turnip runs in.

``turnip-fdm box setup`` builds, with ``mmdebstrap``, a minimal Debian root of the suite that
ships the wanted Mesa for amd64 (:data:`MESA_SUITES`) holding ``mesa-vulkan-drivers``
(turnip), ``mesa-drm-shim`` (Mesa's noop DRM shim), ``libvulkan1``, ``vulkan-validationlayers``
and ``vulkan-tools``, and caches it under the user's cache directory
(``$XDG_CACHE_HOME/turnip-fdm/box/<suite>``, one root per Mesa release).  The mirror is the
Debian archive named in the machine's own apt sources; an expired snapshot still works
(``Acquire::Check-Valid-Until "false"``).

Nothing is chrooted afterwards.  turnip needs glibc >= 2.38, newer than a bookworm host's, so
the recording process is the *host's* Python started through the root's own dynamic loader with
the root's libraries first on its library path (:func:`launch`): one process holds the host
interpreter and the project's code, and the root's glibc, ``libvulkan`` and turnip.
``LD_PRELOAD`` of the shim makes turnip open the Adreno named by ``FD_GPU_ID``.  ``--driver
PATH`` swaps in a locally built ``libvulkan_freedreno.so`` through an ICD manifest of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

import attrs

from turnip_base.errors import NotSupported, ScenarioError

from .inside import VALIDATION_ENV

#: Mesa release -> the Debian suite that ships turnip and the noop shim for amd64 (and, for a
#: backports suite, its base suite).  trixie's own 25.0.7 ships neither for amd64.
MESA_SUITES: dict[str, tuple[str, ...]] = {"26.2": ("unstable",), "26.1": ("trixie", "trixie-backports")}
DEFAULT_MESA = "26.2"
PACKAGES = ("mesa-vulkan-drivers", "mesa-drm-shim", "libvulkan1", "vulkan-validationlayers", "vulkan-tools")
STAMP = ".turnip-fdm-box.json"
LIBDIR = "usr/lib/x86_64-linux-gnu"
LOADER = "lib64/ld-linux-x86-64.so.2"
SHIM = f"{LIBDIR}/libfreedreno_noop_drm_shim.so"
ICD = "usr/share/vulkan/icd.d/freedreno_icd.json"
LAYERS = "usr/share/vulkan/explicit_layer.d"


@attrs.frozen
class Box:
    """A built root: where it is, which Mesa it holds, and the driver to load."""

    root: Path
    mesa: str                  # the release key of MESA_SUITES
    mesa_version: str          # the Debian version of mesa-vulkan-drivers in the root
    driver: Path | None = None  # a locally built libvulkan_freedreno.so instead of the root's


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "turnip-fdm" / "box"


def root_path(mesa: str) -> Path:
    check_mesa(mesa)
    return cache_dir() / MESA_SUITES[mesa][-1]


def check_mesa(mesa: str) -> None:
    if mesa not in MESA_SUITES:
        raise ScenarioError("--mesa", f"must be one of {', '.join(MESA_SUITES)} (the Debian suites that ship "
                                      f"turnip and the noop DRM shim for amd64), got {mesa!r}")


def apt_mirror(sources: Mapping[str, str] | None = None) -> str:
    """The Debian archive URI of the machine's apt sources (deb822 ``.sources`` files first, then
    one-line ``sources.list`` entries); security and non-Debian archives are skipped."""
    texts = dict(sources) if sources is not None else _read_sources()
    uris: list[str] = []
    for name, text in sorted(texts.items()):
        if name.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, flags=re.M))
                if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no":
                    uris += fields.get("URIs", "").split()
        else:
            for line in text.splitlines():
                m = re.match(r"\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+", line)
                if m:
                    uris.append(m.group(1))
    for u in uris:
        if "security" not in u and re.search(r"/debian/?$", u):
            return u.rstrip("/")
    raise NotSupported("box setup: no Debian archive in the machine's apt sources (/etc/apt/sources.list, "
                       "/etc/apt/sources.list.d/*.sources)")


def _read_sources() -> dict[str, str]:
    out: dict[str, str] = {}
    for p in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        if p.is_file() and (p.suffix in (".list", ".sources") or p.name == "sources.list"):
            out[p.name] = p.read_text(errors="replace")
    return out


def installed_version(root: Path, package: str) -> str | None:
    """The version dpkg recorded in ``root`` for ``package``."""
    status = root / "var/lib/dpkg/status"
    if not status.is_file():
        return None
    for stanza in status.read_text(errors="replace").split("\n\n"):
        if re.search(rf"^Package: {re.escape(package)}$", stanza, flags=re.M):
            m = re.search(r"^Version: (\S+)$", stanza, flags=re.M)
            return m.group(1) if m else None
    return None


def find_box(mesa: str = DEFAULT_MESA, driver: str | None = None) -> Box:
    """The cached root for ``mesa``; NotSupported (with the command that builds it) when absent."""
    root = root_path(mesa)
    stamp = root / STAMP
    if not stamp.is_file():
        raise NotSupported(f"the box for Mesa {mesa} is not built: run `turnip-fdm box setup --mesa {mesa}`")
    info = json.loads(stamp.read_text())
    drv = None
    if driver is not None:
        drv = Path(driver).resolve()
        if not drv.is_file():
            raise ScenarioError("--driver", f"'{driver}' is not a file")
    return Box(root=root, mesa=mesa, mesa_version=str(info.get("mesa_version", "?")), driver=drv)


def setup(mesa: str = DEFAULT_MESA, *, force: bool = False, log: object = None) -> Box:
    """Build (or keep) the root for ``mesa``.  Needs root and mmdebstrap (apt-installed when
    missing); a plain user gets NotSupported naming what is missing."""
    root = root_path(mesa)
    if (root / STAMP).is_file() and not force:
        return find_box(mesa)
    if os.geteuid() != 0:
        raise NotSupported("box setup needs root (mmdebstrap builds the Debian root; run it as root or with sudo)")
    if shutil.which("mmdebstrap") is None:
        if shutil.which("apt-get") is None:
            raise NotSupported("box setup needs mmdebstrap (a Debian package) and there is no apt-get to install it")
        r = subprocess.run(["apt-get", "install", "-y", "-qq", "mmdebstrap"], capture_output=True, text=True,
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if r.returncode != 0 or shutil.which("mmdebstrap") is None:
            raise NotSupported("box setup needs mmdebstrap; `apt-get install mmdebstrap` failed: "
                               + (r.stderr.strip().splitlines() or ["?"])[-1])
    mirror = apt_mirror()
    suites = MESA_SUITES[mesa]
    target = suites[-1]
    include = [f"{p}/{target}" if len(suites) > 1 and p.startswith("mesa-") else p for p in PACKAGES]
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["mmdebstrap", "--variant=apt", "--aptopt=Acquire::Check-Valid-Until \"false\"",
           f"--include={','.join(include)}", suites[0], str(tmp)] + [f"deb {mirror} {s} main" for s in suites]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tail = [ln for ln in r.stderr.splitlines() if ln.startswith("E:")] or r.stderr.strip().splitlines()[-1:]
        raise NotSupported(f"mmdebstrap of {'+'.join(suites)} from {mirror} failed: {' '.join(tail)[:300]}")
    version = installed_version(tmp, "mesa-vulkan-drivers") or "?"
    if not (tmp / SHIM).is_file() or not (tmp / LOADER).is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise NotSupported(f"the {target} root has no freedreno noop shim or dynamic loader for amd64")
    (tmp / STAMP).write_text(json.dumps({"mesa": mesa, "suites": list(suites), "mirror": mirror,
                                         "mesa_version": version}))
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return find_box(mesa)


def _icd(box: Box, scratch: Path) -> Path:
    if box.driver is None:
        return box.root / ICD
    manifest = scratch / "freedreno_custom_icd.json"
    manifest.write_text(json.dumps({"file_format_version": "1.0.1",
                                    "ICD": {"library_path": str(box.driver), "api_version": "1.4.0"}}))
    return manifest


_U_TRACE = "the box's own u_trace print (the recorder reads the render mode's reason from it)"
#: the variables the box sets itself for every recording process, and what to use instead
OWN_VARIABLES = {
    "TU_DEBUG": "the scenario's tu_debug = [...] key (bin merging off: bin_merging = \"off\")",
    "FD_GPU_ID": "--gpu", "FD_RD_DUMP": "--keep DIR", "FD_RD_DUMP_PATH": "--keep DIR",
    "VK_ICD_FILENAMES": "--driver PATH", "VK_DRIVER_FILES": "--driver PATH", "VK_ADD_DRIVER_FILES": "--driver PATH",
    "VK_LAYER_PATH": "the box's own validation layer", "VK_INSTANCE_LAYERS": "the box's own validation layer",
    "VK_LOADER_LAYERS_ENABLE": "the box's own validation layer", "LD_PRELOAD": "the box's noop DRM shim",
    "LD_LIBRARY_PATH": "--driver PATH",
    # the recorder reads turnip's render_pass tracepoint itself (turnip_box.utrace: the render mode's reason)
    "MESA_GPU_TRACES": _U_TRACE,
    "MESA_GPU_TRACEFILE": _U_TRACE,
    "TU_GPU_TRACEPOINT": _U_TRACE,
}
#: the prefixes of the variables that steer turnip, Mesa or the Vulkan loader
STEERING = ("TU_", "FD_", "MESA_", "VK_", "LD_")


def steering_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that steer turnip, Mesa or the loader (:data:`STEERING`) and
    that the box passes on to turnip (named with every verdict).  One the box sets itself
    (:data:`OWN_VARIABLES`) is refused, naming what to use instead: it would silently change
    the pass turnip records, or be overridden."""
    own = sorted(k for k in environ if k in OWN_VARIABLES)
    if own:
        k = own[0]
        raise ScenarioError(k, f"is set in the environment; the box sets it for turnip itself: use "
                               f"{OWN_VARIABLES[k]} and unset {k}")
    return {k: v for k, v in sorted(environ.items()) if k.startswith(STEERING)}


def environment(box: Box, gpu_id: int, scratch: Path, tu_debug: tuple[str, ...] = (),
                validation: bool = True, passed: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a recording process (see the module docstring).  ``validation`` is the
    host's choice, always said (``TURNIP_FDM_BOX_VALIDATION`` ``1``: the layer is required; ``0``:
    explicitly off); the process refuses when the layer is required and missing
    (:mod:`turnip_box.inside`).  The layers are searched in the box's root only."""
    # nothing that steers turnip reaches it unless passed (steering_variables): the verdicts name it
    env = {k: v for k, v in os.environ.items() if not k.startswith(STEERING)}
    env.update(passed or {})
    env.update({
        "LD_PRELOAD": str(box.root / SHIM),
        "FD_GPU_ID": str(gpu_id),
        "VK_ICD_FILENAMES": str(_icd(box, scratch)),
        "XDG_RUNTIME_DIR": str(scratch),
        "FD_RD_DUMP": "enable",
        "FD_RD_DUMP_PATH": str(scratch / "dump"),
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]),
    })
    if tu_debug:
        env["TU_DEBUG"] = ",".join(tu_debug)
    env["VK_LAYER_PATH"] = str(box.root / LAYERS)
    env[VALIDATION_ENV] = "1" if validation else "0"
    (scratch / "dump").mkdir(parents=True, exist_ok=True)
    return env


def launch(box: Box, module: str, args: list[str], env: Mapping[str, str]) -> list[str]:
    """The command line that runs ``python -m module args`` inside the box (the host interpreter
    started by the root's dynamic loader, the root's libraries first)."""
    libs = [str(box.root / LIBDIR), str(box.root / "lib/x86_64-linux-gnu")]
    if box.driver is not None:
        libs.insert(0, str(box.driver.parent))
    pylib = sysconfig.get_config_var("LIBDIR")
    if pylib:
        libs.append(str(pylib))
    return [str(box.root / LOADER), "--library-path", ":".join(libs), sys.executable, "-m", module, *args]
