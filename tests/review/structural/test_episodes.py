"""Episodes: each user request with the work it caused and its outcome line (issue 20).

The real transcripts under ``../shared/transcripts`` (Claude Code, Codex, Gemini CLI,
OpenTelemetry) must be told in episodes at the grain of requests; invented Claude Code
sessions, imported through the real adapter and reviewed by the real pipeline, pin down
what an episode holds: reads only, tests failing → passing, a sub-agent run, requests
one after another, a command still failing.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from proctor.graph import EventFact
from proctor.graph.views import GraphView
from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.review._batch import SourceBatch
from proctor.review.structural import (
    WITHOUT_REQUEST,
    episode_line_id,
    extract_structural,
    gather_episodes,
    is_user_request,
    outcome_line,
    request_title,
    story_line_id,
)
from proctor.store import SqlStore, Store, open_store
from tests.review.structural.helpers import batch_of, conversation_ids
from tests.sources.fixtures.claude_code.records import (
    prompt,
    reply,
    tool_result,
    tool_use,
    write_session,
)

Record = dict[str, Any]

# -- the shared transcripts ---------------------------------------------------------------


@pytest.fixture(scope="module")
def whole_batch(shared_store: Store) -> SourceBatch:
    """Every shared conversation as one batch (sub-agents beside their parents)."""
    return batch_of(shared_store, conversation_ids(shared_store))


def _requests(batch: SourceBatch) -> Counter[str]:
    return Counter(
        s.conversation_id
        for s in batch.sources
        if s.message is not None
        and is_user_request(s.message, batch.conversations.get(s.conversation_id))
    )


def test_every_shared_transcript_is_told_in_episodes_within_three_times_its_requests(
    whole_batch: SourceBatch,
) -> None:
    facts = extract_structural(whole_batch)
    episodes = gather_episodes(facts.events, whole_batch.conversations)
    requests = _requests(whole_batch)
    told = Counter(e.conversation_id for e in episodes.events if e.kind == "episode")
    work = Counter(e.conversation_id for e in episodes.events if e.kind != "episode")
    main = [
        c for c, conversation in whole_batch.conversations.items() if conversation.kind == "main"
    ]
    assert sum(requests.values()) >= 90  # the corpus holds about a hundred requests
    for conversation_id in main:
        if requests[conversation_id] or work[conversation_id]:
            assert 1 <= told[conversation_id] <= 3 * max(1, requests[conversation_id]), (
                conversation_id
            )
    assert sum(told.values()) <= 3 * sum(requests.values())
    # The default timeline: tens of episodes instead of hundreds of single events.
    assert sum(told.values()) * 4 < sum(work.values())
    for event in episodes.events:
        if event.kind == "episode":
            assert event.title.strip() and event.summary.strip(), event
            assert event.summary == outcome_line(
                [e for e in episodes.events if e.event_id in episodes.members[event.event_id]]
            )


def test_every_event_of_a_main_conversation_belongs_to_exactly_one_episode(
    whole_batch: SourceBatch,
) -> None:
    facts = extract_structural(whole_batch)
    episodes = gather_episodes(facts.events, whole_batch.conversations)
    member_of: Counter[str] = Counter(i for ids in episodes.members.values() for i in ids)
    by_id = {e.event_id: e for e in episodes.events}
    for event in episodes.events:
        conversation = whole_batch.conversations[event.conversation_id]
        if event.kind == "episode":
            assert conversation.kind == "main"
        elif conversation.kind == "main":
            assert member_of[event.event_id] == 1, event
        else:  # a sub-agent's work stays in its own story line
            assert member_of[event.event_id] == 0, event
    for episode_id, ids in episodes.members.items():
        episode = by_id[episode_id]
        assert {by_id[i].conversation_id for i in ids} <= {episode.conversation_id}
    lines = {line.story_line_id: line for line in episodes.lines}
    for episode_id, ids in episodes.members.items():
        if ids:
            line = lines[episode_line_id(episode_id)]
            assert line.event_ids == (episode_id, *ids)
            assert line.parent_key == f"conversation:{by_id[episode_id].conversation_id}"


def test_requests_are_the_users_own_words_in_every_format(whole_batch: SourceBatch) -> None:
    requests = _requests(whole_batch)
    formats = {whole_batch.conversations[c].format for c in requests if requests[c]}
    assert {"claude_code", "codex", "gemini_cli"} <= formats
    for source in whole_batch.sources:
        conversation = whole_batch.conversations[source.conversation_id]
        message = source.message
        if message is None or not is_user_request(message, conversation):
            continue
        # Never a tool result, an injection, an instruction or a sub-agent's prompt.
        assert message.role == "user" and message.kind == "prompt"
        assert conversation.kind == "main" and conversation.parent_conversation_id is None
    # A Codex session: 38 typed requests among environment context and instructions.
    (codex,) = [c for c in requests if c.startswith("codex:019c8a59")]
    assert requests[codex] == 38
    # Sub-agent sessions open with their parent's prompt: no requests there.
    subagents = [c for c, v in whole_batch.conversations.items() if v.kind == "subagent"]
    assert subagents and not any(requests[c] for c in subagents)


def test_a_request_title_is_its_first_line_without_harness_markup() -> None:
    assert request_title("\n  Fix the   rounding bug\nin exports") == "Fix the rounding bug"
    assert request_title("<bash-input>uv run pytest -q</bash-input>") == "uv run pytest -q"
    long = request_title("word " * 60)
    assert len(long) == 100 and long.endswith("…")


# -- invented sessions, reviewed by the pipeline --------------------------------------------


class _Session:
    """A Claude Code session written record by record, one second apart."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.second = 0
        self.last: str | None = None
        self.count = 0

    def _next(self, prefix: str) -> str:
        self.count += 1
        self.second += 1
        return f"{prefix}{self.count:04d}-0000-4000-8000-000000000000"

    def ask(self, text: str) -> None:
        uuid = self._next("aaaa")
        self.records.append(prompt(uuid, self.last, text, self.second))
        self.last = uuid

    def call(self, name: str, result: str, *, error: bool = False, **arguments: Any) -> None:
        call_id = f"toolu_{self.count + 1:04d}"
        uuid = self._next("bbbb")
        block = tool_use(call_id, name, **arguments)
        self.records.append(reply(uuid, self.last, f"msg_{self.count:04d}", [block], self.second))
        result_uuid = self._next("cccc")
        self.records.append(
            tool_result(result_uuid, uuid, call_id, result, self.second, is_error=error)
        )
        self.last = result_uuid

    def write(self, path: Path) -> Path:
        return write_session(path, list(self.records))


def _reviewed(tmp_path: Path, session: _Session) -> tuple[SqlStore, GraphView]:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [session.write(tmp_path / "sessions" / "invented.jsonl")])
    run = start_review(store, ReviewRequest(), semantic=None, semantic_note="no model")
    assert run.status == "completed" and run.result_id is not None
    return store, store.graph(run.result_id, limit=None)


def _episodes(graph: GraphView) -> list[Any]:
    return [e for e in graph.events if e.kind == "episode"]


def _members(graph: GraphView, episode: Any) -> list[Any]:
    """The episode's work, read from its story line as a timeline would."""
    by_id = {e.event_id: e for e in graph.events}
    (line,) = [
        line
        for line in graph.story_lines
        if line.story_line_id == episode_line_id(episode.event_id)
    ]
    assert line.event_ids[0] == episode.event_id
    assert line.story_line_id in episode.story_line_ids
    return [by_id[i] for i in line.event_ids[1:]]


def test_a_request_that_only_reads_is_one_episode_of_reads(tmp_path: Path) -> None:
    session = _Session()
    session.ask("Where is the invoice total rounded?")
    session.call("Read", "def total(lines): ...", file_path="/home/dev/shop/invoice/total.py")
    session.call("Read", "def export(): ...", file_path="/home/dev/shop/invoice/export.py")
    session.call("Read", "def total(lines): ...", file_path="/home/dev/shop/invoice/total.py")
    store, graph = _reviewed(tmp_path, session)
    (episode,) = _episodes(graph)
    assert episode.title == "Where is the invoice total rounded?"
    assert episode.summary == "2 files read"
    assert episode.outcome == "unknown"
    members = _members(graph, episode)
    assert [e.kind for e in members] == ["file_read"] * 3
    # The episode cites the request; each read still cites its own tool call.
    assert [(r.source_type, r.field) for r in episode.sources] == [("message", "text")]
    assert all(r.source_type == "tool_call" for e in members for r in e.sources)
    # It names what its work touched, so picking a file finds the episode too.
    assert set(episode.entity_ids) == {i for e in members for i in e.entity_ids}
    # The conversation's line shows the episode; the episode's line is its sub-thread.
    conversation_line = next(line for line in graph.story_lines if line.parent_id is None)
    assert episode.event_id in conversation_line.event_ids
    (sub,) = [line for line in graph.story_lines if line.parent_id is not None]
    assert sub.parent_id == conversation_line.story_line_id
    store.close()


def test_tests_going_from_failing_to_passing_make_an_episode_that_succeeded(
    tmp_path: Path,
) -> None:
    session = _Session()
    session.ask("Fix the failing rounding test, then run the suite")
    session.call(
        "Bash",
        "F..\nFAILED tests/test_total.py::test_rounds_half_up\n1 failed, 2 passed in 0.12s",
        error=True,
        command="pytest -q",
    )
    session.call("Read", "def total(lines): ...", file_path="/home/dev/shop/invoice/total.py")
    session.call(
        "Edit",
        "The file /home/dev/shop/invoice/total.py has been updated.",
        file_path="/home/dev/shop/invoice/total.py",
        old_string="round(x, 2)",
        new_string="quantize(x)",
    )
    session.call("Bash", "...\n3 passed in 0.10s", command="pytest -q")
    store, graph = _reviewed(tmp_path, session)
    (episode,) = _episodes(graph)
    assert episode.summary == "1 file edited; 1 file read; tests failing → passing"
    assert episode.outcome == "ok"
    assert [e.kind for e in _members(graph, episode)] == [
        "test_run", "file_read", "file_edit", "test_run",
    ]  # fmt: skip
    # The outcome rests on the last test run, which the episode cites as well.
    last_run = _members(graph, episode)[-1]
    assert {r.source_id for r in last_run.sources} <= {r.source_id for r in episode.sources}
    store.close()


def test_a_command_still_failing_makes_a_failed_episode(tmp_path: Path) -> None:
    session = _Session()
    session.ask("Deploy the shop to staging")
    session.call("Bash", "Exit code 1\nerror: no such host", error=True, command="make deploy")
    session.call("Bash", "ok", command="git status")
    session.call("Bash", "Exit code 1\nerror: no such host", error=True, command="make deploy")
    store, graph = _reviewed(tmp_path, session)
    (episode,) = _episodes(graph)
    assert episode.summary == "3 commands run; 1 command still failing"
    assert episode.outcome == "failed"
    store.close()


def test_a_sub_agent_run_is_part_of_the_request_that_started_it(tmp_path: Path) -> None:
    session = _Session()
    session.ask("Find every place money is rounded")
    session.call(
        "Task",
        "Found 3 call sites.",
        description="Map money rounding call sites",
        prompt="Search the repository for rounding of money amounts.",
        subagent_type="Explore",
    )
    session.call("Read", "def total(lines): ...", file_path="/home/dev/shop/invoice/total.py")
    store, graph = _reviewed(tmp_path, session)
    (episode,) = _episodes(graph)
    assert episode.summary == "1 file read; 1 sub-agent run"
    assert [e.kind for e in _members(graph, episode)] == ["subagent_run", "file_read"]
    store.close()


def test_consecutive_requests_each_get_their_episode_and_their_own_work(tmp_path: Path) -> None:
    session = _Session()
    session.ask("Hi! Are you there?")
    session.ask("Please look at the export module")
    session.call("Read", "def export(): ...", file_path="/home/dev/shop/invoice/export.py")
    session.ask("Now run the linter")
    session.call("Bash", "All checks passed!", command="ruff check .")
    session.call("Bash", "All checks passed!", command="ruff check src")
    store, graph = _reviewed(tmp_path, session)
    episodes = _episodes(graph)
    assert [(e.title, e.summary) for e in episodes] == [
        ("Hi! Are you there?", "no tool work"),
        ("Please look at the export module", "1 file read"),
        ("Now run the linter", "2 commands run"),
    ]
    # An episode without work has no sub-thread; the others hold only their own work.
    quiet = episode_line_id(episodes[0].event_id)
    assert not [line for line in graph.story_lines if line.story_line_id == quiet]
    assert [e.kind for e in _members(graph, episodes[1])] == ["file_read"]
    assert [e.kind for e in _members(graph, episodes[2])] == ["command", "command"]
    store.close()


def test_a_review_that_reads_the_same_sources_again_publishes_the_same_episodes(
    tmp_path: Path,
) -> None:
    session = _Session()
    session.ask("Run the linter")
    session.call("Bash", "All checks passed!", command="ruff check .")
    store, graph = _reviewed(tmp_path, session)
    again = start_review(
        store, ReviewRequest(reanalyze=True), semantic=None, semantic_note="no model"
    )
    assert again.result_id is not None
    second = store.graph(again.result_id, limit=None)
    assert [(e.event_id, e.summary) for e in _episodes(second)] == [
        (e.event_id, e.summary) for e in _episodes(graph)
    ]
    lines = {line.story_line_id for line in second.story_lines}
    assert {line.story_line_id for line in graph.story_lines} == lines
    store.close()


def test_work_before_any_request_is_one_episode_of_its_own() -> None:
    def event(kind: str, second: int, event_id: str) -> EventFact:
        from datetime import UTC, datetime

        return EventFact(
            event_id=event_id,
            project_id="p",
            kind=kind,  # type: ignore[arg-type]
            title=kind,
            summary=kind,
            occurred_at=datetime(2026, 3, 1, 10, 0, second, tzinfo=UTC),
            conversation_id="c",
            sources=(),
            layer="structural",
            entity_ids=(f"entity-{event_id}",),
        )

    from proctor.transcript import Conversation

    conversations = {"c": Conversation("c", "test", "c")}
    found = gather_episodes(
        [event("command", 1, "e1"), event("episode", 2, "r1"), event("file_read", 3, "e2")],
        conversations,
    )
    first, _, request, _ = found.events
    assert first.kind == "episode" and first.title == WITHOUT_REQUEST
    assert found.members == {first.event_id: ("e1",), "r1": ("e2",)}
    assert request.event_id == "r1" and request.summary == "1 file read"
    # A sub-agent's conversation holds no episodes.
    child = {"c": Conversation("c", "test", "c", kind="subagent", parent_conversation_id="p")}
    assert gather_episodes([event("command", 1, "e1")], child).members == {}
    assert story_line_id("c") != episode_line_id("r1")


def test_an_api_message_list_without_times_is_told_in_the_order_it_happened(
    tmp_path: Path,
) -> None:
    # An Anthropic Messages list: no times at all; tool results come back as user turns.
    log = [
        {"role": "user", "content": "Please list the files in the repo"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                         "input": {"command": "ls"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "a.py\nb.py"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a.py and b.py"}]},
        {"role": "user", "content": "Now read a.py"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_2", "name": "Read",
                         "input": {"file_path": "/repo/a.py"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                      "content": "print(1)"}]},
    ]  # fmt: skip
    path = tmp_path / "logs" / "messages.json"
    path.parent.mkdir()
    path.write_text(json.dumps(log))
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [path])
    run = start_review(store, ReviewRequest(), semantic=None, semantic_note="no model")
    assert run.result_id is not None
    graph = store.graph(run.result_id, limit=None)
    episodes = _episodes(graph)
    # The tool results are not requests: two requests, two episodes, each with its work.
    assert sorted((e.title, e.summary) for e in episodes) == [
        ("Now read a.py", "1 file read"),
        ("Please list the files in the repo", "1 command run"),
    ]
    for episode in episodes:
        (member,) = _members(graph, episode)
        assert member.kind == ("file_read" if episode.title.startswith("Now") else "command")
    store.close()
