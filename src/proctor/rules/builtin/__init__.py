"""The built-in rule families, one module each; every module exports ``RULES``."""

from __future__ import annotations

from proctor.rules._rule import Rule
from proctor.rules.builtin import (
    budgets,
    claims,
    destructive,
    hard_stop,
    idempotency,
    injection,
    loops,
    output_schema,
    permissions,
    risky_actions,
    secrets,
)
from proctor.rules.builtin._call_effects import (
    commands_of,
    edited_paths,
    is_inspection,
    tool_base_name,
)
from proctor.rules.builtin._claim_text import find_claims
from proctor.rules.builtin._file_access import (
    FileAccess,
    file_accesses,
    is_spawn,
    shell_source,
    shell_workdir,
)
from proctor.rules.builtin._locations import home_of, normalise, within
from proctor.rules.builtin._loop_track import action_label
from proctor.rules.builtin._shell_words import SimpleCommand, simple_commands
from proctor.rules.builtin._verification import _strip_runners as strip_runners
from proctor.rules.builtin._verification import (
    call_topics,
    command_topics,
    outcome,
    summary_span,
)

FAMILIES = (
    permissions,
    budgets,
    idempotency,
    output_schema,
    hard_stop,
    loops,
    destructive,
    secrets,
    claims,
    injection,
    risky_actions,
)


BUILTIN_RULES: tuple[Rule, ...] = tuple(rule for family in FAMILIES for rule in family.RULES)
"""One instance of every built-in rule, family by family (rules keep no state of their own)."""


def builtin_rules() -> list[Rule]:
    """Fresh instances of every built-in rule, family by family."""
    return [type(rule)() for rule in BUILTIN_RULES]


# The shell, file and verification readers the review's structural facts and the
# supervisor's goal checks share with the rules.
__all__ = [
    "BUILTIN_RULES",
    "FAMILIES",
    "FileAccess",
    "SimpleCommand",
    "action_label",
    "builtin_rules",
    "call_topics",
    "command_topics",
    "commands_of",
    "edited_paths",
    "file_accesses",
    "find_claims",
    "home_of",
    "is_inspection",
    "is_spawn",
    "normalise",
    "outcome",
    "shell_source",
    "shell_workdir",
    "simple_commands",
    "strip_runners",
    "summary_span",
    "tool_base_name",
    "within",
]
