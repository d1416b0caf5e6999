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
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

import orjson

from proctor.sources._files import load_json_document, looks_binary, read_head
from proctor.transcript import ConversationBundle, SourceIssue

_T = TypeVar("_T")

SAMPLE_BYTES = 256 * 1024
SAMPLE_RECORDS = 40
MAX_SNIFF_DOCUMENT_BYTES = 64 * 1024 * 1024
KEEP_DOCUMENT_BYTES = 4 * 1024 * 1024


def _is_object_line(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


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

    def _memo(self, name: str, compute: Callable[[], _T]) -> _T:
        if name in self._cache:
            return cast(_T, self._cache[name])
        value = compute()
        if self._caching:
            self._cache[name] = value
        return value

    @property
    def head(self) -> bytes:
        """The first bytes of the (decompressed) content."""
        return self._memo("head", lambda: read_head(self.path, SAMPLE_BYTES))

    @property
    def is_binary(self) -> bool:
        """True when the content is not text."""
        return self._memo("is_binary", lambda: looks_binary(self.head))

    @property
    def text_start(self) -> str:
        """The first non-blank character of the content, or '' for an empty file."""
        return self._memo(
            "text_start", lambda: self.head.lstrip()[:1].decode("ascii", errors="replace")
        )

    @property
    def records(self) -> list[dict[str, Any]]:
        """The first JSON Lines object records that parse (empty when not JSON Lines)."""
        return self._memo("records", self._parse_records)

    def _parse_records(self) -> list[dict[str, Any]]:
        head = self.head
        found: list[dict[str, Any]] = []
        lines = head.split(b"\n")
        if len(head) == SAMPLE_BYTES:
            lines = lines[:-1]  # the last line may be cut by the sample size
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append(value)
            if len(found) >= SAMPLE_RECORDS:
                break
        return found

    @property
    def is_jsonl(self) -> bool:
        """True when the file holds several lines of JSON objects (or one object per line)."""
        return self._memo("is_jsonl", self._looks_like_jsonl)

    def _looks_like_jsonl(self) -> bool:
        if self.text_start != "{":
            return False
        head = self.head
        # One of the first two lines must be a whole object: a pretty-printed document
        # starts with a bare "{" and its inner one-line objects must not count. Two, so a
        # live file whose first line is torn is still recognised.
        leading = [line.strip() for line in head.split(b"\n")[:8] if line.strip()][:2]
        if not any(_is_object_line(line) for line in leading):
            return False
        records = self.records
        return len(records) >= 2 or (len(records) == 1 and head.strip().count(b"\n") >= 1)

    @property
    def document(self) -> Any:
        """The whole file parsed as one JSON document, or None when it is not one."""
        return self._memo("document", self._parse_document)

    def _parse_document(self) -> Any:
        if self.text_start not in ("{", "["):
            return None
        if self.is_jsonl and len(self.records) >= 2:
            return None  # JSON Lines: not one document, and parsing it whole would be wasted work
        if self.path.stat().st_size > MAX_SNIFF_DOCUMENT_BYTES:
            return None
        try:
            return load_json_document(self.path)
        except Exception:
            return None

    def compact(self) -> None:
        """Stop caching; keep only a small parsed document for the adapter to reuse."""
        document = self._cache.get("document")
        keep = document is not None and self.path.stat().st_size <= KEEP_DOCUMENT_BYTES
        self._cache = {"document": document} if keep else {}
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

    def plan(self, files: Sequence[tuple[Path, Sample]]) -> list[ReadUnit]:
        """Group recognised files into read units. Default: one unit per file."""
        return [ReadUnit(path, sample=sample) for path, sample in files]

    @abstractmethod
    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield the conversations in ``unit``, and issues for records that cannot be read."""
