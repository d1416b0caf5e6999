"""ING-9 on real files: every shared transcript and benchmark file, mutated, imports fully.

Each real file under ``../shared/transcripts`` and ``../shared/datasets`` is cut to its
first records; about one record in four is broken (the mutations in turn, so across the
files every mutation meets every format), the file is written with CRLF line ends or a
byte order mark at random, and the copy is imported into a store of its own. The import
must complete, name every record no reader can take (``file:line``; a record that is no
longer JSON, put in a file of its own, by that file), and store every message that both
the intact excerpt and the excerpt without the broken records store. ``PROCTOR_FUZZ_EXAMPLES`` / 500 rounds are run (one by default).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.store import open_store
from tests import backends
from tests.conftest import DATASETS_DIR, SHARED_DIR, TRANSCRIPTS_DIR
from tests.fuzz.harness import stored_text
from tests.fuzz.real_files import cases, expected_texts, mutated_copy, real_files

pytestmark = pytest.mark.shared

ROUNDS = max(1, int(os.environ.get("PROCTOR_FUZZ_EXAMPLES", "500")) // 500)
FILES = real_files(TRANSCRIPTS_DIR, DATASETS_DIR)
CASES = list(cases(FILES, ROUNDS))


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
