"""Making suggestions from a published result, retrying them, and deciding them (HB-4…HB-6).

``make_suggestions`` reads the result's changes, builds at most 20 candidates, phrases
them in one call (none without candidates or without a model) and saves them in one
transaction. It never writes to the result, the graph or the checkpoints: a failure
raises ``SuggestionError`` and leaves the published result as it was, and
``retry_suggestions`` makes the suggestions again from the same result alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

import anyio

from proctor.errors import StoreError, SuggestionError
from proctor.heartbeat.suggestions._candidates import MIN_SOURCES, Candidate, candidates
from proctor.heartbeat.suggestions._phrasing import Phrased, Phrasing
from proctor.store import Decision, HeartbeatStatus, Store, SuggestionDraft

RETRY_FAILED_STATUS: HeartbeatStatus = "suggestions_failed"
"""The heartbeat status of a run whose result is published but whose suggestions failed."""


@dataclass(frozen=True, slots=True)
class SuggestionOutcome:
    """What one round of suggestions did and cost."""

    created: int
    reopened: int
    candidates: int
    calls: int
    input_tokens: int
    output_tokens: int
    refreshed: int = 0
    """Open suggestions of the same objects, updated with this result's words and evidence."""
    phrased: int = 0
    """Candidates worded by the model (the rest keep their rule text)."""
    suggestion_ids: tuple[str, ...] = ()

    @property
    def open_now(self) -> int:
        """Suggestions of this result that are open after the round (new, back, refreshed)."""
        return self.created + self.reopened + self.refreshed


def make_suggestions(
    store: Store,
    *,
    result_id: str,
    heartbeat_id: str | None,
    phrasing: Phrasing | None,
    now: datetime | None = None,
) -> SuggestionOutcome:
    """Suggestions from one published result: no candidates → no call; else one call.

    Raises:
        SuggestionError: the phrasing call or the save failed; nothing was saved and the
            result, graph and checkpoints are untouched.
        NotFoundError: no such result.
    """
    changes = store.result_changes(result_id, min_sources=MIN_SOURCES)
    found = candidates(changes)
    if not found:
        return SuggestionOutcome(0, 0, 0, 0, 0, 0)
    phrased = Phrased()
    if phrasing is not None:
        run_id = heartbeat_id or changes.run_id
        phrased = anyio.run(partial(phrasing.phrase, found, run_id=run_id))
    drafts = [_draft(candidate, phrased) for candidate in found]
    try:
        saved = store.save_suggestions(
            drafts, result_id=result_id, heartbeat_id=heartbeat_id, now=now
        )
    except StoreError as exc:
        raise SuggestionError(
            f"the suggestions could not be saved ({exc}); the result is published; "
            "retry with `proctor suggestions retry`",
            calls=phrased.calls,
            input_tokens=phrased.input_tokens,
            output_tokens=phrased.output_tokens,
        ) from exc
    return SuggestionOutcome(
        created=saved.count("created"),
        reopened=saved.count("reopened"),
        candidates=len(found),
        calls=phrased.calls,
        input_tokens=phrased.input_tokens,
        output_tokens=phrased.output_tokens,
        refreshed=saved.count("refreshed"),
        phrased=len(phrased.wording),
        suggestion_ids=tuple(suggestion_id for suggestion_id, _ in saved.actions),
    )


def _draft(candidate: Candidate, phrased: Phrased) -> SuggestionDraft:
    wording = phrased.wording.get(candidate.fingerprint)
    title, text = wording if wording is not None else (candidate.title, candidate.rule_text)
    return SuggestionDraft(
        fingerprint=candidate.fingerprint,
        kind=candidate.kind,
        project_id=candidate.project_id,
        object_type=candidate.object_type,
        object_id=candidate.object_id,
        title=title,
        text=text,
        rule_text=candidate.rule_text,
        phrased=wording is not None,
        evidence=candidate.evidence,
        evidence_key=candidate.evidence_key,
    )


def retry_suggestions(
    store: Store, heartbeat_id: str, phrasing: Phrasing | None, *, now: datetime | None = None
) -> SuggestionOutcome:
    """Make a heartbeat run's suggestions again from its published result, and record it.

    On success the run becomes ``completed`` / ``done`` with its suggestion count; on
    failure it stays ``suggestions_failed`` with the new error, and the error is raised.
    """
    run = store.heartbeat_run(heartbeat_id)
    if run.result_id is None:
        raise SuggestionError(
            f"heartbeat run {run.heartbeat_id[:8]} published no result; there is nothing "
            "to make suggestions from"
        )
    try:
        outcome = make_suggestions(
            store,
            result_id=run.result_id,
            heartbeat_id=run.heartbeat_id,
            phrasing=phrasing,
            now=now,
        )
    except SuggestionError as exc:
        store.set_heartbeat_outcome(
            run.heartbeat_id, status=RETRY_FAILED_STATUS, phase="suggestions", error=str(exc)
        )
        raise
    store.set_heartbeat_outcome(
        run.heartbeat_id, status="completed", phase="done", suggestions=outcome.open_now
    )
    return outcome


def retry_result_suggestions(
    store: Store, result_id: str, phrasing: Phrasing | None, *, now: datetime | None = None
) -> SuggestionOutcome:
    """Make suggestions again from any result (e.g. a manual review's); id or prefix."""
    full = store.result(result_id).result_id
    return make_suggestions(store, result_id=full, heartbeat_id=None, phrasing=phrasing, now=now)


def accept_suggestion(store: Store, suggestion_id: str) -> Decision:
    """Accept: an open item becomes a paused task; a convention confirms its entity and
    records a memory; other kinds are only marked accepted. Idempotent."""
    return store.accept_suggestion(suggestion_id)


def ignore_suggestion(store: Store, suggestion_id: str) -> Decision:
    """Ignore: the suggestion comes back only with new evidence. Idempotent."""
    return store.ignore_suggestion(suggestion_id)
