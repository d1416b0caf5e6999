"""Listing and reading entries of any knowledge base (local or external)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from proctor.errors import NotFoundError
from proctor.knowledge._bases import KnowledgeBase
from proctor.knowledge._errors import EntryNameError
from proctor.knowledge._names import ENTRY_SUFFIX, entry_name_of, readable_path

MAX_ENTRY_BYTES = 1_000_000
"""The largest note Proctor reads (or extends)."""

MAX_LISTED = 10_000
"""Entries a listing looks at, at most (a vault can be huge)."""


@dataclass(frozen=True, slots=True)
class EntrySummary:
    """One note in a listing."""

    base: str
    name: str
    """Relative to the base's folder, without ``.md`` (``ledger-export``, ``team/ledger``)."""
    size: int
    """Bytes."""
    modified_at: datetime


@dataclass(frozen=True, slots=True)
class Entry:
    """One note with its text."""

    base: str
    name: str
    text: str
    digest: str
    """SHA-256 of the file's bytes: what a preview saw."""
    writable: bool
    modified_at: datetime


def content_digest(data: bytes) -> str:
    """The SHA-256 of a note's bytes, as hex."""
    return hashlib.sha256(data).hexdigest()


def _modified(stat: os.stat_result) -> datetime:
    return datetime.fromtimestamp(stat.st_mtime, UTC)


def list_entries(base: KnowledgeBase) -> list[EntrySummary]:
    """Every note in the base, by name; links leading outside and hidden files are skipped."""
    root = base.root.resolve()
    if not root.is_dir():
        return []
    found: list[EntrySummary] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for file_name in sorted(files):
            if file_name.startswith(".") or not file_name.lower().endswith(ENTRY_SUFFIX):
                continue
            path = Path(folder) / file_name
            real = path.resolve()
            if not real.is_relative_to(root) or not real.is_file():
                continue
            stat = real.stat()
            found.append(
                EntrySummary(base.name, entry_name_of(path, root), stat.st_size, _modified(stat))
            )
            if len(found) >= MAX_LISTED:
                return sorted(found, key=lambda entry: entry.name)
    return sorted(found, key=lambda entry: entry.name)


def read_bytes(path: Path, name: str) -> bytes:
    """A note's bytes, bounded."""
    if path.stat().st_size > MAX_ENTRY_BYTES:
        raise EntryNameError(
            f"the entry {name!r} is larger than {MAX_ENTRY_BYTES:,} bytes; open it in an editor"
        )
    return path.read_bytes()


def read_entry(base: KnowledgeBase, name: str) -> Entry:
    """One note of the base by name (``team/ledger`` or ``team/ledger.md``)."""
    path = readable_path(base.root, name)
    if not path.is_file():
        raise NotFoundError(
            f"no entry {name!r} in the {base.name} knowledge base; `proctor kb list` shows them"
        )
    data = read_bytes(path, name)
    return Entry(
        base=base.name,
        name=entry_name_of(path, base.root.resolve()),
        text=data.decode("utf-8", errors="replace"),
        digest=content_digest(data),
        writable=base.writable,
        modified_at=_modified(path.stat()),
    )
