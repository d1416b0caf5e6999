"""The Claude Code adapter on every file in ../shared/transcripts/claude-code.

Expected counts are derived here from the raw files with plain ``json`` and a few lines
that state each rule, never copied from the adapter's output.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.transcript import ConversationBundle
from tests.sources.helpers import ReadResult, detected_format, read

Record = dict[str, Any]

UNITS: list[tuple[str, ...]] = [
    ("agent-sessions/large.jsonl",),
    ("agent-sessions/schema_drift.jsonl",),
    ("agent-sessions/small.jsonl",),
    ("agent-sessions/subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl",),
    ("claude-code-log-synthetic/async_agents/eb000000-0000-4000-8000-000000000001.jsonl",),
    ("claude-code-log-synthetic/away_summary.jsonl",),
    ("claude-code-log-synthetic/dag_cycle.jsonl",),
    ("claude-code-log-synthetic/dag_fork.jsonl",),
    ("claude-code-log-synthetic/dag_resume.jsonl",),
    ("claude-code-log-synthetic/dag_simple.jsonl",),
    ("claude-code-log-synthetic/dag_within_fork.jsonl",),
    ("claude-code-log-synthetic/dedup_main.jsonl", "claude-code-log-synthetic/dedup_agent.jsonl"),
    ("claude-code-log-synthetic/edge_cases.jsonl",),
    ("claude-code-log-synthetic/hook_attachments.jsonl",),
    ("claude-code-log-synthetic/representative_messages.jsonl",),
    (
        "claude-code-log-synthetic/sidechain_main.jsonl",
        "claude-code-log-synthetic/sidechain_agent.jsonl",
    ),
    ("claude-code-log-synthetic/system_model_change.jsonl",),
    ("claude-code-log-synthetic/teammates/ef000000-0000-4000-8000-000000000001.jsonl",),
    ("claude-code-log/debug_image_message.jsonl",),
    ("claude-code-log/sidechain.jsonl",),
    ("claude-code-log/task_id_linking_real_world_bash.jsonl",),
    (
        "claude-code-log/real_projects/-Users-dain-workspace-claude-code-log-sample/"
        "71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl",
    ),
    (
        "claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/"
        "3680252d-d4e3-4416-bddd-8f5b5b4fdb7f.jsonl",
    ),
    (
        "claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/"
        "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl",
    ),
    (
        "claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/"
        "b25638d7-b104-4f06-a797-70ac33d069ed.jsonl",
    ),
    (
        "claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/agent-3ea04571.jsonl",
    ),
    (
        "claude-code-log/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    ),
    (
        "claude-code-log/real_projects/-src-experiments-claude_p/256ba646-2c15-437a-98e9-4171aafd030e.jsonl",
    ),
    (
        "claude-code-log/real_projects/-src-experiments-claude_p/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl",
    ),
    ("claude-code-transcripts/sample_session.json",),
    ("claude-code-transcripts/sample_session.jsonl",),
    ("marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",),
    ("marot-spotter/short.jsonl",),
    ("marot-spotter/tool_heavy.jsonl",),
]

DANGLING = "is not in this file"
EXPECTED_ISSUES: dict[str, list[tuple[str, int, str]]] = {
    # Schema-coverage fixture: 48 records share the uuid, session id and timestamp
    # "[trimmed for fixture]", one points at itself, and two results answer one call.
    "agent-sessions/small.jsonl": [
        ("warning", 10, "match no open call"),
        ("warning", 42, "parent cycle"),
        ("warning", 42, "unreadable timestamp"),
        ("warning", 47, "reuse a uuid"),
    ],
    # Excerpts: their first record's parent was cut away with the rest of the session.
    "claude-code-log/debug_image_message.jsonl": [("warning", 1, DANGLING)],
    "claude-code-log/sidechain.jsonl": [("warning", 1, DANGLING), ("warning", 8, DANGLING)],
    "claude-code-log-synthetic/away_summary.jsonl": [("warning", 1, DANGLING)],
    "claude-code-log-synthetic/dedup_main.jsonl": [("warning", 1, DANGLING)],
    "claude-code-log-synthetic/sidechain_main.jsonl": [("warning", 1, DANGLING)],
    "claude-code-log-synthetic/sidechain_agent.jsonl": [
        ("warning", 3, DANGLING),
        ("warning", 3, "match no open call"),
    ],
    "claude-code-log-synthetic/system_model_change.jsonl": [("warning", 1, DANGLING)],
    # Deliberately malformed: bare JSON values, a typo'd "contenst", a string message.
    "claude-code-log-synthetic/edge_cases.jsonl": [
        ("error", 10, "no message.content"),
        ("error", 11, "no message object"),
        ("error", 13, "got a string"),
        ("error", 15, "got a number"),
        ("error", 16, "got an array"),
        ("warning", 12, "reuse a uuid"),
        ("warning", 14, 'no "type" field'),
        ("warning", 17, DANGLING),
    ],
}


@pytest.fixture(scope="module")
def root(transcripts_dir: Path) -> Path:
    return transcripts_dir / "claude-code"


def unit_files(root: Path, unit: tuple[str, ...]) -> list[Path]:
    """The unit's files plus the sub-agent files Claude Code keeps beside a session."""
    files = [root / name for name in unit]
    main = files[0]
    subagents = main.parent / main.name.split(".")[0] / "subagents"
    files += sorted(subagents.rglob("agent-*.jsonl")) if subagents.is_dir() else []
    return files


def records_of(path: Path) -> list[Record]:
    """Every JSON-object record of a file (JSON Lines, or the web ``loglines`` export)."""
    if path.suffix == ".json":
        return list(json.loads(path.read_text(encoding="utf-8"))["loglines"])
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def content_of(record: Record) -> Any:
    message = record.get("message")
    return message.get("content") if isinstance(message, dict) else None


def user_text_is_visible(record: Record) -> bool:
    """A user line is a message when it carries text, an image or a bare string."""
    content = content_of(record)
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        (isinstance(b, str) and b.strip())
        or (isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip())
        or (isinstance(b, dict) and b.get("type") in ("image", "document"))
        for b in content
    )


def response_is_visible(record: Record) -> bool:
    """An assistant line shows something when it has non-blank text or a tool call."""
    content = content_of(record)
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        isinstance(b, dict)
        and (
            (b.get("type") == "text" and str(b.get("text", "")).strip())
            or b.get("type") in ("tool_use", "server_tool_use")
        )
        for b in content
    )


def is_agent_file(path: Path, records: list[Record]) -> bool:
    first = records[0] if records else {}
    return "subagents" in path.parts or (
        first.get("isSidechain") is True and bool(first.get("agentId"))
    )


def first_user_text(records: list[Record]) -> str:
    for record in records:
        if record.get("type") == "user":
            content = content_of(record)
            return content.strip() if isinstance(content, str) else ""
    return ""


def expected_counts(files: list[Path]) -> tuple[int, int, int]:
    """(messages, tool calls, sub-agent runs) of a unit, from the raw lines.

    Rules: a user line with visible text is one message; an API response (``message.id``,
    else the line's uuid) with visible text or a tool call is one message however many
    lines it spans; every ``tool_use`` is one call; every sub-agent file is one run except
    Warmup agents (skipped) and ``acompact`` files (compaction, no run); inline ≤1.0
    sub-agents start with a sidechain user line whose parent is null.
    """
    messages = calls_without_id = runs = 0
    call_ids: set[str] = set()
    for path in files:
        records = records_of(path)
        agent = is_agent_file(path, records)
        if agent and first_user_text(records) == "Warmup":
            continue
        if agent:
            runs += 0 if path.name.startswith("agent-acompact") else 1
        else:
            runs += sum(
                1
                for r in records
                if r.get("type") == "user"
                and r.get("isSidechain") is True
                and r.get("parentUuid") is None
            )
        responses: set[str] = set()
        seen: dict[str, list[Record]] = {}
        for position, record in enumerate(records):
            uuid = record.get("uuid")
            if isinstance(uuid, str):
                if record in seen.get(uuid, []):
                    continue  # a verbatim re-written copy
                seen.setdefault(uuid, []).append(record)
            kind = record.get("type")
            if kind == "user" and user_text_is_visible(record):
                messages += 1
            elif kind == "assistant":
                if response_is_visible(record):
                    message_id = record["message"].get("id")
                    responses.add(message_id or record.get("uuid") or f"record {position}")
                content = content_of(record)
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        if block.get("id"):
                            call_ids.add(block["id"])
                        else:
                            calls_without_id += 1
            elif kind == "tool_use":
                calls_without_id += 1
        messages += len(responses)
    return messages, len(call_ids) + calls_without_id, runs


def issues_by_file(result: ReadResult, root: Path) -> dict[str, list[tuple[str, int, str]]]:
    found: dict[str, list[tuple[str, int, str]]] = {}
    every = list(result.issues) + [i for b in result.bundles for i in b.issues]
    for issue in every:
        name = str(Path(issue.path).relative_to(root))
        found.setdefault(name, []).append((issue.severity, issue.line or 0, issue.reason))
    return found


def unit_id(unit: tuple[str, ...]) -> str:
    return unit[0].rsplit("/", 1)[-1]


@pytest.mark.parametrize("unit", UNITS, ids=unit_id)
def test_each_unit_has_exactly_the_messages_calls_and_runs_its_lines_describe(
    root: Path, unit: tuple[str, ...]
) -> None:
    files = unit_files(root, unit)
    result = read(*files)
    messages, calls, runs = expected_counts(files)
    assert (result.messages, result.tool_calls, result.subagents) == (messages, calls, runs)


@pytest.mark.parametrize("unit", UNITS, ids=unit_id)
def test_each_unit_reports_exactly_the_problems_its_input_has(
    root: Path, unit: tuple[str, ...]
) -> None:
    files = unit_files(root, unit)
    found = issues_by_file(read(*files), root)
    for path in files:
        name = str(path.relative_to(root))
        actual = found.get(name, [])
        unmatched = list(actual)
        for severity, line, fragment in EXPECTED_ISSUES.get(name, []):
            match = next(
                (i for i in unmatched if i[:2] == (severity, line) and fragment in i[2]), None
            )
            assert match is not None, (name, severity, line, fragment, actual)
            unmatched.remove(match)
        assert unmatched == [], (name, unmatched)


def test_every_claude_code_file_in_the_shared_folder_is_covered_by_a_unit(root: Path) -> None:
    covered = {p for unit in UNITS for p in unit_files(root, unit)}
    data_files = {
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl") and not p.name.endswith(".meta.json")
    }
    assert data_files == covered


@pytest.mark.parametrize("unit", UNITS, ids=unit_id)
def test_detection_picks_claude_code_for_every_file(root: Path, unit: tuple[str, ...]) -> None:
    for path in unit_files(root, unit):
        assert detected_format(path) == "claude_code", path


def test_detection_leaves_other_formats_and_agent_metadata_alone(
    root: Path, transcripts_dir: Path, datasets_dir: Path
) -> None:
    others = [
        *sorted(transcripts_dir.glob("codex/**/*.jsonl")),
        *sorted(transcripts_dir.glob("gemini-cli/**/*.json*")),
        *sorted(transcripts_dir.glob("otel-genai/**/*.json")),
        *sorted(datasets_dir.glob("agentdojo/*.jsonl"))[:2],
        *sorted(datasets_dir.glob("r-judge/*.json"))[:2],
        *sorted(datasets_dir.glob("who-and-when/**/*.json"))[:2],
        *sorted(root.rglob("*.meta.json")),
    ]
    assert len(others) > 20
    for path in others:
        assert detected_format(path) != "claude_code", path


def all_units(root: Path) -> list[ConversationBundle]:
    return [b for unit in UNITS for b in read(*unit_files(root, unit)).bundles]


def test_reading_the_same_files_twice_gives_identical_ids_and_values(root: Path) -> None:
    first, second = all_units(root), all_units(root)
    assert [b.conversation_id for b in first] == [b.conversation_id for b in second]
    assert first == second


def test_source_ids_are_unique_within_each_conversation(root: Path) -> None:
    for bundle in all_units(root):
        ids = [m.source_id for m in bundle.messages]
        ids += [c.source_id for c in bundle.tool_calls]
        ids += [e.source_id for e in bundle.task_events]
        assert len(ids) == len(set(ids)), bundle.conversation_id


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a bundle: texts, arguments, attributes, titles, run records."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from strings_in(getattr(value, item.name))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


HIDDEN_BLOCKS = ("thinking", "redacted_thinking")


def hidden_reasoning(records: list[Record]) -> list[str]:
    """Reasoning text and signatures, except strings the file also shows in the open.

    (The schema-coverage fixture writes "[trimmed for fixture]" everywhere, hidden or not.)
    """
    hidden = []
    for record in records:
        content = content_of(record) if record.get("type") == "assistant" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in HIDDEN_BLOCKS:
                for key in ("thinking", "signature", "data"):
                    value = block.get(key)
                    if isinstance(value, str) and len(value.strip()) >= 20:
                        hidden.append(value.strip()[:60])
    shown = "\x00".join(visible_strings(records))
    return [h for h in hidden if h not in shown]


def visible_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) and value.get("type") not in HIDDEN_BLOCKS:
        for item in value.values():
            yield from visible_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from visible_strings(item)


@pytest.mark.parametrize("unit", UNITS, ids=unit_id)
def test_hidden_reasoning_appears_in_no_field_of_any_bundle(
    root: Path, unit: tuple[str, ...]
) -> None:
    files = unit_files(root, unit)
    hidden = [h for path in files for h in hidden_reasoning(records_of(path))]
    everything = "\x00".join(s for b in read(*files).bundles for s in strings_in(b))
    for snippet in hidden:
        assert snippet not in everything


def test_the_shared_folder_contains_thinking_blocks_to_drop(root: Path) -> None:
    hidden = [
        h for unit in UNITS for p in unit_files(root, unit) for h in hidden_reasoning(records_of(p))
    ]
    assert len(hidden) >= 20


def test_a_folder_walk_reads_every_sub_agent_file_once_and_never_repeats_a_conversation(
    root: Path,
) -> None:
    result = read(root)
    ids = [b.conversation_id for b in result.bundles]
    assert len(ids) == len(set(ids))
    agent_origins = [b.origin for b in result.bundles if b.conversation.kind != "main"]
    from_files = [o for o in agent_origins if o is not None and "sidechain.jsonl" not in o]
    assert len(from_files) == len(set(from_files))
    per_unit = sum(len(read(*unit_files(root, unit)).bundles) for unit in UNITS)
    assert len(result.bundles) == per_unit
