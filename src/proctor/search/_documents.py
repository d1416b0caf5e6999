"""What gets searched: one document per message, tool call or graph object.

A document has the text a hit shows (and that is embedded), a full-text ``body`` (the
text with its date written out, "8 May 2023") and, for a message, a ``context``: the turns
just before and after it in the same conversation, which full text ranks at 0.4 of the
body's weight. Questions about a conversation often name a date, or words from the turn a
reply answers; the context finds those, the lower weight keeps the turn that says it
first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

BODY_TEXT_CHARS = 20_000
"""Full text indexes at most this much of a document's own text."""
NEIGHBOUR_CHARS = 1_000
"""…and this much of each neighbouring turn."""
EMBED_CHARS = 2_000
"""The embedding sees at most this much (the model reads 256 word pieces anyway)."""
SOURCE_TYPES = ("message", "tool_call")
"""Document types built from a conversation's sources; the rest are graph objects."""
GRAPH_REFS = 5
"""Source references a graph object's document keeps (the hit names its first sources)."""


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where a hit comes from: one stored source (a message or tool call)."""

    source_type: str
    source_id: str
    conversation_id: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The reference as stored and printed."""
        return {
            "source_type": self.source_type,
            "source_id": self.source_id,
            "conversation_id": self.conversation_id,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SourceRef:
        """The reference from its stored form."""
        return cls(
            source_type=str(value["source_type"]),
            source_id=str(value["source_id"]),
            conversation_id=value.get("conversation_id"),
        )


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """A graph object (entity, event, story line, …) handed to ``index_graph_objects``.

    Messages and tool calls are indexed from the store by ``index_sources``; graph objects
    come from the review pipeline, which knows their text and the sources behind them.
    """

    doc_type: str
    """``entity``, ``event``, ``story_line``, … (``message`` and ``tool_call`` are taken)."""
    doc_id: str
    project_id: str | None
    title: str | None
    text: str
    occurred_at: datetime | None
    source_refs: tuple[SourceRef, ...] = field(default=())
    conversation_id: str | None = None
    """Set only when the object belongs to one conversation (deleted with it)."""

    @property
    def doc_key(self) -> str:
        """The document's unique key in the index."""
        return doc_key(self.doc_type, self.doc_id)


def entity_document(
    entity_id: str,
    project_id: str | None,
    kind: str,
    name: str,
    description: str,
    source_refs: Sequence[SourceRef] = (),
) -> SearchDocument:
    """An entity as it is searched: its kind, name and description."""
    return SearchDocument(
        doc_type="entity",
        doc_id=entity_id,
        project_id=project_id,
        title=name,
        text=f"{kind} {name}: {description}",
        occurred_at=None,
        source_refs=tuple(source_refs[:GRAPH_REFS]),
    )


def event_document(
    event_id: str,
    project_id: str | None,
    title: str,
    summary: str,
    occurred_at: datetime | None,
    source_refs: Sequence[SourceRef] = (),
) -> SearchDocument:
    """An event as it is searched: its title and summary, at its time."""
    return SearchDocument(
        doc_type="event",
        doc_id=event_id,
        project_id=project_id,
        title=title,
        text=summary,
        occurred_at=occurred_at,
        source_refs=tuple(source_refs[:GRAPH_REFS]),
    )


def story_line_document(
    story_line_id: str, project_id: str | None, title: str, summary: str
) -> SearchDocument:
    """A story line as it is searched: its title and summary."""
    return SearchDocument(
        doc_type="story_line",
        doc_id=story_line_id,
        project_id=project_id,
        title=title,
        text=summary,
        occurred_at=None,
    )


def doc_key(doc_type: str, doc_id: str) -> str:
    """``doc_type:doc_id``, the key a document is stored under."""
    return f"{doc_type}:{doc_id}"


def written_date(when: datetime | None) -> str:
    """A date as people write it in questions: ``8 May 2023``."""
    return "" if when is None else f"{when.day} {when:%B %Y}"


def speaker_line(speaker: str | None, text: str, limit: int) -> str:
    """``speaker: text`` (or the text alone), cut to ``limit`` characters."""
    line = f"{speaker}: {text}" if speaker else text
    return line[:limit]


def message_body(speaker: str | None, text: str, when: datetime | None) -> str:
    """The full-text body of a message: itself and its date."""
    parts = [speaker_line(speaker, text, BODY_TEXT_CHARS), written_date(when)]
    return "\n".join(part for part in parts if part)


def message_context(neighbours: Sequence[tuple[str | None, str]]) -> str:
    """The turns around a message, ranked by full text at a lower weight than the message."""
    return "\n".join(speaker_line(s, t, NEIGHBOUR_CHARS) for s, t in neighbours)


def object_body(title: str | None, text: str, when: datetime | None) -> str:
    """The full-text body of a tool call or graph object: title, text and date."""
    parts = [title or "", text[:BODY_TEXT_CHARS], written_date(when)]
    return "\n".join(part for part in parts if part)


def embedding_text(speaker_or_title: str | None, text: str) -> str:
    """What the sentence encoder reads for a document."""
    return speaker_line(speaker_or_title, text, EMBED_CHARS)


def digest(*parts: object) -> str:
    """A short stable hash of the inputs a document was built from."""
    hasher = hashlib.blake2b(digest_size=16)
    for part in parts:
        hasher.update(repr(part).encode())
        hasher.update(b"\0")
    return hasher.hexdigest()
