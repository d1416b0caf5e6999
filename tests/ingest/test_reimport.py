"""ING-2 end to end on the real transcripts: re-import writes nothing, edits make revisions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from proctor.ingest import ingest
from proctor.sources import default_adapters, plan_import
from proctor.store import open_store
from proctor.store._schema import metadata
from tests.backends import raw_connection

CONTENT_TABLES = [
    t for t in metadata.sorted_tables if t.name not in {"imports", "import_issues", "import_files"}
]
NOT_TRANSCRIPTS = {"README.md", "PROVENANCE.md", "manifest.json"}


def _dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with raw_connection(db) as connection:
        return {
            table.name: [
                tuple(r)
                for r in connection.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in CONTENT_TABLES
        }


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from tests.conftest import TRANSCRIPTS_DIR

    if not TRANSCRIPTS_DIR.is_dir():
        pytest.skip("../shared/transcripts is not available")
    db = tmp_path_factory.mktemp("reimport") / "proctor.db"
    store = open_store(db)
    report = ingest(store, [TRANSCRIPTS_DIR])
    store.close()
    # Only the deliberately malformed fixture may report errors (see test_claude_code).
    assert {Path(i.path).name for i in report.errors} <= {"edge_cases.jsonl"}, [
        str(i) for i in report.errors[:5]
    ]
    assert report.conversations > 50
    return db, TRANSCRIPTS_DIR


def test_every_shared_transcript_file_is_read_by_an_adapter(imported: tuple[Path, Path]) -> None:
    _, transcripts = imported
    plan = plan_import([transcripts], default_adapters())
    read = {p.resolve() for _, unit in plan.units for p in unit.paths}
    for path in sorted(transcripts.rglob("*")):
        if not path.is_file() or path.name in NOT_TRANSCRIPTS:
            continue
        if "semconv-genai-schemas" in path.parts:
            continue  # JSON Schemas, not transcripts
        if path.name == "schema_drift.jsonl" and "codex" in path.parts:
            continue  # not a rollout: no session_meta, most lines lack the envelope (see test_codex)
        assert path.resolve() in read, f"{path} is not read by any adapter"


@pytest.mark.slow
def test_reimporting_the_same_files_writes_nothing(imported: tuple[Path, Path]) -> None:
    db, transcripts = imported
    before = _dump(db)
    store = open_store(db)
    quick = ingest(store, [transcripts])
    full = ingest(store, [transcripts], force=True)
    store.close()
    assert quick.conversations_written == 0
    assert full.conversations_written == 0
    assert full.sources_added == full.sources_revised == full.sources_updated == 0
    assert _dump(db) == before


def test_an_edited_message_in_a_real_session_becomes_revision_two(
    tmp_path: Path, transcripts_dir: Path
) -> None:
    source = transcripts_dir / "claude-code/marot-spotter/short.jsonl"
    path = tmp_path / "short.jsonl"
    shutil.copy(source, path)
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [path])

    lines = path.read_text().splitlines()
    index = next(
        i
        for i, line in enumerate(lines)
        if (r := json.loads(line)).get("type") == "user"
        and isinstance(r["message"]["content"], str)
    )
    record = json.loads(lines[index])
    record["message"]["content"] += " (and also check the logs)"
    lines[index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")

    report = ingest(store, [path])
    assert (report.sources_revised, report.sources_added) == (1, 0)
    versions = store.source_versions("message", f"cc:{record['uuid']}")
    assert [v.revision for v in versions] == [1, 2]
    assert versions[0].fingerprint != versions[1].fingerprint
    edited = [
        m
        for m in store.messages(report.conversation_ids[0])
        if m.source_id == f"cc:{record['uuid']}"
    ]
    assert edited[0].text.endswith("(and also check the logs)")
    store.close()


def test_changed_tool_metadata_alone_is_not_a_revision(
    tmp_path: Path, transcripts_dir: Path
) -> None:
    path = tmp_path / "tool_heavy.jsonl"
    shutil.copy(transcripts_dir / "claude-code/marot-spotter/tool_heavy.jsonl", path)
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [path])
    lines = path.read_text().splitlines()
    changed = 0
    for i, line in enumerate(lines):
        record = json.loads(line)
        if isinstance(record.get("toolUseResult"), dict):
            record["toolUseResult"]["durationMs"] = 123_456
            lines[i] = json.dumps(record)
            changed += 1
    assert changed
    path.write_text("\n".join(lines) + "\n")
    report = ingest(store, [path])
    assert report.sources_revised == 0
    store.close()
