"""Preview, then confirm: the only way Proctor writes a note (UI-5).

``preview_entity_note`` builds the exact text for an entity — a whole new entry, or a
dated section to append to the existing one — and a digest that binds the text to the
entry as it is now. ``confirm_write`` writes only when it gets that digest back and the
entry is still what the preview saw; otherwise it refuses (``StaleEntryError``) and the
person previews again. What a person wrote is never rewritten: extending appends.

Writes are atomic: the new content goes to a temporary file in the same folder, is
flushed to disk, and replaces the entry with ``os.replace``; a lock file serialises
Proctor's own writers to one base.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from proctor._util.clock import utcnow
from proctor.errors import ConfigError
from proctor.knowledge._bases import LOCAL_BASE, KnowledgeBase, find_base
from proctor.knowledge._entries import read_bytes
from proctor.knowledge._errors import ReadOnlyBaseError, StaleEntryError
from proctor.knowledge._names import slug_entry_name, slug_from_title, writable_path
from proctor.knowledge._note import EntityReader, build_entity_note, entity_in_result

WriteMode = Literal["create", "extend"]

_LOCK_NAME = ".proctor-knowledge.lock"


@dataclass(frozen=True, slots=True)
class KnowledgePreview:
    """The exact text a confirm will write, and the digest that allows it."""

    base: str
    entry: str
    """The slugged entry name (the file is ``entry.md`` in the base's folder)."""
    mode: WriteMode
    """``create`` a new entry, or ``extend`` the existing one by appending ``text``."""
    text: str
    digest: str
    """Send it back to confirm; it binds ``text`` to the entry as the preview saw it."""
    entity_id: str
    result_id: str
    existing_chars: int
    """How long the entry is now (0 when it does not exist)."""


@dataclass(frozen=True, slots=True)
class WrittenEntry:
    """What a confirmed write did."""

    base: str
    entry: str
    mode: WriteMode
    path: Path
    chars: int
    """Characters written by this confirm (the new entry, or the appended section)."""


def write_digest(base: str, entry: str, current: bytes | None, text: str) -> str:
    """Binds the text to be written to the entry's current bytes (None: it does not exist)."""
    digest = hashlib.sha256()
    for part in (base.encode(), entry.encode()):
        digest.update(len(part).to_bytes(8, "big") + part)
    state = b"absent" if current is None else b"present" + hashlib.sha256(current).digest()
    digest.update(state + b"\x00" + text.encode())
    return digest.hexdigest()


def _writable_base(bases: Sequence[KnowledgeBase], name: str) -> KnowledgeBase:
    base = find_base(bases, name)
    if not base.writable:
        raise ReadOnlyBaseError(
            f"the {base.name} knowledge base is external and read-only: Proctor never writes "
            f"to it; write to the {LOCAL_BASE} base instead"
        )
    return base


def _current(path: Path, entry: str) -> bytes | None:
    return read_bytes(path, entry) if path.is_file() else None


def preview_entity_note(
    reader: EntityReader,
    bases: Sequence[KnowledgeBase],
    result_ref: str,
    entity_ref: str,
    *,
    entry: str | None = None,
    base: str = LOCAL_BASE,
    now: datetime | None = None,
) -> KnowledgePreview:
    """The note a confirm would write for an entity of a result; nothing is written."""
    target = _writable_base(bases, base)
    slug = slug_entry_name(entry) if entry is not None else None
    source = entity_in_result(reader, result_ref, entity_ref)
    result_ids = {change.result_id for change in source.detail.changes}
    result_dates = {rid: reader.result(rid).created_at for rid in sorted(result_ids)}
    note = build_entity_note(source, result_dates, now or utcnow())
    slug = slug or slug_from_title(note.title)
    path = writable_path(target.root, slug)
    current = _current(path, slug)
    text = note.new_text if current is None else note.section_text
    return KnowledgePreview(
        base=target.name,
        entry=slug,
        mode="create" if current is None else "extend",
        text=text,
        digest=write_digest(target.name, slug, current, text),
        entity_id=note.entity.entity_id,
        result_id=note.result.result_id,
        existing_chars=0 if current is None else len(current.decode("utf-8", errors="replace")),
    )


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    with open(root / _LOCK_NAME, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _replace_atomically(path: Path, content: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=".proctor-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _appended(current: bytes, text: str) -> bytes:
    separator = (
        b"" if current.endswith(b"\n\n") else (b"\n" if current.endswith(b"\n") else b"\n\n")
    )
    return current + separator + text.encode()


def _check_text(text: str) -> None:
    if "\x00" in text:
        raise ConfigError("the note's text contains a NUL character; preview again")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError("the note's text is not valid Unicode; preview again") from None


def confirm_write(
    bases: Sequence[KnowledgeBase], entry: str, text: str, digest: str, *, base: str = LOCAL_BASE
) -> WrittenEntry:
    """Write the previewed text, only if the entry is unchanged since the preview."""
    target = _writable_base(bases, base)
    slug = slug_entry_name(entry)
    _check_text(text)
    writable_path(target.root, slug)  # refuse a link before anything is created
    target.root.mkdir(parents=True, exist_ok=True)
    with _locked(target.root.resolve()):
        path = writable_path(target.root, slug)
        current = _current(path, slug)
        if write_digest(target.name, slug, current, text) != digest:
            raise StaleEntryError(
                f"the entry {slug!r} changed since the preview, or the text is not the "
                "previewed text; nothing was written — preview again and confirm the new digest"
            )
        content = text.encode() if current is None else _appended(current, text)
        _replace_atomically(path, content)
    return WrittenEntry(
        base=target.name,
        entry=slug,
        mode="create" if current is None else "extend",
        path=path,
        chars=len(text),
    )
