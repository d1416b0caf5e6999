"""OpenAI Responses item lists, response objects and logged pairs (SPEC ING-1…ING-9).

Inputs are the ``response_item`` payloads of real Codex rollouts (Responses items, text
redacted by the sample's author, reasoning items included) and small hand-written
fixtures for item kinds the rollouts lack. Expected counts are derived from the input.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import OpenAIResponsesAdapter, Sample
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import (
    all_errors,
    detected_format,
    produced_strings,
    read,
    write_json,
)

FIXTURES = Path(__file__).parent / "fixtures" / "openai_responses"
ROLLOUTS = sorted((TRANSCRIPTS_DIR / "codex" / "localpush" / "raw" / "sessions").glob("*.jsonl"))
INPUT_SIDE = ("user", "developer", "system")

pytestmark = pytest.mark.shared  # builds its inputs from ../shared files


def rollout_items(rollout: Path) -> list[dict[str, Any]]:
    """The Responses items of a Codex rollout (its ``response_item`` payloads)."""
    lines = [json.loads(line) for line in rollout.read_text().splitlines()]
    return [line["payload"] for line in lines if line.get("type") == "response_item"]


def is_message(item: dict[str, Any]) -> bool:
    return item.get("type", "message") == "message"


def expected_counts(items: list[dict[str, Any]]) -> tuple[int, int]:
    """Messages and tool calls among Responses items, counted from the JSON.

    Messages are ``message`` items; calls are ``*_call`` items, plus ``*_call_output``
    items whose ``call_id`` no earlier call has. Reasoning items count as nothing.
    """
    messages = calls = 0
    call_ids: set[str] = set()
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            messages += 1
        elif kind.endswith("_call"):
            calls += 1
            call_ids.add(item.get("call_id") or item.get("id"))
        elif kind.endswith("_call_output") and item["call_id"] not in call_ids:
            calls += 1
    return messages, calls


@pytest.mark.shared
@pytest.mark.parametrize("rollout", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_codex_items_read_as_a_responses_list_with_exact_counts(
    rollout: Path, tmp_path: Path
) -> None:
    items = rollout_items(rollout)
    path = write_json(tmp_path / "items.json", items)
    assert detected_format(path) == "openai_responses"
    result = read(path)
    assert all_errors(result) == []
    assert (result.messages, result.tool_calls) == expected_counts(items)


@pytest.mark.shared
@pytest.mark.parametrize("rollout", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_reasoning_items_never_reach_any_produced_string(rollout: Path, tmp_path: Path) -> None:
    items = rollout_items(rollout)
    reasoning = [i for i in items if i["type"] == "reasoning"]
    assert reasoning, "the rollout should hold reasoning items"
    hidden = {json.dumps(i["summary"]) for i in reasoning} | {
        i["encrypted_content"] for i in reasoning if i.get("encrypted_content")
    }
    hidden |= {s["text"] for i in reasoning for s in i["summary"]}
    visible = json.dumps([i for i in items if i["type"] != "reasoning"])
    hidden = {h for h in hidden if h not in visible}
    produced = produced_strings(read(write_json(tmp_path / "items.json", items)).bundles)
    assert [h for h in hidden for s in produced if h in s] == []


@pytest.mark.shared
def test_calls_pair_with_their_outputs_by_call_id(tmp_path: Path) -> None:
    items = rollout_items(ROLLOUTS[0])
    (bundle,) = read(write_json(tmp_path / "items.json", items)).bundles
    outputs = {i["call_id"]: i["output"] for i in items if i["type"].endswith("_call_output")}
    paired = {c.call_id: c.result_text for c in bundle.tool_calls if c.call_id in outputs}
    assert paired == outputs
    unparsable = [i for i in items if i["type"] == "function_call"]
    warnings = [i for i in bundle.issues if "not valid JSON" in i.reason]
    assert len(warnings) == len(unparsable)  # the sample's arguments are redaction markers
    assert all(i.severity == "warning" for i in bundle.issues)


def turns(items: list[dict[str, Any]]) -> list[tuple[list[Any], list[Any]]]:
    """Items split into (input, output) runs: what each request sent and got back."""
    runs: list[tuple[list[Any], list[Any]]] = []
    for item in items:
        sent = (is_message(item) and item["role"] in INPUT_SIDE) or item["type"].endswith("_output")
        if sent and (not runs or runs[-1][1]):
            runs.append(([], []))
        if not runs:
            runs.append(([], []))
        runs[-1][0 if sent else 1].append(item)
    return runs


@pytest.mark.shared
def test_responses_chained_by_previous_response_id_form_one_conversation(
    tmp_path: Path,
) -> None:
    items = rollout_items(ROLLOUTS[-1])
    lines, previous = [], None
    for number, (sent, output) in enumerate(turns(items)):
        response_id = f"resp_chain{number:03d}"
        usage = {"input_tokens": 100, "output_tokens": 10 + number}
        request = {"model": "gpt-5-codex", "input": sent, "previous_response_id": previous}
        response = {"id": response_id, "object": "response", "output": output, "usage": usage}
        lines.append(json.dumps({"request": request, "response": response}))
        previous = response_id
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert detected_format(path) == "openai_responses"
    result = read(path)
    assert all_errors(result) == []
    (bundle,) = result.bundles
    messages, calls = expected_counts(items)
    # A response whose output has no assistant message gets one standing for it.
    silent = sum(1 for _, out in turns(items) if not any(is_message(i) for i in out))
    assert (len(bundle.messages), len(bundle.tool_calls)) == (messages + silent, calls)
    outputs = sorted(m.usage.output_tokens for m in bundle.messages if m.usage)
    assert outputs == [10 + n for n in range(len(lines))]  # usage counted once per response
    assert bundle.conversation.conversation_id.startswith("openai_responses:")


def test_a_response_object_keeps_visible_items_and_drops_reasoning() -> None:
    path = FIXTURES / "response_object.json"
    assert detected_format(path) == "openai_responses"
    (bundle,) = read(path).bundles
    document = json.loads(path.read_text())
    assert bundle.conversation.conversation_id == f"openai_responses:{document['id']}"
    system, reply = bundle.messages
    assert (system.role, system.kind, system.text) == (
        "system",
        "instructions",
        "You are a concise research assistant.",
    )
    assert reply.source_id.endswith(":msg_67ccd2c3cc2b8190a3e6f0c9a2b1d4e5")
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.cache_read_tokens) == (176, 1024)
    assert (reply.usage.output_tokens, reply.usage.reasoning_tokens) == (640, 512)
    assert reply.created_at is not None and reply.created_at.year == 2025
    calls = {c.name: c for c in bundle.tool_calls}
    assert set(calls) == {"web_search", "convert_units", "image_generation", "lookup_density"}
    assert calls["web_search"].result_text == "https://example.org/lyon-population"
    assert calls["convert_units"].arguments == {"value": 47.87, "from": "km2", "to": "mi2"}
    assert calls["convert_units"].status == "pending"
    image = document["output"][3]["result"]
    expected = f"[image: image/png, {len(base64.b64decode(image))} bytes]"
    assert calls["image_generation"].result_text == expected
    assert calls["lookup_density"].result_text == "11,000 people per km2"
    assert calls["lookup_density"].attributes["server_label"] == "stats"
    produced = produced_strings([bundle])
    assert [s for s in produced if "HIDDEN-" in s or image in s] == []


def test_an_input_output_record_reads_every_tool_kind_with_exact_counts() -> None:
    path = FIXTURES / "input_output.json"
    assert detected_format(path) == "openai_responses"
    result = read(path)
    (bundle,) = result.bundles
    document = json.loads(path.read_text())
    expected = expected_counts(document["input"] + document["output"])
    assert (len(bundle.messages), len(bundle.tool_calls)) == expected
    calls = {c.call_id: c for c in bundle.tool_calls}
    assert calls["call_shell01"].result_text == "Error: Cannot find module 'left-pad'"
    assert calls["call_shell01"].arguments["command"] == ["npm", "run", "build"]
    assert calls["call_patch01"].arguments.startswith("*** Begin Patch")
    assert calls["call_test01"].result_text == "42 passed"
    assert calls["call_screen01"].result_text == "[image: image/png, 70 bytes]"
    lost = calls["call_lost99"]
    assert (lost.name, lost.attributes) == ("unknown", {"orphan_result": True})
    (warning,) = bundle.issues
    assert warning.reason.startswith("input[11]: output for call call_lost99 has no matching")
    user = bundle.messages[1]
    assert user.text.startswith("Why does the build fail?")
    assert "[image: image/png, 70 bytes]" in user.text
    log = document["input"][1]["content"][2]["file_data"].split(",", 1)[1]
    assert f"[file: text/plain, {len(base64.b64decode(log))} bytes]" in user.text
    assert "build.log" in user.text
    refusal = bundle.messages[2]
    assert refusal.text == "I won't delete node_modules without asking."
    assert all("HIDDEN-" not in s for s in produced_strings([bundle]))


@pytest.mark.parametrize("name", ["response_object.json", "input_output.json"])
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


def test_a_message_item_without_a_role_is_reported_and_the_rest_is_kept(
    tmp_path: Path,
) -> None:
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "content": [{"type": "output_text", "text": "who am I?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "noop", "arguments": "{}"},
    ]
    result = read(write_json(tmp_path / "items.json", items), format_name="openai_responses")
    assert [i.reason for i in all_errors(result)] == ['[1]: message has no "role"; skipped']
    assert (result.messages, result.tool_calls) == (1, 1)


def test_an_unknown_item_type_is_skipped_with_a_warning(tmp_path: Path) -> None:
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "hologram_call_v9", "id": "x"},
    ]
    result = read(write_json(tmp_path / "items.json", items), format_name="openai_responses")
    (bundle,) = result.bundles
    assert [(i.severity, i.reason) for i in bundle.issues] == [
        ("warning", "[1]: unknown item type 'hologram_call_v9'; skipped")
    ]


def test_invalid_json_gives_an_error_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text('[\n{"type": "message", "role": "user", "content": "hi"},\n{"type": ')
    result = read(path, format_name="openai_responses")
    assert result.bundles == []
    (issue,) = result.errors()
    assert (issue.path, issue.line) == (str(path), 3)
    assert "invalid JSON" in issue.reason


def test_a_document_of_the_wrong_type_is_refused_with_the_reason(tmp_path: Path) -> None:
    result = read(write_json(tmp_path / "items.json", None), format_name="openai_responses")
    assert result.bundles == []
    assert [i.reason for i in result.errors()] == [
        "the document is null; expected items or a request/response"
    ]


@pytest.mark.shared
@pytest.mark.slow
def test_the_responses_adapter_claims_no_file_of_another_format() -> None:
    adapter = OpenAIResponsesAdapter()
    files = [p for root in (TRANSCRIPTS_DIR, DATASETS_DIR) for p in sorted(root.rglob("*"))]
    claimed = [p for p in files if p.suffix in (".json", ".jsonl") and adapter.sniff(Sample(p))]
    assert claimed == []
