"""The cost law (SPEC HB-4), end to end, with a counting scripted model.

A `suggest` plan fires three times against one store and one loopback model:

1. nothing new since the last review → no model call at all;
2. something new that yields no suggestion candidate → the review's calls only;
3. something new with candidates (a test left failing) → the review's calls and exactly
   one phrasing call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from proctor.heartbeat import draft_plan, run_due, save_plan, set_app_enabled
from proctor.heartbeat.suggestions import open_phrasing
from proctor.heartbeat.suggestions._phrasing import PHRASING_SYSTEM
from proctor.ingest import ingest
from proctor.models import set_default_connection
from proctor.review import open_semantic_layer
from proctor.review.semantic import MERGE_SYSTEM
from proctor.store import SqlStore, open_store
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer
from tests.conftest import EXAMPLES_DIR

DUE = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
"""09:00 in Berlin."""

LEAF = {
    "events": [],
    "entities": [],
    "entityChanges": [],
    "relations": [],
    "summary": "A batch.",
    "changeDigest": "",
    "openItems": [],
}
MERGE = {"summary": "The day's work.", "changeDigest": "", "storyLines": [], "experiences": []}


def _kind(request: RecordedRequest) -> str:
    system = request.text_of("system").strip()
    if system == MERGE_SYSTEM.strip():
        return "merge"
    if system == PHRASING_SYSTEM.strip():
        return "phrasing"
    return "leaf"


def _answer(request: RecordedRequest) -> str:
    kind = _kind(request)
    if kind == "phrasing":
        return json.dumps({"suggestions": []})  # every candidate falls back to its rule text
    return json.dumps(MERGE if kind == "merge" else LEAF)


def _chat(path: Path, conversation: str, lines: list[dict[str, Any]]) -> Path:
    """A small Proctor JSONL conversation."""
    header = {"type": "header", "format": "proctor-jsonl", "version": 1}
    opening = {
        "type": "conversation",
        "conversation_id": conversation,
        "project": "notes",
        "started_at": "2026-11-20T10:00:00Z",
    }
    rows = [header, opening, *({"conversation_id": conversation, **line} for line in lines)]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(responder=_answer) as running:
        yield running


@pytest.fixture
def store(tmp_path: Path, server: ScriptedModelServer) -> Iterator[SqlStore]:
    store = open_store(tmp_path / "proctor.db")
    store.save_connection(server.connection("scripted"))
    set_default_connection(store, "scripted")
    set_app_enabled(store, True)
    ingest(store, [EXAMPLES_DIR])
    fields = {"name": "daily", "recurrence": "daily", "time": "09:00"}
    save_plan(
        store,
        draft_plan(**fields, timezone="Europe/Berlin", intervention="suggest"),
        now=DUE - timedelta(hours=1),
    )
    try:
        yield store
    finally:
        store.close()


def _fire(store: SqlStore, now: datetime) -> Any:
    (outcome,) = run_due(
        store,
        now=now,
        owner="worker:1",
        semantic_factory=lambda: open_semantic_layer(store, None),
        phrasing_factory=lambda: open_phrasing(store),
        clock=lambda: now,
    )
    return outcome


@pytest.mark.slow
def test_no_change_costs_nothing_no_candidates_cost_the_review_candidates_one_call_more(
    store: SqlStore, server: ScriptedModelServer, tmp_path: Path
) -> None:
    first = _fire(store, DUE)  # the bundled examples: failing tests → candidates
    kinds = [_kind(r) for r in server.requests]
    assert first.status == "completed"
    assert kinds.count("phrasing") == 1
    assert kinds.count("merge") == 1
    assert first.suggestions > 0

    # 1. Nothing new.
    before = len(server.requests)
    quiet = _fire(store, DUE + timedelta(days=1))
    assert quiet.status == "no_change"
    assert len(server.requests) == before

    # 2. A new conversation with nothing to suggest: the review's calls only.
    ingest(
        store,
        [
            _chat(
                tmp_path / "chat.jsonl",
                "chat-1",
                [
                    {"type": "message", "message_id": "m1", "role": "user", "text": "Hello"},
                    {"type": "message", "message_id": "m2", "role": "assistant", "text": "Hi."},
                ],
            )
        ],
    )
    before = len(server.requests)
    plain = _fire(store, DUE + timedelta(days=2))
    added = [_kind(r) for r in server.requests[before:]]
    assert plain.status == "completed"
    assert added == ["leaf", "merge"]
    assert plain.suggestions == 0

    # 3. A new conversation that leaves a test failing: one phrasing call more.
    failing = [
        {"type": "message", "message_id": "m1", "role": "user", "text": "Run the tests"},
        {"type": "message", "message_id": "m2", "role": "assistant", "text": "Running."},
        {
            "type": "tool_call",
            "call_id": "c1",
            "message_id": "m2",
            "name": "shell",
            "arguments": {"command": "pytest -q"},
        },
        {
            "type": "tool_result",
            "call_id": "c1",
            "status": "error",
            "exit_code": 1,
            "output": "FAILED tests/test_notes.py::test_save\n1 failed, 3 passed in 0.20s",
        },
    ]
    ingest(store, [_chat(tmp_path / "failing.jsonl", "chat-2", failing)])
    before = len(server.requests)
    busy = _fire(store, DUE + timedelta(days=3))
    added = [_kind(r) for r in server.requests[before:]]
    assert busy.status == "completed"
    assert added == ["leaf", "merge", "phrasing"]
    assert busy.suggestions >= 1
