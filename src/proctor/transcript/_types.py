"""The one transcript model every adapter produces.

A ``ConversationBundle`` is the unit of import: one conversation with everything that
belongs to it (messages, tool calls, tasks, task events, and the sub-agent run record
when the conversation is a sub-agent's). It is written to the store in one transaction.

Ids are namespaced strings built from the format's own ids (``cc:<uuid>``,
``codex:<session>:call:<call_id>``); see ``research/transcript-formats.md``. Adapters
build these values with raw visible text; redaction, bounding and fingerprints are
applied afterwards by :func:`proctor.transcript.prepare_bundle`, so every format gets
the same guarantees.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "system", "developer", "tool"]
"""Who produced a message, in the provider's own terms."""

MessageKind = Literal["prompt", "reply", "injected", "instructions", "summary", "notice"]
"""What a message is for.

``prompt``: typed by a person. ``reply``: written by the agent. ``injected``: text the
harness put into the user turn (hook output, environment context, reminders).
``instructions``: system/developer prompts. ``summary``: a derived paraphrase of earlier
messages (compaction); never first-hand evidence. ``notice``: a harness notice (API
error, model switch, interruption).
"""

ToolStatus = Literal["ok", "error", "pending", "interrupted", "rejected"]
"""Outcome of a tool call. ``pending``: no result was recorded."""

ConversationKind = Literal["main", "subagent", "compaction"]
"""``compaction`` conversations are the model calls that wrote a compaction summary."""

SourceType = Literal["message", "tool_call", "task_event"]
"""Kinds of sources a finding or graph fact can cite."""

JSONValue = Any
"""A value that round-trips through JSON (dict, list, str, int, float, bool, None)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model response, counted once per response."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens (cache reads and writes are part of input)."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.output_tokens
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One visible message. Hidden reasoning never reaches this type."""

    source_id: str
    role: Role
    kind: MessageKind
    text: str
    created_at: datetime | None = None
    parent_source_id: str | None = None
    """The message this one answers or follows (the format's thread tree)."""
    on_active_branch: bool = True
    """False for messages on a branch the user abandoned (rewind, edit, fork)."""
    derived: bool = False
    """True for paraphrases of other messages (compaction summaries)."""
    author: str | None = None
    """Agent or person name where the format records one (multi-agent logs)."""
    model: str | None = None
    usage: Usage | None = None
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)
    """Format metadata kept for display; not part of the version fingerprint."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call and, when recorded, its result."""

    source_id: str
    name: str
    arguments: JSONValue
    """Parsed arguments (a JSON object when the format gives one)."""
    call_id: str | None = None
    message_source_id: str | None = None
    """The assistant message that issued the call."""
    status: ToolStatus = "pending"
    result_text: str | None = None
    result_size: int | None = None
    """Length in characters of the original result, set when it was stored truncated."""
    exit_code: int | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None
    on_active_branch: bool = True
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)
    """Execution metadata (durations, structured results); not fingerprinted."""


@dataclass(frozen=True, slots=True)
class Task:
    """A unit of agent work (a Codex turn, a Claude Code task-list item, a Proctor task)."""

    task_id: str
    title: str
    goal: str | None = None
    status: str = "open"
    created_at: datetime | None = None
    completed_at: datetime | None = None
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TaskEvent:
    """Something that happened to a task or to the run: started, completed, aborted, failed."""

    source_id: str
    kind: str
    text: str = ""
    task_id: str | None = None
    status: str | None = None
    created_at: datetime | None = None
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SubagentRun:
    """How a sub-agent conversation was started and how it ended (SPEC ING-6).

    The parent conversation is ``Conversation.parent_conversation_id`` of the child.
    """

    parent_tool_call_id: str | None = None
    """Source id of the parent's spawning tool call, when it could be linked."""
    agent_type: str | None = None
    description: str | None = None
    status: str | None = None
    summary: str | None = None
    """The sub-agent's final answer as the parent saw it."""
    rounds: int = 0
    """Assistant responses the sub-agent produced."""
    total_tokens: int = 0
    tool_uses: int = 0
    rejected_tools: tuple[str, ...] = ()
    stop_kind: str | None = None
    """Why it stopped: ``completed``, ``error``, ``interrupted``, ``max_turns`` or the format's value."""
    duration_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """Header of one conversation."""

    conversation_id: str
    format: str
    """Adapter name that produced it (``claude_code``, ``codex`` …)."""
    external_id: str
    """The format's own id for the conversation (session id, trace id, record index)."""
    title: str | None = None
    kind: ConversationKind = "main"
    parent_conversation_id: str | None = None
    """For sub-agent and compaction conversations: the conversation that started them."""
    project_hint: str | None = None
    """Suggested project name (e.g. the working directory's name) when none is given."""
    cwd: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    model: str | None = None
    attributes: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceIssue:
    """A problem found while reading input. Issues are data: the import goes on."""

    path: str
    reason: str
    line: int | None = None
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ConversationBundle:
    """One conversation and everything in it: the unit of import and of one transaction."""

    conversation: Conversation
    messages: tuple[Message, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tasks: tuple[Task, ...] = ()
    task_events: tuple[TaskEvent, ...] = ()
    subagent_run: SubagentRun | None = None
    issues: tuple[SourceIssue, ...] = ()
    """Warnings about this conversation (dangling parents, unpaired results …)."""
    origin: str | None = None
    """Path (or other locator) the conversation was read from."""

    @property
    def conversation_id(self) -> str:
        """Shortcut for ``conversation.conversation_id``."""
        return self.conversation.conversation_id


@dataclass(frozen=True, slots=True)
class PreparedSource:
    """Identity and version of one source, ready to store."""

    source_type: SourceType
    source_id: str
    fingerprint: str
    """Hash of the semantic fields; changes mean a new revision."""
    content_hash: str
    """Hash of everything stored, metadata included."""
    redactions: int = 0
    """Secrets replaced in this source before storage."""


@dataclass(frozen=True, slots=True)
class PreparedBundle:
    """A bundle after redaction, bounding and fingerprinting: what the store writes."""

    bundle: ConversationBundle
    sources: tuple[PreparedSource, ...]
    redactions: int = 0
    redactions_by_kind: Mapping[str, int] = field(default_factory=dict)
    truncated: int = 0
    """Tool results or messages stored truncated (SPEC ING-5)."""
    reasoning_removed: int = 0
    """Inline reasoning blocks (``<thinking>``) removed from visible text (SPEC ING-3)."""
