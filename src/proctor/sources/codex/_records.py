"""Reading the values inside Codex rollout records, tolerant of version drift.

This module owns the small, format-level rules every other part of the adapter shares:
which record kinds exist, how times are parsed, how a Responses-API ``content`` list is
turned into visible text (images become placeholders, encrypted parts are dropped),
which user-role texts are harness-injected context, and how two renderings of the same
message are compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

ROLLOUT_KINDS = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
    }
)
"""Every top-level ``type`` a rollout line can have (codex-rs ``RolloutItem``)."""

HISTORY_KINDS = frozenset({"response_item", "event_msg", "turn_context", "compacted"})
"""Kinds that carry conversation history; used to recognise files without a session_meta."""

# Start markers of the user-role fragments Codex injects into a turn (AGENTS.md, the
# environment block, skills, aborted-turn notes …), after codex-rs
# `contextual_user_message.rs`. Matched case-insensitively at the start of a text part.
_INJECTED_PREFIXES = (
    "# agents.md instructions",
    "<user_instructions>",
    "<agents_instructions>",
    "<environment_context>",
    "<context_update>",
    "<multiagent_context>",
    "<skill>",
    "<skills_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<codex_internal_context",
    "<goal_context>",
    "<recommended_plugins>",
    "<agent_message_board_notification>",
    "<hook_prompt ",
)

_IMAGE_PART_TYPES = frozenset({"input_image", "output_image", "image", "inputImage", "localImage"})
_DATA_URL = re.compile(r"^data:([\w.+\-]+/[\w.+\-]+)?(?:;[\w=\-]+)*;base64,", re.ASCII)

# Sanitised exports (e.g. the localpush fixtures) replace text with
# `[REDACTED_<KIND> len=<n> sha=<hash>]`; the KIND differs between the response layer
# (TEXT) and its event mirror (MESSAGE) while length and hash identify the original.
_SANITISED_MARKER = re.compile(r"\[REDACTED_[A-Z_]+ (len=\d+ sha=[0-9a-f]+)\]")


@dataclass(frozen=True, slots=True)
class Where:
    """Where a record sits: its line, time, turn and ordinal (all optional but the line)."""

    line: int
    time: datetime | None
    turn_id: str | None
    ordinal: int | None = None


def as_str(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_int(value: Any) -> int | None:
    """``value`` as an int when it is a whole number (bools excluded), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def parse_time(value: Any) -> datetime | None:
    """A timezone-aware UTC time from an ISO-8601 string or epoch seconds/milliseconds."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def duration_ms(value: Any) -> int | None:
    """Milliseconds from a Rust ``Duration`` (``{secs, nanos}``) or a number of ms."""
    if isinstance(value, dict):
        secs = as_int(value.get("secs")) or 0
        nanos = as_int(value.get("nanos")) or 0
        return secs * 1000 + nanos // 1_000_000
    return as_int(value)


def turn_id_of(payload: dict[str, Any]) -> str | None:
    """The turn id a record names itself, in any of the places versions put it."""
    turn_id = payload.get("turn_id") or payload.get("turnId")
    if isinstance(turn_id, str) and turn_id:
        return turn_id
    for name in ("internal_chat_message_metadata_passthrough", "metadata"):
        holder = payload.get(name)
        if isinstance(holder, dict) and isinstance(holder.get("turn_id"), str):
            return holder["turn_id"] or None
    return None


def image_placeholder(part: dict[str, Any]) -> str:
    """Short text standing for an image part, with media type and size; never the bytes."""
    url = part.get("image_url") or part.get("url") or part.get("path")
    if isinstance(url, dict):
        url = url.get("url")
    data = part.get("data") or part.get("result")
    media_type = as_str(part.get("mimeType")) or as_str(part.get("mime_type"))
    if isinstance(url, str):
        match = _DATA_URL.match(url)
        if match:
            size = _base64_size(len(url) - match.end(), url)
            return f"[image: {match.group(1) or 'image'}, {size} bytes]"
        return f"[image: {url[:200]}]"
    if isinstance(data, str) and data:
        return f"[image: {media_type or 'image'}, {_base64_size(len(data), data)} bytes]"
    return "[image]"


def _base64_size(length: int, text: str) -> int:
    padding = len(text) - len(text.rstrip("="))
    return max(length * 3 // 4 - padding, 0)


def content_parts(content: Any) -> list[str]:
    """Visible text of each part of a content value (string, one part, or a list of parts).

    Images become placeholders; reasoning and encrypted parts are dropped (SPEC ING-3).
    """
    if isinstance(content, str):
        return [content] if content else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            if part:
                parts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if isinstance(kind, str) and ("reasoning" in kind or "encrypted" in kind):
            continue
        if kind in _IMAGE_PART_TYPES:
            parts.append(image_placeholder(part))
        elif kind in ("input_file", "file"):
            name = as_str(part.get("filename")) or as_str(part.get("file_id")) or "file"
            parts.append(f"[file: {name}]")
        elif kind == "refusal" and as_str(part.get("refusal")):
            parts.append(part["refusal"])
        elif as_str(part.get("text")):
            # Known text parts and unknown newer kinds alike: their `text` is visible.
            parts.append(part["text"])
    return parts


def content_text(content: Any) -> str:
    """All visible text of a content value, parts joined by newlines."""
    return "\n".join(content_parts(content))


def is_injected(parts: list[str]) -> bool:
    """True when any text part is context Codex injected into the user turn."""
    for text in parts:
        head = text.lstrip()[:48].lower()
        if head.startswith(_INJECTED_PREFIXES):
            return True
    return False


def mirror_key(text: str) -> str:
    """A comparison key under which a message and its event mirror are equal."""
    collapsed = " ".join(text.split())
    if "[REDACTED_" in collapsed:
        collapsed = _SANITISED_MARKER.sub(r"[\1]", collapsed)
    return collapsed


def short(value: Any, limit: int = 60) -> str:
    """A short printable form of a value for issue messages."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def small_attributes(values: dict[str, Any]) -> dict[str, Any]:
    """Attributes worth keeping: short scalars only, empty values left out."""
    return {
        name: value
        for name, value in values.items()
        if value is not None and isinstance(value, str | int | float | bool)
    }
