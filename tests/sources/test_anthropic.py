"""Anthropic Messages lists, requests, responses and logged pairs (SPEC ING-1…ING-9).

Inputs are the API messages inside real Claude Code sessions (split assistant lines merged
back into whole responses, thinking blocks included) and small hand-written fixtures for
request blocks the sessions lack. Expected counts are derived from the input JSON itself.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import AnthropicMessagesAdapter, Sample
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import (
    all_errors,
    detected_format,
    produced_strings,
    read,
    write_json,
)

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"
CLAUDE_CODE = TRANSCRIPTS_DIR / "claude-code" / "marot-spotter"
SESSIONS = [CLAUDE_CODE / "short.jsonl", CLAUDE_CODE / "tool_heavy.jsonl"]
CALL_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")
HIDDEN_TYPES = ("thinking", "redacted_thinking")

pytestmark = pytest.mark.shared  # builds its inputs from ../shared files


def api_messages(session: Path) -> list[dict[str, Any]]:
    """The Anthropic messages of a Claude Code session, as the API saw them.

    Claude Code writes each block of a response as its own line (same ``message.id``),
    with tool results in between; here the blocks are merged back into one assistant
    message and the results gathered into the one user message that follows it.
    """
    messages: list[dict[str, Any]] = []
    merged: dict[str, dict[str, Any]] = {}
    current: str | None = None
    for line in session.read_text().splitlines():
        record = json.loads(line)
        message = copy.deepcopy(record.get("message"))
        if record.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        content = message["content"]
        if message["role"] == "assistant":
            if message.get("id") == current:
                merged[current]["content"] += content
                continue
            current = message["id"]
            merged[current] = message
            messages.append(message)
        elif isinstance(content, list) and all(b["type"] == "tool_result" for b in content):
            if messages and messages[-1]["role"] == "user" and current is not None:
                messages[-1]["content"] += content
            else:
                messages.append(message)
        else:
            current = None
            messages.append(message)
    return messages


def expected_counts(messages: list[dict[str, Any]], *, system: bool = False) -> tuple[int, int]:
    """Messages and tool calls, counted from the JSON.

    A user message made only of tool results is not a message (it completes calls). Tool
    calls are ``tool_use``-style blocks, plus results whose call is not in the history.
    """
    shown, calls, orphans = int(system), 0, 0
    issued: set[str] = set()
    for message in messages:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        visible = [b for b in blocks if b["type"] not in HIDDEN_TYPES]
        results = [b for b in visible if b["type"].endswith("tool_result")]
        for block in visible:
            if block["type"] in CALL_TYPES:
                issued.add(block["id"])
                calls += 1
        orphans += sum(1 for r in results if r["tool_use_id"] not in issued)
        only_results = bool(results) and len(results) == len(visible)
        shown += 0 if message["role"] == "user" and only_results else 1
    return shown, calls + orphans


def hidden_strings(messages: list[dict[str, Any]]) -> list[str]:
    """Thinking text, signatures, redacted data and encrypted values in the input."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") in HIDDEN_TYPES:
                found.extend(str(v) for k, v in value.items() if k != "type")
            found.extend(str(v) for k, v in value.items() if k.startswith("encrypted"))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(messages)
    return [s for s in found if len(s) > 8]


@pytest.mark.shared
@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.stem)
def test_claude_code_messages_read_as_an_anthropic_list(session: Path, tmp_path: Path) -> None:
    messages = api_messages(session)
    path = write_json(tmp_path / "messages.json", messages)
    assert detected_format(path) == "anthropic"
    result = read(path)
    assert all_errors(result) == []
    assert (result.messages, result.tool_calls) == expected_counts(messages)
    (bundle,) = result.bundles
    replies = [m for m in bundle.messages if m.role == "assistant"]
    source_ids = [m.source_id.rsplit(":", 1)[1] for m in replies]
    assert source_ids == [m["id"] for m in messages if m["role"] == "assistant"]
    assert all(m.usage is not None and m.model == "claude-opus-4-6" for m in replies)


@pytest.mark.shared
@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.stem)
def test_thinking_from_real_sessions_never_reaches_any_produced_string(
    session: Path, tmp_path: Path
) -> None:
    messages = api_messages(session)
    hidden = hidden_strings(messages)
    assert hidden, "the session should hold thinking blocks"
    produced = produced_strings(read(write_json(tmp_path / "messages.json", messages)).bundles)
    assert [h for h in hidden for s in produced if h in s] == []


@pytest.mark.shared
def test_tool_results_pair_with_their_calls_and_keep_error_status(tmp_path: Path) -> None:
    messages = api_messages(CLAUDE_CODE / "short.jsonl")
    (bundle,) = read(write_json(tmp_path / "messages.json", messages)).bundles
    results = {
        b["tool_use_id"]: b
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    }
    assert {c.call_id for c in bundle.tool_calls} == set(results)
    for call in bundle.tool_calls:
        block = results[call.call_id]
        assert call.result_text == block["content"]
        assert call.status == ("error" if block.get("is_error") else "ok")


@pytest.mark.shared
def test_logged_requests_repeating_the_history_import_each_message_once(tmp_path: Path) -> None:
    messages = api_messages(CLAUDE_CODE / "tool_heavy.jsonl")
    lines = []
    for position, message in enumerate(messages):
        if message["role"] == "assistant":
            request = {"model": "claude-opus-4-6", "system": "You are Claude Code."}
            request["messages"] = messages[:position]
            lines.append(json.dumps({"request": request, "response": message}))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert detected_format(path) == "anthropic"
    result = read(path)
    assert all_errors(result) == []
    (bundle,) = result.bundles
    # Messages after the last response were never sent in a logged request.
    logged = messages[: max(i for i, m in enumerate(messages) if m["role"] == "assistant") + 1]
    expected = expected_counts(logged, system=True)
    assert (len(bundle.messages), len(bundle.tool_calls)) == expected
    usages = [m.usage for m in bundle.messages if m.usage is not None]
    assert len(usages) == sum(1 for m in messages if m["role"] == "assistant")


def test_a_request_with_every_block_kind_reads_with_exact_counts() -> None:
    path = FIXTURES / "request_blocks.json"
    assert detected_format(path) == "anthropic"
    (bundle,) = read(path).bundles
    request = json.loads(path.read_text())
    expected = expected_counts(request["messages"], system=True)
    assert (len(bundle.messages), len(bundle.tool_calls)) == expected
    system, *_ = bundle.messages
    assert (system.role, system.kind) == ("system", "instructions")
    assert system.text == "You are a research assistant for a small bakery.\n\nCite sources."
    calls = {c.call_id: c for c in bundle.tool_calls}
    inventory = calls["toolu_01Inventory"]
    image = request["messages"][2]["content"][0]["content"][1]["source"]["data"]
    placeholder = f"[image: image/jpeg, {len(base64.b64decode(image))} bytes]"
    assert inventory.result_text == f"T55: 40 kg\nT65: 5 kg\n\n{placeholder}"
    search = calls["srvtoolu_01Search"]
    assert (search.name, search.status, search.attributes) == (
        "web_search",
        "ok",
        {"server_tool": True},
    )
    assert search.result_text == (
        "Choosing flour for baguettes — https://example.org/baguette-flour\n"
        "T65 explained — https://example.org/t65"
    )
    assert (calls["toolu_02Order"].status, calls["toolu_02Order"].result_text) == (
        "error",
        "Supplier API returned 503",
    )
    orphan = calls["toolu_99Missing"]
    assert (orphan.name, orphan.status) == ("unknown", "ok")
    (warning,) = bundle.issues
    assert warning.severity == "warning"
    assert warning.reason.startswith("messages[4].content[1]: tool result for toolu_99Missing")
    texts = [m.text for m in bundle.messages]
    pdf = request["messages"][5]["content"][0]["source"]["data"]
    placeholder = f"[file: application/pdf, {len(base64.b64decode(pdf))} bytes]"
    assert texts[-2] == f"{placeholder}\n\nSupplier price list\n\nHere is the price list instead."


def test_a_response_object_is_one_reply_with_usage_and_its_call() -> None:
    path = FIXTURES / "response.json"
    assert detected_format(path) == "anthropic"
    (bundle,) = read(path).bundles
    assert bundle.conversation.conversation_id == "anthropic:msg_01XFDUDYJgAACzvnptvVoYEL"
    (reply,) = bundle.messages
    assert reply.text == "I'll check the current weather in Paris."
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (472, 91)
    assert (reply.usage.cache_write_tokens, reply.usage.cache_read_tokens) == (1024, 2048)
    assert reply.attributes == {"stop_reason": "tool_use"}
    (call,) = bundle.tool_calls
    assert (call.status, call.arguments, call.message_source_id) == (
        "pending",
        {"location": "Paris, France", "unit": "celsius"},
        reply.source_id,
    )


@pytest.mark.parametrize("name", ["request_blocks.json", "response.json"])
def test_fixture_reasoning_never_reaches_any_produced_string(name: str) -> None:
    produced = produced_strings(read(FIXTURES / name).bundles)
    assert [s for s in produced if "HIDDEN-" in s] == []


@pytest.mark.parametrize("name", ["request_blocks.json", "response.json"])
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


def test_split_copies_of_one_response_are_merged_into_one_message(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"id": "msg_A", "role": "assistant", "content": [{"type": "text", "text": "one"}]},
        {"id": "msg_A", "role": "assistant", "content": [{"type": "text", "text": "two"}]},
    ]
    path = write_json(tmp_path / "messages.json", messages)
    result = read(path, format_name="anthropic")
    assert [m.text for m in result.bundles[0].messages] == ["hi", "one\n\ntwo"]


def test_a_message_without_a_role_is_reported_and_the_rest_is_kept(tmp_path: Path) -> None:
    request = json.loads((FIXTURES / "request_blocks.json").read_text())
    del request["messages"][0]["role"]
    result = read(write_json(tmp_path / "request.json", request), format_name="anthropic")
    assert [i.reason for i in all_errors(result)] == [
        'messages[0]: message has no "role"; message skipped'
    ]
    expected = expected_counts(request["messages"][1:], system=True)
    assert (result.messages, result.tool_calls) == expected


def test_invalid_json_gives_an_error_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    path.write_text('{"system": "x",\n "messages": [\n{"role": "user", "content": ')
    result = read(path, format_name="anthropic")
    assert result.bundles == []
    (issue,) = result.errors()
    assert (issue.path, issue.line) == (str(path), 3)
    assert "invalid JSON" in issue.reason


def test_a_document_of_the_wrong_type_is_refused_with_the_reason(tmp_path: Path) -> None:
    result = read(write_json(tmp_path / "request.json", 12), format_name="anthropic")
    assert result.bundles == []
    assert [i.reason for i in result.errors()] == [
        "the document is a number; expected messages or a request/response"
    ]


@pytest.mark.shared
@pytest.mark.slow
def test_the_anthropic_adapter_claims_no_file_of_another_format() -> None:
    adapter = AnthropicMessagesAdapter()
    files = [p for root in (TRANSCRIPTS_DIR, DATASETS_DIR) for p in sorted(root.rglob("*"))]
    claimed = [p for p in files if p.suffix in (".json", ".jsonl") and adapter.sniff(Sample(p))]
    assert claimed == []
