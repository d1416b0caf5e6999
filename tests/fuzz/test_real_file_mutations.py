"""ING-9 on real files: every shared transcript and benchmark file, mutated, imports fully.

Each real file under ``../shared/transcripts`` and ``../shared/datasets`` is cut to its
first records; about one record in four is broken (the mutations in turn, so across the
files every mutation meets every format), the file is written with CRLF line ends or a
byte order mark at random, and the copy is imported into a store of its own. The import
must complete, name every record no reader can take (``file:line``; a record that is no
longer JSON, put in a file of its own, by that file), and store every message that both
the intact excerpt and the excerpt without the broken records store. ``PROCTOR_FUZZ_EXAMPLES`` / 500 rounds are run (one by default).

The PostgreSQL pass of ``make test`` imports the mutated copies of the first two files of
each folder of ``../shared`` (``on_postgres``), the same copies as the SQLite pass; the
SQLite pass and ``make fuzz`` run every file.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.store import open_store
from tests import backends
from tests.backends import ON_POSTGRES
from tests.conftest import DATASETS_DIR, SHARED_DIR, TRANSCRIPTS_DIR
from tests.fuzz.harness import stored_text
from tests.fuzz.real_files import cases, expected_texts, mutated_copy, real_files

pytestmark = pytest.mark.shared

ROUNDS = max(1, int(os.environ.get("PROCTOR_FUZZ_EXAMPLES", "500")) // 500)
FILES = real_files(TRANSCRIPTS_DIR, DATASETS_DIR)
PER_FOLDER_ON_POSTGRES = 2
"""Files of each folder whose mutated copies the PostgreSQL pass of ``make test`` imports.

The mutations and what the adapters make of them do not depend on the store; what the
other database adds is storing and reading back what the excerpts hold. A folder of
``../shared`` is one source of one format (a tool's version, a benchmark's split), so its
files hold the same kinds of rows; the first two by name hold every kind the 205 hold:
with ``--cov=proctor.store --cov-branch`` on PostgreSQL, these 54 cases (49 run, 5 have no
records) reach the same 4,114 lines and 4,988 arcs of the store as all 205 (its first file
alone misses a subagent's parent project and children, which only
``claude-code-log/sidechain.jsonl`` holds). 29 s of the PostgreSQL pass's 300 s ran all 205."""


def on_postgres(all_cases: list[tuple[str, Path, int]]) -> list[tuple[str, Path, int]]:
    """The first ``PER_FOLDER_ON_POSTGRES`` files of each folder, with their mutations."""
    taken: dict[Path, int] = {}
    chosen = []
    for case in all_cases:
        folder = case[1].parent
        if taken.get(folder, 0) < PER_FOLDER_ON_POSTGRES:
            taken[folder] = taken.get(folder, 0) + 1
            chosen.append(case)
    return chosen


CASES = list(cases(FILES, ROUNDS))
if ON_POSTGRES and not os.environ.get("PROCTOR_FUZZ_EXAMPLES"):
    CASES = on_postgres(CASES)


def test_every_shared_file_is_swept() -> None:
    if not SHARED_DIR.is_dir():
        pytest.skip("no ../shared")
    folders = {path.relative_to(SHARED_DIR).parts[:2] for path in FILES}
    assert ("transcripts", "claude-code") in folders and ("datasets", "r-judge") in folders
    assert len(FILES) > 150


@pytest.mark.parametrize(
    ("path", "offset"),
    [(path, offset) for _, path, offset in CASES],
    ids=[case_id for case_id, _, _ in CASES],
)
def test_a_mutated_real_file_imports_every_intact_record_and_names_every_broken_one(
    path: Path, offset: int, tmp_path: Path
) -> None:
    copy = mutated_copy(path, random.Random(f"{path.relative_to(SHARED_DIR)}:{offset}"), offset)
    if copy is None:
        pytest.skip("no records to mutate")
    mutated, original, without = tmp_path / "mutated", tmp_path / "original", tmp_path / "without"
    for folder, files in (
        (mutated, copy.mutated),
        (original, copy.original),
        (without, copy.without),
    ):
        folder.mkdir()
        for name, data in files.items():
            (folder / name).write_bytes(data)
    expected = expected_texts(original) & expected_texts(without)

    # A new store starts as a copy of the migrated template (tests/backends.py), a ready
    # one on PostgreSQL.
    store = open_store(tmp_path / "proctor.db")
    try:
        report = ingest(store, [mutated], jobs=1)
        held = stored_text(store, report.conversation_ids)
    finally:
        store.close()
        if backends.DATABASES is not None:
            backends.DATABASES.drop_under(tmp_path)

    lost = sorted(text[:80] for text in expected if text not in held)
    assert lost == [], (
        f"intact records lost: {lost[:5]}; issues: {[str(i) for i in report.issues][:8]}"
    )
    for damage in copy.damage:
        if damage.must_report:
            shown = str(mutated / damage.file)
            assert any(
                issue.path == shown and (damage.line is None or issue.line == damage.line)
                for issue in report.issues
            ), f"{damage} not reported; issues: {[str(i) for i in report.issues][:8]}"
