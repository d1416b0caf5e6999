"""Rule family: hard_stop (not written yet)."""

from __future__ import annotations

from proctor.rules._rule import Rule

RULES: list[Rule] = []
