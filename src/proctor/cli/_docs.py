"""Generate ``docs/cli.md`` from the commands' own help, so the reference cannot drift.

python -m proctor.cli._docs > docs/cli.md
"""

from __future__ import annotations

import click

from proctor.cli.main import cli


def _walk(command: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        # list_commands / get_command, not .commands: the top group loads subcommands lazily.
        context = click.Context(command)
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            assert sub is not None
            found.extend(_walk(sub, [*path, name]))
    return found


def cli_reference() -> str:
    """Markdown with the ``--help`` of every command."""
    parts = [
        "# Command reference",
        "",
        "Generated from the commands' help by `python -m proctor.cli._docs > docs/cli.md`;",
        "`tests/cli/test_docs.py` fails when this file is out of date.",
        "",
    ]
    for path, command in _walk(cli, ["proctor"]):
        context = cli.make_context("proctor", [], resilient_parsing=True, terminal_width=100)
        for name in path[1:]:
            group = context.command
            assert isinstance(group, click.Group)
            sub = group.get_command(context, name)
            assert sub is not None
            context = sub.make_context(name, [], parent=context, resilient_parsing=True)
        help_text = command.get_help(context)
        parts += [f"## `{' '.join(path)}`", "", "```", help_text.rstrip(), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    print(cli_reference(), end="")
