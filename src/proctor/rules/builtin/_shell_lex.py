"""Reading shell text into words, operators and redirections, keeping every position.

Rules cite the exact characters of a command that wrote a file or deleted a folder, so
unlike ``shlex`` this lexer remembers, for each character of a word's value, where it
stood in the original command line (quotes and escapes removed). It is the only shell
lexer of the rules; ``_shell_words`` groups its tokens into simple commands.

Handled: blanks and newlines; comments (``#`` at the start of a word); single and
double quotes, backslash escapes and line continuations; the operators ``&&``, ``||``,
``;``, ``;;``, ``|``, ``|&``, ``&``, ``(`` and ``)``; redirections with file descriptors
(``2>&1``, ``&>``, ``>>``, ``<>``, ``<<<``); here-documents, whose bodies are read as
data and kept with their operator; ``${…}``, command and process substitutions
(``$(…)``, backticks, ``<(…)``, ``>(…)``), kept inside their word and listed so that
their contents can be read as commands of their own.

Not handled: no expansion of any kind (variables, globs, braces, ``~``, aliases), so
words are exactly what the agent wrote; ``$'…'`` escapes stay as written; the compound
commands ``case``, ``for`` and functions are not understood (their keywords come out as
words). It never fails: an unbalanced quote or parenthesis runs to the end of the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
_PLAIN = re.compile(r"[^ \t\r\n'\"\\$`<>;|&()]+")
"""A run of characters with no meaning to the shell (``#`` is one inside a word)."""


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
        """Characters of the line holding ``text[first:last]``.

        Args:
            first: Index in ``text`` of the first character.
            last: Index in ``text`` just after the last character (default: the end).

        Returns:
            ``(start, end)`` in the command line; the whole word when the slice is empty.
        """
        last = len(self.text) if last is None else last
        if not self.positions or first >= last:
            return self.start, self.end
        return self.positions[first], self.positions[last - 1] + 1


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``2>>log``, ``< input``, ``&>/dev/null``, ``<<EOF``."""

    operator: str
    """The operator without its file descriptor: ``>``, ``>>``, ``>&``, ``&>``, ``<<`` …"""
    fd: str
    """The file descriptor written before the operator (``2``), or empty."""
    target: Word | None
    """The file, descriptor or here-document delimiter; None when missing."""
    start: int
    end: int
    body: Word | None = None
    """The here-document of a ``<<``/``<<-`` redirection (data, not commands)."""

    @property
    def output_file(self) -> str | None:
        """The file that output goes to (``> f``, ``2>> f``, ``&> f``, ``<> f``), or None.

        Input redirections and descriptor duplications (``2>&1``, ``>&2``) name none.
        """
        if self.target is None or not self.target.text or ">" not in self.operator:
            return None
        if self.operator == ">&" or self.target.text.startswith("&"):
            return None
        return self.target.text


@dataclass(frozen=True, slots=True)
class Operator:
    """A control operator (``&&``, ``|``, ``;`` …); a newline reads as ``;``."""

    operator: str
    start: int


@dataclass(frozen=True, slots=True)
class RedirectOperator:
    """A redirection operator whose target is the next word."""

    operator: str
    fd: str
    start: int
    end: int


Token = Word | Operator | RedirectOperator


@dataclass(slots=True)
class Lexed:
    """The tokens of a piece of shell text."""

    tokens: list[Token] = field(default_factory=list)
    substitutions: list[tuple[int, int]] = field(default_factory=list)
    """``(start, end)`` indices in the text of each ``$(…)``/backtick/``<(…)`` body."""
    bodies: dict[int, Word] = field(default_factory=dict)
    """Here-document bodies, by the index in ``tokens`` of their ``<<`` operator."""


def lex(text: str, where: Sequence[int]) -> Lexed:
    """Split shell text into tokens.

    Args:
        text: The shell text.
        where: For each character of ``text``, its index in the command line being read
            (``range(len(text))`` for a whole line; a word's ``positions`` for the
            command line inside ``bash -c '…'``).

    Returns:
        The tokens, the substitutions to read as commands, and the here-document bodies.
    """
    lexer = _Lexer(text, where)
    lexer.run()
    return lexer.out


class _Lexer:
    def __init__(self, text: str, where: Sequence[int]) -> None:
        self.text = text
        self.where = where
        self.out = Lexed()
        self.tokens = self.out.tokens
        self.heredocs: list[tuple[int, str, bool]] = []
        """Here-documents whose bodies start after the next newline."""
        self.chars: list[str] = []
        self.positions: list[int] = []
        self.word_start: int | None = None

    def end(self, index: int) -> int:
        """The line position just after ``text[index - 1]``."""
        return self.where[index - 1] + 1 if index > 0 else self.where[0]

    def add(self, chars: str, at: int) -> None:
        if self.word_start is None:
            self.word_start = at
        self.chars.append(chars)
        self.positions.extend(self.where[at : at + len(chars)])

    def flush(self, end: int) -> None:
        if self.word_start is None:
            return
        word = Word("".join(self.chars), self.where[self.word_start], self.end(end),
                    tuple(self.positions))  # fmt: skip
        previous = self.tokens[-1] if self.tokens else None
        if isinstance(previous, RedirectOperator) and previous.operator in ("<<", "<<-"):
            self.heredocs.append((len(self.tokens) - 1, word.text, previous.operator == "<<-"))
        self.tokens.append(word)
        self.chars, self.positions, self.word_start = [], [], None

    def run(self) -> None:
        text, i, n = self.text, 0, len(self.text)
        while i < n:
            char = text[i]
            nxt = text[i + 1] if i + 1 < n else ""
            if char in " \t\r":
                self.flush(i)
                i += 1
            elif char == "\n":
                self.flush(i)
                self.tokens.append(Operator(";", self.where[i]))
                i = self.read_heredocs(i + 1)
            elif char == "#" and self.word_start is None:
                end = text.find("\n", i)
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
                end = text.find("'", i + 1)
                end = n if end < 0 else end
                if self.word_start is None:
                    self.word_start = i
                self.add(text[i + 1 : end], i + 1)
                i = end + 1
            elif char == '"':
                i = self.double_quoted(i)
            elif char == "$" and nxt == "(":
                i = self.substitution(i, i + 1, arithmetic=text.startswith("((", i + 1))
            elif char == "$" and nxt == "{":
                end = text.find("}", i)
                end = n - 1 if end < 0 else end
                self.add(text[i : end + 1], i)
                i = end + 1
            elif char == "`":
                i = self.backticks(i)
            elif char in "<>" and nxt == "(":
                i = self.substitution(i, i + 1, arithmetic=False)
            elif (char in "<>" or (char == "&" and nxt == ">")) and self.fd_word():
                i = self.redirect(i)
            elif char in ";|&()":
                self.flush(i)
                op = next(o for o in _OPERATORS if text.startswith(o, i))
                self.tokens.append(Operator(op, self.where[i]))
                i += len(op)
            else:
                plain = _PLAIN.match(text, i)
                end = plain.end() if plain else i + 1
                self.add(text[i:end], i)
                i = end
        self.flush(n)

    def fd_word(self) -> bool:
        # "2>err" and ">out" are redirections; in "a>b" the ">" stays inside the word.
        return self.word_start is None or "".join(self.chars).isdigit()

    def redirect(self, i: int) -> int:
        fd = "".join(self.chars) if self.word_start is not None else ""
        start = self.word_start if self.word_start is not None else i
        self.chars, self.positions, self.word_start = [], [], None
        op = next(o for o in _REDIRECTS if self.text.startswith(o, i))
        self.tokens.append(RedirectOperator(op, fd, self.where[start], self.end(i + len(op))))
        return i + len(op)

    def double_quoted(self, i: int) -> int:
        text, n = self.text, len(self.text)
        if self.word_start is None:
            self.word_start = i
        k = i + 1
        while k < n and text[k] != '"':
            if text[k] == "\\" and k + 1 < n and text[k + 1] in '"\\$`\n':
                self.add(text[k + 1], k + 1)
                k += 2
            elif text.startswith("$(", k):
                k = self.substitution(k, k + 1, arithmetic=text.startswith("((", k + 1))
            elif text[k] == "`":
                k = self.backticks(k)
            else:
                self.add(text[k], k)
                k += 1
        return k + 1

    def substitution(self, start: int, paren: int, *, arithmetic: bool) -> int:
        end, closed = _closing_paren(self.text, paren)
        if not arithmetic:
            self.out.substitutions.append((paren + 1, max(paren + 1, end - closed)))
        self.add(self.text[start:end], start)
        return end

    def backticks(self, i: int) -> int:
        end = self.text.find("`", i + 1)
        end = len(self.text) if end < 0 else end
        self.out.substitutions.append((i + 1, end))
        self.add(self.text[i : end + 1], i)
        return end + 1

    def read_heredocs(self, i: int) -> int:
        """Read the bodies of the pending here-documents from ``i``; return where they end."""
        text, n = self.text, len(self.text)
        while self.heredocs and i < n:
            index, delimiter, strip_tabs = self.heredocs.pop(0)
            body_start, body_end = i, n
            while i < n:
                end = text.find("\n", i)
                end = n if end < 0 else end
                line = text[i:end].rstrip("\r")
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    body_end = max(body_start, i - 1)
                    i = end + 1
                    break
                i = end + 1
            else:
                body_end = n - 1 if text.endswith("\n") and n - 1 >= body_start else n
            if body_end > body_start:
                where = self.where[body_start:body_end]
                body = Word(text[body_start:body_end], where[0], where[-1] + 1, tuple(where))
                self.out.bodies[index] = body
        self.heredocs.clear()
        return min(i, n)


def _closing_paren(text: str, open_at: int) -> tuple[int, int]:
    """Index just after the ``)`` matching ``text[open_at] == "("`` (quotes respected).

    Returns:
        That index and 1, or the end of the text and 0 when the parenthesis is not closed.
    """
    depth, k, n = 0, open_at, len(text)
    while k < n:
        char = text[k]
        if char == "\\":
            k += 2
            continue
        if char == "'":
            close = text.find("'", k + 1)
            k = n if close < 0 else close + 1
            continue
        if char == '"':
            k += 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            k += 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return k + 1, 1
        k += 1
    return n, 0
