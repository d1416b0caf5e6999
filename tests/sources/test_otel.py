"""OpenTelemetry GenAI and OpenInference spans as OTLP JSON (SPEC ING-1, ING-2, ING-3, ING-5, ING-6, ING-9).

Expected counts are derived here from the fixture files themselves (the last model
call's history is the whole conversation; spans with an error status are failures …),
never copied from the adapter's output.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from proctor.sources.otel._otlp import decode_value, nanos_to_time, normalise_id
from proctor.transcript import ConversationBundle, Usage
from tests.sources.helpers import ReadResult, detected_format, read

FIXTURES = Path(__file__).parent / "fixtures" / "otel"
CHAT = FIXTURES / "chat_with_tools.json"
CHAT_BASE64 = FIXTURES / "chat_with_tools_base64_ids.json"
OPENINFERENCE = FIXTURES / "openinference_agent.json"
LOG_EVENTS = FIXTURES / "deprecated_events_logs.json"
COLLECTOR = FIXTURES / "collector_export.jsonl"
SUBAGENTS = FIXTURES / "subagents_trace.json"
ALL_FIXTURES = [CHAT, CHAT_BASE64, OPENINFERENCE, LOG_EVENTS, COLLECTOR, SUBAGENTS]


# --- reading the fixtures independently of the adapter --------------------------------------


def plain(value: dict[str, Any]) -> Any:
    """An OTLP typed value as Python (enough of the encoding for these fixtures)."""
    (kind, inner), *_ = value.items()
    if kind == "intValue":
        return int(inner)
    if kind == "arrayValue":
        return [plain(v) for v in inner.get("values", [])]
    if kind == "kvlistValue":
        return {kv["key"]: plain(kv["value"]) for kv in inner.get("values", [])}
    return inner


def spans_of(path: Path) -> list[dict[str, Any]]:
    """Every span of every export in ``path``, with ``attrs`` holding plain attributes."""
    text = path.read_text()
    documents = [json.loads(text)] if path.suffix == ".json" else []
    for line in text.splitlines() if path.suffix == ".jsonl" else []:
        try:
            documents.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    found = []
    for document in documents:
        for resource in document.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span = dict(span)
                    span["attrs"] = {
                        a["key"]: plain(a["value"]) for a in span.get("attributes", [])
                    }
                    found.append(span)
    return found


def log_records_of(path: Path) -> list[dict[str, Any]]:
    """Every log record of ``path`` with ``event`` (its event name) and plain ``body``."""
    records = []
    for resource in json.loads(path.read_text())["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                attrs = {a["key"]: plain(a["value"]) for a in record.get("attributes", [])}
                records.append(
                    {
                        **record,
                        "event": record.get("eventName") or attrs.get("event.name"),
                        "body": plain(record["body"]),
                    }
                )
    return records


def chat_spans(path: Path) -> list[dict[str, Any]]:
    """Model-call spans, in start order."""
    spans = [s for s in spans_of(path) if s["attrs"].get("gen_ai.operation.name") == "chat"]
    return sorted(spans, key=lambda s: int(s["startTimeUnixNano"]))


def is_message(message: dict[str, Any]) -> bool:
    """True for messages Proctor keeps as messages (tool results become tool call results)."""
    return any(p["type"] in ("text", "tool_call", "blob") for p in message["parts"])


def full_history(span: dict[str, Any]) -> list[dict[str, Any]]:
    """A model call's history plus its replies: the whole conversation so far."""
    attrs = span["attrs"]
    return json.loads(attrs["gen_ai.input.messages"]) + json.loads(attrs["gen_ai.output.messages"])


def error_spans(path: Path) -> list[dict[str, Any]]:
    """Spans whose status is ERROR (code 2, or its enum name)."""
    return [
        s for s in spans_of(path) if s.get("status", {}).get("code") in (2, "STATUS_CODE_ERROR")
    ]


def texts(result: ReadResult) -> str:
    """Everything the adapter produced, as one string to search."""
    return repr(result.bundles)


def only(result: ReadResult) -> ConversationBundle:
    """The single bundle of a result."""
    assert len(result.bundles) == 1
    return result.bundles[0]


# --- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_fixtures_are_detected_as_otel(path: Path) -> None:
    assert detected_format(path) == "otel"


@pytest.mark.shared
def test_the_official_otlp_examples_are_recognised(transcripts_dir: Path) -> None:
    examples = sorted((transcripts_dir / "otel-genai" / "otlp-json-examples").glob("*.json"))
    assert [p.name for p in examples] == ["events.json", "logs.json", "trace.json"]

    assert {detected_format(p) for p in examples} == {"otel"}


@pytest.mark.shared
def test_generic_otlp_exports_import_no_conversation_and_no_error(transcripts_dir: Path) -> None:
    for path in (transcripts_dir / "otel-genai" / "otlp-json-examples").glob("*.json"):
        result = read(path)

        assert result.bundles == []
        assert result.errors() == []
        assert [i.severity for i in result.issues] == ["warning"]
        assert "no GenAI or OpenInference" in result.issues[0].reason


@pytest.mark.shared
@pytest.mark.slow
def test_no_other_shared_file_is_claimed(transcripts_dir: Path, datasets_dir: Path) -> None:
    examples = transcripts_dir / "otel-genai" / "otlp-json-examples"
    files = [
        p
        for folder in (transcripts_dir, datasets_dir)
        for p in folder.rglob("*")
        if p.is_file() and p.parent != examples
    ]

    assert [p for p in files if detected_format(p) == "otel"] == []


def test_json_files_that_are_not_exports_are_not_claimed(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"resourceMetrics": [], "spans": [{"traceId": "x"}]}))

    assert detected_format(path) != "otel"


# --- a multi-turn chat with tools -------------------------------------------------------------


def test_history_repeated_by_every_model_call_is_imported_once() -> None:
    spans = chat_spans(CHAT)
    last = full_history(spans[-1])
    repeated = sum(len(full_history(span)) for span in spans)
    assert repeated > len(last)  # the fixture really repeats its history

    bundle = only(read(CHAT))

    # The last call's history is the whole conversation; the system instructions come on
    # top, and tool results belong to their tool calls rather than being messages.
    assert len(bundle.messages) == 1 + sum(1 for m in last if is_message(m))
    assert [m.role for m in bundle.messages] == ["system"] + [
        m["role"] for m in last if is_message(m)
    ]
    assert len({m.source_id for m in bundle.messages}) == len(bundle.messages)


def test_each_reply_carries_its_model_calls_usage_once() -> None:
    spans = chat_spans(CHAT)
    bundle = only(read(CHAT))
    with_usage = [m for m in bundle.messages if m.usage is not None]

    assert len(with_usage) == len(spans)
    total = sum((m.usage for m in with_usage if m.usage is not None), Usage())
    assert total.output_tokens == sum(s["attrs"]["gen_ai.usage.output_tokens"] for s in spans)
    assert total.reasoning_tokens == sum(
        s["attrs"].get("gen_ai.usage.reasoning.output_tokens", 0) for s in spans
    )
    assert total.cache_read_tokens == sum(
        s["attrs"].get("gen_ai.usage.cache_read.input_tokens", 0) for s in spans
    )
    # GenAI input counts include cached tokens; Usage keeps them apart and adds them back.
    assert total.input_tokens + total.cache_read_tokens + total.cache_write_tokens == sum(
        s["attrs"]["gen_ai.usage.input_tokens"] for s in spans
    )


def test_reasoning_parts_are_dropped_but_visible_text_is_kept() -> None:
    reasoning, visible = [], []
    for span in chat_spans(CHAT):
        for message in full_history(span):
            for part in message["parts"]:
                if part["type"] == "reasoning":
                    reasoning.append(part["content"])
                elif part["type"] == "text":
                    visible.append(part["content"])
    assert reasoning

    result = read(CHAT)

    assert not any(text in texts(result) for text in reasoning)
    assert all(text in texts(result) for text in visible)


def test_inline_images_become_placeholders_with_type_and_size() -> None:
    blob = next(
        part
        for span in chat_spans(CHAT)
        for message in full_history(span)
        for part in message["parts"]
        if part["type"] == "blob"
    )
    size = len(base64.b64decode(blob["content"]))

    result = read(CHAT)

    assert f"[image: {blob['mime_type']}, {size} bytes]" in texts(result)
    assert blob["content"][:64] not in texts(result)


def test_tool_calls_are_paired_with_their_execution_spans() -> None:
    tool_spans = {
        s["attrs"]["gen_ai.tool.call.id"]: s
        for s in spans_of(CHAT)
        if s["attrs"].get("gen_ai.operation.name") == "execute_tool"
    }

    bundle = only(read(CHAT))
    calls = {c.call_id: c for c in bundle.tool_calls}

    assert set(calls) == set(tool_spans)
    for call_id, span in tool_spans.items():
        call = calls[call_id]
        assert call.source_id == f"otel:conv_5f2c1a8e:call:{call_id}"
        assert call.name == span["attrs"]["gen_ai.tool.name"]
        assert call.arguments == json.loads(span["attrs"]["gen_ai.tool.call.arguments"])
        assert call.message_source_id in {m.source_id for m in bundle.messages}
        if span.get("status", {}).get("code") == 2:
            assert call.status == "error"
            assert span["status"]["message"] in (call.result_text or "")
        else:
            assert call.status == "ok"
            assert call.result_text == span["attrs"]["gen_ai.tool.call.result"]


def test_failed_spans_become_error_task_events() -> None:
    failed = error_spans(CHAT)
    assert failed

    bundle = only(read(CHAT))
    errors = [e for e in bundle.task_events if e.kind == "error"]

    assert len(errors) == len(failed)
    assert {e.attributes["span_id"] for e in errors} == {s["spanId"] for s in failed}
    assert all(s["status"]["message"] in e.text for s, e in zip(failed, errors, strict=True))


def test_the_agent_span_becomes_a_task() -> None:
    agent = next(
        s for s in spans_of(CHAT) if s["attrs"].get("gen_ai.operation.name") == "invoke_agent"
    )

    bundle = only(read(CHAT))

    assert [(t.task_id, t.title, t.status) for t in bundle.tasks] == [
        (
            f"otel:{agent['traceId']}:{agent['spanId']}",
            agent["attrs"]["gen_ai.agent.name"],
            "completed",
        )
    ]


def test_the_conversation_is_keyed_by_the_genai_conversation_id() -> None:
    spans = spans_of(CHAT)
    conversation_id = spans[0]["attrs"]["gen_ai.conversation.id"]
    starts = [nanos(s["startTimeUnixNano"]) for s in spans]
    ends = [nanos(s["endTimeUnixNano"]) for s in spans]

    conversation = only(read(CHAT)).conversation

    assert conversation.conversation_id == f"otel:{conversation_id}"
    assert conversation.external_id == conversation_id
    assert conversation.format == "otel"
    assert conversation.project_hint == "trip-planner"
    assert (conversation.started_at, conversation.ended_at) == (min(starts), max(ends))
    assert all(
        m.source_id.startswith(f"otel:{conversation_id}:msg:") for m in only(read(CHAT)).messages
    )


def nanos(value: str) -> datetime:
    """An aware UTC time from a ``*UnixNano`` string (whole microseconds here)."""
    return datetime.fromtimestamp(int(value) // 1000 / 1_000_000, UTC)


def test_reading_twice_gives_identical_bundles() -> None:
    assert read(CHAT).bundles == read(CHAT).bundles


def test_base64_ids_give_the_same_conversation_as_hex_ids() -> None:
    hex_span = spans_of(CHAT)[0]
    base64_span = spans_of(CHAT_BASE64)[0]
    assert hex_span["traceId"] != base64_span["traceId"]
    assert base64.b64decode(base64_span["traceId"]).hex() == hex_span["traceId"]

    hex_bundle, base64_bundle = only(read(CHAT)), only(read(CHAT_BASE64))

    assert base64_bundle.conversation == hex_bundle.conversation
    assert base64_bundle.messages == hex_bundle.messages
    assert base64_bundle.tool_calls == hex_bundle.tool_calls
    assert base64_bundle.tasks == hex_bundle.tasks
    assert base64_bundle.task_events == hex_bundle.task_events


# --- OpenInference ----------------------------------------------------------------------------


def regrouped(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Flattened ``<prefix><i>.<rest>`` keys grouped by index."""
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        match = re.match(rf"{re.escape(prefix)}(\d+)\.(.+)", key)
        if match:
            groups.setdefault(int(match[1]), {})[match[2]] = value
    return groups


def llm_spans(path: Path) -> list[dict[str, Any]]:
    """OpenInference LLM spans in start order."""
    spans = [s for s in spans_of(path) if s["attrs"].get("openinference.span.kind") == "LLM"]
    return sorted(spans, key=lambda s: int(s["startTimeUnixNano"]))


def test_openinference_flattened_messages_are_regrouped_despite_gaps() -> None:
    last = llm_spans(OPENINFERENCE)[-1]["attrs"]
    inputs = regrouped(last, "llm.input_messages.")
    outputs = regrouped(last, "llm.output_messages.")
    assert sorted(inputs) != list(range(len(inputs)))  # the numbering has a gap
    expected = [g["message.role"] for _, g in sorted(inputs.items()) if g["message.role"] != "tool"]
    expected += [g["message.role"] for _, g in sorted(outputs.items())]

    bundle = only(read(OPENINFERENCE))

    assert [m.role for m in bundle.messages] == expected
    assert bundle.conversation.conversation_id == f"otel:{last['session.id']}"


def test_openinference_reasoning_contents_and_signatures_are_dropped() -> None:
    hidden = [
        value
        for span in llm_spans(OPENINFERENCE)
        for key, value in span["attrs"].items()
        if key.endswith(("signature", ".data", "encrypted_content"))
        or (
            key.endswith("message_content.text")
            and span["attrs"].get(key.replace(".text", ".type")) == "reasoning"
        )
    ]
    assert len(hidden) >= 3

    result = read(OPENINFERENCE)

    assert not any(value in texts(result) for value in hidden)


def test_openinference_tool_span_completes_the_requested_call() -> None:
    tool = next(
        s for s in spans_of(OPENINFERENCE) if s["attrs"].get("openinference.span.kind") == "TOOL"
    )
    requested = regrouped(llm_spans(OPENINFERENCE)[0]["attrs"], "llm.output_messages.")[0]

    bundle = only(read(OPENINFERENCE))

    assert len(bundle.tool_calls) == 1
    call = bundle.tool_calls[0]
    assert (
        call.call_id == requested["message.tool_calls.0.tool_call.id"] == tool["attrs"]["tool.id"]
    )
    assert call.name == tool["attrs"]["tool.name"]
    assert call.arguments == json.loads(tool["attrs"]["input.value"])
    assert call.result_text == tool["attrs"]["output.value"]
    assert call.status == "ok"


def test_openinference_token_counts_become_usage() -> None:
    first = llm_spans(OPENINFERENCE)[0]["attrs"]

    reply = next(m for m in only(read(OPENINFERENCE)).messages if m.usage is not None)

    assert reply.usage == Usage(
        input_tokens=first["llm.token_count.prompt"]
        - first["llm.token_count.prompt_details.cache_read"]
        - first["llm.token_count.prompt_details.cache_write"],
        output_tokens=first["llm.token_count.completion"],
        cache_read_tokens=first["llm.token_count.prompt_details.cache_read"],
        cache_write_tokens=first["llm.token_count.prompt_details.cache_write"],
        reasoning_tokens=first["llm.token_count.completion_details.reasoning"],
    )
    assert reply.model == first["llm.model_name"]


def test_openinference_image_urls_become_placeholders() -> None:
    url = next(
        v for k, v in llm_spans(OPENINFERENCE)[0]["attrs"].items() if k.endswith("image.image.url")
    )
    mime_type = url[5 : url.index(";")]
    size = len(base64.b64decode(url.split(",", 1)[1]))

    assert f"[image: {mime_type}, {size} bytes]" in texts(read(OPENINFERENCE))


# --- deprecated events in a log export --------------------------------------------------------


def test_deprecated_message_events_import_each_message_once() -> None:
    records = log_records_of(LOG_EVENTS)
    by_span: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_span.setdefault(record["spanId"], []).append(record)
    last = max(by_span.values(), key=len)  # the last call repeats the whole history
    expected = [r["event"] for r in last if r["event"] != "gen_ai.tool.message"]

    bundle = only(read(LOG_EVENTS))

    assert len(bundle.messages) == len(expected)
    assert bundle.conversation.conversation_id == f"otel:{records[0]['traceId']}"
    tool_message = next(r for r in last if r["event"] == "gen_ai.tool.message")
    assert [(c.call_id, c.result_text) for c in bundle.tool_calls] == [
        (tool_message["body"]["id"], tool_message["body"]["content"])
    ]
    final = next(r for r in reversed(last) if r["event"] == "gen_ai.choice")
    assert bundle.messages[-1].text == final["body"]["message"]["content"]


# --- the collector's JSON Lines file ----------------------------------------------------------


def test_collector_json_lines_join_traces_of_one_conversation() -> None:
    spans = spans_of(COLLECTOR)
    conversation_ids = {s["attrs"]["gen_ai.conversation.id"] for s in spans}
    traces = {s["traceId"] for s in spans}
    assert len(conversation_ids) == 1 and len(traces) > 1
    last = max(
        (s for s in spans if "gen_ai.input.messages" in s["attrs"]),
        key=lambda s: int(s["startTimeUnixNano"]),
    )

    bundle = only(read(COLLECTOR))

    # Turn one was recorded with legacy gen_ai.prompt.<i> attributes and is repeated
    # later in the current format: it is still imported once.
    assert len(bundle.messages) == sum(1 for m in full_history(last) if is_message(m))
    assert bundle.conversation.conversation_id == f"otel:{conversation_ids.pop()}"


def test_collector_bad_lines_are_reported_and_the_rest_imported() -> None:
    lines = COLLECTOR.read_text().splitlines()
    broken = [n for n, line in enumerate(lines, 1) if not is_json(line)]
    metrics = [
        n
        for n, line in enumerate(lines, 1)
        if is_json(line) and "resourceMetrics" in json.loads(line)
    ]

    result = read(COLLECTOR)

    assert [i.line for i in result.errors()] == broken
    assert [i.line for i in result.issues if i.severity == "warning"] == metrics
    assert result.bundles


def is_json(line: str) -> bool:
    """True when the line parses."""
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def test_a_tool_span_without_call_id_pairs_with_the_request_by_name() -> None:
    tool = next(
        s for s in spans_of(COLLECTOR) if s["attrs"].get("gen_ai.operation.name") == "execute_tool"
    )
    assert "gen_ai.tool.call.id" not in tool["attrs"]

    bundle = only(read(COLLECTOR))

    assert len(bundle.tool_calls) == 1
    call = bundle.tool_calls[0]
    assert call.name == tool["attrs"]["gen_ai.tool.name"]
    assert call.result_text == tool["attrs"]["gen_ai.tool.call.result"]
    assert call.attributes["span_id"] == tool["spanId"]
    assert call.message_source_id is not None


def test_an_export_written_twice_is_imported_once(tmp_path: Path) -> None:
    export = json.dumps(json.loads(CHAT.read_text()))
    path = tmp_path / "twice.jsonl"
    path.write_text(f"{export}\n{export}\n")

    assert read(path).bundles[0].messages == only(read(CHAT)).messages
    assert read(path).bundles[0].tasks == only(read(CHAT)).tasks


# --- sub-agents -------------------------------------------------------------------------------


def agents_of(path: Path) -> list[dict[str, Any]]:
    """invoke_agent spans."""
    return [s for s in spans_of(path) if s["attrs"].get("gen_ai.operation.name") == "invoke_agent"]


def descendants(spans: list[dict[str, Any]], root: dict[str, Any]) -> list[dict[str, Any]]:
    """Spans below ``root``."""
    found, frontier = [], {root["spanId"]}
    while frontier:
        children = [s for s in spans if s.get("parentSpanId") in frontier]
        found += children
        frontier = {s["spanId"] for s in children}
    return found


def test_an_agent_invoked_under_another_agent_becomes_a_child_conversation() -> None:
    spans = spans_of(SUBAGENTS)
    scout = next(
        s for s in agents_of(SUBAGENTS) if s["attrs"]["gen_ai.agent.name"] == "Literature scout"
    )
    spawning_tool = next(s for s in spans if s["spanId"] == scout["parentSpanId"])
    scout_chats = [
        s for s in descendants(spans, scout) if s["attrs"].get("gen_ai.operation.name") == "chat"
    ]
    final = json.loads(
        max(scout_chats, key=lambda s: int(s["startTimeUnixNano"]))["attrs"][
            "gen_ai.output.messages"
        ]
    )

    result = read(SUBAGENTS)
    main, child = result.bundles

    assert child.conversation.kind == "subagent"
    assert child.conversation.conversation_id == f"{main.conversation_id}:agent:{scout['spanId']}"
    assert child.conversation.parent_conversation_id == main.conversation_id
    run = child.subagent_run
    assert run is not None
    assert (
        run.parent_tool_call_id
        == f"{main.conversation_id}:call:{spawning_tool['attrs']['gen_ai.tool.call.id']}"
    )
    assert run.parent_tool_call_id in {c.source_id for c in main.tool_calls}
    assert run.agent_type == scout["attrs"]["gen_ai.agent.name"]
    assert run.summary == final[0]["parts"][0]["content"]
    assert run.rounds == len(scout_chats)
    assert run.total_tokens == sum(
        s["attrs"]["gen_ai.usage.input_tokens"] + s["attrs"]["gen_ai.usage.output_tokens"]
        for s in scout_chats
    )
    assert run.tool_uses == sum(
        1
        for s in descendants(spans, scout)
        if s["attrs"].get("gen_ai.operation.name") == "execute_tool"
    )
    assert run.stop_kind == "completed"
    # The sub-agent's messages are its own, not the parent's.
    assert {m.source_id for m in main.messages}.isdisjoint(m.source_id for m in child.messages)


def test_a_subagent_that_recorded_no_messages_is_kept_on_the_parent() -> None:
    spans = spans_of(SUBAGENTS)
    quiet = [
        agent
        for agent in agents_of(SUBAGENTS)
        if agent.get("parentSpanId")
        and not any("gen_ai.input.messages" in s["attrs"] for s in descendants(spans, agent))
    ]
    assert len(quiet) == 1

    result = read(SUBAGENTS)
    main = result.bundles[0]

    assert len(result.bundles) == len(agents_of(SUBAGENTS)) - len(quiet)
    assert [a["agent_id"] for a in main.conversation.attributes["subagents"]] == [
        quiet[0]["attrs"]["gen_ai.agent.id"]
    ]
    task = next(t for t in main.tasks if t.task_id.endswith(quiet[0]["spanId"]))
    assert task.status == "failed"


def test_every_failed_span_is_an_error_event_in_its_conversation() -> None:
    failed = error_spans(SUBAGENTS)

    result = read(SUBAGENTS)
    errors = [e for b in result.bundles for e in b.task_events if e.kind == "error"]

    assert sorted(e.attributes["span_id"] for e in errors) == sorted(s["spanId"] for s in failed)


# --- bad input --------------------------------------------------------------------------------


def test_bad_records_are_reported_by_path_and_the_rest_is_imported(tmp_path: Path) -> None:
    document = json.loads(CHAT.read_text())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["attributes"].append(
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "many"}}
    )
    spans[1]["attributes"] = [
        {"key": "gen_ai.input.messages", "value": {"stringValue": "[{not json"}}
        if a["key"] == "gen_ai.input.messages"
        else a
        for a in spans[1]["attributes"]
    ]
    spans.append({"traceId": "zz-not-an-id", "spanId": "0011223344556677", "name": "bad"})
    spans.append("not a span")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))

    result = read(path)
    reasons = [str(issue) for issue in result.issues] + [
        str(i) for b in result.bundles for i in b.issues
    ]

    where = "resourceSpans[0].scopeSpans[0].spans"
    assert any(f'{where}[0]: attribute "gen_ai.usage.input_tokens"' in r for r in reasons)
    assert any('id "zz-not-an-id" is neither hex nor base64; span skipped' in r for r in reasons)
    assert any(
        f"{where}[{len(spans) - 1}]: expected a span object; span skipped" in r for r in reasons
    )
    assert any('attribute "gen_ai.input.messages": not valid JSON' in r for r in reasons)
    # The later calls repeat the history the broken span lost, so nothing is missing.
    assert len(only(result).messages) == len(only(read(CHAT)).messages)


def test_a_file_that_is_not_json_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "resourceSpans": [\n')

    result = read(path, format_name="otel")

    assert result.bundles == []
    assert len(result.errors()) == 1


# --- the wire format --------------------------------------------------------------------------


def test_typed_attribute_values_decode_to_python_values() -> None:
    assert decode_value({"stringValue": "a"}) == "a"
    assert decode_value({"intValue": "10"}) == 10
    assert decode_value({"doubleValue": 637.704}) == 637.704
    assert decode_value({"boolValue": True}) is True
    assert decode_value({"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": 2}]}}) == [
        "x",
        2,
    ]
    assert decode_value(
        {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": False}}]}}
    ) == {"k": False}
    assert decode_value({"bytesValue": base64.b64encode(b"12345").decode()}) == "[bytes: 5 bytes]"
    assert decode_value({}) is None


def test_ids_are_normalised_to_lowercase_hex() -> None:
    raw = bytes(range(16))

    assert normalise_id(raw.hex().upper(), 16) == raw.hex()
    assert normalise_id(base64.b64encode(raw).decode(), 16) == raw.hex()
    assert normalise_id(base64.b64encode(raw[:8]).decode(), 8) == raw[:8].hex()
    assert normalise_id("", 8) is None
    assert normalise_id("0" * 16, 8) is None
    with pytest.raises(ValueError, match="not 8 bytes"):
        normalise_id(base64.b64encode(raw).decode(), 8)


def test_unix_nano_strings_become_aware_utc_times() -> None:
    assert nanos_to_time("1544712660300000000") == datetime(
        2018, 12, 13, 14, 51, 0, 300000, tzinfo=UTC
    )
    assert nanos_to_time("0") is None


# --- the fixtures follow the GenAI JSON Schemas -----------------------------------------------


def schema_rules(schema: dict[str, Any]) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Required keys per part type, roles, and required message keys of a GenAI schema."""
    definitions = schema["$defs"]
    parts = {
        d["properties"]["type"]["const"]: d["required"]
        for d in definitions.values()
        if "const" in d.get("properties", {}).get("type", {})
    }
    roles = definitions.get("Role", {}).get("enum", [])
    message = definitions.get("OutputMessage") or definitions.get("ChatMessage") or {}
    return parts, roles, message.get("required", [])


def check_parts(parts: list[dict[str, Any]], required: dict[str, list[str]]) -> None:
    """Every part has a known type and that type's required keys."""
    for part in parts:
        assert part["type"] in required, part["type"]
        missing = [key for key in required[part["type"]] if key not in part]
        assert not missing, (part["type"], missing)


@pytest.mark.shared
def test_fixture_message_attributes_follow_the_genai_json_schemas(transcripts_dir: Path) -> None:
    folder = transcripts_dir / "otel-genai" / "semconv-genai-schemas"
    schemas = {
        attribute: schema_rules(json.loads((folder / f"gen-ai-{name}.json").read_text()))
        for attribute, name in (
            ("gen_ai.input.messages", "input-messages"),
            ("gen_ai.output.messages", "output-messages"),
            ("gen_ai.system_instructions", "system-instructions"),
        )
    }
    finish_reasons = json.loads((folder / "gen-ai-output-messages.json").read_text())["$defs"][
        "FinishReason"
    ]["enum"]
    checked = 0
    for path in (CHAT, COLLECTOR, SUBAGENTS):
        for span in spans_of(path):
            for attribute, (parts, roles, message_keys) in schemas.items():
                if attribute not in span["attrs"]:
                    continue
                value = json.loads(span["attrs"][attribute])
                assert isinstance(value, list)
                if attribute == "gen_ai.system_instructions":
                    check_parts(value, parts)
                else:
                    for message in value:
                        assert set(message_keys) <= set(message), (path.name, message_keys)
                        assert message["role"] in roles
                        check_parts(message["parts"], parts)
                        if attribute == "gen_ai.output.messages":
                            assert message["finish_reason"] in finish_reasons
                checked += 1
    assert checked > 10


# --- other shapes instrumentations write ------------------------------------------------------

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def typed(value: Any) -> dict[str, Any]:
    """A Python value as an OTLP typed value."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [typed(v) for v in value]}}
    return {"kvlistValue": {"values": [{"key": k, "value": typed(v)} for k, v in value.items()]}}


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    """OTLP attributes from a dict."""
    return [{"key": key, "value": typed(value)} for key, value in values.items()]


def span_json(span_id: str, values: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal span of ``TRACE_ID``."""
    return {
        "traceId": TRACE_ID,
        "spanId": span_id,
        "name": extra.pop("name", "chat"),
        "startTimeUnixNano": "1749718800000000000",
        "endTimeUnixNano": "1749718801000000000",
        "attributes": attributes(values),
        **extra,
    }


def export(
    *, spans: list[dict[str, Any]] | None = None, logs: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An export document with the given spans and log records."""
    document: dict[str, Any] = {}
    if spans:
        document["resourceSpans"] = [{"resource": {}, "scopeSpans": [{"spans": spans}]}]
    if logs:
        document["resourceLogs"] = [{"resource": {}, "scopeLogs": [{"logRecords": logs}]}]
    return document


def write_export(tmp_path: Path, document: dict[str, Any]) -> Path:
    """The document as ``export.json``."""
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))
    return path


def test_deprecated_events_on_the_span_itself_are_read(tmp_path: Path) -> None:
    events = [
        {"name": "gen_ai.user.message", "attributes": attributes({"content": "Ping?"})},
        {
            "name": "gen_ai.choice",
            "attributes": attributes({"finish_reason": "stop", "message": {"content": "Pong."}}),
        },
    ]
    path = write_export(
        tmp_path,
        export(spans=[span_json("00f067aa0ba902b7", {"gen_ai.system": "openai"}, events=events)]),
    )

    bundle = only(read(path))

    assert [(m.role, m.text) for m in bundle.messages] == [
        ("user", "Ping?"),
        ("assistant", "Pong."),
    ]


def test_legacy_prompt_and_completion_json_attributes_are_read(tmp_path: Path) -> None:
    prompt = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]
    completion = [{"role": "assistant", "content": "4"}]
    values = {"gen_ai.prompt": json.dumps(prompt), "gen_ai.completion": json.dumps(completion)}
    path = write_export(tmp_path, export(spans=[span_json("00f067aa0ba902b7", values)]))

    bundle = only(read(path))

    assert [(m.role, m.text) for m in bundle.messages] == [
        (m["role"], m["content"]) for m in prompt + completion
    ]


def test_log_events_complete_a_span_that_recorded_no_content(tmp_path: Path) -> None:
    span = span_json(
        "00f067aa0ba902b7",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": 3,
        },
    )
    logs = [
        {
            "eventName": "gen_ai.user.message",
            "traceId": TRACE_ID,
            "spanId": "00f067aa0ba902b7",
            "timeUnixNano": "1749718800100000000",
            "body": typed({"content": "Hi"}),
        },
        {
            "eventName": "gen_ai.choice",
            "traceId": TRACE_ID,
            "spanId": "00f067aa0ba902b7",
            "timeUnixNano": "1749718800900000000",
            "body": typed({"index": 0, "message": {"content": "Hello!"}}),
        },
    ]
    path = write_export(tmp_path, export(spans=[span], logs=logs))

    bundle = only(read(path))

    assert [(m.role, m.text) for m in bundle.messages] == [("user", "Hi"), ("assistant", "Hello!")]
    assert bundle.messages[-1].usage == Usage(input_tokens=12, output_tokens=3)
    assert bundle.messages[-1].model == "gpt-4o"


def test_inference_details_events_with_structured_messages_are_read(tmp_path: Path) -> None:
    values = {
        "gen_ai.conversation.id": "conv-structured",
        "gen_ai.input.messages": [
            {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}
        ],
        "gen_ai.output.messages": [
            {
                "role": "assistant",
                "finish_reason": "stop",
                "parts": [
                    {"type": "reasoning", "content": "hidden"},
                    {"type": "text", "content": "Sunny."},
                ],
            }
        ],
    }
    logs = [
        {
            "eventName": "gen_ai.client.inference.operation.details",
            "timeUnixNano": "1749718800000000000",
            "attributes": attributes(values),
        }
    ]
    path = write_export(tmp_path, export(logs=logs))

    result = read(path)
    bundle = only(result)

    assert bundle.conversation.conversation_id == "otel:conv-structured"
    assert [(m.role, m.text) for m in bundle.messages] == [
        ("user", "Weather?"),
        ("assistant", "Sunny."),
    ]
    assert "hidden" not in texts(result)
    assert read(path).bundles == result.bundles  # keyed by content: stable without span ids


def test_a_collector_file_that_starts_with_metrics_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "otel.jsonl"
    metrics = json.dumps({"resourceMetrics": []})
    path.write_text(f"{metrics}\n{json.dumps(json.loads(CHAT.read_text()))}\n")

    assert detected_format(path) == "otel"
    assert len(read(path).bundles) == 1


def test_file_and_uri_parts_become_placeholders(tmp_path: Path) -> None:
    parts = [
        {"type": "text", "content": "Compare these."},
        {"type": "file", "modality": "image", "mime_type": "image/png", "file_id": "file-abc123"},
        {
            "type": "uri",
            "modality": "video",
            "mime_type": "video/mp4",
            "uri": "gs://bucket/clip.mp4",
        },
    ]
    values = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": parts}]),
    }
    path = write_export(tmp_path, export(spans=[span_json("00f067aa0ba902b7", values)]))

    message = only(read(path)).messages[0]

    assert message.text == (
        "Compare these.\n\n[image: image/png, file file-abc123]\n\n"
        "[video: video/mp4, gs://bucket/clip.mp4]"
    )


def test_span_finish_reasons_fill_replies_that_carry_none(tmp_path: Path) -> None:
    values = {
        "gen_ai.operation.name": "chat",
        "gen_ai.response.finish_reasons": ["length"],
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Once upon a"}]}]
        ),
    }
    path = write_export(tmp_path, export(spans=[span_json("00f067aa0ba902b7", values)]))

    assert only(read(path)).messages[0].attributes["finish_reason"] == "length"


def test_openinference_messages_kept_as_lists_read_like_flattened_ones(tmp_path: Path) -> None:
    values = {
        "openinference.span.kind": "LLM",
        "session.id": "s-1",
        "llm.input_messages": [{"message.role": "user", "message.content": "Capital of France?"}],
        "llm.output_messages": [{"message": {"role": "assistant", "content": "Paris."}}],
    }
    path = write_export(tmp_path, export(spans=[span_json("00f067aa0ba902b7", values)]))

    bundle = only(read(path))

    assert [(m.role, m.text) for m in bundle.messages] == [
        ("user", "Capital of France?"),
        ("assistant", "Paris."),
    ]


# --- damaged attribute names (ING-9: a message is imported or reported, never lost) -----------


def _legacy_export(line: int, prompt_key: str = "gen_ai.prompt.0.content") -> dict[str, Any]:
    """One collector line: a chat span with flattened legacy prompt keys, its prompt text
    ``said on line <line>`` under ``prompt_key``."""

    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    span = {
        "traceId": f"{line:032x}",
        "spanId": f"{line:016x}",
        "name": "chat gpt-5",
        "startTimeUnixNano": "1749718800000000000",
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.conversation.id", f"thread-{line}"),
            attr("gen_ai.prompt.0.role", "user"),
            attr(prompt_key, f"said on line {line}"),
            attr("gen_ai.completion.0.role", "assistant"),
            attr("gen_ai.completion.0.content", f"answered on line {line}"),
        ],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def _damaged_names(result: ReadResult) -> list[tuple[int | None, str]]:
    return [(i.line, i.reason) for i in result.issues if "was not imported" in i.reason]


def test_a_prompt_key_damaged_by_garbage_bytes_is_reported_by_its_line(tmp_path: Path) -> None:
    # The shape the fuzz suite shrank to: four exports, the fourth's content key damaged.
    lines = [_legacy_export(n) for n in (1, 2, 3)]
    lines.append(_legacy_export(4, "gen_ai.prompt.0.co~s8ntent"))
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(line) + "\r\n" for line in lines))

    result = read(path)

    ((line, reason),) = _damaged_names(result)
    assert line == 4
    assert 'attribute "gen_ai.prompt.0.co~s8ntent"' in reason
    assert "spans[0]" in reason and "gen_ai.prompt.<index>." in reason
    assert all(f"said on line {n}" in texts(result) for n in (1, 2, 3))


@pytest.mark.parametrize(
    ("damaged", "line"),
    [
        ("gen_a i.prompt.0.content", 1),  # the second shrunk case: a space
        ("~gen_ai.prompt.0.content", 2),
        ("gen_ai.pr\u00e9ompt.0.content", 3),
        ("gen_ai.promptq.0.content", 1),
        ("gen_ai.prompt.x0.content", 2),
        ("gen_ai.prompt.0.contentz", 3),
        ("gen_ai.prompt.0.\x07content", 2),
        ("gen_ai.prompt0.content", 1),
        ("gen_ai.prompt.0.Content", 3),
    ],
)
def test_a_prompt_key_damaged_anywhere_is_reported_by_its_line(
    tmp_path: Path, damaged: str, line: int
) -> None:
    exports = [
        _legacy_export(n, damaged if n == line else "gen_ai.prompt.0.content") for n in (1, 2, 3)
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(export) + "\n" for export in exports))

    result = read(path)

    ((where, reason),) = _damaged_names(result)
    assert where == line
    assert json.dumps(damaged)[1:-1][:20] in json.dumps(reason)
    kept = [n for n in (1, 2, 3) if n != line]
    assert all(f"said on line {n}" in texts(result) for n in kept)
    assert f"said on line {line}" not in texts(result)


@pytest.mark.parametrize(
    "damaged",
    [
        "gen_ai.input.messagez",
        "gen_ai.output.mesages",
        "llm.input_messages.0.message.cXontent",
        "llm.output_messages.0.messag.content",
        "llm.input_messages.zero.message.content",
    ],
)
def test_other_message_attributes_damaged_are_reported_too(tmp_path: Path, damaged: str) -> None:
    export = _legacy_export(1)
    span = export["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"].append({"key": damaged, "value": {"stringValue": "lost words"}})
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(export) + "\n" + json.dumps(_legacy_export(2)) + "\n")

    result = read(path)

    ((line, reason),) = _damaged_names(result)
    assert line == 1 and f'"{damaged}"' in reason


def test_attributes_that_are_not_messages_are_not_taken_for_damaged_ones(tmp_path: Path) -> None:
    export = _legacy_export(1)
    span = export["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    for key in (
        "gen_ai.request.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.response.finish_reasons",
        "llm.token_count.prompt",
        "llm.model_name",
        "http.request.header.x-request-id",
        "gen_ai.completion.0.tool_calls.0.arguments",
        "llm.input_messages.1.message.contents.0.message_content.image.image.url",
        "input.mime_type",
        "messaging.destination.name",
    ):
        span["attributes"].append({"key": key, "value": {"stringValue": "v"}})
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(export) + "\n")

    assert _damaged_names(read(path)) == []


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_no_attribute_of_the_fixtures_is_taken_for_a_damaged_name(path: Path) -> None:
    assert _damaged_names(read(path)) == []


def test_a_damaged_name_repeated_on_every_line_is_reported_on_each(tmp_path: Path) -> None:
    # The check is kept per name (an export repeats its names on every span): a repeated
    # damaged name is still reported once per line that holds it.
    exports = []
    for n in (1, 2, 3):
        export = _legacy_export(n)
        span = export["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        span["attributes"].append({"key": "gen_ai.output.mesages", "value": {"stringValue": "x"}})
        exports.append(export)
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(export) + "\n" for export in exports))

    assert [line for line, _ in _damaged_names(read(path))] == [1, 2, 3]


def test_a_long_damaged_name_is_reported_like_a_short_one(tmp_path: Path) -> None:
    # Names past the kept length are checked afresh each time, with the same answer.
    damaged = "gen_ai.prompt." + "x" * 400
    export = _legacy_export(1)
    span = export["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"].append({"key": damaged, "value": {"stringValue": "lost words"}})
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(export) + "\n" + json.dumps(export) + "\n")

    result = _damaged_names(read(path))

    assert [line for line, _ in result] == [1, 2]
    assert all("gen_ai.prompt.<index>" in reason for _, reason in result)
