"""Entry point: the ``proctor`` group, error handling and exit codes.

Every ``ProctorError`` is printed as one sentence without a traceback. Exit status:
0 success; 1 the command ran but some input failed or the store refused; 2 a usage or
configuration mistake (including an unknown id); 130 interrupted.
"""

from __future__ import annotations

from typing import IO, Any

import click
from rich.text import Text

from proctor import __version__
from proctor.cli._common import EXIT_PARTIAL, EXIT_USAGE, err_console
from proctor.cli.check import check_command
from proctor.cli.conversations import conversations
from proctor.cli.demo import demo
from proctor.cli.eval import eval_group
from proctor.cli.findings import findings
from proctor.cli.gate import gate_command
from proctor.cli.ingest import ingest_command
from proctor.cli.init import init
from proctor.cli.rules import policy_group, rules_command
from proctor.cli.watch import watch_command
from proctor.errors import ConfigError, NotFoundError, ProctorError


class ProctorCliError(click.ClickException):
    """A ``ProctorError`` on its way to the terminal: one line, exit status 1."""

    exit_code = EXIT_PARTIAL

    def show(self, file: IO[Any] | None = None) -> None:
        err_console.print(Text.assemble(("Error: ", "red"), self.message))


class ProctorUsageError(ProctorCliError):
    """A configuration mistake or unknown id: exit status 2."""

    exit_code = EXIT_USAGE


class ProctorGroup(click.Group):
    """A click group that turns Proctor's errors into messages and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ConfigError, NotFoundError) as exc:
            raise ProctorUsageError(str(exc)) from exc
        except ProctorError as exc:
            raise ProctorCliError(str(exc)) from exc


@click.group(
    cls=ProctorGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="proctor")
def cli() -> None:
    """Proctor: an independent supervisor for AI-agent work.

    State lives in $PROCTOR_HOME (default ~/.proctor): one SQLite database.
    """


cli.add_command(init)
cli.add_command(ingest_command)
cli.add_command(watch_command)
cli.add_command(conversations)
cli.add_command(check_command)
cli.add_command(findings)
cli.add_command(eval_group)
cli.add_command(gate_command)
cli.add_command(rules_command)
cli.add_command(policy_group)
cli.add_command(demo)


def main() -> None:
    """Run the ``proctor`` command."""
    cli(prog_name="proctor")


if __name__ == "__main__":
    main()
