"""Bundles travel from worker processes to the writer by pickle, as the rows the store
writes (``conversation_rows``): each comes back equal, field for field, and without
Python's per-object field lookup of slotted dataclasses."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from proctor.ingest import _reading
from proctor.sources import default_adapters, plan_import
from proctor.store import ConversationRows, conversation_rows
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


def test_every_conversation_s_rows_come_back_equal(transcripts_dir: Path) -> None:
    plan = plan_import([transcripts_dir], default_adapters())
    rows = [
        item
        for adapter, unit in plan.units
        for item in _reading.read_rows(adapter, unit, None)
        if isinstance(item, ConversationRows)
    ]
    assert len(rows) > 20
    assert any(r.tasks for r in rows) and any(r.subagent_run is not None for r in rows)
    for one in rows:
        back = pickle.loads(pickle.dumps(one, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == one
        assert type(back) is ConversationRows


def test_a_bundle_s_rows_are_one_per_prepared_source_in_its_order(transcripts_dir: Path) -> None:
    for prepared in _prepared(transcripts_dir):
        if not isinstance(prepared, PreparedBundle):
            continue
        rows = conversation_rows(prepared)
        assert [(s[0], s[1], s[2], s[3], s[4]) for s in rows.sources] == [
            (s.source_type, s.source_id, s.fingerprint, s.content_hash, s.redactions)
            for s in prepared.sources
        ]
        assert rows.messages == len(prepared.bundle.messages)
        assert rows.tool_calls == len(prepared.bundle.tool_calls)
        assert not rows.append
