"""Generate ``docs/rules.md`` from the rule registry, so the reference cannot drift.

python -m proctor.rules._docs > docs/rules.md
"""

from __future__ import annotations

import inspect

from proctor.rules.builtin import FAMILIES


def rules_reference() -> str:
    """Markdown: every built-in rule, family by family, with the family's own explanation."""
    parts = [
        "# Rule reference",
        "",
        "Generated from the rule registry by `python -m proctor.rules._docs > docs/rules.md`;",
        "`tests/rules/test_docs.py` fails when this file is out of date. Policy keys are in",
        "[policy.md](policy.md); the gate is in [gate.md](gate.md).",
        "",
        "The *gate* column is what `proctor gate` does when the rule fires before a tool call,",
        "unless the policy's `[rules]` table says otherwise (`deny`, `ask`, `warn`, `off`).",
        "Some rules choose per finding (a destructive command that cannot be undone is denied,",
        "a milder one asks).",
        "",
        "| rule | version | category | gate | checks |",
        "| --- | --- | --- | --- | --- |",
    ]
    for family in FAMILIES:
        for rule in family.RULES:
            parts.append(
                f"| `{rule.id}` | {rule.version} | {rule.category} | {rule.gate_mode} | "
                f"{rule.description.rstrip('.')}. |"
            )
    parts.append("")
    for family in FAMILIES:
        name = family.__name__.rsplit(".", 1)[-1]
        ids = ", ".join(f"`{rule.id}`" for rule in family.RULES)
        doc = inspect.cleandoc(family.__doc__ or "").strip()
        parts += [f"## {name}", "", f"Rules: {ids}", "", doc, ""]
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    print(rules_reference(), end="")
