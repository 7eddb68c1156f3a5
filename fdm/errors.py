"""The error contract, re-exported from the bottom layer (:mod:`turnip_base.errors`), where it
lives so that every package can raise it without importing ``fdm``."""

from __future__ import annotations

from turnip_base.errors import (
    EXIT_FAILURE,
    EXIT_REFUSED,
    DriverAssertion,
    NotModelled,
    NotSupported,
    ScenarioError,
    TurnipFdmError,
)

__all__ = ["EXIT_FAILURE", "EXIT_REFUSED", "DriverAssertion", "NotModelled", "NotSupported", "ScenarioError",
           "TurnipFdmError"]
