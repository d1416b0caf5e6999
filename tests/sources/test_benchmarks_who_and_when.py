"""Who&When runs in, one conversation per run out (SPEC ING-1/2/9, EVAL-1).

The key property: ``mistake_step`` N names the message ``ww:<subset>:<question_ID>:N``,
whose text is ``history[N]``, so "the finding cites message N" can be scored.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import Sample, WhoAndWhenAdapter
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import ReadResult, detected_format, read

FOLDER = DATASETS_DIR / "who-and-when"
FILES = sorted(FOLDER.rglob("*.json")) if FOLDER.is_dir() else []
SUBSETS = {"Hand-Crafted": "hand-crafted", "Algorithm-Generated": "algorithm-generated"}

pytestmark = pytest.mark.shared


def expected_id(path: Path, record: dict[str, Any]) -> str:
    # The test may use the folder name to know the subset; the adapter must not.
    return f"ww:{SUBSETS[path.parent.name]}:{record['question_ID']}"


@pytest.fixture(scope="module")
def reads() -> Callable[[Path], ReadResult]:
    """Each file read once per module."""
    cache: dict[Path, ReadResult] = {}

    def get(path: Path) -> ReadResult:
        if path not in cache:
            cache[path] = read(path)
        return cache[path]

    return get


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_run_is_detected_as_who_and_when(path: Path, datasets_dir: Path) -> None:
    assert detected_format(path) == "who_and_when"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_history_entry_and_agent_prompt_becomes_one_message(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    record = json.loads(path.read_text())
    result = reads(path)
    prompts = [p for p in (record.get("system_prompt") or {}).values() if p.strip()]

    assert result.issues == []
    assert len(result.bundles) == 1
    assert result.messages == len(record["history"]) + len(prompts)
    assert result.bundles[0].tasks[0].goal == record["question"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_mistake_step_names_the_message_holding_that_history_entry(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    record = json.loads(path.read_text())
    (bundle,) = reads(path).bundles
    conversation_id = expected_id(path, record)
    labels = bundle.conversation.attributes["labels"]
    step = int(record["mistake_step"])
    texts = {m.source_id: m.text for m in bundle.messages}

    assert bundle.conversation_id == conversation_id
    assert labels["mistake_step"] == step
    assert labels["mistake_agent"] == record["mistake_agent"]
    assert labels["mistake_reason"] == record["mistake_reason"]
    assert labels["ground_truth"] == record["ground_truth"]
    assert texts[f"{conversation_id}:{step}"] == record["history"][step]["content"]
    assert record["mistake_reason"] not in "\n".join(texts.values())


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_acting_agent_is_the_author(path: Path, reads: Callable[[Path], ReadResult]) -> None:
    record = json.loads(path.read_text())
    (bundle,) = reads(path).bundles
    by_id = {m.source_id: m for m in bundle.messages}
    for index, entry in enumerate(record["history"]):
        message = by_id[f"{expected_id(path, record)}:{index}"]
        # Hand-Crafted: "Orchestrator (-> WebSurfer)" is the Orchestrator speaking.
        assert message.author == entry.get("name", entry["role"].split(" (")[0])
        if "(->" in entry["role"]:
            assert message.attributes["addressee"] == entry["role"].split("(->")[1][:-1].strip()
        # A group chat's opening message poses the task: it is the run's prompt. A
        # speaker without a system prompt (the code runner) is a program: its turns are
        # tool output.
        opening = index == 0 and "name" in entry
        program = "name" in entry and entry["name"] not in record.get("system_prompt", {})
        expected = "user" if entry["role"] == "human" or opening else "assistant"
        assert message.role == ("tool" if program and not opening else expected)


@pytest.mark.parametrize(
    "path",
    [p for p in FILES if p.parent.name == "Hand-Crafted"],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_instruction_to_another_agent_is_a_delegated_call_answered_by_its_reply(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    record = json.loads(path.read_text())
    (bundle,) = reads(path).bundles
    prefix = expected_id(path, record)
    calls = {c.message_source_id: c for c in bundle.tool_calls}
    history = record["history"]
    for index, entry in enumerate(history):
        if "(->" not in entry["role"]:
            continue
        agent = entry["role"].split("(->")[1][:-1].strip()
        call = calls[f"{prefix}:{index}"]
        assert call.name == "delegate_to_agent"
        assert call.arguments == {"agent": agent, "instruction": entry["content"]}
        # The reply is the agent's next entry, unless the orchestrator instructs again first.
        later = history[index + 1 :]
        reply = next((e for e in later if e["role"] == agent or e["role"] == entry["role"]), None)
        if reply is not None and reply["role"] == agent:
            assert (call.status, call.result_text) == ("ok", reply["content"])
        else:
            assert (call.status, call.result_text) == ("pending", None)


def test_the_same_question_in_both_subsets_gives_two_conversations(
    reads: Callable[[Path], ReadResult],
) -> None:
    if not FILES:
        pytest.skip("no Who&When files")
    ids = [reads(p).bundles[0].conversation_id for p in FILES]
    questions = [json.loads(p.read_text())["question_ID"] for p in FILES]
    assert len(set(questions)) < len(questions)  # the overlap this test is about
    assert len(set(ids)) == len(FILES)


def test_ids_do_not_change_between_reads_or_folders(tmp_path: Path) -> None:
    if not FILES:
        pytest.skip("no Who&When files")
    moved = tmp_path / "elsewhere" / "run.json"
    moved.parent.mkdir()
    shutil.copy(FILES[0], moved)

    def ids(result: ReadResult) -> list[str]:
        return [
            i
            for b in result.bundles
            for i in (b.conversation_id, *(m.source_id for m in b.messages))
        ]

    assert ids(read(FILES[0])) == ids(read(FILES[0])) == ids(read(moved))


def write(tmp_path: Path, record: Any) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    return path


def test_a_history_that_is_not_a_list_is_an_error_naming_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, {"question": "q", "history": "oops", "mistake_step": "0"})
    result = read(path, format_name="who_and_when")
    assert result.bundles == []
    assert len(result.errors()) == 1
    assert "history" in result.errors()[0].reason


def test_an_out_of_range_mistake_step_is_a_warning_and_the_run_is_read(tmp_path: Path) -> None:
    record = {
        "question": "How many?",
        "question_ID": "q-1",
        "history": [{"role": "human", "content": "How many?"}],
        "mistake_step": "9",
        "mistake_agent": "WebSurfer",
    }
    result = read(write(tmp_path, record))
    assert [i.severity for i in result.issues] == ["warning"]
    assert result.bundles[0].conversation.attributes["labels"]["mistake_step"] == 9


def test_a_truncated_file_is_an_error_with_its_line(tmp_path: Path) -> None:
    if not FILES:
        pytest.skip("no Who&When files")
    text = FILES[0].read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    result = read(path, format_name="who_and_when")
    assert result.bundles == []
    assert [i.severity for i in result.issues] == ["error"]
    assert result.issues[0].line is not None


@pytest.mark.slow
def test_who_and_when_claims_no_transcript_and_no_other_benchmark() -> None:
    adapter = WhoAndWhenAdapter()
    others = [
        p
        for folder in (TRANSCRIPTS_DIR, DATASETS_DIR)
        if folder.is_dir()
        for p in sorted(folder.rglob("*.json*"))
        if FOLDER not in p.parents and p.stat().st_size
    ]
    if not others:
        pytest.skip("shared folders not available")
    assert [p for p in others if adapter.sniff(Sample(p))] == []
