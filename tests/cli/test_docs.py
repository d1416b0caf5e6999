"""Docs that cannot drift: the command reference is the commands' own help."""

from __future__ import annotations

from proctor.cli._docs import cli_reference
from tests.conftest import REPO_ROOT


def test_the_command_reference_matches_the_commands() -> None:
    written = (REPO_ROOT / "docs" / "cli.md").read_text()
    assert written == cli_reference(), "run: python -m proctor.cli._docs > docs/cli.md"


def test_the_readme_starts_with_the_two_commands() -> None:
    head = (REPO_ROOT / "README.md").read_text().splitlines()[:8]
    assert any(line.startswith("make demo") for line in head)
    assert any(line.startswith("make test") for line in head)


def test_the_command_reference_covers_every_command_and_subcommand() -> None:
    from proctor.cli.main import COMMANDS

    reference = cli_reference()
    for name in COMMANDS:
        assert f"## `proctor {name}`" in reference, name
    for nested in ("review run", "graph show", "findings list", "eval agentdojo", "models add"):
        assert f"## `proctor {nested}`" in reference, nested
