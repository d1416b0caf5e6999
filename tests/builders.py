"""Small, explicit builders of domain values for tests that are not about a format."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def conversation_bundle(
    conversation_id: str = "test:conv-1",
    *,
    messages: int = 3,
    project_hint: str | None = "invoice-service",
    parent: str | None = None,
    text_prefix: str = "message",
) -> ConversationBundle:
    """A conversation with alternating user/assistant messages, one tool call and a task."""
    msgs = tuple(
        Message(
            source_id=f"{conversation_id}:m{i}",
            role="user" if i % 2 == 0 else "assistant",
            kind="prompt" if i % 2 == 0 else "reply",
            text=f"{text_prefix} {i}",
            created_at=T0 + timedelta(minutes=i),
            parent_source_id=None if i == 0 else f"{conversation_id}:m{i - 1}",
            usage=None if i % 2 == 0 else Usage(input_tokens=100, output_tokens=20),
            model=None if i % 2 == 0 else "claude-test",
        )
        for i in range(messages)
    )
    call = ToolCall(
        source_id=f"{conversation_id}:call-1",
        name="Bash",
        arguments={"command": "pytest -q"},
        call_id="call-1",
        message_source_id=msgs[1].source_id if messages > 1 else None,
        status="error",
        result_text="1 failed, 3 passed",
        exit_code=1,
        created_at=T0 + timedelta(minutes=1, seconds=5),
        attributes={"durationMs": 1500},
    )
    event = TaskEvent(
        source_id=f"{conversation_id}:ev-1", kind="turn_complete", text="turn done", task_id="t1"
    )
    return ConversationBundle(
        conversation=Conversation(
            conversation_id=conversation_id,
            format="test",
            external_id=conversation_id.split(":")[-1],
            title="Fix rounding",
            kind="subagent" if parent else "main",
            parent_conversation_id=parent,
            project_hint=project_hint,
            cwd="/home/dev/projects/invoice-service",
            started_at=T0,
            ended_at=T0 + timedelta(minutes=messages),
            model="claude-test",
        ),
        messages=msgs,
        tool_calls=(call,),
        tasks=(Task(task_id=f"{conversation_id}:t1", title="Fix rounding", goal="round half up"),),
        task_events=(event,),
        subagent_run=SubagentRun(
            parent_tool_call_id="test:conv-1:call-1", agent_type="Explore", rounds=2
        )
        if parent
        else None,
        origin="/tmp/test.jsonl",
    )


def with_message_text(bundle: ConversationBundle, index: int, text: str) -> ConversationBundle:
    """A copy of ``bundle`` whose message ``index`` says ``text``."""
    messages = list(bundle.messages)
    messages[index] = dataclasses.replace(messages[index], text=text)
    return dataclasses.replace(bundle, messages=tuple(messages))


def with_tool_attributes(bundle: ConversationBundle, **attributes: object) -> ConversationBundle:
    """A copy of ``bundle`` whose tool call carries other execution metadata."""
    call = dataclasses.replace(bundle.tool_calls[0], attributes=attributes)
    return dataclasses.replace(bundle, tool_calls=(call, *bundle.tool_calls[1:]))
