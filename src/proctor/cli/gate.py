"""``proctor gate``: the pre-tool gate as an agent hook (Claude Code ``PreToolUse``).

Thin over ``proctor.gate``: read the hook payload from stdin, decide, print the agent's
decision JSON. A broken supervisor must never wedge the agent, so every failure — a
malformed payload, a bad option, a bug — is one line on stderr and exit status 1, which
Claude Code treats as a non-blocking error (exit 2 would block the call).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

EXIT_NOT_DECIDED = 1
"""The hook could not decide; the agent goes on as if there were no hook."""


class _HookCommand(click.Command):
    """A command whose usage errors exit 1, not click's 2 (which Claude Code reads as "block")."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            _fail(exc.format_message())


def _fail(message: str) -> NoReturn:
    click.echo(f"proctor gate: {message}", err=True)
    sys.exit(EXIT_NOT_DECIDED)


@click.command("gate", cls=_HookCommand)
@click.option(
    "--format",
    "hook_format",
    type=click.Choice(["claude-code"]),
    default="claude-code",
    show_default=True,
    help="The agent hook protocol spoken on stdin and stdout.",
)
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Policy file to use instead of the one found from the payload's working folder.",
)
@click.option(
    "--project",
    help="Project whose policy applies (default: the stored conversation's project).",
)
@click.option(
    "--no-daemon",
    is_flag=True,
    help="Neither ask nor start the warm gate process: decide in this process "
    "(as PROCTOR_GATE_DAEMON=0).",
)
def gate_command(
    hook_format: str, policy_path: Path | None, project: str | None, no_daemon: bool
) -> None:
    """Decide whether an agent's next tool call may run (a Claude Code PreToolUse hook).

    Reads the hook payload on stdin, checks the proposed call against the project's policy
    and the session's history (stored conversation plus the transcript file; the database
    is only read), and prints the decision for the agent: deny or ask with the rule and
    reason. When no rule objects it prints nothing and the agent's own permission rules
    apply. Other hook events are ignored. Errors go to stderr with exit status 1, which
    does not block the agent. When `proctor serve` runs for the same PROCTOR_HOME (and
    neither option is given), the server decides and this prints its answer. Otherwise a
    warm gate process (started by an earlier call, exits after 10 idle minutes) decides
    with the rules it imported once; without one this process decides and starts one.
    """
    del hook_format  # one protocol so far; the option keeps room for others
    data = sys.stdin.buffer.read()
    if policy_path is None and project is None:
        # A running `proctor serve` already holds the session: ask it (standard library only).
        from proctor.gate import forward

        answer = forward(data)
        if answer is not None:
            sys.stdout.buffer.write(answer)
            sys.stdout.buffer.flush()
            return
        if not no_daemon:
            # The warm gate process imported the rules once: ask it (standard library only).
            from proctor.gate import answered_warm, start_warm, warm_enabled

            if answered_warm(data):
                return
            if warm_enabled():
                try:
                    decide_here(data, policy_path=policy_path, project=project)
                finally:
                    start_warm()
                return
    decide_here(data, policy_path=policy_path, project=project)


def decide_here(data: bytes, *, policy_path: Path | None, project: str | None) -> None:
    """Decide in this process on the payload ``data`` and print the agent's answer."""
    # Imported when the hook decides itself, so other commands do not pay for the gate.
    from proctor.gate import decide_alone

    decide_alone(data, policy_path=policy_path, project=project)
