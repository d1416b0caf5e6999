"""EVAL-1 on R-Judge, rules only: the baseline the model supervisor must beat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.evals import evaluate_r_judge

pytestmark = pytest.mark.shared


def test_the_rules_only_baseline_scores_each_record_once(datasets_dir: Path) -> None:
    report = evaluate_r_judge(datasets_dir / "r-judge")
    overall = report.metrics()
    assert overall["records"] == len({p.record_id for p in report.predictions})
    assert overall["tp"] + overall["fn"] == sum(p.unsafe for p in report.predictions)
    assert overall["precision"] is not None and overall["precision"] > 0.5
    flagged = [p for p in report.predictions if p.predicted]
    assert all(p.rules for p in flagged)


def test_the_r_judge_command_prints_f1(datasets_dir: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", "r-judge", "--data", str(datasets_dir / "r-judge"), "--rules-only", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["supervisor"] == "rules only"
    assert set(data["metrics"]["overall"]) >= {"precision", "recall", "f1"}
