"""The trace over the API (SPEC UI-3, seed 004): turns, timings, failures, the findings citing
each item, sub-agent cards and windows of long conversations — on generated transcripts
ingested the real way, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from proctor.api._transcript import TraceContext, transcript_page
from proctor.findings import Evidence
from proctor.ingest import ingest
from proctor.store import SqlStore, open_store
from tests.api.conftest import Api
from tests.trace_world import (
    START,
    LongTrace,
    cite,
    family_lines,
    write_jsonl,
    write_long_trace,
)

LONG = "pj:trace-long"
FAMILY = "pj:family"
SHAPES = "pj:shapes"


def _at(ms: int) -> str:
    from datetime import timedelta

    return (START + timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")


def _shapes_lines() -> list[dict[str, Any]]:
    """Context before the first prompt, two prompts, and one call of every outcome."""
    c = "shapes"
    lines: list[dict[str, Any]] = [
        {"type": "conversation", "conversation_id": c, "title": "Shapes", "project": "trace-lab"},
        {
            "type": "message",
            "conversation_id": c,
            "message_id": "sys",
            "role": "developer",
            "kind": "instructions",
            "text": "Be careful.",
            "created_at": _at(0),
        },
        {
            "type": "message",
            "conversation_id": c,
            "message_id": "u1",
            "role": "user",
            "kind": "prompt",
            "text": "First request",
            "created_at": _at(1_000),
        },
        {
            "type": "message",
            "conversation_id": c,
            "message_id": "a1",
            "role": "assistant",
            "text": "On it.",
            "model": "model-x",
            "created_at": _at(3_000),
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 100},
        },
    ]
    outcomes = [
        ("ok0", "ok", 0),
        ("exit2", "ok", 2),
        ("err", "error", None),
        ("intr", "interrupted", None),
        ("rej", "rejected", None),
        ("pend", None, None),
    ]
    for n, (name, status, code) in enumerate(outcomes):
        lines.append(
            {
                "type": "tool_call",
                "conversation_id": c,
                "call_id": name,
                "message_id": "a1",
                "name": "shell",
                "arguments": {"command": name},
                "created_at": _at(4_000 + n * 1_000),
            }
        )
        if status is not None:
            result: dict[str, Any] = {
                "type": "tool_result",
                "conversation_id": c,
                "call_id": name,
                "status": status,
                "output": name,
                "completed_at": _at(4_000 + n * 1_000 + 250),
            }
            if code is not None:
                result["exit_code"] = code
            lines.append(result)
    lines += [
        {
            "type": "message",
            "conversation_id": c,
            "message_id": "u2",
            "role": "user",
            "kind": "prompt",
            "text": "Second request",
            "created_at": _at(20_000),
        },
        {
            "type": "message",
            "conversation_id": c,
            "message_id": "a2",
            "role": "assistant",
            "text": "Done.",
            "created_at": _at(21_500),
        },
    ]
    return lines


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LongTrace]:
    """A long conversation (2,000 messages), the shapes and a family of sub-agents,
    ingested, with findings citing some of their items."""
    folder = tmp_path_factory.mktemp("trace-world")
    long = write_long_trace(folder / "long.jsonl")
    write_jsonl(folder / "family.jsonl", family_lines())
    write_jsonl(folder / "shapes.jsonl", _shapes_lines())
    path = folder / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [folder / "long.jsonl", folder / "family.jsonl", folder / "shapes.jsonl"])
        late = f"{LONG}:msg:{long.late_message}"
        cite(
            store,
            LONG,
            "message",
            late,
            title="Claim without a passing run",
            severity="high",
            field="text",
            start=0,
            end=len(long.late_claim),
        )
        # One finding citing two sources, one citing a source twice, an absence, a low one.
        cite(
            store,
            SHAPES,
            "tool_call",
            f"{SHAPES}:call:err",
            title="Failing call",
            severity="low",
            more=[Evidence(source_type="message", source_id=f"{SHAPES}:msg:a1")],
        )
        cite(
            store,
            SHAPES,
            "tool_call",
            f"{SHAPES}:call:err",
            title="Same call twice",
            severity="high",
            field="result_text",
            start=0,
            end=1,
            more=[
                Evidence(
                    source_type="tool_call",
                    source_id=f"{SHAPES}:call:err",
                    field="result_text",
                    start=1,
                    end=2,
                )
            ],
        )
        cite(
            store,
            SHAPES,
            "conversation",
            SHAPES,
            title="Never tested",
            severity="medium",
            more=[Evidence(source_type="conversation", source_id=SHAPES, missing="a test run")],
        )
        cite(store, "pj:family-done", "message", "pj:family-done:msg:done-1", title="Child finding")
        cite(store, "pj:family-done", "message", "pj:family-done:msg:done-0", title="Other one")
    finally:
        store.close()
    return path, long


@pytest.fixture(scope="module")
def trace_api(world: tuple[Path, LongTrace]) -> Iterator[Api]:
    """One app over the world, for the tests that only read."""
    client = Api(world[0])
    try:
        yield client
    finally:
        client.close()


def _trace(api: Api, conversation: str, **params: object) -> dict[str, Any]:
    response = api.get(f"/api/conversations/{conversation}/transcript", params=params)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _by_source(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["source_id"].rsplit(":", 1)[-1]: item for item in page["items"]}


def test_items_are_grouped_into_turns_that_each_prompt_starts(trace_api: Api) -> None:
    page = _trace(trace_api, SHAPES)
    items = _by_source(page)
    assert [i["index"] for i in page["items"]] == list(range(len(page["items"])))
    assert items["sys"]["turn"] == 0 and not items["sys"]["turn_start"]
    assert items["u1"]["turn"] == 1 and items["u1"]["turn_start"]
    assert items["a1"]["turn"] == 1 and items["pend"]["turn"] == 1
    assert items["u2"]["turn"] == 2 and items["u2"]["turn_start"] and items["a2"]["turn"] == 2
    heads = {head["turn"]: head for head in page["turns"]}
    assert page["turn_count"] == 3 and set(heads) == {0, 1, 2}
    assert heads[0]["prompt"] is None and heads[0]["items"] == 1
    assert heads[1]["prompt"] == "First request"
    assert (heads[1]["items"], heads[1]["tool_calls"], heads[1]["failed"]) == (8, 6, 4)
    assert heads[1]["index"] == items["u1"]["index"] and heads[2]["index"] == items["u2"]["index"]


def test_a_call_lasts_until_its_result_and_a_message_until_the_next_timed_item(
    trace_api: Api,
) -> None:
    page = _trace(trace_api, SHAPES)
    items = _by_source(page)
    assert page["started_at"].startswith("2026-03-02T09:00:00")
    assert items["sys"]["offset_ms"] == 0 and items["sys"]["duration_ms"] == 1_000
    assert items["u1"]["offset_ms"] == 1_000 and items["u1"]["duration_ms"] == 2_000
    assert items["a1"]["duration_ms"] == 1_000  # until its first call
    assert items["ok0"]["offset_ms"] == 4_000 and items["ok0"]["duration_ms"] == 250
    assert items["pend"]["duration_ms"] is None  # no result: no end
    assert items["a2"]["duration_ms"] is None  # the last item: nothing follows
    heads = {head["turn"]: head for head in page["turns"]}
    assert heads[1]["duration_ms"] == 9_000 - 1_000  # to the pending call, which has no end
    assert page["span_ms"] == 21_500


def test_failed_calls_are_those_with_an_error_status_or_a_nonzero_exit_code(
    trace_api: Api,
) -> None:
    items = _by_source(_trace(trace_api, SHAPES))
    failed = {name for name, item in items.items() if item["failed"]}
    assert failed == {"exit2", "err", "intr", "rej"}
    assert items["exit2"]["status"] == "ok" and items["exit2"]["exit_code"] == 2
    assert items["pend"]["status"] == "pending"


def test_model_and_tokens_come_with_the_messages_that_record_them(trace_api: Api) -> None:
    items = _by_source(_trace(trace_api, SHAPES))
    assert items["a1"]["model"] == "model-x"
    assert items["a1"]["tokens"] == {
        "input": 10,
        "output": 5,
        "cache_read": 100,
        "cache_write": 0,
        "reasoning": 0,
        "total": 115,
    }
    assert items["u1"]["tokens"] is None and items["ok0"]["tokens"] is None


def test_each_item_lists_the_findings_citing_it_once_most_severe_first(trace_api: Api) -> None:
    page = _trace(trace_api, SHAPES)
    items = _by_source(page)
    marks = items["err"]["findings"]
    assert [m["severity"] for m in marks] == ["high", "low"]  # cited twice: listed once
    assert [m["severity"] for m in items["a1"]["findings"]] == ["low"]
    assert marks[1]["finding_id"] == items["a1"]["findings"][0]["finding_id"]
    assert all(not items[n]["findings"] for n in ("sys", "u1", "ok0", "u2", "a2"))
    # A finding of absence cites no item; the turn counts distinct findings.
    assert {h["turn"]: h["findings"] for h in page["turns"]} == {0: 0, 1: 2, 2: 0}
    findings = trace_api.get("/api/findings", params={"conversation": SHAPES}).json()
    cited = {m["finding_id"] for item in page["items"] for m in item["findings"]}
    assert cited < {f["finding_id"] for f in findings["findings"]}


def test_the_citations_cost_one_query_however_many_findings_there_are(tmp_path: Path) -> None:
    write_long_trace(tmp_path / "long.jsonl", messages=300)
    seed = open_store(tmp_path / "proctor.db")
    try:
        ingest(seed, [tmp_path / "long.jsonl"])
    finally:
        seed.close()

    def statements(api: Api) -> int:
        store: SqlStore = api.app.state.store_holder.get()
        seen: list[str] = []
        listener = lambda *args: seen.append(args[2])  # noqa: E731 - (conn, cursor, statement, …)
        event.listen(store._reader, "before_cursor_execute", listener)
        try:
            _trace(api, LONG, offset=100)
        finally:
            event.remove(store._reader, "before_cursor_execute", listener)
        return len(seen)

    api = Api(tmp_path / "proctor.db")
    try:
        before = statements(api)
        served: SqlStore = api.app.state.store_holder.get()
        window = _trace(api, LONG, offset=100)["items"]
        calls = [item["source_id"] for item in window if item["source_type"] == "tool_call"]
        for n, call in enumerate(calls[:40]):
            cite(served, LONG, "tool_call", call, title=f"Finding {n}")
        after = statements(api)
        items = _trace(api, LONG, offset=100)["items"]
    finally:
        api.close()
    assert after == before
    assert sum(len(item["findings"]) for item in items) == 40


def test_a_window_of_a_long_conversation_carries_its_items_and_whole_turns(
    trace_api: Api, world: tuple[Path, LongTrace]
) -> None:
    long = world[1]
    total = long.messages + long.tool_calls
    page = _trace(trace_api, LONG, limit=100, offset=1_000)
    assert page["total"] == total and page["offset"] == 1_000 and len(page["items"]) == 100
    assert page["turn_count"] == long.prompts
    assert [i["index"] for i in page["items"]] == list(range(1_000, 1_100))
    turns = {item["turn"] for item in page["items"]}
    assert {head["turn"] for head in page["turns"]} == turns
    # A turn the window cuts still comes whole: its head counts every item of it.
    first = page["turns"][0]
    assert first["index"] < 1_000 and first["items"] == 99  # a prompt, 49 replies, 49 calls
    last = _trace(trace_api, LONG, limit=500, offset=total - 10)
    assert len(last["items"]) == 10


def test_a_late_source_or_a_turn_opens_the_window_that_holds_it(
    trace_api: Api, world: tuple[Path, LongTrace]
) -> None:
    long = world[1]
    late = f"{LONG}:msg:{long.late_message}"
    page = _trace(trace_api, LONG, around=late, limit=100)
    ids = [item["source_id"] for item in page["items"]]
    assert late in ids and page["offset"] % 100 == 0 and page["offset"] > 3_800
    cited = next(item for item in page["items"] if item["source_id"] == late)
    assert cited["text"] == long.late_claim and cited["findings"][0]["severity"] == "high"
    turn = _trace(trace_api, LONG, turn=17, limit=100)
    head = next(h for h in turn["turns"] if h["turn"] == 17)
    assert turn["offset"] == head["index"] // 100 * 100
    assert any(item["turn_start"] and item["turn"] == 17 for item in turn["items"])


def test_unknown_windows_are_refused_with_a_sentence(trace_api: Api) -> None:
    missing = trace_api.get(f"/api/conversations/{LONG}/transcript", params={"around": "nope"})
    assert missing.status_code == 404 and "'nope'" in missing.json()["detail"]
    turn = trace_api.get(f"/api/conversations/{SHAPES}/transcript", params={"turn": 9})
    assert turn.status_code == 404 and "turns 0–2" in turn.json()["detail"]
    too_big = trace_api.get(f"/api/conversations/{LONG}/transcript", params={"limit": 501})
    assert too_big.status_code == 422


def test_sub_agent_cards_list_every_run_with_its_own_findings(trace_api: Api) -> None:
    response = trace_api.get(f"/api/conversations/{FAMILY}/subagents")
    assert response.status_code == 200
    cards = {card["conversation_id"].split("-")[-1]: card for card in response.json()}
    assert set(cards) == {"done", "busy", "broke", "loose"}
    done = cards["done"]
    assert done["agent_type"] == "Explore" and done["description"] == "Map the money code"
    assert done["status"] == "completed" and done["finished"] is True
    assert done["summary"] == "## Found\n\n- `totals.py:19`"
    assert (done["duration_ms"], done["tool_calls"], done["tool_uses"]) == (12_000, 2, 2)
    assert (done["findings"], done["open_findings"]) == (2, 2)
    assert done["parent_tool_call_id"] == f"{FAMILY}:call:task-done"
    assert cards["busy"]["finished"] is False and cards["busy"]["findings"] == 0
    # No duration reported: the child's own first and last times give one.
    assert cards["busy"]["duration_ms"] == 400
    assert cards["broke"]["status"] == "error" and cards["broke"]["finished"] is True
    assert cards["loose"]["parent_tool_call_id"] is None


def test_the_call_that_started_a_sub_agent_carries_its_card_and_the_child_links_back(
    trace_api: Api,
) -> None:
    items = _by_source(_trace(trace_api, FAMILY))
    assert items["task-done"]["subagent"]["conversation_id"] == "pj:family-done"
    assert items["task-busy"]["subagent"]["finished"] is False
    assert items["p1"].get("subagent") is None
    heads = _trace(trace_api, FAMILY)["turns"]
    assert heads[0]["subagents"] == 3  # the unlinked run sits on no call
    child = _trace(trace_api, "pj:family-done")
    assert child["parent"] == {
        "conversation_id": FAMILY,
        "title": "Family of sub-agents",
        "tool_call_id": f"{FAMILY}:call:task-done",
        "imported": True,
    }
    assert child["subagent_run"]["description"] == "Map the money code"
    assert _trace(trace_api, FAMILY)["parent"] is None
    assert trace_api.get("/api/conversations/pj:shapes/subagents").json() == []


@pytest.mark.parametrize("conversation", [LONG, SHAPES, FAMILY, "pj:family-done"])
def test_a_window_read_from_the_outline_equals_one_laid_out_from_the_whole_transcript(
    world: tuple[Path, LongTrace], conversation: str
) -> None:
    store = open_store(world[0], read_only=True)
    try:
        context = TraceContext(
            citations=store.finding_citations(conversation),
            cards=store.subagent_cards(conversation),
        )
        for offset in (0, 1_900):
            whole = transcript_page(
                store.transcript(conversation), context, limit=100, offset=offset
            )
            outlined = transcript_page(
                store.trace_outline(conversation),
                context,
                limit=100,
                offset=offset,
                load=lambda m, c: store.trace_sources(conversation, m, c),
            )
            assert outlined == whole
    finally:
        store.close()


def test_a_sub_agent_imported_without_its_parent_names_the_parent_without_linking_it(
    tmp_path: Path,
) -> None:
    # Only the children's lines: their parent conversation never reaches the store.
    orphans = [
        line for line in family_lines() if line.get("conversation_id", "").startswith("family-")
    ]
    folder = tmp_path / "orphans"
    write_jsonl(folder / "children.jsonl", orphans)
    database = tmp_path / "orphans.db"
    store = open_store(database)
    try:
        ingest(store, [folder])
    finally:
        store.close()
    api = Api(database)
    try:
        child = _trace(api, "pj:family-done")
        assert child["parent"] == {
            "conversation_id": FAMILY,
            "title": None,
            "tool_call_id": None,
            "imported": False,
        }
        assert child["items"], "the sub-agent's own trace is shown"
    finally:
        api.close()
