"""EVAL-1/EVAL-2 on Who&When: known attributions from a scripted model give known accuracies."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from proctor.evals import WhoAndWhenReport, evaluate_who_and_when
from proctor.evals._judge_prompts import WHO_AND_WHEN_PROMPT
from proctor.evals.who_and_when import normalise_agent
from proctor.models import ModelCaller
from tests.evals.judge_data import WHO_AND_WHEN_ANSWERS as KNOWN_ANSWERS
from tests.evals.judge_data import blame
from tests.evals.scripted_judge import caller_for, case_of


def run(data: Path, caller: ModelCaller, **options: Any) -> WhoAndWhenReport:
    return anyio.run(partial(evaluate_who_and_when, data, caller, **options))


def test_known_attributions_give_exactly_the_accuracies_computed_by_hand(
    five_runs: Path, answering: Any
) -> None:
    server = answering(KNOWN_ANSWERS)
    report = run(five_runs, caller_for(server))
    overall = report.metrics()
    assert overall["records"] == 5
    assert overall["unanswered"] == 1
    assert (overall["agent_correct"], overall["step_correct"]) == (3, 2)  # cases 1, 3, 4 / 1, 4
    assert overall["agent_accuracy"] == pytest.approx(3 / 5)
    assert overall["step_accuracy"] == pytest.approx(2 / 5)
    assert overall["extra_step_within_1"] == {"step_correct": 3, "step_accuracy": 3 / 5}
    hand = report.metrics("hand-crafted")
    assert (hand["records"], hand["agent_accuracy"], hand["step_accuracy"]) == (2, 1 / 2, 1 / 2)
    assert hand["extra_step_within_1"]["step_accuracy"] == 1.0
    generated = report.metrics("algorithm-generated")
    assert generated["records"] == 3
    assert generated["agent_accuracy"] == pytest.approx(2 / 3)
    assert generated["step_accuracy"] == pytest.approx(1 / 3)
    assert generated["extra_step_within_1"]["step_accuracy"] == pytest.approx(1 / 3)
    assert generated["unanswered"] == 1


def test_the_run_record_and_the_per_run_answers_are_in_the_json(
    five_runs: Path, answering: Any
) -> None:
    server = answering(KNOWN_ANSWERS)
    data = run(five_runs, caller_for(server), run_id="eval-ww").as_json()
    assert data["benchmark"] == "who-and-when"
    assert data["setting"] == "without ground truth"
    # 5 first answers + 2 repairs (cases 4 and 5), each reported as 100 in / 20 out
    assert data["tokens"] == {"input": 700, "output": 140, "calls": 7}
    assert data["prompt_versions"] == {"who_and_when": WHO_AND_WHEN_PROMPT.version}
    assert (data["model"], data["connection"], data["run_id"]) == (
        "scripted-model",
        "scripted",
        "eval-ww",
    )
    assert set(data["metrics"]) == {"overall", "hand-crafted", "algorithm-generated"}
    by_id = {p["record_id"]: p for p in data["predictions"]}
    assert by_id["ww:algorithm-generated:ag-4"]["repaired"] is True
    assert by_id["ww:algorithm-generated:ag-5"]["responsible_agent"] is None
    assert by_id["ww:algorithm-generated:ag-5"]["problem"].startswith("invalid answer")
    assert by_id["ww:hand-crafted:hc-1"]["agent_correct"] is True
    step_repair = next(r for r in server.requests if case_of(r) == 4 and len(r.messages) == 4)
    assert "decisive_step 99 is not a step of this log" in step_repair.messages[-1]["content"]


def test_steps_are_numbered_as_the_history_and_labels_stay_out(
    five_runs: Path, answering: Any
) -> None:
    server = answering(KNOWN_ANSWERS)
    run(five_runs, caller_for(server))
    for request in server.requests:
        sent = json.dumps(request.body)
        assert "LABEL-REASON" not in sent
        assert "GROUND-TRUTH" not in sent
        assert "SYSTEM-PROMPT-TEXT" not in sent
        assert request.messages[0] == {"role": "system", "content": WHO_AND_WHEN_PROMPT.system}
    first = next(r for r in server.requests if case_of(r) == 2)
    lines = [json.loads(x) for x in first.text_of("user").split("\n") if x.startswith("{")]
    assert lines[0] == {"task": "case-2: What is the capital of France?"}
    steps = [line for line in lines if "step" in line]
    assert [(s["step"], s["from"]) for s in steps] == [
        (0, "human"),
        (1, "Orchestrator"),
        (2, "Orchestrator"),
        (3, "WebSurfer"),
        (4, "Orchestrator"),
    ]
    assert steps[2]["to"] == "WebSurfer"
    assert steps[1]["channel"] == "thought"
    generated = next(r for r in server.requests if case_of(r) == 3)
    assert '"step": 1, "from": "Computer_terminal"' in generated.text_of("user")


def test_the_ground_truth_setting_adds_only_the_known_answer(
    five_runs: Path, answering: Any
) -> None:
    server = answering(KNOWN_ANSWERS)
    report = run(five_runs, caller_for(server), with_ground_truth=True)
    assert report.as_json()["setting"] == "with ground truth"
    first = next(r for r in server.requests if case_of(r) == 1)
    lines = [json.loads(x) for x in first.text_of("user").split("\n") if x.startswith("{")]
    assert lines[1] == {"correct_answer": "GROUND-TRUTH-Paris"}
    assert all("LABEL-REASON" not in json.dumps(r.body) for r in server.requests)


def test_agent_names_are_compared_without_case_separators_or_notes() -> None:
    assert normalise_agent("WebSurfer") == normalise_agent("Websurfer")
    assert normalise_agent("Verification_Expert") == normalise_agent("verification expert")
    assert normalise_agent("Orchestrator (thought)") == normalise_agent("Orchestrator")
    assert normalise_agent("Computer_terminal") != normalise_agent("Verification_Expert")


@pytest.mark.shared
@pytest.mark.slow
def test_the_real_runs_are_judged_without_leaking_their_labels(
    datasets_dir: Path, answering: Any
) -> None:
    data = datasets_dir / "who-and-when"
    reasons = [
        json.loads(path.read_text(encoding="utf-8"))["mistake_reason"]
        for path in sorted(data.glob("*/*.json"))
    ]
    server = answering({})
    server.push(*[blame("Orchestrator", 0)] * 8)
    report = run(data, caller_for(server), limit=8)
    assert report.metrics()["records"] == 8
    assert report.metrics()["unanswered"] == 0
    expected = sum(
        normalise_agent(p.mistake_agent or "") == "orchestrator" for p in report.predictions
    )
    assert report.metrics()["agent_correct"] == expected
    assert {p.subset for p in report.predictions} == {"hand-crafted", "algorithm-generated"}
    sent = "\n".join(r.text_of("user") for r in server.requests)
    encoded = [json.dumps(reason, ensure_ascii=False)[1:-1] for reason in reasons]
    assert not [reason for reason in reasons + encoded if len(reason) > 40 and reason in sent]
