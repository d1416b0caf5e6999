"""Commits: ``git commit`` in a command line, the hash git printed, the files it names.

A commit entity needs its hash, which only the output shows: ``[main 1a2b3c4] message``
(``[main (root-commit) 1a2b3c4]`` for the first). Which files a commit holds is exact
only where the line or the output names them: ``git add a b && git commit`` (staged in
the same line, the commit running only if the add succeeded), ``git commit a b``, and
the ``create mode``/``delete mode`` lines git prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from proctor.review.structural._shell import Arg, program_args, program_name
from proctor.rules.builtin import SimpleCommand

_COMMIT_LINE = re.compile(
    r"^\[(?P<branch>[^\]\s]+)(?: \(root-commit\))? (?P<hash>[0-9a-f]{7,40})\] (?P<message>.*)$",
    re.MULTILINE,
)
_MODE_LINE = re.compile(r"^ (?:create|delete) mode \d+ (?P<path>.+)$", re.MULTILINE)
_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_COMMIT_VALUED = frozenset({"-m", "--message", "-F", "--file", "-C", "--reuse-message", "-c",
                            "--reedit-message", "--author", "--date", "--fixup", "--squash",
                            "-t", "--template", "--cleanup", "--trailer"})  # fmt: skip
_ADD_ALL = frozenset({".", "-A", "--all", "-u", "--update", ":/", "*"})


@dataclass(frozen=True, slots=True)
class CommitCommand:
    """A ``git commit`` in a command line."""

    start: int
    end: int
    message: Arg | None
    """The ``-m`` value, when given as one word."""
    paths: tuple[Arg, ...]
    """Files staged by ``git add`` earlier in the line (``&&``-joined) or named to commit."""


@dataclass(frozen=True, slots=True)
class CommitLine:
    """What git printed for a commit it made."""

    hash: str
    branch: str
    message: str
    start: int
    end: int
    files: tuple[tuple[str, int, int], ...]
    """Paths of ``create mode``/``delete mode`` lines, with their characters."""


def commit_commands(commands: Sequence[SimpleCommand]) -> list[CommitCommand]:
    """The ``git commit`` commands of a line, each with what it is shown to include."""
    found: list[CommitCommand] = []
    staged: list[Arg] = []
    for command in commands:
        sub, rest = _git_subcommand(command)
        if sub == "add":
            paths = [a for a in rest if not a.text.startswith("-")]
            if not any(a.text in _ADD_ALL for a in rest):
                staged.extend(paths)
        elif sub == "commit":
            message, named = _commit_args(rest)
            found.append(CommitCommand(command.start, command.end, message, (*staged, *named)))
            staged = []
        if command.separator != "&&":
            staged = []  # `git add x; git commit`: the add may have failed
    return found


def commit_lines(text: str | None) -> list[CommitLine]:
    """Every ``[branch hash] message`` line of a result, with the files listed after it."""
    if not text:
        return []
    matches = list(_COMMIT_LINE.finditer(text))
    found: list[CommitLine] = []
    for index, match in enumerate(matches):
        stop = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        files = tuple(
            (
                m.group("path").strip(),
                m.start("path"),
                m.start("path") + len(m.group("path").strip()),
            )
            for m in _MODE_LINE.finditer(text, match.end(), stop)
        )
        found.append(
            CommitLine(
                match.group("hash"),
                match.group("branch"),
                match.group("message").strip(),
                match.start(),
                match.end(),
                files,
            )
        )
    return found


def _git_subcommand(command: SimpleCommand) -> tuple[str, list[Arg]]:
    args = program_args(command)
    if program_name(args) != "git":
        return "", []
    index = 1
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in _GLOBAL_VALUED else 1
    if index >= len(args):
        return "", []
    return args[index].text, list(args[index + 1 :])


def _commit_args(args: list[Arg]) -> tuple[Arg | None, list[Arg]]:
    message: Arg | None = None
    paths: list[Arg] = []
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            paths.extend(args[index + 1 :])
            break
        if text.startswith("-"):
            takes_value = text in _COMMIT_VALUED or (
                not text.startswith("--") and text.endswith("m") and len(text) > 2
            )  # -am "msg"
            if takes_value and index + 1 < len(args):
                if message is None and (text in ("-m", "--message") or text.endswith("m")):
                    message = args[index + 1]
                index += 2
                continue
            if text.startswith("--message="):
                message = message or Arg(text.split("=", 1)[1], None)
            index += 1
            continue
        paths.append(args[index])
        index += 1
    return message, paths
