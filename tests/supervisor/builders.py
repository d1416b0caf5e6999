"""A conversation builder for supervisor tests: messages, tool calls, tasks, in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from proctor.sources import prepare_bundle
from proctor.store import ConversationSummary, SqlStore, StoredTranscript
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    Task,
    TaskEvent,
    ToolCall,
    ToolStatus,
)
from tests.builders import T0


@dataclass
class Chat:
    """Appends events one minute apart; ids are ``<conversation>:m<n>``, ``…:c<n>``, ``…:e<n>``."""

    conversation_id: str = "sup:conv-1"
    title: str | None = "Fix rounding"
    messages: list[Message] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    events: list[TaskEvent] = field(default_factory=list)
    minutes: int = 0

    def _now(self) -> datetime:
        self.minutes += 1
        return T0 + timedelta(minutes=self.minutes)

    def _message(self, role: Any, kind: Any, text: str, name: str | None = None) -> str:
        source_id = f"{self.conversation_id}:{name or f'm{len(self.messages)}'}"
        self.messages.append(Message(source_id, role, kind, text, created_at=self._now()))
        return source_id

    def user(self, text: str, *, name: str | None = None) -> str:
        """A prompt typed by the user (``name`` replaces the positional part of its id)."""
        return self._message("user", "prompt", text, name)

    def assistant(self, text: str, *, name: str | None = None) -> str:
        """A reply by the agent (``name`` replaces the positional part of its id)."""
        return self._message("assistant", "reply", text, name)

    def tool(
        self,
        name: str,
        arguments: Any,
        output: str | None,
        *,
        status: ToolStatus = "ok",
        exit_code: int | None = None,
    ) -> str:
        """A tool call issued by the latest assistant message."""
        issuer = next((m.source_id for m in reversed(self.messages) if m.role == "assistant"), None)
        source_id = f"{self.conversation_id}:c{len(self.calls)}"
        at = self._now()
        self.calls.append(
            ToolCall(
                source_id,
                name,
                arguments,
                call_id=f"c{len(self.calls)}",
                message_source_id=issuer,
                status=status,
                result_text=output,
                exit_code=exit_code,
                created_at=at,
                completed_at=at,
            )
        )
        return source_id

    def start_task(self, task_id: str, title: str, goal: str | None = None) -> None:
        """A task starting now (ended by ``end_task``)."""
        self.tasks.append(Task(task_id, title, goal=goal, created_at=self._now()))

    def end_task(self, task_id: str) -> None:
        """The task completes now."""
        self.tasks = [
            Task(t.task_id, t.title, t.goal, "completed", t.created_at, self._now())
            if t.task_id == task_id
            else t
            for t in self.tasks
        ]

    def event(self, kind: str, text: str, *, task_id: str | None = None) -> str:
        """A task event."""
        source_id = f"{self.conversation_id}:e{len(self.events)}"
        self.events.append(
            TaskEvent(source_id, kind, text, task_id=task_id, created_at=self._now())
        )
        return source_id

    def bundle(self) -> ConversationBundle:
        """The conversation as an adapter would produce it."""
        return ConversationBundle(
            conversation=Conversation(
                conversation_id=self.conversation_id,
                format="test",
                external_id=self.conversation_id,
                title=self.title,
                project_hint="invoice-service",
                started_at=T0,
            ),
            messages=tuple(self.messages),
            tool_calls=tuple(self.calls),
            tasks=tuple(self.tasks),
            task_events=tuple(self.events),
        )


def stored(store: SqlStore, chat: Chat) -> StoredTranscript:
    """Import ``chat`` (redaction and bounds applied, as ``proctor ingest`` would) and read it back."""
    store.write_conversation(prepare_bundle(chat.bundle()))
    return store.transcript(chat.conversation_id)


def in_memory(chat: Chat) -> StoredTranscript:
    """``chat`` prepared as for import but not stored: for tests that build many windows."""
    bundle = prepare_bundle(chat.bundle()).bundle
    summary = ConversationSummary(
        conversation=bundle.conversation,
        project="invoice-service",
        messages=len(bundle.messages),
        tool_calls=len(bundle.tool_calls),
        subagents=0,
        redactions=0,
        origin=None,
        imported_at=T0,
        updated_at=T0,
    )
    return StoredTranscript(
        summary, bundle.messages, bundle.tool_calls, bundle.tasks, bundle.task_events, None, ()
    )
