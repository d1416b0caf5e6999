"""How a Codex tool call ended: result text, status and exit code from any version's shape.

Tool outputs reach the model as ``*_output`` history items (a string in older builds,
content items or a ``{content, success}`` payload in newer ones) and are described again
by execution events (``exec_command_end``, ``mcp_tool_call_end`` …). This module reads
both into one ``Outcome``; ``_tools`` merges outcomes into calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import orjson

from proctor.sources.codex._records import (
    as_dict,
    as_int,
    as_str,
    content_text,
    duration_ms,
    image_placeholder,
)
from proctor.transcript import ToolStatus

_STATUS_RANK: dict[ToolStatus, int] = {
    "pending": 0,
    "ok": 1,
    "error": 2,
    "interrupted": 3,
    "rejected": 4,
}

_STATUS_WORDS: dict[str, ToolStatus] = {
    "completed": "ok",
    "complete": "ok",
    "success": "ok",
    "succeeded": "ok",
    "ok": "ok",
    "failed": "error",
    "failure": "error",
    "error": "error",
    "errored": "error",
    "declined": "rejected",
    "denied": "rejected",
    "rejected": "rejected",
    "interrupted": "interrupted",
    "aborted": "interrupted",
    "cancelled": "interrupted",
    "canceled": "interrupted",
    "in_progress": "pending",
    "inprogress": "pending",
    "running": "pending",
    "pending": "pending",
}

# Codex normalises a person's denial to these texts; the guardian reviewer adds the last.
_REJECTION_TEXTS = ("exec command rejected by user", "patch rejected by user")
_GUARDIAN_REJECTION = "rejected due to unacceptable risk"
_EXIT_CODE_PREFIXES = ("Exit code:", "Process exited with code")


@dataclass(slots=True)
class Outcome:
    """What one output item or execution event says about how a call ended."""

    text: str | None = None
    status: ToolStatus | None = None
    exit_code: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


def stronger(first: ToolStatus | None, second: ToolStatus | None) -> ToolStatus | None:
    """The more specific of two statuses: a rejection beats an error beats success."""
    if first is None:
        return second
    if second is None:
        return first
    return first if _STATUS_RANK[first] >= _STATUS_RANK[second] else second


def status_from_word(value: Any) -> ToolStatus | None:
    """A status from Codex's words (``completed``, ``declined`` …) or ``{completed: …}``."""
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value))
    if not isinstance(value, str):
        return None
    return _STATUS_WORDS.get(value.strip().lower())


def status_from_text(text: str) -> ToolStatus | None:
    """A status the output text itself states (a denial or an abort), else None."""
    head = text.lstrip()[:200].lower()
    if head.startswith(_REJECTION_TEXTS) or _GUARDIAN_REJECTION in head:
        return "rejected"
    if head.rstrip() == "aborted" or head.startswith("aborted by user"):
        return "interrupted"
    return None


def exit_code_from_header(text: str) -> int | None:
    """The exit code in the header Codex puts before ``Output:`` in shell results."""
    for number, line in enumerate(text.splitlines()):
        if number > 12 or line.rstrip() == "Output:":
            return None
        for prefix in _EXIT_CODE_PREFIXES:
            if line.startswith(prefix):
                return as_int(line[len(prefix) :].strip())
    return None


def read_output(output: Any) -> Outcome:
    """Read a ``*_output`` item's ``output`` value."""
    success: Any = None
    body = output
    if (
        isinstance(output, dict)
        and "type" not in output
        and ("content" in output or "success" in output)
    ):
        success = output.get("success")
        body = output.get("content", output.get("content_items"))
    text = body if isinstance(body, str) else content_text(body)
    outcome = Outcome(text=text)
    _unwrap_exec_envelope(outcome)
    if outcome.exit_code is None and outcome.text:
        outcome.exit_code = exit_code_from_header(outcome.text)
    status = status_from_text(outcome.text or "")
    if status is None and outcome.exit_code is not None:
        status = "ok" if outcome.exit_code == 0 else "error"
    if status is None and success is False:
        status = "error"
    outcome.status = status or "ok"
    return outcome


def _unwrap_exec_envelope(outcome: Outcome) -> None:
    """Older shell results are ``{"output": …, "metadata": {"exit_code", …}}`` as a string."""
    text = outcome.text or ""
    if not text.startswith("{") or '"metadata"' not in text:
        return
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    metadata = as_dict(value.get("metadata")) if isinstance(value, dict) else {}
    if not metadata or not isinstance(value.get("output"), str):
        return
    outcome.text = value["output"]
    outcome.exit_code = as_int(metadata.get("exit_code"))
    seconds = metadata.get("duration_seconds")
    if (
        isinstance(seconds, int | float)
        and not isinstance(seconds, bool)
        and math.isfinite(seconds)
    ):
        outcome.attributes["duration_ms"] = round(seconds * 1000)


def read_exec_end(payload: dict[str, Any]) -> Outcome:
    """``exec_command_end`` or an ``item_completed`` ``CommandExecution``."""
    exit_code = as_int(payload.get("exit_code"))
    text = (
        as_str(payload.get("aggregated_output"))
        or as_str(payload.get("formatted_output"))
        or "\n".join(t for t in (as_str(payload.get("stdout")), as_str(payload.get("stderr"))) if t)
        or None
    )
    status = status_from_word(payload.get("status"))
    if status in (None, "ok") and exit_code is not None:
        status = "ok" if exit_code == 0 else "error"
    return Outcome(text, status, exit_code, _timing(payload))


def read_patch_end(payload: dict[str, Any]) -> Outcome:
    """``patch_apply_end`` or an ``item_completed`` ``FileChange``."""
    status = status_from_word(payload.get("status"))
    success = payload.get("success")
    if status in (None, "ok") and isinstance(success, bool):
        status = "ok" if success else "error"
    text = "\n".join(t for t in (as_str(payload.get("stdout")), as_str(payload.get("stderr"))) if t)
    attributes: dict[str, Any] = {}
    changes = payload.get("changes")
    if isinstance(changes, dict) and changes:
        attributes["files"] = sorted(changes)[:50]
    return Outcome(text or None, status, None, attributes)


def read_mcp_end(payload: dict[str, Any]) -> Outcome:
    """``mcp_tool_call_end`` (``result: {Ok|Err}``) or an ``item_completed`` ``McpToolCall``."""
    result = payload.get("result")
    status: ToolStatus | None = status_from_word(payload.get("status"))
    if isinstance(result, dict) and "Err" in result:
        return Outcome(str(result["Err"]), "error", None, _timing(payload))
    if isinstance(result, dict) and isinstance(result.get("Ok"), dict):
        result = result["Ok"]
    body = as_dict(result)
    text = content_text(body.get("content"))
    if body.get("isError") is True:
        status = "error"
    error = payload.get("error")
    if error:
        status = "error"
        text = text or (error if isinstance(error, str) else str(as_dict(error).get("message")))
    return Outcome(text or None, status or "ok", None, _timing(payload))


def read_web_search_end(payload: dict[str, Any]) -> Outcome:
    """``web_search_end``: the result titles and addresses the search returned."""
    lines = []
    for result in payload.get("results") or ():
        if isinstance(result, dict):
            title = as_str(result.get("title")) or ""
            url = as_str(result.get("url")) or as_str(result.get("domain")) or ""
            lines.append(f"{title} — {url}".strip(" —"))
    return Outcome("\n".join(lines) or None, "ok")


def read_image_generation(payload: dict[str, Any]) -> Outcome:
    """``image_generation_call`` / ``image_generation_end``: the image as a placeholder."""
    result = payload.get("result")
    text = image_placeholder({"data": result, "mimeType": "image/png"}) if result else None
    return Outcome(text, status_from_word(payload.get("status")) or ("ok" if result else None))


def read_dynamic_tool_response(payload: dict[str, Any]) -> Outcome:
    """``dynamic_tool_call_response``: content items, ``success`` and ``error``."""
    text = content_text(payload.get("content_items"))
    error = payload.get("error")
    if error:
        text = text or (error if isinstance(error, str) else str(error))
    success = payload.get("success")
    status: ToolStatus = "error" if error or success is False else "ok"
    return Outcome(text or None, status, None, _timing(payload))


def _timing(payload: dict[str, Any]) -> dict[str, Any]:
    elapsed = duration_ms(payload.get("duration"))
    return {} if elapsed is None else {"duration_ms": elapsed}
