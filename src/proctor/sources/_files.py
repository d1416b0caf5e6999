"""Reading input files safely: compressed files, JSON Lines with bad lines, binary files.

Everything here turns bad input into ``SourceIssue`` data naming the file, the line and
the reason, so one broken line never stops an import (SPEC ING-9). Memory stays bounded:
an overlong line is skipped without being held in memory.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson

from proctor.errors import SourceError
from proctor.transcript import SourceIssue

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Lines longer than this are reported and skipped (a real Claude Code line with images is ~1 MB)."""

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""Single-document JSON files larger than this are refused instead of loaded."""

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"


def open_binary(path: Path) -> IO[bytes]:
    """Open a file for reading, transparently decompressing zstd and gzip by content."""
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
    return path.open("rb")


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
    with open_binary(path) as handle:
        number = start_line - 1
        while True:
            try:
                raw = handle.readline(MAX_LINE_BYTES + 1)
            except Exception as exc:
                if not (_corrupt(exc) or isinstance(exc, OSError)):
                    raise
                yield SourceIssue(
                    shown,
                    f"the compressed data is damaged after this line ({exc}); the rest was skipped",
                    number,
                )
                return
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = handle.readline(MAX_LINE_BYTES)
                yield SourceIssue(
                    shown,
                    f"line longer than {_size(MAX_LINE_BYTES)} skipped (one record may not exceed it)",
                    number,
                )
                continue
            stripped = raw.strip()
            if not stripped:
                continue
            try:
                value = orjson.loads(stripped)
            except orjson.JSONDecodeError as exc:
                if not raw.endswith(b"\n"):
                    yield SourceIssue(
                        shown,
                        "truncated last line (the file may still be being written); it was skipped",
                        number,
                        severity="warning",
                    )
                else:
                    yield SourceIssue(shown, f"invalid JSON ({_short(exc)}); line skipped", number)
                continue
            if not isinstance(value, dict):
                yield SourceIssue(
                    shown, f"expected a JSON object, got {_json_kind(value)}; line skipped", number
                )
                continue
            yield number, value


def load_json_document(path: Path) -> Any:
    """Parse a whole-file JSON document, raising ``SourceError`` with the reason."""
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise SourceError(path, f"JSON document of {size} bytes is too large to load; split it")
    with open_binary(path) as handle:
        data = handle.read()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        line = data.count(b"\n", 0, exc.pos) + 1 if exc.pos is not None else None
        raise SourceError(path, f"invalid JSON ({_short(exc)})", line=line) from None


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
