"""What a review run reads and where it runs (REV-1, REV-5 … REV-7): decisions, no database.

A run's manifest holds the sources of its scope and time range that are new or changed
since their checkpoints (a source is pending while any of the run's stages lacks a
checkpoint at its current fingerprint; a reanalyze run takes every source of the range),
in conversation order, cut into batches. One execution slot per scope: a live holder is
never displaced, a stale one (its process gone, or silent too long on another host) is.

These functions decide; the store reads the plain values they need and executes what
they decided inside its transaction (it builds the manifest in one statement from
:class:`ManifestRule` and :func:`batch_number`'s rule; a test compares that statement's
manifest with :func:`plan_manifest`). They live here, below the store, because the store
must call them inside its transactions and may not import ``proctor.review``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

ReviewTrigger = Literal["manual", "scheduled", "heartbeat"]
"""What started a review run, and so its result: a person, a schedule, the heartbeat."""

SLOT_STALE_AFTER = timedelta(minutes=2)
"""A slot whose holder has not beaten for this long (on another host) is free again."""


# -- the manifest -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ManifestRule:
    """Which sources enter a run's manifest: the store turns it into its selection."""

    project_id: str | None
    """The scope's project, or None for every project."""
    time_from: datetime | None
    time_to: datetime | None
    """A source's time (when it happened, else when its conversation started) must be
    ``>= time_from`` and ``< time_to``; a source without a time is outside any bound."""
    pending_stages: tuple[str, ...] | None
    """A source enters while one of these stages lacks a checkpoint at its fingerprint;
    None (a reanalyze run, or no stage): every source of the range enters."""


def manifest_rule(
    project_id: str | None,
    time_from: datetime | None,
    time_to: datetime | None,
    stages: Sequence[str],
    *,
    reanalyze: bool,
) -> ManifestRule:
    """The rule of a run of this scope and range advancing ``stages``."""
    pending = None if reanalyze or not stages else tuple(stages)
    return ManifestRule(project_id, time_from, time_to, pending)


@dataclass(frozen=True, slots=True)
class ManifestCandidate:
    """A stored source as the manifest sees it."""

    source_type: str
    source_id: str
    conversation_id: str
    conversation_started: datetime | None
    seq: int | None
    """Its place in the conversation (None when it has no content row)."""
    project_id: str | None
    when: datetime | None
    fingerprint: str
    checkpoints: Mapping[str, str]
    """The fingerprint of this source's checkpoint for the run's scope, by stage."""
    size: int
    """Characters of its content (0 when it has none)."""


def enters_manifest(candidate: ManifestCandidate, rule: ManifestRule) -> bool:
    """Whether the source is in the rule's scope and range and new or changed since its
    checkpoints (or the rule reanalyzes)."""
    if rule.project_id is not None and candidate.project_id != rule.project_id:
        return False
    if rule.time_from is not None and (candidate.when is None or candidate.when < rule.time_from):
        return False
    if rule.time_to is not None and (candidate.when is None or candidate.when >= rule.time_to):
        return False
    if not rule.pending_stages:
        return True
    return any(
        candidate.checkpoints.get(stage) != candidate.fingerprint for stage in rule.pending_stages
    )


def batch_number(position: int, chars: int, batch_size: int, batch_chars: int) -> int:
    """The batch of the entry at ``position`` (from 0) when the entries up to and including
    it hold ``chars`` characters, counting one more per entry: a batch closes after
    ``batch_size`` entries or about ``batch_chars`` characters, whichever comes first."""
    return max(position // batch_size, (chars - 1) // batch_chars)


def manifest_order(candidate: ManifestCandidate) -> tuple[object, ...]:
    """Conversation order: conversations by start (unknown last) then id, a conversation's
    sources by their place in it, then by type and id."""
    started = candidate.conversation_started
    return (
        started is None,
        started or datetime.min.replace(tzinfo=UTC),
        candidate.conversation_id,
        candidate.seq or 0,
        candidate.source_type,
        candidate.source_id,
    )


def plan_manifest(
    candidates: Sequence[ManifestCandidate], rule: ManifestRule, batch_size: int, batch_chars: int
) -> list[tuple[ManifestCandidate, int]]:
    """The manifest: the entering candidates in conversation order, each with its batch
    number (its position is its index)."""
    entering = sorted(
        (candidate for candidate in candidates if enters_manifest(candidate, rule)),
        key=manifest_order,
    )
    planned = []
    chars = 0
    for position, candidate in enumerate(entering):
        chars += candidate.size + 1
        planned.append((candidate, batch_number(position, chars, batch_size, batch_chars)))
    return planned


# -- the execution slot -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SlotHolder:
    """A slot row that names a run, as the store holds it."""

    slot: int
    run_id: str
    owner: str | None
    """``host:pid`` of the process holding it."""
    heartbeat_at: datetime | None
    scope_key: str | None
    """The scope of the run it holds (None when that run is gone)."""


def holder_alive(
    owner: str | None,
    heartbeat_at: datetime | None,
    now: datetime,
    *,
    host: str,
    process_exists: Callable[[int], bool],
) -> bool:
    """Whether a slot's holder still holds it: a process of this ``host`` while it exists
    (``process_exists`` asks the system), one of another host while it beat within
    ``SLOT_STALE_AFTER``. A slot without an owner is free."""
    if owner is None:
        return False
    owner_host, _, pid = owner.rpartition(":")
    if owner_host == host and pid.isdigit():
        return process_exists(int(pid))
    return heartbeat_at is not None and now - heartbeat_at < SLOT_STALE_AFTER


@dataclass(frozen=True, slots=True)
class SlotChoice:
    """Where a run may execute: ``slot`` (taken over when the run already holds it), or the
    live ``busy`` holder that keeps it out."""

    slot: int | None
    busy: SlotHolder | None = None
    already_running_in: str | None = None
    """The live process already executing this very run (it is not handed over)."""


def choose_slot(
    run_id: str,
    scope_key: str | None,
    live: Sequence[SlotHolder],
    capacity: int,
    *,
    owner: str,
    handed_by: str | None,
) -> SlotChoice:
    """The slot ``run_id`` (of ``scope_key``) may take, given the ``live`` holders in slot
    order and ``capacity`` slots. A live holder is never displaced: a run it already holds
    is taken over only when handed over (``handed_by``: its holder or this ``owner``); a
    live run of the same scope, or every slot live, keeps the run out. Otherwise the
    lowest slot no live process holds (a stale holder's slot is free)."""
    for holder in live:
        if holder.run_id == run_id:
            if handed_by is None or holder.owner not in (handed_by, owner):
                return SlotChoice(None, holder, holder.owner)
            return SlotChoice(holder.slot)
    for holder in live:
        if holder.scope_key == scope_key:
            return SlotChoice(None, holder)
    if len(live) >= capacity:
        return SlotChoice(None, live[0])
    taken = {holder.slot for holder in live}
    return SlotChoice(min(n for n in range(1, capacity + 1) if n not in taken))


def blocking_holder(
    scope_key: str | None, live: Sequence[SlotHolder], capacity: int
) -> SlotHolder | None:
    """The live holder of the slot a run of ``scope_key`` would need (without a scope: any
    live holder), or None when it could start now."""
    if not live:
        return None
    if scope_key is None:
        return live[0]
    for holder in live:
        if holder.scope_key == scope_key:
            return holder
    return live[0] if len(live) >= capacity else None


# -- saving a batch -----------------------------------------------------------------------

SourceKey = tuple[str, str]
"""(source_type, source_id)."""


@dataclass(frozen=True, slots=True)
class EntryChanges:
    """How a saved batch moves its manifest entries (by position in the manifest)."""

    state: str
    """What the entries read become: ``done`` with a done batch, else still ``pending``."""
    read: list[tuple[int, str]]
    """(position, fingerprint actually read) of each entry read."""
    omitted: list[int]
    """Positions of the entries whose source vanished with its conversation."""


def entry_changes(
    positions: Mapping[SourceKey, int],
    read: Mapping[SourceKey, str],
    omitted: Sequence[SourceKey],
    batch_state: str,
) -> EntryChanges:
    """The entry changes of a batch saved as ``batch_state``: an entry read moves to the
    version read (done only with a done batch, so a failed batch is read again); a source
    the batch does not hold has no entry to move."""
    return EntryChanges(
        "done" if batch_state == "done" else "pending",
        [(positions[key], fingerprint) for key, fingerprint in read.items() if key in positions],
        [positions[key] for key in omitted if key in positions],
    )
