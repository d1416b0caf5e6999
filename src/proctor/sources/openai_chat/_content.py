"""Visible text of Chat Completions message content.

Content is a string or a list of parts. Text and refusals are kept; images, audio and
files become placeholders with media type and size (SPEC ING-5); vendor reasoning parts
are dropped (ING-3).
"""

from __future__ import annotations

from typing import Any

from proctor.sources._common import (
    as_object,
    base64_size,
    join_text,
    media_placeholder,
    render_value,
    url_placeholder,
)

REASONING_PART_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking", "reasoning_text"})


def content_text(content: Any) -> str:
    """The visible text of a message's ``content`` (string, list of parts, or null)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return part_text(content) or ""
    if isinstance(content, list):
        return join_text(part_text(part) for part in content)
    return render_value(content)


def part_text(part: Any) -> str | None:
    """The visible text of one content part; None for parts that show nothing."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if not isinstance(kind, str | None):
        return None
    if kind in REASONING_PART_TYPES:
        return None
    if kind == "text" or (kind is None and isinstance(part.get("text"), str)):
        text = part.get("text")
        return text if isinstance(text, str) else None
    if kind == "refusal":
        refusal = part.get("refusal")
        return refusal if isinstance(refusal, str) else None
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        return url_placeholder(url, media_type="image/*") if isinstance(url, str) else "[image]"
    if kind == "input_audio":
        audio = as_object(part.get("input_audio"))
        data = audio.get("data")
        audio_format = audio.get("format")
        return media_placeholder(
            f"audio/{audio_format}" if isinstance(audio_format, str) else "audio/*",
            size=base64_size(data) if isinstance(data, str) else None,
        )
    if kind == "file":
        return _file_placeholder(part.get("file"))
    return f"[{kind} part]" if isinstance(kind, str) else None


def _file_placeholder(file: Any) -> str:
    if not isinstance(file, dict):
        return "[file]"
    data = file.get("file_data")
    name = file.get("filename") or file.get("file_id")
    if isinstance(data, str) and data.startswith("data:"):
        placeholder = url_placeholder(data)
        return f"{placeholder[:-1]}, {name}]" if isinstance(name, str) else placeholder
    size = base64_size(data) if isinstance(data, str) else None
    return media_placeholder(None, size=size, where=name if isinstance(name, str) else "")
