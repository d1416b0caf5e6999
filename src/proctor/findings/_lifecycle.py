"""Which status changes a user may make (SPEC SUP-8)."""

from __future__ import annotations

from proctor.errors import ConfigError
from proctor.findings._model import Status

TRANSITIONS: dict[str, frozenset[str]] = {
    "open": frozenset({"acknowledged", "resolved", "dismissed", "false_positive"}),
    "acknowledged": frozenset({"open", "resolved", "dismissed", "false_positive"}),
    "resolved": frozenset({"open"}),
    "dismissed": frozenset({"open"}),
    "false_positive": frozenset({"open"}),
}
"""A closed finding can be reopened; everything else moves forward."""


def check_transition(current: Status, new: Status) -> None:
    """Raise ``ConfigError`` when ``current → new`` is not allowed."""
    if new == current:
        return
    if new not in TRANSITIONS[current]:
        allowed = ", ".join(sorted(TRANSITIONS[current]))
        raise ConfigError(
            f"a finding that is {current!r} cannot become {new!r}; it can become: {allowed}"
        )
