"""The local knowledge base (UI-5): list, read, preview and confirm writes.

Reading works on every configured base; writing only on the local one, and only as
preview → confirm: the preview returns the exact text and a digest, the confirm sends
both back and is refused with 409 when the entry changed in between.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.knowledge import (
    LOCAL_BASE,
    StaleEntryError,
    confirm_write,
    find_base,
    knowledge_bases,
    list_entries,
    preview_entity_note,
    read_entry,
)

router = APIRouter(prefix="/knowledge", tags=["knowledge"])

BaseName = Annotated[
    str, Query(min_length=1, max_length=40, description="A knowledge base (default: local).")
]
_ENTRY = Field(min_length=1, max_length=200)


class KnowledgeBaseInfo(WireModel):
    """A configured knowledge base."""

    name: str
    """``local`` or an external base's name."""
    root: str
    """Its folder."""
    writable: bool
    """Only the local base is."""
    exists: bool
    """Whether the folder exists yet (the local one is made on the first write)."""


class EntryInfo(WireModel):
    """One note in a listing."""

    base: str
    """The base it is in."""
    name: str
    """Relative to the base's folder, without ``.md``."""
    size: int
    """Bytes."""
    modified_at: datetime
    """Last change."""


class EntryList(WireModel):
    """The configured bases and a page of one base's entries."""

    bases: list[KnowledgeBaseInfo]
    """Every configured base, the local one first."""
    base: str
    """The base listed."""
    total: int
    """How many entries that base holds."""
    limit: int
    """The page size asked for."""
    offset: int
    """How many entries were skipped."""
    entries: list[EntryInfo]
    """The page, by name."""


class EntryText(WireModel):
    """One note with its text."""

    base: str
    """The base it is in."""
    name: str
    """Its name."""
    text: str
    """The note's Markdown."""
    digest: str
    """SHA-256 of its bytes."""
    writable: bool
    """Whether Proctor may append to it (local base only)."""
    modified_at: datetime
    """Last change."""


class PreviewRequest(BaseModel):
    """Build the note for an entity of a result."""

    model_config = ConfigDict(extra="forbid")

    result: str = Field(min_length=1, max_length=200)
    """The result (id or unique prefix)."""
    entity: str = Field(min_length=1, max_length=200)
    """An entity of that result (id or unique prefix)."""
    entry: str | None = Field(default=None, min_length=1, max_length=200)
    """The entry to create or extend (default: a slug of the entity's name)."""
    base: str = Field(default=LOCAL_BASE, min_length=1, max_length=40)
    """The base to write to; only ``local`` is writable."""


class PreviewResponse(WireModel):
    """The exact text a confirm writes, and the digest that allows it."""

    base: str
    """The base."""
    entry: str
    """The slugged entry name."""
    mode: Literal["create", "extend"]
    """``create`` a new entry, or ``extend`` the existing one by appending ``text``."""
    text: str
    """The exact text to write."""
    digest: str
    """Send it to confirm."""
    entity_id: str
    """The entity the note is about."""
    result_id: str
    """The result it was built from."""
    existing_chars: int
    """How long the entry is now (0: it does not exist)."""


class ConfirmRequest(BaseModel):
    """Write what a preview showed."""

    model_config = ConfigDict(extra="forbid")

    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The preview's digest."""
    entry: str = _ENTRY
    """The preview's entry."""
    text: str = Field(min_length=1, max_length=200_000)
    """The preview's text, unchanged."""
    base: str = Field(default=LOCAL_BASE, min_length=1, max_length=40)
    """The preview's base."""


class ConfirmResponse(WireModel):
    """What the confirmed write did."""

    base: str
    """The base written to."""
    entry: str
    """The entry written."""
    mode: Literal["create", "extend"]
    """Created, or extended by appending."""
    chars: int
    """Characters written."""
    path: str
    """The entry's file."""


@router.get("")
def list_knowledge(
    store: ReaderDep, base: BaseName = LOCAL_BASE, limit: Limit = 50, offset: Offset = 0
) -> EntryList:
    """The configured knowledge bases and a page of one base's entries."""
    bases = knowledge_bases(store)
    entries = list_entries(find_base(bases, base))
    return EntryList(
        bases=[
            KnowledgeBaseInfo(
                name=b.name, root=str(b.root), writable=b.writable, exists=b.root.is_dir()
            )
            for b in bases
        ],
        base=base,
        total=len(entries),
        limit=limit,
        offset=offset,
        entries=[
            EntryInfo(base=e.base, name=e.name, size=e.size, modified_at=e.modified_at)
            for e in entries[offset : offset + limit]
        ],
    )


@router.get("/{name:path}")
def show_entry(
    store: ReaderDep,
    name: Annotated[str, Path(min_length=1, max_length=400)],
    base: BaseName = LOCAL_BASE,
) -> EntryText:
    """One entry of a knowledge base by name (``ledger-export``, ``team/ledger``)."""
    entry = read_entry(find_base(knowledge_bases(store), base), name)
    return EntryText(
        base=entry.base,
        name=entry.name,
        text=entry.text,
        digest=entry.digest,
        writable=entry.writable,
        modified_at=entry.modified_at,
    )


@router.post("/preview")
def preview(store: StoreDep, request: PreviewRequest) -> PreviewResponse:
    """The note for an entity of a result, to create or extend an entry; nothing is written."""
    built = preview_entity_note(
        store,
        knowledge_bases(store),
        request.result,
        request.entity,
        entry=request.entry,
        base=request.base,
    )
    return PreviewResponse(
        base=built.base,
        entry=built.entry,
        mode=built.mode,
        text=built.text,
        digest=built.digest,
        entity_id=built.entity_id,
        result_id=built.result_id,
        existing_chars=built.existing_chars,
    )


@router.post("/confirm")
def confirm(store: StoreDep, request: ConfirmRequest) -> ConfirmResponse:
    """Write a previewed note; 409 when the entry changed since the preview."""
    try:
        written = confirm_write(
            knowledge_bases(store), request.entry, request.text, request.digest, base=request.base
        )
    except StaleEntryError as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from exc
    return ConfirmResponse(
        base=written.base,
        entry=written.entry,
        mode=written.mode,
        chars=written.chars,
        path=str(written.path),
    )
