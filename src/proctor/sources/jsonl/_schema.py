"""The lines of Proctor's JSON Lines format, as pydantic models (docs/proctor-jsonl.md).

Each line is one self-contained event: it names its ``type`` and its ``conversation_id``
and is valid on its own, so the same lines can be written to a file or streamed to the
HTTP intake. Unknown fields are rejected (``extra="forbid"``) so a typo is reported
instead of silently dropped, and values are strict: a number is not a string, a time
must carry its timezone.

Hidden reasoning has no field here on purpose (SPEC ING-3): ``thinking``, ``reasoning``
and similar fields are rejected with a message saying they are never stored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    StringConstraints,
    field_validator,
)

from proctor.sources._fit import MAX_COUNT

HIDDEN_REASONING_FIELDS = frozenset(
    {
        "thinking",
        "thoughts",
        "reasoning",
        "reasoning_content",
        "redacted_thinking",
        "encrypted_content",
        "signature",
    }
)
"""Field names that would carry hidden reasoning; never accepted, never stored."""

ProducerId = Annotated[
    str, StringConstraints(strict=True, min_length=1, max_length=256, pattern=r"^[^\x00-\x1f]+$")
]
"""An id chosen by the producer: 1 to 256 characters, no control characters."""

Count = Annotated[int, Field(strict=True, ge=0, le=MAX_COUNT)]
Time = AwareDatetime
Attributes = dict[str, Any]

MessageRole = Literal["user", "assistant", "system", "developer", "tool"]
MessageKindName = Literal["prompt", "reply", "injected", "instructions", "summary", "notice"]
ResultStatus = Literal["ok", "error", "interrupted", "rejected"]
TaskStatus = Literal[
    "open", "in_progress", "waiting", "blocked", "completed", "failed", "cancelled"
]
TaskEventKind = Literal[
    "created",
    "started",
    "progress",
    "waiting",
    "blocked",
    "completed",
    "failed",
    "cancelled",
    "error",
    "note",
    "metric",
]
RunStatus = Literal["running", "completed", "error", "interrupted", "cancelled"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class _Event(_Strict):
    """Fields every event line carries."""

    conversation_id: ProducerId
    """The producer's id for the conversation this line belongs to."""

    @field_validator("attributes", mode="after", check_fields=False)
    @classmethod
    def _no_hidden_reasoning(cls, value: Attributes | None) -> Attributes | None:
        if value:
            hidden = sorted(HIDDEN_REASONING_FIELDS.intersection(value))
            if hidden:
                raise ValueError(
                    f'key "{hidden[0]}" would carry hidden reasoning, which Proctor never '
                    "stores; send only visible text"
                )
        return value


class HeaderLine(_Strict):
    """Optional first line: names the format and its version."""

    type: Literal["header"]
    """The line type."""
    format: Literal["proctor-jsonl"]
    """Always ``proctor-jsonl``."""
    version: Annotated[int, Field(strict=True)]
    """Format version; this Proctor reads version 1."""
    producer: StrictStr | None = None
    """Name and version of the program that wrote the file."""


class ConversationLine(_Event):
    """Describes a conversation. Later lines update the fields they set."""

    type: Literal["conversation"]
    """The line type."""
    title: StrictStr | None = None
    """A short human title."""
    project: StrictStr | None = None
    """The project the conversation belongs to (a hint; the user may move it)."""
    cwd: StrictStr | None = None
    """Working directory of the agent."""
    model: StrictStr | None = None
    """The main model used."""
    started_at: Time | None = None
    """When the conversation started."""
    ended_at: Time | None = None
    """When it ended."""
    attributes: Attributes | None = None
    """Small metadata kept for display."""


class UsageFields(_Strict):
    """Token usage of one model response."""

    input_tokens: Count = 0
    """Input tokens not read from or written to a cache."""
    output_tokens: Count = 0
    """Output tokens, reasoning tokens included."""
    cache_read_tokens: Count = 0
    """Input tokens read from a prompt cache."""
    cache_write_tokens: Count = 0
    """Input tokens written to a prompt cache."""
    reasoning_tokens: Count = 0
    """Hidden reasoning tokens (a count only; the reasoning itself is never sent)."""


class Attachment(_Strict):
    """Media that was part of a message, described but never sent."""

    media_type: Annotated[str, StringConstraints(strict=True, pattern=r"^[\w.+-]+/[\w.+-]+$")]
    """IANA media type, e.g. ``image/png``."""
    size_bytes: Count
    """Size of the media in bytes."""
    name: StrictStr | None = None
    """File name, when there is one."""


class MessageLine(_Event):
    """One visible message. Re-sent with the same ``message_id``: a new revision."""

    type: Literal["message"]
    """The line type."""
    message_id: ProducerId
    """The producer's id for the message, unique within the conversation."""
    role: MessageRole
    """Who wrote it."""
    text: StrictStr
    """The visible text (may be empty for a message that only issues tool calls)."""
    kind: MessageKindName | None = None
    """What the message is for; defaults from the role."""
    created_at: Time | None = None
    """When it was written."""
    parent_message_id: ProducerId | None = None
    """The message this one answers; defaults to the previous message."""
    author: StrictStr | None = None
    """Person or agent name."""
    model: StrictStr | None = None
    """Model that wrote an assistant message."""
    usage: UsageFields | None = None
    """Token usage of the model response that produced this message."""
    attachments: list[Attachment] = Field(default_factory=list)
    """Media that was part of the message (descriptions only)."""
    attributes: Attributes | None = None
    """Small metadata kept for display."""


class ToolCallLine(_Event):
    """A tool call the agent made."""

    type: Literal["tool_call"]
    """The line type."""
    call_id: ProducerId
    """The producer's id for the call, unique within the conversation."""
    name: Annotated[str, StringConstraints(strict=True, min_length=1)]
    """Tool name."""
    arguments: Any = None
    """Arguments as JSON (an object when the tool takes named arguments)."""
    message_id: ProducerId | None = None
    """The assistant message that issued the call; defaults to the latest one before it."""
    created_at: Time | None = None
    """When the call was made."""
    attributes: Attributes | None = None
    """Small metadata kept for display."""


class ToolResultLine(_Event):
    """The result of a tool call; may come any number of lines after the call."""

    type: Literal["tool_result"]
    """The line type."""
    call_id: ProducerId
    """The ``call_id`` of the call this answers."""
    status: ResultStatus = "ok"
    """How the call ended."""
    output: StrictStr | None = None
    """What the tool returned, as text."""
    exit_code: Annotated[int, Field(strict=True)] | None = None
    """Exit status of a command."""
    completed_at: Time | None = None
    """When the call finished."""
    attributes: Attributes | None = None
    """Execution metadata (duration …), kept for display."""


class TaskLine(_Event):
    """A unit of work. Later lines update the fields they set."""

    type: Literal["task"]
    """The line type."""
    task_id: ProducerId
    """The producer's id for the task, unique within the conversation."""
    title: StrictStr | None = None
    """Short title; defaults to the task id."""
    goal: StrictStr | None = None
    """What done looks like."""
    status: TaskStatus | None = None
    """Current status; ``open`` until set."""
    created_at: Time | None = None
    """When the task was created."""
    completed_at: Time | None = None
    """When it finished."""
    attributes: Attributes | None = None
    """Small metadata kept for display."""


class TaskEventLine(_Event):
    """Something that happened to a task or to the run."""

    type: Literal["task_event"]
    """The line type."""
    event_id: ProducerId
    """The producer's id for the event, unique within the conversation."""
    kind: TaskEventKind
    """What happened."""
    task_id: ProducerId | None = None
    """The task it happened to, if any."""
    text: StrictStr = ""
    """A visible description."""
    status: TaskStatus | None = None
    """The task's status after the event."""
    created_at: Time | None = None
    """When it happened."""
    attributes: Attributes | None = None
    """Small metadata (measured values …), kept for display."""


class SubagentRunLine(_Event):
    """Makes the conversation a sub-agent run of another. Later lines update it."""

    type: Literal["subagent_run"]
    """The line type."""
    parent_conversation_id: ProducerId
    """The conversation that started this sub-agent."""
    parent_call_id: ProducerId | None = None
    """The parent's tool call that started it."""
    agent_type: StrictStr | None = None
    """Kind or name of the sub-agent."""
    description: StrictStr | None = None
    """The task it was given."""
    status: RunStatus | None = None
    """Where the run stands."""
    summary: StrictStr | None = None
    """Its final answer as the parent saw it."""
    rounds: Count | None = None
    """Model responses it produced."""
    total_tokens: Count | None = None
    """Tokens it used."""
    tool_uses: Count | None = None
    """Tool calls it made."""
    rejected_tools: list[StrictStr] | None = None
    """Tools it was refused."""
    stop_kind: StrictStr | None = None
    """Why it stopped (``completed``, ``error``, ``interrupted``, ``max_turns`` …)."""
    duration_ms: Count | None = None
    """How long it ran."""


EventLine = (
    ConversationLine
    | MessageLine
    | ToolCallLine
    | ToolResultLine
    | TaskLine
    | TaskEventLine
    | SubagentRunLine
)

LINE_MODELS: dict[str, type[BaseModel]] = {
    "header": HeaderLine,
    "conversation": ConversationLine,
    "message": MessageLine,
    "tool_call": ToolCallLine,
    "tool_result": ToolResultLine,
    "task": TaskLine,
    "task_event": TaskEventLine,
    "subagent_run": SubagentRunLine,
}
"""Every line type and its model, in the order the documentation lists them."""

EVENT_TYPES = frozenset(LINE_MODELS) - {"header"}
