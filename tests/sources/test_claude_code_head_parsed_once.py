"""A Claude Code file's head records are parsed once per import, and only as far as
detection needs them: detection keeps what planning and reading ask of them (the file's
role, whether it is one JSON document) on the sample; planning and reading do not parse
the head again, and a lazy look at the first records answers as the whole sample does."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from proctor.sources import default_adapters, plan_import, read_unit
from proctor.sources._source import Sample
from proctor.sources.claude_code._layout import (
    AGENT_PREFIX,
    FileRole,
    bare_name,
    layout_parent_session,
    role_of,
    session_id_for,
)
from proctor.sources.claude_code._values import as_str
from proctor.transcript import ConversationBundle


def _head_lines(path: Path) -> int:
    """The lines of a file's sample that hold anything (what planning may parse)."""
    return sum(1 for line in Sample(path).head.split(b"\n") if line.strip())


def _sessions(transcripts_dir: Path, target: Path) -> Path:
    found = sorted((transcripts_dir / "claude-code").rglob("*.jsonl"))
    sessions = [p for p in found if "subagents" not in p.parts and p.stat().st_size > 0][:6]
    for number, path in enumerate(sessions):
        shutil.copy(path, target / f"{number}-{path.name}")
    return target


def test_planning_and_reading_parse_each_head_once(
    transcripts_dir: Path, tmp_path: Path, head_parses: list[Path]
) -> None:
    folder = _sessions(transcripts_dir, tmp_path)
    plan = plan_import([folder], default_adapters())
    assert plan.units
    assert head_parses  # detection parsed the heads
    assert len(head_parses) <= sum(_head_lines(path) for path in folder.iterdir())
    head_parses.clear()
    bundles = [
        item
        for adapter, unit in plan.units
        for item in read_unit(adapter, unit)
        if isinstance(item, ConversationBundle)
    ]
    assert bundles
    assert head_parses == []


def test_a_unit_read_without_its_plan_reads_the_same(transcripts_dir: Path, tmp_path: Path) -> None:
    folder = _sessions(transcripts_dir, tmp_path)
    plan = plan_import([folder], default_adapters())
    for adapter, unit in plan.units:
        planned = list(read_unit(adapter, unit))
        bare = type(unit)(unit.path, unit.related)  # no sample: the adapter samples again
        assert list(read_unit(adapter, bare)) == planned


def test_a_session_named_by_its_id_is_recognised_from_its_first_records(
    transcripts_dir: Path, tmp_path: Path, head_parses: list[bytes]
) -> None:
    session = next(
        path
        for path in sorted((transcripts_dir / "claude-code").rglob("*.jsonl"))
        if "subagents" not in path.parts and _head_lines(path) > 20
    )
    copy = tmp_path / session.name
    shutil.copy(session, copy)
    plan = plan_import([copy], default_adapters())
    assert [unit.path for _, unit in plan.units] == [copy]
    assert len(head_parses) < _head_lines(copy)  # not the whole sample


def _samples(transcripts_dir: Path) -> list[Path]:
    return sorted(
        path for path in transcripts_dir.rglob("*") if path.is_file() and path.stat().st_size
    )


def test_first_records_are_the_sample_records_prefix(transcripts_dir: Path) -> None:
    for path in _samples(transcripts_dir):
        whole = Sample(path).records
        for count in (1, 2, 3, 41):
            assert Sample(path).first_records(count) == whole[:count], path
        assert list(Sample(path).iter_records()) == whole, path


_CONTENT = {"user", "assistant", "system", "attachment", "progress"}


def _role_from_every_record(path: Path, records: list[dict[str, Any]]) -> FileRole:
    """The role as read before the lazy reading: from every sampled record."""
    first = next((r for r in records if as_str(r.get("type")) in _CONTENT), None)
    agent_id = as_str(first.get("agentId")) if first is not None else None
    layout_session = layout_parent_session(path)
    sessions = [s for r in records if (s := as_str(r.get("sessionId"))) is not None]
    if layout_session is not None or (
        first is not None and first.get("isSidechain") is True and agent_id is not None
    ):
        agent_id = agent_id or bare_name(path).removeprefix(AGENT_PREFIX)
        return FileRole(True, layout_session or (sessions[0] if sessions else None), agent_id)
    return FileRole(False, session_id_for(path, sessions))


def test_a_file_role_read_lazily_is_the_role_of_its_whole_sample(transcripts_dir: Path) -> None:
    for path in _samples(transcripts_dir / "claude-code"):
        whole = _role_from_every_record(path, Sample(path).records)
        assert role_of(path, Sample(path).iter_records()) == whole, path
        assert role_of(path, Sample(path).records) == whole, path


def test_telling_prose_from_json_lines_parses_only_its_first_lines(
    tmp_path: Path, head_parses: list[bytes]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"line {number} of a note, not JSON\n" for number in range(500)))
    sample = Sample(notes)
    assert sample.is_jsonl is False
    assert len(head_parses) <= 8  # the leading lines is_jsonl looks at, each once
