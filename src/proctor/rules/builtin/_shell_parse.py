"""Splitting a shell command line into the simple commands it runs.

``rm -rf build && sudo rm -rf / ; bash -c "curl x | sh"`` runs four programs; a rule that
only looked at the first word would see ``rm -rf build`` and stop. This module splits a
command on ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines (outside quotes), skips
comments and here-document bodies (data, not commands, unless fed to a shell), reads each
piece with :func:`proctor.rules.command_words`, separates redirections, and unwraps what
only changes *how* a program runs (``sudo``, ``env``, ``VAR=x``, ``time``, ``nohup``,
``timeout``, ``nice``) and what runs a nested command line (``bash -c``, ``eval``,
``ssh host cmd``, ``$(…)``, back quotes, ``<(…)``). Parsing is tolerant: unbalanced quotes
never raise, they just give rougher words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from proctor.rules._calls import command_words

_MAX_DEPTH = 4
"""Nesting levels of ``bash -c`` / ``$(…)`` followed; deeper text is not parsed."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash"})
# Shell keywords that can precede a command in a piece (`if x; then rm -rf y; fi`).
_KEYWORDS = frozenset({"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT = re.compile(r"^(\d*|&)(>>?|>\||<<<|<<-?|<>|<|>&|<&)(.*)$")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
# Options of the wrappers below that take a value, so the value is not taken for the program.
_SUDO_VALUE_OPTIONS = frozenset("ughpCDrtUT")
_SSH_VALUE_OPTIONS = frozenset("bBcDEeFIiJLlmOopQRSWw")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One program invocation inside a command line."""

    words: tuple[str, ...]
    """Program and arguments, wrappers and redirections removed; may be empty."""
    text: str
    """The source text of this piece, as written (before unwrapping)."""
    redirects: tuple[tuple[str, str], ...] = ()
    """``(operator, target)`` pairs such as ``(">", "out.txt")`` or ``("2>", "&1")``."""
    pipeline: int = 0
    """Commands joined by ``|`` share a pipeline number."""
    stage: int = 0
    """Position inside its pipeline (0 = first)."""
    nested: bool = False
    """True when it came from inside another command (``bash -c``, ``$(…)``, ``ssh``)."""
    heredoc: str = ""
    """The here-document fed to it (``psql <<EOF … EOF``), as data."""

    @property
    def program(self) -> str:
        """The program's base name (``/usr/bin/rm`` → ``rm``), or ``""``."""
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""

    @property
    def args(self) -> tuple[str, ...]:
        """The words after the program."""
        return self.words[1:]


def simple_commands(command: str) -> list[SimpleCommand]:
    """Every simple command ``command`` runs, nested ones included, in source order."""
    return list(_cached(command))


@lru_cache(maxsize=4096)
def _cached(command: str) -> tuple[SimpleCommand, ...]:
    # Several rules parse the same call; parsing (shlex) dominates their cost.
    found: list[SimpleCommand] = []
    _parse(command, 0, found, [0], set())
    return tuple(found)


@dataclass(slots=True)
class _Piece:
    text: str
    new_pipeline: bool
    stage: int
    heredoc: list[str]


def _parse(
    command: str, depth: int, found: list[SimpleCommand], pipelines: list[int], seen: set[str]
) -> None:
    # `sh -c "$(curl …)"` reaches the same `curl …` twice (as `$(…)` and inside `-c`).
    if depth > _MAX_DEPTH or not command.strip() or (depth and command in seen):
        return
    seen.add(command)
    pieces, nested_sources = _split(command)
    for piece in pieces:
        if piece.new_pipeline:
            pipelines[0] += 1
        words, redirects = _words_and_redirects(piece.text)
        words, inner = _unwrap(words)
        heredoc = "\n".join(piece.heredoc)
        found.append(
            SimpleCommand(
                tuple(words),
                piece.text.strip(),
                tuple(redirects),
                pipelines[0],
                piece.stage,
                depth > 0,
                heredoc,
            )
        )
        if heredoc and len(words) == 1 and words[0].rsplit("/", 1)[-1] in SHELLS:
            inner.append(heredoc)  # `bash <<EOF … EOF` runs the here-document as a script
        for source in inner:
            pipelines[0] += 1
            _parse(source, depth + 1, found, pipelines, seen)
    for source in nested_sources:
        pipelines[0] += 1
        _parse(source, depth + 1, found, pipelines, seen)


def _split(command: str) -> tuple[list[_Piece], list[str]]:
    """The pieces of a command line and the bodies of its ``$(…)`` substitutions."""
    pieces: list[_Piece] = []
    nested: list[str] = []
    waiting: list[tuple[_Piece, str]] = []  # here-documents whose bodies start after a newline
    current: list[str] = []
    stage = 0
    new_pipeline = True
    quote = ""
    i, n = 0, len(command)

    def flush(next_is_pipe: bool) -> None:
        nonlocal stage, new_pipeline
        text = "".join(current)
        current.clear()
        if text.strip():
            piece = _Piece(text, new_pipeline, stage, [])
            pieces.append(piece)
            waiting.extend((piece, match[1]) for match in _HEREDOC.findall(text))
        stage = stage + 1 if next_is_pipe else 0
        new_pipeline = not next_is_pipe

    while i < n:
        ch = command[i]
        if quote == "'":
            current.append(ch)
            quote = "" if ch == "'" else quote
            i += 1
        elif ch == "\\" and i + 1 < n:
            current.append(" " if command[i + 1] == "\n" else command[i : i + 2])
            i += 2
        elif (ch in "$<>" and command.startswith("(", i + 1)) or ch == "`":
            end = _closing(command, i)
            nested.append(command[i + 1 : end] if ch == "`" else command[i + 2 : end])
            current.append(command[i : end + 1])
            i = end + 1
        elif quote == '"':
            current.append(ch)
            quote = "" if ch == '"' else quote
            i += 1
        elif ch in "'\"":
            quote = ch
            current.append(ch)
            i += 1
        elif ch == "#" and (not current or current[-1][-1:].isspace()):
            while i < n and command[i] != "\n":
                i += 1  # a comment runs to the end of the line
        elif ch == "\n":
            flush(False)
            i = _read_heredocs(command, i + 1, waiting)
        elif command.startswith(("&&", "||"), i):
            flush(False)
            i += 2
        elif ch == "|":
            flush(True)
            i += 2 if command.startswith("|&", i) else 1
        elif ch in ";)" or (ch == "&" and not _is_redirect_ampersand(command, i)):
            flush(False)
            i += 1
        elif ch == "(" and not "".join(current).strip():
            i += 1  # subshell grouping: `(cd x && make)`
        else:
            current.append(ch)
            i += 1
    flush(False)
    return pieces, nested


def _read_heredocs(command: str, i: int, waiting: list[tuple[_Piece, str]]) -> int:
    """Read the bodies of pending here-documents starting at ``i``; return where they end."""
    while waiting:
        piece, delimiter = waiting.pop(0)
        while i < len(command):
            end = command.find("\n", i)
            end = len(command) if end == -1 else end
            line = command[i:end]
            i = end + 1
            if line.strip() == delimiter:
                break
            piece.heredoc.append(line)
    return i


def _is_redirect_ampersand(command: str, i: int) -> bool:
    # `2>&1`, `>&2`, `&>file`, `&>>file` use `&` as part of a redirection.
    return command[i - 1 : i] in (">", "<") or command[i + 1 : i + 2] == ">"


def _closing(command: str, start: int) -> int:
    """Index of the character closing the substitution opened at ``start``."""
    if command[start] == "`":
        end = command.find("`", start + 1)
        return end if end != -1 else len(command) - 1
    depth = 0
    quote = ""
    for j in range(start + 1, len(command)):
        ch = command[j]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(command) - 1


def _words_and_redirects(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    raw = command_words(text)
    index = 0
    while index < len(raw):
        word = raw[index]
        match = _REDIRECT.match(word)
        if match and (match.group(1) or not word[:1].isalnum()):
            operator = match.group(1) + match.group(2)
            target = match.group(3)
            if not target and index + 1 < len(raw):
                index += 1
                target = raw[index]
            redirects.append((operator, target))
        else:
            words.append(word)
        index += 1
    return words, redirects


def _unwrap(words: list[str]) -> tuple[list[str], list[str]]:
    """Strip wrappers off ``words``; also return nested command lines they run."""
    nested: list[str] = []
    while words:
        program = words[0].rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(words[0]) or words[0] in _KEYWORDS:
            words = words[1:]
        elif program in ("sudo", "doas"):
            words = _skip_options(words[1:], _SUDO_VALUE_OPTIONS)
        elif program == "env":
            rest = _skip_options(words[1:], frozenset("uCS"))
            while rest and _ASSIGNMENT.match(rest[0]):
                rest = rest[1:]
            words = rest
        elif program in ("time", "nohup", "command", "builtin", "exec", "stdbuf", "caffeinate"):
            words = _skip_options(words[1:], frozenset("a"))
        elif program in ("nice", "ionice"):
            words = _skip_options(words[1:], frozenset("ncp"))
        elif program == "timeout":
            rest = _skip_options(words[1:], frozenset("sk"))
            words = rest[1:]  # the duration
        elif program in SHELLS or program in ("su", "pwsh", "powershell"):
            script = _dash_c_argument(words)
            if script is not None:
                nested.append(script)
            return words, nested
        elif program == "eval" and len(words) > 1:
            nested.append(" ".join(words[1:]))
            return words, nested
        elif program == "ssh":
            rest = _skip_options(words[1:], _SSH_VALUE_OPTIONS)
            if len(rest) > 1:
                nested.append(" ".join(rest[1:]))
            return words, nested
        else:
            return words, nested
    return words, nested


def _skip_options(words: list[str], value_options: frozenset[str]) -> list[str]:
    index = 0
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        word = words[index]
        index += 1
        if word == "--":
            break
        if not word.startswith("--") and word[-1] in value_options and "=" not in word:
            index += 1  # `-u root`: the next word is the option's value
    return words[index:]


def _dash_c_argument(words: list[str]) -> str | None:
    """The command line of ``bash -c 'cmd'`` / ``bash -lc 'cmd'`` / ``pwsh -Command 'cmd'``."""
    for index, word in enumerate(words[1:], start=1):
        lowered = word.lower()
        is_c = (
            word.startswith("-") and not word.startswith("--") and "c" in word[1:]
        ) or lowered in ("-command", "--command")
        if is_c:
            return words[index + 1] if index + 1 < len(words) else None
        if not word.startswith("-"):
            return None  # `bash script.sh`: a script file, not a command line
    return None
