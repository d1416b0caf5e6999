"""Splitting a shell command line into the simple commands it runs.

``rm -rf build && sudo rm -rf / ; bash -c "curl x | sh"`` runs four programs; a rule
that only looked at the first word would see ``rm -rf build`` and stop. This is the one
parser every rule uses: ``_shell_lex`` reads the line into words that remember where
each character stood, and this module groups them into simple commands, in reading
order, each with

- its words as written and its redirections (with here-document bodies), for rules that
  cite characters (``_shell_classify``);
- ``argv``: the program and its arguments once what only changes *how* a program runs
  is stripped (``VAR=x``, ``sudo``, ``doas``, ``env``, ``time``, ``nohup``, ``nice``,
  ``ionice``, ``timeout``, ``stdbuf``, ``exec``, ``command`` …, shell keywords such as
  ``if``/``then``/``!``), for rules that judge programs (``_danger_checks``);
- the operator that ends it (``&&``, ``||``, ``;``, ``|``, ``&``) and its pipeline and
  stage, so that ``curl … | sh`` can be seen as one pipeline.

Command lines that a command runs are parsed too and follow it, marked ``origin ==
"script"``: ``bash -c '…'`` (any shell, ``su -c``, ``pwsh -Command``), ``eval …``,
``ssh host …`` and a here-document fed to a bare shell (``bash <<EOF``). The contents of
``$(…)``, backticks and ``<(…)`` come after the commands of their line, marked
``origin == "substitution"``. Positions always point into the original line, also for
nested commands. Not handled: no expansion of variables, globs or aliases (the words
are what the agent wrote), no ``case``/``for``/function bodies as such; nesting stops
after eight levels. Results are cached by line, since several rules parse the same one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

from proctor.rules.builtin._shell_lex import (
    Operator,
    Redirect,
    RedirectOperator,
    Token,
    Word,
    lex,
)

__all__ = ["ASSIGNMENT", "SHELLS", "Redirect", "SimpleCommand", "Word", "simple_commands"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash"})
_MAX_DEPTH = 8
"""Nesting levels of ``bash -c`` / ``$(…)`` followed; deeper text is not parsed."""
# Shell keywords that can precede a command (`if x; then rm -rf y; fi`).
_KEYWORDS = frozenset({"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
"""``NAME=value`` before a command."""
# Options of the wrappers below that take a value, so the value is not taken for the program.
_SUDO_VALUE_OPTIONS = frozenset("ughpCDrtUT")
_SSH_VALUE_OPTIONS = frozenset("bBcDEeFIiJLlmOopQRSWw")
_PLAIN_WRAPPERS = frozenset({"time", "nohup", "command", "builtin", "exec", "stdbuf", "caffeinate"})
_PIPES = ("|", "|&")

Origin = Literal["", "substitution", "script"]


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One program invocation inside a command line."""

    words: tuple[Word, ...]
    """Every word as written (assignments and wrappers included, redirections left out)."""
    redirects: tuple[Redirect, ...]
    start: int
    """Where the command starts in the line (its first word or redirection)."""
    end: int
    text: str = ""
    """The command as written: ``line[start:end]``."""
    argv: tuple[str, ...] = ()
    """Program and arguments after unwrapping (``sudo -u x rm -rf /`` → ``rm -rf /``)."""
    separator: str = ""
    """The operator that ends it (``&&``, ``||``, ``;``, ``|``, ``|&``, ``&``, ``(``,
    ``)``); a newline reads as ``;``, the end of the line as ``""``."""
    pipeline: int = 0
    """Commands joined by ``|`` share a pipeline number."""
    stage: int = 0
    """Position inside its pipeline (0 = first)."""
    origin: Origin = ""
    """``""``: written in the line; ``substitution``: inside ``$(…)``, backticks or
    ``<(…)``; ``script``: in a command line another command runs (``bash -c``, ``eval``,
    ``ssh``, ``bash <<EOF``)."""

    @property
    def program(self) -> str:
        """The program's base name (``/usr/bin/rm`` → ``rm``), or ``""``."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def args(self) -> tuple[str, ...]:
        """The words after the program."""
        return self.argv[1:]

    @property
    def heredoc(self) -> str:
        """The here-documents fed to it (``psql <<EOF … EOF``), as data."""
        return "\n".join(r.body.text for r in self.redirects if r.body is not None)

    def without_program(self) -> SimpleCommand:
        """The same command running its first argument (``npx prisma …`` → ``prisma …``)."""
        return replace(self, argv=self.argv[1:])


@lru_cache(maxsize=4096)
def simple_commands(line: str) -> tuple[SimpleCommand, ...]:
    """Every simple command ``line`` runs, nested ones included, in reading order.

    Args:
        line: A shell command line, possibly several lines long.

    Returns:
        The commands of the line, each followed by those of the command lines it runs
        (``bash -c``, ``eval``, ``ssh``), then the commands of its substitutions.
    """
    walk = _Walk(line)
    _parse(line, range(len(line)), 0, "", walk)
    return tuple(walk.found)


@dataclass(slots=True)
class _Walk:
    line: str
    found: list[SimpleCommand] = field(default_factory=list)
    pipelines: int = 0
    seen: set[tuple[int, int]] = field(default_factory=set)
    """Substitutions already read (``sh -c "$(curl …)"`` reaches one twice)."""


def _parse(text: str, where: Sequence[int], depth: int, origin: Origin, walk: _Walk) -> None:
    if depth > _MAX_DEPTH or not text.strip():
        return
    lexed = lex(text, where)
    substitutions: list[tuple[int, int]] = []
    for start, end in lexed.substitutions:
        span = (where[start], where[end - 1] + 1) if end > start else None
        if span is not None and span not in walk.seen:
            walk.seen.add(span)
            substitutions.append((start, end))
    for words, redirects, separator, stage in _group(lexed.tokens, lexed.bodies):
        if stage == 0:
            walk.pipelines += 1
        first, scripts = _unwrap(words, redirects)
        spans = [(w.start, w.end) for w in words] + [(r.start, r.end) for r in redirects]
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        walk.found.append(
            SimpleCommand(
                words,
                redirects,
                start,
                end,
                text=walk.line[start:end],
                argv=tuple(w.text for w in words[first:]),
                separator=separator,
                pipeline=walk.pipelines,
                stage=stage,
                origin=origin,
            )
        )
        for script in scripts:
            _parse(script.text, script.positions, depth + 1, "script", walk)
    inner: Origin = "script" if origin == "script" else "substitution"
    for start, end in substitutions:
        _parse(text[start:end], where[start:end], depth + 1, inner, walk)


_Grouped = tuple[tuple[Word, ...], tuple[Redirect, ...], str, int]


def _group(tokens: list[Token], bodies: dict[int, Word]) -> list[_Grouped]:
    """Words and redirections of each simple command, its separator and pipeline stage."""
    commands: list[_Grouped] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    pending: tuple[int, RedirectOperator] | None = None
    stage = 0

    def redirect(target: Word | None) -> None:
        nonlocal pending
        if pending is not None:
            index, op = pending
            end = op.end if target is None else target.end
            redirects.append(Redirect(op.operator, op.fd, target, op.start, end, bodies.get(index)))
            pending = None

    def close(separator: str) -> None:
        nonlocal stage
        redirect(None)
        if words or redirects:
            commands.append((tuple(words), tuple(redirects), separator, stage))
        words.clear()
        redirects.clear()
        if separator != "(":  # `a | (b)`: the subshell is still in the pipeline
            stage = stage + 1 if separator in _PIPES else 0

    for index, token in enumerate(tokens):
        if isinstance(token, Operator):
            close(token.operator)
        elif isinstance(token, RedirectOperator):
            redirect(None)
            pending = (index, token)
        elif pending is not None:
            redirect(token)
        else:
            words.append(token)
    close("")
    return commands


def _unwrap(words: tuple[Word, ...], redirects: tuple[Redirect, ...]) -> tuple[int, list[Word]]:
    """Where the program starts after the wrappers, and the command lines it runs."""
    i, n = 0, len(words)
    while i < n:
        text = words[i].text
        program = text.rsplit("/", 1)[-1]
        if ASSIGNMENT.match(text) or text in _KEYWORDS:
            i += 1
        elif program in ("sudo", "doas"):
            i = _skip_options(words, i + 1, _SUDO_VALUE_OPTIONS)
        elif program == "env":
            i = _skip_options(words, i + 1, frozenset("uCS"))
            while i < n and ASSIGNMENT.match(words[i].text):
                i += 1
        elif program in _PLAIN_WRAPPERS:
            i = _skip_options(words, i + 1, frozenset("a"))
        elif program in ("nice", "ionice"):
            i = _skip_options(words, i + 1, frozenset("ncp"))
        elif program == "timeout":
            i = min(n, _skip_options(words, i + 1, frozenset("sk")) + 1)  # and the duration
        elif program in SHELLS or program in ("su", "pwsh", "powershell"):
            script = _dash_c_argument(words[i:])
            if script is not None:
                return i, [script]
            if i == n - 1 and program in SHELLS:  # `bash <<EOF … EOF` runs the document
                return i, [r.body for r in redirects if r.body is not None]
            return i, []
        elif program == "eval" and i + 1 < n:
            return i, [_joined(words[i + 1 :])]
        elif program == "ssh":
            rest = _skip_options(words, i + 1, _SSH_VALUE_OPTIONS)
            return i, [_joined(words[rest + 1 :])] if rest + 1 < n else []
        else:
            return i, []
    return i, []


def _skip_options(words: tuple[Word, ...], i: int, value_options: frozenset[str]) -> int:
    while i < len(words) and words[i].text.startswith("-") and words[i].text != "-":
        text = words[i].text
        i += 1
        if text == "--":
            break
        if not text.startswith("--") and text[-1] in value_options and "=" not in text:
            i += 1  # `-u root`: the next word is the option's value
    return min(i, len(words))


def _dash_c_argument(words: tuple[Word, ...]) -> Word | None:
    """The command line of ``bash -c 'cmd'`` / ``bash -lc 'cmd'`` / ``pwsh -Command 'cmd'``."""
    for index, word in enumerate(words[1:], start=1):
        text = word.text
        is_c = (text.startswith("-") and not text.startswith("--") and "c" in text[1:]) or (
            text.lower() in ("-command", "--command")
        )
        if is_c:
            return words[index + 1] if index + 1 < len(words) else None
        if not text.startswith("-"):
            return None  # `bash script.sh`: a script file, not a command line
    return None


def _joined(words: Sequence[Word]) -> Word:
    """Words joined by spaces, as ``eval`` and ``ssh`` hand them on to a shell."""
    positions: list[int] = []
    for index, word in enumerate(words):
        if index:
            positions.append(words[index - 1].end)  # the blank between two words
        positions.extend(word.positions)
    text = " ".join(word.text for word in words)
    return Word(text, words[0].start, words[-1].end, tuple(positions))
