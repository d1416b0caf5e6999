"""AgentDojo trace exports in, one conversation per run out (SPEC ING-1/2/3/9, EVAL-1).

Every expected number is worked out here from the file with plain ``json``, never copied
from the adapter's output.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import AgentDojoAdapter, Sample, prepare_bundle
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import ReadResult, detected_format, read

FOLDER = DATASETS_DIR / "agentdojo"
FILES = sorted(FOLDER.glob("*.jsonl")) if FOLDER.is_dir() else []
LABELS = (
    "name",
    "suite_name",
    "user_task_id",
    "injection_task_id",
    "attack_type",
    "success",
    "security",
)

pytestmark = pytest.mark.shared


def load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header's metadata and the run records, read with plain json."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines[0]["metadata"], lines[1:]


def is_message(message: dict[str, Any]) -> bool:
    """The rule: every non-tool entry with text or tool calls is a message."""
    text = message.get("content") or ""
    return message["role"] != "tool" and bool(text.strip() or message.get("tool_calls"))


@pytest.fixture(scope="module")
def reads() -> Callable[[Path], ReadResult]:
    """Each file read once per module."""
    cache: dict[Path, ReadResult] = {}

    def get(path: Path) -> ReadResult:
        if path not in cache:
            cache[path] = read(path)
        return cache[path]

    return get


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_export_is_detected_as_agentdojo(path: Path, datasets_dir: Path) -> None:
    assert detected_format(path) == "agentdojo"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_run_becomes_one_conversation_with_its_messages_and_tool_calls(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    _, records = load(path)
    result = reads(path)

    assert result.issues == []
    assert len(result.bundles) == len(records)
    assert result.messages == sum(is_message(m) for r in records for m in r["messages"])
    assert result.tool_calls == sum(
        len(m.get("tool_calls") or []) for r in records for m in r["messages"]
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_tool_result_is_paired_with_a_call_of_the_same_tool(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    """Ids in these exports are empty, null or reused, yet each result finds its call."""
    _, records = load(path)
    bundles = {b.conversation.external_id: b for b in reads(path).bundles}
    for record in records:
        results = [
            (i, m["tool_call"]["function"], bool(m.get("error")))
            for i, m in enumerate(record["messages"])
            if m["role"] == "tool"
        ]
        answered = sorted(
            (c.attributes["result_position"], c.name, c.status == "error")
            for c in bundles[str(record["index"])].tool_calls
            if c.status != "pending"
        )
        assert answered == results


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_benchmark_metadata_round_trips_as_labels_and_never_as_text(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    header, records = load(path)
    bundles = {b.conversation.external_id: b for b in reads(path).bundles}
    for record in records:
        bundle = bundles[str(record["index"])]
        conversation = bundle.conversation
        metadata = record["metadata"]
        assert conversation.conversation_id == f"agentdojo:{header['name']}:{record['index']}"
        assert conversation.attributes["labels"] == {k: metadata[k] for k in LABELS}
        assert conversation.attributes["run"] == header
        assert conversation.model == metadata["model"]
        assert bundle.tasks[0].goal == next(
            m["content"] for m in record["messages"] if m["role"] == "user"
        )
        if metadata["injection_task_id"]:
            texts = [m.text for m in bundle.messages] + [
                c.result_text or "" for c in bundle.tool_calls
            ]
            assert not any(metadata["injection_task_id"] in text for text in texts)


def test_tool_call_arguments_stay_objects(reads: Callable[[Path], ReadResult]) -> None:
    if not FILES:
        pytest.skip("no AgentDojo files")
    _, records = load(FILES[0])
    expected = [
        c["function"]["arguments"]
        for r in records
        for m in r["messages"]
        for c in m.get("tool_calls") or []
    ]
    calls = [c for b in reads(FILES[0]).bundles for c in b.tool_calls]
    assert [c.arguments for c in calls] == expected
    assert all(isinstance(c.arguments, dict) for c in calls)


def test_inline_thinking_is_removed_when_bundles_are_prepared(
    reads: Callable[[Path], ReadResult],
) -> None:
    """The adapter keeps raw text; preparation strips ``<thinking>`` (SPEC ING-3)."""
    path = FOLDER / "agentdojo-claude-3-5-sonnet-20241022.jsonl"
    if not path.exists():
        pytest.skip("the Claude 3.5 Sonnet export is not available")
    bundles = [b for b in reads(path).bundles if any("<thinking>" in m.text for m in b.messages)]
    assert bundles
    prepared = prepare_bundle(bundles[0])
    assert prepared.reasoning_removed > 0
    assert not any("<thinking>" in m.text for m in prepared.bundle.messages)


def test_ids_do_not_change_between_reads_or_folders(tmp_path: Path) -> None:
    if not FILES:
        pytest.skip("no AgentDojo files")
    source = min(FILES, key=lambda p: p.stat().st_size)
    moved = tmp_path / "elsewhere" / "renamed.jsonl"
    moved.parent.mkdir()
    shutil.copy(source, moved)

    def ids(result: ReadResult) -> list[str]:
        return [
            source_id
            for b in result.bundles
            for source_id in (
                b.conversation_id,
                *(m.source_id for m in b.messages),
                *(c.source_id for c in b.tool_calls),
            )
        ]

    first, again, elsewhere = ids(read(source)), ids(read(source)), ids(read(moved))
    assert first == again == elsewhere
    assert len(first) == len(set(first))


def test_broken_lines_and_records_become_issues_and_the_rest_is_read(tmp_path: Path) -> None:
    if not FILES:
        pytest.skip("no AgentDojo files")
    lines = min(FILES, key=lambda p: p.stat().st_size).read_text().splitlines()
    broken = json.loads(lines[3])
    broken["messages"] = "not a list"
    lines[2] = lines[2][: len(lines[2]) // 2]  # invalid JSON on line 3
    lines[3] = json.dumps(broken)
    torn = lines[-1][:40]  # the last line cut while being written
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines[:-1]) + "\n" + torn)

    result = read(path, format_name="agentdojo")

    errors = sorted((i.line, i.reason) for i in result.errors())
    assert [line for line, _ in errors] == [3, 4]
    assert "messages" in errors[1][1]
    assert [i.severity for i in result.issues if i.line == len(lines)] == ["warning"]
    assert len(result.bundles) == len(lines) - 1 - 3


@pytest.mark.slow
def test_agentdojo_claims_no_transcript_and_no_other_benchmark() -> None:
    adapter = AgentDojoAdapter()
    others = [
        p
        for folder in (TRANSCRIPTS_DIR, DATASETS_DIR)
        if folder.is_dir()
        for p in sorted(folder.rglob("*.json*"))
        # AgentDojo's own runs, also the reworded copy beside them, are its to claim.
        if not p.parent.name.startswith(FOLDER.name) and p.stat().st_size
    ]
    if not others:
        pytest.skip("shared folders not available")
    assert [p for p in others if adapter.sniff(Sample(p))] == []


def run_line(index: int, messages: list[dict[str, Any]]) -> str:
    metadata = {"suite_name": "banking", "model": "m", "user_task_id": "user_task_0"}
    return json.dumps({"index": index, "messages": messages, "metadata": metadata})


def test_a_result_without_its_call_still_records_what_the_tool_returned(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    orphan = {
        "role": "tool",
        "content": "balance: 10",
        "tool_call_id": None,
        "tool_call": {"function": "get_balance", "args": {"account": "a"}},
        "error": None,
    }
    path.write_text(run_line(1, [{"role": "user", "content": "Balance?"}, orphan]) + "\n")

    result = read(path)

    (bundle,) = result.bundles
    (call,) = bundle.tool_calls
    assert (call.name, call.arguments, call.result_text, call.message_source_id) == (
        "get_balance",
        {"account": "a"},
        "balance: 10",
        None,
    )
    assert [i.severity for i in result.issues] == ["warning"]
    assert "no matching call" in result.issues[0].reason


def test_a_repeated_record_index_keeps_both_runs_apart(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    first = run_line(1, [{"role": "user", "content": "one"}])
    second = run_line(1, [{"role": "user", "content": "two"}])
    path.write_text(f"{first}\n{second}\n")

    result = read(path)

    ids = [b.conversation_id for b in result.bundles]
    assert len(set(ids)) == 2
    assert ids[0] == "agentdojo:m:1"
    assert [(i.severity, i.line) for i in result.issues] == [("warning", 2)]
