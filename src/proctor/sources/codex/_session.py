"""One Codex session being read: routes each record to the part that owns it.

Messages go to ``MessageBook``, tool calls to ``ToolLedger``, turns and harness events to
``TurnLog``, token snapshots to ``TokenMeter``. What the parent learns about its
sub-agents from collaboration events is kept as ``ChildLink``s; ``_bundle`` assembles
the ``ConversationBundle``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from proctor.sources.codex._header import SessionHeader
from proctor.sources.codex._messages import MessageBook, MessageDraft
from proctor.sources.codex._records import (
    Where,
    as_dict,
    as_int,
    as_str,
    content_parts,
    image_placeholder,
    is_injected,
    mirror_key,
    small_attributes,
    turn_id_of,
)
from proctor.sources.codex._tokens import TokenMeter
from proctor.sources.codex._tools import CALL_ITEMS, EXECUTION_EVENTS, OUTPUT_ITEMS, ToolLedger
from proctor.sources.codex._turns import TurnLog

QUIET_ITEMS = frozenset(
    {
        "reasoning",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "context_compaction",
        "other",
    }
)
"""History items that are known and deliberately not imported (reasoning: SPEC ING-3)."""

_TOOL_ITEMS_COMPLETED = frozenset({"CommandExecution", "McpToolCall", "FileChange"})


@dataclass(slots=True)
class ChildLink:
    """What a parent session's collaboration events say about one sub-agent."""

    call_id: str | None = None
    nickname: str | None = None
    role: str | None = None
    prompt: str | None = None
    status: Any = None
    """Codex's agent status: a word (``running``) or ``{completed: message}``."""


class SessionReader:
    """Accumulates one session's records; call ``accept`` per record in file order."""

    def __init__(self, header: SessionHeader, origin: str) -> None:
        session_id = header.session_id
        self.header = header
        self.origin = origin
        self.messages = MessageBook(session_id)
        self.tools = ToolLedger(session_id)
        self.turns = TurnLog(session_id)
        self.tokens = TokenMeter()
        self.children: dict[str, ChildLink] = {}
        self.title: str | None = None
        self.models: list[str] = []
        self.ended_at: datetime | None = None
        self.compactions = 0
        self._turn: str | None = None
        self._model: str | None = None

    def accept(
        self,
        kind: str,
        payload: dict[str, Any],
        line: int,
        time: datetime | None,
        ordinal: int | None,
    ) -> str | None:
        """Read one record; return ``"<kind>:<type>"`` when its item type is unknown."""
        if time is not None and (self.ended_at is None or time > self.ended_at):
            self.ended_at = time
        if kind == "response_item":
            return self._history_item(payload, self._where(payload, line, time, ordinal))
        if kind == "event_msg":
            self._event(payload, line, time, ordinal)
        elif kind == "turn_context":
            self._turn_context(payload)
        elif kind == "compacted":
            self._compacted(payload, self._where(payload, line, time, ordinal))
        return None  # world_state and inter-agent metadata are baselines, not history

    def _where(
        self, payload: dict[str, Any], line: int, time: datetime | None, ordinal: int | None
    ) -> Where:
        return Where(line, time, turn_id_of(payload) or self._turn, ordinal)

    def _preferred_id(self, item_id: Any, where: Where) -> str | None:
        session_id = self.header.session_id
        if as_str(item_id):
            return f"codex:{session_id}:item:{item_id}"
        if where.ordinal is not None:
            return f"codex:{session_id}:ordinal:{where.ordinal}"
        return None

    def _turn_context(self, payload: dict[str, Any]) -> None:
        turn_id = as_str(payload.get("turn_id"))
        if turn_id:
            self._turn = turn_id
            self.turns.context(turn_id, payload)
        model = as_str(payload.get("model"))
        if model:
            self._model = model
            if model not in self.models:
                self.models.append(model)
        self.header.cwd = self.header.cwd or as_str(payload.get("cwd"))

    def _history_item(self, payload: dict[str, Any], where: Where) -> str | None:
        item_type = payload.get("type")
        if item_type == "message":
            return self._history_message(payload, where)
        if item_type in CALL_ITEMS:
            self.tools.call(str(item_type), payload, where, self.messages.latest_reply)
        elif item_type in OUTPUT_ITEMS:
            self.tools.output(payload, where)
        elif item_type == "agent_message":
            # Inter-agent traffic: input to this agent from another one, not a person.
            self.messages.add(
                MessageDraft(
                    "user",
                    "injected",
                    "\n".join(content_parts(payload.get("content"))),
                    where,
                    "item",
                    label="agent_message",
                    preferred_id=self._preferred_id(payload.get("id"), where),
                    author=as_str(payload.get("author")),
                    attributes=small_attributes({"recipient": payload.get("recipient")}),
                )
            )
        elif item_type not in QUIET_ITEMS:
            return f"response_item:{item_type}"
        return None

    def _history_message(self, payload: dict[str, Any], where: Where) -> str | None:
        role = payload.get("role")
        parts = content_parts(payload.get("content"))
        text = "\n".join(parts)
        preferred = self._preferred_id(payload.get("id"), where)
        if role in ("developer", "system"):
            draft = MessageDraft(role, "instructions", text, where, "item", preferred_id=preferred)
        elif role == "user":
            draft = MessageDraft(
                "user",
                None,
                text,
                where,
                "item",
                _keys(parts),
                preferred_id=preferred,
                injected=is_injected(parts),
            )
        elif role == "assistant":
            draft = MessageDraft(
                "assistant",
                "reply",
                text,
                where,
                "item",
                _keys(parts),
                preferred_id=preferred,
                model=self._model,
                attributes=small_attributes({"phase": payload.get("phase")}),
            )
        else:
            return f"message role:{role}"
        self.messages.add(draft)
        return None

    def _compacted(self, payload: dict[str, Any], where: Where) -> None:
        """One derived summary; ``replacement_history`` repeats old history and is not read."""
        self.compactions += 1
        text = as_str(payload.get("message")) or "[context compacted; no summary text was recorded]"
        window_id = as_str(payload.get("window_id"))
        replaced = payload.get("replacement_history")
        attributes = {
            "window_number": as_int(payload.get("window_number")),
            "replaced_items": len(replaced) if isinstance(replaced, list) else None,
        }
        self.messages.add(
            MessageDraft(
                "assistant",
                "summary",
                text,
                where,
                "compacted",
                label="summary",
                preferred_id=None
                if window_id is None
                else f"codex:{self.header.session_id}:compaction:{window_id}",
                derived=True,
                attributes=small_attributes(attributes),
            )
        )

    def _event(
        self, payload: dict[str, Any], line: int, time: datetime | None, ordinal: int | None
    ) -> None:
        event_type = payload.get("type")
        if event_type == "task_started":
            self.messages.close_turn()
            self._turn = as_str(payload.get("turn_id")) or self._turn
            self.turns.started(self._turn, payload, self._where(payload, line, time, ordinal))
            return
        where = self._where(payload, line, time, ordinal)
        if event_type in ("task_complete", "turn_aborted"):
            if event_type == "task_complete":
                self.turns.completed(where.turn_id, payload, where)
            else:
                self.turns.aborted_turn(where.turn_id, payload, where)
            self.messages.close_turn()
            self._turn = None
        elif event_type == "token_count":
            usage = self.tokens.observe(payload.get("info"))
            if usage is not None:
                self.messages.add_usage(usage)
        elif event_type in ("user_message", "agent_message"):
            self._mirror(event_type, payload, where)
        elif event_type == "item_completed":
            self._completed_item(as_dict(payload.get("item")), where)
        elif event_type in EXECUTION_EVENTS:
            self.tools.execution_event(str(event_type), payload, where)
        elif isinstance(event_type, str) and event_type.startswith("collab_"):
            self._collab(event_type, payload)
        elif event_type == "thread_name_updated":
            self.title = as_str(payload.get("thread_name")) or self.title
        else:
            self.turns.harness_event(event_type, payload, where)

    def _mirror(self, event_type: str, payload: dict[str, Any], where: Where) -> None:
        message = payload.get("message")
        text = message if isinstance(message, str) else ""
        if event_type == "user_message":
            images = [
                image_placeholder({"image_url": image}) for image in payload.get("images") or ()
            ]
            images += [
                f"[image: {path}]"
                for path in payload.get("local_images") or ()
                if isinstance(path, str)
            ]
            full = "\n".join([text, *images]) if text else "\n".join(images)
            self.messages.add(
                MessageDraft(
                    "user",
                    None,
                    full,
                    where,
                    "event",
                    (mirror_key(text),),
                    injected=is_injected([text]),
                )
            )
        else:
            self.messages.add(
                MessageDraft(
                    "assistant",
                    "reply",
                    text,
                    where,
                    "event",
                    (mirror_key(text),),
                    model=self._model,
                    attributes=small_attributes(
                        {"phase": payload.get("phase"), "layer": "event_msg"}
                    ),
                )
            )

    def _completed_item(self, item: dict[str, Any], where: Where) -> None:
        """Newer builds describe finished items in ``item_completed`` events."""
        item_type = item.get("type")
        if item_type in ("UserMessage", "AgentMessage"):
            parts = content_parts(item.get("content"))
            text = "\n".join(parts)
            user = item_type == "UserMessage"
            self.messages.add(
                MessageDraft(
                    "user" if user else "assistant",
                    None if user else "reply",
                    text,
                    where,
                    "item_completed",
                    _keys(parts),
                    preferred_id=self._preferred_id(item.get("id"), where),
                    injected=user and is_injected(parts),
                    model=None if user else self._model,
                    attributes=small_attributes(
                        {"phase": item.get("phase"), "layer": "item_completed"}
                    ),
                )
            )
        elif item_type in _TOOL_ITEMS_COMPLETED:
            self.tools.execution_event(str(item_type), item, where)
        elif item_type == "Plan" and as_str(item.get("text")):
            self.turns.event("plan", item["text"], where)

    def _collab(self, event_type: str, payload: dict[str, Any]) -> None:
        """Collaboration events: which call spawned which sub-agent, and how it ended."""
        call_id = as_str(payload.get("call_id"))
        if event_type == "collab_agent_spawn_end":
            child_id = as_str(payload.get("new_thread_id"))
            if child_id is None:
                return
            link = self.children.setdefault(child_id, ChildLink())
            link.call_id = call_id
            link.nickname = as_str(payload.get("new_agent_nickname"))
            link.role = as_str(payload.get("new_agent_role"))
            link.prompt = as_str(payload.get("prompt"))
            link.status = payload.get("status") or link.status
            self.tools.note(call_id, {"child_conversation_id": f"codex:{child_id}"})
            return
        updates: list[tuple[Any, Any]] = [
            (payload.get("receiver_thread_id"), payload.get("status"))
        ]
        for entry in payload.get("agent_statuses") or ():
            if isinstance(entry, dict):
                updates.append((entry.get("thread_id"), entry.get("status")))
        updates += list(as_dict(payload.get("statuses")).items())
        for child_id, status in updates:
            if as_str(child_id) and status:
                self.children.setdefault(child_id, ChildLink()).status = status
                self.tools.note(call_id, {"child_conversation_id": f"codex:{child_id}"})


def _keys(parts: list[str]) -> tuple[str, ...]:
    """Keys a mirror may match: the whole text, or its first part (mirrors omit images)."""
    if not parts:
        return ("",)
    whole, first = mirror_key("\n".join(parts)), mirror_key(parts[0])
    return (whole,) if whole == first else (whole, first)
