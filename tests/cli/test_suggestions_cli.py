"""``proctor suggestions``: list, accept, ignore and retry from the terminal (HB-5, HB-6)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.store import open_store
from tests.conftest import EXAMPLES_DIR
from tests.heartbeat.suggestions.builders import add_heartbeat


@pytest.fixture(autouse=True)
def app_enabled() -> None:
    store = open_store()
    try:
        store.set_setting("app.enabled", True)
    finally:
        store.close()


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _reviewed() -> str:
    assert _invoke("ingest", str(EXAMPLES_DIR))[0] == 0
    code, output = _invoke("review", "run", "--json")
    assert code == 0, output
    result_id = json.loads(output)["result_id"]
    assert isinstance(result_id, str)
    return result_id


def test_retry_by_result_makes_rule_text_suggestions_without_a_model() -> None:
    result_id = _reviewed()
    code, output = _invoke("suggestions", "retry", result_id[:8])
    assert code == 0, output
    assert "model calls 0" in output
    assert "no model connection: rule text only" in output
    code, output = _invoke("suggestions", "list")
    assert code == 0
    assert "pytest still failing" in output
    listed = json.loads(_invoke("suggestions", "list", "--json")[1])
    assert {s["kind"] for s in listed} >= {"open_item"}


def test_accept_and_ignore_from_the_terminal() -> None:
    _invoke("suggestions", "retry", _reviewed())
    listed = json.loads(_invoke("suggestions", "list", "--json")[1])
    item = next(s for s in listed if s["title"] == "pytest still failing")
    other = next(s for s in listed if s["suggestion_id"] != item["suggestion_id"])
    code, output = _invoke("suggestions", "accept", item["suggestion_id"][:8])
    assert code == 0, output
    assert "created, paused: pytest still failing" in output
    code, output = _invoke("suggestions", "accept", item["suggestion_id"][:8])
    assert "already accepted; nothing changed" in output
    code, output = _invoke("suggestions", "ignore", other["suggestion_id"][:8])
    assert code == 0 and "ignored" in output
    code, output = _invoke("suggestions", "accept", other["suggestion_id"][:8])
    assert code == 1
    assert "already ignored" in output
    remaining = json.loads(_invoke("suggestions", "list", "--json")[1])
    assert len(remaining) == len(listed) - 2
    everything = json.loads(_invoke("suggestions", "list", "--all", "--json")[1])
    assert len(everything) == len(listed)


def test_retry_by_heartbeat_marks_the_run_completed() -> None:
    result_id = _reviewed()
    store = open_store()
    try:
        heartbeat_id = add_heartbeat(store, result_id)
    finally:
        store.close()
    code, output = _invoke("suggestions", "retry", heartbeat_id[:8], "--json")
    assert code == 0, output
    outcome = json.loads(output)
    assert outcome["created"] == outcome["candidates"] > 0
    store = open_store()
    try:
        run = store.heartbeat_run(heartbeat_id)
    finally:
        store.close()
    assert (run.status, run.suggestions) == ("completed", outcome["open_now"])


def test_an_unknown_id_is_a_usage_error() -> None:
    _reviewed()
    code, output = _invoke("suggestions", "accept", "nope")
    assert code == 2
    assert "no suggestion 'nope'" in output
