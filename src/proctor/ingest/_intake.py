"""Live intake (SPEC ING-7): events and OTLP exports from a request body, into the store.

A payload is read and validated whole first (``_intake_payload``); only then is anything
written. Each conversation it touches is merged with what is already stored
(``_intake_merge``), so events streamed in several requests extend one conversation
instead of starting new ones: a known source id is a revision in place, a ``tool_result``
for a call stored earlier completes that call, conversation fields a request does not set
keep their stored values.

An append costs what the request carries, not what the conversation holds: only the
stored items the request revises or completes, the last message (for threading), the
conversation row and its tasks are read (``Store.transcript_excerpts``), and only the
sources the request carried are prepared and written (``Store.append_conversations``),
at their places after the last stored ones. Redaction, bounding and fingerprints happen
in ``sources.prepare_bundle`` as for files; re-preparing stored text would revise it.

Requests touching the same conversation are taken one at a time (a lock per
conversation), so two appends never race for one place; requests for other
conversations go on meanwhile. All conversations of one request are written in one
short store transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC
from typing import Any

from proctor.ingest._intake_merge import merge, places_of
from proctor.ingest._intake_payload import (
    IntakeBatch,
    LateResult,
    PayloadError,
    PayloadProblem,
    parse_events,
    parse_otlp,
)
from proctor.ingest._keyed_locks import KeyedLocks
from proctor.sources import Limits, prepare_bundle
from proctor.store import (
    ExcerptRequest,
    PlacedBundle,
    Store,
    TranscriptExcerpt,
    WriteOutcome,
)
from proctor.transcript import ConversationBundle, SourceIssue, ToolCall


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


@dataclass(frozen=True, slots=True)
class _Append:
    """One conversation of a request, merged with the stored part it concerns."""

    bundle: ConversationBundle
    written_ids: set[str]
    """The sources the request carried: only these are prepared for writing."""
    stored: TranscriptExcerpt | None


class Intake:
    """Live intake into one store; appends to one conversation are taken one at a time."""

    def __init__(self, store: Store, *, limits: Limits | None = None) -> None:
        self.store = store
        self.limits = limits
        self._locks = KeyedLocks()

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
        with self._locks.holding(_touched(batch)):
            appends = self._merged(batch, origin)
            placed = [self._prepare(append, report) for append in appends]
            outcomes = self._write(placed, project)
        for outcome in outcomes:
            report.conversation_ids.append(outcome.conversation_id)
            report.conversations_created += outcome.created
            report.sources_added += outcome.added
            report.sources_revised += outcome.revised
            report.sources_unchanged += outcome.unchanged
        return report

    def _excerpts(self, wanted: Mapping[str, ExcerptRequest]) -> dict[str, TranscriptExcerpt]:
        """The stored part of each touched conversation the request needs."""
        return self.store.transcript_excerpts(wanted)

    def _write(self, placed: Sequence[PlacedBundle], project: str | None) -> list[WriteOutcome]:
        """Write the request's conversations in one transaction."""
        return self.store.append_conversations(placed, project=project)

    def _merged(self, batch: IntakeBatch, origin: str) -> list[_Append]:
        """Every touched conversation merged with its stored part; raises before any write."""
        new = {bundle.conversation.conversation_id: bundle for bundle in batch.bundles}
        late_calls: dict[str, set[str]] = {}
        for late in batch.late_results:
            late_calls.setdefault(late.conversation_id, set()).add(_late_call_id(late))
        stored = self._excerpts(
            {
                conversation_id: _excerpt_request(
                    new.get(conversation_id), late_calls.get(conversation_id, set())
                )
                for conversation_id in _touched(batch)
            }
        )
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
            merged = bundle if previous is None else merge(previous, bundle)
            result.append(_Append(merged, _source_ids(bundle), previous))
        return result

    def _prepare(self, append: _Append, report: IntakeReport) -> PlacedBundle:
        """Redact and bound the bundle; keep only the sources this request sent."""
        prepared = prepare_bundle(append.bundle, self.limits)
        sources = tuple(s for s in prepared.sources if s.source_id in append.written_ids)
        redactions = sum(s.redactions for s in sources)
        total = redactions + (0 if append.stored is None else append.stored.redactions)
        report.redactions += redactions
        report.warnings += append.bundle.issues
        return PlacedBundle(
            replace(prepared, sources=sources, redactions=total),
            places_of(append.stored, append.bundle),
        )


def _touched(batch: IntakeBatch) -> list[str]:
    """The conversations a request writes: its bundles', then those only late results name."""
    bundles = [bundle.conversation.conversation_id for bundle in batch.bundles]
    return list(dict.fromkeys([*bundles, *(r.conversation_id for r in batch.late_results)]))


def _excerpt_request(bundle: ConversationBundle | None, late_calls: set[str]) -> ExcerptRequest:
    """What of the stored conversation merging ``bundle`` (and late results) reads."""
    if bundle is None:
        return ExcerptRequest(call_ids=frozenset(late_calls))
    return ExcerptRequest(
        message_ids=frozenset(m.source_id for m in bundle.messages),
        call_ids=frozenset(c.source_id for c in bundle.tool_calls) | late_calls,
        event_ids=frozenset(e.source_id for e in bundle.task_events),
        latest_assistant=any(c.message_source_id is None for c in bundle.tool_calls),
        first_prompt=bundle.conversation.title == "",
    )


def _late_call_id(late: LateResult) -> str:
    return late.call_source_id


def _source_ids(bundle: ConversationBundle) -> set[str]:
    return {
        *(m.source_id for m in bundle.messages),
        *(c.source_id for c in bundle.tool_calls),
        *(e.source_id for e in bundle.task_events),
    }


def _answer(late: LateResult, stored: TranscriptExcerpt | None) -> ToolCall | None:
    """The stored call ``late`` answers, completed with the result; None when unknown."""
    source_id = _late_call_id(late)
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


def _empty_bundle(stored: TranscriptExcerpt, origin: str) -> ConversationBundle:
    """A bundle that changes nothing but what is added to it."""
    return ConversationBundle(conversation=stored.conversation, origin=origin)
