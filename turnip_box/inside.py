"""What every process inside the box shares: turnip's device, under the box's one validation
policy, and the ``.rd`` files turnip dumps.

Two kinds of process run inside the box (:func:`turnip_box.root.launch`): the scenario recorder
(:mod:`turnip_box.record`) and the device suite's box worker (``vk_tests.box.device``).  Both
bring turnip's device up here and take their command streams here:

* :func:`open_box_device` opens the device through the harness
  (:func:`turnip_base.harness.open_device`): the box's loader sees turnip alone (its ICD), so the
  device is index 0 whatever ``TURNIP_FDM_DEVICE`` the host has set.
* **The validation policy.**  The Khronos validation layer is required: a box without it refuses
  (:class:`~turnip_base.errors.NotSupported` naming the Debian package, ``vulkan-validationlayers``,
  which ``turnip-fdm box setup`` installs), unless the host asked explicitly to run without it.
  The host says which in the environment, :data:`VALIDATION_ENV` (``1``: required, the default
  that :func:`turnip_box.root.environment` sets; ``0``: off); the process decides, because only it
  sees whether the layer is really there.
* :class:`RdCapture`: turnip writes one ``.rd`` file per submit into ``FD_RD_DUMP_PATH``
  (numbered by its own submits); a capture marks the files there before a submission and moves
  the ones that came since into a folder.
* :func:`die_with_parent`: a box process ends when the host process that started it does.

This module imports no Vulkan binding itself: the harness does.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
from collections.abc import Mapping
from pathlib import Path

from turnip_base.errors import NotSupported
from turnip_base.harness import API_VERSION, VALIDATION_LAYER, DeviceSetup, Vulkan, open_device

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent() -> None:
    """Have the kernel kill this process when the one that started it ends (Linux
    ``PR_SET_PDEATHSIG``), and end now if it already has.  A box process runs in a session of its
    own (Ctrl-C is the host's to handle), so nothing else stops it when the host dies; and once
    the host has removed the scratch folder, turnip's ``.rd`` writer retries its failed
    ``gzwrite`` for ever, a core at 100% (seen: an orphan of an interrupted test, 38 CPU-minutes)."""
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the host's own clean-up (turnip_box.check) still kills it
    if parent == 1 or os.getppid() != parent:
        os._exit(1)


#: the host's choice of validation (:func:`turnip_box.root.environment`): "1" required, "0" off
VALIDATION_ENV = "TURNIP_FDM_BOX_VALIDATION"
#: where turnip dumps its ``.rd`` files (Mesa's ``FD_RD_DUMP_PATH``)
DUMP_ENV = "FD_RD_DUMP_PATH"


def validation_required(env: Mapping[str, str] | None = None) -> bool:
    """Whether the layer is required: anything but an explicit ``0`` (unset included) requires it."""
    return (os.environ if env is None else env).get(VALIDATION_ENV, "1") != "0"


def open_box_device(setup: DeviceSetup | None = None, api_version: tuple[int, int] = API_VERSION) -> Vulkan:
    """turnip's device in this box process, with the validation layer unless the host turned it
    off (module docstring); ``setup`` and ``api_version`` as :func:`turnip_base.harness.open_device`
    takes them.  ``messenger`` of the result is None exactly when validation is off; its
    ``messages`` collect the layer's warnings and errors."""
    required = validation_required()
    try:
        return open_device(0, validation=required, setup=setup, api_version=api_version)
    except NotSupported as e:
        if required and VALIDATION_LAYER in str(e):
            raise NotSupported(f"the box: {e}; the box records only under it "
                               f"({VALIDATION_ENV}=0 runs without it)") from None
        raise


class RdCapture:
    """The ``.rd`` files turnip dumps into ``folder`` (default ``FD_RD_DUMP_PATH``): :meth:`mark`
    before a submission, :meth:`take` after its fence."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(os.environ[DUMP_ENV]) if folder is None else folder
        self._before: set[Path] = set()

    def files(self) -> set[Path]:
        return set(self.folder.glob("*.rd*"))

    def mark(self) -> None:
        """Remember the files dumped so far."""
        self._before = self.files()

    def take(self, into: Path) -> list[str]:
        """Move the files dumped since :meth:`mark` into ``into`` (created), in turnip's order (its
        names number its submits), under their own names; their new paths."""
        new = sorted(self.files() - self._before)
        self._before = set()
        into.mkdir(parents=True, exist_ok=True)
        moved = []
        for f in new:
            dst = into / f.name
            shutil.move(str(f), dst)
            moved.append(str(dst))
        return moved

    def drop(self) -> None:
        """Delete every file dumped and not taken (the submits nobody asked for)."""
        for f in self.files():
            f.unlink(missing_ok=True)
        self._before = set()
