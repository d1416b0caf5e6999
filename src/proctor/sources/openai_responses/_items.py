"""What OpenAI Responses items show: message text, tool call arguments and results.

Content parts: ``input_text``/``output_text``/``refusal`` are text; images, files and
audio become placeholders (SPEC ING-5). ``reasoning`` and ``compaction`` items are never
read (ING-3); ``encrypted_content`` and similar keys are stripped from anything rendered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proctor.sources._common import (
    as_object,
    as_text,
    base64_size,
    join_text,
    media_placeholder,
    named,
    render_value,
    url_placeholder,
    without_hidden,
)
from proctor.transcript import JSONValue, ToolStatus

MESSAGE = "message"
HIDDEN_TYPES = frozenset({"reasoning", "compaction", "compaction_summary"})
"""Items holding hidden or encrypted reasoning: dropped unread (SPEC ING-3)."""
IGNORED_TYPES = frozenset(
    {"item_reference", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response"}
)
"""Items that are protocol bookkeeping, not conversation content."""
OUTPUT_TYPES = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
    }
)
"""Items that complete an earlier call with the same ``call_id``."""
CLIENT_CALL_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
    }
)
"""Calls the client executes: their ``status`` says the item is complete, not the call."""
CALL_TYPES = CLIENT_CALL_TYPES | frozenset(
    {
        "mcp_call",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
    }
)
"""Items that are tool calls; built-in ones carry their result inline."""
ITEM_TYPES = frozenset({MESSAGE}) | HIDDEN_TYPES | IGNORED_TYPES | OUTPUT_TYPES | CALL_TYPES
PART_TYPES = frozenset(
    {"input_text", "output_text", "refusal", "input_image", "input_file", "input_audio"}
)
"""Message content part types of the Responses API."""

_STATUS: dict[str, ToolStatus] = {
    "completed": "ok",
    "failed": "error",
    "incomplete": "interrupted",
    "cancelled": "interrupted",
}


def call_status(item: dict[str, Any], *, has_result: bool) -> ToolStatus:
    """Status of a call item: built-in calls carry it (``completed``, ``failed`` …); a
    client-executed call is pending until its ``*_output`` item arrives."""
    if named(item.get("type"), CLIENT_CALL_TYPES):
        return "pending"
    status = _STATUS.get(str(item.get("status")))
    if status is None:
        return "ok" if has_result else "pending"
    return status


def part_text(part: Any) -> str | None:
    """Visible text of one content part (text, refusal, or a media placeholder)."""
    if isinstance(part, str):
        return part
    part = as_object(part)
    kind = part.get("type")
    if kind in ("reasoning_text", "summary_text"):  # reasoning content, never shown (ING-3)
        return None
    if kind in ("input_text", "output_text", "text"):
        return as_text(part.get("text"))
    if kind == "refusal":
        return as_text(part.get("refusal"))
    if kind == "input_image":
        url = as_text(part.get("image_url"))
        if url is not None:
            return url_placeholder(url, media_type="image/*")
        return media_placeholder("image/*", where=as_text(part.get("file_id")) or "")
    if kind == "input_file":
        data, name = as_text(part.get("file_data")), as_text(part.get("filename"))
        if data is not None and data.startswith("data:"):
            return join_text([url_placeholder(data), name])
        size = base64_size(data) if data is not None else None
        where = name or as_text(part.get("file_url")) or as_text(part.get("file_id")) or ""
        return media_placeholder(None, size=size, where=where)
    if kind == "input_audio":
        audio = as_object(part.get("input_audio"))
        data, audio_format = as_text(audio.get("data")), as_text(audio.get("format"))
        size = base64_size(data) if data is not None else None
        return media_placeholder(f"audio/{audio_format or '*'}", size=size)
    # A part of a type this Proctor does not know (or a damaged type) that holds text
    # shows its text: reasoning never comes as a message part, it has items of its own.
    text = as_text(part.get("text"))
    if text is not None and not (isinstance(kind, str) and "reasoning" in kind):
        return text
    return f"[{kind[:60]} part]" if isinstance(kind, str) else None


def content_text(content: Any) -> str:
    """Visible text of a message's ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return join_text(part_text(part) for part in content)
    return "" if content is None else render_value(content)


@dataclass(frozen=True, slots=True)
class CallView:
    """A call item seen as a tool call: name, arguments and any inline result."""

    name: str
    arguments: JSONValue
    parse_arguments: bool = False
    """True when ``arguments`` is a JSON string to parse (function and MCP calls)."""
    result: str | None = None
    status: ToolStatus | None = None


def call_view(item: dict[str, Any]) -> CallView:
    """Name, arguments and inline result of a call item."""
    kind = str(item.get("type"))
    name = as_text(item.get("name"))
    if kind == "function_call":
        return CallView(name or "unknown", item.get("arguments"), parse_arguments=True)
    if kind == "custom_tool_call":  # free-text input, not JSON
        return CallView(name or "unknown", item.get("input"))
    if kind == "mcp_call":
        error = item.get("error")
        result = render_value(error) if error else as_text(item.get("output"))
        status: ToolStatus | None = "error" if error else None
        return CallView(name or "unknown", item.get("arguments"), True, result, status)
    builtin = kind.removesuffix("_call")
    if kind == "web_search_call":
        action = as_object(item.get("action"))
        sources = [as_text(as_object(s).get("url")) for s in action.get("sources") or ()]
        arguments = without_hidden({k: v for k, v in action.items() if k != "sources"})
        return CallView(builtin, arguments, result=join_text(sources) or None)
    if kind == "file_search_call":
        results = [as_object(r) for r in item.get("results") or ()]
        text = join_text(
            join_text([as_text(r.get("filename")), as_text(r.get("text"))]) for r in results
        )
        return CallView(builtin, {"queries": item.get("queries")}, result=text or None)
    if kind == "code_interpreter_call":
        outputs = [as_object(o) for o in item.get("outputs") or ()]
        text = join_text(
            as_text(o.get("logs")) or (url_placeholder(str(o["url"])) if o.get("url") else None)
            for o in outputs
        )
        arguments = {"code": item.get("code"), "container_id": item.get("container_id")}
        return CallView(builtin, arguments, result=text or None)
    if kind == "image_generation_call":
        image = as_text(item.get("result"))
        media_type = f"image/{as_text(item.get('output_format')) or 'png'}"
        placeholder = media_placeholder(media_type, size=base64_size(image)) if image else None
        return CallView(builtin, {"revised_prompt": item.get("revised_prompt")}, result=placeholder)
    if kind == "apply_patch_call":
        return CallView(builtin, without_hidden(item.get("operation")))
    return CallView(builtin, without_hidden(item.get("action")))


@dataclass(frozen=True, slots=True)
class OutputView:
    """What a ``*_output`` item shows: text, status and exit code."""

    text: str
    status: ToolStatus = "ok"
    exit_code: int | None = None


def output_view(item: dict[str, Any]) -> OutputView:
    """Text, status and exit code of an item that completes a call."""
    output = item.get("output")
    status: ToolStatus = "error" if item.get("status") == "failed" else "ok"
    if item.get("type") == "computer_call_output":
        screenshot = as_object(output)
        url = as_text(screenshot.get("image_url"))
        return OutputView(url_placeholder(url) if url else "[image: computer screenshot]", status)
    if item.get("type") == "shell_call_output" and isinstance(output, list):
        chunks = [as_object(chunk) for chunk in output]
        text = join_text(
            join_text([as_text(c.get("stdout")), as_text(c.get("stderr"))]) for c in chunks
        )
        codes = [as_object(c.get("outcome")).get("exit_code") for c in chunks]
        exit_code = next((c for c in reversed(codes) if isinstance(c, int)), None)
        return OutputView(text, status, exit_code)
    if isinstance(output, list):
        return OutputView(content_text(output), status)
    return OutputView(render_value(output), status)
