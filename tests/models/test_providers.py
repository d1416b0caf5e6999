"""What each provider sends and how it reads the answer, over real HTTP (SPEC MOD-1, MOD-4)."""

from __future__ import annotations

import pytest

from proctor.errors import ModelError
from proctor.models import PoolLimits, strict_schema
from proctor.models._sse import SseDecoder
from proctor.supervisor._decision import answer_schema
from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply
from tests.models.helpers import ANSWER_SCHEMA, RecordedCalls, ask, complete, fast_caller

OK = {"ok": True}


def test_openai_requests_stream_strict_json_schema_output_with_usage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "key-value")
    with ScriptedModelServer([OK]) as server:
        connection = server.connection().model_copy(update={"api_key_env": "SCRIPTED_KEY"})
        complete(fast_caller(connection), ask(max_output_tokens=300))
        [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer key-value"
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["max_tokens"] == 300
    assert sent.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "strict": True, "schema": strict_schema(ANSWER_SCHEMA)},
    }
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user"]


def test_openai_requests_without_a_key_variable_send_no_authorization() -> None:
    with ScriptedModelServer([OK]) as server:
        complete(fast_caller(server.connection()))
        assert "authorization" not in server.requests[0].headers


def test_anthropic_requests_force_one_tool_whose_input_is_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCRIPTED_ANTHROPIC_KEY", "anthropic-key")
    reply = ScriptedReply(answer := {"decisions": []}, input_tokens=40, output_tokens=7)
    with ScriptedModelServer([reply]) as server:
        connection = server.connection(provider="anthropic").model_copy(
            update={"api_key_env": "SCRIPTED_ANTHROPIC_KEY"}
        )
        request = ask(schema_name="answer", max_output_tokens=500)
        response = complete(fast_caller(connection), request)
        [sent] = server.requests
    assert response.data == answer
    assert (response.input_tokens, response.output_tokens) == (40, 7)
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "anthropic-key"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == "Answer in JSON."
    assert [m["role"] for m in sent.body["messages"]] == ["user"]
    assert sent.body["tools"][0]["name"] == "answer"
    assert sent.body["tools"][0]["input_schema"] == ANSWER_SCHEMA
    assert sent.body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert (sent.body["stream"], sent.body["max_tokens"]) == (True, 500)


def test_anthropic_max_tokens_is_a_length_failure() -> None:
    recorder = RecordedCalls()
    with ScriptedModelServer([ScriptedReply(OK, finish_reason="length")]) as server:
        caller = fast_caller(server.connection(provider="anthropic"), recorder=recorder)
        with pytest.raises(ModelError) as caught:
            complete(caller)
        assert len(server.requests) == 1
    assert caught.value.kind == "length"
    assert recorder.outcomes == ["length"]


def test_anthropic_is_retried_once_on_429_and_capacity_is_enforced_while_streaming() -> None:
    replies = [ScriptedReply(status=429), ScriptedReply(OK, pad_to_bytes=200 * 1024)]
    with ScriptedModelServer(replies) as server:
        caller = fast_caller(
            server.connection(provider="anthropic"), limits=PoolLimits(capacity_kib=100)
        )
        with pytest.raises(ModelError) as caught:
            complete(caller)
        assert len(server.requests) == 2
    assert caught.value.kind == "capacity"


def test_the_supervisor_answer_schema_is_sent_to_anthropic_without_references() -> None:
    with ScriptedModelServer([{"decisions": []}]) as server:
        request = ask(json_schema=answer_schema())
        complete(fast_caller(server.connection(provider="anthropic")), request)
        sent_schema = server.requests[0].body["tools"][0]["input_schema"]
    assert "$defs" not in str(sent_schema) and "$ref" not in str(sent_schema)
    decision = sent_schema["properties"]["decisions"]["items"]
    assert decision["properties"]["title"]["maxLength"] == 200


def test_server_sent_events_survive_lines_split_across_chunks() -> None:
    decoder = SseDecoder()
    stream = b'event: message_start\r\ndata: {"a":\ndata: 1}\r\n\r\n: comment\n\ndata: [DONE]\n\n'
    events = [event for i in range(len(stream)) for event in decoder.feed(stream[i : i + 1])]
    assert [(e.event, e.data) for e in events] == [
        ("message_start", '{"a":\n1}'),
        (None, "[DONE]"),
    ]
