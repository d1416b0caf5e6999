"""ING-7 under bad input: the live intake answers 200 or a 400 naming line and field, never 500.

Requests go through the real API app (in process: Starlette's test client runs its
lifespan, and each request is sent with httpx's ASGI transport in the client's event loop,
one hand-over between threads a request instead of about seven) into a real store. A Proctor JSONL payload is taken whole or refused whole, so for each drawn
payload either every record is stored (status 200) or every record no reader can take
is named by its request line in the refusal (status 400) and nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings

from proctor.api import create_app
from proctor.api.routers.intake import stop_analysis_queue
from proctor.store import open_store
from tests.backends import raw_connection
from tests.fuzz.families import FAMILIES
from tests.fuzz.harness import FUZZ_EXAMPLES, FUZZ_SEED, Case, cases, held_text, seeded

EXAMPLES = FUZZ_EXAMPLES
NDJSON = {"Content-Type": "application/x-ndjson"}
JSON = {"Content-Type": "application/json"}
EVENTS = next(f for f in FAMILIES if f.name == "proctor_jsonl")
EXPORTS = next(f for f in FAMILIES if f.name == "otel")


class _App:
    """Requests to the app in the event loop its lifespan runs in (the test client's): the
    app's real routes, body reading and refusals, an exception raised in it raised here."""

    def __init__(self, client: TestClient) -> None:
        self._portal = client.portal
        self._client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=client.app),
            base_url="http://127.0.0.1",
            headers={"X-Proctor-Client": "tests"},
        )

    def post(self, url: str, *, content: bytes | str, headers: dict[str, str]) -> httpx.Response:
        assert self._portal is not None
        return self._portal.call(partial(self._client.post, url, content=content, headers=headers))

    def close(self) -> None:
        assert self._portal is not None
        self._portal.call(self._client.aclose)


@pytest.fixture(scope="module")
def intake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[_App, Path]]:
    """One app over one store for a module (each drawn payload has its own ids)."""
    database = tmp_path_factory.mktemp("intake") / "proctor.db"
    app = create_app(lambda: open_store(database), token=None)
    client = TestClient(app, base_url="http://127.0.0.1")
    try:
        with client:
            api = _App(client)
            try:
                yield api, database
            finally:
                api.close()
    finally:
        stop_analysis_queue(app)
        app.state.store_holder.close()


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    """Closes what a test opened (a reading connection) when it ends."""
    with ExitStack() as opened:
        yield opened


def _held(database: Path, conversation_ids: list[str]) -> str:
    with raw_connection(database) as reader:
        return held_text(reader, conversation_ids)


def _events(*lines: dict[str, Any] | bytes) -> bytes:
    return b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )


def _message(conversation: str, message_id: str, text: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "conversation_id": conversation,
        "message_id": message_id,
        "role": "user",
        "text": text,
    } | extra


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"k": value}
    return value


# --- the reported cases -------------------------------------------------------------------


def test_a_tool_input_nested_300_deep_is_refused_naming_the_line_and_the_field(
    intake: tuple[_App, Path],
) -> None:
    api, _ = intake
    body = _events(
        _message("deep", "m1", "list the files"),
        {
            "type": "tool_call",
            "conversation_id": "deep",
            "call_id": "c1",
            "name": "Bash",
            "arguments": {"command": _nested(300)},
        },
    )
    answer = api.post("/api/intake/events", content=body, headers=NDJSON)
    assert answer.status_code == 400
    (problem,) = answer.json()["problems"]
    assert problem["line"] == 2
    assert problem["reason"].startswith("field arguments.command.k.k.k")
    assert "nested deeper than 100 levels" in problem["reason"]


def test_nul_and_lone_surrogates_are_stored_as_the_replacement_character(
    intake: tuple[_App, Path],
) -> None:
    # The same on PostgreSQL, whose text refuses NUL (this suite runs on both backends).
    api, database = intake
    body = _events(_message("nul\u0000id", "m\ud800", "before \u0000 after \udfff end"))
    answer = api.post("/api/intake/events", content=body, headers=NDJSON)
    assert answer.status_code == 200, answer.text
    (conversation_id,) = answer.json()["conversation_ids"]
    assert conversation_id == "pj:nul\ufffdid"
    assert "before \ufffd after \ufffd end" in _held(database, [conversation_id])


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type": "message", "conversation_id": 0x8f3a, "text": "x"}', "not valid JSON"),
        (b'{"type": "message", "conversation_id": "c"', "not valid JSON"),
        (b"\xff\xfe{garbage}", "not valid JSON"),
        (b'["a", "list"]', "expected one JSON object per line"),
        (
            json.dumps(_message("c", "m", "hi", role=["user"])).encode(),
            'field "role": expected one of',
        ),
        (
            json.dumps(_message("c", "m", 12)).encode(),
            'field "text": expected a string',
        ),
        (
            json.dumps(
                _message("c", "m", "hi", role="assistant", usage={"input_tokens": 2**70})
            ).encode(),
            'field "usage.input_tokens": expected a number <= 2147483647',
        ),
    ],
    ids=["hex", "truncated", "garbage", "array", "list-role", "number-text", "huge-count"],
)
def test_a_bad_line_is_refused_with_its_line_number_and_nothing_is_stored(
    intake: tuple[_App, Path], line: bytes, reason: str
) -> None:
    api, database = intake
    body = _events(_message("refused-whole", "m0", "kept out"), line)
    answer = api.post("/api/intake/events", content=body, headers=NDJSON)
    assert answer.status_code == 400, answer.text
    problems = answer.json()["problems"]
    assert [p["line"] for p in problems] == [2]
    assert problems[0]["reason"].startswith(reason)
    store = open_store(database)
    try:
        assert store.existing_conversation_ids(["pj:refused-whole"]) == set()
    finally:
        store.close()


def test_nan_a_byte_order_mark_and_crlf_are_read_by_the_one_json_rule(
    intake: tuple[_App, Path],
) -> None:
    api, database = intake
    body = b"\xef\xbb\xbf" + _events(
        _message("rule", "m1", "first"),
        b'{"type": "tool_call", "conversation_id": "rule", "call_id": "c1", "name": "calc",'
        b' "arguments": {"x": NaN, "big": 123456789012345678901234567890}}',
    ).replace(b"\n", b"\r\n")
    answer = api.post("/api/intake/events", content=body, headers=NDJSON)
    assert answer.status_code == 200, answer.text
    store = open_store(database)
    try:
        (call,) = store.transcript("pj:rule").tool_calls
    finally:
        store.close()
    assert call.arguments["x"] == "NaN"


def test_a_late_result_finds_its_call_when_the_ids_are_longer_than_a_stored_id(
    intake: tuple[_App, Path],
) -> None:
    api, database = intake
    conversation, call = "c" * 256, "k" * 256
    first = _events(
        _message(conversation, "m1", "run it"),
        {"type": "tool_call", "conversation_id": conversation, "call_id": call, "name": "Bash"},
    )
    assert api.post("/api/intake/events", content=first, headers=NDJSON).status_code == 200
    result = {"type": "tool_result", "conversation_id": conversation, "call_id": call}
    answer = api.post(
        "/api/intake/events", content=_events(result | {"output": "done"}), headers=NDJSON
    )
    assert answer.status_code == 200, answer.text
    (conversation_id,) = answer.json()["conversation_ids"]
    assert len(conversation_id) == 255
    assert "done" in _held(database, [conversation_id])


def test_an_otlp_export_nested_past_the_limit_is_refused_naming_the_field(
    intake: tuple[_App, Path],
) -> None:
    api, _ = intake
    export = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": _nested(120)}]}
    answer = api.post("/v1/traces", content=json.dumps(export), headers=JSON)
    assert answer.status_code == 400, answer.text
    assert "nested deeper than 100 levels" in answer.json()["problems"][0]["reason"]


# --- fuzzing -------------------------------------------------------------------------------


def _fuzz_settings() -> settings:
    return settings(
        max_examples=EXAMPLES,
        derandomize=FUZZ_SEED is None,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def test_any_events_payload_is_stored_whole_or_refused_naming_every_bad_line(
    intake: tuple[_App, Path], stack: ExitStack
) -> None:
    api, database = intake
    reader = stack.enter_context(raw_connection(database))

    @_fuzz_settings()
    @given(case=cases(EVENTS))
    @seeded
    def one_payload(case: Case) -> None:
        ((name, body),) = case.files.items()
        answer = api.post("/api/intake/events", content=body, headers=NDJSON)
        assert answer.status_code in (200, 400), answer.text
        planted = [p for p in case.planted if p.file == name]
        if answer.status_code == 400:
            named = {p["line"] for p in answer.json()["problems"]}
            for record in planted:
                if record.must_report and len(named) < 50:
                    assert record.line in named, (record, answer.json())
            return
        assert not any(record.must_report for record in planted), answer.json()
        held = held_text(reader, answer.json()["conversation_ids"])
        for record in planted:
            if record.marker is not None and record.marker_intact:
                assert record.marker in held, (record, answer.json())

    one_payload()


def test_any_otlp_export_is_stored_or_refused_never_a_server_error(
    intake: tuple[_App, Path], stack: ExitStack
) -> None:
    api, database = intake
    reader = stack.enter_context(raw_connection(database))

    @_fuzz_settings()
    @given(case=cases(EXPORTS))
    @seeded
    def one_export(case: Case) -> None:
        ((name, body),) = case.files.items()
        for record in (p for p in case.planted if p.file == name):
            line = body.split(b"\n")[record.line - 1] if record.line else body
            answer = api.post("/v1/traces", content=line, headers=JSON)
            assert answer.status_code in (200, 400), answer.text
            if answer.status_code == 200 and record.mutation is None and record.marker:
                conversation_id = _export_conversation(record.marker)
                assert record.marker in held_text(reader, [conversation_id])

    one_export()


def _export_conversation(marker: str) -> str:
    """The conversation of an export drawn by ``families._otel`` (``mk<nonce>x<n>q``)."""
    nonce, number = marker.removeprefix("mk").removesuffix("q").split("x")
    return f"otel:thread-{nonce}-{int(number) - 1}"


def test_a_payload_the_intake_fails_to_assemble_is_refused_not_a_server_error(
    intake: tuple[_App, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The last line of defence: a bug met by valid lines is answered 400, naming it.
    import proctor.ingest._intake_payload as payload

    def fails(*args: Any) -> Any:
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr(payload, "_assemble", fails)
    api, _ = intake
    answer = api.post(
        "/api/intake/events", content=_events(_message("c", "m", "hi")), headers=NDJSON
    )
    assert answer.status_code == 400
    assert answer.json()["problems"][0]["reason"].startswith(
        "the events could not be assembled (TypeError: unhashable type: 'list')"
    )
