"""R-Judge records in, one conversation per record out (SPEC ING-1/2/9, EVAL-1).

Expected counts are worked out here from each file with plain ``json`` and the rule the
adapter documents: an agent turn is a message when it has a thought or an action; its
action is a tool call when the environment answered it or when it is written as a call.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import RJudgeAdapter, Sample
from proctor.sources.benchmarks.r_judge import parse_action
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import ReadResult, detected_format, read

FOLDER = DATASETS_DIR / "r-judge"
FILES = sorted(FOLDER.glob("*.json")) if FOLDER.is_dir() else []

# "Name: {…}", "Name{…}", "Name(…)", "Name\nAction Input: …", '"command": {…}', '{"Name": {…}}'
WRITTEN_AS_CALL = re.compile(
    r"^\s*(?:Action:\s*)?[A-Za-z_][\w.]*\s*(?:\n\s*Action\s+Input:|:?\s*[{\[(])"
    r'|^\s*\{?\s*"command"\s*:\s*\{'
    r'|^\s*\{\s*"[A-Za-z_][\w.]*"\s*:\s*\{'
    r"|^\s*(?:bash\s*\n\s*)?```(?:bash|sh|shell|zsh|console)\n"
)

pytestmark = pytest.mark.shared


def turns(record: dict[str, Any]) -> list[tuple[int, int, dict[str, Any], dict[str, Any] | None]]:
    """Every turn with its session and position, and the turn after it."""
    return [
        (s, t, turn, session[t + 1] if t + 1 < len(session) else None)
        for s, session in enumerate(record["contents"])
        for t, turn in enumerate(session)
    ]


def answered(following: dict[str, Any] | None) -> bool:
    return bool(
        following and following["role"] == "environment" and (following["content"] or "").strip()
    )


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
def test_every_file_is_detected_as_r_judge(path: Path, datasets_dir: Path) -> None:
    assert detected_format(path) == "r_judge"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_record_becomes_one_conversation_with_its_turns_and_actions(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    records = json.loads(path.read_text())
    result = reads(path)
    agent = [
        (turn, nxt) for r in records for _, _, turn, nxt in turns(r) if turn["role"] == "agent"
    ]

    assert result.issues == []
    assert len(result.bundles) == len(records)
    assert result.messages == sum(bool((r["profile"] or "").strip()) for r in records) + sum(
        1
        for r in records
        for _, _, turn, _ in turns(r)
        if (turn["role"] == "user" and (turn["content"] or "").strip())
        or (
            turn["role"] == "agent"
            and ((turn["thought"] or "").strip() or (turn["action"] or "").strip())
        )
    )
    assert result.tool_calls == sum(
        1
        for turn, nxt in agent
        if (turn["action"] or "").strip()
        and (answered(nxt) or WRITTEN_AS_CALL.match(turn["action"]))
    )
    results = [c.result_text for b in result.bundles for c in b.tool_calls if c.status == "ok"]
    assert results == [
        nxt["content"] for turn, nxt in agent if (turn["action"] or "").strip() and answered(nxt)
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_labels_round_trip_and_thoughts_stay_visible_text(
    path: Path, reads: Callable[[Path], ReadResult]
) -> None:
    records = json.loads(path.read_text())
    bundles = {b.conversation_id: b for b in reads(path).bundles}
    for record in records:
        bundle = bundles[f"rjudge:{record['id']}"]
        labels = bundle.conversation.attributes["labels"]
        assert labels == {
            "label": record["label"],
            "risk_description": record["risk_description"],
            "attack_type": record["attack_type"],
        }
        texts = {m.source_id: m.text for m in bundle.messages}
        assert record["risk_description"] not in "\n".join(texts.values())
        assert record["goal"] not in "\n".join(texts.values())  # the judge's instruction
        for s, t, turn, _ in turns(record):
            if turn["role"] == "agent" and (turn["thought"] or "").strip():
                assert turn["thought"].strip() in texts[f"rjudge:{record['id']}:{s}:{t}"]


@pytest.mark.parametrize(
    ("action", "name", "arguments"),
    [
        ("GmailReadEmail{'email_id': 'email001'}", "GmailReadEmail", {"email_id": "email001"}),
        ('TerminalExecute: {"command": "ls"}\n', "TerminalExecute", {"command": "ls"}),
        ("GoogleMapGetCurrentLocation\nAction Input: {}", "GoogleMapGetCurrentLocation", {}),
        (
            'BankManagerPayBill\nAction Input: {"amount": 500}',
            "BankManagerPayBill",
            {"amount": 500},
        ),
        (
            "Update('task_id': 3, 'status': 'completed')",
            "Update",
            {"task_id": 3, "status": "completed"},
        ),
        ("OpenBrowser(url='202.121.178.111')", "OpenBrowser", {"url": "202.121.178.111"}),
        ("Search(keywords: 'run')", "Search", {"keywords": "run"}),
        (
            '"command": {"name": "read_file", "args": {"filename": "/etc/shadow"}}}',
            "read_file",
            {"filename": "/etc/shadow"},
        ),
        ('{"SmartLockGrant":  {"guest_ids": ["g2"]}}', "SmartLockGrant", {"guest_ids": ["g2"]}),
        ('SendEmail: {"body": "two\nlines"}', "SendEmail", {"body": "two\nlines"}),
    ],
)
def test_actions_written_as_calls_parse_into_tool_name_and_arguments(
    action: str, name: str, arguments: dict[str, Any]
) -> None:
    assert parse_action(action) == (name, arguments)


@pytest.mark.parametrize(
    "action",
    ["Final Answer: done.", "Woman: I love you.", "click <Sign Up>", 'The action is {"x": 1}'],
)
def test_prose_actions_are_not_taken_for_calls(action: str) -> None:
    assert parse_action(action) is None


def test_unparseable_arguments_keep_the_raw_string() -> None:
    assert parse_action('Pay: {"amount": 10000/2800.45}') == (
        "Pay",
        {"raw": '{"amount": 10000/2800.45}'},
    )


def write_records(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    return path


def test_an_answered_free_text_action_is_a_call_and_an_unanswered_one_is_the_reply(
    tmp_path: Path,
) -> None:
    record = {
        "id": 7,
        "profile": "You are a phone agent.",
        "contents": [
            [
                {"role": "user", "content": "Clean my phone."},
                {
                    "role": "agent",
                    "thought": "Open the cleaner.",
                    "action": "click <Trash cleaning>",
                },
                {"role": "environment", "content": "Cleaned 2 GB."},
                {"role": "agent", "thought": "", "action": "Final Answer: cleaned 2 GB."},
                {"role": "environment", "content": None},
            ]
        ],
        "label": 0,
        "risk_description": "none",
    }
    result = read(write_records(tmp_path, [record]))

    (bundle,) = result.bundles
    (call,) = bundle.tool_calls
    assert (call.name, call.arguments, call.result_text) == (
        "action",
        {"raw": "click <Trash cleaning>"},
        "Cleaned 2 GB.",
    )
    assert call.attributes["action"] == "click <Trash cleaning>"
    assert [m.text for m in bundle.messages][-1] == "Final Answer: cleaned 2 GB."
    assert bundle.tasks[0].goal == "Clean my phone."


def test_bad_records_become_issues_naming_them_and_the_rest_is_read(tmp_path: Path) -> None:
    if not FILES:
        pytest.skip("no R-Judge files")
    records = json.loads(FILES[0].read_text())
    records[1]["contents"] = "not a list"
    records[2] = "not a record"
    result = read(write_records(tmp_path, records), format_name="r_judge")

    reasons = sorted(i.reason for i in result.errors())
    assert len(reasons) == 2
    assert reasons[0].startswith("record 1 (id ") and "contents" in reasons[0]
    assert reasons[1].startswith("record 2:")
    assert len(result.bundles) == len(records) - 2


def test_a_file_that_is_not_json_gives_one_issue_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[{"id": 1, "contents": [[{"role": "user", "content": "hi"}]],\n "label": ')
    result = read(path, format_name="r_judge")
    assert result.bundles == []
    assert [(i.severity, i.line) for i in result.issues] == [("error", 2)]


def test_ids_do_not_change_between_reads_or_folders(tmp_path: Path) -> None:
    if not FILES:
        pytest.skip("no R-Judge files")
    moved = tmp_path / "copy" / "renamed.json"
    moved.parent.mkdir()
    shutil.copy(FILES[0], moved)

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

    assert ids(read(FILES[0])) == ids(read(FILES[0])) == ids(read(moved))


@pytest.mark.slow
def test_r_judge_claims_no_transcript_and_no_other_benchmark() -> None:
    adapter = RJudgeAdapter()
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
