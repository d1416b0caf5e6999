"""Pair ``tool_result`` blocks with the calls they answer and read each call's outcome.

Results normally name their call (``tool_use_id``). Old and drifted logs write calls
without ids; their results are matched to the next open call of the line they answer
(``sourceToolAssistantUUID``, or the result's parent in the thread). The outcome maps
to a status (ok, error, rejected by the user, interrupted) and, for shell tools, an exit
code; a small part of ``toolUseResult`` is kept as the call's attributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from proctor.sources.claude_code._content import (
    outcome_status,
    shell_exit_code,
    strip_error_wrapper,
)
from proctor.sources.claude_code._model import Entry, ToolOutcome
from proctor.sources.claude_code._threading import Placed
from proctor.transcript import SourceIssue, ToolCall, ToolStatus


@dataclass(slots=True, eq=False)
class OpenCall:
    """A call waiting for its result, with the key of the line that made it: the fields
    of its ``ToolCall``, which is made once its result is known (``tool_call``)."""

    source_id: str
    name: str
    arguments: Any
    call_id: str | None
    message_source_id: str | None
    created_at: datetime | None
    on_active_branch: bool
    line_key: str
    status: ToolStatus = "pending"
    result_text: str | None = None
    exit_code: int | None = None
    completed_at: datetime | None = None
    attributes: dict[str, Any] | None = None

    def tool_call(self) -> ToolCall:
        """The call as it stands: completed by its result, or still pending."""
        return ToolCall(
            source_id=self.source_id,
            name=self.name,
            arguments=self.arguments,
            call_id=self.call_id,
            message_source_id=self.message_source_id,
            status=self.status,
            result_text=self.result_text,
            exit_code=self.exit_code,
            created_at=self.created_at,
            completed_at=self.completed_at,
            on_active_branch=self.on_active_branch,
            attributes={} if self.attributes is None else self.attributes,
        )


def pair_results(
    calls: list[OpenCall], placed: list[Placed], shown: str
) -> tuple[list[ToolCall], list[SourceIssue]]:
    """The calls completed by their results, and a warning for results no call takes."""
    issues = _attach(calls, placed, shown)
    return [open_call.tool_call() for open_call in calls], issues


def _attach(calls: list[OpenCall], placed: list[Placed], shown: str) -> list[SourceIssue]:
    """Attach each ``tool_result`` to its call; report results no call here can take."""
    by_id = {draft.call_id: draft for draft in calls if draft.call_id is not None}
    unnamed: dict[str, list[OpenCall]] = {}
    for draft in calls:
        if draft.call_id is None:
            unnamed.setdefault(draft.line_key, []).append(draft)
    orphans: list[tuple[int, str]] = []
    for node, parent_key, _ in placed:
        entry = node.entry
        if entry is None or not entry.outcomes:
            continue
        for outcome in entry.outcomes:
            found = by_id.get(outcome.call_id) if outcome.call_id else None
            if found is None:
                found = _unnamed_match(calls, unnamed, entry, outcome, parent_key)
            if found is None or found.status != "pending":
                orphans.append((node.line, outcome.call_id or "without an id"))
                continue
            _complete(found, node.time, entry, outcome)
    if not orphans:
        return []
    line, call_id = orphans[0]
    return [
        SourceIssue(
            shown,
            f"{len(orphans)} tool result(s) match no open call in this conversation "
            f"(first: {call_id}); they were not attached",
            line,
            severity="warning",
        )
    ]


def _unnamed_match(
    calls: list[OpenCall],
    unnamed: dict[str, list[OpenCall]],
    entry: Entry,
    outcome: ToolOutcome,
    parent_key: str | None,
) -> OpenCall | None:
    """A result without a usable id: the next open id-less call of the line it answers.

    That line is named by ``sourceToolAssistantUUID`` or, failing that, is the result's
    parent in the thread.
    """
    candidates: list[OpenCall] = []
    line_key = entry.source_tool_line or parent_key
    if line_key is not None and line_key in unnamed:
        candidates = unnamed[line_key]
    elif outcome.tool_name is not None:  # drifted top-level records: the latest open call
        candidates = [
            draft
            for draft in reversed(calls)
            if draft.call_id is None and draft.name == outcome.tool_name
        ]
    for draft in candidates:
        if draft.status == "pending":
            return draft
    return None


def _complete(
    call: OpenCall, completed_at: datetime | None, entry: Entry, outcome: ToolOutcome
) -> None:
    """Complete ``call`` with its result."""
    meta = entry.result_meta or {}
    status: ToolStatus = outcome_status(
        outcome.text, is_error=outcome.is_error, interrupted=meta.get("interrupted") is True
    )
    if meta.get("rejected") is True:
        status = "rejected"
    text = strip_error_wrapper(outcome.text) if outcome.is_error else outcome.text
    attributes = {k: v for k, v in meta.items() if k != "rejected"}
    if entry.result_task_id is not None:
        attributes["taskId"] = entry.result_task_id
    call.status = status
    call.result_text = text
    call.exit_code = shell_exit_code(call.name, status, text)
    call.completed_at = completed_at
    call.attributes = attributes
