"""A shell tool call read once: its command line, where it sits, and its simple commands.

Every format names the command differently (``Bash.command``, ``exec_command.cmd``, the
``-lc`` script inside Codex's argv list); ``proctor.rules`` already knows them all and
parses the line with positions. This module only adds what the extractor needs on top:
the words of the program that does the work once runners (``uv run``, ``npx``,
``python -m``) are stripped, each with its characters in the line, so facts can cite
exactly the package name or test path they come from.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from proctor.rules.builtin import SimpleCommand, shell_source, shell_workdir, simple_commands
from proctor.rules.builtin import strip_runners as _strip_runners
from proctor.transcript import ToolCall


@dataclass(frozen=True, slots=True)
class Arg:
    """One word of a command, with its characters in the command line when known."""

    text: str
    span: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class ShellRun:
    """The command line a shell call ran."""

    text: str
    field: str
    """The argument holding it (``arguments.command``, ``arguments.cmd.2`` …)."""
    exact: bool
    """True when positions in ``text`` are positions in ``field`` (not a joined argv)."""
    workdir: str | None
    commands: tuple[SimpleCommand, ...]

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """A range of the line as a range of the field, when positions map 1:1."""
        return (start, end) if self.exact else None


def shell_run(call: ToolCall) -> ShellRun | None:
    """The command line of a shell call; None for other tools and removed commands."""
    source = shell_source(call)
    if source is None or not source[0].strip():
        return None
    text, field, exact = source
    return ShellRun(text, field, exact, shell_workdir(call), simple_commands(text))


_PROGRAM_ARGS_KEPT = 8192
"""Commands whose program words are remembered (a few batches' worth of shell calls)."""
_program_args_seen: dict[int, tuple[SimpleCommand, tuple[Arg, ...]]] = {}


def program_args(command: SimpleCommand) -> tuple[Arg, ...]:
    """The program that does the work and its arguments (``uv run pytest -q`` → ``pytest -q``).

    Runners are stripped as the verification rules strip them, so a test or an install is
    recognised the same way everywhere; words keep their spans when they map back.

    Every extractor of a shell call (tests, packages, git, URLs, files) asks for the same
    commands, and :func:`simple_commands` hands out the same command objects for the same
    line, so the answer is kept per command object: by its ``id``, holding the command so
    the id cannot be reused while it is kept (hashing the command's words would cost as
    much as reading them). At most ``_PROGRAM_ARGS_KEPT`` are kept; then it starts over.
    """
    kept = _program_args_seen.get(id(command))
    if kept is not None and kept[0] is command:
        return kept[1]
    args = _program_args(command)
    if len(_program_args_seen) >= _PROGRAM_ARGS_KEPT:
        _program_args_seen.clear()
    _program_args_seen[id(command)] = (command, args)
    return args


def _program_args(command: SimpleCommand) -> tuple[Arg, ...]:
    words = command.words[len(command.words) - len(command.argv) :]
    stripped = _strip_runners(command.argv)
    offset = len(command.argv) - len(stripped)
    aligned = stripped[1:] == command.argv[offset + 1 :]
    args: list[Arg] = []
    for index, text in enumerate(stripped):
        word = words[offset + index] if aligned else None
        span = word.span() if word is not None and word.text == text else None
        args.append(Arg(text, span))
    return tuple(args)


def command_folders(
    commands: tuple[SimpleCommand, ...] | list[SimpleCommand], workdir: str | None
) -> list[str | None]:
    """The folder each command runs in: ``workdir`` moved by earlier ``cd``/``pushd``.

    ``cd frontend && npm test`` and ``cd backend && npm test`` run different tests; the
    classifier follows ``cd`` only for the paths it records, so the extractor follows it
    here for every command. A substitution's ``cd`` (``$(cd x && pwd)``) moves nothing.
    """
    folders: list[str | None] = []
    folder = workdir
    for command in commands:
        folders.append(folder)
        if command.origin == "substitution" or command.program not in ("cd", "pushd"):
            continue
        target = next((w for w in command.args if not w.startswith("-")), "~")
        if target == "-":
            continue
        if folder is None or target.startswith(("/", "~", "$HOME", "${HOME}")):
            folder = target
        else:
            folder = posixpath.join(folder, target)
    return folders


def program_name(args: tuple[Arg, ...]) -> str:
    """The base name of the program, lower case, without ``.exe``."""
    if not args:
        return ""
    return args[0].text.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
