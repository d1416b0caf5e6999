"""Reading a tool result for the one line that matters: the exit status or the error.

Results are long (tracebacks, test logs, Codex's ``Chunk ID``/``Wall time`` header); an
error event cites the single line that says what went wrong, by its characters in
``result_text``, so a reader lands on it. Heuristics, in order: the last exception line
(``sqlite3.OperationalError: database is locked`` ends a Python traceback), else the
first line that says it failed (``curl: (6) Could not resolve host``), else the first
line of output.
"""

from __future__ import annotations

import re

from proctor._util.text import one_line

_HEADER = re.compile(
    r"^(?:Exit [Cc]ode:? -?\d+|Chunk ID: .*|Wall time: .*|Process exited with code -?\d+|"
    r"Original token count: .*|Output:|Process Group PGID: .*|Command: .*|Directory: .*|"
    r"Signal: .*|Background PIDs: .*|Error: \(none\))$"
)
_EXIT = re.compile(
    r"(?:^|(?<=\\n))(?:Exit [Cc]ode:? |Process exited with code )(?P<code>-?\d+)(?=[ \t]*$|\\n)",
    re.MULTILINE,
)
"""Claude Code's ``Exit code 1``, Codex's ``Process exited with code 1``, Gemini CLI's
``Exit Code: 1`` (some exports keep Gemini's line breaks as a literal ``\\n``)."""
_EXIT_WORD = "xit"
"""In every line ``_EXIT`` matches: a result without it is passed over without the regex,
which would otherwise try its lookbehind at every character of a long log."""
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt|Failure)\b(?::|\s*$)"
)
_FAILURE_WORDS = re.compile(
    r"\berror\b|\bfail(?:ed|ure)?\b|\bfatal\b|\bnot found\b|\bdenied\b|\bcannot\b|"
    r"\bcan't\b|\bcould not\b|\bunable to\b|\bno such\b|\binvalid\b|\brefused\b|\btimed? ?out\b",
    re.IGNORECASE,
)


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every non-blank line, whitespace trimmed, headers left out."""
    found = []
    for match in re.finditer(r"[^\n]+", text):
        line = match.group(0)
        stripped = line.strip()
        if not stripped or _HEADER.match(stripped):
            continue
        start = match.start() + line.index(stripped)
        found.append((start, start + len(stripped)))
    return found


def error_line(text: str | None) -> tuple[int, int] | None:
    """The characters of the line that best says what failed, or None for empty output."""
    if not text:
        return None
    lines = _lines(text)
    exceptions = [span for span in lines if _EXCEPTION.match(text[span[0] : span[1]])]
    if exceptions:
        return exceptions[-1]
    for span in lines:
        if _FAILURE_WORDS.search(text[span[0] : span[1]]):
            return span
    return lines[0] if lines else None


def exit_line(text: str | None) -> tuple[int, int] | None:
    """The characters of ``Exit code 1`` / ``Process exited with code 1``, when printed."""
    if not text or _EXIT_WORD not in text:
        return None
    match = _EXIT.search(text)
    return None if match is None else (match.start(), match.end())


def printed_exit_code(text: str | None) -> int | None:
    """The exit code a shell tool printed in its result, when the format has no field."""
    if not text or _EXIT_WORD not in text:
        return None
    match = _EXIT.search(text)
    return None if match is None else int(match.group("code"))


def excerpt(text: str, span: tuple[int, int], limit: int = 120) -> str:
    """One line of at most ``limit`` characters from ``text[span]``."""
    return one_line(text, limit, start=span[0], end=span[1])
