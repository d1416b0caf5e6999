"""Entry point: the ``proctor`` group, error handling and exit codes.

Every ``ProctorError`` is printed as one sentence without a traceback. Exit status:
0 success; 1 the command ran but some input failed or the store refused; 2 a usage or
configuration mistake (an unknown id, a model setting to fix); 130 interrupted.

Subcommands are imported when used: ``proctor gate`` runs before every tool call of an
agent, so it must not pay for importing the importers, the evaluations or the renderer.
"""

from __future__ import annotations

import atexit
import gc
import importlib
from typing import IO, Any

import click

from proctor import __version__
from proctor.cli._collection import collection_paused
from proctor.cli._exit import EXIT_PARTIAL, EXIT_USAGE
from proctor.errors import ConfigError, ModelError, NotFoundError, ProctorError

COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("proctor.cli.init", "init"),
    "ingest": ("proctor.cli.ingest", "ingest_command"),
    "watch": ("proctor.cli.watch", "watch_command"),
    "conversations": ("proctor.cli.conversations", "conversations"),
    "search": ("proctor.cli.search", "search_command"),
    "check": ("proctor.cli.check", "check_command"),
    "supervise": ("proctor.cli.supervise", "supervise"),
    "goals": ("proctor.cli.goals", "goals_command"),
    "supervisor": ("proctor.cli.supervisor_model", "supervisor"),
    "models": ("proctor.cli.models", "models"),
    "review": ("proctor.cli.review", "review"),
    "graph": ("proctor.cli.graph", "graph"),
    "kb": ("proctor.cli.knowledge", "kb"),
    "app": ("proctor.cli.app", "app"),
    "plans": ("proctor.cli.plans", "plans"),
    "worker": ("proctor.cli.worker", "worker_command"),
    "activity": ("proctor.cli.activity", "activity_command"),
    "suggestions": ("proctor.cli.suggestions", "suggestions"),
    "findings": ("proctor.cli.findings", "findings"),
    "memories": ("proctor.cli.memories", "memories"),
    "tasks": ("proctor.cli.tasks", "tasks"),
    "notifications": ("proctor.cli.notifications", "notifications"),
    "gate": ("proctor.cli.gate", "gate_command"),
    "rules": ("proctor.cli.rules", "rules_command"),
    "policy": ("proctor.cli.rules", "policy_group"),
    "eval": ("proctor.cli.eval", "eval_group"),
    "demo": ("proctor.cli.demo", "demo"),
    "mcp": ("proctor.cli.mcp", "mcp_command"),
    "serve": ("proctor.cli.serve", "serve_command"),
}
"""Command name → (module, attribute), in the order ``--help`` lists them."""


class ProctorCliError(click.ClickException):
    """A ``ProctorError`` on its way to the terminal: one line, exit status 1."""

    exit_code = EXIT_PARTIAL

    def show(self, file: IO[Any] | None = None) -> None:
        from rich.text import Text

        from proctor.cli._common import err_console

        err_console.print(Text.assemble(("Error: ", "red"), self.message))


class ProctorUsageError(ProctorCliError):
    """A configuration mistake or unknown id: exit status 2."""

    exit_code = EXIT_USAGE


class ProctorGroup(click.Group):
    """Loads subcommands on demand and turns Proctor's errors into messages and exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target
        with collection_paused():
            command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ConfigError, NotFoundError) as exc:
            raise ProctorUsageError(str(exc)) from exc
        except ModelError as exc:
            if exc.kind == "config":
                raise ProctorUsageError(str(exc)) from exc
            raise ProctorCliError(str(exc)) from exc
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


def main() -> None:
    """Run the ``proctor`` command."""
    # The command ends the process. The interpreter's last act would be one more full
    # collection, walking every object of the modules it imported (SQLAlchemy, the store,
    # rich …) only to find them alive: about a fifth of a short command's CPU. Frozen at
    # exit, they are left to the operating system like the rest of the process's memory.
    # Registered first, this runs last: handlers registered later (files, pools) run before.
    atexit.register(gc.freeze)
    cli(prog_name="proctor")


if __name__ == "__main__":
    main()
