"""The adapter protocol: how a transcript format is recognised and read.

An adapter is recognised by *content*, never by file name alone: ``sniff`` looks at a
``Sample`` (the first bytes, the first JSON Lines records, or the parsed document) and
says whether the file is in its format. ``plan`` groups recognised files into
``ReadUnit``s (a Claude Code session plus its sub-agent files is one unit), and ``read``
turns a unit into conversation bundles, yielding ``SourceIssue``s for bad records
instead of raising.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from proctor.sources._files import (
    BOM,
    JSONProblem,
    load_json_document,
    looks_binary,
    open_binary,
    parse_json,
    read_head,
    without_bom,
)
from proctor.transcript import ConversationBundle, SourceIssue

_T = TypeVar("_T")

SAMPLE_BYTES = 256 * 1024
SAMPLE_RECORDS = 40
MAX_SNIFF_DOCUMENT_BYTES = 64 * 1024 * 1024
KEEP_DOCUMENT_BYTES = 4 * 1024 * 1024
_REMEMBERED_LINES = 16
"""Head lines whose parse a sample remembers (``is_jsonl`` looks at the first eight)."""
SCAN_BYTES = 16 * 1024 * 1024
"""How far sampling reads past first lines longer than the sample, looking for records."""


def _starts_like_json(line: bytes) -> bool:
    """True for a line that is (or was, before damage) JSON rather than prose: it opens
    like a JSON value, or holds bytes that are not UTF-8 text."""
    if line[:1] in (b"{", b"[", b'"', b"-") or line[:1].isdigit():
        return True
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return line in (b"true", b"false", b"null")


def _is_object_line(line: bytes) -> bool:
    try:
        return isinstance(parse_json(line), dict)
    except JSONProblem:
        return False


class _LazyFlags:
    """Flags ``flag(0) … flag(size - 1)``, each computed when first asked."""

    __slots__ = ("_flag", "_known", "_size")

    def __init__(self, size: int, flag: Callable[[int], bool]) -> None:
        self._size = size
        self._flag = flag
        self._known: dict[int, bool] = {}

    def __getitem__(self, index: int) -> bool:
        known = self._known.get(index)
        if known is None:
            known = self._known[index] = self._flag(index)
        return known

    def any(self, start: int, stop: int | None = None) -> bool:
        """Whether a flag from ``start`` up to ``stop`` (the end) holds, asked in order."""
        end = self._size if stop is None else min(stop, self._size)
        return any(self[index] for index in range(start, end))

    def count(self) -> int:
        """How many flags hold (every one asked)."""
        return sum(self[index] for index in range(self._size))


@dataclass(slots=True)
class _HeadScan:
    """How far a sample's head has been parsed: the records found and where the next
    line starts (plain values: a sample travels to worker processes)."""

    found: list[dict[str, Any]] = field(default_factory=list)
    position: int = 0
    lines: int = 0
    """Lines parsed (the blank ones not counted)."""
    done: bool = False

    def next_line(self, head: bytes, cut: bool) -> bytes | None:
        """The head's next line (``head.split(b"\\n")``'s next item; the last one left out
        when the head was cut by the sample size), or None after the last."""
        if self.done:
            return None
        start = self.position
        end = head.find(b"\n", start)
        if end < 0:
            self.done = True
            return None if cut else head[start:]
        self.position = end + 1
        return head[start:end]


class Sample:
    """What adapters look at to recognise a file. Parsing is lazy and cached.

    After ``compact`` (once detection and planning are done) a sample caches nothing but
    a small parsed document: anything an adapter asks for again is recomputed from the
    file, so a plan over thousands of files holds no sampled bytes.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: dict[str, Any] = {}
        self._caching = True
        self._cut = False
        self._object_lines: dict[bytes, bool] = {}
        self.facts: dict[str, Any] = {}
        """Small facts an adapter read from the sample while planning (a file's role),
        kept past ``compact`` so reading the unit need not parse the head again."""

    def _memo(self, name: str, compute: Callable[[], _T]) -> _T:
        if name in self._cache:
            return cast(_T, self._cache[name])
        value = compute()
        if self._caching:
            self._cache[name] = value
        return value

    @property
    def head(self) -> bytes:
        """The first bytes of the (decompressed) content, without a byte order mark."""
        return self._memo("head", self._read_head)

    def _read_head(self) -> bytes:
        head = read_head(self.path, SAMPLE_BYTES)
        self._cut = len(head) == SAMPLE_BYTES
        return without_bom(head.lstrip()) if head.lstrip().startswith(BOM) else head

    @property
    def is_binary(self) -> bool:
        """True when the content is not text: NUL bytes or invalid UTF-8 near the start,
        unless lines of JSON objects show it is JSON Lines with a damaged line."""
        return self._memo("is_binary", self._looks_binary)

    def _looks_binary(self) -> bool:
        if not looks_binary(self.head) or self._head_records():
            return False
        # Damaged bytes at the top of JSON Lines whose first lines are long: look further.
        return not (self._first_char == "{" and self.records)

    @property
    def _first_char(self) -> str:
        return without_bom(self.head.lstrip())[:1].decode("ascii", errors="replace")

    @property
    def text_start(self) -> str:
        """The first non-blank character of the content, or '' for an empty file.

        ``{`` for JSON Lines, whatever the first line holds (it may be damaged)."""
        return self._memo(
            "text_start",
            lambda: "{" if self._first_char != "{" and self.is_jsonl else self._first_char,
        )

    @property
    def records(self) -> list[dict[str, Any]]:
        """The first JSON Lines object records that parse (empty when not JSON Lines)."""
        return self._memo("records", self._parse_records)

    def _parse_records(self) -> list[dict[str, Any]]:
        found = self._head_records()
        if len(found) < 2 and self._cut:
            found = self._records_past_head()
        return found

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """``records`` one by one, parsing the head only as far as the caller reads: a
        detector that decides from the first records (most files of most formats) does
        not parse the rest of the sample."""
        if "records" in self._cache or not self._caching:
            yield from self.records  # a compacted sample keeps no partial parse
            return
        index = 0
        while True:
            # ``records`` is the head's records when the head holds two or more (else the
            # records read past it): parsing two first tells which. Then the head is
            # parsed on in doubling steps, every record found so far being one of them.
            found, done = self._head_prefix(max(2, 2 * index))
            if done and len(found) < 2 and self._cut:
                yield from self.records[index:]
                return
            if index >= len(found):
                return
            while index < len(found):
                yield found[index]
                index += 1

    def _head_records(self) -> list[dict[str, Any]]:
        return self._head_prefix(SAMPLE_RECORDS)[0]

    def _head_prefix(self, count: int, *, lines: int = 0) -> tuple[list[dict[str, Any]], bool]:
        """The head's records parsed so far, at least its first ``count`` (at most
        ``SAMPLE_RECORDS``) when it holds them, and whether it holds no more; its lines are
        parsed once, as far as asked (``_HeadScan``), and at least its first ``lines``
        lines that hold anything. The list is the scan's own."""
        scan = self._cache.get("head_scan")
        if not isinstance(scan, _HeadScan):
            scan = _HeadScan()
            if self._caching:
                self._cache["head_scan"] = scan
        head = self.head
        found = scan.found
        count = min(count, SAMPLE_RECORDS)
        while (len(found) < count or scan.lines < lines) and not scan.done:
            line = scan.next_line(head, self._cut)
            if line is None:
                break
            line = line.strip()
            if not line:
                continue
            scan.lines += 1
            try:
                value = parse_json(line)
            except JSONProblem:
                self._remember_line(line, False)
                continue
            self._remember_line(line, isinstance(value, dict))
            if isinstance(value, dict):
                found.append(value)
        if len(found) >= SAMPLE_RECORDS:
            scan.done = True
        return found, scan.done

    def first_records(self, count: int) -> list[dict[str, Any]]:
        """``records[:count]``, parsing no more of the head than that takes."""
        return list(islice(self.iter_records(), count))

    def _remember_line(self, line: bytes, is_object: bool) -> None:
        """Note whether a head line is one JSON object, for ``is_jsonl`` to ask again."""
        if self._caching and len(self._object_lines) < _REMEMBERED_LINES:
            self._object_lines[line] = is_object

    def _leading_is_object(self, leading: list[bytes], index: int) -> bool:
        """Whether ``leading[index]``, the head's ``index``-th line that holds anything, is
        one JSON object: parsed by the head's scan (once, and only as far as asked: most
        files are told from their first line or two)."""
        if self._caching:
            self._head_prefix(0, lines=index + 1)
        return self._is_object(leading[index])

    def _is_object(self, line: bytes) -> bool:
        """``_is_object_line``, answered from the head records' parse when it saw the line."""
        known = self._object_lines.get(line)
        return _is_object_line(line) if known is None else known

    def _records_past_head(self) -> list[dict[str, Any]]:
        """Records of a file whose first lines are longer than the sample (a pasted
        image, a huge value): whole lines are read, up to ``SCAN_BYTES`` in all."""
        found: list[dict[str, Any]] = []
        scanned = 0
        try:
            with open_binary(self.path) as handle:
                while len(found) < SAMPLE_RECORDS and scanned < SCAN_BYTES:
                    line = handle.readline(SCAN_BYTES - scanned)
                    scanned += len(line)
                    if not line.endswith(b"\n") and scanned >= SCAN_BYTES:
                        break
                    if not line:
                        break
                    try:
                        value = parse_json(line.strip())
                    except JSONProblem:
                        continue
                    if isinstance(value, dict):
                        found.append(value)
        except Exception:  # a damaged compressed file: what was found is the sample
            pass
        return found

    @property
    def is_jsonl(self) -> bool:
        """True when the file holds several lines of JSON objects (or one object per line)."""
        return self._memo("is_jsonl", self._looks_like_jsonl)

    def _looks_like_jsonl(self) -> bool:
        head = self.head
        leading = [without_bom(line.strip()) for line in head.split(b"\n", 9)[:9]]
        leading = [line for line in leading if line][:8]
        if not leading:
            return False
        whole = _LazyFlags(len(leading), lambda index: self._leading_is_object(leading, index))
        named_lines = self.path.suffix.lower() in (".jsonl", ".ndjson")
        if (
            not named_lines
            and not _starts_like_json(leading[0])
            and whole.count() * 2 < len(leading)
        ):
            return False  # prose (a README), not JSON lines with a damaged first one
        # A pretty-printed document starts with a bare "{" or "[" and its inner one-line
        # objects must not count, unless the file is no document and several lines are
        # whole objects (JSON Lines whose first line was cut to its brace).
        if leading[0] == b"{":  # an object's next line is never a whole object
            return whole.any(1) and self._whole_document() is None
        if leading[0] == b"[":  # an array's last element may be one
            return whole.count() >= 2 and self._whole_document() is None
        if whole.any(0, 2) or whole.count() >= 2:
            first = self.first_records(2)
            return len(first) >= 2 or (len(first) == 1 and head.strip().count(b"\n") >= 1)
        # The first lines are damaged (torn, garbled, longer than the sample): JSON Lines
        # when later lines are objects and the file is not one JSON document.
        return bool(self.first_records(1)) and self._whole_document() is None

    @property
    def document(self) -> Any:
        """The whole file parsed as one JSON document, or None when it is not one."""
        return self._memo("document", self._parse_document)

    def _parse_document(self) -> Any:
        if self._first_char not in ("{", "["):
            return None
        if self.is_jsonl and len(self.first_records(2)) >= 2:
            return None  # JSON Lines: not one document, and parsing it whole would be wasted work
        return self._whole_document()

    def _whole_document(self) -> Any:
        return self._memo("whole_document", self._load_document)

    def _load_document(self) -> Any:
        if self.path.stat().st_size > MAX_SNIFF_DOCUMENT_BYTES:
            return None
        try:
            return load_json_document(self.path)
        except Exception:
            return None

    def reading(self) -> Sample:
        """A sample of the same file that caches again, for one read of its unit: an
        adapter that asks for the head records twice (its role, then its shape) parses
        them once. It starts from what this one kept and is dropped with the read."""
        fresh = Sample(self.path)
        fresh._cache = dict(self._cache)
        fresh.facts = self.facts
        return fresh

    def compact(self) -> None:
        """Stop caching; keep only a small parsed document for the adapter to reuse."""
        document = self._cache.get("document")
        keep = document is not None and self.path.stat().st_size <= KEEP_DOCUMENT_BYTES
        self._cache = {"document": document} if keep else {}
        self._object_lines = {}
        self._caching = False


@dataclass(frozen=True, slots=True)
class ReadUnit:
    """Files an adapter reads together (a session and its sub-agent files)."""

    path: Path
    related: tuple[Path, ...] = ()
    sample: Sample | None = field(default=None, compare=False)
    """The sample taken during detection, reused to avoid parsing twice."""

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file of the unit, primary first."""
        return (self.path, *self.related)


ReadItem = ConversationBundle | SourceIssue


class SourceAdapter(ABC):
    """One transcript format. Subclasses are small: detection, planning, reading."""

    name: ClassVar[str]
    """Stable format name used in ``--format`` and stored on conversations."""
    version: ClassVar[int] = 1
    """Bumped when the adapter's output changes, so files are re-read."""
    description: ClassVar[str]
    """One line for ``proctor ingest --help`` and the docs."""

    @abstractmethod
    def sniff(self, sample: Sample) -> bool:
        """True when the sampled content is in this format."""

    def salvage(self, sample: Sample) -> bool:
        """True when a damaged file no adapter recognised (broken lines among its first)
        still holds records of this format, read past the sample. The import then reads it
        with this adapter: its good records are stored, every other line is reported.
        Default: never."""
        return False

    def plan(self, files: Sequence[tuple[Path, Sample]]) -> list[ReadUnit]:
        """Group recognised files into read units. Default: one unit per file."""
        return [ReadUnit(path, sample=sample) for path, sample in files]

    @abstractmethod
    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield the conversations in ``unit``, and issues for records that cannot be read."""
