"""A bounded batch of sources as the extractors see it (REV-1).

The pipeline loads each batch from the frozen manifest: every source with its current
content, the conversation it belongs to, and a batch-local reference (``s1``, ``s2`` …)
that leaf answers cite (REV-2). Structural extraction and the semantic layer both read
this, never the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from proctor.graph import SourceRef
from proctor.transcript import Conversation, Message, SourceType, SubagentRun, TaskEvent, ToolCall


@dataclass(frozen=True, slots=True)
class BatchSource:
    """One source of the batch, at the version the manifest froze."""

    ref: str
    """Batch-local id the model cites: ``s1``, ``s2`` …"""
    source_type: SourceType
    source_id: str
    conversation_id: str
    project_id: str
    fingerprint: str
    occurred_at: datetime | None
    message: Message | None = None
    tool_call: ToolCall | None = None
    task_event: TaskEvent | None = None

    def cite(
        self, field_name: str | None = None, start: int | None = None, end: int | None = None
    ) -> SourceRef:
        """A reference to this source, optionally to a character range of one field."""
        return SourceRef(self.source_type, self.source_id, field_name, start, end)


@dataclass(frozen=True, slots=True)
class SourceBatch:
    """The sources of one batch, in conversation order, with what they belong to."""

    run_id: str
    batch_no: int
    scope_key: str
    sources: tuple[BatchSource, ...]
    conversations: Mapping[str, Conversation] = field(default_factory=dict)
    """Every conversation a source of the batch belongs to, by id."""
    projects: Mapping[str, str] = field(default_factory=dict)
    """Project id → project name, for the projects in the batch."""
    subagent_runs: Mapping[str, SubagentRun] = field(default_factory=dict)
    """Sub-agent runs by the source id of the tool call that started them."""

    def by_ref(self, ref: str) -> BatchSource | None:
        """The source a batch-local reference names, if any."""
        for source in self.sources:
            if source.ref == ref:
                return source
        return None
