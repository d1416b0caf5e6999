"""Wire documents of search: ranked hits and the state of the index and its indexer."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING

from proctor.api._base_models import WireModel
from proctor.search import SearchHit

if TYPE_CHECKING:
    from proctor.search import IndexerState, IndexStatus


class IndexState(WireModel):
    """How complete the search index was: whether hits may miss something."""

    documents: int
    """Documents in the index (messages, tool calls, graph objects)."""
    embedded: int | None
    """Documents with a sentence embedding; null when search runs on full text only."""
    stale: bool
    """True when hits may be incomplete: new sources not indexed yet, or documents
    without an embedding (ranked by full text only)."""
    full_text_current: bool
    """False when messages or tool calls changed since the last full-text pass."""
    indexing: bool
    """The server's background indexer is bringing the index up to date."""
    note: str | None
    """What the hits may miss and what brings the index up to date, when they may."""

    @classmethod
    def of(cls, status: IndexStatus) -> IndexState:
        """The wire form of an index status."""
        return cls(
            documents=status.documents,
            embedded=status.embedded,
            stale=status.stale,
            full_text_current=status.full_text_current,
            indexing=status.indexing,
            note=status.note(),
        )


class IndexerProgress(WireModel):
    """What the server's background indexer has done since it started."""

    phase: str
    """``starting``, ``full_text``, ``embedding``, ``idle`` or ``stopped``."""
    passes: int
    """Full-text passes finished."""
    indexed: int
    """Documents (re)written for full text."""
    embedded: int
    """Documents embedded."""
    remaining: int | None
    """Documents still without an embedding after its last slice (null: not known yet)."""
    last_pass_at: datetime | None
    """When its last full-text pass ended."""
    error: str | None
    """Why its last pass failed, if it did."""

    @classmethod
    def of(cls, state: IndexerState) -> IndexerProgress:
        """The wire form of the indexer's state."""
        return cls(**dataclasses.asdict(state))


class SearchIndexReport(WireModel):
    """The search index and the server's background indexer."""

    index: IndexState
    """The index as it is in the database now."""
    indexer: IndexerProgress | None
    """The background indexer (null when this server runs none)."""


class SearchResponse(WireModel):
    """Hits, best first, how they were ranked, and how complete the index was."""

    query: str
    """The query as asked."""
    mode: str
    """``hybrid`` or ``full_text``."""
    note: str | None
    """Why the search ran on full text only, when it did."""
    index: IndexState
    """The index searched; ``stale`` says when the hits may be incomplete."""
    hits: list[SearchHit]
    """Ranked documents."""
