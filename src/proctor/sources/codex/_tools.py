"""The tool calls of one Codex session, paired with their results by ``call_id``.

A call is opened by a history item (``function_call``, ``custom_tool_call``,
``local_shell_call``, ``tool_search_call``, ``web_search_call``,
``image_generation_call``, ``mcp_call``), completed by its ``*_output`` item, and
described by execution events that carry the exit code, duration and status. An
execution event whose call has no history item (a shell command the person ran, an MCP
call in an event-only build) still becomes a call: the tool did run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import orjson

from proctor.sources.codex._messages import IdRegistry, MessageDraft
from proctor.sources.codex._records import Where, as_dict, as_str
from proctor.sources.codex._tool_results import (
    Outcome,
    read_dynamic_tool_response,
    read_exec_end,
    read_image_generation,
    read_mcp_end,
    read_output,
    read_patch_end,
    read_web_search_end,
    status_from_word,
    stronger,
)
from proctor.transcript import JSONValue, ToolCall, ToolStatus

CALL_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "tool_search_call",
        "web_search_call",
        "image_generation_call",
        "mcp_call",
    }
)
OUTPUT_ITEMS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "tool_search_output",
        "mcp_call_output",
    }
)

# Execution events: how each is read, and the tool name to use when no history item
# names the call.
_EVENT_READERS: dict[str, tuple[Callable[[dict[str, Any]], Outcome], str]] = {
    "exec_command_end": (read_exec_end, "exec_command"),
    "CommandExecution": (read_exec_end, "exec_command"),
    "patch_apply_end": (read_patch_end, "apply_patch"),
    "FileChange": (read_patch_end, "apply_patch"),
    "mcp_tool_call_end": (read_mcp_end, "mcp"),
    "McpToolCall": (read_mcp_end, "mcp"),
    "web_search_end": (read_web_search_end, "web_search"),
    "image_generation_end": (read_image_generation, "image_generation"),
    "dynamic_tool_call_response": (read_dynamic_tool_response, "dynamic_tool"),
}
EXECUTION_EVENTS = frozenset(_EVENT_READERS) | {"view_image_tool_call", "dynamic_tool_call_request"}


@dataclass(slots=True, eq=False)
class CallDraft:
    """A tool call being collected."""

    key: str
    preferred_id: str | None
    fallback_id: str
    where: Where
    name: str = "unknown"
    arguments: JSONValue = field(default_factory=dict)
    call_id: str | None = None
    message: MessageDraft | None = None
    has_call_item: bool = False
    has_output: bool = False
    text: str | None = None
    status: ToolStatus | None = None
    exit_code: int | None = None
    completed_where: Where | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


class ToolLedger:
    """Collects the tool calls of one session and pairs them with their results."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._calls: dict[str, CallDraft] = {}
        self._unkeyed: dict[tuple[str, str], int] = defaultdict(int)
        self.raw_arguments: list[int] = []
        """Lines of calls whose arguments were not JSON (kept as text)."""
        self.repeated_calls: list[int] = []
        """Lines of call items reusing a call_id already taken; merged into the first."""
        self.repeated_outputs: list[int] = []

    def call(
        self, kind: str, payload: dict[str, Any], where: Where, message: MessageDraft | None
    ) -> None:
        """A history item that asks for a tool."""
        draft = self._draft(
            as_str(payload.get("call_id")) or as_str(payload.get("id")), kind, where
        )
        if draft.has_call_item:
            self.repeated_calls.append(where.line)
            return
        draft.has_call_item = True
        draft.where = where
        draft.message = message
        draft.name, draft.arguments = self._name_and_arguments(kind, payload, where)
        if kind != "function_call":
            draft.attributes["item_type"] = kind
        namespace = as_str(payload.get("namespace"))
        if namespace:
            draft.attributes["namespace"] = namespace
        if kind in ("web_search_call", "image_generation_call", "mcp_call", "local_shell_call"):
            self._merge(draft, _self_contained_outcome(kind, payload), where)

    def output(self, payload: dict[str, Any], where: Where) -> None:
        """A ``*_output`` history item: the result the model saw."""
        draft = self._draft(as_str(payload.get("call_id")), "output", where)
        if draft.has_output:
            self.repeated_outputs.append(where.line)
            return
        draft.has_output = True
        if "tools" in payload and "output" not in payload:
            outcome = Outcome(_tool_names(payload.get("tools")), "ok")
        else:
            outcome = read_output(payload.get("output"))
        draft.text = outcome.text
        self._merge(draft, outcome, where)

    def execution_event(self, kind: str, payload: dict[str, Any], where: Where) -> None:
        """An execution event (``exec_command_end``, an ``item_completed`` tool item …)."""
        call_id = as_str(payload.get("call_id")) or as_str(payload.get("callId"))
        call_id = call_id or as_str(payload.get("id"))
        draft = self._draft(call_id, kind, where)
        if not draft.has_call_item and draft.name == "unknown":
            draft.name, draft.arguments = _event_call(kind, payload)
        if kind == "dynamic_tool_call_request":
            return
        if kind == "view_image_tool_call":
            self._merge(
                draft, Outcome(f"[image: {as_str(payload.get('path')) or 'file'}]", "ok"), where
            )
            return
        reader, _ = _EVENT_READERS[kind]
        outcome = reader(payload)
        if draft.has_output:
            outcome.text = None  # the model-visible output item wins over the event's copy
        self._merge(draft, outcome, where)
        source = as_str(payload.get("source"))
        if source:
            draft.attributes["source"] = source

    def note(self, call_id: str | None, attributes: dict[str, Any]) -> None:
        """Add facts from a collaboration event to a call that exists."""
        draft = self._calls.get(call_id or "")
        if draft is not None:
            draft.attributes.update(attributes)

    def orphan_outputs(self) -> list[int]:
        """Lines of outputs whose call was never seen (no call item, no execution event)."""
        return [
            draft.where.line
            for draft in self._calls.values()
            if draft.has_output and not draft.has_call_item and draft.name == "unknown"
        ]

    def build(self, ids: IdRegistry, aborted_turns: Collection[str]) -> list[ToolCall]:
        """The calls in the order they were first seen."""
        built = []
        for draft in self._calls.values():
            status = draft.status or ("ok" if draft.has_output else None)
            if status is None or status == "pending":
                aborted = draft.where.turn_id is not None and draft.where.turn_id in aborted_turns
                status = "interrupted" if aborted else "pending"
            attributes = dict(draft.attributes)
            if not draft.has_call_item:
                attributes["call_item_missing"] = True
            built.append(
                ToolCall(
                    source_id=ids.claim(draft.preferred_id, draft.fallback_id),
                    name=draft.name,
                    arguments=draft.arguments,
                    call_id=draft.call_id,
                    message_source_id=_resolved_id(draft.message),
                    status=status,
                    result_text=draft.text,
                    exit_code=draft.exit_code,
                    created_at=draft.where.time,
                    completed_at=None
                    if draft.completed_where is None
                    else draft.completed_where.time,
                    attributes=attributes,
                )
            )
        return built

    def _draft(self, call_id: str | None, kind: str, where: Where) -> CallDraft:
        if call_id is None:
            # Items without any id (web searches in older builds): by position in the turn.
            scope = where.turn_id or "session"
            index = self._unkeyed[scope, kind]
            self._unkeyed[scope, kind] = index + 1
            key = f"#{scope}:{kind}:{index}"
            unkeyed = CallDraft(
                key, None, f"codex:{self._session_id}:{scope}:{kind}:{index}", where
            )
            self._calls[key] = unkeyed
            return unkeyed
        draft = self._calls.get(call_id)
        if draft is None:
            draft = CallDraft(
                call_id,
                f"codex:{self._session_id}:call:{call_id}",
                f"codex:{self._session_id}:call:{call_id}",
                where,
                call_id=call_id,
            )
            self._calls[call_id] = draft
        return draft

    def _name_and_arguments(
        self, kind: str, payload: dict[str, Any], where: Where
    ) -> tuple[str, JSONValue]:
        name = as_str(payload.get("name"))
        if kind == "function_call":
            return name or "unknown", self._parse_arguments(
                payload.get("arguments"), where, strict=True
            )
        if kind == "custom_tool_call":
            # Freeform input (an apply_patch body): JSON only when it happens to be.
            return name or "unknown", self._parse_arguments(
                payload.get("input"), where, strict=False
            )
        if kind == "local_shell_call":
            return "local_shell", as_dict(payload.get("action"))
        if kind == "web_search_call":
            return "web_search", as_dict(payload.get("action"))
        if kind == "image_generation_call":
            prompt = as_str(payload.get("revised_prompt"))
            return "image_generation", {} if prompt is None else {"revised_prompt": prompt}
        if kind == "mcp_call":
            server = as_str(payload.get("server_label")) or "mcp"
            return f"mcp__{server}__{name or 'unknown'}", self._parse_arguments(
                payload.get("arguments"), where, strict=True
            )
        arguments = payload.get("arguments")
        return name or kind.removesuffix("_call"), arguments if arguments is not None else {}

    def _parse_arguments(self, raw: Any, where: Where, *, strict: bool) -> JSONValue:
        if raw is None:
            return {}
        if not isinstance(raw, str):
            return raw  # newer builds may write the object itself
        try:
            return orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError:
            if strict:
                self.raw_arguments.append(where.line)
            return raw

    @staticmethod
    def _merge(draft: CallDraft, outcome: Outcome, where: Where) -> None:
        if outcome.text is not None and draft.text is None:
            draft.text = outcome.text
        draft.status = stronger(draft.status, outcome.status)
        if outcome.exit_code is not None:
            draft.exit_code = outcome.exit_code
        draft.attributes.update(outcome.attributes)
        if outcome.status not in (None, "pending") or outcome.text is not None:
            draft.completed_where = draft.completed_where or where


def _resolved_id(message: MessageDraft | None) -> str | None:
    while message is not None and message.twin is not None:
        message = message.twin
    return None if message is None else message.source_id


def _self_contained_outcome(kind: str, payload: dict[str, Any]) -> Outcome:
    """Items that carry their own status (and for MCP and image calls, the result)."""
    if kind == "image_generation_call":
        return read_image_generation(payload)
    if kind == "mcp_call":
        error = payload.get("error")
        output = as_str(payload.get("output"))
        return Outcome(
            str(error) if error else output,
            "error" if error else status_from_word(payload.get("status")),
        )
    return Outcome(None, status_from_word(payload.get("status")))


def _event_call(kind: str, payload: dict[str, Any]) -> tuple[str, JSONValue]:
    """Name and arguments of a call known only from its execution event."""
    if kind in ("exec_command_end", "CommandExecution"):
        command = {"command": payload.get("command"), "cwd": payload.get("cwd")}
        return "exec_command", {k: v for k, v in command.items() if v is not None}
    if kind in ("patch_apply_end", "FileChange"):
        changes = payload.get("changes")
        return "apply_patch", {"files": sorted(changes)} if isinstance(changes, dict) else {}
    if kind in ("mcp_tool_call_end", "McpToolCall"):
        invocation = as_dict(payload.get("invocation")) or payload
        server = as_str(invocation.get("server")) or "unknown"
        tool = as_str(invocation.get("tool")) or "unknown"
        arguments = invocation.get("arguments")
        return f"mcp__{server}__{tool}", arguments if arguments is not None else {}
    if kind == "web_search_end":
        action = payload.get("action")
        return "web_search", action if isinstance(action, dict) else {"query": payload.get("query")}
    if kind == "view_image_tool_call":
        return "view_image", {"path": payload.get("path")}
    if kind in ("dynamic_tool_call_request", "dynamic_tool_call_response"):
        tool = as_str(payload.get("tool")) or "dynamic_tool"
        arguments = payload.get("arguments")
        return tool, arguments if arguments is not None else {}
    if kind == "image_generation_end":
        prompt = as_str(payload.get("revised_prompt"))
        return "image_generation", {} if prompt is None else {"revised_prompt": prompt}
    return _EVENT_READERS[kind][1], {}


def _tool_names(tools: Any) -> str:
    """The names a ``tool_search_output`` returned (the definitions themselves are bulky)."""
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        group = as_str(tool.get("name")) or "unknown"
        inner = tool.get("tools")
        if isinstance(inner, list) and inner:
            names.extend(
                f"{group}/{as_str(t.get('name')) or 'unknown'}"
                for t in inner
                if isinstance(t, dict)
            )
        else:
            names.append(group)
    return "found tools: " + ", ".join(names) if names else "found no tools"
