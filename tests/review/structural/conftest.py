"""The example sessions and the shared transcripts, each imported once for the package (the
tests only read the stores), and their batches once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.graph import BatchFacts
from proctor.review._batch import SourceBatch
from proctor.review.structural import extract_structural
from proctor.store import Store
from tests.conftest import EXAMPLES_DIR
from tests.review.structural.helpers import (
    CLAUDE_AGENT,
    CLAUDE_MAIN,
    CODEX,
    batch_of,
    conversation_ids,
    import_into,
)


@pytest.fixture(scope="package")
def examples_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """``examples/`` imported into a fresh SQLite store."""
    return import_into(tmp_path_factory.mktemp("examples") / "proctor.db", EXAMPLES_DIR)


@pytest.fixture(scope="module")
def examples_batch(examples_store: Store) -> SourceBatch:
    """Every example conversation (the sub-agent included) as one batch."""
    return batch_of(examples_store, [CLAUDE_MAIN, CLAUDE_AGENT, CODEX])


@pytest.fixture(scope="module")
def examples_facts(examples_batch: SourceBatch) -> BatchFacts:
    """The structural facts of the example batch."""
    return extract_structural(examples_batch)


@pytest.fixture(scope="package")
def shared_store(tmp_path_factory: pytest.TempPathFactory, transcripts_dir: Path) -> Store:
    """``../shared/transcripts`` imported into a fresh store, once for the modules that read
    it (test_episodes, test_open_items, test_shared_transcripts: 2 s of CPU each import on
    SQLite, 5-6 s on PostgreSQL)."""
    return import_into(tmp_path_factory.mktemp("shared") / "proctor.db", transcripts_dir)


@pytest.fixture(scope="module")
def shared_batches(shared_store: Store) -> list[SourceBatch]:
    """One batch per shared conversation."""
    return [
        batch_of(shared_store, [conversation_id], batch_no=number)
        for number, conversation_id in enumerate(conversation_ids(shared_store), start=1)
    ]
