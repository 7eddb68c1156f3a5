"""Every case of the device suite, from one explicit table (:data:`BACKEND_CASES`).

Each backend package has a ``cases`` module whose ``cases()`` lists that backend's cases, built
explicitly (no module is imported by name at run time).  :func:`all_cases` concatenates them in
table order:

* ``host`` (:mod:`vk_tests.host.cases`): the oracles A1-A3, named ``host.<oracle name>``,
  needing no device;
* ``replay`` (:mod:`vk_tests.replay.cases`): turnip's per-bin scheme replayed with ordinary
  Vulkan (the core groups, D9 baselines, clears, depth/LRZ, MSAA, the subsampled image), then
  the ``replay.twin.*`` cases of the fdm scenes (:func:`vk_tests.fdm.cases.replay_twins`);
* ``fdm`` (:mod:`vk_tests.fdm.cases`): real FDM render passes;
* ``fsr`` (:mod:`vk_tests.fsr.cases`): the model's areas as a shading-rate attachment.

The devices that run and judge the cases themselves (the box, ``--device box:GPU``) are not
listed here: :mod:`vk_tests.box.device` looks the ``fdm`` cases up itself and the command line
(:mod:`vk_tests.cli`) opens it, so the registry and the box do not depend on each other.

The ``vk`` command imports this module only when it needs the cases (so that
``turnip-fdm --help`` does not load the backends); a backend that is missing or broken makes
every command that needs the suite fail, loudly.  The names are checked once, here
(:func:`vk_tests.suite.selection.check_names`): unique, dotted ``backend.group.variant[...]``
with the case's own backend first, and usable as a directory name of the result bundle.
"""

from __future__ import annotations

from collections.abc import Callable

from .fdm import cases as fdm_cases
from .fsr import cases as fsr_cases
from .host import cases as host_cases
from .replay import cases as replay_cases
from .suite.cases import Case
from .suite.selection import check_names

#: (backend, its ``cases()``), in the order the suite lists and runs them
BACKEND_CASES: tuple[tuple[str, Callable[[], list[Case]]], ...] = (
    ("host", host_cases.cases),
    ("replay", replay_cases.cases),
    ("replay", fdm_cases.replay_twins),  # the replay twins of the fdm scenes
    ("fdm", fdm_cases.cases),
    ("fsr", fsr_cases.cases),
)


def all_cases() -> list[Case]:
    """Every case of the suite, in :data:`BACKEND_CASES` order (names checked)."""
    out: list[Case] = []
    for backend, make in BACKEND_CASES:
        got = make()
        wrong = [c.name for c in got if c.backend != backend]
        if wrong:
            raise ValueError(f"{make.__module__}.{make.__name__} lists cases of another backend: {wrong[:3]}")
        out += got
    check_names(out)
    return out
