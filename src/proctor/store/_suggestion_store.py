"""Suggestions, the tasks and memories accepting them creates (HB-5, HB-6).

Saving is one transaction and upserts by fingerprint: a new suggestion is open; an open
one gets the new words, evidence and result; an ignored one comes back (open again,
"reopened") only when its evidence key changed, i.e. new or edited sources; an accepted
one stays as it is. Accepting and ignoring are one transaction each, idempotent, and
refuse a suggestion decided the other way. Accepting a convention confirms its entity
through the same edit ``confirm`` makes (REV-4), in the same transaction as the memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import insert, or_, select, update
from sqlalchemy.engine import Connection, RowMapping

from proctor._util.clock import utcnow
from proctor.errors import NotFoundError, SuggestionStateError
from proctor.store import _graph_edits as edits
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._suggestion_changes import result_changes
from proctor.store._suggestion_records import (
    Decision,
    EvidenceRef,
    MemoryRecord,
    ResultChanges,
    SaveAction,
    SaveOutcome,
    SuggestionDraft,
    SuggestionRecord,
    UserTaskRecord,
)

TASK_STATUS = "paused"
"""An accepted open item becomes a task that waits for a person to start it."""


class SuggestionRecords(Protocol):
    """Suggestions, user tasks and memories, as the store interface offers them."""

    def result_changes(self, result_id: str, *, min_sources: int = 3) -> ResultChanges:
        """The objects of one result suggestions may come from (HB-5)."""
        ...

    def save_suggestions(
        self,
        drafts: Sequence[SuggestionDraft],
        *,
        result_id: str,
        heartbeat_id: str | None,
        now: datetime | None = None,
    ) -> SaveOutcome:
        """Upsert suggestions by fingerprint in one transaction."""
        ...

    def suggestions(
        self, *, status: str | None = "open", project: str | None = None, limit: int = 100
    ) -> list[SuggestionRecord]:
        """Suggestions, newest first (``status`` None: every status)."""
        ...

    def suggestion(self, ref: str) -> SuggestionRecord:
        """One suggestion by id or unique prefix."""
        ...

    def accept_suggestion(self, ref: str, *, now: datetime | None = None) -> Decision:
        """Accept: open item → paused task; convention → confirmed entity + memory."""
        ...

    def ignore_suggestion(self, ref: str, *, now: datetime | None = None) -> Decision:
        """Ignore: it returns only with new evidence."""
        ...

    def user_tasks(self, *, project: str | None = None, limit: int = 100) -> list[UserTaskRecord]:
        """Tasks people took on, newest first."""
        ...

    def memories(
        self, *, project: str | None = None, entity_id: str | None = None, limit: int = 100
    ) -> list[MemoryRecord]:
        """What people confirmed to remember, newest first."""
        ...


class SuggestionReads(Repository):
    """Suggestions, user tasks and memories: the reads of ``SuggestionRecords``."""

    def result_changes(self, result_id: str, *, min_sources: int = 3) -> ResultChanges:
        """The objects of one result suggestions may come from (HB-5)."""
        with self._read() as c:
            return result_changes(c, result_id, min_sources)

    def suggestions(
        self, *, status: str | None = "open", project: str | None = None, limit: int = 100
    ) -> list[SuggestionRecord]:
        """Suggestions, newest first (``status`` None: every status)."""
        s = t.suggestions.c
        query = select(t.suggestions).order_by(s.updated_at.desc(), s.suggestion_id).limit(limit)
        if status is not None:
            query = query.where(s.status == status)
        if project is not None:
            query = query.where(s.project_id.in_(_project_ids(project)))
        with self._read() as c:
            return [_record(row) for row in c.execute(query).mappings()]

    def suggestion(self, ref: str) -> SuggestionRecord:
        """One suggestion by id or unique prefix."""
        with self._read() as c:
            return _record(_row(c, ref))

    def user_tasks(self, *, project: str | None = None, limit: int = 100) -> list[UserTaskRecord]:
        """Tasks people took on, newest first."""
        u = t.user_tasks.c
        query = select(t.user_tasks).order_by(u.created_at.desc(), u.task_id).limit(limit)
        if project is not None:
            query = query.where(u.project_id.in_(_project_ids(project)))
        with self._read() as c:
            return [UserTaskRecord(**dict(row)) for row in c.execute(query).mappings()]

    def memories(
        self, *, project: str | None = None, entity_id: str | None = None, limit: int = 100
    ) -> list[MemoryRecord]:
        """What people confirmed to remember, newest first."""
        m = t.memories.c
        query = select(t.memories).order_by(m.updated_at.desc(), m.memory_id).limit(limit)
        if project is not None:
            query = query.where(m.project_id.in_(_project_ids(project)))
        if entity_id is not None:
            query = query.where(m.entity_id == entity_id)
        with self._read() as c:
            return [MemoryRecord(**dict(row)) for row in c.execute(query).mappings()]


class SuggestionRepository(SuggestionReads):
    """``SuggestionReads`` and the writes (saving, accepting and ignoring suggestions), each one transaction."""

    def save_suggestions(
        self,
        drafts: Sequence[SuggestionDraft],
        *,
        result_id: str,
        heartbeat_id: str | None,
        now: datetime | None = None,
    ) -> SaveOutcome:
        """Upsert suggestions by fingerprint in one transaction."""
        when = now or utcnow()
        actions: list[tuple[str, SaveAction]] = []
        with self._write() as c:
            for draft in drafts:
                actions.append(_save(c, draft, result_id, heartbeat_id, when))
        return SaveOutcome(tuple(actions))

    def accept_suggestion(self, ref: str, *, now: datetime | None = None) -> Decision:
        """Accept: open item → paused task; convention → confirmed entity + memory."""
        when = now or utcnow()
        with self._write() as c:
            row = _row(c, ref)
            if _already(row, "accepted"):
                return Decision(_record(row), changed=False)
            task = memory = None
            confirmed = None
            if row["kind"] == "open_item":
                task = _add_task(c, row, when)
            elif row["kind"] == "convention" and row["object_id"] is not None:
                edits.edit(c, "entity", row["object_id"], "confirm", {}, when)
                confirmed = row["object_id"]
                memory = _add_memory(c, row, when)
            decided = _decide(c, row, "accepted", when)
        return Decision(decided, True, task, memory, confirmed)

    def ignore_suggestion(self, ref: str, *, now: datetime | None = None) -> Decision:
        """Ignore: it returns only with new evidence."""
        when = now or utcnow()
        with self._write() as c:
            row = _row(c, ref)
            if _already(row, "ignored"):
                return Decision(_record(row), changed=False)
            decided = _decide(c, row, "ignored", when)
        return Decision(decided, changed=True)


def _project_ids(project: str) -> Any:
    p = t.projects.c
    return select(p.project_id).where(or_(p.project_id == project, p.name == project))


def _evidence_json(evidence: Sequence[EvidenceRef]) -> list[dict[str, Any]]:
    return [
        {"source_type": e.source_type, "source_id": e.source_id, "content_hash": e.content_hash}
        for e in evidence
    ]


def _save(
    c: Connection,
    draft: SuggestionDraft,
    result_id: str,
    heartbeat_id: str | None,
    now: datetime,
) -> tuple[str, SaveAction]:
    s = t.suggestions.c
    current = (
        c.execute(select(t.suggestions).where(s.fingerprint == draft.fingerprint))
        .mappings()
        .first()
    )
    words = {
        "title": draft.title,
        "text": draft.text,
        "rule_text": draft.rule_text,
        "phrased": draft.phrased,
        "evidence": _evidence_json(draft.evidence),
        "evidence_key": draft.evidence_key,
        "result_id": result_id,
        "heartbeat_id": heartbeat_id,
        "project_id": draft.project_id,
        "updated_at": now,
    }
    if current is None:
        suggestion_id = uuid.uuid4().hex
        c.execute(
            insert(t.suggestions).values(
                suggestion_id=suggestion_id,
                fingerprint=draft.fingerprint,
                kind=draft.kind,
                object_type=draft.object_type,
                object_id=draft.object_id,
                status="open",
                created_at=now,
                decided_at=None,
                **words,
            )
        )
        return suggestion_id, "created"
    suggestion_id = str(current["suggestion_id"])
    status = current["status"]
    if status == "accepted" or (
        status == "ignored" and current["evidence_key"] == draft.evidence_key
    ):
        return suggestion_id, "unchanged"
    values: dict[str, Any] = dict(words)
    action: SaveAction = "refreshed"
    if status == "ignored":
        values.update(status="open", decided_at=None)
        action = "reopened"
    c.execute(update(t.suggestions).where(s.suggestion_id == suggestion_id).values(**values))
    return suggestion_id, action


def _row(c: Connection, ref: str) -> RowMapping:
    ref = ref.strip()
    if not ref:
        raise NotFoundError("no suggestion id given")
    s = t.suggestions.c
    rows = list(
        c.execute(
            select(t.suggestions).where(s.suggestion_id.startswith(ref, autoescape=True)).limit(2)
        ).mappings()
    )
    if not rows:
        raise NotFoundError(f"no suggestion {ref!r}; see `proctor suggestions list --all`")
    if len(rows) > 1:
        raise NotFoundError(f"suggestion id {ref!r} is ambiguous; give more characters")
    return rows[0]


def _already(row: RowMapping, wanted: str) -> bool:
    """True when already decided ``wanted``; raises when decided the other way."""
    status = row["status"]
    if status == wanted:
        return True
    if status != "open":
        raise SuggestionStateError(
            f"suggestion {row['suggestion_id'][:8]} is already {status}; only an open "
            f"suggestion can be {wanted}"
        )
    return False


def _decide(c: Connection, row: RowMapping, status: str, now: datetime) -> SuggestionRecord:
    s = t.suggestions.c
    c.execute(
        update(t.suggestions)
        .where(s.suggestion_id == row["suggestion_id"])
        .values(status=status, decided_at=now, updated_at=now)
    )
    return _record(
        c.execute(select(t.suggestions).where(s.suggestion_id == row["suggestion_id"]))
        .mappings()
        .one()
    )


def _add_task(c: Connection, row: RowMapping, now: datetime) -> UserTaskRecord:
    task = UserTaskRecord(
        task_id=uuid.uuid4().hex,
        project_id=row["project_id"],
        suggestion_id=row["suggestion_id"],
        title=row["title"],
        detail=row["text"],
        status=TASK_STATUS,
        created_at=now,
        updated_at=now,
    )
    c.execute(
        insert(t.user_tasks).values(
            task_id=task.task_id,
            project_id=task.project_id,
            suggestion_id=task.suggestion_id,
            title=task.title,
            detail=task.detail,
            status=task.status,
            created_at=task.created_at,
            updated_at=task.updated_at,
        )
    )
    return task


def _add_memory(c: Connection, row: RowMapping, now: datetime) -> MemoryRecord:
    memory = MemoryRecord(
        memory_id=uuid.uuid4().hex,
        project_id=row["project_id"],
        entity_id=row["object_id"],
        suggestion_id=row["suggestion_id"],
        text=row["text"],
        created_at=now,
        updated_at=now,
    )
    c.execute(
        insert(t.memories).values(
            memory_id=memory.memory_id,
            project_id=memory.project_id,
            entity_id=memory.entity_id,
            suggestion_id=memory.suggestion_id,
            text=memory.text,
            created_at=now,
            updated_at=now,
        )
    )
    return memory


def _record(row: RowMapping) -> SuggestionRecord:
    return SuggestionRecord(
        suggestion_id=row["suggestion_id"],
        fingerprint=row["fingerprint"],
        kind=row["kind"],
        project_id=row["project_id"],
        object_type=row["object_type"],
        object_id=row["object_id"],
        result_id=row["result_id"],
        heartbeat_id=row["heartbeat_id"],
        title=row["title"],
        text=row["text"],
        rule_text=row["rule_text"],
        phrased=bool(row["phrased"]),
        evidence=tuple(
            EvidenceRef(e["source_type"], e["source_id"], e.get("content_hash"))
            for e in row["evidence"]
        ),
        evidence_key=row["evidence_key"],
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        decided_at=row["decided_at"],
    )
