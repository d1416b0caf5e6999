"""Gemini CLI chat logs: legacy JSON, checkpoints and the replayed JSONL (SPEC ING-1…ING-9)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import GeminiCliAdapter, Sample
from proctor.transcript import ConversationBundle
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import all_errors, detected_format, produced_strings, read

FIXTURES = Path(__file__).parent / "fixtures" / "gemini_cli"
GEMINI_DIR = TRANSCRIPTS_DIR / "gemini-cli"
SHARED_GEMINI_FILES = sorted(p for p in GEMINI_DIR.rglob("*") if p.suffix in (".json", ".jsonl"))
FIXTURE_FILES = sorted(FIXTURES.iterdir())


def replayed_records(path: Path) -> list[dict[str, Any]]:
    """Message records by the format's rules: last copy of an id wins, rewound ones stay."""
    if path.suffix == ".jsonl":
        by_id: dict[str, dict[str, Any]] = {}
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if isinstance(record.get("id"), str):
                by_id[record["id"]] = record
            for message in record.get("$set", {}).get("messages", []):
                by_id[message["id"]] = message
        return list(by_id.values())
    document = json.loads(path.read_text())
    if isinstance(document, list):
        return document
    return document.get("messages") or document.get("history")


def parts_of(record: dict[str, Any]) -> list[Any]:
    content = record.get("content", record.get("parts"))
    return content if isinstance(content, list) else [content]


def expected_counts(path: Path) -> tuple[int, int]:
    """Messages and tool calls the file holds, counted straight from its JSON.

    Every record is a message except a user turn made only of function responses (the
    results of earlier calls). Tool calls are ``toolCalls`` entries and ``functionCall``
    parts, plus function responses whose call was never recorded (kept as calls).
    """
    messages = calls = 0
    call_ids: set[str] = set()
    for record in replayed_records(path):
        parts = [p for p in parts_of(record) if isinstance(p, dict)]
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        only_responses = bool(responses) and len(responses) == len(parts_of(record))
        role = record.get("type", record.get("role"))
        messages += 0 if role == "user" and only_responses else 1
        for call in record.get("toolCalls") or []:
            call_ids.add(call["id"])
            calls += 1
        for part in parts:
            if "functionCall" in part:
                call_ids.add(part["functionCall"].get("id"))
                calls += 1
        calls += sum(1 for r in responses if r.get("id") not in call_ids)
    return messages, calls


def thought_texts(path: Path) -> list[str]:
    """Every hidden-reasoning string in the file: thoughts, thought parts, signatures."""
    found = []
    for record in replayed_records(path):
        for thought in record.get("thoughts") or []:
            found += [thought.get("subject", ""), thought.get("description", "")]
        for part in parts_of(record):
            if isinstance(part, dict) and part.get("thought") is True:
                found.append(part["text"])
            if isinstance(part, dict) and "thoughtSignature" in part:
                found.append(part["thoughtSignature"])
    return [t for t in found if t]


def without_location(bundle: ConversationBundle) -> ConversationBundle:
    """A bundle minus where it was read from (origin, and issues naming the path)."""
    return dataclasses.replace(bundle, origin=None, issues=())


def other_format_files() -> list[Path]:
    roots = [TRANSCRIPTS_DIR, DATASETS_DIR]
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*"))]
    return [p for p in files if p.suffix in (".json", ".jsonl") and GEMINI_DIR not in p.parents]


@pytest.mark.shared
@pytest.mark.parametrize("path", SHARED_GEMINI_FILES, ids=lambda p: p.name)
def test_every_shared_gemini_file_is_detected_and_read_without_errors(path: Path) -> None:
    assert detected_format(path) == "gemini_cli"
    result = read(path)
    assert all_errors(result) == []
    assert len(result.bundles) == 1
    assert (result.messages, result.tool_calls) == expected_counts(path)


@pytest.mark.parametrize("path", [*SHARED_GEMINI_FILES, *FIXTURE_FILES], ids=lambda p: p.name)
def test_hidden_reasoning_never_reaches_any_produced_string(path: Path) -> None:
    hidden = thought_texts(path)
    produced = produced_strings(read(path, format_name="gemini_cli").bundles)
    leaks = [t for t in hidden for s in produced if t in s]
    assert leaks == []


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_counts_follow_the_replay_rules(path: Path) -> None:
    result = read(path)
    assert all_errors(result) == []
    assert (result.messages, result.tool_calls) == expected_counts(path)


@pytest.mark.shared
@pytest.mark.slow
def test_gemini_adapter_claims_no_file_of_another_format() -> None:
    adapter = GeminiCliAdapter()
    claimed = [p for p in other_format_files() if adapter.sniff(Sample(p))]
    assert claimed == []


def test_rewound_messages_are_kept_off_the_active_branch() -> None:
    (bundle,) = read(FIXTURES / "rewind_and_set.jsonl").bundles
    active = {m.source_id.rsplit(":", 1)[1]: m.on_active_branch for m in bundle.messages}
    assert active == {
        "u1": True,
        "a1": True,
        "a2": True,
        "u2": False,
        "a3": False,
        "n1": False,
        "u3": True,
        "a4": True,
        "e1": True,
    }
    by_key = {m.source_id.rsplit(":", 1)[1]: m for m in bundle.messages}
    assert by_key["u3"].parent_source_id == by_key["a2"].source_id
    rejected = next(c for c in bundle.tool_calls if c.call_id == "shell-2")
    assert rejected.on_active_branch is False


def test_the_last_copy_of_a_re_appended_message_wins() -> None:
    (bundle,) = read(FIXTURES / "rewind_and_set.jsonl").bundles
    shell = next(c for c in bundle.tool_calls if c.call_id == "shell-1")
    assert shell.status == "ok"
    assert shell.exit_code == 0
    assert shell.result_text is not None and "3 passed" in shell.result_text
    assert shell.source_id == "gemini:5a0c2f61-fixture-rewind:tool:shell-1"
    a1 = next(m for m in bundle.messages if m.source_id.endswith(":a1"))
    assert a1.usage is not None
    assert (a1.usage.reasoning_tokens, a1.usage.cache_read_tokens) == (25, 1000)
    assert a1.usage.total_tokens == 1270  # the file's own "total"


def test_set_records_merge_metadata_into_the_conversation() -> None:
    (bundle,) = read(FIXTURES / "rewind_and_set.jsonl").bundles
    conversation = bundle.conversation
    assert conversation.conversation_id == "gemini:5a0c2f61-fixture-rewind"
    assert conversation.title == "Ran the tests and looked for the build folder"
    assert conversation.ended_at is not None and conversation.ended_at.second == 22
    assert conversation.ended_at.tzinfo is not None
    assert conversation.project_hint == "widget"
    assert conversation.model == "gemini-2.5-pro"


def test_tool_statuses_distinguish_success_error_and_user_rejection() -> None:
    (bundle,) = read(FIXTURES / "rewind_and_set.jsonl").bundles
    statuses = {c.call_id: c.status for c in bundle.tool_calls}
    assert statuses == {"shell-1": "ok", "shell-2": "rejected", "ls-1": "error"}
    listing = next(c for c in bundle.tool_calls if c.call_id == "ls-1")
    assert listing.arguments == {"path": "build"}  # string-encoded args are parsed


def test_notices_and_visible_text_follow_the_message_types() -> None:
    (bundle,) = read(FIXTURES / "rewind_and_set.jsonl").bundles
    kinds = {m.source_id.rsplit(":", 1)[1]: (m.role, m.kind) for m in bundle.messages}
    assert kinds["n1"] == ("system", "notice")
    assert kinds["e1"] == ("system", "notice")
    assert kinds["u3"] == ("user", "prompt")
    a2 = next(m for m in bundle.messages if m.source_id.endswith(":a2"))
    assert a2.text == "All 3 tests pass."


def test_a_subagent_session_in_its_parents_folder_links_to_the_parent(tmp_path: Path) -> None:
    folder = tmp_path / "chats" / "5a0c2f61-fixture-rewind"
    folder.mkdir(parents=True)
    path = shutil.copy(FIXTURES / "subagent.jsonl", folder / "7f3e9b2a-fixture-subagent.jsonl")
    (bundle,) = read(path).bundles
    assert bundle.conversation.kind == "subagent"
    assert bundle.conversation.parent_conversation_id == "gemini:5a0c2f61-fixture-rewind"
    run = bundle.subagent_run
    assert run is not None
    assert (run.rounds, run.tool_uses, run.rejected_tools) == (2, 2, ("write_file",))
    assert run.summary == "The import names `widgets`, but the package is `widget`."
    assert run.total_tokens == 930 + 984
    assert run.stop_kind == "completed"
    assert run.duration_ms == 30_500


def test_a_subagent_file_outside_the_chats_layout_gets_no_guessed_parent() -> None:
    (bundle,) = read(FIXTURES / "subagent.jsonl").bundles
    assert bundle.conversation.kind == "subagent"
    assert bundle.conversation.parent_conversation_id is None


def test_a_checkpoint_pairs_function_calls_with_responses_and_keeps_orphans() -> None:
    result = read(FIXTURES / "checkpoint.json")
    (bundle,) = result.bundles
    calls = {c.name: c for c in bundle.tool_calls}
    assert calls["read_file"].result_text == "# Widget\nA tiny widget."
    assert calls["read_file"].status == "ok"
    assert calls["web_fetch"].attributes.get("orphan_result") is True
    assert [i.severity for i in bundle.issues] == ["warning"]
    assert "no matching call" in bundle.issues[0].reason
    screenshot = bundle.messages[-1].text
    assert screenshot == "Here is a screenshot:\n\n[image: image/png, 70 bytes]"


def test_the_same_file_read_twice_from_different_folders_gives_identical_bundles(
    tmp_path: Path,
) -> None:
    for name in ("rewind_and_set.jsonl", "checkpoint.json"):
        copies = []
        for folder in ("first", "second"):
            (tmp_path / folder).mkdir(exist_ok=True)
            copies.append(shutil.copy(FIXTURES / name, tmp_path / folder / f"{folder}-{name}"))
        one, two = (read(path).bundles for path in copies)
        assert [without_location(b) for b in one] == [without_location(b) for b in two]


def test_a_broken_line_is_reported_with_its_number_and_the_rest_is_read(tmp_path: Path) -> None:
    lines = (FIXTURES / "rewind_and_set.jsonl").read_text().splitlines()
    lines.insert(2, '{"id": "broken", "type": "user", "content": ')
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = read(path)
    assert [(i.line, i.severity) for i in result.errors()] == [(3, "error")]
    assert "invalid JSON" in result.errors()[0].reason
    assert result.messages == expected_counts(FIXTURES / "rewind_and_set.jsonl")[0]


def test_an_unknown_rewind_target_rewinds_everything_with_a_warning(tmp_path: Path) -> None:
    text = (FIXTURES / "subagent.jsonl").read_text() + '{"$rewindTo": "no-such-id"}\n'
    path = tmp_path / "session.jsonl"
    path.write_text(text)
    result = read(path)
    assert [i.severity for i in result.issues] == ["warning"]
    assert "no-such-id" in result.issues[0].reason
    assert all(not m.on_active_branch for m in result.bundles[0].messages)


def test_a_document_that_is_not_json_gives_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text('{"sessionId": "x", "projectHash": "y", "messages": [')
    result = read(path, format_name="gemini_cli")
    assert result.bundles == []
    assert len(result.errors()) == 1
    assert "invalid JSON" in result.errors()[0].reason


def test_a_message_that_is_not_an_object_is_skipped_with_its_index(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "checkpoint.json").read_text())
    document.insert(1, "not a message")
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(document))
    result = read(path, format_name="gemini_cli")
    assert [i.reason for i in result.errors()] == [
        "[1]: message is a string, expected an object; skipped"
    ]
    assert len(result.bundles) == 1


def test_detection_reads_the_content_not_the_file_name(tmp_path: Path) -> None:
    for name in FIXTURE_FILES:
        renamed = shutil.copy(name, tmp_path / f"{name.stem}.data")
        assert detected_format(Path(renamed)) == "gemini_cli"
