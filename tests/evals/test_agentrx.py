"""EVAL-1/EVAL-2 on AgentRx: known diagnoses from a scripted model give known accuracies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.evals import AgentRxReport, evaluate_agentrx
from proctor.evals._judge_prompts import AGENTRX_PROMPT
from proctor.evals.agentrx import canonical_category, category_key
from proctor.models import ModelCaller, set_default_connection
from proctor.store import SqlStore, open_store
from tests.evals.scripted_judge import caller_for, case_of

MAGENTIC_RUN = "5a0c1adf-0000-4000-8000-0000000000a5"


def tau_run(case: int, task_id: int, *, reward: float = 0.0) -> dict[str, Any]:
    """A τ-bench retail run: policy, user, a looked-up order, the agent's answer."""
    call = {
        "id": f"call-{case}",
        "type": "function",
        "function": {"name": "get_order_details", "arguments": '{"order_id": "#W1"}'},
    }
    return {
        "task_id": task_id,
        "trial": 0,
        "reward": reward,
        "info": {"task": {"instruction": f"case-{case}: return the desk lamp of order #W1"}},
        "traj": [
            {"index": 1, "role": "system", "content": "Authenticate the user first."},
            {"index": 2, "role": "user", "content": "Hi, I want to return my lamp."},
            {"index": 3, "role": "assistant", "content": "Let me look.", "tool_calls": [call]},
            {
                "index": 4,
                "role": "tool",
                "tool_call_id": f"call-{case}",
                "name": "get_order_details",
                "content": '{"items": [{"name": "desk lamp", "quantity": 1}]}',
            },
            {"index": 5, "role": "assistant", "content": "Your order has two lamps."},
            {"index": 6, "role": "user", "content": "Then return both."},
        ],
    }


def failure(number: int, step: int, category: str, agent: str) -> dict[str, Any]:
    return {
        "failure_id": number,
        "step_number": step,
        "step_reason": "LABEL-REASON step",
        "failure_category": category,
        "category_reason": "LABEL-REASON category",
        "failed_agent": agent,
    }


def truth(trajectory: Any, root: int, *failures: dict[str, Any]) -> dict[str, Any]:
    return {
        "trajectory_id": trajectory,
        "failures": list(failures),
        "root_cause": {"failure_id": root, "reason_for_root_cause": "LABEL-REASON root"},
        "failure_summary": "LABEL-REASON summary",
    }


def write_runs(folder: Path) -> Path:
    """Cases 1–3 labelled τ-bench failures, 4 a success, 5 a labelled Magentic-One log;
    case 1 appears again in a second run file."""
    folder.mkdir(parents=True)
    runs = [tau_run(1, 101), tau_run(2, 102), tau_run(3, 103), tau_run(4, 104, reward=1.0)]
    (folder / "tau_failed.json").write_text(json.dumps(runs))
    (folder / "tau_full.json").write_text(json.dumps([tau_run(1, 101)]))
    log = [
        ("human", "case-5: What is the tallest building in Lyon?"),
        ("Orchestrator (thought)", "Plan: search the web."),
        ("Orchestrator (-> WebSurfer)", "Search for the tallest building in Lyon."),
        ("WebSurfer", "The search page shows a captcha; I cannot continue."),
        ("Orchestrator (thought)", "Next speaker WebSurfer"),
        ("WebSurfer", "Still the captcha."),
    ]
    (folder / f"{MAGENTIC_RUN}.json").write_text(
        json.dumps([{"role": role, "content": text} for role, text in log])
    )
    labels = [
        truth(101, 1, failure(1, 5, "Misinterpretation of Tool Output", "Assistant")),
        truth(
            102,
            2,
            failure(1, 2, "Underspecified User Intent", "User"),
            failure(2, 5, "Instruction Adherence Failure", "Assistant"),
        ),
        truth(103, 1, failure(1, 3, "Invalid Invocation", "Assistant")),
        truth(104, 1, failure(1, 3, "Invalid Invocation", "Assistant")),  # but it succeeded
        truth(MAGENTIC_RUN, 1, failure(1, 4, "Guardrails Triggered", "Websurfer")),
    ]
    (folder / "ground_truth.json").write_text(json.dumps(labels))
    return folder


def diagnose(step: int, category: str, agent: str, *evidence: int) -> dict[str, Any]:
    return {
        "failure_step": step,
        "failure_category": category,
        "responsible_agent": agent,
        "reason": f"REASON-{step}",
        "evidence_steps": list(evidence or (step,)),
    }


ANSWERS: dict[int, list[Any]] = {
    # step off by one, category right, agent wrong
    1: [diagnose(4, "Misinterpretation of Tool Output", "tool", 3, 4)],
    # all right; the label spells the category "Instruction Adherence Failure"
    2: [diagnose(5, "Instruction/Plan Adherence Failure", "assistant", 2, 5)],
    # a step the run does not have, then no JSON at all: unanswered
    3: [diagnose(99, "Invalid Invocation", "assistant"), "I cannot tell."],
    # Magentic-One steps count from 1: step 4 is the WebSurfer's first report
    5: [diagnose(4, "Guardrails Triggered", "WebSurfer", 3, 4)],
}


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return write_runs(tmp_path / "agentrx")


def run(data: Path, caller: ModelCaller, **options: Any) -> AgentRxReport:
    return anyio.run(partial(evaluate_agentrx, data, caller, **options))


def test_known_diagnoses_give_exactly_the_accuracies_computed_by_hand(
    runs: Path, answering: Any
) -> None:
    report = run(runs, caller_for(answering(ANSWERS)))
    overall = report.metrics()
    assert (overall["records"], overall["unanswered"]) == (4, 1)
    assert (overall["step_correct"], overall["category_correct"], overall["agent_correct"]) == (
        2,  # cases 2, 5
        3,  # cases 1, 2, 5
        2,  # cases 2, 5
    )
    assert overall["step_accuracy"] == pytest.approx(2 / 4)
    assert overall["category_accuracy"] == pytest.approx(3 / 4)
    assert overall["extra_step_within_1"] == {"step_correct": 3, "step_accuracy": 3 / 4}
    assert overall["extra_any_failure_step"] == {"step_correct": 2, "step_accuracy": 2 / 4}
    tau = report.metrics("tau-retail")
    assert (tau["records"], tau["step_correct"], tau["agent_correct"]) == (3, 1, 1)
    magentic = report.metrics("magentic-one")
    assert (magentic["records"], magentic["step_accuracy"], magentic["agent_accuracy"]) == (
        1,
        1.0,
        1.0,
    )


def test_every_run_is_in_the_json_with_its_diagnosis_and_evidence(
    runs: Path, answering: Any
) -> None:
    server = answering(ANSWERS)
    data = run(runs, caller_for(server), run_id="eval-arx").as_json()
    assert data["benchmark"] == "agentrx"
    assert (data["model"], data["connection"], data["run_id"]) == (
        "scripted-model",
        "scripted",
        "eval-arx",
    )
    assert data["prompt_versions"] == {"agentrx": AGENTRX_PROMPT.version}
    assert data["tokens"] == {"input": 500, "output": 100, "calls": 5}  # 4 answers + 1 repair
    assert (data["records"], data["repeated_runs"], data["unanswered"]) == (4, 1, 1)
    assert set(data["metrics"]) == {"overall", "tau-retail", "magentic-one"}
    by_id = {p["record_id"]: p for p in data["predictions"]}
    second = by_id["agentrx:tau-retail:102:0"]
    assert second["labelled"] == {
        "step": 5,
        "category": "Instruction Adherence Failure",
        "agent": "Assistant",
        "failure_steps": [2, 5],
    }
    assert second["predicted"] == {
        "step": 5,
        "category": "Instruction/Plan Adherence Failure",
        "agent": "assistant",
        "reason": "REASON-5",
        "evidence_steps": [2, 5],
    }
    assert (second["step_correct"], second["category_correct"], second["agent_correct"]) == (
        True,
        True,
        True,
    )
    unanswered = by_id["agentrx:tau-retail:103:0"]
    assert unanswered["predicted"] is None
    assert unanswered["problem"].startswith("invalid answer after one repair")
    repair = next(r for r in server.requests if case_of(r) == 3 and len(r.messages) == 4)
    assert "step 99 is not a step of this run (steps 1–6)" in repair.messages[-1]["content"]


def test_steps_carry_the_numbers_the_labels_use_and_labels_stay_out(
    runs: Path, answering: Any
) -> None:
    server = answering(ANSWERS)
    run(runs, caller_for(server))
    for request in server.requests:
        assert "LABEL-REASON" not in json.dumps(request.body)
        assert request.messages[0] == {"role": "system", "content": AGENTRX_PROMPT.system}

    def steps(case: int) -> list[dict[str, Any]]:
        first = next(r for r in server.requests if case_of(r) == case)
        lines = [json.loads(x) for x in first.text_of("user").split("\n") if x.startswith("{")]
        return [line for line in lines if "step" in line]

    tau = steps(1)
    assert [(s["step"], s["from"]) for s in tau] == [
        (1, "system"),
        (2, "user"),
        (3, "assistant"),
        (4, "tool"),
        (5, "assistant"),
        (6, "user"),
    ]
    assert tau[2]["calls"] == 'get_order_details {"order_id": "#W1"}'
    assert (tau[3]["tool"], tau[3]["status"]) == ("get_order_details", "ok")
    magentic = steps(5)
    assert [(s["step"], s["from"]) for s in magentic][:4] == [
        (1, "human"),
        (2, "Orchestrator"),
        (3, "Orchestrator"),
        (4, "WebSurfer"),
    ]
    assert magentic[2]["to"] == "WebSurfer"
    assert all("calls" not in s for s in magentic)  # hand-offs are the steps themselves


def test_runs_without_a_labelled_failure_are_not_judged(runs: Path, answering: Any) -> None:
    report = run(runs, caller_for(answering(ANSWERS)))
    judged = sorted(p.record_id for p in report.predictions)
    assert judged[0].startswith("agentrx:magentic:")
    # 104 succeeded, so its label is not attached; 101 is in two files and judged once.
    assert judged[1:] == [f"agentrx:tau-retail:{task}:0" for task in (101, 102, 103)]
    assert report.repeated_runs == 1


def test_a_limit_judges_an_even_spread_of_the_labelled_runs(runs: Path, answering: Any) -> None:
    everything = [p.record_id for p in run(runs, caller_for(answering(ANSWERS))).predictions]
    two = run(runs, caller_for(answering(ANSWERS)), limit=2)
    assert [p.record_id for p in two.predictions] == [everything[0], everything[2]]


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("Instruction Adherence Failure", "Instruction/Plan Adherence Failure"),
        ("instruction/plan adherence failure", "Instruction/Plan Adherence Failure"),
        ("Invention of new information", "Invention of New Information"),
        ("Intent not supported", "Intent Not Supported"),
        ("Intent Plan Misalignment", "Intent-Plan Misalignment"),
        ("Made-up category", "Made-up category"),
    ],
)
def test_category_names_are_compared_by_their_words(written: str, canonical: str) -> None:
    assert canonical_category(written) == canonical


def test_different_categories_stay_different() -> None:
    keys = {
        category_key(name)
        for name in AGENTRX_PROMPT.schema["properties"]["failure_category"]["enum"]
    }
    assert len(keys) == 9
    assert category_key("Intent Not Supported") != category_key("Intent-Plan Misalignment")


@pytest.fixture
def store() -> Iterator[SqlStore]:
    """The default store of this test's PROCTOR_HOME (the one the commands open)."""
    opened = open_store()
    yield opened
    opened.close()


def test_the_command_prints_the_known_accuracies_as_json_and_records_usage(
    runs: Path, answering: Any, store: SqlStore
) -> None:
    store.save_connection(answering(ANSWERS).connection())
    set_default_connection(store, "scripted")
    result = CliRunner().invoke(cli, ["eval", "agentrx", "--data", str(runs), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    overall = data["metrics"]["overall"]
    assert (overall["step_accuracy"], overall["category_accuracy"]) == (2 / 4, 3 / 4)
    assert store.model_usage(run_id=data["run_id"]).calls == 5


def test_the_command_prints_a_table_with_the_extras_labelled(
    runs: Path, answering: Any, store: SqlStore
) -> None:
    store.save_connection(answering(ANSWERS).connection())
    result = CliRunner().invoke(
        cli, ["eval", "agentrx", "--data", str(runs), "--connection", "scripted"]
    )
    assert result.exit_code == 0, result.output
    assert "model scripted-model (connection scripted)" in result.stdout
    assert "extra: any failure step" in result.stdout
    assert "0.750 (3)" in result.stdout  # overall category accuracy
    assert "1 run(s) unanswered" in result.stdout


@pytest.mark.shared
@pytest.mark.slow
def test_the_real_runs_are_judged_without_leaking_their_labels(
    datasets_dir: Path, answering: Any
) -> None:
    data = datasets_dir / "agentrx"
    reasons = [
        text
        for path in sorted((data / "ground_truth").glob("*.json"))
        for entry in json.loads(path.read_text(encoding="utf-8"))
        for text in [
            entry["failure_summary"],
            *(f["step_reason"] for f in entry["failures"]),
        ]
    ]
    server = answering({})
    server.push(*[diagnose(3, "Instruction/Plan Adherence Failure", "Assistant")] * 6)
    report = run(data, caller_for(server), limit=6)
    assert report.metrics()["records"] == 6
    assert report.metrics()["unanswered"] == 0
    assert report.repeated_runs > 0  # the failed runs are in the full list too
    expected = sum(p.step == 3 for p in report.predictions)
    assert report.metrics()["step_correct"] == expected
    sent = "\n".join(r.text_of("user") for r in server.requests)
    encoded = [json.dumps(reason, ensure_ascii=False)[1:-1] for reason in reasons]
    assert not [reason for reason in reasons + encoded if len(reason) > 40 and reason in sent]
