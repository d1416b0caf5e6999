"""Visible text of Anthropic content blocks.

Text is kept; images and documents become placeholders with media type and size (SPEC
ING-5); ``thinking`` and ``redacted_thinking`` blocks, signatures and encrypted search
results are dropped (ING-3). Tool calls and results are not text here: the converter
turns them into tool calls.
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
    render_value,
)
from proctor.transcript import ToolStatus

HIDDEN_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking"})
CALL_BLOCK_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def is_result_block(block: dict[str, Any]) -> bool:
    """True for ``tool_result``, ``mcp_tool_result`` and server ``*_tool_result`` blocks."""
    kind = block.get("type")
    return kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result"))


def block_text(block: dict[str, Any]) -> str | None:
    """The visible text of a block shown as message text; None for calls, results, thinking."""
    kind = block.get("type")
    if kind == "text" or (kind is None and isinstance(block.get("text"), str)):
        return as_text(block.get("text"))
    if not isinstance(kind, str | None):
        kind = None  # a damaged type: the block is read by what it holds
    if kind in HIDDEN_BLOCK_TYPES or kind in CALL_BLOCK_TYPES or is_result_block(block):
        return None
    if kind == "image":
        return source_placeholder(block.get("source"), "image/*")
    if kind == "document":
        return document_text(block)
    if kind == "search_result":
        return join_text(
            [
                as_text(block.get("title")),
                as_text(block.get("source")),
                blocks_text(block.get("content")),
            ]
        )
    if kind == "container_upload":
        return media_placeholder(None, where=as_text(block.get("file_id")) or "container upload")
    # A block of a type this Proctor does not know that holds text shows its text
    # (hidden reasoning comes in thinking blocks, whose text is not in a "text" field).
    text = as_text(block.get("text"))
    if text is not None:
        return text
    return f"[{kind[:60]} block]" if isinstance(kind, str) else None


def blocks_text(content: Any) -> str:
    """Visible text of ``content``: a string or a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return join_text(block_text(b) if isinstance(b, dict) else render_value(b) for b in content)
    return render_value(content)


def source_placeholder(source: Any, default_type: str) -> str:
    """Placeholder for an image/document ``source``: base64, url, file id or plain text."""
    source = as_object(source)
    media_type = as_text(source.get("media_type")) or default_type
    data = source.get("data")
    match source.get("type"):
        case "base64":
            return media_placeholder(
                media_type, size=base64_size(data) if isinstance(data, str) else None
            )
        case "url":
            return media_placeholder(media_type, where=as_text(source.get("url")) or "")
        case "file":
            return media_placeholder(media_type, where=as_text(source.get("file_id")) or "")
        case "text":
            size = len(data.encode()) if isinstance(data, str) else None
            return media_placeholder(media_type or "text/plain", size=size)
        case _:
            return media_placeholder(media_type)


def document_text(block: dict[str, Any]) -> str:
    """A document block: plain-text documents keep their text, others become placeholders."""
    source = as_object(block.get("source"))
    title = as_text(block.get("title"))
    if source.get("type") == "text" and isinstance(source.get("data"), str):
        return join_text([title, source["data"]])
    if source.get("type") == "content":
        return join_text([title, blocks_text(source.get("content"))])
    return join_text([source_placeholder(source, "application/pdf"), title])


@dataclass(frozen=True, slots=True)
class ResultView:
    """What a result block shows: its text, status and exit code."""

    text: str
    status: ToolStatus
    exit_code: int | None = None


def result_view(block: dict[str, Any]) -> ResultView:
    """Text and status of a ``tool_result``, ``mcp_tool_result`` or server result block."""
    content = block.get("content")
    if block.get("type") in ("tool_result", "mcp_tool_result"):
        status: ToolStatus = "error" if block.get("is_error") is True else "ok"
        return ResultView(blocks_text(content), status)
    if isinstance(content, dict):
        error = content.get("error_code")
        kind = content.get("type")
        if error is not None or (isinstance(kind, str) and kind.endswith("_error")):
            return ResultView(render_value(error if error is not None else content), "error")
        if isinstance(content.get("stdout"), str) or isinstance(content.get("stderr"), str):
            code = content.get("return_code")
            text = join_text([as_text(content.get("stdout")), as_text(content.get("stderr"))])
            return ResultView(text, "ok", code if isinstance(code, int) else None)
        if kind == "web_fetch_result":
            document = as_object(content.get("content"))
            return ResultView(
                join_text([as_text(content.get("url")), document_text(document)]), "ok"
            )
    if isinstance(content, list) and all(
        as_object(item).get("type") == "web_search_result" for item in content
    ):
        lines = [
            " — ".join(v for v in (as_text(r.get("title")), as_text(r.get("url"))) if v)
            for r in map(as_object, content)
        ]
        return ResultView("\n".join(lines), "ok")
    return ResultView(blocks_text(content), "ok")
