"""Entry point: the ``proctor`` group, error handling and exit codes.

Every ``ProctorError`` is printed as one sentence without a traceback; configuration
mistakes exit with 2, other failures with 1.
"""

from __future__ import annotations

import sys

import click
from rich.text import Text

from proctor import __version__
from proctor.cli._common import EXIT_PARTIAL, EXIT_USAGE, err_console
from proctor.cli.conversations import conversations
from proctor.cli.demo import demo
from proctor.cli.ingest import ingest_command
from proctor.cli.init import init
from proctor.cli.watch import watch_command
from proctor.errors import ConfigError, NotFoundError, ProctorError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="proctor")
def cli() -> None:
    """Proctor: an independent supervisor for AI-agent work.

    State lives in $PROCTOR_HOME (default ~/.proctor): one SQLite database.
    """


cli.add_command(init)
cli.add_command(ingest_command)
cli.add_command(watch_command)
cli.add_command(conversations)
cli.add_command(demo)


def main() -> None:
    """Run the CLI, turning Proctor errors into one-line messages and exit codes."""
    try:
        code = cli.main(standalone_mode=False)
    except click.Abort:
        err_console.print("Aborted.")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (ConfigError, NotFoundError) as exc:
        err_console.print(Text.assemble(("Error: ", "red"), str(exc)))
        sys.exit(EXIT_USAGE)
    except ProctorError as exc:
        err_console.print(Text.assemble(("Error: ", "red"), str(exc)))
        sys.exit(EXIT_PARTIAL)
    except KeyboardInterrupt:
        err_console.print("Interrupted.")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
