"""The one error type of the model: an invalid scenario or argument, naming field and rule."""

from __future__ import annotations


class ScenarioError(ValueError):
    """Raised for invalid input.  ``field`` is a dotted path (``density.views[1].center``),
    ``rule`` says what the value must satisfy.  ``str()`` is one line."""

    def __init__(self, field: str, rule: str):
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")
