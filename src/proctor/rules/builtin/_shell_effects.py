"""What a shell command does to files: the vocabulary and the argument helpers.

A command line is *read-only* when every simple command in it is known to only read
(``ls``, ``cat``, ``grep``, ``git status``, test runners), *writes* when one is known
to change something (a redirection to a file, ``rm``, ``sed -i``, ``git commit``, a
package install, ``curl -X POST``), and *unknown* otherwise (``make``, ``python
script.py``, ``npm run build``): Proctor cannot see what an arbitrary program does, so
callers that need a conservative answer treat unknown as writing. Alongside, it lists
the paths the command names and how it uses each (read, write, delete, modify), with
the characters of the line that name them. ``_shell_classify`` fills these in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from proctor.rules.builtin._shell_words import ASSIGNMENT, SimpleCommand, Word

Access = Literal["read", "write", "delete", "modify"]
"""``write``: content written or a file created; ``modify``: permissions, folders, staging."""
Verdict = Literal["read_only", "writes", "unknown"]

_STRICT_PATH = re.compile(
    r"^(?:/|~(?:/|$)|\.\.?(?:/|$)|\$HOME(?:/|$)|\$\{HOME\}(?:/|$)|[A-Za-z]:[\\/])"
)
_EMBEDDED = re.compile(r"^(?:--?[\w-]+=|[\w.-]+=[@<]?|@)")


Handler = Callable[[str, list[Word], "Ctx"], None]
"""Classifies one program: its name, its arguments, and where to record what it does."""


@dataclass(frozen=True, slots=True)
class PathUse:
    """A path named by a command, as written, and how the command uses it."""

    text: str
    start: int
    end: int
    access: Access
    base: str | None = None
    """The folder an earlier ``cd`` in the same line moved to, as written."""


@dataclass(frozen=True, slots=True)
class Change:
    """Why a command writes (or may write), and which characters say so."""

    verdict: Literal["writes", "unknown"]
    reason: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class CommandEffects:
    """Everything one command line does that the permission rules care about."""

    changes: tuple[Change, ...] = ()
    paths: tuple[PathUse, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """``writes`` beats ``unknown`` beats ``read_only``."""
        if any(change.verdict == "writes" for change in self.changes):
            return "writes"
        return "unknown" if self.changes else "read_only"

    @property
    def cause(self) -> Change | None:
        """The first change that decided the verdict."""
        for change in self.changes:
            if change.verdict == "writes":
                return change
        return self.changes[0] if self.changes else None


@dataclass
class Ctx:
    """What a program handler records into, for one simple command."""

    command: SimpleCommand
    base: str | None
    run: Callable[[list[Word], Ctx], None]
    """Classify a nested command (``xargs rm``, ``find -exec``, ``uv run pytest``)."""
    changes: list[Change] = field(default_factory=list)
    paths: list[PathUse] = field(default_factory=list)

    def writes(self, reason: str) -> None:
        """Record that the command changes something."""
        self.changes.append(Change("writes", reason, self.command.start, self.command.end))

    def unknown(self, reason: str) -> None:
        """Record that the command may change something Proctor cannot see."""
        self.changes.append(Change("unknown", reason, self.command.start, self.command.end))

    def path(self, word: Word, access: Access, first: int = 0) -> None:
        """Record ``word.text[first:]`` as a path the command uses."""
        text = word.text[first:]
        if not text or text in ("-", "{}") or text.startswith(("$(", "`", "<(", ">(")):
            return
        start, end = word.span(first)
        self.paths.append(PathUse(text, start, end, access, self.base))

    def paths_in(self, words: Iterable[Word], access: Access) -> None:
        """Record every word as a path."""
        for word in words:
            if not word.text.isdigit():
                self.path(word, access)


def is_assignment(word: Word) -> bool:
    """``NAME=value`` before a command."""
    return ASSIGNMENT.match(word.text) is not None


def looks_like_path(text: str, *, loose: bool = False) -> bool:
    """Absolute, home-relative or dot-relative; ``loose`` also accepts ``dir/file``."""
    if "://" in text or text.startswith(("$(", "`")):
        return False
    if _STRICT_PATH.match(text):
        return True
    return loose and "/" in text and not text.startswith(("-", "@", "$", "{")) and ":" not in text


def embedded_path(word: Word, *, loose: bool = False) -> int | None:
    """Where a path starts inside ``--opt=PATH``, ``key=@PATH`` or ``@PATH``; None if none."""
    match = _EMBEDDED.match(word.text)
    if match is None:
        return None
    first = match.end()
    return first if looks_like_path(word.text[first:], loose=loose) else None


def split_args(
    args: list[Word], values: dict[str, int] | None = None
) -> tuple[list[Word], list[Word]]:
    """Options and positional words; ``values`` names options followed by N value words."""
    values = values or {}
    options: list[Word] = []
    positionals: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        if text == "--":
            positionals.extend(args[i + 1 :])
            break
        if text.startswith("-") and text != "-":
            options.append(word)
            if "=" not in text and text in values:
                options.extend(args[i + 1 : i + 1 + values[text]])
                i += values[text]
        else:
            positionals.append(word)
        i += 1
    return options, positionals


def has_option(options: list[Word], *names: str) -> bool:
    """True when one of the long options, or a short flag inside a cluster, was given."""
    for word in options:
        if not word.text.startswith("-"):
            continue
        text = word.text.split("=", 1)[0]
        for name in names:
            if text == name:
                return True
            if len(name) == 2 and not text.startswith("--") and name[1] in text[1:]:
                return True
    return False


def option_values(args: list[Word], *names: str) -> list[Word]:
    """Words given as values of the named options (``-o FILE``)."""
    found: list[Word] = []
    for i, word in enumerate(args[:-1]):
        if word.text in names:
            found.append(args[i + 1])
    return found


def loose_paths(args: list[Word], ctx: Ctx, access: Access = "read") -> None:
    """Record the path-looking words (and ``--opt=path``) of an unknown program."""
    for word in args:
        first = embedded_path(word, loose=True)
        if first is not None:
            ctx.path(word, access, first)
        elif looks_like_path(word.text, loose=True):
            ctx.path(word, access)
