"""Docs that cannot drift: the rule reference is generated from the registry."""

from __future__ import annotations

from proctor.rules._docs import rules_reference
from proctor.rules.builtin import builtin_rules
from tests.conftest import REPO_ROOT


def test_the_rule_reference_matches_the_registry() -> None:
    written = (REPO_ROOT / "docs" / "rules.md").read_text()
    assert written == rules_reference(), "run: python -m proctor.rules._docs > docs/rules.md"


def test_every_rule_id_is_unique_and_versioned() -> None:
    rules = builtin_rules()
    ids = [rule.id for rule in rules]
    assert len(ids) == len(set(ids))
    assert all(rule.version >= 1 and rule.description for rule in rules)
