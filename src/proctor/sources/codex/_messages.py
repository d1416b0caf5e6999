"""The messages of one Codex session: two layers reconciled, usage placed, ids assigned.

Codex writes most visible text twice: as a ``response_item`` message (the model-visible
history, the primary layer) and as an ``event_msg`` mirror (``user_message`` /
``agent_message``, or ``item_completed`` in newer builds). Mirrors are matched to primary
messages by text and dropped; a mirror with no primary twin is imported, once even when
both mirror layers carry it.

Codex records every typed prompt as a ``user_message`` mirror, so a user-role history
item without one (and without a known injection marker) is harness context, not a prompt.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Literal

from proctor.sources.codex._records import Where
from proctor.transcript import Message, MessageKind, Role, Usage

Layer = Literal["item", "event", "item_completed", "compacted"]
"""Where a draft came from: the history item, one of the two mirror layers, or compaction."""


@dataclass(slots=True, eq=False)
class MessageDraft:
    """A message being collected; becomes a ``Message`` when the session is complete."""

    role: Role
    kind: MessageKind | None
    """None for user history items, classified once every mirror has been seen."""
    text: str
    where: Where
    layer: Layer
    keys: tuple[str, ...] = ()
    """Comparison keys (see ``mirror_key``) under which a mirror may match this message."""
    label: str = ""
    """Name used in positional ids; the role unless set."""
    preferred_id: str | None = None
    injected: bool = False
    model: str | None = None
    author: str | None = None
    derived: bool = False
    attributes: dict[str, Any] = field(default_factory=dict)
    usage: Usage | None = None
    has_twin: bool = False
    """For history items: a mirror was matched to this message."""
    twin: MessageDraft | None = None
    """For mirrors: the message this one duplicates."""
    source_id: str | None = None
    """Set when the message is built."""

    @property
    def is_mirror(self) -> bool:
        """True for drafts read from the event layers."""
        return self.layer in ("event", "item_completed")


class IdRegistry:
    """Hands out unique source ids within one conversation, preferring the format's own."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self.collisions = 0
        """Preferred ids refused because an earlier source already had them."""

    def claim(self, preferred: str | None, fallback: str) -> str:
        """``preferred`` when it is free, else ``fallback`` (made unique if needed)."""
        if preferred is not None:
            if preferred not in self._used:
                self._used.add(preferred)
                return preferred
            self.collisions += 1
        candidate, number = fallback, 1
        while candidate in self._used:
            number += 1
            candidate = f"{fallback}#{number}"
        self._used.add(candidate)
        return candidate


def _plus(first: Usage | None, second: Usage | None) -> Usage | None:
    if first is None:
        return second
    return first if second is None else first + second


class MessageBook:
    """Collects message drafts of one session and turns them into messages."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._drafts: list[MessageDraft] = []
        self._window: list[MessageDraft] = []
        """Agent messages written since the last usage report: the current response."""
        self._turn_replies: list[MessageDraft] = []
        self._pending: Usage | None = None
        """Usage of responses that produced no agent message yet (tool calls only)."""

    def add(self, draft: MessageDraft) -> None:
        """Record a draft in document order."""
        self._drafts.append(draft)
        if draft.role == "assistant" and draft.kind == "reply":
            self._window.append(draft)
            self._turn_replies.append(draft)

    @property
    def latest_reply(self) -> MessageDraft | None:
        """The agent message of the response in progress, if it wrote one."""
        return self._window[-1] if self._window else None

    def add_usage(self, usage: Usage) -> None:
        """Charge one response's usage to the agent message it produced.

        A response that wrote no message (only tool calls) passes its usage on to the next
        agent message of the turn, so every token lands on exactly one message.
        """
        if self._window:
            target = self._window[-1]
            target.usage = _plus(_plus(target.usage, self._pending), usage)
            self._pending = None
            self._window.clear()
        else:
            self._pending = _plus(self._pending, usage)

    def close_turn(self) -> None:
        """End of a turn: usage still pending goes to the turn's last agent message."""
        if self._pending is not None and self._turn_replies:
            last = self._turn_replies[-1]
            last.usage = _plus(last.usage, self._pending)
            self._pending = None
        self._turn_replies.clear()
        self._window.clear()

    def build(self, ids: IdRegistry) -> list[tuple[Message, str | None]]:
        """The session's messages in order, each with the turn it belongs to."""
        self._settle_pending_usage()
        mirrors = [draft for draft in self._drafts if draft.is_mirror]
        unmatched = self._match_mirrors(mirrors)
        kept = self._collapse_mirrors(unmatched)
        self._classify_user_items(has_user_mirrors=any(m.role == "user" for m in mirrors))
        for mirror in mirrors:
            if mirror.twin is not None and mirror.usage is not None:
                mirror.twin.usage = _plus(mirror.twin.usage, mirror.usage)

        built: list[tuple[Message, str | None]] = []
        positions: dict[tuple[str, str], int] = defaultdict(int)
        previous: str | None = None
        for draft in self._drafts:
            if draft.is_mirror and draft not in kept:
                continue
            scope = draft.where.turn_id or "session"
            label = draft.label or draft.role
            index = positions[scope, label]
            positions[scope, label] = index + 1
            source_id = ids.claim(
                draft.preferred_id, f"codex:{self._session_id}:{scope}:{label}:{index}"
            )
            draft.source_id = source_id
            message = Message(
                source_id=source_id,
                role=draft.role,
                kind=draft.kind or "prompt",
                text=draft.text,
                created_at=draft.where.time,
                parent_source_id=previous,
                derived=draft.derived,
                author=draft.author,
                model=draft.model,
                usage=draft.usage,
                attributes=draft.attributes,
            )
            built.append((message, draft.where.turn_id))
            previous = source_id
        return built

    def _settle_pending_usage(self) -> None:
        if self._pending is None:
            return
        replies = [d for d in self._drafts if d.role == "assistant" and d.kind == "reply"]
        if replies:
            replies[-1].usage = _plus(replies[-1].usage, self._pending)
            self._pending = None

    def _match_mirrors(self, mirrors: list[MessageDraft]) -> list[MessageDraft]:
        """Pair each mirror with an unpaired history message of equal text; return the rest."""
        index: dict[tuple[str, str], deque[MessageDraft]] = defaultdict(deque)
        for draft in self._drafts:
            if draft.layer == "item" and draft.role in ("user", "assistant"):
                for key in draft.keys:
                    index[draft.role, key].append(draft)
        unmatched: list[MessageDraft] = []
        for mirror in mirrors:
            for key in mirror.keys:
                queue = index.get((mirror.role, key))
                while queue and queue[0].has_twin:
                    queue.popleft()
                if queue:
                    primary = queue.popleft()
                    primary.has_twin = True
                    mirror.twin = primary
                    break
            else:
                unmatched.append(mirror)
        return unmatched

    @staticmethod
    def _collapse_mirrors(unmatched: list[MessageDraft]) -> set[MessageDraft]:
        """Keep one message per text when both mirror layers carry it.

        Within a turn, the n-th mirror of a text in one layer is the same message as the
        n-th mirror of that text in the other layer.
        """
        kept: dict[tuple[str | None, str, str], list[MessageDraft]] = defaultdict(list)
        seen: dict[tuple[str | None, str, str, str], int] = defaultdict(int)
        for mirror in unmatched:
            # The last key is the narrowest (first text part): the one both layers share.
            group_key = (mirror.where.turn_id, mirror.role, mirror.keys[-1] if mirror.keys else "")
            seen[(*group_key, mirror.layer)] += 1
            count = seen[(*group_key, mirror.layer)]
            group = kept[group_key]
            if count > len(group):
                group.append(mirror)
            else:
                mirror.twin = group[count - 1]
        return {mirror for group in kept.values() for mirror in group}

    def _classify_user_items(self, *, has_user_mirrors: bool) -> None:
        for draft in self._drafts:
            if draft.kind is not None:
                continue
            if draft.is_mirror:
                draft.kind = "injected" if draft.injected else "prompt"
            elif draft.injected:
                draft.kind = "injected"
            elif draft.has_twin or not has_user_mirrors:
                draft.kind = "prompt"
            else:
                draft.kind = "injected"
