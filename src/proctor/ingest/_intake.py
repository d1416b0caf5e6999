"""Live intake (SPEC ING-7): events and OTLP exports from a request body, into the store.

A payload is read and validated whole first (``_intake_payload``); only then is anything
written. Each conversation it touches is merged with what is already stored, so events
streamed in several requests extend one conversation instead of starting new ones:

- messages, tool calls, task events and tasks are keyed by their source ids; a known id
  replaces the stored item in place (a revision), an unknown one is appended;
- a ``tool_result`` answering a call stored by an earlier request completes that call;
- conversation fields a request does not set keep their stored values.

Only the sources the request carried are prepared for writing; stored ones are left as
they are (re-preparing bounded text would revise it). Redaction, bounding and
fingerprints happen in ``sources.prepare_bundle`` as for files. Each conversation is
written in one store transaction; requests are taken one at a time so two appends to the
same conversation never race.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC
from typing import Any, TypeVar

from proctor.ingest._intake_payload import (
    IntakeBatch,
    LateResult,
    PayloadError,
    PayloadProblem,
    parse_events,
    parse_otlp,
)
from proctor.sources import Limits, prepare_bundle
from proctor.sources.jsonl import quote_id
from proctor.store import Store, StoredTranscript
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    PreparedBundle,
    SourceIssue,
    ToolCall,
)

_T = TypeVar("_T")


@dataclass(slots=True)
class IntakeReport:
    """What one intake request stored."""

    conversation_ids: list[str] = field(default_factory=list)
    """Every conversation the request touched, parents first."""
    conversations_created: int = 0
    sources_added: int = 0
    sources_revised: int = 0
    sources_unchanged: int = 0
    redactions: int = 0
    warnings: list[SourceIssue] = field(default_factory=list)
    spans: int = 0
    """OTLP only: spans in the export."""
    spans_dropped: int = 0
    """OTLP only: spans with no GenAI or OpenInference data; not stored."""


class Intake:
    """Live intake into one store; requests are taken one at a time."""

    def __init__(self, store: Store, *, limits: Limits | None = None) -> None:
        self.store = store
        self.limits = limits
        self._lock = threading.Lock()

    def events(
        self, data: bytes, *, project: str | None = None, origin: str = "intake"
    ) -> IntakeReport:
        """Store a Proctor JSONL payload; raises ``PayloadError`` (nothing stored) when bad."""
        return self._take(parse_events(data, origin), project, origin)

    def traces(
        self, document: Any, *, project: str | None = None, origin: str = "intake"
    ) -> IntakeReport:
        """Store a parsed OTLP/JSON export; raises ``PayloadError`` (nothing stored) when bad."""
        return self._take(parse_otlp(document, origin), project, origin)

    def _take(self, batch: IntakeBatch, project: str | None, origin: str) -> IntakeReport:
        report = IntakeReport(spans=batch.spans, spans_dropped=batch.spans_dropped)
        report.warnings += batch.warnings
        with self._lock:
            merged = self._merged(batch, origin)
            prepared = [
                self._prepare(bundle, written_ids, stored, report)
                for bundle, written_ids, stored in merged
            ]
            outcomes = self.store.write_conversations(prepared, project=project)
        for outcome in outcomes:
            report.conversation_ids.append(outcome.conversation_id)
            report.conversations_created += outcome.created
            report.sources_added += outcome.added
            report.sources_revised += outcome.revised
            report.sources_unchanged += outcome.unchanged
        return report

    def _merged(
        self, batch: IntakeBatch, origin: str
    ) -> list[tuple[ConversationBundle, set[str], StoredTranscript | None]]:
        """Every touched conversation merged with its stored self; raises before any write."""
        new = {bundle.conversation.conversation_id: bundle for bundle in batch.bundles}
        touched = list(new) + [
            r.conversation_id for r in batch.late_results if r.conversation_id not in new
        ]
        existing = self.store.existing_conversation_ids(touched)
        stored = {cid: self.store.transcript(cid) for cid in touched if cid in existing}
        problems: list[PayloadProblem] = []
        for late in batch.late_results:
            bundle = new.get(late.conversation_id)
            answered = _answer(late, stored.get(late.conversation_id))
            if answered is None:
                problems.append(_unknown_call(late))
                continue
            base = bundle or _empty_bundle(stored[late.conversation_id], origin)
            new[late.conversation_id] = replace(base, tool_calls=(*base.tool_calls, answered))
        if problems:
            raise PayloadError(origin, problems)
        result = []
        for conversation_id, bundle in new.items():
            previous = stored.get(conversation_id)
            written = _source_ids(bundle)
            result.append(
                (bundle if previous is None else merge(previous, bundle), written, previous)
            )
        return result

    def _prepare(
        self,
        bundle: ConversationBundle,
        written_ids: set[str],
        stored: StoredTranscript | None,
        report: IntakeReport,
    ) -> PreparedBundle:
        """Redact and bound the bundle; keep only the sources this request sent."""
        prepared = prepare_bundle(bundle, self.limits)
        sources = tuple(s for s in prepared.sources if s.source_id in written_ids)
        redactions = sum(s.redactions for s in sources)
        total = redactions + (0 if stored is None else stored.summary.redactions)
        report.redactions += redactions
        report.warnings += bundle.issues
        return replace(prepared, sources=sources, redactions=total)


def merge(stored: StoredTranscript, new: ConversationBundle) -> ConversationBundle:
    """``new`` appended to (or revising) the stored conversation, as one bundle."""
    messages = _merge_by(stored.messages, new.messages, lambda m: m.source_id)
    known_messages = {m.source_id for m in stored.messages}
    messages = _link_appended(messages, known_messages)
    calls = _merge_by(stored.tool_calls, new.tool_calls, lambda c: c.source_id)
    known_calls = {c.source_id for c in stored.tool_calls}
    calls = _attach_appended(calls, known_calls, messages)
    return replace(
        new,
        conversation=_merge_conversation(stored.summary.conversation, new.conversation),
        messages=messages,
        tool_calls=calls,
        tasks=_merge_by(stored.tasks, new.tasks, lambda t: t.task_id),
        task_events=_merge_by(stored.task_events, new.task_events, lambda e: e.source_id),
        subagent_run=new.subagent_run or stored.subagent_run,
    )


def _merge_by(
    old: Sequence[_T], new: Sequence[_T], key: Callable[[_T], Hashable]
) -> tuple[_T, ...]:
    """Old items in order, each replaced by a new item with its key; other new ones appended."""
    merged = {key(item): item for item in old}
    for item in new:
        merged[key(item)] = item
    return tuple(merged.values())


def _link_appended(messages: tuple[Message, ...], known: set[str]) -> tuple[Message, ...]:
    """An appended message that names no parent answers the message before it."""
    linked: list[Message] = []
    for message in messages:
        if message.source_id not in known and message.parent_source_id is None and linked:
            message = replace(message, parent_source_id=linked[-1].source_id)
        linked.append(message)
    return tuple(linked)


def _attach_appended(
    calls: tuple[ToolCall, ...], known: set[str], messages: tuple[Message, ...]
) -> tuple[ToolCall, ...]:
    """An appended call that names no message belongs to the latest assistant message."""
    latest = next((m.source_id for m in reversed(messages) if m.role == "assistant"), None)
    return tuple(
        replace(call, message_source_id=latest)
        if call.source_id not in known and call.message_source_id is None
        else call
        for call in calls
    )


def _merge_conversation(old: Conversation, new: Conversation) -> Conversation:
    """Fields the new description leaves unset keep their stored values."""
    values = {f.name: getattr(new, f.name) for f in fields(Conversation)}
    for name, value in values.items():
        if value is None:
            values[name] = getattr(old, name)
    starts = [t for t in (old.started_at, new.started_at) if t is not None]
    ends = [t for t in (old.ended_at, new.ended_at) if t is not None]
    values["started_at"] = min(starts, default=None)
    values["ended_at"] = max(ends, default=None)
    values["attributes"] = {**old.attributes, **new.attributes}
    if new.parent_conversation_id is None:
        values["kind"] = old.kind  # a request without the sub-agent line keeps the kind
    return Conversation(**values)


def _source_ids(bundle: ConversationBundle) -> set[str]:
    return {
        *(m.source_id for m in bundle.messages),
        *(c.source_id for c in bundle.tool_calls),
        *(e.source_id for e in bundle.task_events),
    }


def _answer(late: LateResult, stored: StoredTranscript | None) -> ToolCall | None:
    """The stored call ``late`` answers, completed with the result; None when unknown."""
    source_id = f"{late.conversation_id}:call:{quote_id(late.result.call_id)}"
    call = next(
        (c for c in (stored.tool_calls if stored else ()) if c.source_id == source_id), None
    )
    if call is None:
        return None
    result = late.result
    return replace(
        call,
        status=result.status,
        result_text=result.output,
        result_size=None,
        exit_code=result.exit_code,
        completed_at=None if result.completed_at is None else result.completed_at.astimezone(UTC),
        attributes={**call.attributes, **(result.attributes or {})},
    )


def _unknown_call(late: LateResult) -> PayloadProblem:
    return PayloadProblem(
        f'tool_result for call "{late.result.call_id}": conversation '
        f'"{late.result.conversation_id}" has no tool_call with this call_id, in this request '
        "or stored; send the tool_call line first",
        late.line,
    )


def _empty_bundle(stored: StoredTranscript, origin: str) -> ConversationBundle:
    """A bundle that changes nothing but what is added to it."""
    return ConversationBundle(conversation=stored.summary.conversation, origin=origin)
