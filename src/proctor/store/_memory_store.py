"""Memories drafted from findings ("Remember this", SUP-10) and the ones the supervisor sees.

A person asks to remember a finding: a candidate is drafted from it (the finding's title
and what it says, editable) for the finding's conversation's project. Nothing reaches the
supervisor until the person confirms it: confirming writes a ``memories`` row (the same
table accepted conventions go to) in the same transaction that marks the candidate
``confirmed``; discarding marks it ``discarded`` and writes nothing else. A finding has at
most one pending candidate: asking again returns it.

``project_memories`` is what the supervisor's window is filled from (SUP-3): confirmed
memories of exactly one project (or of no project), newest first. Marking a finding a
false positive is evaluation data and stays as it is; nothing here rewrites a prompt.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, RowMapping

from proctor._util.clock import utcnow
from proctor.errors import ConfigError, NotFoundError
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._findings import get_finding
from proctor.store._suggestion_records import MemoryRecord

CandidateStatus = Literal["candidate", "confirmed", "discarded"]
MEMORY_TEXT_CHARS = 2000
"""Longest memory text kept (the window clips further, to its own budget)."""
_DRAFT_CONTENT_CHARS = 600


@dataclass(frozen=True, slots=True)
class MemoryCandidate:
    """A memory drafted from a finding, waiting for (or past) a person's decision."""

    candidate_id: str
    finding_id: str
    project_id: str | None
    """The project of the finding's conversation: where the memory applies."""
    text: str
    status: CandidateStatus
    memory_id: str | None
    """The memory confirming it wrote."""
    created_at: datetime
    updated_at: datetime
    decided_at: datetime | None


class MemoryCandidateRecords(Protocol):
    """Memory candidates and the memories of one project, as the store interface offers them."""

    def remember_finding(self, finding_id: str, text: str | None = None) -> MemoryCandidate:
        """Draft a memory from a finding (or return its pending candidate)."""
        ...

    def memory_candidate(self, candidate_id: str) -> MemoryCandidate:
        """One candidate."""
        ...

    def memory_candidates(
        self, *, project: str | None = None, status: CandidateStatus | None = "candidate"
    ) -> list[MemoryCandidate]:
        """Candidates, newest first."""
        ...

    def confirm_memory(self, candidate_id: str, text: str | None = None) -> MemoryCandidate:
        """Confirm a candidate: write the memory; returns the candidate as decided."""
        ...

    def discard_memory(self, candidate_id: str) -> MemoryCandidate:
        """Discard a candidate; nothing reaches the supervisor."""
        ...

    def project_memories(self, project_id: str | None, *, limit: int = 20) -> list[MemoryRecord]:
        """Confirmed memories of exactly this project (None: of no project), newest first."""
        ...

    def conversation_memories(self, conversation_id: str, *, limit: int = 20) -> list[MemoryRecord]:
        """Confirmed memories of the conversation's project, newest first."""
        ...


def draft_text(title: str, content: str) -> str:
    """The text a candidate starts with: the finding's title and the start of its content."""
    title = " ".join(title.split())
    content = " ".join(content.split())
    if len(content) > _DRAFT_CONTENT_CHARS:
        content = content[: _DRAFT_CONTENT_CHARS - 1].rstrip() + "…"
    if not content or content == title:
        return title
    return f"{title}: {content}"


def clean_text(text: str) -> str:
    """A memory's text as stored: trimmed, not empty, within ``MEMORY_TEXT_CHARS``."""
    cleaned = text.strip()
    if not cleaned:
        raise ConfigError("a memory's text is empty: write what the supervisor should remember")
    if len(cleaned) > MEMORY_TEXT_CHARS:
        raise ConfigError(
            f"a memory's text has {len(cleaned)} characters; keep it within {MEMORY_TEXT_CHARS}"
        )
    return cleaned


class MemoryReads(Repository):
    """Memory candidates from findings and the confirmed memories of a project: the reads."""

    def memory_candidate(self, candidate_id: str) -> MemoryCandidate:
        """One candidate."""
        with self._read() as c:
            return _get(c, candidate_id)

    def memory_candidates(
        self, *, project: str | None = None, status: CandidateStatus | None = "candidate"
    ) -> list[MemoryCandidate]:
        """Candidates (pending by default), newest first; ``project`` is an id or a name."""
        m = t.memory_candidates.c
        query = select(t.memory_candidates).order_by(m.created_at.desc(), m.candidate_id)
        if status is not None:
            query = query.where(m.status == status)
        if project is not None:
            p = t.projects.c
            query = query.where(
                m.project_id.in_(
                    select(p.project_id).where((p.project_id == project) | (p.name == project))
                )
            )
        with self._read() as c:
            return [_candidate(row) for row in c.execute(query).mappings()]

    def project_memories(self, project_id: str | None, *, limit: int = 20) -> list[MemoryRecord]:
        """Confirmed memories of exactly this project (None: of no project), newest first."""
        m = t.memories.c
        where = m.project_id.is_(None) if project_id is None else m.project_id == project_id
        query = (
            select(t.memories).where(where).order_by(m.updated_at.desc(), m.memory_id).limit(limit)
        )
        with self._read() as c:
            return [MemoryRecord(**dict(row)) for row in c.execute(query).mappings()]

    def conversation_memories(self, conversation_id: str, *, limit: int = 20) -> list[MemoryRecord]:
        """Confirmed memories of the conversation's project, newest first (what SUP-3 shows)."""
        with self._read() as c:
            found = c.execute(
                select(t.conversations.c.project_id).where(
                    t.conversations.c.conversation_id == conversation_id
                )
            ).first()
        if found is None:
            raise NotFoundError(f"no conversation {conversation_id!r}")
        return self.project_memories(found[0], limit=limit)


class MemoryRepository(MemoryReads):
    """``MemoryReads`` and the writes (remember, confirm, discard), each one transaction."""

    def remember_finding(self, finding_id: str, text: str | None = None) -> MemoryCandidate:
        """Draft a memory from a finding for its conversation's project (one transaction).

        Returns the finding's pending candidate when it has one (its text unchanged);
        otherwise a new candidate with ``text`` or a draft made from the finding.
        """
        with self._write() as c:
            finding = get_finding(c, finding_id)
            pending = c.execute(
                select(t.memory_candidates)
                .where(
                    t.memory_candidates.c.finding_id == finding_id,
                    t.memory_candidates.c.status == "candidate",
                )
                .limit(1)
            ).mappings()
            existing = pending.first()
            if existing is not None:
                return _candidate(existing)
            project_id = c.execute(
                select(t.conversations.c.project_id).where(
                    t.conversations.c.conversation_id == finding.conversation_id
                )
            ).scalar_one_or_none()
            now = utcnow()
            body = clean_text(
                text if text is not None else draft_text(finding.title, finding.content)
            )
            candidate = MemoryCandidate(
                candidate_id=uuid.uuid4().hex,
                finding_id=finding_id,
                project_id=project_id,
                text=body,
                status="candidate",
                memory_id=None,
                created_at=now,
                updated_at=now,
                decided_at=None,
            )
            c.execute(
                insert(t.memory_candidates).values(
                    candidate_id=candidate.candidate_id,
                    finding_id=finding_id,
                    project_id=project_id,
                    text=body,
                    status="candidate",
                    memory_id=None,
                    created_at=now,
                    updated_at=now,
                    decided_at=None,
                )
            )
            return candidate

    def confirm_memory(self, candidate_id: str, text: str | None = None) -> MemoryCandidate:
        """Confirm a pending candidate (with its text edited when ``text`` is given).

        Writes the memory and marks the candidate in one transaction. Confirming a
        confirmed candidate again changes nothing; a discarded one cannot be confirmed.
        """
        with self._write() as c:
            current = _get(c, candidate_id)
            if current.status == "confirmed":
                return current
            if current.status == "discarded":
                raise ConfigError(
                    f"memory candidate {candidate_id} was discarded; "
                    "ask to remember the finding again to draft a new one"
                )
            body = clean_text(text) if text is not None else current.text
            now = utcnow()
            memory_id = uuid.uuid4().hex
            c.execute(
                insert(t.memories).values(
                    memory_id=memory_id,
                    project_id=current.project_id,
                    entity_id=None,
                    suggestion_id=None,
                    text=body,
                    created_at=now,
                    updated_at=now,
                )
            )
            c.execute(
                update(t.memory_candidates)
                .where(t.memory_candidates.c.candidate_id == candidate_id)
                .values(
                    status="confirmed",
                    text=body,
                    memory_id=memory_id,
                    updated_at=now,
                    decided_at=now,
                )
            )
            return _get(c, candidate_id)

    def discard_memory(self, candidate_id: str) -> MemoryCandidate:
        """Discard a pending candidate; discarding again changes nothing.

        A confirmed candidate cannot be discarded here: its memory already exists.
        """
        with self._write() as c:
            current = _get(c, candidate_id)
            if current.status == "discarded":
                return current
            if current.status == "confirmed":
                raise ConfigError(
                    f"memory candidate {candidate_id} was already confirmed as memory "
                    f"{current.memory_id}; it cannot be discarded"
                )
            now = utcnow()
            c.execute(
                update(t.memory_candidates)
                .where(t.memory_candidates.c.candidate_id == candidate_id)
                .values(status="discarded", updated_at=now, decided_at=now)
            )
            return _get(c, candidate_id)


def _get(c: Connection, candidate_id: str) -> MemoryCandidate:
    row = (
        c.execute(
            select(t.memory_candidates).where(t.memory_candidates.c.candidate_id == candidate_id)
        )
        .mappings()
        .first()
    )
    if row is None:
        raise NotFoundError(f"no memory candidate {candidate_id!r}")
    return _candidate(row)


def _candidate(row: RowMapping) -> MemoryCandidate:
    return MemoryCandidate(
        candidate_id=row["candidate_id"],
        finding_id=row["finding_id"],
        project_id=row["project_id"],
        text=row["text"],
        status=row["status"],
        memory_id=row["memory_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        decided_at=row["decided_at"],
    )
