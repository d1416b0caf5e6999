"""AgentRx runs and ground truth in, labelled conversations out (SPEC ING-1/2/9, EVAL-1).

Ground-truth files hold no trajectory. The decision under test: they are recognised as
AgentRx, read together with the trajectory files of the same import, and their labels
are attached to the runs they name; imported alone they give a warning, not an error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import AgentRxAdapter, Sample
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import ReadResult, detected_format, read

FOLDER = DATASETS_DIR / "agentrx"
FILES = sorted(FOLDER.rglob("*.json")) if FOLDER.is_dir() else []
RUN_FILES = [p for p in FILES if isinstance(json.loads(p.read_text())[0].get("traj"), list)]
TRUTH_FILES = [p for p in FILES if p not in RUN_FILES]
FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks" / "agentrx-magentic"
MAGENTIC_LOG = FIXTURES / "5a0c1adf-0000-4000-8000-000000000001.json"
MAGENTIC_TRUTH = FIXTURES / "magentic_ground_truth.json"

pytestmark = pytest.mark.shared


def is_message(item: dict[str, Any]) -> bool:
    """The rule: every non-tool entry with text or tool calls is a message."""
    return item["role"] != "tool" and bool(
        (item.get("content") or "").strip() or item.get("tool_calls")
    )


def run_id(run: dict[str, Any]) -> str:
    return f"agentrx:tau-retail:{run['task_id']}:{run['trial']}"


@pytest.fixture(scope="module")
def everything() -> ReadResult:
    """The whole AgentRx folder read as one import, so labels attach."""
    if not FOLDER.is_dir():
        pytest.skip(f"{FOLDER} is not available")
    return read(FOLDER)


@pytest.fixture(scope="module")
def truth() -> dict[str, dict[str, Any]]:
    """Ground-truth entries by trajectory id, read with plain json (first file wins)."""
    entries: dict[str, dict[str, Any]] = {}
    for path in TRUTH_FILES:
        for entry in json.loads(path.read_text()):
            entries.setdefault(str(entry["trajectory_id"]), entry)
    return entries


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_file_is_detected_as_agentrx(path: Path, datasets_dir: Path) -> None:
    assert detected_format(path) == "agentrx"


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_each_tau_run_becomes_one_conversation_with_its_messages_and_tool_calls(
    path: Path, everything: ReadResult
) -> None:
    runs = json.loads(path.read_text())
    bundles = [b for b in everything.bundles if b.origin == str(path)]
    traj = [item for run in runs for item in run["traj"]]

    assert len(bundles) == len(runs)
    assert sum(len(b.messages) for b in bundles) == sum(is_message(i) for i in traj)
    assert sum(len(b.tool_calls) for b in bundles) == sum(
        len(i.get("tool_calls") or []) for i in traj
    )
    results = [c for b in bundles for c in b.tool_calls if c.status != "pending"]
    assert len(results) == sum(i["role"] == "tool" for i in traj)
    assert sum(c.status == "error" for c in results) == sum(
        i["role"] == "tool" and i["content"].startswith("Error:") for i in traj
    )


def test_the_whole_folder_reads_without_errors(everything: ReadResult) -> None:
    assert everything.errors() == []
    assert everything.issues == []
    ids = [b.conversation_id for b in everything.bundles]
    # The failed-run file repeats 27 runs of the full file with identical content.
    runs = [run for path in RUN_FILES for run in json.loads(path.read_text())]
    assert sorted(set(ids)) == sorted({run_id(run) for run in runs})


def test_ground_truth_labels_attach_to_the_runs_they_name(
    everything: ReadResult, truth: dict[str, dict[str, Any]]
) -> None:
    assert truth
    for bundle in everything.bundles:
        labels = bundle.conversation.attributes["labels"]
        entry = truth.get(bundle.conversation.external_id)
        if entry is None:
            assert set(labels) == {"reward"}
            continue
        assert [f["step_number"] for f in labels["failures"]] == [
            f["step_number"] for f in entry["failures"]
        ]
        assert [f["failure_category"] for f in labels["failures"]] == [
            f["failure_category"] for f in entry["failures"]
        ]
        root = next(
            f for f in entry["failures"] if f["failure_id"] == entry["root_cause"]["failure_id"]
        )
        assert labels["root_cause_step"] == root["step_number"]
        assert labels["root_cause_agent"] == root["failed_agent"]
        assert labels["failure_summary"] == entry["failure_summary"]


def test_every_labelled_failure_step_is_a_message_id(
    everything: ReadResult, truth: dict[str, dict[str, Any]]
) -> None:
    """``step_number`` is the run's own message ``index``, which ends the message id."""
    runs = {run["task_id"]: run for path in RUN_FILES for run in json.loads(path.read_text())}
    bundles = {b.conversation_id: b for b in everything.bundles}
    checked = 0
    for trajectory_id, entry in truth.items():
        run = runs[int(trajectory_id)]
        bundle = bundles[run_id(run)]
        by_index = {item["index"]: item for item in run["traj"]}
        texts = {m.source_id: m.text for m in bundle.messages}
        for failure in entry["failures"]:
            step = failure["step_number"]
            assert texts[f"{run_id(run)}:{step}"] == (by_index[step]["content"] or "")
            checked += 1
    assert checked == sum(len(e["failures"]) for e in truth.values())


def test_labels_never_reach_message_text(
    everything: ReadResult, truth: dict[str, dict[str, Any]]
) -> None:
    for bundle in everything.bundles:
        entry = truth.get(bundle.conversation.external_id)
        if entry is None:
            continue
        text = "\n".join(m.text for m in bundle.messages)
        assert entry["failure_summary"] not in text
        assert all(f["step_reason"] not in text for f in entry["failures"])


@pytest.mark.parametrize("path", TRUTH_FILES, ids=lambda p: p.name)
def test_a_ground_truth_file_alone_gives_a_warning_and_no_conversation(path: Path) -> None:
    result = read(path)
    assert result.bundles == []
    assert [i.severity for i in result.issues] == ["warning"]
    assert "ground-truth" in result.issues[0].reason


def test_the_simulated_users_instruction_is_the_task_goal(everything: ReadResult) -> None:
    runs = {run_id(run): run for path in RUN_FILES for run in json.loads(path.read_text())}
    for bundle in everything.bundles:
        assert bundle.tasks[0].goal == runs[bundle.conversation_id]["info"]["task"]["instruction"]


def test_a_magentic_one_log_is_read_with_agents_as_authors_and_labels_attached() -> None:
    entries = json.loads(MAGENTIC_LOG.read_text())
    entry = json.loads(MAGENTIC_TRUTH.read_text())[0]
    assert detected_format(MAGENTIC_LOG) == "agentrx"

    result = read(MAGENTIC_LOG, MAGENTIC_TRUTH)

    assert result.issues == []
    (bundle,) = result.bundles
    assert bundle.conversation.external_id == MAGENTIC_LOG.stem
    assert [m.author for m in bundle.messages] == [e["role"].split(" (")[0] for e in entries]
    assert [m.text for m in bundle.messages] == [e["content"] for e in entries]
    labels = bundle.conversation.attributes["labels"]
    assert labels["root_cause_step"] == entry["failures"][0]["step_number"]
    assert labels["root_cause_agent"] == entry["failures"][0]["failed_agent"]
    assert bundle.tasks[0].goal == entries[0]["content"]


def test_a_magentic_one_log_gets_the_same_id_under_another_name(tmp_path: Path) -> None:
    moved = tmp_path / "renamed.json"
    shutil.copy(MAGENTIC_LOG, moved)
    first, second = read(MAGENTIC_LOG).bundles[0], read(moved).bundles[0]
    assert first.conversation_id == second.conversation_id
    assert [m.source_id for m in first.messages] == [m.source_id for m in second.messages]


def test_a_plain_role_content_list_is_not_taken_for_a_magentic_one_log(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    )
    assert AgentRxAdapter().sniff(Sample(path)) is False


@pytest.mark.slow
def test_ids_do_not_change_between_reads_or_folders(tmp_path: Path) -> None:
    if not RUN_FILES:
        pytest.skip("no AgentRx run files")
    source = min(RUN_FILES, key=lambda p: p.stat().st_size)
    moved = tmp_path / "copy" / "runs.json"
    moved.parent.mkdir()
    shutil.copy(source, moved)

    def ids(result: ReadResult) -> list[str]:
        return [
            i
            for b in result.bundles
            for i in (
                b.conversation_id,
                *(m.source_id for m in b.messages),
                *(c.source_id for c in b.tool_calls),
            )
        ]

    first = ids(read(source))
    assert first == ids(read(source)) == ids(read(moved))
    assert len(first) == len(set(first))


def test_a_bad_run_becomes_an_issue_naming_it_and_the_rest_is_read(tmp_path: Path) -> None:
    if not RUN_FILES:
        pytest.skip("no AgentRx run files")
    runs = json.loads(min(RUN_FILES, key=lambda p: p.stat().st_size).read_text())
    del runs[0]["traj"]
    runs[1]["traj"][2] = "not a message"
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))

    result = read(path, format_name="agentrx")

    reasons = [i.reason for i in result.errors()]
    assert len(reasons) == 2
    assert reasons[0].startswith("record 0 (task_id ") and "traj" in reasons[0]
    assert reasons[1].startswith("record 1 (task_id ") and "traj[2]" in reasons[1]
    assert len(result.bundles) == len(runs) - 2


def test_agentrx_claims_no_transcript_and_no_other_benchmark() -> None:
    adapter = AgentRxAdapter()
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


def test_forcing_agentrx_on_another_format_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps([{"hello": "world"}]))
    result = read(path, format_name="agentrx")
    assert result.bundles == []
    assert [i.severity for i in result.issues] == ["error"]
