"""LoCoMo samples in, one conversation per sample out (SPEC ING-1/2/9, EVAL-1).

Gold QA evidence ids (``D1:3``) must name messages directly, session dates must become
message times, and the QA itself must stay out of the bundle.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import LocomoAdapter, Sample
from proctor.sources.benchmarks.locomo import parse_session_date
from proctor.transcript import canonical_json
from tests.conftest import DATASETS_DIR, TRANSCRIPTS_DIR
from tests.sources.helpers import ReadResult, detected_format, read

FOLDER = DATASETS_DIR / "locomo"
FILE = FOLDER / "locomo.json"

pytestmark = pytest.mark.shared


def sessions(sample: dict[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Each session's date text and turns."""
    dialogue = sample["conversation"]
    for key, turns in dialogue.items():
        if re.fullmatch(r"session_\d+", key):
            yield dialogue[f"{key}_date_time"], turns


@pytest.fixture(scope="module")
def samples() -> list[dict[str, Any]]:
    if not FILE.exists():
        pytest.skip(f"{FILE} is not available")
    data: list[dict[str, Any]] = json.loads(FILE.read_text())
    return data


@pytest.fixture(scope="module")
def result(samples: list[dict[str, Any]]) -> ReadResult:
    return read(FILE)


def test_the_file_is_detected_as_locomo(samples: list[dict[str, Any]]) -> None:
    assert detected_format(FILE) == "locomo"


def test_each_sample_is_one_conversation_and_each_turn_one_message(
    samples: list[dict[str, Any]], result: ReadResult
) -> None:
    assert result.issues == []
    assert len(result.bundles) == len(samples)
    assert result.messages == sum(len(turns) for s in samples for _, turns in sessions(s))
    assert result.tool_calls == 0


def test_turns_keep_their_dialogue_id_speaker_and_session_date(
    samples: list[dict[str, Any]], result: ReadResult
) -> None:
    bundles = {b.conversation_id: b for b in result.bundles}
    for sample in samples:
        messages = {m.source_id: m for m in bundles[f"locomo:{sample['sample_id']}"].messages}
        for date_text, turns in sessions(sample):
            when = datetime.strptime(date_text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            for turn in turns:
                message = messages[f"locomo:{sample['sample_id']}:{turn['dia_id']}"]
                assert message.author == turn["speaker"]
                assert message.created_at == when
                assert message.text.startswith(turn["text"])
                if turn.get("blip_caption"):
                    assert message.text.endswith(f"[image: {turn['blip_caption']}]")
                else:
                    assert message.text == turn["text"]


def test_gold_evidence_ids_name_messages(samples: list[dict[str, Any]], result: ReadResult) -> None:
    ids = {m.source_id for b in result.bundles for m in b.messages}
    for sample in samples:
        turns = {t["dia_id"] for _, ts in sessions(sample) for t in ts}
        for item in sample["qa"]:
            for evidence in item.get("evidence", []):
                # A few gold ids in the upstream file name no turn at all.
                assert (f"locomo:{sample['sample_id']}:{evidence}" in ids) == (evidence in turns)


def test_qa_and_summaries_stay_out_of_the_bundle(
    samples: list[dict[str, Any]], result: ReadResult
) -> None:
    bundles = {b.conversation_id: b for b in result.bundles}
    for sample in samples:
        bundle = bundles[f"locomo:{sample['sample_id']}"]
        stored = canonical_json(bundle.conversation.attributes)
        assert "labels" not in bundle.conversation.attributes
        assert bundle.conversation.attributes["qa_items"] == len(sample["qa"])
        assert not any(item["question"] in stored for item in sample["qa"])
        assert len(bundle.conversation.attributes["sessions"]) == len(list(sessions(sample)))
        assert bundle.tasks == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("12:30 pm on 1 Jan, 2024", datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),
        ("sometime in May", None),
        ("1:56 pm on 31 February, 2023", None),
    ],
)
def test_session_dates_parse_to_aware_utc(text: str, expected: datetime | None) -> None:
    assert parse_session_date(text) == expected


def test_ids_do_not_change_between_reads_or_folders(
    tmp_path: Path, samples: list[dict[str, Any]]
) -> None:
    moved = tmp_path / "other" / "renamed.json"
    moved.parent.mkdir()
    shutil.copy(FILE, moved)

    def ids(result: ReadResult) -> list[str]:
        return [
            i
            for b in result.bundles
            for i in (b.conversation_id, *(m.source_id for m in b.messages))
        ]

    first = ids(read(FILE))
    assert first == ids(read(FILE)) == ids(read(moved))
    assert len(first) == len(set(first))


def test_a_bad_sample_is_an_issue_and_a_bad_date_a_warning(
    tmp_path: Path, samples: list[dict[str, Any]]
) -> None:
    edited = json.loads(json.dumps(samples[:3]))
    edited[0]["conversation"] = "not an object"
    edited[1]["conversation"]["session_1_date_time"] = "sometime"
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(edited))

    result = read(path, format_name="locomo")

    assert [(i.severity, i.reason.split(":")[0]) for i in result.issues] == [
        ("error", f"sample 0 ({samples[0]['sample_id']!r})"),
        ("warning", f"sample 1 ({samples[1]['sample_id']!r})"),
    ]
    assert len(result.bundles) == 2
    first_session = [m for m in result.bundles[0].messages if m.attributes["session"] == 1]
    assert first_session
    assert all(m.created_at is None for m in first_session)


def test_a_single_sample_object_is_read_too(tmp_path: Path, samples: list[dict[str, Any]]) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(samples[0]))
    result = read(path)
    assert [b.conversation_id for b in result.bundles] == [f"locomo:{samples[0]['sample_id']}"]


@pytest.mark.slow
def test_locomo_claims_no_transcript_and_no_other_benchmark() -> None:
    adapter = LocomoAdapter()
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
