"""Live intake in the library: payloads validated whole, streamed events extend one conversation."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from proctor.ingest import Intake, PayloadError
from proctor.store import SqlStore, open_store
from tests.backends import raw_connection, stored_bytes

CONVERSATION = "pj:run-7"


def lines(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def message(message_id: str, role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "conversation_id": "run-7",
        "message_id": message_id,
        "role": role,
        "text": text,
        "created_at": f"2026-11-20T09:00:0{message_id[-1]}Z",
        **extra,
    }


START = {"type": "conversation", "conversation_id": "run-7", "title": "Fix the export"}
CALL = {
    "type": "tool_call",
    "conversation_id": "run-7",
    "call_id": "c1",
    "name": "Bash",
    "arguments": {"command": "pytest -q"},
}
RESULT = {
    "type": "tool_result",
    "conversation_id": "run-7",
    "call_id": "c1",
    "status": "error",
    "output": "1 failed",
    "exit_code": 1,
}


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "proctor.db"


@pytest.fixture
def store(database: Path) -> Iterator[SqlStore]:
    opened = open_store(database)
    try:
        yield opened
    finally:
        opened.close()


def rows(database: Path, table: str) -> int:
    with raw_connection(database) as connection:
        count: int = connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
    return count


def test_events_streamed_in_three_requests_extend_one_conversation_in_order(
    store: SqlStore,
) -> None:
    intake = Intake(store)
    first = intake.events(lines(START, message("m1", "user", "Fix the export")))
    second = intake.events(lines(message("m2", "assistant", "Running the tests."), CALL))
    third = intake.events(lines(RESULT, message("m3", "assistant", "One test fails.")))

    assert first.conversation_ids == second.conversation_ids == third.conversation_ids
    assert (first.conversations_created, second.conversations_created) == (1, 0)
    transcript = store.transcript(CONVERSATION)
    assert transcript.summary.conversation.title == "Fix the export"
    assert [m.text for m in transcript.messages] == [
        "Fix the export",
        "Running the tests.",
        "One test fails.",
    ]
    parents = [m.parent_source_id for m in transcript.messages]
    assert parents == [None, transcript.messages[0].source_id, transcript.messages[1].source_id]
    [call] = transcript.tool_calls
    assert (call.status, call.result_text, call.exit_code) == ("error", "1 failed", 1)
    assert call.message_source_id == transcript.messages[1].source_id
    assert len(store.list_conversations()) == 1


def test_sending_the_same_events_again_writes_nothing_new(store: SqlStore) -> None:
    intake = Intake(store)
    payload = lines(START, message("m1", "user", "Fix the export"), CALL)
    intake.events(payload)
    again = intake.events(payload)
    assert (again.sources_added, again.sources_revised, again.sources_unchanged) == (0, 0, 2)


def test_a_message_sent_again_with_new_text_is_a_revision_in_place(store: SqlStore) -> None:
    intake = Intake(store)
    intake.events(lines(message("m1", "user", "Fix the export"), message("m2", "assistant", "Ok")))
    report = intake.events(lines(message("m1", "user", "Fix the CSV export")))
    assert report.sources_revised == 1
    texts = [m.text for m in store.transcript(CONVERSATION).messages]
    assert texts == ["Fix the CSV export", "Ok"]


def test_one_bad_line_refuses_the_whole_payload_and_stores_nothing(
    store: SqlStore, database: Path
) -> None:
    bad = message("m2", "robot", "hi")
    payload = lines(START, message("m1", "user", "Fix the export")) + b"{not json\n" + lines(bad)
    with pytest.raises(PayloadError) as refused:
        Intake(store).events(payload)
    problems = [(p.line, p.reason) for p in refused.value.problems]
    assert problems[0][0] == 3 and "not valid JSON" in problems[0][1]
    assert problems[1][0] == 4 and problems[1][1].startswith('field "role": expected one of')
    assert "nothing from this request was stored" in str(refused.value)
    assert rows(database, "conversations") == rows(database, "messages") == 0


def test_hidden_reasoning_is_refused_with_a_reason(store: SqlStore) -> None:
    with pytest.raises(PayloadError, match="hidden reasoning"):
        Intake(store).events(lines(message("m1", "assistant", "ok", thinking="secret plan")))


def test_a_result_for_a_call_never_sent_is_refused_naming_its_line(
    store: SqlStore, database: Path
) -> None:
    intake = Intake(store)
    intake.events(lines(message("m1", "user", "Fix the export")))
    before = rows(database, "sources")
    with pytest.raises(PayloadError) as refused:
        intake.events(lines(message("m2", "assistant", "Done"), RESULT))
    [problem] = refused.value.problems
    assert problem.line == 2 and 'call "c1"' in problem.reason
    assert rows(database, "sources") == before


def test_an_empty_payload_is_refused(store: SqlStore) -> None:
    with pytest.raises(PayloadError, match="no events"):
        Intake(store).events(b"\n  \n")


def test_secrets_in_streamed_events_are_redacted_before_storage(
    store: SqlStore, database: Path
) -> None:
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 5
    report = Intake(store).events(lines(message("m1", "user", f"use {key} please")))
    assert report.redactions == 1
    assert key not in store.transcript(CONVERSATION).messages[0].text
    assert key.encode() not in stored_bytes(database)


def _span(span_id: str, messages_in: list[dict[str, Any]], reply: str) -> dict[str, Any]:
    def attribute(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": json.dumps(value)}}

    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "name": "chat m",
        "startTimeUnixNano": f"17960000000{span_id[-4:]}00000",
        "endTimeUnixNano": f"17960000000{span_id[-4:]}90000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            attribute("gen_ai.input.messages", messages_in),
            attribute(
                "gen_ai.output.messages",
                [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}],
            ),
        ],
    }


def _export(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_spans_of_one_trace_in_two_exports_make_one_conversation(store: SqlStore) -> None:
    intake = Intake(store)
    ask = _text("user", "What is 2+2?")
    first = intake.traces(_export(_span("00000000000a0001", [ask], "4")))
    follow = [ask, _text("assistant", "4"), _text("user", "And 3+3?")]
    second = intake.traces(_export(_span("00000000000a0002", follow, "6")))
    assert first.conversation_ids == second.conversation_ids
    [conversation_id] = second.conversation_ids
    texts = [m.text for m in store.transcript(conversation_id).messages]
    assert texts == ["What is 2+2?", "4", "And 3+3?", "6"]


def test_spans_without_genai_data_are_counted_as_dropped_not_refused(store: SqlStore) -> None:
    plain = {
        "traceId": "6b8efff798038103d269b633813fc60c",
        "spanId": "00000000000b0001",
        "name": "GET /health",
    }
    report = Intake(store).traces(
        _export(_span("00000000000a0001", [_text("user", "hi")], "hello"), plain)
    )
    assert (report.spans, report.spans_dropped) == (2, 1)
    assert len(report.conversation_ids) == 1


def test_an_export_with_an_undecodable_span_is_refused_whole(
    store: SqlStore, database: Path
) -> None:
    broken = _span("00000000000a0002", [_text("user", "x")], "y") | {"traceId": "not-an-id!"}
    with pytest.raises(PayloadError, match="neither hex nor base64"):
        Intake(store).traces(
            _export(_span("00000000000a0001", [_text("user", "hi")], "ok"), broken)
        )
    assert rows(database, "conversations") == 0


def test_a_document_that_is_not_an_export_is_refused(store: SqlStore) -> None:
    with pytest.raises(PayloadError, match="not an OTLP export"):
        Intake(store).traces({"spans": []})


def test_concurrent_appends_to_one_conversation_all_arrive_each_in_its_own_place(
    store: SqlStore, database: Path
) -> None:
    intake = Intake(store)
    intake.events(lines(message("m0", "user", "Start")))
    start = threading.Barrier(4)

    def append(number: int) -> None:
        start.wait()
        intake.events(lines(message(f"m{number}", "assistant", f"step {number}")))

    threads = [threading.Thread(target=append, args=(n,)) for n in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = sorted(m.text for m in store.transcript(CONVERSATION).messages)
    assert texts == ["Start", "step 1", "step 2", "step 3", "step 4"]
    with raw_connection(database) as connection:
        places = connection.execute(text("SELECT count(DISTINCT seq) FROM messages")).scalar()
    assert places == 5, "two appends raced for the same place"
