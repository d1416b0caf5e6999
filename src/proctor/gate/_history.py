"""What happened before the proposed call: the stored conversation plus the agent's own log.

The store holds what was imported (``proctor ingest`` / ``proctor watch``); the agent's
transcript file is fresher and may hold events the store has not seen yet. The history is
the stored events followed by every transcript event the store lacks, matched by stable
source id, so the same message or call is never fed twice. Both are read only: the gate
never writes the store.

The proposed call itself is left out: Claude Code writes the assistant message carrying
the ``tool_use`` before it runs the hook, and a rule must not count the call it is being
asked about as one that already happened.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.errors import NotFoundError, ProctorError
from proctor.gate._request import GateRequest
from proctor.rules import Event, Trace, TraceContext
from proctor.transcript import ConversationBundle, SourceIssue

if TYPE_CHECKING:  # the store (SQLAlchemy) is imported only when a database exists
    from proctor.sources import ReadUnit, SourceAdapter
    from proctor.store import StoredTranscript, StoreReader


@dataclass(frozen=True, slots=True)
class History:
    """The events of one conversation up to (not including) the proposed call."""

    context: TraceContext
    events: tuple[Event, ...]
    stored: int = 0
    """Events that came from the store."""
    from_transcript: int = 0
    """Events only the transcript file had."""
    notes: tuple[str, ...] = ()
    """What could not be read, in words (the decision is still made without it)."""


def stored_trace(transcript: StoredTranscript) -> Trace:
    """The rule trace of a stored conversation."""
    conversation = transcript.summary.conversation
    context = TraceContext(
        conversation_id=conversation.conversation_id,
        project=transcript.summary.project,
        cwd=conversation.cwd,
        format=conversation.format,
        started_at=conversation.started_at,
        kind=conversation.kind,
    )
    return Trace.from_parts(context, transcript.messages, transcript.tool_calls)


def merge_events(
    first: Iterable[Event], then: Iterable[Event], *, leave_out: str | None = None
) -> tuple[list[Event], int]:
    """``first``, then the events of ``then`` it lacks, renumbered from 0.

    Returns the events and how many came from ``then``. Events of the source
    ``leave_out`` (the proposed call) are dropped from both.
    """
    merged: list[Event] = []
    seen: set[tuple[str, str]] = set()
    added = 0
    for is_first, events in ((True, first), (False, then)):
        for event in events:
            key = (event.kind, event.source_id)
            if key in seen or event.source_id == leave_out:
                continue
            seen.add(key)
            merged.append(dataclasses.replace(event, index=len(merged)))
            added += 0 if is_first else 1
    return merged, added


StoredReader = Callable[[str], "Trace | None"]
"""The stored trace of a conversation id (None: not stored); raises what it cannot read."""


def load_history(
    request: GateRequest, store: StoreReader | None, *, stored_reader: StoredReader | None = None
) -> History:
    """The history of the request's conversation from the store and its transcript file.

    ``stored_reader`` reads the stored conversation instead of ``store`` (the hook's
    ``sqlite3`` reader); a failure of either is a note, and the transcript is still read.
    """
    notes: list[str] = []
    stored: Trace | None = None
    if stored_reader is not None:
        try:
            stored = stored_reader(request.conversation_id)
        except Exception as exc:  # sqlite3.Error and friends: decide from the rest
            notes.append(f"the stored history could not be read: {exc}")
    elif store is not None:
        try:
            stored = stored_trace(store.transcript(request.conversation_id))
        except NotFoundError:
            stored = None
        except ProctorError as exc:
            notes.append(f"the stored history could not be read: {exc}")
    read = _read_transcript(request, notes)
    context = _context(request, stored, read)
    events, added = merge_events(
        stored.events if stored is not None else (),
        read.events if read is not None else (),
        leave_out=request.source_id,
    )
    return History(
        context=context,
        events=tuple(events),
        stored=len(events) - added,
        from_transcript=added,
        notes=tuple(notes),
    )


def _context(request: GateRequest, stored: Trace | None, read: Trace | None) -> TraceContext:
    known = stored.context if stored is not None else read.context if read is not None else None
    project = request.project or (stored.context.project if stored is not None else None)
    if known is None:
        return TraceContext(
            conversation_id=request.conversation_id,
            project=project,
            cwd=request.cwd,
            format=request.transcript_format,
        )
    return dataclasses.replace(
        known,
        conversation_id=request.conversation_id,
        project=project or known.project,
        cwd=known.cwd or request.cwd,
    )


def _adapter(format_name: str | None) -> SourceAdapter:
    if format_name in (None, "claude_code"):
        from proctor.sources.claude_code import ClaudeCodeAdapter

        return ClaudeCodeAdapter()
    from proctor.sources import adapter_named

    return adapter_named(format_name)


def _read_transcript(request: GateRequest, notes: list[str]) -> Trace | None:
    if not request.transcript_path:
        return None
    path = Path(request.transcript_path)
    if not path.is_file() or path.stat().st_size == 0:
        return None  # a session that has not written its log yet
    return read_transcript_file(path, request.transcript_format, request.project, notes)


def read_transcript_file(
    path: Path, format_name: str | None, project: str | None, notes: list[str]
) -> Trace | None:
    """The trace of the main conversation in one transcript file; problems go to ``notes``."""
    from proctor.sources import plan_import

    # Only the one adapter: importing every format would slow the hook down on every call.
    adapter = _adapter(format_name)
    plan = plan_import([path], [adapter], format_name=adapter.name)
    return _main_trace(plan.units, list(plan.issues), project, notes)


def read_fragment(path: Path, format_name: str | None, project: str | None) -> Trace | None:
    """``read_transcript_file`` of a file the live gate wrote itself: a log's new lines,
    never empty, alone in a folder of its own; what cannot be read is left out unsaid.

    Planned as ``plan_import`` plans one explicit file of a given format (a binary file is
    no unit; the adapter's own plan, else one unit per file), less what a walk over many
    files needs: resolving and checking the path, and dropping the sample's parse of the
    first lines between planning and reading (a fragment lies within the sample, so the
    read parsed every line of it once more).
    """
    from proctor.sources import Sample, SourceAdapter

    adapter = _adapter(format_name)
    sample = Sample(path)
    try:
        if sample.is_binary:
            return None
    except (ProctorError, OSError):
        return None
    files = [(path, sample)]
    try:
        units = adapter.plan(files)
    except Exception:  # as plan_import: each file read on its own
        units = SourceAdapter.plan(adapter, files)
    return _main_trace([(adapter, unit) for unit in units], [], project, [])


def _main_trace(
    units: Sequence[tuple[SourceAdapter, ReadUnit]],
    problems: list[SourceIssue],
    project: str | None,
    notes: list[str],
) -> Trace | None:
    from proctor.sources import prepare_bundle, read_unit

    bundles: list[ConversationBundle] = []
    try:
        for item in (i for a, unit in units for i in read_unit(a, unit)):
            if isinstance(item, ConversationBundle):
                bundles.append(item)
            elif item.severity == "error":
                problems.append(item)
    except ProctorError as exc:
        notes.append(f"the transcript could not be read: {exc}")
        return None
    if problems:
        notes.append(_describe(problems))
    main = _main_bundle(bundles)
    if main is None:
        return None
    return Trace.from_bundle(prepare_bundle(main).bundle, project=project)


def _main_bundle(bundles: Sequence[ConversationBundle]) -> ConversationBundle | None:
    # A session file yields the session first, then any inline sidechains.
    for bundle in bundles:
        if bundle.conversation.parent_conversation_id is None:
            return bundle
    return bundles[0] if bundles else None


def _describe(problems: Sequence[SourceIssue]) -> str:
    first = problems[0]
    more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
    return f"the transcript has unreadable records ({first}{more}); the rest was used"
