"""The error contract of every turnip-fdm package and command: four refusals, one line each.

* :class:`ScenarioError` — the input is invalid (a scenario field, a command-line argument,
  an option of the Python API).  ``field`` names where, ``rule`` what it must satisfy.
* :class:`DriverAssertion` — the input is valid Vulkan, but turnip would hit an ``assert``
  (or undefined behaviour) on it; the model stops where the driver would.
* :class:`NotModelled` — a path of the driver the model deliberately does not cover.
* :class:`NotSupported` — a device or machine lacks something (a Vulkan loader, an
  extension, a feature); ``what`` names the missing piece.

The command line (``turnip_fdm.cli``) maps each to its exit status and to the single line
``turnip-fdm: error: FIELD: RULE`` or ``turnip-fdm: not supported: WHAT``.  Anything else that
escapes is a bug of the model, not a refusal.
"""

from __future__ import annotations

from typing import Final


class TurnipFdmError(Exception):
    """Base of the four refusals.  ``str()`` is one line."""

    #: exit status of the command line for this refusal
    exit_status: int = 2
    #: the word after ``turnip-fdm:`` on the error line
    label: str = "error"

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(_one_line(f"{field}: {rule}"))


class ScenarioError(TurnipFdmError, ValueError):
    """Invalid input.  ``field`` is a dotted path (``density.views[1].center``) or a flag
    (``--out``); ``rule`` says what the value must satisfy.

    It stays a ``ValueError`` so that callers of the Python API can treat it as one."""


class DriverAssertion(TurnipFdmError):
    """turnip would assert (or hit undefined behaviour) here: ``field`` names the driver
    function or the scenario field that leads there, ``rule`` the condition the driver asserts."""


class NotModelled(TurnipFdmError):
    """A driver path the model does not cover (yet), named by ``field``; ``rule`` says why."""


class NotSupported(TurnipFdmError):
    """The machine or device lacks something; the message names the missing piece."""

    label = "not supported"

    def __init__(self, what: str, rule: str | None = None) -> None:
        if rule is None:
            # one-argument form: the whole message is what is missing
            self.field = what
            self.rule = ""
            Exception.__init__(self, _one_line(what))
        else:
            super().__init__(what, rule)


#: exit status for a refusal (all four)
EXIT_REFUSED: Final = 2
#: exit status for an unexpected exception (a bug of the model) or a failed check
EXIT_FAILURE: Final = 1
#: exit status of a check that compared nothing (every case not supported, an empty selection):
#: never 0, so that a gate cannot pass on nothing; distinct from a failure
EXIT_NOTHING_COMPARED: Final = 3


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
