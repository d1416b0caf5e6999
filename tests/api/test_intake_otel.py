"""End to end (ING-7): a real OpenTelemetry instrumentation exports to Proctor and is supervised.

``opentelemetry-instrumentation-openai-v2`` instruments the ``openai`` SDK, which talks to
the scripted OpenAI-compatible server. The SDK's own OTLP/HTTP exporter (protobuf, its
default) sends every span as it ends to a real ``proctor serve`` on loopback, so one
agent run arrives as several exports of one trace. The same real spans, converted to
OTLP/JSON, prove the JSON encoding too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from proctor._util.clock import utcnow
from proctor.models import set_default_connection
from proctor.store import SqlStore, open_store
from proctor.supervision import SessionSettings, enable_supervision, resolve_target
from proctor.testing.scripted_model import ScriptedModelServer
from tests.api.conftest import Api
from tests.backends import database_env, job_worker, until
from tests.loopback import free_port
from tests.server_zygote import forked_serving

ASK = "Run the cart tests and tell me what fails."
FIRST_REPLY = "I will run the cart tests."
SECOND_REPLY = "One cart test fails: test_total rounds the wrong way."
TOOL_OUTPUT = "FAILED tests/test_cart.py::test_total - assert 10.0 == 10.01"


class RecordingExporter(OTLPSpanExporter):
    """The SDK's OTLP/HTTP exporter, remembering whether each export succeeded."""

    def __init__(self, endpoint: str) -> None:
        super().__init__(endpoint=endpoint, timeout=30)
        self.results: list[SpanExportResult] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        self.results.append(result)
        return result


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[TracerProvider]:
    """A tracer provider the openai SDK is instrumented with, content capture on.

    The instrumentation imports the SDK, which takes more than a second: the import is
    made here, not when the module is collected (by every worker, in both passes)."""
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    traces = TracerProvider()
    instrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    instrumentor.instrument(tracer_provider=traces)
    try:
        yield traces
    finally:
        instrumentor.uninstrument()
        traces.shutdown()


def run_agent(traces: TracerProvider, agent_url: str, between_turns: Any = None) -> tuple[str, str]:
    """Two model calls of one agent run (one trace); returns the trace id and the run's span."""
    import openai  # imported by ``provider`` already

    client = openai.OpenAI(base_url=agent_url, api_key="test-key", max_retries=0)
    tracer = traces.get_tracer("shop-agent")
    history: list[Any] = [{"role": "user", "content": ASK}]
    with tracer.start_as_current_span("shop-agent run") as run:
        first = client.chat.completions.create(model="scripted", messages=history)
        # The scripted server answers text only, so the agent's tool call goes into the
        # history as its own assistant message after the reply it recorded.
        history.append({"role": "assistant", "content": first.choices[0].message.content})
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_pytest",
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "arguments": json.dumps({"command": "pytest -q tests/test_cart.py"}),
                        },
                    }
                ],
            }
        )
        history.append({"role": "tool", "tool_call_id": "call_pytest", "content": TOOL_OUTPUT})
        if between_turns is not None:
            between_turns(format(run.get_span_context().trace_id, "032x"))
        client.chat.completions.create(model="scripted", messages=history)
        context = run.get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def agent_server() -> ScriptedModelServer:
    return ScriptedModelServer([FIRST_REPLY, SECOND_REPLY])


def assert_conversation(store: SqlStore, conversation_id: str) -> None:
    transcript = store.transcript(conversation_id)
    texts = [(m.role, m.text) for m in transcript.messages]
    assert ("user", ASK) in texts
    assert ("assistant", FIRST_REPLY) in texts
    assert ("assistant", SECOND_REPLY) in texts
    assert len(texts) == len(set(texts)), f"a message was stored twice: {texts}"
    [call] = transcript.tool_calls
    assert call.name == "bash"
    assert call.arguments == {"command": "pytest -q tests/test_cart.py"}
    assert call.result_text == TOOL_OUTPUT
    assert len(store.list_conversations()) == 1


@pytest.mark.slow  # a real `proctor serve` process; the same spans in process: the tests below
def test_a_real_instrumented_agent_is_stored_and_supervised_live_over_otlp_protobuf(
    provider: TracerProvider, proctor_home: Path
) -> None:
    proctor_home.mkdir(parents=True, exist_ok=True)
    database = proctor_home / "proctor.db"
    open_store(database).close()
    port = free_port()
    exporter = RecordingExporter(f"http://127.0.0.1:{port}/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    command = ["serve", "--port", str(port)]
    env = {
        "PROCTOR_HOME": str(proctor_home),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": "",
        **database_env(proctor_home),
    }
    supervisor = ScriptedModelServer(responder=lambda _request: {"decisions": []})

    def enable_live_supervision(trace_id: str) -> None:
        store = open_store(database)
        try:
            store.save_connection(supervisor.connection("scripted"))
            set_default_connection(store, "scripted")
            target = resolve_target(store, f"otel:{trace_id}")
            enable_supervision(store, target, SessionSettings(throttle_seconds=0), now=utcnow())
        finally:
            store.close()

    with (
        forked_serving([*command, "--no-heartbeat"], env, port),
        job_worker(env),
        agent_server() as agent,
        supervisor,
    ):
        trace_id, _ = run_agent(provider, agent.url, between_turns=enable_live_supervision)
        assert exporter.results == [SpanExportResult.SUCCESS] * 3
        [analysis] = until(lambda: supervisor.requests)  # at once on SQLite; a worker on PG
        assert SECOND_REPLY in json.dumps(analysis.body)
        store = open_store(database)
        try:
            assert_conversation(store, f"otel:{trace_id}")
            [session] = store.supervision_sessions(enabled_only=True)
            assert session.last_run_at is not None
        finally:
            store.close()


def test_the_same_real_spans_as_otlp_json_make_the_same_conversation(
    provider: TracerProvider, tmp_path: Path
) -> None:
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with agent_server() as agent:
        trace_id, _ = run_agent(provider, agent.url)
    spans = memory.get_finished_spans()
    assert len(spans) == 3
    document = MessageToDict(encode_spans(spans))
    database = tmp_path / "proctor.db"
    api = Api(database)
    try:
        # Sent as the exporter would, one span per export, in the order they ended.
        for span in spans:
            response = api.post("/v1/traces", json=MessageToDict(encode_spans([span])))
            assert response.status_code == 200, response.text
        assert response.json() == {
            "partialSuccess": {
                "rejectedSpans": "1",
                "errorMessage": "1 of 1 span(s) carry no GenAI or OpenInference data and were "
                "not stored (they are not an error)",
            }
        }
        # All at once (and again): the run's span now has its GenAI children beside it.
        again = api.post("/v1/traces", json=document)
        assert (again.status_code, again.json()) == (200, {})
    finally:
        api.close()
    store = open_store(database)
    try:
        assert_conversation(store, f"otel:{trace_id}")
    finally:
        store.close()


def test_a_real_protobuf_export_is_answered_with_a_protobuf_response(
    provider: TracerProvider, tmp_path: Path
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with agent_server() as agent:
        run_agent(provider, agent.url)
    *model_calls, agent_run = memory.get_finished_spans()
    protobuf = {"Content-Type": "application/x-protobuf"}
    api = Api(tmp_path / "proctor.db")
    try:
        alone = api.post(
            "/v1/traces", content=encode_spans([agent_run]).SerializeToString(), headers=protobuf
        )
        response = api.post(
            "/v1/traces", content=encode_spans(model_calls).SerializeToString(), headers=protobuf
        )
        damaged = api.post(
            "/v1/traces",
            content=b"\xff\xff\xff",
            headers={"Content-Type": "application/x-protobuf"},
        )
    finally:
        api.close()
    assert (alone.status_code, alone.headers["content-type"]) == (200, "application/x-protobuf")
    dropped = ExportTraceServiceResponse.FromString(alone.content).partial_success
    assert dropped.rejected_spans == 1 and "no GenAI" in dropped.error_message
    assert response.status_code == 200
    assert not ExportTraceServiceResponse.FromString(response.content).HasField("partial_success")
    assert damaged.status_code == 400
    assert "ExportTraceServiceRequest" in damaged.json()["detail"]
