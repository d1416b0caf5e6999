"""Goal versions and user-turn intent labels (SPEC GOAL-1, GOAL-2).

Both tables only grow: a goal version is never rewritten and a user turn is labelled
once. Recording is idempotent — versions already stored (same target, same number) and
turns already labelled are skipped inside the same transaction — so re-running goal
tracking over the same messages writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection, RowMapping

from proctor._util.clock import utcnow
from proctor.store import _schema as t
from proctor.store._base import Repository

Intent = Literal["continue", "refine", "expand", "correct", "new_goal", "cancel"]
"""What a user turn does to the goal (SPEC GOAL-2)."""

GoalReason = Literal["initial", "task", "refine", "expand", "correct", "new_goal", "cancel"]
"""Why a goal version exists: the first user request, a task's subject, or a re-goal."""


@dataclass(frozen=True, slots=True)
class GoalVersion:
    """One version of a conversation's or task's goal."""

    target_id: str
    """The conversation or task the goal belongs to."""
    version: int
    """1 for the first goal, then +1 for every user re-goal."""
    goal: str
    goal_hash: str
    """32 hex digits: hash of the normalised goal text."""
    source_id: str | None
    """The user message (or task event) that caused this version."""
    reason: GoalReason
    created_at: datetime | None = None
    """When it was recorded (the store sets it when None)."""

    @property
    def closed(self) -> bool:
        """True when the user cancelled the goal."""
        return self.reason == "cancel"


@dataclass(frozen=True, slots=True)
class IntentLabel:
    """How one user turn was classified."""

    source_id: str
    """The user message."""
    target_id: str
    intent: Intent
    confidence: float
    low_confidence: bool
    """Confidence under the threshold: recorded, but it never changes the goal."""
    goal_version: int | None
    """The goal version in force when the turn arrived (what it was compared with)."""
    model: str | None
    """The model that classified it; None for the lexical classifier and the first turn."""
    prompt_version: int
    """Version of the prompt (or of the lexical classifier) that produced the label."""
    created_at: datetime | None = None
    """When it was recorded (the store sets it when None)."""


class GoalStoreProtocol(Protocol):
    """Goal versions and intent labels, as the store interface offers them."""

    def goal_versions(self, target_id: str) -> list[GoalVersion]:
        """Every goal version of a target, oldest first."""
        ...

    def current_goal(self, target_id: str) -> GoalVersion | None:
        """The latest goal version of a target, if any."""
        ...

    def record_goal_versions(
        self, target_id: str, versions: Sequence[GoalVersion]
    ) -> list[GoalVersion]:
        """Store the versions not stored yet (one transaction); returns those written."""
        ...

    def intent_labels(self, target_id: str) -> list[IntentLabel]:
        """Every intent label of a target's user turns."""
        ...

    def record_intent_labels(self, labels: Sequence[IntentLabel]) -> list[IntentLabel]:
        """Store labels of turns not labelled yet (one transaction); returns those written."""
        ...


class GoalReads(Repository):
    """Goal versions and user-turn intent labels: the reads."""

    def goal_versions(self, target_id: str) -> list[GoalVersion]:
        """Every goal version of a target, oldest first."""
        with self._read() as c:
            return _versions(c, target_id)

    def current_goal(self, target_id: str) -> GoalVersion | None:
        """The latest goal version of a target, if any."""
        with self._read() as c:
            row = (
                c.execute(
                    select(t.goal_versions)
                    .where(t.goal_versions.c.target_id == target_id)
                    .order_by(t.goal_versions.c.version.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
            return None if row is None else _version(row)

    def intent_labels(self, target_id: str) -> list[IntentLabel]:
        """Every intent label of a target's user turns, in the order they were recorded."""
        with self._read() as c:
            rows = c.execute(
                select(t.intent_labels)
                .where(t.intent_labels.c.target_id == target_id)
                .order_by(t.intent_labels.c.created_at, t.intent_labels.c.source_id)
            ).mappings()
            return [_label(row) for row in rows]


class GoalRepository(GoalReads):
    """``GoalReads`` and the writes (goal versions and intent labels), each one transaction."""

    def record_goal_versions(
        self, target_id: str, versions: Sequence[GoalVersion]
    ) -> list[GoalVersion]:
        """Store the versions not stored yet (one transaction); returns those written.

        A version whose number is already stored for the target is skipped, never
        rewritten: goal history only grows.
        """
        strangers = sorted({v.target_id for v in versions} - {target_id})
        if strangers:
            raise ValueError(f"goal versions of {strangers} cannot be recorded for {target_id!r}")
        with self._write() as c:
            stored = set(
                c.execute(
                    select(t.goal_versions.c.version).where(
                        t.goal_versions.c.target_id == target_id
                    )
                ).scalars()
            )
            written: list[GoalVersion] = []
            for version in versions:
                if version.version in stored:
                    continue
                stored.add(version.version)
                written.append(version)
            if written:
                c.execute(insert(t.goal_versions), [_version_row(v) for v in written])
            return written

    def record_intent_labels(self, labels: Sequence[IntentLabel]) -> list[IntentLabel]:
        """Store labels of turns not labelled yet (one transaction); returns those written."""
        if not labels:
            return []
        with self._write() as c:
            wanted = [label.source_id for label in labels]
            labelled = set(
                c.execute(
                    select(t.intent_labels.c.source_id).where(
                        t.intent_labels.c.source_id.in_(wanted)
                    )
                ).scalars()
            )
            written: list[IntentLabel] = []
            for label in labels:
                if label.source_id in labelled:
                    continue
                labelled.add(label.source_id)
                written.append(label)
            if written:
                c.execute(insert(t.intent_labels), [_label_row(label) for label in written])
            return written


def _versions(c: Connection, target_id: str) -> list[GoalVersion]:
    rows = c.execute(
        select(t.goal_versions)
        .where(t.goal_versions.c.target_id == target_id)
        .order_by(t.goal_versions.c.version)
    ).mappings()
    return [_version(row) for row in rows]


def _version(row: RowMapping) -> GoalVersion:
    return GoalVersion(
        target_id=row["target_id"],
        version=row["version"],
        goal=row["goal"],
        goal_hash=row["goal_hash"],
        source_id=row["source_id"],
        reason=row["reason"],
        created_at=row["created_at"],
    )


def _version_row(version: GoalVersion) -> dict[str, object]:
    return {
        "target_id": version.target_id,
        "version": version.version,
        "goal": version.goal,
        "goal_hash": version.goal_hash,
        "source_id": version.source_id,
        "reason": version.reason,
        "created_at": version.created_at or utcnow(),
    }


def _label(row: RowMapping) -> IntentLabel:
    return IntentLabel(
        source_id=row["source_id"],
        target_id=row["target_id"],
        intent=row["intent"],
        confidence=row["confidence"],
        low_confidence=row["low_confidence"],
        goal_version=row["goal_version"],
        model=row["model"],
        prompt_version=row["prompt_version"],
        created_at=row["created_at"],
    )


def _label_row(label: IntentLabel) -> dict[str, object]:
    return {
        "source_id": label.source_id,
        "target_id": label.target_id,
        "intent": label.intent,
        "confidence": label.confidence,
        "low_confidence": label.low_confidence,
        "goal_version": label.goal_version,
        "model": label.model,
        "prompt_version": label.prompt_version,
        "created_at": label.created_at or utcnow(),
    }
