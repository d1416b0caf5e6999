"""``proctor search`` through the command line: refresh, ranked hits, sources, JSON."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.store import open_store
from tests.search.helpers import FRIENDS, dialogue, write


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def home_with_friends() -> None:
    store = open_store()
    try:
        write(store, dialogue("c1", FRIENDS))
    finally:
        store.close()


@pytest.mark.usefixtures("home_with_friends")
def test_search_indexes_new_messages_then_prints_ranked_hits_with_their_source() -> None:
    result = run("search", "support group", "--full-text")
    assert result.exit_code == 0, result.output
    assert "Indexed 8 new and 0 changed document(s)" in result.output
    assert "Full text only: embeddings turned off." in result.output
    assert "Caroline: Hey Mel! I went to a support group" in result.output
    assert "c1 c1:t0" in result.output
    # The second search finds the index current and says nothing about it.
    assert "Indexed" not in run("search", "support group", "--full-text").output


@pytest.mark.usefixtures("home_with_friends")
def test_search_json_lists_hits_with_score_type_time_and_source_references() -> None:
    result = run("search", "camping", "--full-text", "--json", "--limit", "2")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    assert data["mode"] == "full_text"
    assert len(data["hits"]) == 2
    top = data["hits"][0]
    assert top["id"] == "c1:t5"
    assert top["type"] == "message"
    assert top["occurred_at"].startswith("2023-05-08T")
    assert top["source_refs"] == [
        {"source_type": "message", "source_id": "c1:t5", "conversation_id": "c1"}
    ]
    # Best first; t6 says "camping" too, and PostgreSQL's ts_rank may tie it with t5.
    assert top["score"] >= data["hits"][1]["score"] > 0


@pytest.mark.usefixtures("home_with_friends")
def test_search_without_the_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    result = run("search", "painted sunrise")
    assert result.exit_code == 0, result.output
    assert "Full text only: numpy is not installed" in result.output
    assert "proctor[embeddings]" in result.output
    assert "c1:t3" in result.output


@pytest.mark.usefixtures("home_with_friends")
def test_search_no_refresh_reads_the_index_as_it_is() -> None:
    assert "No matches." in run("search", "camping", "--no-refresh", "--full-text").output
    run("search", "camping", "--full-text")
    assert "c1:t5" in run("search", "camping", "--no-refresh", "--full-text").output


@pytest.mark.usefixtures("home_with_friends")
def test_search_filters_and_unknown_ids_are_usage_errors() -> None:
    assert "No matches." in run("search", "camping", "--type", "entity", "--full-text").output
    result = run("search", "camping", "--project", "nope", "--full-text")
    assert result.exit_code == 2
    assert "no project called 'nope'" in result.output
    assert run("search", "camping", "--conversation", "missing", "--full-text").exit_code == 2
    assert "c1:t5" in run("search", "camping", "--conversation", "c1", "--full-text").output
