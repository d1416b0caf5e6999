"""Gemini API content parts: visible text, function calls and function responses.

Gemini CLI stores message content as a string or a ``PartListUnion`` (one part or a list
of parts and strings). ``thought: true`` parts and ``thoughtSignature`` values are hidden
reasoning and are never read (SPEC ING-3); inline data becomes a placeholder with media
type and size (ING-5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from proctor.sources._common import (
    as_object,
    as_text,
    base64_size,
    join_text,
    media_placeholder,
    render_value,
)

_EXIT_CODE = re.compile(r"\bExit Code: (-?\d+)\b")


def as_parts(content: Any) -> list[dict[str, Any]]:
    """Content as a list of part objects (strings become text parts)."""
    if content is None:
        return []
    items = content if isinstance(content, list) else [content]
    return [{"text": item} if isinstance(item, str) else as_object(item) for item in items]


@dataclass(slots=True)
class SplitContent:
    """Content split into what is shown and the calls and responses it carries."""

    text: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """``functionCall`` objects (API-format history, checkpoints)."""
    responses: list[dict[str, Any]] = field(default_factory=list)
    """``functionResponse`` objects."""


def split_content(content: Any) -> SplitContent:
    """Visible text, function calls and function responses of ``content``."""
    split = SplitContent()
    texts: list[str | None] = []
    for part in as_parts(content):
        if part.get("thought") is True:
            continue
        if isinstance(part.get("functionCall"), dict):
            split.calls.append(part["functionCall"])
        elif isinstance(part.get("functionResponse"), dict):
            split.responses.append(part["functionResponse"])
        else:
            texts.append(part_text(part))
    split.text = join_text(texts)
    return split


def part_text(part: dict[str, Any]) -> str | None:
    """Visible text of a non-call part: text, media placeholder, code or its result."""
    if isinstance(part.get("text"), str):
        return str(part["text"])
    inline = as_object(part.get("inlineData") or part.get("inline_data"))
    if inline:
        data = as_text(inline.get("data"))
        size = base64_size(data) if data is not None else None
        return media_placeholder(as_text(inline.get("mimeType")), size=size)
    file_data = as_object(part.get("fileData") or part.get("file_data"))
    if file_data:
        uri = as_text(file_data.get("fileUri")) or ""
        return media_placeholder(as_text(file_data.get("mimeType")), where=uri)
    code = as_object(part.get("executableCode"))
    if code:
        return f"```{str(code.get('language', '')).lower()}\n{code.get('code', '')}\n```"
    outcome = as_object(part.get("codeExecutionResult"))
    if outcome:
        return as_text(outcome.get("output"))
    return None


def response_text(response: dict[str, Any]) -> tuple[str, bool]:
    """Visible text of a ``functionResponse`` and whether it reports an error."""
    body = response.get("response")
    if isinstance(body, dict):
        if isinstance(body.get("output"), str):
            return body["output"], False
        if body.get("error") is not None:
            return render_value(body["error"]), True
    return render_value(body), False


def result_text(result: Any) -> str | None:
    """Visible text of a tool call record's ``result`` (parts, or a plain string)."""
    if result is None:
        return None
    if isinstance(result, str):
        return result
    texts: list[str | None] = []
    for part in as_parts(result):
        if isinstance(part.get("functionResponse"), dict):
            texts.append(response_text(part["functionResponse"])[0])
        elif part.get("thought") is not True:
            texts.append(part_text(part))
    return join_text(texts)


def exit_code_of(text: str | None) -> int | None:
    """The ``Exit Code: N`` line Gemini CLI's shell tool writes into its output."""
    match = _EXIT_CODE.search(text or "")
    return int(match.group(1)) if match else None
