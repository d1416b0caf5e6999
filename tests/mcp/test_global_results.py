"""An agent reads the graph a plain `proctor review run` published (REV-12).

The README's first review has no project: it publishes one global result. An agent bound to
a conversation then reads that result, narrowed to its own project's facts, and every
answer says which result it came from; once the project has a review of its own, that one
answers first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from proctor.cli.main import cli
from proctor.ingest import ingest
from proctor.mcp import ToolContext, ToolRefusal, call_tool
from proctor.store import SqlStore, open_store
from tests.backends import copy_database
from tests.conftest import EXAMPLES_DIR
from tests.mcp.conftest import McpHome, PreparedHome


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def reviewed_home(tmp_path_factory: pytest.TempPathFactory) -> PreparedHome:
    """The examples ingested, then the README's steps: the app on, `proctor review run`
    with no project, one conversation's switch on. Built once per module (ingesting and
    reviewing took about a second of each test's CPU); each test takes a copy."""
    home = tmp_path_factory.mktemp("reviewed-everywhere")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PROCTOR_HOME", str(home))
        store = open_store(home / "proctor.db")
        try:
            ingest(store, [EXAMPLES_DIR])
            main = next(c for c in store.list_conversations() if c.subagents)
        finally:
            store.close()
        _cli("app", "enable")
        _cli("review", "run")
        _cli("conversations", "graph-access", "on", main.conversation_id)
    return PreparedHome(home, main.conversation_id, "")


@pytest.fixture
def reviewed_everywhere(reviewed_home: PreparedHome, proctor_home: Path) -> Iterator[McpHome]:
    """A private copy of ``reviewed_home`` in the test's ``PROCTOR_HOME``, its store open."""
    database = proctor_home / "proctor.db"
    copy_database(reviewed_home.database, database, unchanging=True)
    store = open_store(database)
    try:
        yield McpHome(proctor_home, reviewed_home.main_id, "", store)
    finally:
        store.close()


def _project_conversations(store: SqlStore, project: str) -> set[str]:
    return {
        c.conversation_id
        for c in store.list_conversations(project=project, include_children=True, limit=500)
    }


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


@pytest.mark.slow
def test_after_a_plain_review_run_an_mcp_client_gets_the_published_graph(
    reviewed_everywhere: McpHome,
) -> None:
    home = reviewed_everywhere
    command = PreparedHome.command(home)
    params = StdioServerParameters(command=command[0], args=command[1:], env=home.env())

    async def session() -> dict[str, Any]:
        answers: dict[str, Any] = {}
        async with Client(params, cache=None) as client:
            for name, arguments in [("overview", {}), ("graph", {}), ("stories", {})]:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, _text(result)
                answers[name] = json.loads(_text(result))
        return answers

    answers = anyio.run(session)

    published = home.store.overview(None, 5)
    assert len(published) == 1 and published[0].is_global
    result_id = published[0].result_id
    overview, graph, stories = answers["overview"], answers["graph"], answers["stories"]
    assert [r["result_id"] for r in overview["results"]] == [result_id]
    for answer in (overview, graph, stories):
        assert answer["answered_from"]["result_id"] == result_id
        assert answer["answered_from"]["scope"] == "global"
        assert "no review of its own" in answer["answered_from"]["why"]
    assert graph["result"]["result_id"] == result_id
    assert graph["events"] and graph["entities"]
    own = _project_conversations(home.store, overview["project"])
    assert {event["conversation_id"] for event in graph["events"]} <= own
    assert stories["stories"]


def test_a_global_result_shows_only_the_bound_projects_facts(reviewed_everywhere: McpHome) -> None:
    store = reviewed_everywhere.store
    bound = ToolContext(store, reviewed_everywhere.main_id)
    result_id = store.overview(None, 1)[0].result_id
    everything = store.graph(result_id, limit=None)
    projects = {p.name: p.project_id for p in store.projects()}
    project = store.conversation(reviewed_everywhere.main_id).project
    assert {e.project_id for e in everything.events} > {projects[project]}, (
        "the examples span more than one project"
    )

    answer = call_tool(bound, "graph", {"result_id": result_id[:8]})

    mine = [e for e in everything.events if e.project_id == projects[project]]
    assert {e["event_id"] for e in answer["events"]} == {e.event_id for e in mine}
    assert answer["totals"]["events"] == len(mine)
    entity_ids = {e["entity_id"] for e in answer["entities"]}
    assert entity_ids == {
        e.entity_id for e in everything.entities if e.project_id == projects[project]
    }
    for relation in answer["relations"]:
        assert {relation["from_entity_id"], relation["to_entity_id"]} <= entity_ids


def test_a_small_limit_keeps_the_newest_of_the_projects_events(
    reviewed_everywhere: McpHome,
) -> None:
    store = reviewed_everywhere.store
    bound = ToolContext(store, reviewed_everywhere.main_id)
    whole = call_tool(bound, "graph", {})

    answer = call_tool(bound, "graph", {"limit": 3})

    timed = sorted(
        (e for e in whole["events"] if e["occurred_at"] is not None),
        key=lambda e: e["occurred_at"],
    )
    assert {e["event_id"] for e in answer["events"]} == {e["event_id"] for e in timed[-3:]}
    assert answer["totals"]["events"] == whole["totals"]["events"] > 3
    shown = {e["entity_id"] for e in answer["entities"]}
    assert shown == {entity for e in answer["events"] for entity in e["entity_ids"]} & {
        e["entity_id"] for e in whole["entities"]
    }


def test_the_projects_own_review_answers_before_the_global_one(
    reviewed_everywhere: McpHome,
) -> None:
    store = reviewed_everywhere.store
    bound = ToolContext(store, reviewed_everywhere.main_id)
    project = store.conversation(reviewed_everywhere.main_id).project
    global_id = store.overview(None, 1)[0].result_id
    _cli("review", "run", "--project", project, "--reanalyze")
    own_id = next(r.result_id for r in store.overview(project, 5) if not r.is_global)

    overview = call_tool(bound, "overview", {})
    graph = call_tool(bound, "graph", {})

    assert [r["result_id"] for r in overview["results"]] == [own_id, global_id]
    assert overview["answered_from"]["result_id"] == own_id
    assert graph["answered_from"] == overview["answered_from"]
    assert graph["answered_from"]["scope"] == project
    assert graph["result"]["result_id"] == own_id


def test_without_any_review_the_graph_tool_says_how_to_publish_one(proctor_home: Path) -> None:
    store = open_store(proctor_home / "proctor.db")
    ingest(store, [EXAMPLES_DIR])
    conversation = store.list_conversations()[0].conversation_id
    bound = ToolContext(store, conversation)

    with pytest.raises(ToolRefusal, match="proctor review run"):
        call_tool(bound, "graph", {})
    assert call_tool(bound, "overview", {})["answered_from"] is None


def test_another_projects_review_is_answered_as_one_that_does_not_exist(
    reviewed_everywhere: McpHome,
) -> None:
    store = reviewed_everywhere.store
    bound = ToolContext(store, reviewed_everywhere.main_id)
    project = store.conversation(reviewed_everywhere.main_id).project
    other = next(p.name for p in store.projects() if p.name != project)
    _cli("review", "run", "--project", other)
    theirs = next(r.result_id for r in store.overview(other, 5) if not r.is_global)

    for ref in (theirs, theirs[:8]):
        with pytest.raises(ToolRefusal, match=f"No result covering project {project!r}"):
            call_tool(bound, "graph", {"result_id": ref})
    listed = {r["result_id"] for r in call_tool(bound, "overview", {})["results"]}
    assert theirs not in listed
