"""A small batch about a cache decision, its structural facts, candidates and answers.

Sources (batch refs): s1 the user's question, s2 the agent's decision, s3 a failing test
run, s4 the agent's plan. The structural layer saw the file ``src/cache.py`` and the test
run; two entities are already known (a concept and a component).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from proctor.graph import (
    BatchFacts,
    EntityCandidate,
    EntityFact,
    EventFact,
    OpenItemFact,
    structural_entity_id,
    structural_event_id,
)
from proctor.review._batch import BatchSource, SourceBatch
from proctor.testing.scripted_model import RecordedRequest
from proctor.transcript import Conversation, Message, ToolCall

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
PROJECT = "project-1"
CONVERSATION = "test:conv-1"
SQLITE_ID = "11111111-1111-4111-8111-111111111111"
CACHE_ID = "22222222-2222-4222-8222-222222222222"
FILE_ID = structural_entity_id(PROJECT, "file", "src/cache.py")


def message(source_id: str, role: str, text: str, minute: int) -> Message:
    return Message(
        source_id=source_id,
        role=role,  # type: ignore[arg-type]
        kind="prompt" if role == "user" else "reply",
        text=text,
        created_at=T0 + timedelta(minutes=minute),
    )


def source(
    ref: str,
    item: Message | ToolCall,
    *,
    conversation_id: str = CONVERSATION,
    project_id: str = PROJECT,
) -> BatchSource:
    """A batch source holding a message or a tool call."""
    if isinstance(item, Message):
        return BatchSource(
            ref=ref,
            source_type="message",
            source_id=item.source_id,
            conversation_id=conversation_id,
            project_id=project_id,
            fingerprint=f"fp-{item.source_id}",
            occurred_at=item.created_at,
            message=item,
        )
    return BatchSource(
        ref=ref,
        source_type="tool_call",
        source_id=item.source_id,
        conversation_id=conversation_id,
        project_id=project_id,
        fingerprint=f"fp-{item.source_id}",
        occurred_at=item.created_at,
        tool_call=item,
    )


def batch(
    *extra_texts: str, batch_no: int = 0, run_id: str = "run-1", output: str | None = None
) -> SourceBatch:
    """The cache batch; ``extra_texts`` are more user messages (s5 …) at its end."""
    call = ToolCall(
        source_id=f"{CONVERSATION}:call-1",
        name="Bash",
        arguments={"command": "pytest -q tests/test_cache.py"},
        status="error",
        exit_code=1,
        result_text=output if output is not None else "1 failed, 3 passed",
        created_at=T0 + timedelta(minutes=2),
    )
    items: list[Message | ToolCall] = [
        message(f"{CONVERSATION}:m1", "user", "Should the cache use SQLite or Redis?", 0),
        message(
            f"{CONVERSATION}:m2",
            "assistant",
            "SQLite: no extra service to run, and the data fits on one machine.",
            1,
        ),
        call,
        message(f"{CONVERSATION}:m3", "assistant", "The eviction test fails; I'll fix it.", 3),
    ]
    items += [
        message(f"{CONVERSATION}:x{n}", "user", text, 4 + n) for n, text in enumerate(extra_texts)
    ]
    sources = tuple(source(f"s{n}", item) for n, item in enumerate(items, 1))
    conversation = Conversation(
        conversation_id=CONVERSATION, format="test", external_id="conv-1", title="Cache work"
    )
    return SourceBatch(
        run_id=run_id,
        batch_no=batch_no,
        scope_key="all",
        sources=sources,
        conversations={CONVERSATION: conversation},
        projects={PROJECT: "invoice-service"},
    )


def structural(the_batch: SourceBatch) -> BatchFacts:
    """What the structural layer found: the file, and the failing test run."""
    run = the_batch.sources[2]
    return BatchFacts(
        entities=(
            EntityFact(
                entity_id=FILE_ID,
                project_id=PROJECT,
                kind="file",
                name="src/cache.py",
                description="",
                sources=(run.cite(),),
                layer="structural",
                identity_key="src/cache.py",
            ),
        ),
        events=(
            EventFact(
                event_id=structural_event_id("test_run", "tool_call", run.source_id),
                project_id=PROJECT,
                kind="test_run",
                title="pytest -q tests/test_cache.py",
                summary="",
                occurred_at=run.occurred_at,
                conversation_id=CONVERSATION,
                sources=(run.cite(),),
                layer="structural",
                outcome="failed",
            ),
        ),
        open_items=(
            OpenItemFact(
                key="test:pytest",
                project_id=PROJECT,
                title="pytest -q tests/test_cache.py still fails",
                detail="",
                sources=(run.cite(),),
                layer="structural",
            ),
        ),
    )


def candidates() -> list[EntityCandidate]:
    """Two known entities, most recent first."""
    return [
        EntityCandidate(SQLITE_ID, PROJECT, "concept", "SQLite", "Embedded database", T0),
        EntityCandidate(CACHE_ID, PROJECT, "component", "Cache layer", "Caches invoices", T0),
    ]


def data_entries(request: RecordedRequest) -> list[dict[str, Any]]:
    """The JSON lines of the first observed-data block of a request."""
    user = request.text_of("user")
    token = user.splitlines()[0].removeprefix("<<<OBSERVED-DATA ").removesuffix(">>>")
    block = user.split(f"<<<END OBSERVED-DATA {token}>>>")[0]
    return [json.loads(line) for line in block.splitlines()[1:]]


def known_ref(request: RecordedRequest, name: str) -> str:
    """The ``known_N`` the request offered for the entity named ``name``."""
    return next(
        e["id"] for e in data_entries(request) if e["type"] == "known" and e["name"] == name
    )


def entity(
    local_id: str,
    name: str,
    *,
    candidate: str | None = None,
    refs: Sequence[str] = ("s2",),
    **changes: Any,
) -> dict[str, Any]:
    """One leaf entity as a model writes it."""
    value: dict[str, Any] = {
        "id": local_id,
        "candidateRef": candidate,
        "kind": "decision",
        "name": name,
        "description": f"About {name}",
        "sourceReferenceIds": list(refs),
    }
    value.update(changes)
    return value


def leaf_answer(*entities: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A whole leaf answer (every array present)."""
    value: dict[str, Any] = {
        "events": [],
        "entities": list(entities),
        "entityChanges": [],
        "relations": [],
        "summary": "Chose SQLite for the cache; the eviction test still fails.",
        "changeDigest": "Cache backend decided.",
        "openItems": [],
    }
    value.update(changes)
    return value
