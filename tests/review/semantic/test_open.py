"""Opening the semantic layer from the store's model settings (SPEC MOD-2, MOD-3, REV-13)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from proctor.errors import ConfigError, ModelError
from proctor.models import set_default_connection
from proctor.review.semantic import PROMPT_VERSION, SemanticReviewer
from proctor.store import SqlStore, open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.review.semantic.builders import batch, candidates, entity, leaf_answer, structural


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "proctor.db")
    try:
        yield opened
    finally:
        opened.close()


def test_without_a_connection_opening_raises_a_config_error(store: SqlStore) -> None:
    with pytest.raises(ConfigError, match="no model connection is configured"):
        SemanticReviewer.open(store)


def test_a_named_connection_that_does_not_exist_is_a_model_config_error(store: SqlStore) -> None:
    with pytest.raises(ModelError) as failed:
        SemanticReviewer.open(store, "missing")
    assert failed.value.kind == "config"


def test_the_default_connection_is_used_and_every_call_is_recorded(store: SqlStore) -> None:
    with ScriptedModelServer([leaf_answer(entity("n1", "Cache backend choice"))]) as server:
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        reviewer = SemanticReviewer.open(store, run_id="run-1")
        the_batch = batch(run_id="run-1")
        result = anyio.run(reviewer.leaf, the_batch, structural(the_batch), candidates())

    assert reviewer.model_label == "scripted/scripted-model"
    assert reviewer.prompt_version == PROMPT_VERSION
    assert result.calls == 1
    usage = store.model_usage(run_id="run-1")
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 100, 20)
