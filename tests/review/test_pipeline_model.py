"""Reviews with a model connection (the scripted loopback server, counting every call).

SPEC REV-7: a second review with nothing new makes no model call; an edited message is
all the model reads again. REV-5: output that arrives after a pause is never saved.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from proctor.ingest import ingest
from proctor.models import set_default_connection
from proctor.review import (
    ReviewRequest,
    open_semantic_layer,
    pause_review,
    resume_review,
    start_review,
)
from proctor.review.semantic import MERGE_SYSTEM
from proctor.store import ReviewRunRecord, SqlStore, open_store
from proctor.store import _schema as t
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer
from tests.conftest import EXAMPLES_DIR

MERGE_ANSWER = {
    "summary": "The agents fixed the invoice rounding and claimed a pass.",
    "changeDigest": "Rounding fixed; one claim unverified.",
    "storyLines": [],
    "experiences": [],
}


def _leaf_answer(request: RecordedRequest) -> dict[str, Any]:
    return {
        "events": [],
        "entities": [
            {
                "id": "n1",
                "kind": "decision",
                "name": "Work in this batch",
                "description": "What the batch was about.",
                "sourceReferenceIds": ["s1"],
            }
        ],
        "entityChanges": [],
        "relations": [],
        "summary": "One batch of work.",
        "changeDigest": "",
        "openItems": [],
    }


def _is_merge(request: RecordedRequest) -> bool:
    return request.text_of("system").strip() == MERGE_SYSTEM.strip()


def _answer(request: RecordedRequest) -> str:
    return json.dumps(MERGE_ANSWER if _is_merge(request) else _leaf_answer(request))


class Answers:
    """The server's responder, swappable by a test."""

    def __init__(self) -> None:
        self.respond: Callable[[RecordedRequest], str] = _answer

    def __call__(self, request: RecordedRequest) -> str:
        return self.respond(request)


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def server(answers: Answers) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(responder=answers) as running:
        yield running


@pytest.fixture
def store(tmp_path: Path, server: ScriptedModelServer) -> SqlStore:
    store = open_store(tmp_path / "proctor.db")
    store.save_connection(server.connection("scripted"))
    set_default_connection(store, "scripted")
    ingest(store, [EXAMPLES_DIR])
    return store


def _review(store: SqlStore, **options: Any) -> ReviewRunRecord:
    semantic, note = open_semantic_layer(store, None)
    assert semantic is not None, note
    return start_review(store, ReviewRequest(**options), semantic=semantic)


def test_a_model_review_reads_each_batch_once_and_merges(
    store: SqlStore, server: ScriptedModelServer
) -> None:
    run = _review(store, batch_size=20)
    assert run.status == "completed", run.error
    leaves = [r for r in server.requests if not _is_merge(r)]
    merges = [r for r in server.requests if _is_merge(r)]
    assert len(leaves) == run.batches_total > 1
    assert len(merges) == 1
    assert run.model_calls == len(server.requests)
    assert run.input_tokens > 0
    assert store.checkpoint_count("semantic") == run.sources_total
    with store._read() as conn:
        result = conn.execute(select(t.results).where(t.results.c.run_id == run.run_id)).one()
        decisions = conn.execute(
            select(t.entities.c.name).where(t.entities.c.kind == "decision")
        ).all()
    assert result.coverage["semantic"] == "done"
    assert result.summary == MERGE_ANSWER["summary"]
    assert len(decisions) == run.batches_total, "same name, no candidate ref: never merged"


def test_nothing_new_means_no_change_and_zero_model_calls(
    store: SqlStore, server: ScriptedModelServer
) -> None:
    _review(store)
    calls = len(server.requests)
    again = _review(store)
    assert again.status == "no_change"
    assert again.model_calls == 0
    assert len(server.requests) == calls


def test_an_edited_message_is_all_the_model_reads_again(
    store: SqlStore, server: ScriptedModelServer, tmp_path: Path
) -> None:
    _review(store)
    calls = len(server.requests)
    copy = tmp_path / "codex"
    shutil.copytree(EXAMPLES_DIR / "codex", copy)
    rollout = next(copy.rglob("*.jsonl"))
    rollout.write_text(
        rollout.read_text(encoding="utf-8").replace(
            "Verified: the suite passes", "Verified: the whole suite passes"
        ),
        encoding="utf-8",
    )
    ingest(store, [copy])
    again = _review(store)
    assert again.status == "completed"
    assert again.batches_total == 1
    new = server.requests[calls:]
    assert [_is_merge(r) for r in new] == [False, True]
    leaf = new[0].text_of("user")
    assert "the whole suite passes" in leaf
    assert "1 failed" not in leaf, "the failing vitest run did not change: not sent again"


def test_output_that_arrives_after_a_pause_is_never_saved(
    store: SqlStore, server: ScriptedModelServer, answers: Answers
) -> None:
    paused: list[str] = []

    def pause_then_answer(request: RecordedRequest) -> str:
        if not paused:
            (run,) = store.review_runs(limit=1)
            pause_review(store, run.run_id)
            paused.append(run.run_id)
        return _answer(request)

    answers.respond = pause_then_answer
    run = _review(store, batch_size=20)
    assert run.status == "paused"
    assert run.batches_done == 0, "the answer came after the pause: dropped"
    assert run.model_calls == 1, "its cost is still counted"
    answers.respond = _answer
    resumed = resume_review(store, run.run_id, semantic=open_semantic_layer(store, None)[0])
    assert resumed.status == "completed"


def test_a_batch_the_model_cannot_answer_leaves_a_gap_and_no_semantic_checkpoint(
    store: SqlStore, server: ScriptedModelServer, answers: Answers
) -> None:
    def broken_leaf(request: RecordedRequest) -> str:
        return json.dumps(MERGE_ANSWER) if _is_merge(request) else '{"events": "nope"}'

    answers.respond = broken_leaf
    run = _review(store)
    assert run.status == "failed"
    assert run.result_id is not None, "the structural graph is still published"
    with store._read() as conn:
        result = conn.execute(select(t.results).where(t.results.c.run_id == run.run_id)).one()
    assert not result.complete
    assert result.coverage["semantic"] == "partial"
    assert any("semantic layer failed" in gap for gap in result.coverage["gaps"])
    assert store.checkpoint_count("structural") == run.sources_total
    assert store.checkpoint_count("semantic") == 0
    answers.respond = _answer
    retry = _review(store)
    assert retry.sources_total == run.sources_total, "the next review reads them again"
    assert retry.status == "completed"


def test_the_last_summary_and_confirmed_entities_are_background_never_evidence(
    store: SqlStore, server: ScriptedModelServer, tmp_path: Path
) -> None:
    first = _review(store)
    with store._read() as conn:
        vitest_id = conn.execute(
            select(t.entities.c.entity_id).where(
                t.entities.c.kind == "test", t.entities.c.name.startswith("vitest")
            )
        ).scalar_one()
    store.revise("entity", vitest_id, description="The ledger export's flaky unit test")
    calls = len(server.requests)
    copy = tmp_path / "codex"
    shutil.copytree(EXAMPLES_DIR / "codex", copy)
    rollout = next(copy.rglob("*.jsonl"))
    rollout.write_text(
        rollout.read_text(encoding="utf-8").replace("Verified:", "Checked:"), encoding="utf-8"
    )
    ingest(store, [copy])
    again = _review(store)
    assert again.status == "completed"
    leaf = server.requests[calls].text_of("user")
    assert '"type": "background"' in leaf or '"type":"background"' in leaf
    assert MERGE_ANSWER["summary"] in leaf, "the scope's last summary"
    assert "The ledger export's flaky unit test" in leaf, "what the person revised"
    assert first.result_id is not None
