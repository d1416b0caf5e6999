"""Re-reviews with a model after a search (issue 16): publish and index never collide.

The scripted merge continues every story line it is offered, so a second review publishes
a story line twice over (the conversation's structural line and the model's continuation
of it): the index takes them as one document, in the publish transaction. A run that
fails reports the error that failed it, never a state change's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from proctor.cli.main import cli
from proctor.errors import ReviewStateError, StoreError
from proctor.models import set_default_connection
from proctor.review import ReviewRequest, open_semantic_layer, start_review
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer
from tests.conftest import EXAMPLES_DIR
from tests.review.test_pipeline_model import MERGE_ANSWER, _is_merge, _leaf_answer

pytestmark = pytest.mark.slow  # several reviews with a model per test

_OFFERED_LINE = re.compile(r'^\{"id":"(line_\d+)","type":"story_line"', re.MULTILINE)


def _continuing_merge(request: RecordedRequest) -> dict[str, Any]:
    """A merge answer that continues every offered story line and starts a new one."""
    offered = _OFFERED_LINE.findall(request.text_of("user"))
    lines = [
        {
            "key": f"k{n}",
            "storyLineRef": ref,
            "title": f"Continued thread {n}",
            "summary": "The reconciliation continued with the cent rounding fix.",
            "eventRefs": ["ev1"],
        }
        for n, ref in enumerate(offered, 1)
    ]
    lines.append(
        {
            "key": "fresh",
            "title": "Quarantined flamingo ledger",
            "summary": "A thread the model opened on its own.",
            "eventRefs": ["ev2"],
        }
    )
    return MERGE_ANSWER | {"storyLines": lines}


def _respond(request: RecordedRequest) -> str:
    return json.dumps(_continuing_merge(request) if _is_merge(request) else _leaf_answer(request))


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _hits(*args: str) -> list[dict[str, Any]]:
    code, output = _invoke("search", *args, "--full-text", "--json")
    assert code == 0, output
    return list(json.loads(output[output.index("{") :])["hits"])


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(responder=_respond) as running:
        yield running


@pytest.fixture
def home(proctor_home: Path, server: ScriptedModelServer) -> Iterator[SqlStore]:
    store = open_store()
    try:
        store.set_setting("app.enabled", True)
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        assert _invoke("ingest", str(EXAMPLES_DIR))[0] == 0
        yield store
    finally:
        store.close()


def _review(store: SqlStore, **options: Any) -> Any:
    semantic, note = open_semantic_layer(store, None)
    assert semantic is not None, note
    return start_review(store, ReviewRequest(**options), semantic=semantic)


@pytest.mark.usefixtures("home")
def test_a_reanalysis_after_a_search_exits_0_and_search_finds_what_it_published() -> None:
    code, output = _invoke("review", "run")
    assert code == 0, output
    assert _hits("invoice rounding")
    code, output = _invoke("review", "run", "--reanalyze", "--since", "2000-01-01")
    assert code == 0, output
    assert "completed" in output
    code, output = _invoke("review", "run", "--reanalyze")
    assert code == 0, output
    lines = _hits("continued thread reconciliation", "--type", "story_line", "--limit", "50")
    assert any(hit["title"].startswith("Continued thread") for hit in lines)
    fresh = _hits("quarantined flamingo", "--type", "story_line")
    assert [hit["title"] for hit in fresh] == ["Quarantined flamingo ledger"]


def test_the_first_project_review_after_a_global_one_exits_0(home: SqlStore) -> None:
    code, output = _invoke("review", "run")
    assert code == 0, output
    _hits("invoice")
    for project in sorted({c.project for c in home.list_conversations()}):
        code, output = _invoke("review", "run", "--project", project)
        assert code == 0, output
        assert "completed" in output
        hits = _hits("quarantined flamingo", "--type", "story_line", "--project", project)
        assert hits, f"the story line {project}'s review opened is searchable in its project"


def test_every_story_line_of_a_published_result_is_one_search_document(home: SqlStore) -> None:
    _review(home)
    second = _review(home, reanalyze=True)
    assert second.status == "completed", second.error
    with home._read() as connection:
        lines = connection.execute(select(t.story_lines.c.story_line_id)).scalars().all()
        documents = (
            connection.execute(
                select(t.search_documents.c.doc_id).where(
                    t.search_documents.c.doc_type == "story_line"
                )
            )
            .scalars()
            .all()
        )
    assert sorted(documents) == sorted(lines)


def test_a_failed_index_update_fails_the_run_with_its_own_error_and_publishes_nothing(
    home: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import proctor.search

    def broken(*args: object, **kwargs: object) -> int:
        raise StoreError("cannot write the search index: disk I/O error")

    monkeypatch.setattr(proctor.search, "index_graph_objects", broken)
    with pytest.raises(StoreError, match="disk I/O error"):
        _review(home)
    (run,) = home.review_runs(limit=5)
    assert run.status == "failed"
    assert run.error is not None and "disk I/O error" in run.error
    assert run.result_id is None, "published with the index or not at all"
    with home._read() as connection:
        assert connection.execute(select(func.count()).select_from(t.results)).scalar() == 0
        assert connection.execute(select(func.count()).select_from(t.entities)).scalar() == 0
    monkeypatch.undo()
    again = _review(home)
    assert again.status == "completed", again.error
    with home._read() as connection:
        indexed = connection.execute(
            select(func.count()).where(t.search_documents.c.doc_type != "message")
        ).scalar()
    assert indexed


def test_an_error_after_the_run_left_running_is_reported_not_the_state_change(
    home: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish = SqlStore.publish_result

    def publish_then_fail(self: SqlStore, *args: Any, **kwargs: Any) -> Any:
        publish(self, *args, **kwargs)
        raise StoreError("the connection dropped after the commit")

    monkeypatch.setattr(SqlStore, "publish_result", publish_then_fail)
    with pytest.raises(StoreError, match="dropped after the commit") as raised:
        _review(home)
    assert not isinstance(raised.value, ReviewStateError)
    (run,) = home.review_runs(limit=5)
    assert run.status == "completed", "published: the run keeps its state"
    assert not run.active


def test_a_bug_in_a_run_fails_it_with_the_bug_named(
    home: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proctor.review import _assemble

    def buggy(*args: object, **kwargs: object) -> object:
        raise KeyError("story_line_id")

    monkeypatch.setattr(_assemble, "assemble_draft", buggy)
    with pytest.raises(KeyError):
        _review(home)
    (run,) = home.review_runs(limit=5)
    assert run.status == "failed"
    assert run.error == "KeyError: 'story_line_id'"
