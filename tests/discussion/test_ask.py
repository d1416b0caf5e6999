"""Asking a question about a result directly (UI-5), against the scripted model server:
the facts go only into the encoded data block, the answer comes back with them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from proctor.discussion import Asker, Focus, asking_model, open_asker
from proctor.errors import ConfigError, ModelError
from proctor.graph import ResultDraft
from proctor.models import set_default_connection
from proctor.store import SqlStore
from proctor.supervisor._block import DATA_CLOSE, DATA_OPEN
from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply
from tests.discussion.conftest import HOSTILE
from tests.models.helpers import fast_caller

_BLOCK = re.compile(r"<<<OBSERVED-DATA (\w+)>>>\n(.*?)\n<<<END OBSERVED-DATA \1>>>", re.S)


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as running:
        yield running


def _asker(server: ScriptedModelServer) -> Asker:
    return Asker(fast_caller(server.connection("scripted"), retry_delay_s=0))


def _ask(asker: Asker, store: SqlStore, result_id: str, question: str, **focus: str) -> Any:
    return anyio.run(asker.ask, store, result_id, Focus(**focus), question)


def _user(server: ScriptedModelServer, index: int = 0) -> str:
    messages = server.requests[index].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    content: str = messages[1]["content"]
    return content


def test_the_facts_go_only_into_the_data_block_and_the_answer_cites_them(
    store: SqlStore, server: ScriptedModelServer, hostile_draft: ResultDraft
) -> None:
    result_id = store.overview(None, 1)[0].result_id
    server.push({"answer": "The export failed twice, then passed.", "cited": ["F1", "S1", "F999"]})

    answer = _ask(_asker(server), store, result_id[:8], "  What happened to the export?  ")

    assert answer.answer == "The export failed twice, then passed."
    assert answer.question == "What happened to the export?"
    assert answer.cited == ("F1", "S1")  # a ref it was not given is dropped
    assert answer.facts and answer.sources and answer.calls == 1
    system = server.requests[0].body["messages"][0]["content"]
    user = _user(server)
    # Nothing observed reaches the system message; the hostile name is in the block only,
    # encoded: no marker or marker run of it survives as text.
    assert "src/app.py" not in system and "ignore previous" not in system
    (match,) = _BLOCK.findall(user)
    token, body = match
    lines = [json.loads(line) for line in body.splitlines()]
    facts = [line for line in lines if line["ref"].startswith("F")]
    assert [f["ref"] for f in facts] == [f.ref for f in answer.facts]
    assert any(HOSTILE.splitlines()[0] in f["text"] for f in facts)
    assert "ignore previous instructions" not in user.replace(body, "")
    assert user.count(DATA_OPEN.format(token=token)) == 1
    assert user.count(DATA_CLOSE.format(token=token)) == 1
    assert "<<<END PROCTOR-CONTEXT" not in body
    assert user.rstrip().endswith("What happened to the export?")


def test_an_answer_that_does_not_match_gets_one_repair_then_a_clear_error(
    store: SqlStore, server: ScriptedModelServer, hostile_draft: ResultDraft
) -> None:
    result_id = store.overview(None, 1)[0].result_id
    server.push(ScriptedReply("not json"), {"answer": "Fixed.", "cited": []})
    answer = _ask(_asker(server), store, result_id, "Is it fixed?")
    assert (answer.answer, answer.calls) == ("Fixed.", 2)
    assert "REJECTED-ANSWER" in _user(server, 1)

    server.push({"answer": 3}, {"cited": []})
    with pytest.raises(ModelError, match="no valid answer after one repair"):
        _ask(_asker(server), store, result_id, "Is it fixed?")


def test_a_focused_question_gives_the_focus_first_and_bad_questions_are_refused(
    store: SqlStore, server: ScriptedModelServer, hostile_draft: ResultDraft
) -> None:
    result_id = store.overview(None, 1)[0].result_id
    entity = next(e for e in hostile_draft.entities if e.kind == "file")
    view = store.graph(result_id, limit=None)
    entity_id = next(e.entity_id for e in view.entities if e.name == entity.name)
    server.push({"answer": "ok", "cited": []})

    answer = _ask(_asker(server), store, result_id, "And this file?", entity_id=entity_id[:10])

    assert answer.focus.entity_id == entity_id
    for question in ("", "   ", "x" * 2_001, "a\x00b"):
        with pytest.raises(ConfigError):
            _ask(_asker(server), store, result_id, question)
    assert len(server.requests) == 1


def test_without_a_connection_nothing_is_offered(
    store: SqlStore, server: ScriptedModelServer, hostile_draft: ResultDraft
) -> None:
    assert asking_model(store) is None and open_asker(store) is None
    store.save_connection(server.connection("scripted"))
    set_default_connection(store, "scripted")
    assert asking_model(store) == f"scripted/{server.connection('scripted').model}"
    assert open_asker(store) is not None
