"""The one review pipeline (REV-1): freeze → manifest → batches → merge → publish.

Manual, scheduled and heartbeat reviews all enter through :func:`start_review`; they
differ only in ``trigger`` and in what happens when the one execution slot is taken
(REV-6): a manual start fails at once with BUSY, a scheduled one waits.

Each batch is read once: the structural extractor always runs (REV-13), the semantic
layer only when a model connection is configured, with the structural facts as
context. A batch's facts are saved with the batch, so pause, resume and a restart after
a crash never redo finished work; saving checks in the same transaction that the run is
still running, so output that arrives after a pause or cancel is dropped (REV-5).
Checkpoints move only inside the publish transaction (REV-7).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from proctor._util.collector import collector_paused
from proctor.errors import BusyError, ModelError, NotFoundError, ProctorError, ReviewStateError
from proctor.store import RESUMABLE, ReviewRunRecord, ReviewScope, RunStatus, Trigger

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from proctor.graph import BatchFacts, ResultDraft
    from proctor.review._batch import SourceBatch
    from proctor.store import Store  # the protocols of every repository: types only
    from proctor.transcript import Conversation

# The extractors, the assembler, the search index, the batch's and the facts' types are
# imported in the functions that read a batch or publish: a run that finds nothing new
# never loads them.

DEFAULT_BATCH_SIZE = 150
"""At most this many sources per batch (one leaf call each)."""

DEFAULT_BATCH_CHARS = 60_000
"""…and about this many characters of their own text: a batch closes at whichever limit
comes first. Agent sessions with large tool outputs fill by characters (about 30
messages and their tool calls), chat-like transcripts by count; either way a call covers
well over 25 messages' worth and its fixed prompt cost stays small beside the text."""

SLOT_POLL_SECONDS = 1.0

Progress = Callable[[ReviewRunRecord], None]


class SemanticLayer(Protocol):
    """What the pipeline needs from the semantic layer (see ``review._semantic_step``)."""

    @property
    def model_label(self) -> str:
        """``connection/model``, recorded on the run."""
        ...

    def leaf(
        self, batch: SourceBatch, structural: BatchFacts, store: Store
    ) -> tuple[BatchFacts, int, int, int]:
        """The batch's semantic facts and (calls, input tokens, output tokens)."""
        ...

    def merge(
        self, draft: ResultDraft, batches: Sequence[BatchFacts], store: Store
    ) -> tuple[ResultDraft, int, int, int]:
        """Summaries, story lines and experiences for the draft; usage as for ``leaf``."""
        ...


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """What to review."""

    project: str | None = None
    """A project name; None: every project."""
    since: datetime | None = None
    until: datetime | None = None
    trigger: Trigger = "manual"
    reanalyze: bool = False
    batch_size: int = DEFAULT_BATCH_SIZE
    batch_chars: int = DEFAULT_BATCH_CHARS


def resolve_scope(store: Store, request: ReviewRequest) -> ReviewScope:
    """Freeze the request's scope: the project's id, the time range."""
    project_id = None
    if request.project is not None:
        for project in store.projects():
            if project.name == request.project:
                project_id = project.project_id
                break
        else:
            raise NotFoundError(
                f"no project {request.project!r}; see `proctor conversations list` for projects"
            )
    return ReviewScope(project_id, request.project, request.since, request.until)


def start_review(
    store: Store,
    request: ReviewRequest,
    *,
    semantic: SemanticLayer | None,
    semantic_note: str | None = None,
    progress: Progress | None = None,
    slot_wait_seconds: float = 3600.0,
) -> ReviewRunRecord:
    """Run one review to its end (or to a pause or cancel) and return the run.

    ``semantic`` is None when no model connection is configured: the run then reads
    and checkpoints the structural stage only and its coverage says why the semantic
    layer was skipped (``semantic_note``).
    """
    run = begin_review(
        store,
        request,
        semantic=semantic,
        semantic_note=semantic_note,
        slot_wait_seconds=slot_wait_seconds,
    )
    return execute_review(store, run, semantic, progress)


def begin_review(
    store: Store,
    request: ReviewRequest,
    *,
    semantic: SemanticLayer | None,
    semantic_note: str | None = None,
    slot_wait_seconds: float = 3600.0,
) -> ReviewRunRecord:
    """Create a run and claim the execution slot for it, reading nothing yet.

    The first half of :func:`start_review`: the caller then hands the run to
    :func:`execute_review` (at once, or on a background thread of the same process, which
    holds the slot). A manual start raises ``BusyError`` when the slot is taken.
    """
    store.fail_interrupted_reviews()
    scope = resolve_scope(store, request)
    _wait_or_refuse(
        store, scope.key, scheduled=request.trigger != "manual", limit=slot_wait_seconds
    )
    stages = ["structural"] if semantic is None else ["structural", "semantic"]
    run = store.create_review_run(
        scope,
        trigger=request.trigger,
        reanalyze=request.reanalyze,
        stages=stages,
        batch_size=request.batch_size,
        batch_chars=request.batch_chars,
        connection=None if semantic is None else semantic.model_label,
        model=None if semantic is None else semantic.model_label,
        options={"semantic_note": semantic_note},
    )
    try:
        return store.claim_review_slot(run.run_id)
    except BusyError:
        store.set_review_status(
            run.run_id, "failed", error="BUSY: another review took the slot", finished=True
        )
        raise


def resume_review(
    store: Store,
    run_id: str,
    *,
    semantic: SemanticLayer | None,
    progress: Progress | None = None,
) -> ReviewRunRecord:
    """Continue a paused or failed run from its saved batches (REV-5)."""
    run, layer = begin_resume(store, run_id, semantic=semantic)
    return execute_review(store, run, layer, progress)


def begin_resume(
    store: Store, run_id: str, *, semantic: SemanticLayer | None
) -> tuple[ReviewRunRecord, SemanticLayer | None]:
    """Claim the slot for a paused or failed run: the first half of :func:`resume_review`.

    Returns the run (now running) and the semantic layer it continues with (None when
    the run was started without one).
    """
    store.fail_interrupted_reviews()
    run = store.review_run(run_id)
    if run.result_id is not None:
        raise ReviewStateError(
            f"review run {run.run_id[:8]} already published its result; start a new review "
            "to read what it missed"
        )
    stages = run.options.get("stages", ["structural"])
    if "semantic" in stages and semantic is None:
        raise ReviewStateError(
            f"review run {run.run_id[:8]} was started with a model connection and none is "
            "configured now; configure one (`proctor models`) or start a new review"
        )
    run = store.claim_review_slot(run.run_id, resumable_from=RESUMABLE)
    return run, semantic if "semantic" in stages else None


def pause_review(store: Store, run_id: str) -> ReviewRunRecord:
    """Ask a running review to pause: persisted now; the worker stops after its batch."""
    run = store.set_review_status(run_id, "paused", allowed_from=("running",))
    return _settle(store, run)


def cancel_review(store: Store, run_id: str) -> ReviewRunRecord:
    """Cancel a review: persisted at once; shows "cancelling" until the worker stopped."""
    run = store.set_review_status(
        run_id, "cancelled", allowed_from=("running", "paused", "failed"), finished=True
    )
    return _settle(store, run)


def _settle(store: Store, run: ReviewRunRecord) -> ReviewRunRecord:
    """A run nobody executes any more is not "stopping": clear its active flag."""
    if run.active and not store.review_slot_held(run.run_id):
        return store.release_review_slot(run.run_id)
    return run


def _wait_or_refuse(store: Store, scope_key: str, *, scheduled: bool, limit: float) -> None:
    holder = store.review_slot_holder(scope_key)
    if holder is None:
        return
    if not scheduled:
        try:
            scope = store.review_run(holder).scope_key
        except NotFoundError:
            scope = "unknown scope"
        raise BusyError(
            f"BUSY: review run {holder[:8]} ({scope}) is executing; wait for it, or "
            f"`proctor review pause {holder[:8]}` / `proctor review cancel {holder[:8]}`"
        )
    deadline = time.monotonic() + limit
    while store.review_slot_holder(scope_key) is not None:
        if time.monotonic() > deadline:
            raise BusyError("BUSY: the review slot stayed taken; the scheduled review gave up")
        time.sleep(SLOT_POLL_SECONDS)


def execute_review(
    store: Store,
    run: ReviewRunRecord,
    semantic: SemanticLayer | None,
    progress: Progress | None = None,
) -> ReviewRunRecord:
    """Work through a claimed run's batches, then merge and publish; always free the slot.

    ``run`` comes from :func:`begin_review` or :func:`begin_resume`.
    """
    try:
        _work(store, run, semantic, progress)
    except KeyboardInterrupt:
        _leave_running(store, run.run_id, "paused", None)
        raise
    except ProctorError as exc:
        _leave_running(store, run.run_id, "failed", str(exc))
        raise
    except Exception as exc:  # a bug: the run still fails with what went wrong
        _leave_running(store, run.run_id, "failed", f"{type(exc).__name__}: {exc}")
        raise
    finally:
        final = store.release_review_slot(run.run_id)
    return final


def _leave_running(store: Store, run_id: str, status: RunStatus, error: str | None) -> None:
    """Move a run that stopped on an error out of ``running``.

    A run that already left it (published, paused or cancelled meanwhile) stays as it is:
    the error that stopped the work is the one raised, never this state change's.
    """
    with contextlib.suppress(ReviewStateError):
        store.set_review_status(
            run_id, status, allowed_from=("running",), error=error, finished=status == "failed"
        )


def _work(
    store: Store, run: ReviewRunRecord, semantic: SemanticLayer | None, progress: Progress | None
) -> None:
    if run.sources_total == 0:
        store.set_review_status(run.run_id, "no_change", finished=True)
        return
    for saved in store.review_batches(run.run_id):
        if saved.state == "done":
            continue
        kept = _read_batch(store, run, saved.batch_no, semantic)  # saving beats the slot
        if kept is None:
            return
        if progress is not None:
            progress(store.review_run(run.run_id))
        if not kept:
            return
    run = store.review_run(run.run_id)
    if run.status == "running":
        _publish(store, run, semantic)


def _read_batch(
    store: Store, run: ReviewRunRecord, batch_no: int, semantic: SemanticLayer | None
) -> bool | None:
    """Read one batch and save what it yielded; False when the run stopped meanwhile,
    None when it had stopped before (nothing read)."""
    with collector_paused():
        read = _structural_read(store, run, batch_no)
    if read is None:
        return None
    batch, facts, omitted = read
    sources = batch.sources
    calls = input_tokens = output_tokens = 0
    semantic_error: str | None = None
    if semantic is not None and sources:
        try:
            extra, calls, input_tokens, output_tokens = semantic.leaf(batch, facts, store)
            facts = _combine(facts, extra)
        except ModelError as exc:
            if exc.kind == "config":
                raise
            semantic_error = str(exc)
        except ProctorError as exc:
            # A batch the model could not answer validly: recorded as a gap, with its cost.
            semantic_error = str(exc)
            calls = getattr(exc, "calls", 0)
            input_tokens = getattr(exc, "input_tokens", 0)
            output_tokens = getattr(exc, "output_tokens", 0)
    with collector_paused():
        output = {
            "facts": facts.to_json(),
            "semantic": None if semantic is None else ("failed" if semantic_error else "done"),
            "semantic_error": semantic_error,
        }
        return store.save_review_batch(
            run.run_id,
            batch_no,
            state="done",
            output=output,
            error=semantic_error,
            read={(s.source_type, s.source_id): s.fingerprint for s in sources},
            omitted=omitted,
            model_calls=calls,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )


def _structural_read(
    store: Store, run: ReviewRunRecord, batch_no: int
) -> tuple[SourceBatch, BatchFacts, list[tuple[str, str]]] | None:
    """One batch's sources, their structural facts and the sources that vanished; None
    when the run is no longer running (nothing read)."""
    from proctor.review._batch import BatchSource, SourceBatch
    from proctor.review.structural import extract_structural

    given = store.review_batch_input(run.run_id, batch_no)
    if given.status != "running":
        return None
    entries, contents = given.entries, given.contents
    sources: list[BatchSource] = []
    omitted: list[tuple[str, str]] = []
    for entry in entries:
        key = (entry.source_type, entry.source_id)
        fingerprint = contents.fingerprints.get(key)
        conversation_id = entry.conversation_id
        if fingerprint is None or conversation_id not in contents.project_of:
            omitted.append(key)
            continue
        sources.append(
            BatchSource(
                ref=f"s{len(sources) + 1}",
                source_type=entry.source_type,  # type: ignore[arg-type]
                source_id=entry.source_id,
                conversation_id=conversation_id,
                project_id=contents.project_of[conversation_id],
                fingerprint=fingerprint,
                occurred_at=entry.occurred_at,
                message=contents.messages.get(entry.source_id),
                tool_call=contents.tool_calls.get(entry.source_id),
                task_event=contents.task_events.get(entry.source_id),
            )
        )
    batch = SourceBatch(
        run_id=run.run_id,
        batch_no=batch_no,
        scope_key=run.scope_key,
        sources=tuple(sources),
        conversations=contents.conversations,
        projects=contents.project_names,
        subagent_runs=contents.subagent_runs,
    )
    return batch, extract_structural(batch), omitted


def _combine(structural: BatchFacts, semantic: BatchFacts) -> BatchFacts:
    from proctor.graph import BatchFacts

    return BatchFacts(
        entities=structural.entities + semantic.entities,
        events=structural.events + semantic.events,
        changes=structural.changes + semantic.changes,
        relations=structural.relations + semantic.relations,
        open_items=structural.open_items + semantic.open_items,
        summary=semantic.summary or structural.summary,
        change_digest=semantic.change_digest or structural.change_digest,
    )


def _publish(store: Store, run: ReviewRunRecord, semantic: SemanticLayer | None) -> None:
    """Merge the saved batches into one result and publish it with the checkpoints."""
    with collector_paused():
        draft, batches = _draft(store, run, semantic)
    merge_ok = True
    merge_error: ProctorError | None = None
    if semantic is not None:
        try:
            draft, calls, input_tokens, output_tokens = semantic.merge(draft, batches, store)
            store.add_review_usage(
                run.run_id, calls=calls, input_tokens=input_tokens, output_tokens=output_tokens
            )
        except ModelError as exc:
            if exc.kind == "config":
                raise
            merge_ok, merge_error = False, exc
        except ProctorError as exc:
            store.add_review_usage(
                run.run_id,
                calls=getattr(exc, "calls", 0),
                input_tokens=getattr(exc, "input_tokens", 0),
                output_tokens=getattr(exc, "output_tokens", 0),
            )
            merge_ok, merge_error = False, exc
        if not merge_ok:
            draft = replace(
                draft,
                coverage=replace(
                    draft.coverage,
                    gaps=(*draft.coverage.gaps, f"merge failed ({merge_error})"),
                    semantic="partial",
                ),
            )
    if store.review_run(run.run_id).status != "running":
        return
    status = "completed" if draft.coverage.complete and merge_ok else "failed"
    # The graph's search documents are written in the publish transaction: a result is
    # searchable as soon as it is published, or not published at all.
    with collector_paused():
        store.publish_result(draft, status, also=_index_graph(draft))


def _draft(
    store: Store, run: ReviewRunRecord, semantic: SemanticLayer | None
) -> tuple[ResultDraft, list[BatchFacts]]:
    """The saved batches assembled into a draft (before a semantic merge) and the
    batches' facts."""
    from proctor.graph import BatchFacts, Checkpoint, Coverage
    from proctor.review._assemble import assemble_draft

    saved = store.review_batches(run.run_id)
    batches: list[BatchFacts] = []
    semantic_failed: set[int] = set()
    gaps: list[str] = []
    for batch in saved:
        if batch.output is None:
            gaps.append(f"batch {batch.batch_no + 1} was never read")
            continue
        batches.append(BatchFacts.from_json(batch.output["facts"]))
        if batch.output.get("semantic") == "failed":
            semantic_failed.add(batch.batch_no)
            gaps.append(
                f"batch {batch.batch_no + 1}: semantic layer failed "
                f"({batch.output.get('semantic_error')})"
            )
    counts = store.manifest_counts(run.run_id)
    done = store.done_sources(run.run_id)
    semantic_state = "skipped" if semantic is None else ("partial" if semantic_failed else "done")
    coverage = Coverage(
        sources_total=run.sources_total,
        sources_read=counts.get("done", 0),
        sources_omitted=counts.get("omitted", 0),
        gaps=tuple(gaps),
        semantic=semantic_state,  # type: ignore[arg-type]
        semantic_note=run.options.get("semantic_note") if semantic is None else None,
    )
    checkpoints: list[Checkpoint] = []
    if not run.reanalyze:
        for source_type, source_id, fingerprint, batch_no in done:
            checkpoints.append(
                Checkpoint("structural", run.scope_key, source_type, source_id, fingerprint)
            )
            if semantic is not None and batch_no not in semantic_failed:
                checkpoints.append(
                    Checkpoint("semantic", run.scope_key, source_type, source_id, fingerprint)
                )
    conversation_ids = sorted({e.conversation_id for b in batches for e in b.events})
    draft = assemble_draft(
        result_id=str(uuid.uuid4()),
        run=run,
        batches=batches,
        conversations=_conversations(store, conversation_ids),
        coverage=coverage,
        checkpoints=tuple(checkpoints),
    )
    return draft, batches


def _index_graph(draft: ResultDraft) -> Callable[[Connection], object]:
    from proctor.review._search_docs import graph_documents
    from proctor.search import index_graph_objects

    def index(connection: Connection) -> int:
        return index_graph_objects(connection, graph_documents(draft), encoder=None)

    return index


def _conversations(store: Store, ids: Sequence[str]) -> dict[str, Conversation]:
    """The conversations still stored (one may have been deleted during the run), with
    the parents of sub-agent conversations so their story lines hang under the parent's.

    Read in bulk, then walked in the same order as one by one, so the draft is the same.
    """
    stored = store.review_conversations(ids)
    found: dict[str, Conversation] = {}
    pending = list(ids)
    while pending:
        conversation_id = pending.pop()
        if conversation_id in found:
            continue
        if conversation_id not in stored:
            stored.update(store.review_conversations([conversation_id]))
        conversation = stored.get(conversation_id)
        if conversation is None:
            continue
        found[conversation_id] = conversation
        if conversation.parent_conversation_id is not None:
            pending.append(conversation.parent_conversation_id)
    return found
