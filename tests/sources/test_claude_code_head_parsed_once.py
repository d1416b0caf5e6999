"""A Claude Code file's head records are parsed once per import: by detection, which
keeps what planning and reading ask of them (the file's role, whether it is one JSON
document) on the sample; planning and reading do not parse the head again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proctor.sources import _source, default_adapters, plan_import, read_unit
from proctor.sources._source import Sample
from proctor.transcript import ConversationBundle


@pytest.fixture
def head_parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    original = Sample._head_records

    def counting(self: Sample) -> list[dict[str, object]]:
        seen.append(self.path)
        return original(self)

    monkeypatch.setattr(_source.Sample, "_head_records", counting)
    return seen


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
    assert sorted(head_parses) == sorted(folder.iterdir())  # detection, once per file
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
