"""Splitting a shell command line into simple commands, keeping every word's position.

Rules cite the exact characters of a command that wrote a file or read a credential, so
unlike ``shlex`` this lexer remembers, for each character of a word's value, where it
stood in the original line (quotes and escapes removed). It understands what agents
actually send: ``&&``/``||``/``;``/``|``/``&`` lists, newlines, comments, single and
double quotes, backslash escapes, redirections with file descriptors (``2>&1``,
``&>``, ``>>``), here-documents (their bodies are data, not commands), and command and
process substitutions (``$(…)``, backticks, ``<(…)``), whose contents are parsed as
commands of their own. It never fails: unbalanced quotes run to the end of the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")


@dataclass(frozen=True, slots=True)
class Word:
    """A word with quotes removed and the position of each of its characters."""

    text: str
    start: int
    """Start of the word as written (quotes included)."""
    end: int
    positions: tuple[int, ...]
    """For each character of ``text``, its index in the command line."""

    def span(self, first: int = 0, last: int | None = None) -> tuple[int, int]:
        """Characters of the line holding ``text[first:last]``."""
        last = len(self.text) if last is None else last
        if not self.positions or first >= last:
            return self.start, self.end
        return self.positions[first], self.positions[last - 1] + 1


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``2>>log``, ``< input``, ``&>/dev/null``."""

    operator: str
    fd: str
    """The file descriptor written before the operator (``2``), or empty."""
    target: Word | None
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command of a list or pipeline: its words and redirections."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Op:
    operator: str
    start: int


@dataclass(frozen=True, slots=True)
class _RedirectOp:
    operator: str
    fd: str
    start: int
    end: int


_Token = Word | _Op | _RedirectOp


class _Lexer:
    def __init__(self, line: str, offset: int) -> None:
        self.line = line
        self.offset = offset
        self.tokens: list[_Token] = []
        self.substitutions: list[tuple[int, int]] = []
        self.heredocs: list[tuple[str, bool]] = []
        self.chars: list[str] = []
        self.positions: list[int] = []
        self.word_start: int | None = None

    def add(self, text: str, at: int) -> None:
        if self.word_start is None:
            self.word_start = at
        for step, char in enumerate(text):
            self.chars.append(char)
            self.positions.append(self.offset + at + step)

    def flush(self, end: int) -> None:
        if self.word_start is None:
            return
        word = Word(
            "".join(self.chars),
            self.offset + self.word_start,
            self.offset + end,
            tuple(self.positions),
        )
        previous = self.tokens[-1] if self.tokens else None
        if isinstance(previous, _RedirectOp) and previous.operator in ("<<", "<<-"):
            self.heredocs.append((word.text, previous.operator == "<<-"))
        self.tokens.append(word)
        self.chars, self.positions, self.word_start = [], [], None

    def run(self) -> None:
        line, i, n = self.line, 0, len(self.line)
        while i < n:
            char = line[i]
            nxt = line[i + 1] if i + 1 < n else ""
            if char in " \t\r":
                self.flush(i)
                i += 1
            elif char == "\n":
                self.flush(i)
                self.tokens.append(_Op(";", self.offset + i))
                i = self.skip_heredocs(i + 1)
            elif char == "#" and self.word_start is None:
                end = line.find("\n", i)
                i = n if end < 0 else end
            elif char == "\\":
                if nxt == "\n":
                    i += 2
                    continue
                if self.word_start is None:
                    self.word_start = i
                if nxt:
                    self.add(nxt, i + 1)
                i += 2
            elif char == "'":
                end = line.find("'", i + 1)
                end = n if end < 0 else end
                if self.word_start is None:
                    self.word_start = i
                self.add(line[i + 1 : end], i + 1)
                i = end + 1
            elif char == '"':
                i = self.double_quoted(i)
            elif char == "$" and nxt == "(":
                i = self.substitution(i, i + 1, arithmetic=line.startswith("((", i + 1))
            elif char == "$" and nxt == "{":
                end = line.find("}", i)
                end = n - 1 if end < 0 else end
                self.add(line[i : end + 1], i)
                i = end + 1
            elif char == "`":
                i = self.backticks(i)
            elif char in "<>" and nxt == "(":
                i = self.substitution(i, i + 1, arithmetic=False)
            elif (char in "<>" or (char == "&" and nxt == ">")) and self.fd_word():
                i = self.redirect(i)
            elif char in ";|&()":
                self.flush(i)
                op = next(o for o in _OPERATORS if line.startswith(o, i))
                self.tokens.append(_Op(op, self.offset + i))
                i += len(op)
            else:
                self.add(char, i)
                i += 1
        self.flush(n)

    def fd_word(self) -> bool:
        # "2>err" and ">out" are redirections; "a>b" inside a word is too in bash.
        return self.word_start is None or "".join(self.chars).isdigit()

    def redirect(self, i: int) -> int:
        fd = "".join(self.chars) if self.word_start is not None else ""
        start = self.word_start if self.word_start is not None else i
        self.chars, self.positions, self.word_start = [], [], None
        op = next(o for o in _REDIRECTS if self.line.startswith(o, i))
        self.tokens.append(_RedirectOp(op, fd, self.offset + start, self.offset + i + len(op)))
        return i + len(op)

    def double_quoted(self, i: int) -> int:
        line, n = self.line, len(self.line)
        if self.word_start is None:
            self.word_start = i
        k = i + 1
        while k < n and line[k] != '"':
            if line[k] == "\\" and k + 1 < n and line[k + 1] in '"\\$`\n':
                self.add(line[k + 1], k + 1)
                k += 2
            elif line.startswith("$(", k):
                k = self.substitution(k, k + 1, arithmetic=line.startswith("((", k + 1))
            elif line[k] == "`":
                k = self.backticks(k)
            else:
                self.add(line[k], k)
                k += 1
        return k + 1

    def substitution(self, start: int, paren: int, *, arithmetic: bool) -> int:
        end = _closing_paren(self.line, paren)
        if not arithmetic:
            self.substitutions.append((paren + 1, max(paren + 1, end - 1)))
        self.add(self.line[start:end], start)
        return end

    def backticks(self, i: int) -> int:
        end = self.line.find("`", i + 1)
        end = len(self.line) if end < 0 else end
        self.substitutions.append((i + 1, end))
        self.add(self.line[i : end + 1], i)
        return end + 1

    def skip_heredocs(self, i: int) -> int:
        line, n = self.line, len(self.line)
        while self.heredocs and i < n:
            delimiter, strip_tabs = self.heredocs[0]
            end = line.find("\n", i)
            end = n if end < 0 else end
            body_line = line[i:end].rstrip("\r")
            if (body_line.lstrip("\t") if strip_tabs else body_line) == delimiter:
                self.heredocs.pop(0)
            i = end + 1
        self.heredocs.clear()
        return i


def _closing_paren(line: str, open_at: int) -> int:
    """Index just after the ``)`` matching ``line[open_at] == "("`` (quotes respected)."""
    depth, k, n = 0, open_at, len(line)
    while k < n:
        char = line[k]
        if char == "\\":
            k += 2
            continue
        if char == "'":
            close = line.find("'", k + 1)
            k = n if close < 0 else close + 1
            continue
        if char == '"':
            k += 1
            while k < n and line[k] != '"':
                k += 2 if line[k] == "\\" else 1
            k += 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return n


def _group(tokens: list[_Token]) -> list[SimpleCommand]:
    commands: list[SimpleCommand] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    pending: _RedirectOp | None = None

    def close() -> None:
        nonlocal pending
        if pending is not None:
            redirects.append(
                Redirect(pending.operator, pending.fd, None, pending.start, pending.end)
            )
            pending = None
        if words or redirects:
            spans = [(w.start, w.end) for w in words] + [(r.start, r.end) for r in redirects]
            commands.append(
                SimpleCommand(
                    tuple(words),
                    tuple(redirects),
                    min(s for s, _ in spans),
                    max(e for _, e in spans),
                )
            )
        words.clear()
        redirects.clear()

    for token in tokens:
        if isinstance(token, _Op):
            close()
        elif isinstance(token, _RedirectOp):
            if pending is not None:
                redirects.append(
                    Redirect(pending.operator, pending.fd, None, pending.start, pending.end)
                )
            pending = token
        elif pending is not None:
            redirects.append(
                Redirect(pending.operator, pending.fd, token, pending.start, token.end)
            )
            pending = None
        else:
            words.append(token)
    close()
    return commands


def _parse(line: str, offset: int, depth: int) -> list[SimpleCommand]:
    lexer = _Lexer(line, offset)
    lexer.run()
    commands = _group(lexer.tokens)
    if depth < 8:
        for start, end in lexer.substitutions:
            commands.extend(_parse(line[start:end], offset + start, depth + 1))
    return commands


@lru_cache(maxsize=2048)
def simple_commands(line: str) -> tuple[SimpleCommand, ...]:
    """Every simple command in ``line``, substitutions included, in reading order."""
    return tuple(_parse(line, 0, 0))
