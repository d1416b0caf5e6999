"""``proctor rules`` and ``proctor policy``: what the deterministic rules are and how a policy sets them."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json
from proctor.cli._tables import Column, fitted_table
from proctor.rules import DEFAULT_POLICY, find_policy, load_policy
from proctor.rules.builtin import builtin_rules


@click.command("rules")
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Show the gate setting this policy gives each rule.",
)
@json_option()
def rules_command(policy_path: Path | None, as_json: bool) -> None:
    """List the built-in deterministic rules (ids are what policies name in [rules])."""
    policy = load_policy(policy_path) if policy_path is not None else DEFAULT_POLICY
    rows: list[dict[str, object]] = [
        {
            "rule": rule.id,
            "version": rule.version,
            "category": rule.category,
            "gate": policy.rules.get(rule.id, rule.gate_mode),
            "description": rule.description,
        }
        for rule in builtin_rules()
    ]
    if as_json:
        print_json({"policy": policy.source, "rules": rows})
        return
    columns = (
        Column("rule", "id"),
        Column("v"),
        Column("category", drop=1),
        Column("gate"),
        Column("checks", "text", least=24),
    )
    cells: list[list[str | Text]] = [
        [str(row[key]) for key in ("rule", "version", "category", "gate", "description")]
        for row in rows
    ]
    table = fitted_table(
        columns, cells, width=console.width, title=f"Rules · policy: {policy.source}"
    )
    console.print(table)


@click.group("policy")
def policy_group() -> None:
    """Check policy files and see which one applies."""


@policy_group.command("check")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False, exists=True))
def policy_check(path: Path) -> None:
    """Validate a policy file (errors name the key and what is wrong)."""
    policy = load_policy(path)
    console.print(
        f"{path}: valid (mode {policy.mode}, {len(policy.hard_stops)} hard stop(s), "
        f"{len(policy.required_artifacts)} required artifact(s), {len(policy.rules)} rule setting(s))",
        markup=False,
    )


@policy_group.command("which")
@click.option(
    "--cwd", type=click.Path(path_type=Path, file_okay=False), default=".", show_default=True
)
@click.option("--project", help="Project name (for $PROCTOR_HOME/policies/<project>.toml).")
def policy_which(cwd: Path, project: str | None) -> None:
    """Say which policy applies to a working folder and project."""
    policy = find_policy(cwd=str(cwd.resolve()), project=project)
    console.print(f"{policy.source}", markup=False)
