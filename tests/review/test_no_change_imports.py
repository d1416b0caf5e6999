"""A ``proctor review run`` that finds nothing new loads nothing a review reads with.

The heartbeat runs a review on a schedule, most often with nothing new; the extractors,
the assembler, the search index, the semantic reviewer (the supervisor's prompts, the
rules) and Alembic are imported only by a review that reads a batch or a store that
needs migrating; the model layer only when a model may be used (not with ``--no-model``). The process is a real ``proctor`` process on a store reviewed once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from tests.backends import ON_POSTGRES, database_env
from tests.conftest import EXAMPLES_DIR

NOT_NEEDED = (
    "proctor.review.structural",
    "proctor.review.semantic",
    "proctor.review._assemble",
    "proctor.search",
    "proctor.rules",
    "proctor.supervisor",
    "alembic",
    "proctor.store._review_batch_save",
    # The model layer with --no-model, the heartbeat's scheduler and plans (only
    # ``require_app`` is asked), the progress bar off a terminal, the list's table.
    "proctor.models",
    "anyio",
    "httpx",
    "proctor.heartbeat._scheduler",
    "proctor.heartbeat._plans",
    "rich.progress",
    "proctor.cli._tables",
    # The store's other repositories (``store.repos.<part>`` imports its module on first
    # use; a no-change run asks the reviews' and the settings' only) and the protocols
    # of every repository (``Store``: the review pipeline imports it for types only).
    "proctor.store._conversation_store",
    "proctor.store._inbox_store",
    "proctor.store._graph_store",
    "proctor.store._graph_publish",
    "proctor.store._memory_store",
    "proctor.store._supervision_store",
    "proctor.store._suggestion_store",
    "proctor.store._heartbeat_store",
    "proctor.store._import_store",
    "proctor.store._search_index",
    "proctor.store._interfaces",
    "proctor.store._repository_protocols",
    # The graph's facts and publish policy (``proctor.graph`` resolves names on first use;
    # the store's review records need only the manifest policy and ``ReviewTrigger``), the
    # batch's types, and the row converters with the transcript's types (read with a batch).
    "proctor.graph._facts",
    "proctor.graph._publish_policy",
    "proctor.graph._views",
    "proctor.review._batch",
    "proctor.store._rows",
    "proctor.transcript",
    # PostgreSQL's dialect on SQLite (on PostgreSQL the engine needs it).
    *(() if ON_POSTGRES else ("sqlalchemy.dialects.postgresql",)),
)

RUN_AND_LIST_MODULES = """
import atexit, sys
atexit.register(lambda: print("\\n".join(sorted(sys.modules)), file=sys.stderr))
from proctor.cli.main import main
sys.argv = ["proctor", "review", "run", "--no-model"]
main()
"""


def _loaded(home: Path, *, create: bool) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES],
        env={**os.environ, **database_env(home, create=create)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, set(done.stderr.split())


@pytest.mark.slow
def test_a_no_change_review_process_imports_no_extractor_index_or_model_code(
    proctor_home: Path,
) -> None:
    proctor_home.mkdir(parents=True, exist_ok=True)
    database_env(proctor_home)  # on PostgreSQL: the home's database, created
    store = open_store()
    ingest(store, [EXAMPLES_DIR])
    store.set_setting("app.enabled", True)
    first = start_review(store, ReviewRequest(), semantic=None, semantic_note="none")
    store.close()
    assert first.status == "completed"
    output, modules = _loaded(proctor_home, create=False)
    assert "Nothing new or changed since the last review" in output
    loaded = sorted(m for m in modules if m.startswith(NOT_NEEDED))
    assert loaded == []


@pytest.mark.slow
def test_a_review_that_reads_a_batch_does_load_the_extractors(proctor_home: Path) -> None:
    proctor_home.mkdir(parents=True, exist_ok=True)
    database_env(proctor_home)
    store = open_store()
    ingest(store, [EXAMPLES_DIR])
    store.set_setting("app.enabled", True)
    store.close()
    output, modules = _loaded(proctor_home, create=False)
    assert "completed" in output
    assert "proctor.review.structural" in modules
