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


__all__ = ["BUILTIN_RULES", "FAMILIES", "builtin_rules"]
