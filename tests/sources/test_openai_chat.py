"""OpenAI Chat Completions lists, requests, responses and logged pairs (SPEC ING-1…ING-9).

Inputs are real AgentDojo traces (their ``messages`` are Chat Completions lists, with
tool-call arguments written as objects) and small hand-written fixtures for the shapes
and pitfalls AgentDojo lacks. Expected counts are derived from the input JSON itself.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import OpenAIChatAdapter, Sample
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import (
    all_errors,
    detected_format,
    produced_strings,
    read,
    write_json,
)

FIXTURES = Path(__file__).parent / "fixtures" / "openai_chat"
AGENTDOJO_FILES = sorted((DATASETS_DIR / "agentdojo").glob("*.jsonl"))
HIDDEN = ("HIDDEN-REASONING",)

pytestmark = pytest.mark.shared  # builds its inputs from ../shared files


def agentdojo_records(path: Path, count: int) -> list[dict[str, Any]]:
    """The first ``count`` trace records of an AgentDojo file (its first line is a header)."""
    lines = path.read_text().splitlines()[1 : count + 1]
    return [json.loads(line) for line in lines]


def expected_counts(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """Messages and tool calls in a Chat Completions list, counted from the JSON.

    Tool messages are results, not messages. A result pairs with the call of its
    ``tool_call_id``, or without an id with the oldest call still open; a result that
    pairs with nothing is kept as a call of its own.
    """
    shown = orphans = 0
    issued: list[str | None] = []
    open_calls: list[int] = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            issued.append(call.get("id") or None)
            open_calls.append(len(issued) - 1)
        if message.get("function_call"):
            issued.append(None)
            open_calls.append(len(issued) - 1)
        if message["role"] not in ("tool", "function"):
            shown += 1
            continue
        call_id = message.get("tool_call_id") or None
        if call_id is None:
            if open_calls:
                open_calls.pop(0)
            else:
                orphans += 1
        elif call_id not in issued:
            orphans += 1
        else:
            matching = [i for i in open_calls if issued[i] == call_id]
            if matching:
                open_calls.remove(matching[0])
    return shown, len(issued) + orphans


@pytest.mark.shared
@pytest.mark.parametrize("source", AGENTDOJO_FILES, ids=lambda p: p.stem)
def test_agentdojo_message_lists_read_with_exact_counts(source: Path, tmp_path: Path) -> None:
    for index, record in enumerate(agentdojo_records(source, 6)):
        path = write_json(tmp_path / f"trace-{index}.json", record["messages"])
        assert detected_format(path) == "openai_chat"
        result = read(path)
        assert all_errors(result) == []
        assert (result.messages, result.tool_calls) == expected_counts(record["messages"])


@pytest.mark.shared
def test_object_arguments_and_results_pair_with_their_calls(tmp_path: Path) -> None:
    source = DATASETS_DIR / "agentdojo" / "agentdojo-gpt-4o-mini-2024-07-18.jsonl"
    messages = agentdojo_records(source, 1)[0]["messages"]
    (bundle,) = read(write_json(tmp_path / "trace.json", messages)).bundles
    by_id = {call.call_id: call for call in bundle.tool_calls}
    for message in messages:
        for call in message.get("tool_calls") or []:
            assert by_id[call["id"]].arguments == call["function"]["arguments"]
            assert by_id[call["id"]].name == call["function"]["name"]
        if message["role"] == "tool":
            assert by_id[message["tool_call_id"]].result_text == message["content"]
            assert by_id[message["tool_call_id"]].status == "ok"
    issuing = {call.message_source_id for call in bundle.tool_calls}
    assert issuing <= {m.source_id for m in bundle.messages if m.role == "assistant"}


@pytest.mark.shared
def test_a_call_id_reused_by_the_model_keeps_both_calls_and_both_results(tmp_path: Path) -> None:
    source = DATASETS_DIR / "agentdojo" / "agentdojo-gpt-4o-mini-2024-07-18.jsonl"
    records = agentdojo_records(source, 195)
    record = next(r for r in records if _reuses_a_call_id(r["messages"]))
    (bundle,) = read(write_json(tmp_path / "trace.json", record["messages"])).bundles
    results = [m["content"] for m in record["messages"] if m["role"] == "tool"]
    assert Counter(c.result_text for c in bundle.tool_calls) == Counter(results)
    assert any("was used before" in issue.reason for issue in bundle.issues)


def _reuses_a_call_id(messages: list[dict[str, Any]]) -> bool:
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    return len(ids) != len(set(ids))


@pytest.mark.shared
def test_independent_traces_in_one_array_stay_separate_conversations(tmp_path: Path) -> None:
    source = DATASETS_DIR / "agentdojo" / "agentdojo-claude-3-haiku-20240307.jsonl"
    records = [{"messages": r["messages"]} for r in agentdojo_records(source, 8)]
    path = write_json(tmp_path / "batch.json", records)
    result = read(path)
    assert all_errors(result) == []
    assert len(result.bundles) == len(records)
    assert len({b.conversation_id for b in result.bundles}) == len(records)
    expected = [expected_counts(r["messages"]) for r in records]
    assert [(len(b.messages), len(b.tool_calls)) for b in result.bundles] == expected


@pytest.mark.shared
def test_logged_pairs_repeating_the_history_import_each_message_once(tmp_path: Path) -> None:
    source = DATASETS_DIR / "agentdojo" / "agentdojo-gpt-4o-mini-2024-07-18.jsonl"
    messages = agentdojo_records(source, 1)[0]["messages"]
    lines = []
    for position, message in enumerate(messages):
        if message["role"] == "assistant":
            response = {
                "id": f"chatcmpl-log{position}",
                "created": 1_735_689_600 + position,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100 + position, "completion_tokens": 10},
            }
            request = {"model": "gpt-4o-mini-2024-07-18", "messages": messages[:position]}
            lines.append(json.dumps({"request": request, "response": response}))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert detected_format(path) == "openai_chat"
    result = read(path)
    (bundle,) = result.bundles
    assert (len(bundle.messages), len(bundle.tool_calls)) == expected_counts(messages)
    replies = [m for m in bundle.messages if m.role == "assistant"]
    assert [m.source_id.split(":", 2)[2] for m in replies] == [
        f"chatcmpl-log{p}:0" for p, m in enumerate(messages) if m["role"] == "assistant"
    ]
    assert sum(m.usage.output_tokens for m in replies if m.usage) == 10 * len(replies)
    assert all(m.usage is not None and m.created_at is not None for m in replies)


def test_request_fixture_covers_argument_encodings_legacy_calls_and_refusals() -> None:
    path = FIXTURES / "request_with_tools.json"
    assert detected_format(path) == "openai_chat"
    result = read(path)
    (bundle,) = result.bundles
    messages = json.loads(path.read_text())["messages"]
    assert (len(bundle.messages), len(bundle.tool_calls)) == expected_counts(messages)
    calls = {c.name: c for c in bundle.tool_calls}
    assert calls["get_weather"].arguments == {"city": "Lyon", "unit": "celsius"}
    assert calls["find_museums"].arguments == {"city": "Lyon", "limit": 3}
    assert calls["find_museums"].attributes == {"arguments_double_encoded": True}
    assert calls["plan_route"].arguments == '{"from": "Part-Dieu", "to": '
    assert calls["book_tickets"].result_text == "Booking reference LY-2291"
    assert calls["book_tickets"].arguments == {"museum": "Musée des Confluences", "count": 2}
    warnings = [i for i in bundle.issues if i.severity == "warning"]
    assert [i.reason.split(":")[0] for i in warnings] == ["messages[3].tool_calls[2]"]
    assert "not valid JSON" in warnings[0].reason
    texts = [m.text for m in bundle.messages]
    assert "[image: image/png, 70 bytes]" in texts[2]
    assert "https://example.org/lyon-map.png" in texts[2]
    assert "I can't store or reuse card details." in texts
    assert texts[-1] == "Your tickets are booked: LY-2291."
    kinds = [(m.role, m.kind) for m in bundle.messages[:3]]
    assert kinds == [("system", "instructions"), ("developer", "instructions"), ("user", "prompt")]
    assert bundle.conversation.model == "gpt-4o-2024-08-06"


def test_a_response_keeps_choices_and_counts_usage_once() -> None:
    path = FIXTURES / "response_two_choices.json"
    assert detected_format(path) == "openai_chat"
    (bundle,) = read(path).bundles
    assert bundle.conversation.conversation_id == "openai_chat:chatcmpl-9x2LkTqB7a1"
    first, second = bundle.messages
    assert first.source_id == "openai_chat:chatcmpl-9x2LkTqB7a1:chatcmpl-9x2LkTqB7a1:0"
    assert (first.on_active_branch, second.on_active_branch) == (True, False)
    assert first.usage is not None and second.usage is None
    assert (first.usage.input_tokens, first.usage.cache_read_tokens) == (56, 64)
    assert (first.usage.output_tokens, first.usage.reasoning_tokens) == (310, 280)
    assert first.created_at is not None and first.created_at.tzinfo is not None
    assert first.model == "deepseek-reasoner"


def test_alternating_request_and_response_lines_form_one_conversation() -> None:
    path = FIXTURES / "request_response_log.jsonl"
    assert detected_format(path) == "openai_chat"
    (bundle,) = read(path).bundles
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    final_history = lines[-2]["messages"] + [lines[-1]["choices"][0]["message"]]
    assert (len(bundle.messages), len(bundle.tool_calls)) == expected_counts(final_history)
    assert [m.usage.output_tokens for m in bundle.messages if m.usage] == [20, 12, 14]
    assert bundle.tool_calls[0].result_text == "1609.344"
    assert bundle.conversation.started_at is not None
    assert bundle.conversation.ended_at is not None
    assert (bundle.conversation.ended_at - bundle.conversation.started_at).seconds == 50


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()))
def test_hidden_reasoning_never_reaches_any_produced_string(name: str) -> None:
    produced = produced_strings(read(FIXTURES / name).bundles)
    assert [s for s in produced if any(marker in s for marker in HIDDEN)] == []


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()))
def test_the_same_file_from_another_folder_gives_identical_bundles(
    name: str, tmp_path: Path
) -> None:
    copies = []
    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
        copies.append(shutil.copy(FIXTURES / name, tmp_path / folder / f"{folder}-{name}"))
    one, two = (read(path).bundles for path in copies)
    strip = [dataclasses.replace(b, origin=None, issues=()) for b in one]
    assert strip == [dataclasses.replace(b, origin=None, issues=()) for b in two]


def test_an_orphan_tool_result_is_kept_as_an_unknown_call_with_a_warning(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "What is 6 x 7?"},
        {"role": "tool", "tool_call_id": "call_never_made", "content": "42"},
    ]
    (bundle,) = read(write_json(tmp_path / "chat.json", messages)).bundles
    (call,) = bundle.tool_calls
    assert (call.name, call.result_text, call.status, call.call_id) == (
        "unknown",
        "42",
        "ok",
        "call_never_made",
    )
    assert [i.severity for i in bundle.issues] == ["warning"]
    assert bundle.issues[0].reason.startswith("[1]: tool result for call call_never_made")


def test_a_message_without_a_role_is_reported_and_the_rest_is_kept(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "hi"}, {"content": "who am I?"}]
    result = read(write_json(tmp_path / "chat.json", messages), format_name="openai_chat")
    assert [i.reason for i in all_errors(result)] == ['[1]: message has no "role"; skipped']
    assert [m.text for m in result.bundles[0].messages] == ["hi"]


def test_invalid_json_gives_an_error_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[\n{"role": "user", "content": "hi"},\n{"role": ')
    result = read(path, format_name="openai_chat")
    assert result.bundles == []
    (issue,) = result.errors()
    assert issue.path == str(path)
    assert "invalid JSON" in issue.reason
    assert issue.line == 3


def test_a_document_of_the_wrong_type_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat.json", "just a string")
    result = read(path, format_name="openai_chat")
    assert result.bundles == []
    assert [i.reason for i in result.errors()] == [
        "the document is a string; expected messages or a request/response object"
    ]


def test_a_bad_line_in_a_log_is_skipped_and_the_other_lines_are_read(tmp_path: Path) -> None:
    lines = (FIXTURES / "request_response_log.jsonl").read_text().splitlines()
    lines.insert(3, '{"model": "gpt-4o-mini", "messages": [')
    lines.insert(5, "42")
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = read(path, format_name="openai_chat")
    assert [(i.line, i.reason.split(" (")[0].split(";")[0]) for i in result.errors()] == [
        (4, "invalid JSON"),
        (6, "expected a JSON object, got a number"),
    ]
    assert len(result.bundles) == 1
    assert len(result.bundles[0].messages) == 6


@pytest.mark.shared
@pytest.mark.slow
def test_the_chat_adapter_claims_no_file_of_another_format() -> None:
    adapter = OpenAIChatAdapter()
    files = [p for root in (TRANSCRIPTS_DIR, DATASETS_DIR) for p in sorted(root.rglob("*"))]
    claimed = [p for p in files if p.suffix in (".json", ".jsonl") and adapter.sniff(Sample(p))]
    assert claimed == []


def test_a_log_whose_first_line_is_broken_still_reads_the_other_lines(tmp_path: Path) -> None:
    lines = (FIXTURES / "request_response_log.jsonl").read_text().splitlines()
    lines[0] = lines[0][:40]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = read(path, format_name="openai_chat")
    assert [(i.line, "invalid JSON" in i.reason) for i in result.errors()] == [(1, True)]
    logged = [json.loads(line) for line in lines[1:]]
    final = logged[-2]["messages"] + [logged[-1]["choices"][0]["message"]]
    # The first response lost its request: it stands alone, the later requests form the rest.
    lone = [logged[0]["choices"][0]["message"]]
    assert [(len(b.messages), len(b.tool_calls)) for b in result.bundles] == [
        expected_counts(lone),
        expected_counts(final),
    ]


def test_a_plain_role_and_content_list_is_read_as_chat_not_as_another_format(
    tmp_path: Path,
) -> None:
    messages = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}]},
    ]
    path = write_json(tmp_path / "notes.txt", messages)
    assert detected_format(path) == "openai_chat"
    (bundle,) = read(path).bundles
    assert [(m.role, m.text) for m in bundle.messages] == [
        ("user", "Hello"),
        ("assistant", "Hi! How can I help?"),
    ]


# --- damaged first lines, NaN and Infinity (ING-9: every record stored or reported) -----------


def _request(n: int) -> dict[str, Any]:
    return {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": f"system of record {n}"},
            {"role": "user", "content": f"asked on line {n}"},
        ],
    }


def _response(n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"answered on line {n}"},
                "finish_reason": "stop",
            }
        ],
    }


def _said(result: Any) -> str:
    return "\n".join(m.text for b in result.bundles for m in b.messages)


def _reported(result: Any) -> set[int | None]:
    return {i.line for i in [*result.issues, *(i for b in result.bundles for i in b.issues)]}


def test_a_log_whose_sampled_lines_are_all_damaged_is_still_read_whole(tmp_path: Path) -> None:
    # The shape the fuzz suite shrank to: Infinity as the system text of line 1, as the
    # role of line 2, a 600 kB string as the choices of line 3 (past the sample), and a
    # good response on line 4 that detection never saw.
    first, second = _request(1), _request(2)
    third, fourth = _response(3), _response(4)
    lines = [
        json.dumps(first).replace('"system of record 1"', "Infinity"),
        json.dumps(second).replace('"role": "system"', '"role": Infinity'),
        json.dumps({**third, "choices": "long " * 120_000}),
        json.dumps(fourth),
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n")

    assert detected_format(path) == "openai_chat"
    result = read(path)

    said = _said(result)
    assert "asked on line 1" in said and "asked on line 2" in said
    assert "answered on line 4" in said
    issues = [*result.issues, *(i for b in result.bundles for i in b.issues)]
    reasons = {i.line: i.reason for i in issues}
    assert "unknown role inf" in reasons[2]
    assert reasons[3].startswith("choices is a string, not a list of choices")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize(
    ("record", "where"),
    [
        ("request", '"system of record 1"'),
        ("request", '"gpt-4o-mini"'),
        ("request", '"role": "system"'),
        ("request", '"role": "user"'),
        ("response", '"index": 0'),
        ("response", '"stop"'),
        ("response", '"chat.completion"'),
        ("response", '"chatcmpl-1"'),
        ("response", '"role": "assistant"'),
    ],
)
def test_nan_or_infinity_anywhere_in_the_first_line_is_stored_or_reported(
    tmp_path: Path, token: str, record: str, where: str
) -> None:
    first = json.dumps(_request(1) if record == "request" else _response(1))
    key, _, _ = where.partition(": ")
    damaged = first.replace(where, f"{key}: {token}" if ": " in where else token, 1)
    assert damaged != first
    lines = [damaged, json.dumps(_response(2)), json.dumps(_request(3))]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n")

    result = read(path)

    said = _said(result)
    assert "answered on line 2" in said and "asked on line 3" in said
    kept = "asked on line 1" if record == "request" else "answered on line 1"
    assert kept in said or 1 in _reported(result)


@pytest.mark.parametrize("token", ["NaN", "-Infinity"])
def test_nan_in_nested_numbers_leaves_the_response_whole(tmp_path: Path, token: str) -> None:
    response = json.dumps({**_response(1), "created": 1, "usage": {"prompt_tokens": 7}})
    response = response.replace('"created": 1', f'"created": {token}')
    response = response.replace('"prompt_tokens": 7', f'"prompt_tokens": {token}')
    path = tmp_path / "chat.jsonl"
    path.write_text(response + "\n" + json.dumps(_request(2)) + "\n")

    result = read(path)

    assert "answered on line 1" in _said(result)
    assert result.errors() == []


@pytest.mark.parametrize("damage", ["messages", "choices"])
def test_messages_or_choices_of_the_wrong_type_are_reported(tmp_path: Path, damage: str) -> None:
    good = _request(1) if damage == "messages" else _response(1)
    bad = {**good, damage: {"not": "a list"}}
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")

    result = read(path)

    ((issue,),) = [[i for i in result.issues if i.line == 2]]
    assert issue.reason.startswith(f"{damage} is an object, not a list of {damage}")


def test_a_file_of_damaged_records_only_is_not_claimed_by_looking_further(tmp_path: Path) -> None:
    damaged = json.dumps(_request(1)).replace('"role": "user"', '"role": NaN')
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join([damaged] * 3 + ['{"kind": "another tool", "n": 1}']) + "\n")

    assert not OpenAIChatAdapter().sniff(Sample(path))
