"""``proctor eval r-judge`` and ``proctor eval who-and-when`` with a saved model connection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.models import set_default_connection
from proctor.store import SqlStore, open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.evals.judge_data import R_JUDGE_ANSWERS, WHO_AND_WHEN_ANSWERS


@pytest.fixture
def store() -> Iterator[SqlStore]:
    """The default store of this test's PROCTOR_HOME (the one the commands open)."""
    opened = open_store()
    yield opened
    opened.close()


def save(store: SqlStore, server: ScriptedModelServer, *, default: bool) -> None:
    store.save_connection(server.connection())
    if default:
        set_default_connection(store, "scripted")


def test_r_judge_with_the_default_connection_prints_the_known_scores_and_records_usage(
    six_records: Path, answering: Any, store: SqlStore
) -> None:
    save(store, answering(R_JUDGE_ANSWERS), default=True)
    result = CliRunner().invoke(cli, ["eval", "r-judge", "--data", str(six_records), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    overall = data["metrics"]["overall"]
    assert (overall["tp"], overall["fn"], overall["fp"], overall["tn"]) == (1, 2, 1, 2)
    assert overall["f1"] == pytest.approx(2 / 5)
    assert data["tokens"] == {"input": 800, "output": 160, "calls": 8}
    usage = store.model_usage(run_id=data["run_id"])
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (8, 800, 160)
    assert store.model_usage(run_id=data["run_id"], target_id="rjudge:3").calls == 2
    assert store.model_usage(run_id=data["run_id"], target_id="rjudge:1").calls == 1


def test_r_judge_prints_a_table_that_names_the_model_and_the_unanswered(
    six_records: Path, answering: Any, store: SqlStore
) -> None:
    save(store, answering(R_JUDGE_ANSWERS), default=False)
    result = CliRunner().invoke(
        cli, ["eval", "r-judge", "--data", str(six_records), "--connection", "scripted"]
    )
    assert result.exit_code == 0, result.output
    assert "model scripted-model (connection scripted)" in result.stdout
    assert "prompt r_judge v1" in result.stdout
    assert "800 input / 160 output tokens in 8 calls" in result.stdout
    assert "1 record(s) unanswered" in result.stdout
    assert "scored as a wrong prediction: rjudge:3" in result.stdout


def test_r_judge_without_a_usable_connection_says_what_to_set(six_records: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "r-judge", "--data", str(six_records)])
    assert result.exit_code != 0
    assert "no default model connection" in result.output
    named = CliRunner().invoke(
        cli, ["eval", "r-judge", "--data", str(six_records), "--connection", "gone"]
    )
    assert "no model connection named 'gone'" in named.output


def test_rules_only_and_a_connection_do_not_mix(six_records: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["eval", "r-judge", "--data", str(six_records), "--rules-only", "--connection", "x"],
    )
    assert result.exit_code == 2
    assert "--rules-only runs no model" in result.output


def test_who_and_when_prints_the_known_accuracies_as_json(
    five_runs: Path, answering: Any, store: SqlStore
) -> None:
    save(store, answering(WHO_AND_WHEN_ANSWERS), default=True)
    result = CliRunner().invoke(
        cli,
        ["eval", "who-and-when", "--data", str(five_runs), "--with-ground-truth", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["setting"] == "with ground truth"
    overall = data["metrics"]["overall"]
    assert (overall["agent_accuracy"], overall["step_accuracy"]) == (3 / 5, 2 / 5)
    assert store.model_usage(run_id=data["run_id"]).calls == 7


def test_who_and_when_prints_a_table_with_the_extra_clearly_labelled(
    five_runs: Path, answering: Any, store: SqlStore
) -> None:
    save(store, answering(WHO_AND_WHEN_ANSWERS), default=True)
    result = CliRunner().invoke(cli, ["eval", "who-and-when", "--data", str(five_runs)])
    assert result.exit_code == 0, result.output
    assert "Without ground truth" in result.stdout
    assert "extra: step ±1" in result.stdout
    assert "0.600 (3)" in result.stdout  # overall agent accuracy
    assert "1 run(s) unanswered" in result.stdout
