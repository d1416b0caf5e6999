"""How complete the index is: documents, how many are embedded, whether full text is behind.

Every search answer carries one (``SearchResult.index``), so a caller can tell when hits
may be missing something: messages stored since the last full-text pass are not
searchable yet, and documents without a vector are ranked by full text alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from proctor.search._embed import count_embedded
from proctor.search._index import freshness
from proctor.search._write import Encoder, resolve_encoder
from proctor.store import ReadStore


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """The state of a store's search index when a search ran (or was asked about)."""

    documents: int
    """Documents in the index (messages, tool calls, graph objects)."""
    embedded: int | None
    """Documents with a sentence embedding; None when search runs on full text only."""
    full_text_current: bool
    """False when messages or tool calls changed since the last full-text pass."""
    indexing: bool = False
    """A background indexer of this process is bringing the index up to date."""
    error: str | None = None
    """Why the background indexer's last pass failed, if it did."""

    @property
    def stale(self) -> bool:
        """Hits may be incomplete: new sources not indexed, or documents not embedded."""
        return not self.full_text_current or (
            self.embedded is not None and self.embedded < self.documents
        )

    def note(self) -> str | None:
        """A sentence saying what the hits may miss and what brings the index up to date."""
        parts: list[str] = []
        if not self.full_text_current:
            parts.append(
                "messages or tool calls stored since the index was last updated are not "
                "searchable yet"
            )
        if self.embedded is not None and self.embedded < self.documents:
            parts.append(
                f"{self.embedded:,} of {self.documents:,} documents have embeddings; the "
                "others are ranked by full text only"
            )
        if self.error is not None:
            parts.append(f"the background indexer failed: {self.error}")
        if not parts:
            return None
        how = (
            "the background indexer is adding them"
            if self.indexing
            else "`proctor search --index-only` brings the index up to date"
        )
        sentence = "; ".join(parts)
        return f"{sentence[0].upper()}{sentence[1:]} ({how})."

    def as_json(self) -> dict[str, Any]:
        """The status as search answers carry it."""
        return {
            "documents": self.documents,
            "embedded": self.embedded,
            "stale": self.stale,
            "full_text_current": self.full_text_current,
            "indexing": self.indexing,
            "note": self.note(),
        }

    def with_indexer(self, *, indexing: bool, error: str | None) -> IndexStatus:
        """This status as a process with a background indexer reports it."""
        return dataclasses.replace(self, indexing=indexing, error=error)


def index_status(store: ReadStore, *, encoder: Encoder = "auto") -> IndexStatus:
    """The index's state, read from the database (counting vectors reads them all: a
    tenth of a second per 100,000 documents; searches take the counts from the catalog)."""
    chosen = resolve_encoder(encoder)
    with store.repos.search.read() as connection:
        # One statement for both, counted again only when the database changed (a server
        # is asked every few seconds while its indexer works: 15 ms a time on 300,000).
        fresh = freshness(connection, count_documents=True)
        embedded = None if chosen is None else count_embedded(connection, chosen.name)
    assert fresh.documents is not None  # counted when asked
    return IndexStatus(
        documents=fresh.documents, embedded=embedded, full_text_current=not fresh.behind
    )
