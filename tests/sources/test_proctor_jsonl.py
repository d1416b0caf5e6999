"""Proctor's own JSON Lines format (SPEC ING-1, ING-2, ING-3, ING-6, ING-9; docs/proctor-jsonl.md)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import prepare_bundle
from proctor.sources.jsonl._schema import LINE_MODELS
from proctor.transcript import ConversationBundle
from tests.sources.helpers import detected_format, read

FIXTURES = Path(__file__).parent / "fixtures" / "proctor_jsonl"
EXAMPLE = FIXTURES / "release_bot.jsonl"
DOC = Path(__file__).resolve().parents[2] / "docs" / "proctor-jsonl.md"
EVENT_TYPES = [name for name in LINE_MODELS if name != "header"]


def example_lines() -> list[dict[str, Any]]:
    """The example file parsed by the test itself, independently of the adapter."""
    return [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]


def write_lines(tmp_path: Path, *records: dict[str, Any] | str, name: str = "events.jsonl") -> Path:
    """A JSON Lines file of ``records`` (strings are written as they are)."""
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def bundle_named(bundles: list[ConversationBundle], conversation_id: str) -> ConversationBundle:
    """The bundle of the producer's conversation id."""
    return next(b for b in bundles if b.conversation.external_id == conversation_id)


def msg(
    message_id: str, text: str = "hello", conversation_id: str = "c1", **extra: Any
) -> dict[str, Any]:
    """A valid message line."""
    return {
        "type": "message",
        "conversation_id": conversation_id,
        "message_id": message_id,
        "role": extra.pop("role", "user"),
        "text": text,
        **extra,
    }


# --- the example file --------------------------------------------------------------------


def test_example_file_is_detected_as_proctor_jsonl() -> None:
    assert detected_format(EXAMPLE) == "proctor_jsonl"


def test_example_file_uses_every_line_type() -> None:
    assert {line["type"] for line in example_lines()} == set(LINE_MODELS)


def test_example_file_imports_one_bundle_per_conversation_without_issues() -> None:
    lines = example_lines()
    conversations = {line["conversation_id"] for line in lines if "conversation_id" in line}

    result = read(EXAMPLE)

    assert result.issues == []
    assert {b.conversation.external_id for b in result.bundles} == conversations
    assert {b.conversation.format for b in result.bundles} == {"proctor_jsonl"}


def test_example_file_imports_each_event_once_per_id() -> None:
    lines = example_lines()
    result = read(EXAMPLE)

    for conversation_id in {line["conversation_id"] for line in lines if "conversation_id" in line}:
        own = [line for line in lines if line.get("conversation_id") == conversation_id]

        def ids(kind: str, key: str, own: list[dict[str, Any]] = own) -> set[str]:
            return {line[key] for line in own if line["type"] == kind}

        bundle = bundle_named(result.bundles, conversation_id)
        assert len(bundle.messages) == len(ids("message", "message_id"))
        assert len(bundle.tool_calls) == len(ids("tool_call", "call_id"))
        assert len(bundle.tasks) == len(ids("task", "task_id"))
        assert len(bundle.task_events) == len(ids("task_event", "event_id"))


def test_messages_keep_the_order_in_which_their_ids_first_appear() -> None:
    lines = example_lines()
    first_seen: list[str] = []
    for line in lines:
        if line["type"] == "message" and line["conversation_id"] == "rel-2025-06-12":
            first_seen += [] if line["message_id"] in first_seen else [line["message_id"]]

    bundle = bundle_named(read(EXAMPLE).bundles, "rel-2025-06-12")

    assert [m.source_id for m in bundle.messages] == [
        f"pj:rel-2025-06-12:msg:{message_id}" for message_id in first_seen
    ]


def test_each_message_follows_the_previous_one_when_no_parent_is_given() -> None:
    bundle = bundle_named(read(EXAMPLE).bundles, "rel-2025-06-12")

    parents = [m.parent_source_id for m in bundle.messages]

    assert parents == [None] + [m.source_id for m in bundle.messages[:-1]]


def test_a_resent_message_is_one_message_with_the_last_text() -> None:
    revisions = [
        line for line in example_lines() if line["type"] == "message" and line["message_id"] == "m4"
    ]
    assert len(revisions) == 2 and revisions[0]["text"] != revisions[1]["text"]

    bundle = bundle_named(read(EXAMPLE).bundles, "rel-2025-06-12")
    m4 = [m for m in bundle.messages if m.source_id == "pj:rel-2025-06-12:msg:m4"]

    assert len(m4) == 1
    assert m4[0].text == revisions[-1]["text"]


def test_a_revision_keeps_the_source_id_and_changes_the_fingerprint(tmp_path: Path) -> None:
    first = write_lines(tmp_path, msg("m1", "The build is green."), name="first.jsonl")
    revised = write_lines(
        tmp_path,
        msg("m1", "The build is green."),
        msg("m1", "The build is red: 2 tests fail."),
        name="revised.jsonl",
    )

    before = prepare_bundle(read(first).bundles[0]).sources[0]
    after = prepare_bundle(read(revised).bundles[0]).sources[0]

    assert before.source_id == after.source_id == "pj:c1:msg:m1"
    assert before.fingerprint != after.fingerprint


def test_reading_the_same_file_twice_gives_identical_bundles() -> None:
    assert read(EXAMPLE).bundles == read(EXAMPLE).bundles


def test_a_late_tool_result_completes_its_call() -> None:
    lines = example_lines()
    call_line = next(
        i
        for i, line in enumerate(lines)
        if line.get("call_id") == "c1"
        and line["type"] == "tool_call"
        and line["conversation_id"] == "rel-2025-06-12"
    )
    result_line = next(
        i
        for i, line in enumerate(lines)
        if line.get("call_id") == "c1"
        and line["type"] == "tool_result"
        and line["conversation_id"] == "rel-2025-06-12"
    )
    result = lines[result_line]
    assert result_line - call_line > 5  # other conversations' lines come in between

    bundle = bundle_named(read(EXAMPLE).bundles, "rel-2025-06-12")
    call = next(c for c in bundle.tool_calls if c.call_id == "c1")

    assert call.status == result["status"] == "error"
    assert call.exit_code == result["exit_code"]
    assert call.result_text == result["output"]
    assert call.message_source_id == "pj:rel-2025-06-12:msg:m3"
    assert call.attributes["duration_ms"] == result["attributes"]["duration_ms"]


def test_interleaved_conversations_keep_their_own_ids() -> None:
    result = read(EXAMPLE)
    main = bundle_named(result.bundles, "rel-2025-06-12")
    child = bundle_named(result.bundles, "rel-2025-06-12/changelog")

    assert all(m.source_id.startswith("pj:rel-2025-06-12:msg:") for m in main.messages)
    assert all(m.source_id.startswith("pj:rel-2025-06-12/changelog:msg:") for m in child.messages)
    # Both conversations have a message "m1" and a call "c1"; namespacing keeps them apart.
    assert {m.source_id for m in main.messages}.isdisjoint(m.source_id for m in child.messages)


def test_a_subagent_run_links_the_child_to_the_parent_conversation_and_call() -> None:
    runs = [line for line in example_lines() if line["type"] == "subagent_run"]
    last = runs[-1]

    result = read(EXAMPLE)
    child = bundle_named(result.bundles, last["conversation_id"])

    assert child.conversation.kind == "subagent"
    assert child.conversation.parent_conversation_id == f"pj:{last['parent_conversation_id']}"
    assert child.subagent_run is not None
    assert child.subagent_run.parent_tool_call_id == (
        f"pj:{last['parent_conversation_id']}:call:{last['parent_call_id']}"
    )
    # Fields of the later line win; fields it left out keep the first line's values.
    assert child.subagent_run.status == last["status"]
    assert child.subagent_run.agent_type == runs[0]["agent_type"]
    assert child.subagent_run.total_tokens == last["total_tokens"]
    parent = bundle_named(result.bundles, last["parent_conversation_id"])
    assert child.subagent_run.parent_tool_call_id in {c.source_id for c in parent.tool_calls}


def test_parents_are_yielded_before_their_subagents() -> None:
    kinds = [b.conversation.kind for b in read(EXAMPLE).bundles]

    assert kinds == sorted(kinds, key=lambda kind: kind == "subagent")


def test_description_lines_update_only_the_fields_they_set() -> None:
    tasks = [line for line in example_lines() if line["type"] == "task"]
    bundle = bundle_named(read(EXAMPLE).bundles, "rel-2025-06-12")
    task = bundle.tasks[0]

    assert task.status == tasks[-1]["status"]
    assert task.title == tasks[0]["title"]
    assert task.goal == tasks[0]["goal"]
    assert bundle.conversation.title == "Cut release 2.8.0"
    assert bundle.conversation.ended_at == datetime(2025, 6, 12, 9, 1, tzinfo=UTC)


def test_attachments_become_placeholders_with_type_and_size() -> None:
    line = next(line for line in example_lines() if line.get("attachments"))
    attachment = line["attachments"][0]
    bundle = bundle_named(read(EXAMPLE).bundles, line["conversation_id"])
    message = next(m for m in bundle.messages if m.source_id.endswith(f":msg:{line['message_id']}"))

    assert message.text == (
        f"{line['text']}\n\n[image: {attachment['media_type']}, "
        f"{attachment['size_bytes']} bytes, {attachment['name']}]"
    )


def test_message_kinds_default_from_roles(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        msg("s", role="system"),
        msg("d", role="developer"),
        msg("u", role="user"),
        msg("a", role="assistant"),
        msg("t", role="tool"),
        msg("x", role="user", kind="injected"),
    )

    kinds = [m.kind for m in read(path).bundles[0].messages]

    assert kinds == ["instructions", "instructions", "prompt", "reply", "injected", "injected"]


def test_a_tool_call_without_message_id_belongs_to_the_latest_assistant_message(
    tmp_path: Path,
) -> None:
    path = write_lines(
        tmp_path,
        msg("a1", role="assistant"),
        msg("u2"),
        {"type": "tool_call", "conversation_id": "c1", "call_id": "k1", "name": "ls"},
    )

    call = read(path).bundles[0].tool_calls[0]

    assert call.message_source_id == "pj:c1:msg:a1"
    assert call.status == "pending"
    assert call.arguments == {}


def test_times_are_stored_in_utc_and_unix_seconds_are_accepted(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        msg("m1", created_at="2025-06-12T11:00:00+02:00"),
        msg("m2", created_at=1749726000),
    )

    messages = read(path).bundles[0].messages

    assert messages[0].created_at == datetime(2025, 6, 12, 9, 0, tzinfo=UTC)
    assert messages[1].created_at == datetime(2025, 6, 12, 11, 0, tzinfo=UTC)
    assert all(m.created_at is not None and m.created_at.tzinfo is UTC for m in messages)


def test_colons_in_producer_ids_cannot_collide(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        msg("x:msg:y", conversation_id="a"),
        msg("y", conversation_id="a:msg:x"),
    )

    ids = {m.source_id for b in read(path).bundles for m in b.messages}

    assert ids == {"pj:a:msg:x%3Amsg%3Ay", "pj:a%3Amsg%3Ax:msg:y"}


# --- bad input -----------------------------------------------------------------------------

TYPES = "header, conversation, message, tool_call, tool_result, task, task_event, subagent_run"
TIME_HINT = "expected an ISO-8601 time with a timezone, e.g. 2025-06-12T09:00:00Z"

VALIDATION_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "no type",
        {"conversation_id": "c1"},
        f'field "type": required but missing; expected one of {TYPES}',
    ),
    (
        "unknown type",
        {"type": "reply", "conversation_id": "c1"},
        f'field "type": expected one of {TYPES}',
    ),
    (
        "missing field",
        {"type": "message", "conversation_id": "c1", "role": "user", "text": "x"},
        'field "message_id": required but missing',
    ),
    (
        "missing conversation",
        {"type": "task", "task_id": "t"},
        'field "conversation_id": required but missing',
    ),
    (
        "closed set",
        msg("m1", role="bot"),
        'field "role": expected one of user, assistant, system, developer, tool',
    ),
    (
        "closed set in result",
        {"type": "tool_result", "conversation_id": "c1", "call_id": "k", "status": "failed"},
        'field "status": expected one of ok, error, interrupted, rejected',
    ),
    ("string expected", msg("m1", text=42), 'field "text": expected a string'),
    (
        "number as string",
        {"type": "tool_result", "conversation_id": "c1", "call_id": "k", "exit_code": "1"},
        'field "exit_code": expected a whole number',
    ),
    (
        "negative count",
        msg("m1", usage={"output_tokens": -3}),
        'field "usage.output_tokens": expected a number >= 0',
    ),
    ("object expected", msg("m1", usage=[1]), 'field "usage": expected a JSON object'),
    (
        "array expected",
        msg("m1", attachments={"media_type": "image/png"}),
        'field "attachments": expected a JSON array',
    ),
    (
        "empty id",
        {"type": "tool_call", "conversation_id": "c1", "call_id": "", "name": "ls"},
        'field "call_id": must not be empty',
    ),
    ("control characters", msg("m\n1"), 'field "message_id": must not contain control characters'),
    (
        "naive time",
        msg("m1", created_at="2025-06-12T09:00:00"),
        f'field "created_at": {TIME_HINT} (this one has none)',
    ),
    ("not a time", msg("m1", created_at="yesterday"), f'field "created_at": {TIME_HINT}'),
    (
        "bad media type",
        msg("m1", attachments=[{"media_type": "png", "size_bytes": 3}]),
        'field "attachments[0].media_type": expected a media type such as image/png',
    ),
    (
        "misspelt field",
        {"type": "task", "conversation_id": "c1", "task_id": "t", "titel": "x"},
        'field "titel": unknown field (check the spelling); allowed fields: conversation_id, type, task_id, title, goal, status, created_at, completed_at, attributes',
    ),
    (
        "misspelt nested field",
        msg("m1", usage={"input": 3}),
        'field "usage.input": unknown field (check the spelling); allowed fields: input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens',
    ),
    (
        "hidden reasoning",
        msg("m1", role="assistant", thinking="secret plan"),
        'field "thinking": hidden reasoning is not part of the format and is never stored; send only visible text',
    ),
    (
        "hidden reasoning content",
        msg("m1", role="assistant", reasoning_content="secret plan"),
        'field "reasoning_content": hidden reasoning is not part of the format and is never stored; send only visible text',
    ),
    (
        "hidden reasoning in attributes",
        msg("m1", attributes={"reasoning": "secret plan"}),
        'field "attributes": key "reasoning" would carry hidden reasoning, which Proctor never stores; send only visible text',
    ),
]


@pytest.mark.parametrize(
    ("record", "reason"),
    [(record, reason) for _, record, reason in VALIDATION_CASES],
    ids=[case for case, _, _ in VALIDATION_CASES],
)
def test_an_invalid_line_is_reported_with_its_line_and_field(
    tmp_path: Path, record: dict[str, Any], reason: str
) -> None:
    path = write_lines(tmp_path, msg("ok1"), record, msg("ok2"))

    result = read(path, format_name="proctor_jsonl")

    assert [str(issue) for issue in result.issues] == [f"{path}:2: {reason}"]
    assert [m.source_id for m in result.bundles[0].messages] == ["pj:c1:msg:ok1", "pj:c1:msg:ok2"]


def test_every_problem_on_a_line_is_reported_separately(tmp_path: Path) -> None:
    path = write_lines(tmp_path, msg("m1", role="bot", text=7, created_at="soon"))

    reasons = [issue.reason for issue in read(path, format_name="proctor_jsonl").issues]

    assert reasons == [
        'field "role": expected one of user, assistant, system, developer, tool',
        'field "text": expected a string',
        f'field "created_at": {TIME_HINT}',
    ]
    assert all(issue.line == 1 for issue in read(path, format_name="proctor_jsonl").issues)


def test_hidden_reasoning_never_reaches_a_bundle(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        msg("m1", role="assistant", text="Visible answer.", thinking="hidden plan"),
        msg("m2", role="assistant", text="Another visible answer."),
    )

    result = read(path)

    assert "hidden plan" not in repr(result.bundles)
    assert [m.text for b in result.bundles for m in b.messages] == ["Another visible answer."]


def test_broken_and_non_object_lines_do_not_stop_the_import(tmp_path: Path) -> None:
    path = write_lines(tmp_path, msg("m1"), "{not json", "[1, 2]", msg("m2"))

    result = read(path)

    assert [(issue.line, issue.reason) for issue in result.issues] == [
        (2, "invalid JSON (unexpected character, expected a string key at column 2); line skipped"),
        (3, "expected a JSON object, got an array; line skipped"),
    ]
    assert len(result.bundles[0].messages) == 2


def test_an_unsupported_version_imports_nothing(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path, {"type": "header", "format": "proctor-jsonl", "version": 2}, msg("m1")
    )

    result = read(path)

    assert result.bundles == []
    assert [str(issue) for issue in result.issues] == [
        f'{path}:1: field "version": version 2 is not supported (this Proctor reads version 1); '
        "upgrade Proctor to import this file"
    ]


def test_a_header_after_the_first_line_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path, msg("m1"), {"type": "header", "format": "proctor-jsonl", "version": 9}
    )

    result = read(path)

    assert [(i.line, i.severity) for i in result.issues] == [(2, "warning")]
    assert len(result.bundles[0].messages) == 1


def test_a_tool_result_without_its_call_is_reported_and_skipped(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        msg("m1"),
        {"type": "tool_result", "conversation_id": "c1", "call_id": "ghost", "output": "x"},
    )

    bundle = read(path).bundles[0]

    assert bundle.tool_calls == ()
    assert [(i.line, i.severity, i.reason) for i in bundle.issues] == [
        (
            2,
            "warning",
            'tool_result for call "ghost" has no tool_call line in this file; '
            "the result was skipped (send the tool_call line too)",
        )
    ]


def test_links_to_things_outside_the_file_are_kept_with_a_warning(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        msg("m2", parent_message_id="m1"),
        {
            "type": "task_event",
            "conversation_id": "c1",
            "event_id": "e1",
            "task_id": "t9",
            "kind": "note",
        },
        {
            "type": "subagent_run",
            "conversation_id": "c1",
            "parent_conversation_id": "p0",
            "parent_call_id": "k0",
        },
    )

    bundle = read(path).bundles[0]

    assert bundle.messages[0].parent_source_id == "pj:c1:msg:m1"
    assert bundle.task_events[0].task_id == "pj:c1:task:t9"
    assert bundle.conversation.parent_conversation_id == "pj:p0"
    assert [i.line for i in bundle.issues] == [1, 2, 3]
    assert {i.severity for i in bundle.issues} == {"warning"}


# --- detection -----------------------------------------------------------------------------


def test_a_headerless_file_of_events_is_detected(tmp_path: Path) -> None:
    path = write_lines(tmp_path, *(msg(f"m{i}") for i in range(3)))

    assert detected_format(path) == "proctor_jsonl"


def test_a_header_alone_is_enough_for_detection(tmp_path: Path) -> None:
    path = write_lines(tmp_path, {"type": "header", "format": "proctor-jsonl", "version": 1})

    assert detected_format(path) == "proctor_jsonl"


@pytest.mark.parametrize(
    "records",
    [
        # Claude Code-like records: event-like types without a conversation_id.
        [{"type": "tool_result", "uuid": "u1"}, {"type": "message", "sessionId": "s"}],
        # A conversation_id on records of other types.
        [{"type": "user", "conversation_id": "c"}, {"type": "assistant", "conversation_id": "c"}],
        # A conversation_id that is not a string.
        [{"type": "message", "conversation_id": 7}, {"type": "message", "conversation_id": 8}],
        # Mostly foreign records after one event-looking line.
        [msg("m1"), {"type": "x"}, {"type": "y"}, {"type": "z"}],
    ],
    ids=["no-conversation-id", "foreign-types", "numeric-id", "mostly-foreign"],
)
def test_look_alike_files_are_not_claimed(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    path = write_lines(tmp_path, *records)

    assert detected_format(path) != "proctor_jsonl"


@pytest.mark.shared
@pytest.mark.slow
def test_no_shared_transcript_or_dataset_is_claimed(
    transcripts_dir: Path, datasets_dir: Path
) -> None:
    files = [
        p for folder in (transcripts_dir, datasets_dir) for p in folder.rglob("*") if p.is_file()
    ]
    assert files

    claimed = [p for p in files if detected_format(p) == "proctor_jsonl"]

    assert claimed == []


# --- the documentation ---------------------------------------------------------------------


def test_the_documented_example_is_the_example_file() -> None:
    block = re.search(r"```jsonl\n(.*?)```", DOC.read_text(), re.DOTALL)

    assert block is not None
    assert block.group(1) == EXAMPLE.read_text()


@pytest.mark.parametrize("line_type", list(LINE_MODELS))
def test_the_documentation_lists_every_field_of_every_line_type(line_type: str) -> None:
    section = DOC.read_text().split(f"### `{line_type}`\n", 1)[1].split("\n## ", 1)[0]
    section = section.split("\n### ", 1)[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)

    assert sorted(documented) == sorted(LINE_MODELS[line_type].model_fields)


def test_the_documentation_shows_every_tested_validation_message() -> None:
    doc = DOC.read_text()
    # Each message, without the field name that varies, appears in the doc's table.
    for _, _, reason in VALIDATION_CASES:
        detail = reason.split(": ", 1)[1].split("; allowed fields:")[0]
        if detail.startswith("expected one of"):
            detail = "expected one of"  # the doc shows one closed set as the example
        assert detail in doc, detail
