"""What the review store hands back: runs, manifest entries and saved batches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from proctor.graph import ReviewTrigger

if TYPE_CHECKING:
    from proctor.transcript import Conversation, Message, SubagentRun, TaskEvent, ToolCall

RunStatus = Literal["running", "paused", "cancelled", "completed", "failed", "no_change"]
"""REV-5. ``cancelled`` while a worker still stops reads as "cancelling" (see ``shown``)."""

ShownStatus = RunStatus | Literal["cancelling", "pausing"]
"""The status a person sees (``ReviewRunRecord.shown``)."""

Trigger = ReviewTrigger
"""What started a run (the graph's ``ReviewTrigger``: its result carries it)."""

ManifestState = Literal["pending", "done", "omitted"]
"""A manifest entry: to read, read, or left out (its conversation was deleted meanwhile)."""

BatchState = Literal["pending", "done", "failed"]
"""A saved batch: to read, read, or failed (kept with its error)."""

RESUMABLE: frozenset[RunStatus] = frozenset({"paused", "failed"})
FINISHED: frozenset[RunStatus] = frozenset({"cancelled", "completed", "failed", "no_change"})


@dataclass(frozen=True, slots=True)
class ReviewScope:
    """What a review covers, frozen when the run starts (REV-1)."""

    project_id: str | None
    """None: every project."""
    project_name: str | None
    time_from: datetime | None = None
    time_to: datetime | None = None

    @property
    def key(self) -> str:
        """The checkpoint scope: ``project:<id>`` or ``all``."""
        return "all" if self.project_id is None else f"project:{self.project_id}"


@dataclass(frozen=True, slots=True)
class ReviewRunRecord:
    """One review run as stored."""

    run_id: str
    scope_key: str
    project_id: str | None
    time_from: datetime | None
    time_to: datetime | None
    trigger: Trigger
    reanalyze: bool
    status: RunStatus
    active: bool
    connection: str | None
    model: str | None
    options: dict[str, Any]
    sources_total: int
    sources_done: int
    batches_total: int
    batches_done: int
    model_calls: int
    input_tokens: int
    output_tokens: int
    error: str | None
    result_id: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None

    @property
    def shown(self) -> ShownStatus:
        """The state a person sees: a cancelled run that is still stopping is "cancelling"."""
        if self.status == "cancelled" and self.active:
            return "cancelling"
        if self.status == "paused" and self.active:
            return "pausing"
        return self.status


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One source a run reads, at the version frozen in its manifest."""

    position: int
    source_type: str
    source_id: str
    conversation_id: str
    fingerprint: str
    occurred_at: datetime | None
    batch_no: int
    state: ManifestState


@dataclass(frozen=True, slots=True)
class SavedBatch:
    """A batch's saved state and output."""

    batch_no: int
    state: BatchState
    sources: int
    output: dict[str, Any] | None
    error: str | None
    model_calls: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class SourceContents:
    """The current content of some sources, with what they belong to."""

    messages: dict[str, Message]
    tool_calls: dict[str, ToolCall]
    task_events: dict[str, TaskEvent]
    fingerprints: dict[tuple[str, str], str]
    """Current fingerprint of every source that still exists."""
    conversations: dict[str, Conversation]
    project_of: dict[str, str]
    """Conversation id → project id."""
    project_names: dict[str, str]
    subagent_runs: dict[str, SubagentRun]
    """By the source id of the tool call that started the sub-agent."""


@dataclass(frozen=True, slots=True)
class BatchInput:
    """What reading one batch needs, from one snapshot: the run's status, the batch's
    manifest entries and their sources' current content (empty unless running)."""

    status: str
    entries: list[ManifestEntry]
    contents: SourceContents


class ReviewReader(Protocol):
    """What may be read of review runs, manifests, batches and the slot."""

    def review_run(self, run_id: str) -> ReviewRunRecord:
        """One run by id or unique prefix."""
        ...

    def review_runs(
        self, *, limit: int = 20, status: RunStatus | None = None
    ) -> list[ReviewRunRecord]:
        """Runs, newest first."""
        ...

    def review_slot_holder(self, scope_key: str | None = None) -> str | None:
        """The run holding the slot a run of ``scope_key`` would need, if alive."""
        ...

    def review_slot_held(self, run_id: str) -> bool:
        """Whether a live process holds a slot for ``run_id``."""
        ...

    def manifest_page(self, run_id: str, batch_no: int) -> list[ManifestEntry]:
        """One batch's manifest entries."""
        ...

    def review_batch_input(self, run_id: str, batch_no: int) -> BatchInput:
        """The run's status, one batch's entries and their content, in one read."""
        ...

    def review_batches(self, run_id: str) -> list[SavedBatch]:
        """Every batch of a run."""
        ...

    def manifest_counts(self, run_id: str) -> dict[str, int]:
        """Pending, done and omitted counts."""
        ...

    def done_manifest(self, run_id: str) -> list[ManifestEntry]:
        """Entries the run read."""
        ...

    def done_sources(self, run_id: str) -> list[tuple[str, str, str, int]]:
        """(source_type, source_id, fingerprint, batch_no) of the entries the run read."""
        ...

    def checkpoint_count(self, stage: str | None = None) -> int:
        """How many checkpoints exist."""
        ...

    def source_contents(self, keys: Sequence[tuple[str, str]]) -> SourceContents:
        """Current content of the given (source_type, source_id) sources."""
        ...

    def review_conversations(self, ids: Iterable[str]) -> dict[str, Conversation]:
        """The stored conversations among ``ids``, by id."""
        ...


class ReviewRecords(ReviewReader, Protocol):
    """Review runs, manifests, batches and the execution slot (see ``_review_store.py``):
    ``ReviewReader`` and the writes."""

    def create_review_run(
        self,
        scope: ReviewScope,
        *,
        trigger: Trigger,
        reanalyze: bool,
        stages: Sequence[str],
        batch_size: int,
        batch_chars: int,
        connection: str | None,
        model: str | None,
        options: dict[str, Any] | None = None,
    ) -> ReviewRunRecord:
        """Freeze scope and range and build the manifest: one transaction."""
        ...

    def set_review_status(
        self,
        run_id: str,
        status: RunStatus,
        *,
        allowed_from: Iterable[RunStatus] | None = None,
        error: str | None = None,
        finished: bool = False,
    ) -> ReviewRunRecord:
        """Move a run to another state."""
        ...

    def add_review_usage(
        self, run_id: str, *, calls: int, input_tokens: int, output_tokens: int
    ) -> None:
        """Count model usage outside batches."""
        ...

    def fail_interrupted_reviews(self) -> list[str]:
        """Runs left running by a stopped process become failed."""
        ...

    def claim_review_slot(
        self, run_id: str, *, resumable_from: Iterable[str] = (), handed_by: str | None = None
    ) -> ReviewRunRecord:
        """Take a slot (the one slot on SQLite) or raise BusyError."""
        ...

    def beat_review_slot(self, run_id: str) -> None:
        """Keep the slot."""
        ...

    def release_review_slot(self, run_id: str) -> ReviewRunRecord:
        """Free the slot."""
        ...

    def save_review_batch(
        self,
        run_id: str,
        batch_no: int,
        *,
        state: BatchState,
        output: dict[str, Any] | None,
        error: str | None,
        read: dict[tuple[str, str], str],
        omitted: Sequence[tuple[str, str]],
        model_calls: int,
        input_tokens: int,
        output_tokens: int,
    ) -> bool:
        """Save a batch if the run is still running, and keep the run's slot."""
        ...
