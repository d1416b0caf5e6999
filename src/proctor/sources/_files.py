"""Reading input files safely: compressed files, JSON Lines with bad lines, binary files.

Everything here turns bad input into ``SourceIssue`` data naming the file, the line and
the reason, so one broken line never stops an import (SPEC ING-9). Memory stays bounded:
an overlong line is skipped without being held in memory.

JSON is parsed by one rule (``parse_json``) for files and the live intake alike: a UTF-8
byte order mark is ignored; what Python's own encoder writes and strict parsers refuse
(``NaN``, ``Infinity``, lone surrogate escapes) is accepted, and stored in the form
``transcript.storable`` gives it; a record nested deeper than ``MAX_JSON_DEPTH`` levels
is refused, naming the field.
"""

from __future__ import annotations

import bisect
import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson

from proctor.errors import SourceError
from proctor.transcript import MAX_JSON_DEPTH, SourceIssue, nesting_problem

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Lines longer than this are reported and skipped (a real Claude Code line with images is ~1 MB)."""

LINE_BUFFER_BYTES = 64 * 1024
"""The read buffer of a JSON Lines file: a Claude Code line is often longer than
Python's default 8 KiB, and ``readline`` then joins it from several reads (a third of
the cost of reading the lines)."""

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""Single-document JSON files larger than this are refused instead of loaded."""

_DIGITS = bytes(
    48 if 48 <= byte <= 57 else 123 if byte in (91, 123) else byte if byte == 45 else 120
    for byte in range(256)
)
"""A line's digits mapped to ``0``, its opening brackets (``{`` and ``[``) to ``{``, minus
signs kept and every other byte to ``x``: one C pass gives what the cheap tests below look
for."""
_DIGIT_RUN = b"0" * 20
"""Twenty digits in a row: a number that may be past 64 bits (or digits inside a
string, read the same)."""
_NEGATIVE_RUN = b"-" + b"0" * 19
"""A minus sign and nineteen digits: a negative number that may be below -2**63."""
_NINETEEN_DIGITS = b"0" * 19
"""What both runs above hold: a line without it has neither (one search instead of two,
on most lines)."""
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some editors write at the start of a file (or of a line)."""


class JSONProblem(ValueError):
    """Text that is not one JSON value Proctor can read; ``reason`` says why and where."""

    def __init__(self, reason: str, position: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.position = position
        """Byte offset of the problem in the parsed text, when the parser gave one."""


def parse_json(data: bytes, *, limit: int = MAX_JSON_DEPTH) -> Any:
    """One JSON value from ``data``, read by Proctor's one rule (see the module docstring).

    Raises:
        JSONProblem: the text is not JSON, or nests deeper than ``limit`` levels.
    """
    return _parse_json(without_bom(data), limit)


def _parse_json(data: bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """``parse_json`` of text that starts with no byte order mark."""
    shape = data.translate(_DIGITS)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        value = _lenient(data, exc)
    else:
        # One search in the common case: both runs below hold nineteen digits in a row.
        if _NINETEEN_DIGITS in shape and (_DIGIT_RUN in shape or _NEGATIVE_RUN in shape):
            # orjson reads integers past 64 bits as floats; Python's parser keeps them
            # exact (and they are stored as their decimal text).
            value = _lenient(data, None)
    # Cheap test first: nesting ``limit`` levels takes more than ``limit`` brackets.
    if limit and len(data) > limit and shape.count(b"{") > limit:
        kind = type(value)
        if limit > MAX_JSON_DEPTH or (
            (kind is dict or kind is list) and _nests_deeper(value, limit)
        ):
            problem = nesting_problem(value, limit)
            if problem is not None:
                raise JSONProblem(problem)
    return value


def _nests_deeper(node: dict[str, Any] | list[Any], room: int) -> bool:
    """True when a list or object within ``node`` (itself one) sits ``room`` levels
    below it or deeper: ``nesting_problem``'s test (``room`` its ``limit``), without the
    field paths it keeps for its message, for a parser's value (plain dicts and lists);
    recursive, so only for a ``room`` of ``MAX_JSON_DEPTH`` or less."""
    if not room:
        return True
    children: Any = node.values() if type(node) is dict else node
    for child in children:
        kind = type(child)
        if (kind is dict or kind is list) and _nests_deeper(child, room - 1):
            return True
    return False


def without_bom(data: bytes) -> bytes:
    """``data`` without the byte order marks (and blanks between them) it starts with."""
    while data.startswith(BOM):
        data = data[len(BOM) :].lstrip()
    return data


def _lenient(data: bytes, error: orjson.JSONDecodeError | None) -> Any:
    """What Python's encoder writes (``NaN``, lone surrogate escapes, integers of any
    size), or the strict parser's error."""
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        if error is None:  # an integer past Python's digit limit
            raise JSONProblem(f"a number is too long to read ({str(exc)[:80]})", 0) from None
        raise JSONProblem(_short(error), error.pos) from None


def open_binary(path: Path, *, buffering: int = -1) -> IO[bytes]:
    """Open a file for reading, transparently decompressing zstd and gzip by content.

    ``buffering``: the buffer of a plain (uncompressed) file, as ``open`` takes it.
    """
    with path.open("rb") as probe:
        magic = probe.read(4)
    if magic.startswith(_ZSTD_MAGIC):
        import zstandard

        raw = path.open("rb")
        stream = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return cast(IO[bytes], io.BufferedReader(stream))
    if magic.startswith(_GZIP_MAGIC):
        import gzip

        # gzip.open owns the file and closes it; GzipFile(fileobj=…) would leave it open.
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb", buffering=buffering)


def _corrupt(exc: Exception) -> bool:
    """True for errors that mean the compressed content itself is damaged."""
    return isinstance(exc, EOFError | ValueError) or type(exc).__name__ in (
        "ZstdError",
        "BadGzipFile",
    )


def read_head(path: Path, size: int = 65_536) -> bytes:
    """The first ``size`` decompressed bytes of a file."""
    with open_binary(path) as handle:
        try:
            return handle.read(size)
        except (EOFError, ValueError, OSError) as exc:
            raise SourceError(
                path, f"the compressed data is damaged ({exc}); the file was skipped"
            ) from None
        except Exception as exc:
            if _corrupt(exc):
                raise SourceError(
                    path, f"the compressed data is damaged ({exc}); the file was skipped"
                ) from None
            raise


def looks_binary(head: bytes) -> bool:
    """True for content that is not text (NUL bytes or invalid UTF-8 in the first block)."""
    if b"\x00" in head[:8192]:
        return True
    try:
        head[:8192].decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the block end is fine.
        return exc.start < min(len(head), 8192) - 4
    return False


def iter_jsonl(
    path: Path, *, start_line: int = 1
) -> Iterator[tuple[int, dict[str, Any]] | SourceIssue]:
    """Yield ``(line_number, object)`` for each JSON object line, or an issue for a bad line.

    Blank lines are skipped silently. A last line without a newline that does not parse is
    reported as a torn tail (the file is probably still being written).
    """
    shown = str(path)
    with open_binary(path, buffering=LINE_BUFFER_BYTES) as handle:
        number = start_line - 1
        while True:
            try:
                raw = handle.readline(MAX_LINE_BYTES + 1)
            except Exception as exc:
                if not (_corrupt(exc) or isinstance(exc, OSError)):
                    raise
                yield _damaged(shown, exc, number)
                return
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                yield _overlong(handle, raw, shown, number)
                continue
            stripped = raw.strip()
            if stripped.startswith(BOM):
                stripped = without_bom(stripped)
            if not stripped:
                continue
            try:
                value = _parse_json(stripped)
            except JSONProblem as exc:
                yield _line_problem(shown, exc, raw, number)
                continue
            if not isinstance(value, dict):
                yield _not_an_object(shown, value, number)
                continue
            yield number, value


def read_jsonl_objects(
    path: Path, add: Callable[[dict[str, Any], int], object], issues: list[SourceIssue]
) -> None:
    """``iter_jsonl`` for a reader that takes every line (a Claude Code file): each object
    line is handed to ``add`` with its number, each issue appended to ``issues``, in file
    order: the same objects and issues, without a generator's resume, a tuple and a type
    test per line (the hot loop of an import)."""
    shown = str(path)
    loads = orjson.loads
    with open_binary(path, buffering=LINE_BUFFER_BYTES) as handle:
        readline = handle.readline
        number = 0
        while True:
            try:
                raw = readline(MAX_LINE_BYTES + 1)
            except Exception as exc:
                if not (_corrupt(exc) or isinstance(exc, OSError)):
                    raise
                issues.append(_damaged(shown, exc, number))
                return
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                issues.append(_overlong(handle, raw, shown, number))
                continue
            if raw.startswith(b"{") and raw.endswith(b"}\n"):
                # Most lines: what ``_parse_json`` does to a line orjson reads as it is,
                # inlined (a call a line less; a line past the bracket count tested by
                # ``_nests_deeper``, not the walk that names the field). Any other line
                # (orjson refuses it, nineteen digits in a row, nested too deep) is read
                # below as before.
                shape = raw.translate(_DIGITS)
                if _NINETEEN_DIGITS not in shape:
                    deep = len(raw) > MAX_JSON_DEPTH and shape.count(b"{") > MAX_JSON_DEPTH
                    try:
                        value = loads(raw)
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        if not deep or not _nests_deeper(value, MAX_JSON_DEPTH):
                            add(value, number)  # a dict: orjson read text opening with {
                            continue
            try:
                if raw.startswith(b"{") and raw.endswith(b"}\n"):
                    # Nothing to strip but the newline, which JSON reads as a blank (and
                    # ``_parse_json``'s tests as neither digit nor bracket); a line it
                    # refuses is read again stripped, for the same reason.
                    try:
                        value = _parse_json(raw)
                    except JSONProblem:
                        value = _parse_json(raw[:-1])
                else:
                    stripped = raw.strip()
                    if stripped.startswith(BOM):
                        stripped = without_bom(stripped)
                    if not stripped:
                        continue
                    value = _parse_json(stripped)
            except JSONProblem as exc:
                issues.append(_line_problem(shown, exc, raw, number))
                continue
            if type(value) is dict or isinstance(value, dict):
                add(value, number)
            else:
                issues.append(_not_an_object(shown, value, number))


def _damaged(shown: str, exc: Exception, number: int) -> SourceIssue:
    """The issue of a read that failed after line ``number`` (damaged compressed data)."""
    return SourceIssue(
        shown,
        f"the compressed data is damaged after this line ({exc}); the rest was skipped",
        number,
    )


def _overlong(handle: IO[bytes], raw: bytes, shown: str, number: int) -> SourceIssue:
    """Skip the rest of an overlong line (``raw`` its start); the issue naming it."""
    while raw and not raw.endswith(b"\n"):
        raw = handle.readline(MAX_LINE_BYTES)
    return SourceIssue(
        shown,
        f"line longer than {_size(MAX_LINE_BYTES)} skipped (one record may not exceed it)",
        number,
    )


def _line_problem(shown: str, exc: JSONProblem, raw: bytes, number: int) -> SourceIssue:
    """The issue of a line that is not JSON Proctor reads (``raw``: the line as read)."""
    if exc.position is not None and not raw.endswith(b"\n"):
        return SourceIssue(
            shown,
            "truncated last line (the file may still be being written); it was skipped",
            number,
            severity="warning",
        )
    if exc.position is not None:
        return SourceIssue(shown, f"invalid JSON ({exc.reason}); line skipped", number)
    return SourceIssue(shown, f"{exc.reason}; line skipped", number)


def _not_an_object(shown: str, value: Any, number: int) -> SourceIssue:
    return SourceIssue(
        shown, f"expected a JSON object, got {_json_kind(value)}; line skipped", number
    )


def load_json_document(path: Path) -> Any:
    """Parse a whole-file JSON document, raising ``SourceError`` with the reason."""
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise SourceError(path, f"JSON document of {size} bytes is too large to load; split it")
    with open_binary(path) as handle:
        data = handle.read()
    try:
        # A document holds its records a few levels down: they get the record limit, the
        # adapters check each record (``record_nesting_issue``), and the whole document
        # is refused only past what a parser takes at all.
        return parse_json(data, limit=0)
    except JSONProblem as exc:
        line = data.count(b"\n", 0, exc.position) + 1 if exc.position is not None else None
        raise SourceError(path, f"invalid JSON ({exc.reason})", line=line) from None


# A string token as one run of plain bytes between escapes ("unrolled"): the same tokens as
# ``"(?:[^"\\]|\\.)*"``, which tried its alternation once a byte (6 ms a 70 KB string).
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]')


def element_lines(path: Path, key: str | None = None) -> list[int]:
    """The line each element of a file's JSON list starts on (1-based): the top-level
    list, or the list under ``key`` of a top-level object.

    For naming the line of a bad record in a JSON document; read only when one is
    reported. Empty when the file holds no such list."""
    with open_binary(path) as handle:
        data = handle.read()
    wanted = 1 if key is None else 2
    starts: list[int] = []
    depth = 0
    expect = False
    inside = False
    name: bytes | None = None
    target = None if key is None else json.dumps(key).encode()
    for match in _TOKENS.finditer(data):
        token = match.group()
        if inside and depth == wanted and expect:
            starts.append(match.start())
            expect = False
        if token in (b"[", b"{"):
            depth += 1
            if depth == 1 and (token == b"[") != (key is None):
                return []
            if depth == wanted and token == b"[" and (key is None or name == target):
                inside = expect = True
        elif token in (b"]", b"}"):
            if depth == wanted and inside:
                break
            depth -= 1
        elif token == b"," and depth == wanted and inside:
            expect = True
        elif depth == 1 and key is not None and token.startswith(b'"'):
            name = token
    newlines = [m.start() for m in re.finditer(b"\n", data)] if starts else []
    return [bisect.bisect_left(newlines, start) + 1 for start in starts]


class RecordLines:
    """The line each record of a JSON document's list starts on, found only when one is
    named in an issue (``element_lines``)."""

    def __init__(self, path: Path, key: str | None = None) -> None:
        self.path = path
        self.key = key
        self._lines: list[int] | None = None

    def of(self, index: int) -> int | None:
        """The 1-based line record ``index`` starts on, or None when it cannot be told."""
        if self._lines is None:
            try:
                self._lines = element_lines(self.path, self.key)
            except (OSError, ValueError, EOFError):
                self._lines = []
        return self._lines[index] if index < len(self._lines) else None


def _size(count: int) -> str:
    return f"{count // (1024 * 1024)} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def _short(exc: orjson.JSONDecodeError) -> str:
    """The parser's reason and where, e.g. ``unexpected character, expected a JSON value at column 31``."""
    reason = str(getattr(exc, "msg", exc)).split(":")[0]
    column = getattr(exc, "colno", None)
    return f"{reason} at column {column}" if column else reason


def _json_kind(value: Any) -> str:
    match value:
        case list():
            return "an array"
        case str():
            return "a string"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case None:
            return "null"
        case _:
            return type(value).__name__
