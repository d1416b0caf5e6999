"""Real batches for the structural layer's tests: import transcripts, load them as batches.

Transcripts are imported with Proctor's own ingest into a SQLite file under ``tmp_path``
and read back with ``store.transcript``, so the extractor sees exactly what a review
would: stored (redacted, bounded) sources with their fingerprints and times.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from proctor.graph import BatchFacts, EventFact, SourceRef
from proctor.ingest import ingest
from proctor.review._batch import BatchSource, SourceBatch
from proctor.store import Store, open_store
from proctor.transcript import (
    Conversation,
    Message,
    SourceType,
    SubagentRun,
    TaskEvent,
    ToolCall,
)

_EARLIEST = datetime.min.replace(tzinfo=UTC)

CLAUDE_MAIN = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"
"""The example Claude Code session (examples/README.md)."""
CLAUDE_AGENT = "cc:agent:62154fe7-682b-4c07-870b-f97d004574c6:a1b3ffe2395fb6b6c"
"""Its Explore sub-agent."""
CODEX = "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
"""The example Codex rollout."""


def import_into(db: Path, *paths: Path, project: str | None = None) -> Store:
    """A store at ``db`` holding the transcripts under ``paths``."""
    store = open_store(db)
    ingest(store, list(paths), project=project)
    return store


def conversation_ids(store: Store) -> list[str]:
    """Every stored conversation, sub-agents included."""
    return [
        c.conversation_id for c in store.list_conversations(include_children=True, limit=10_000)
    ]


def batch_of(
    store: Store, conversation_ids: Sequence[str], *, batch_no: int = 1, run_id: str = "run-1"
) -> SourceBatch:
    """The sources of the conversations as one batch, in time order, refs ``s1``, ``s2`` …"""
    projects = {p.name: p.project_id for p in store.projects()}
    entries: list[tuple[datetime, int, BatchSource]] = []
    conversations: dict[str, Conversation] = {}
    runs: dict[str, SubagentRun] = {}
    for conversation_id in conversation_ids:
        transcript = store.transcript(conversation_id)
        conversations[conversation_id] = transcript.summary.conversation
        project_id = projects[transcript.summary.project]
        for child in transcript.children:
            run = store.transcript(child.conversation_id).subagent_run
            if run is not None and run.parent_tool_call_id is not None:
                runs[run.parent_tool_call_id] = run
        found = [
            *(_source(store, conversation_id, project_id, message=m) for m in transcript.messages),
            *(
                _source(store, conversation_id, project_id, tool_call=c)
                for c in transcript.tool_calls
            ),
            *(
                _source(store, conversation_id, project_id, task_event=e)
                for e in transcript.task_events
            ),
        ]
        entries.extend(
            (s.occurred_at or _EARLIEST, len(entries) + i, s) for i, s in enumerate(found)
        )
    entries.sort(key=lambda entry: (entry[0], entry[1]))
    sources = tuple(
        _with_ref(source, f"s{index}") for index, (_, _, source) in enumerate(entries, start=1)
    )
    return SourceBatch(
        run_id=run_id,
        batch_no=batch_no,
        scope_key="test",
        sources=sources,
        conversations=conversations,
        projects={v: k for k, v in projects.items()},
        subagent_runs=runs,
    )


def _source(
    store: Store,
    conversation_id: str,
    project_id: str,
    *,
    message: Message | None = None,
    tool_call: ToolCall | None = None,
    task_event: TaskEvent | None = None,
) -> BatchSource:
    """One stored source at its current version (ref set once the batch is ordered)."""
    source_type: SourceType = (
        "message" if message is not None else "tool_call" if tool_call is not None else "task_event"
    )
    held = message or tool_call or task_event
    assert held is not None
    stored = store.source(source_type, held.source_id)
    return BatchSource(
        ref="",
        source_type=source_type,
        source_id=held.source_id,
        conversation_id=conversation_id,
        project_id=project_id,
        fingerprint=stored.fingerprint,
        occurred_at=stored.occurred_at,
        message=message,
        tool_call=tool_call,
        task_event=task_event,
    )


def _with_ref(source: BatchSource, ref: str) -> BatchSource:
    return replace(source, ref=ref)


def events_of(facts: BatchFacts, kind: str, source_id: str | None = None) -> list[EventFact]:
    """The events of one kind, optionally only those citing one source."""
    return [
        e
        for e in facts.events
        if e.kind == kind
        and (source_id is None or any(r.source_id == source_id for r in e.sources))
    ]


def cited_text(batch: SourceBatch, source_id: str, field: str, start: int, end: int) -> str:
    """The characters a source reference points at."""
    source = next(s for s in batch.sources if s.source_id == source_id)
    value: Any
    if field == "result_text":
        assert source.tool_call is not None
        value = source.tool_call.result_text
    elif field == "text":
        holder = source.message or source.task_event
        assert holder is not None
        value = holder.text
    else:
        assert source.tool_call is not None and field.startswith("arguments")
        value = source.tool_call.arguments
        for part in field.split(".")[1:]:
            value = value[int(part)] if isinstance(value, list) else value[part]
    assert isinstance(value, str)
    return value[start:end]


def text_of(batch: SourceBatch, ref: SourceRef) -> str:
    """The characters a ranged source reference points at."""
    assert ref.field is not None and ref.start is not None and ref.end is not None
    return cited_text(batch, ref.source_id, ref.field, ref.start, ref.end)


def every_ref(facts: BatchFacts) -> Iterable[tuple[str, SourceRef]]:
    """``(what, ref)`` for every source reference of every fact."""
    for entity in facts.entities:
        for ref in entity.sources:
            yield f"entity {entity.name}", ref
    for event in facts.events:
        for ref in event.sources:
            yield f"event {event.title}", ref
    for relation in facts.relations:
        for ref in relation.sources:
            yield f"relation {relation.reason}", ref
    for item in facts.open_items:
        for ref in item.sources:
            yield f"open item {item.title}", ref
