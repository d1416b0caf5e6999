"""Memories from findings (SUP-10): remember → a candidate → confirm or discard.

``POST /findings/{finding}/remember`` drafts a candidate from the finding (text
editable); only ``POST /memories/{candidate}/confirm`` makes it a memory, which the
supervisor's window then carries, labelled as memory, for conversations of the same
project (SUP-3). ``GET /memories`` lists the confirmed memories (those accepted
suggestions recorded too) and pending candidates; ``GET /tasks`` lists the tasks accepted
suggestions made (HB-6): nothing Proctor creates is write-only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.api._deps import ReaderDep, StoreDep
from proctor.store import (
    MEMORY_TEXT_CHARS,
    CandidateStatus,
    MemoryCandidate,
    MemoryRecord,
    UserTaskRecord,
)

router = APIRouter(tags=["memories"])


class MemoryText(BaseModel):
    """A memory's text, when the person edited the draft."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, max_length=MEMORY_TEXT_CHARS)
    """The text to keep; the draft (or the candidate's text) when omitted."""


class CandidateOut(WireModel):
    """A memory candidate and its decision."""

    candidate_id: str
    finding_id: str
    project_id: str | None
    text: str
    status: CandidateStatus
    memory_id: str | None
    created_at: datetime
    decided_at: datetime | None

    @classmethod
    def of(cls, candidate: MemoryCandidate) -> CandidateOut:
        return cls(
            candidate_id=candidate.candidate_id,
            finding_id=candidate.finding_id,
            project_id=candidate.project_id,
            text=candidate.text,
            status=candidate.status,
            memory_id=candidate.memory_id,
            created_at=candidate.created_at,
            decided_at=candidate.decided_at,
        )


class MemoryOut(WireModel):
    """A confirmed memory, and what made it."""

    memory_id: str
    project_id: str | None
    text: str
    created_at: datetime
    entity_id: str | None = None
    """The confirmed convention (entity) it remembers, when a suggestion made it."""
    suggestion_id: str | None = None
    """The accepted suggestion that made it (None: confirmed from a finding)."""

    @classmethod
    def of(cls, memory: MemoryRecord) -> MemoryOut:
        return cls(
            memory_id=memory.memory_id,
            project_id=memory.project_id,
            text=memory.text,
            created_at=memory.created_at,
            entity_id=memory.entity_id,
            suggestion_id=memory.suggestion_id,
        )


class TasksOut(WireModel):
    """Tasks people took on by accepting suggestions, newest first."""

    tasks: list[UserTaskRecord]


class MemoriesOut(WireModel):
    """Confirmed memories and candidates waiting for a decision."""

    memories: list[MemoryOut]
    candidates: list[CandidateOut]


@router.post("/findings/{finding_ref}/remember")
def remember(store: StoreDep, finding_ref: str, body: MemoryText | None = None) -> CandidateOut:
    """Draft a memory candidate from a finding (its pending candidate when it has one)."""
    finding_id = store.resolve_finding_id(finding_ref)
    text = body.text if body is not None else None
    return CandidateOut.of(store.remember_finding(finding_id, text))


@router.post("/memories/{candidate_id}/confirm")
def confirm(store: StoreDep, candidate_id: str, body: MemoryText | None = None) -> CandidateOut:
    """Confirm a candidate (with the edited text): the supervisor sees it from now on."""
    text = body.text if body is not None else None
    return CandidateOut.of(store.confirm_memory(candidate_id, text))


@router.post("/memories/{candidate_id}/discard")
def discard(store: StoreDep, candidate_id: str) -> CandidateOut:
    """Discard a candidate: nothing reaches the supervisor."""
    return CandidateOut.of(store.discard_memory(candidate_id))


@router.get("/memories")
def list_memories(
    store: ReaderDep,
    project: Annotated[
        str | None, Query(max_length=200, description="Only this project (id or name).")
    ] = None,
) -> MemoriesOut:
    """Confirmed memories (newest first) and the candidates still waiting for a decision."""
    return MemoriesOut(
        memories=[MemoryOut.of(m) for m in store.memories(project=project)],
        candidates=[CandidateOut.of(c) for c in store.memory_candidates(project=project)],
    )


@router.get("/tasks", tags=["heartbeat"])
def list_tasks(
    store: ReaderDep,
    project: Annotated[
        str | None, Query(max_length=200, description="Only this project (id or name).")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many.")] = 100,
) -> TasksOut:
    """Tasks accepted suggestions made (paused until a person takes them on), newest first."""
    return TasksOut(tasks=store.user_tasks(project=project, limit=limit))
