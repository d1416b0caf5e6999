"""Generated Proctor JSONL transcripts for the trace view's tests (and its benchmark).

Everything is written as a file in Proctor's own JSONL format and stored by ``ingest``, the
way a user's files are; findings are recorded through the store's writer. Times are fixed
(no clock, no randomness), so every process generates the same ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from proctor.findings import Evidence, Finding, finding_key
from proctor.store import SqlStore

START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
LATE_CLAIM = "Verified: every export test passes now."


def _at(ms: int) -> str:
    return (START + timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")


def _header() -> dict[str, Any]:
    return {"type": "header", "format": "proctor-jsonl", "version": 1, "producer": "trace tests"}


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    """Write ``lines`` (after a header) as a Proctor JSONL file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(line) for line in [_header(), *lines]) + "\n")
    return path


@dataclass(frozen=True)
class LongTrace:
    """A generated long conversation and what tests look up in it."""

    conversation_id: str
    """The producer's id (``ingest`` stores it as the external id)."""
    messages: int
    tool_calls: int
    prompts: int
    late_message: str
    """The producer id of a message near the end that a finding cites."""
    late_claim: str


def long_trace_lines(
    conversation_id: str = "trace-long", *, messages: int = 2000, prompt_every: int = 50
) -> tuple[list[dict[str, Any]], LongTrace]:
    """A conversation of ``messages`` messages: a prompt every ``prompt_every`` messages,
    each reply issuing one shell call (every seventh fails), Markdown in the replies; the
    second-to-last reply claims success in words a finding can cite."""
    lines: list[dict[str, Any]] = [
        {
            "type": "conversation",
            "conversation_id": conversation_id,
            "title": f"Long trace ({messages} messages)",
            "project": "trace-lab",
            "started_at": _at(0),
        }
    ]
    calls = prompts = 0
    late = f"m{messages - 2}"
    clock = 0
    for index in range(messages):
        message_id = f"m{index}"
        clock += 1500
        if index % prompt_every == 0:
            prompts += 1
            lines.append(
                {
                    "type": "message",
                    "conversation_id": conversation_id,
                    "message_id": message_id,
                    "role": "user",
                    "kind": "prompt",
                    "text": f"Step {prompts}: fix the export for batch {prompts}.",
                    "created_at": _at(clock),
                }
            )
            continue
        text = LATE_CLAIM if message_id == late else f"Working on **batch** `{index}`:\n\n- check\n"
        lines.append(
            {
                "type": "message",
                "conversation_id": conversation_id,
                "message_id": message_id,
                "role": "assistant",
                "text": text,
                "model": "model-a",
                "usage": {"input_tokens": 100 + index, "output_tokens": 20},
                "created_at": _at(clock),
            }
        )
        calls += 1
        call_id = f"c{index}"
        failed = calls % 7 == 0
        lines.append(
            {
                "type": "tool_call",
                "conversation_id": conversation_id,
                "call_id": call_id,
                "message_id": message_id,
                "name": "shell",
                "arguments": {"command": f"run-export --batch {index}"},
                "created_at": _at(clock + 100),
            }
        )
        lines.append(
            {
                "type": "tool_result",
                "conversation_id": conversation_id,
                "call_id": call_id,
                "status": "error" if failed else "ok",
                "exit_code": 1 if failed else 0,
                "output": f"batch {index}: {'FAILED' if failed else 'ok'}",
                "completed_at": _at(clock + 400),
            }
        )
    trace = LongTrace(conversation_id, messages, calls, prompts, late, LATE_CLAIM)
    return lines, trace


def write_long_trace(path: Path, conversation_id: str = "trace-long", **options: Any) -> LongTrace:
    """Write a long conversation (see ``long_trace_lines``) to ``path``."""
    lines, trace = long_trace_lines(conversation_id, **options)
    write_jsonl(path, lines)
    return trace


def family_lines() -> list[dict[str, Any]]:
    """A parent conversation that starts three sub-agents through three ``Task`` calls: one
    finished with a Markdown summary, one still running, one that failed; a fourth sub-agent
    names no call. Each child has a few messages and calls of its own."""
    parent = "family"
    lines: list[dict[str, Any]] = [
        {
            "type": "conversation",
            "conversation_id": parent,
            "title": "Family of sub-agents",
            "project": "trace-lab",
        },
        {
            "type": "message",
            "conversation_id": parent,
            "message_id": "p0",
            "role": "user",
            "kind": "prompt",
            "text": "Survey the repository with helpers.",
            "created_at": _at(0),
        },
        {
            "type": "message",
            "conversation_id": parent,
            "message_id": "p1",
            "role": "assistant",
            "text": "Starting three helpers.",
            "model": "model-a",
            "created_at": _at(1000),
        },
    ]
    runs = [
        (
            "done",
            "Explore",
            "Map the money code",
            "completed",
            "## Found\n\n- `totals.py:19`",
            12_000,
        ),
        ("busy", "Plan", "Draft the migration", "running", None, None),
        ("broke", "Explore", "Read the CI logs", "error", "Could not read the logs.", 3_000),
    ]
    for offset, (name, agent_type, task, status, summary, duration) in enumerate(runs):
        call_id = f"task-{name}"
        lines.append(
            {
                "type": "tool_call",
                "conversation_id": parent,
                "call_id": call_id,
                "message_id": "p1",
                "name": "Task",
                "arguments": {"subagent_type": agent_type, "description": task},
                "created_at": _at(2000 + offset * 100),
            }
        )
        if status != "running":
            lines.append(
                {
                    "type": "tool_result",
                    "conversation_id": parent,
                    "call_id": call_id,
                    "status": "ok" if status == "completed" else "error",
                    "output": summary or "",
                    "completed_at": _at(2000 + offset * 100 + (duration or 0)),
                }
            )
        lines.extend(
            _child_lines(parent, name, call_id, agent_type, task, status, summary, duration)
        )
    lines.extend(
        _child_lines(parent, "loose", None, "Explore", "Unlinked helper", "completed", "ok", 500)
    )
    return lines


def _child_lines(
    parent: str,
    name: str,
    call_id: str | None,
    agent_type: str,
    task: str,
    status: str,
    summary: str | None,
    duration: int | None,
) -> Iterator[dict[str, Any]]:
    child = f"family-{name}"
    yield {"type": "conversation", "conversation_id": child, "title": task, "project": "trace-lab"}
    run: dict[str, Any] = {
        "type": "subagent_run",
        "conversation_id": child,
        "parent_conversation_id": parent,
        "agent_type": agent_type,
        "description": task,
        "status": status,
        "rounds": 2,
        "total_tokens": 900,
        "tool_uses": 2,
    }
    if call_id is not None:
        run["parent_call_id"] = call_id
    if summary is not None:
        run["summary"] = summary
    if duration is not None:
        run["duration_ms"] = duration
        run["stop_kind"] = "completed" if status == "completed" else "error"
    yield run
    yield {
        "type": "message",
        "conversation_id": child,
        "message_id": f"{name}-0",
        "role": "user",
        "kind": "prompt",
        "text": task,
        "created_at": _at(2100),
    }
    yield {
        "type": "message",
        "conversation_id": child,
        "message_id": f"{name}-1",
        "role": "assistant",
        "text": "Looking.",
        "created_at": _at(2500),
    }
    for n in range(2):
        yield {
            "type": "tool_call",
            "conversation_id": child,
            "call_id": f"{name}-call-{n}",
            "message_id": f"{name}-1",
            "name": "Grep",
            "arguments": {"pattern": "round"},
            "created_at": _at(2600 + n),
        }


def cite(
    store: SqlStore,
    conversation_id: str,
    source_type: str,
    source_id: str,
    *,
    title: str,
    severity: str = "medium",
    field: str | None = None,
    start: int | None = None,
    end: int | None = None,
    more: list[Evidence] | None = None,
) -> Finding:
    """Record a finding of ``conversation_id`` citing one source (plus ``more``)."""
    evidence = [
        Evidence(
            source_type=source_type,
            source_id=source_id,
            field=field,
            start=start,
            end=end,
        ),
        *(more or []),
    ]
    finding = Finding(
        key=finding_key("trace_test", conversation_id, evidence, title),
        conversation_id=conversation_id,
        rule="trace_test",
        rule_version=1,
        action="warn",
        category="quality",
        severity=severity,
        title=title,
        evidence=evidence,
    )
    store.record_findings([finding])
    stored, _ = store.findings(conversation_ids=[conversation_id], limit=1000)
    return next(f for f in stored if f.key == finding.key)
