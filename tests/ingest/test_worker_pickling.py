"""Bundles travel from worker processes to the writer by pickle: each comes back equal,
field for field, and without Python's per-object field lookup of slotted dataclasses."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from proctor.ingest import _reading
from proctor.sources import default_adapters, plan_import
from proctor.transcript import PreparedBundle, SourceIssue


def _prepared(transcripts_dir: Path) -> list[PreparedBundle | SourceIssue]:
    plan = plan_import([transcripts_dir], default_adapters())
    items: list[PreparedBundle | SourceIssue] = []
    for adapter, unit in plan.units:
        items.extend(_reading.read_prepared(adapter, unit, None))
    return items


def test_every_prepared_bundle_and_issue_comes_back_equal(transcripts_dir: Path) -> None:
    items = _prepared(transcripts_dir)
    bundles = [item for item in items if isinstance(item, PreparedBundle)]
    assert len(bundles) > 20
    assert any(b.bundle.subagent_run is not None for b in bundles)
    assert any(b.bundle.tasks for b in bundles)
    assert any(m.usage is not None for b in bundles for m in b.bundle.messages)
    for item in items:
        back = pickle.loads(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == item
        assert type(back) is type(item)


def test_pickling_a_bundle_looks_up_no_fields(
    transcripts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = next(i for i in _prepared(transcripts_dir) if isinstance(i, PreparedBundle))

    def refused(*_args: object) -> None:
        raise AssertionError("dataclasses.fields called while pickling")

    monkeypatch.setattr(dataclasses, "fields", refused)
    assert pickle.loads(pickle.dumps(bundle)) == bundle
