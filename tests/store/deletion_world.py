"""A store in which every table holds rows of two conversations, made by the product itself.

Two Proctor JSONL conversations, each with a task, task events, a failing test run, a
destructive command, a sub-agent and a goal change later on, are imported from a folder
(with a broken file beside them), checked by the rules, supervised in goal mode (the
conversations, their sub-agents and their tasks) against the scripted model, reviewed by
a heartbeat plan with the semantic layer, given suggestions that a person accepts, an
entity a person revises, a search index and a second review that disagrees with the
person, and graph access. Every word of one conversation carries its tag (``quokka`` or
``narwhal``), so a row that still names it can be found by that word.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from proctor.heartbeat import draft_plan, run_due, save_plan, set_app_enabled
from proctor.heartbeat.suggestions import open_phrasing
from proctor.heartbeat.suggestions._phrasing import PHRASING_SYSTEM
from proctor.ingest import ingest
from proctor.models import set_default_connection
from proctor.review import ReviewRequest, open_semantic_layer, start_review
from proctor.review.semantic import MERGE_SYSTEM
from proctor.review.semantic._prompts import LEAF_SYSTEM
from proctor.search import index_sources, search
from proctor.store import SqlStore
from proctor.store import _schema as t
from proctor.store._findings_inbox import FindingFilter
from proctor.supervision import (
    SessionSettings,
    check_conversations,
    enable_supervision,
    on_conversations_changed,
    resolve_target,
)
from proctor.supervisor import INTENT_SYSTEM_PROMPT
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer

TAGS = ("quokka", "narwhal")
"""The two conversations' tags; the first is deleted."""

FILES = {"quokka": "first.jsonl", "narwhal": "second.jsonl"}
"""File names that do not carry the tag: the import log names files, not conversations."""

DUE = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
"""09:00 in Berlin, when the plan is due."""


def conversation_id(tag: str) -> str:
    """The stored id of a tag's main conversation."""
    return f"pj:{tag}-ledger"


def goal_sentence(tag: str) -> str:
    """The user's first request: the goal supervision records."""
    return f"Please make the {tag} ledger round half-even and keep the {tag} tests green."


def _lines(tag: str, *, later: bool) -> list[dict[str, Any]]:
    main = f"{tag}-ledger"
    helper = f"{main}/helper"
    task = f"{tag}-task"
    at = "2026-11-20T09:00:{:02d}Z".format
    lines: list[dict[str, Any]] = [
        {"type": "header", "format": "proctor-jsonl", "version": 1},
        {
            "type": "conversation",
            "conversation_id": main,
            "title": f"{tag} ledger work",
            "project": "ledger",
            "cwd": "/srv/ledger",
            "started_at": at(0),
        },
        {
            "type": "task",
            "conversation_id": main,
            "task_id": task,
            "title": f"Round the {tag} totals",
            "goal": f"Make the {tag} ledger round half-even.",
            "status": "in_progress",
            "created_at": at(0),
        },
        {
            "type": "message",
            "conversation_id": main,
            "message_id": "m1",
            "role": "user",
            "text": goal_sentence(tag),
            "created_at": at(1),
        },
        {
            "type": "task_event",
            "conversation_id": main,
            "event_id": "e1",
            "task_id": task,
            "kind": "started",
            "text": f"{tag} rounding started",
            "status": "in_progress",
            "created_at": at(2),
        },
        {
            "type": "message",
            "conversation_id": main,
            "message_id": "m2",
            "role": "assistant",
            "text": f"Running the {tag} tests.",
            "created_at": at(3),
        },
        {
            "type": "tool_call",
            "conversation_id": main,
            "call_id": "c1",
            "message_id": "m2",
            "name": "shell",
            "arguments": {"command": f"pytest tests/test_{tag}.py"},
            "created_at": at(4),
        },
        {
            "type": "tool_result",
            "conversation_id": main,
            "call_id": "c1",
            "status": "error",
            "exit_code": 1,
            "output": f"FAILED tests/test_{tag}.py::test_round - {tag} 9.99 != 10.0\n1 failed",
            "completed_at": at(5),
        },
        {
            "type": "tool_call",
            "conversation_id": main,
            "call_id": "c2",
            "message_id": "m2",
            "name": "shell",
            "arguments": {"command": f"rm -rf / # {tag}"},
            "created_at": at(6),
        },
        {
            "type": "tool_call",
            "conversation_id": main,
            "call_id": "c3",
            "message_id": "m2",
            "name": "spawn_agent",
            "arguments": {"task": f"Check the {tag} totals."},
            "created_at": at(7),
        },
        {
            "type": "subagent_run",
            "conversation_id": helper,
            "parent_conversation_id": main,
            "parent_call_id": "c3",
            "agent_type": "checker",
            "description": f"Check the {tag} totals.",
            "status": "completed",
            "summary": f"The {tag} totals add up.",
            "rounds": 1,
            "total_tokens": 10,
            "tool_uses": 0,
        },
        {
            "type": "message",
            "conversation_id": helper,
            "message_id": "m1",
            "role": "user",
            "text": f"Check the {tag} totals.",
            "created_at": at(8),
        },
        {
            "type": "message",
            "conversation_id": helper,
            "message_id": "m2",
            "role": "assistant",
            "text": f"The {tag} totals add up.",
            "created_at": at(9),
        },
        {
            "type": "tool_result",
            "conversation_id": main,
            "call_id": "c3",
            "status": "ok",
            "output": f"The {tag} totals add up.",
            "completed_at": at(10),
        },
        {
            "type": "message",
            "conversation_id": main,
            "message_id": "m3",
            "role": "assistant",
            "text": f"All {tag} tests pass now.",
            "created_at": at(11),
        },
    ]
    if later:
        lines += [
            {
                "type": "message",
                "conversation_id": main,
                "message_id": "m4",
                "role": "user",
                "text": f"Actually, round the {tag} totals half-up instead.",
                "created_at": at(40),
            },
            {
                "type": "message",
                "conversation_id": main,
                "message_id": "m5",
                "role": "assistant",
                "text": f"Switching the {tag} ledger to half-up.",
                "created_at": at(45),
            },
            {
                "type": "task_event",
                "conversation_id": main,
                "event_id": "e2",
                "task_id": task,
                "kind": "progress",
                "text": f"{tag} switched to half-up",
                "status": "in_progress",
                "created_at": at(46),
            },
        ]
    return lines


def write_conversations(folder: Path, *, later: bool) -> None:
    """Write both conversations (``later``: with the goal change) and a broken file."""
    for tag in TAGS:
        text = "\n".join(json.dumps(line) for line in _lines(tag, later=later)) + "\n"
        (folder / FILES[tag]).write_text(text, encoding="utf-8")
    (folder / "broken.jsonl").write_text(
        '{"type": "header", "format": "proctor-jsonl", "version": 1}\n{"type": "message", oops\n',
        encoding="utf-8",
    )


_LEAF: dict[str, Any] = {
    "events": [
        {
            "kind": "decision",
            "title": "Chose half-even rounding",
            "summary": "Rounding was decided.",
            "entityIds": ["n1"],
            "sourceReferenceIds": ["s1"],
        }
    ],
    "entities": [
        {
            "id": "n1",
            "kind": "convention",
            "name": "Round half-even",
            "description": "Ledgers round half-even.",
            "sourceReferenceIds": ["s1", "s2", "s3"],
        },
        {
            "id": "n2",
            "kind": "decision",
            "name": "Round half-up",
            "description": "Switch to half-up.",
            "sourceReferenceIds": ["s2"],
        },
    ],
    "entityChanges": [
        {
            "entityId": "n1",
            "kind": "revised",
            "description": "Now half-up.",
            "sourceReferenceIds": ["s2"],
        }
    ],
    "relations": [
        {
            "fromId": "n1",
            "toId": "n2",
            "type": "contrasts",
            "reason": "Half-even versus half-up.",
            "sourceReferenceIds": ["s2"],
        }
    ],
    "summary": "One batch of work.",
    "changeDigest": "Rounding changed.",
    "openItems": [
        {
            "title": "Confirm the rounding mode",
            "detail": "Nobody confirmed it.",
            "entityIds": ["n1"],
            "sourceReferenceIds": ["s1"],
        }
    ],
}
_MERGE: dict[str, Any] = {
    "summary": "The day's work.",
    "changeDigest": "",
    "storyLines": [],
    "experiences": [
        {"title": "Run tests before claiming", "lesson": "Claims need a run.", "eventRefs": ["ev1"]}
    ],
}
_FINDING: dict[str, Any] = {
    "decisions": [
        {
            "action": "warn",
            "category": "evidence_gap",
            "severity": "medium",
            "title": "Claims a pass without a run",
            "content": "No test run follows the last change.",
            "evidence": ["target"],
            "confidence": 0.7,
        }
    ]
}


def answer(request: RecordedRequest) -> dict[str, Any]:
    """The scripted model: intent, leaf, merge and phrasing calls by their system prompt;
    every other call is a supervision analysis that reports one finding."""
    system = request.text_of("system").strip()
    if system == INTENT_SYSTEM_PROMPT.strip():
        return {"intent": "correct", "confidence": 0.9}
    if system == LEAF_SYSTEM.strip():
        return _LEAF
    if system == MERGE_SYSTEM.strip():
        return _MERGE
    if system == PHRASING_SYSTEM.strip():
        return {"suggestions": []}
    return _FINDING


@dataclass(frozen=True)
class World:
    """What was built: the conversations of each tag (main first, then its sub-agent)."""

    conversations: dict[str, list[str]]


def build_world(store: SqlStore, server: ScriptedModelServer, folder: Path) -> World:
    """Fill every table of ``store`` with rows of both conversations (module docstring)."""
    store.save_connection(server.connection("scripted"))
    set_default_connection(store, "scripted")
    folder.mkdir()
    write_conversations(folder, later=False)
    first = ingest(store, [folder])
    ids = sorted(set(first.conversation_ids))
    check_conversations(store, ids)
    for tag in TAGS:
        found, _ = store.findings(conversation_ids=[conversation_id(tag)], limit=1)
        candidate = store.remember_finding(found[0].finding_id)
        store.confirm_memory(candidate.candidate_id)

    now = datetime.now(UTC)
    goal = SessionSettings(mode="goal", triggers=("after_reply",))
    targets = [resolve_target(store, cid) for cid in ids]
    for conversation in (conversation_id(tag) for tag in TAGS):
        [task] = store.transcript(conversation).tasks
        targets.append(resolve_target(store, f"task:{task.task_id}"))
    for target in targets:
        enable_supervision(store, target, goal, now=now)
    write_conversations(folder, later=True)
    later = ingest(store, [folder])
    analysed = on_conversations_changed(store, later.conversation_ids)
    assert [o.result.run.status for o in analysed if o.result is not None] == ["ok"] * 4

    set_app_enabled(store, True)
    plan = draft_plan(
        name="daily",
        recurrence="daily",
        time="09:00",
        timezone="Europe/Berlin",
        intervention="suggest",
    )
    save_plan(store, plan, now=DUE - timedelta(hours=1))
    [fired] = run_due(
        store,
        now=DUE,
        owner="worker:1",
        semantic_factory=lambda: open_semantic_layer(store, None),
        phrasing_factory=lambda: open_phrasing(store),
        clock=lambda: DUE,
    )
    assert fired.status == "completed", fired.error
    for suggestion in store.suggestions():
        if suggestion.kind in ("open_item", "convention"):
            store.accept_suggestion(suggestion.suggestion_id)
    for tag in TAGS:
        with store._read() as c:
            entity_id = c.execute(
                select(t.entities.c.entity_id)
                .where(t.entities.c.name == f"pytest tests/test_{tag}.py")
                .order_by(t.entities.c.entity_id)
                .limit(1)
            ).scalar_one()
        store.revise("entity", entity_id, description=f"What a person says about the {tag} tests")

    index_sources(store)
    assert search(store, "quokka ledger").hits
    semantic, note = open_semantic_layer(store, None)
    again = start_review(
        store, ReviewRequest(reanalyze=True), semantic=semantic, semantic_note=note
    )
    assert again.status == "completed", again.error
    for cid in ids:
        store.set_graph_access(cid, True)
    # A bulk triage of both conversations' findings: a change and its items.
    store.change_findings(FindingFilter(conversation_ids=ids), action="ack", status="acknowledged")
    return World(
        {tag: [cid for cid in ids if cid.startswith(conversation_id(tag))] for tag in TAGS}
    )
