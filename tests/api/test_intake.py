"""Live intake over HTTP (ING-7): JSONL events and OTLP/JSON exports, refusals, supervision."""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from proctor._util.clock import utcnow
from proctor.api.routers.intake import stop_analysis_queue
from proctor.ingest import MAX_PAYLOAD_BYTES, ingest
from proctor.models import set_default_connection
from proctor.store import open_store
from proctor.supervision import SessionSettings, enable_supervision, resolve_target
from proctor.testing.scripted_model import ScriptedModelServer
from tests.api.conftest import Api
from tests.backends import raw_connection

NDJSON = {"Content-Type": "application/x-ndjson"}
EVENTS_URL = "/api/intake/events"


def lines(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def message(message_id: str, role: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "conversation_id": "agent-run",
        "message_id": message_id,
        "role": role,
        "text": text,
    }


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "proctor.db"


@pytest.fixture
def api(database: Path) -> Iterator[Api]:
    client = Api(database)
    try:
        yield client
    finally:
        client.close()


def counts(database: Path) -> tuple[int, ...]:
    """Rows in conversations, sources and messages."""
    with raw_connection(database) as connection:
        return tuple(
            int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
            for table in ("conversations", "sources", "messages")
        )


def test_events_are_stored_and_the_answer_says_what_was_stored(api: Api, database: Path) -> None:
    body = lines(message("m1", "user", "Fix the export"), message("m2", "assistant", "On it"))
    response = api.post(EVENTS_URL, content=body, headers=NDJSON, params={"project": "shop"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["conversation_ids"] == ["pj:agent-run"]
    assert (answer["conversations_created"], answer["sources_added"]) == (1, 2)
    assert answer["supervision"] == []
    shown = api.get("/api/conversations/pj:agent-run").json()
    assert (shown["project"], shown["messages"]) == ("shop", 2)
    assert counts(database) == (1, 2, 2)


def test_later_events_extend_the_conversation_instead_of_duplicating_it(api: Api) -> None:
    api.post(EVENTS_URL, content=lines(message("m1", "user", "Fix the export")), headers=NDJSON)
    again = api.post(
        EVENTS_URL,
        content=lines(message("m1", "user", "Fix the export"), message("m2", "assistant", "Done")),
        headers=NDJSON,
    ).json()
    assert (again["conversations_created"], again["sources_added"]) == (0, 1)
    assert again["sources_unchanged"] == 1
    listed = api.get("/api/conversations").json()
    assert listed["total"] == 1 and listed["conversations"][0]["messages"] == 2


def test_a_bad_line_is_refused_naming_line_and_field_and_nothing_is_stored(
    api: Api, database: Path
) -> None:
    body = lines(message("m1", "user", "ok"), message("m2", "assistant", "ok") | {"role": 7})
    response = api.post(EVENTS_URL, content=body, headers=NDJSON)
    assert response.status_code == 400
    refusal = response.json()
    assert refusal["problems"] == [
        {
            "line": 2,
            "reason": 'field "role": expected one of user, assistant, system, developer, tool',
        }
    ]
    assert "nothing from this request was stored" in refusal["detail"]
    assert counts(database) == (0, 0, 0)


def test_invalid_json_is_refused_with_its_position(api: Api, database: Path) -> None:
    body = lines(message("m1", "user", "ok")) + b'{"type": "message",\n'
    response = api.post(EVENTS_URL, content=body, headers=NDJSON)
    assert response.status_code == 400
    [problem] = response.json()["problems"]
    assert problem["line"] == 2 and "column" in problem["reason"]
    assert counts(database) == (0, 0, 0)


def test_a_wrong_content_type_is_answered_415(api: Api) -> None:
    response = api.post(EVENTS_URL, content=b"<xml/>", headers={"Content-Type": "application/xml"})
    assert response.status_code == 415
    assert "application/x-ndjson" in response.json()["detail"]
    traces = api.post("/v1/traces", content=b"x", headers={"Content-Type": "text/plain"})
    assert traces.status_code == 415


def test_a_body_over_the_limit_is_answered_413_and_nothing_is_stored(
    api: Api, database: Path
) -> None:
    event = json.dumps(message("m1", "user", "x" * 1000)).encode() + b"\n"
    body = event * (MAX_PAYLOAD_BYTES // len(event) + 1)
    response = api.post(EVENTS_URL, content=body, headers=NDJSON)
    assert response.status_code == 413
    assert "MiB" in response.json()["detail"]
    assert counts(database) == (0, 0, 0)


def test_a_gzip_body_is_read_and_a_damaged_one_refused(api: Api) -> None:
    body = gzip.compress(lines(message("m1", "user", "compressed")))
    headers = NDJSON | {"Content-Encoding": "gzip"}
    assert api.post(EVENTS_URL, content=body, headers=headers).status_code == 200
    damaged = api.post(EVENTS_URL, content=body[:-12] + b"garbage!", headers=headers)
    assert damaged.status_code == 400


def _span(trace_id: str, span_id: str, *, genai: bool) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": trace_id, "spanId": span_id, "name": "work"}
    if genai:
        span["attributes"] = [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {
                "key": "gen_ai.input.messages",
                "value": {
                    "stringValue": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": "hello"}]}]
                    )
                },
            },
        ]
    return span


def test_otlp_json_answers_partial_success_for_spans_that_are_not_genai(api: Api) -> None:
    trace = "5b8efff798038103d269b633813fc60c"
    export = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            _span(trace, "eee19b7ec3c1b174", genai=True),
                            _span(
                                "6b8efff798038103d269b633813fc60c", "eee19b7ec3c1b175", genai=False
                            ),
                        ]
                    }
                ]
            }
        ]
    }
    response = api.post("/v1/traces", json=export)
    assert response.status_code == 200, response.text
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    listed = api.get("/api/conversations").json()["conversations"]
    assert [c["conversation"]["conversation_id"] for c in listed] == [f"otel:{trace}"]


def test_otlp_with_only_genai_spans_answers_an_empty_response(api: Api) -> None:
    export = {
        "resourceSpans": [{"scopeSpans": [{"spans": [_span("a" * 32, "b" * 16, genai=True)]}]}]
    }
    response = api.post("/v1/traces", json=export)
    assert (response.status_code, response.json()) == (200, {})


def test_otlp_json_that_does_not_parse_is_refused_with_its_position(
    api: Api, database: Path
) -> None:
    response = api.post(
        "/v1/traces", content=b'{"resourceSpans": [}', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert "column" in response.json()["detail"]
    assert counts(database) == (0, 0, 0)


def test_an_otlp_export_with_a_broken_span_is_refused_whole(api: Api, database: Path) -> None:
    broken = _span("zz" * 16, "b" * 16, genai=True)
    export = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [_span("a" * 32, "c" * 16, genai=True), broken]}]}
        ]
    }
    response = api.post("/v1/traces", json=export)
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "spans[1]" in detail and "16 bytes" in detail and "skipped" not in detail
    assert counts(database) == (0, 0, 0)


def test_protobuf_without_the_otlp_extra_is_answered_415_saying_what_to_install(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None
    )
    response = api.post(
        "/v1/traces", content=b"\x0a\x00", headers={"Content-Type": "application/x-protobuf"}
    )
    assert response.status_code == 415
    assert "pip install 'proctor[otlp]'" in response.json()["detail"]


def test_new_events_queue_the_supervision_enabled_for_their_conversation(
    api: Api, database: Path
) -> None:
    api.post(EVENTS_URL, content=lines(message("m1", "user", "Fix the export")), headers=NDJSON)
    with ScriptedModelServer(responder=lambda _request: {"decisions": []}) as server:
        store = open_store(database)
        try:
            store.save_connection(server.connection("scripted"))
            set_default_connection(store, "scripted")
            target = resolve_target(store, "pj:agent-run")
            enable_supervision(store, target, SessionSettings(throttle_seconds=0), now=utcnow())
        finally:
            store.close()
        reply = lines(message("m2", "assistant", "The export is fixed."))
        answer = api.post(EVENTS_URL, content=reply, headers=NDJSON).json()
        try:
            assert api.app.state.analyses.wait_idle(timeout=60)
        finally:
            stop_analysis_queue(api.app)
        assert len(server.requests) == 1
        assert "The export is fixed." in json.dumps(server.requests[0].body)
    assert answer["supervision"] == [
        {
            "target": "pj:agent-run",
            "trigger": "none",
            "status": "queued",
            "findings": 0,
            "detail": None,
        }
    ]
    store = open_store(database)
    try:
        [run] = store.supervision_runs(target_id="pj:agent-run")
    finally:
        store.close()
    assert (run.trigger, run.status) == ("after_reply", "ok")


def test_genai_log_events_posted_to_v1_logs_make_the_conversation_a_file_import_makes(
    api: Api, tmp_path: Path
) -> None:
    fixture = Path(__file__).parents[1] / "sources/fixtures/otel/deprecated_events_logs.json"
    response = api.post(
        "/v1/logs", content=fixture.read_bytes(), headers={"Content-Type": "application/json"}
    )
    assert (response.status_code, response.json()) == (200, {})
    over_http = api.get("/api/conversations").json()["conversations"]
    store = open_store(tmp_path / "from-file.db")
    try:
        ingest(store, [fixture])
        from_file = store.list_conversations()
    finally:
        store.close()
    assert [(c["conversation"]["conversation_id"], c["messages"]) for c in over_http] == [
        (c.conversation_id, c.messages) for c in from_file
    ]
