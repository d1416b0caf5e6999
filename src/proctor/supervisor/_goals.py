"""The goal model (SPEC GOAL-1): user turns, goal text and hash, and how versions follow.

Goal ≠ plan, re-plan ≠ re-goal. Only what a person typed can set or change the goal:
version 1 comes from the first typed user message of a main conversation; later
versions only from user turns whose intent label (``_intent``) says the user re-goaled.
Assistant messages, tool calls, plan and to-do updates, harness-injected text,
compaction summaries and notices never create a version. Sub-agent and compaction
conversations have no user turns: their "user" is the parent agent or the harness, and a
prompt one agent writes for another is a plan.

Everything here is pure: the same messages and labels always give the same versions.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from proctor.rules import Trace
from proctor.store import GoalReason, GoalVersion, IntentLabel
from proctor.transcript import ConversationKind, Message, Task

GOAL_CHARS = 4000
"""Longest goal text kept; longer texts keep their start and their latest changes."""
CHANGE_CHARS = 1000
"""Longest excerpt of a user turn added to the goal by a refine, expand or correct."""
_CHANGE_PREFIX: Mapping[str, str] = {"refine": "Refined", "expand": "Also", "correct": "Corrected"}
_ELISION = "\n…\n"
_WORDLIKE = re.compile(r"\w")


def normalise_goal(text: str) -> str:
    """Unicode-normalised, case-folded, single-spaced text: what the hash is taken of."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def goal_hash(text: str) -> str:
    """Stable 32-hex-digit hash of the normalised goal text."""
    return hashlib.blake2b(normalise_goal(text).encode(), digest_size=16).hexdigest()


def bounded_goal(text: str, limit: int = GOAL_CHARS) -> str:
    """``text`` within ``limit`` characters: its start and its end, the middle elided."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = (limit - len(_ELISION)) // 2
    tail = limit - len(_ELISION) - head
    return text[:head].rstrip() + _ELISION + text[-tail:].lstrip()


def is_user_turn(message: Message) -> bool:
    """True for a message a person typed (not injected, summarised, a notice or a result)."""
    return (
        message.role == "user"
        and message.kind == "prompt"
        and not message.derived
        and message.on_active_branch
        and _WORDLIKE.search(message.text) is not None
    )


def user_turns(messages: Sequence[Message], kind: ConversationKind = "main") -> list[Message]:
    """The typed user turns of a conversation, in order (none outside main conversations)."""
    if kind != "main":
        return []
    return [message for message in messages if is_user_turn(message)]


@dataclass(frozen=True, slots=True)
class TurnContext:
    """A user turn with what preceded it: the agent's last reply."""

    turn: Message
    assistant: Message | None
    """The last assistant reply with text before the turn, if any."""


def turns_in_context(
    messages: Sequence[Message], kind: ConversationKind = "main"
) -> Iterator[TurnContext]:
    """Each user turn with the assistant reply before it."""
    if kind != "main":
        return
    assistant: Message | None = None
    for message in messages:
        if not message.on_active_branch:
            continue
        if message.role == "assistant" and message.kind == "reply" and message.text.strip():
            assistant = message
        elif is_user_turn(message):
            yield TurnContext(message, assistant)


def first_version(target_id: str, turn: Message, now: datetime) -> GoalVersion:
    """Version 1: the goal is what the user first asked for."""
    return _version(target_id, 1, bounded_goal(turn.text), turn.source_id, "initial", now)


def next_version(
    current: GoalVersion, turn: Message, label: IntentLabel, now: datetime
) -> GoalVersion | None:
    """The version a labelled user turn creates, or None when the goal stays as it is.

    ``continue`` and low-confidence labels keep the goal. ``new_goal`` replaces it;
    ``refine``/``expand``/``correct`` append an excerpt of the turn to it; ``cancel``
    closes it (same text, reason ``cancel``). After a cancel, the next turn that is not
    itself a cancel starts a new goal whatever its label: the old one is gone.
    """
    number = current.version + 1
    text = bounded_goal(turn.text)
    if current.closed:
        if label.intent == "cancel":
            return None
        return _version(current.target_id, number, text, turn.source_id, "new_goal", now)
    if label.low_confidence or label.intent == "continue":
        return None
    if label.intent == "cancel":
        return _version(current.target_id, number, current.goal, turn.source_id, "cancel", now)
    if label.intent != "new_goal":
        change = bounded_goal(turn.text, CHANGE_CHARS)
        text = bounded_goal(f"{current.goal}\n{_CHANGE_PREFIX[label.intent]}: {change}")
    if goal_hash(text) == current.goal_hash:
        return None
    return _version(current.target_id, number, text, turn.source_id, label.intent, now)


def derive_versions(
    target_id: str,
    turns: Sequence[Message],
    labels: Mapping[str, IntentLabel],
    stored: Sequence[GoalVersion],
    now: datetime,
) -> list[GoalVersion]:
    """The versions the turns after the latest stored version create, in order, each dated
    from the turn that set it (``now`` for a turn without a time).

    Derivation starts after the last turn that already produced a stored version and
    stops at the first turn not labelled yet (a later turn cannot be judged before it).
    """
    current = stored[-1] if stored else None
    covered = {version.source_id for version in stored}
    start = 0
    for position, turn in enumerate(turns):
        if turn.source_id in covered:
            start = position + 1
    created: list[GoalVersion] = []
    for turn in turns[start:]:
        when = turn.created_at or now  # a version dates from the turn that set it
        if current is None:
            current = first_version(target_id, turn, when)
            created.append(current)
            continue
        label = labels.get(turn.source_id)
        if label is None:
            break
        following = next_version(current, turn, label, when)
        if following is not None:
            created.append(following)
            current = following
    return created


def task_version(task: Task, source_id: str | None, now: datetime) -> GoalVersion:
    """A task's goal: its subject and description, as version 1."""
    parts = [task.title.strip()]
    if task.goal and task.goal.strip() and task.goal.strip() != parts[0]:
        parts.append(task.goal.strip())
    return _version(task.task_id, 1, bounded_goal("\n".join(parts)), source_id, "task", now)


def _version(
    target_id: str, number: int, text: str, source_id: str | None, reason: GoalReason, now: datetime
) -> GoalVersion:
    return GoalVersion(target_id, number, text, goal_hash(text), source_id, reason, now)


@dataclass(frozen=True, slots=True)
class GoalSpan:
    """The events of a trace during which one goal version was in force."""

    version: GoalVersion
    start: int
    """Index of the first event (the user message that set the version, when known)."""
    end: int
    """Index after the last event."""
    base: int
    """Where the goal's chain began: the span start of the latest first version or new
    goal at or before this one (a refinement keeps the requirements before it)."""
    source: Message | None
    """The user message that set the version, when it is in the trace."""


def goal_spans(trace: Trace, goals: Sequence[GoalVersion]) -> list[GoalSpan]:
    """Each goal version with the trace events it governs, in version order.

    A version whose message is not in the trace (another branch, a task's goal) takes
    effect where the version before it did; version 1 then governs from the start.
    """
    positions: dict[str, tuple[int, Message]] = {
        event.message.source_id: (event.index, event.message)
        for event in trace.events
        if event.message is not None
    }
    placed: list[tuple[GoalVersion, int, Message | None]] = []
    start = 0
    for version in sorted(goals, key=lambda v: v.version):
        found = positions.get(version.source_id) if version.source_id is not None else None
        if found is not None and found[0] >= start:
            start = found[0]
        placed.append((version, start, None if found is None else found[1]))
    spans: list[GoalSpan] = []
    base = 0
    for position, (version, start, source) in enumerate(placed):
        end = placed[position + 1][1] if position + 1 < len(placed) else len(trace.events)
        if version.reason in ("initial", "new_goal", "task"):
            base = start
        spans.append(GoalSpan(version, start, end, base, source))
    return spans
