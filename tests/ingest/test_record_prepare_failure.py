"""A record the importer cannot prepare is an error naming it; the rest of its file is
imported (issue 19 point 6: one record never ends the run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import proctor.ingest._reading as reading
from proctor.ingest import ingest
from proctor.sources import prepare_imported_bundle
from proctor.store import open_store
from proctor.transcript import ConversationBundle, PreparedBundle


def test_a_record_that_cannot_be_prepared_is_named_and_its_neighbours_are_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        {
            "id": number,
            "profile": "",
            "contents": [
                [
                    {"role": "user", "content": f"Question {number}?"},
                    {"role": "agent", "thought": "", "action": "Final Answer: yes"},
                ]
            ],
            "label": 0,
            "risk_description": "",
        }
        for number in range(3)
    ]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    real = prepare_imported_bundle

    def failing(bundle: ConversationBundle, *args: Any) -> PreparedBundle:
        if bundle.conversation_id == "rjudge:1":
            raise OverflowError("Integer exceeds 64-bit range")
        return real(bundle, *args)

    monkeypatch.setattr(reading, "prepare_imported_bundle", failing)
    store = open_store(tmp_path / "proctor.db")
    try:
        report = ingest(store, [path], format_name="r_judge")
        stored = sorted(c.conversation_id for c in store.list_conversations())
    finally:
        store.close()
    assert stored == ["rjudge:0", "rjudge:2"]
    (error,) = report.errors
    assert "rjudge:1" in error.reason and "64-bit" in error.reason
