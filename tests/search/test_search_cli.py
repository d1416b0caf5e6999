"""``proctor search`` through the command line: refresh, ranked hits, sources, JSON."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.store import open_store
from tests.search.conftest import needs_embeddings
from tests.search.helpers import FRIENDS, dialogue, write


class _Ended:
    """What the stand-in for ``subprocess.Popen`` "starts": a process that has already ended."""

    def poll(self) -> int:
        return 0


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


@pytest.mark.usefixtures("home_with_friends")
def test_a_search_of_an_index_behind_the_store_says_so_and_how_to_finish_it() -> None:
    result = run("search", "camping", "--no-refresh", "--full-text")
    assert "Index incomplete: Messages or tool calls stored since the index was last" in (
        result.output
    )
    assert "`proctor search --index-only` brings the index up to date" in result.output
    data = json.loads(
        _json_of(run("search", "camping", "--no-refresh", "--full-text", "--json").output)
    )
    assert data["index"]["stale"] is True and data["index"]["full_text_current"] is False
    fresh = run("search", "camping", "--full-text")
    assert "Index incomplete" not in fresh.output
    data = json.loads(_json_of(run("search", "camping", "--full-text", "--json").output))
    assert data["index"] == {
        "documents": len(FRIENDS),
        "embedded": None,
        "stale": False,
        "full_text_current": True,
        "indexing": False,
        "note": None,
    }


def _json_of(output: str) -> str:
    return output[output.index("{") :]


@pytest.mark.usefixtures("home_with_friends")
def test_index_only_brings_the_index_up_to_date_and_searches_nothing() -> None:
    result = run("search", "--index-only", "--full-text")
    assert result.exit_code == 0, result.output
    assert f"Indexed {len(FRIENDS)} new and 0 changed document(s)" in result.output
    assert "Full text only: no embeddings were made." in result.output
    again = json.loads(_json_of(run("search", "--index-only", "--full-text", "--json").output))
    assert again == {
        "documents": len(FRIENDS),
        "added": 0,
        "updated": 0,
        "removed": 0,
        "embedded": None,
        "remaining": None,
        "postings_built": False,  # a store this small ranks every query in FTS5
    }
    assert "c1:t5" in run("search", "camping", "--no-refresh", "--full-text").output


def test_index_only_takes_no_query_and_a_search_needs_one() -> None:
    refused = run("search", "camping", "--index-only")
    assert refused.exit_code == 2 and "leave out the query" in refused.output
    missing = run("search")
    assert missing.exit_code == 2 and "give a query" in missing.output


@needs_embeddings
def test_a_search_embeds_nothing_itself_hands_off_and_says_how_far_the_index_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store()
    try:
        turns = [("Dev", f"Ledger export attempt {n} timed out again.") for n in range(20)]
        write(store, dialogue("c1", [*FRIENDS, *turns]))
    finally:
        store.close()
    documents = len(FRIENDS) + 20
    started: list[list[str]] = []
    monkeypatch.setenv("PROCTOR_BACKGROUND_INDEXING", "1")
    monkeypatch.setattr(
        "proctor.search._handoff.subprocess.Popen",
        lambda command, **options: started.append(command) or _Ended(),
    )
    first = json.loads(_json_of(run("search", "adopting a child", "--json").output))
    assert first["mode"] == "hybrid"
    assert first["hits"][0]["id"] in {"c1:t6", "c1:t7"}  # by full text, at once
    assert first["index"]["embedded"] == 0
    assert first["index"]["stale"] is True
    assert first["index"]["indexing"] is True
    assert f"0 of {documents} documents have embeddings" in first["index"]["note"]
    assert "the background indexer is adding them" in first["index"]["note"]
    assert started == [[sys.executable, "-m", "proctor.search"]]
    finished = run("search", "--index-only")
    assert f"Embedded {documents} document(s)" in finished.output
    assert "0 left without a vector" in finished.output
    last = json.loads(_json_of(run("search", "adopting a child", "--json").output))
    assert last["index"]["embedded"] == documents and last["index"]["stale"] is False
    assert last["index"]["note"] is None
    assert len(started) == 1  # nothing left to hand off
