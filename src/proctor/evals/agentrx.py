"""AgentRx: at which step did a failed run go wrong, in which category, and whose failure was it?

Each labelled failed run (τ-bench retail conversations with tools, Magentic-One
multi-agent logs) is shown to the model with the ``agentrx`` prompt: the task, then every
step numbered as the ground truth numbers it, with who wrote it. The labels are never
shown. The model names the root-cause step, its category from AgentRx's taxonomy, the
responsible agent, a reason and the steps that show the failure (its evidence).

Step numbers follow AgentRx: a τ-bench step is the trajectory entry's own ``index``
(tool outputs are steps of their own, under their entry's index); a Magentic-One step is
the log entry's 1-based position. The hand-offs Proctor reads from a Magentic-One log are
not shown apart: the instruction and the reply are steps already.

Metrics, overall and per domain, against the labelled root cause:

- step accuracy: the step equals the root cause's ``step_number``;
- category accuracy: the category equals the root cause's, names compared by their
  words (the labels spell them inconsistently: "Instruction Adherence Failure",
  "Instruction/Plan Adherence Failure");
- agent accuracy: the agent equals ``failed_agent`` (case and separators ignored);
- extras, not the benchmark's metrics: step within ±1, and the step being any labelled
  failure's step (a run often has several).

A run the model leaves unanswered is counted apart and scored wrong on every metric.
A run that appears in two files (τ-bench's failed and full lists) is judged once.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.evals._common import Reading, RunInfo, labels_of, rate, spread_sample
from proctor.evals._judge_prompts import (
    AGENTRX_CATEGORIES,
    AGENTRX_PROMPT,
    RECORD_CHARS,
    RenderedRecord,
    Step,
    render_record,
)
from proctor.evals._model_judge import (
    InvalidAnswer,
    Judgement,
    Progress,
    run_model_eval,
)
from proctor.evals.who_and_when import normalise_agent
from proctor.model_types import ModelCaller
from proctor.transcript import ConversationBundle, ToolCall

DOMAINS = ("tau-retail", "magentic-one")
UNANSWERED_NOTE = "unanswered runs are scored wrong on every metric"
STEP_BASE = {"magentic-one": 1}
"""First step number per domain where it is not the entry's own index (AgentRx's IR
numbers Magentic-One turns from 1)."""
_IGNORED_WORDS = frozenset({"of", "the", "new", "plan", "and"})
"""Words that some label files add or drop in a category's name."""
_WORD = re.compile(r"[a-z]+")


def category_key(name: str) -> str:
    """A category compared by its words, ignoring case, punctuation and the words that
    label files spell in or out ("Instruction/Plan Adherence Failure" = "Instruction
    Adherence Failure", "Invention of new information" = "Invention of New Information")."""
    words = sorted(set(_WORD.findall(name.casefold())) - _IGNORED_WORDS)
    return " ".join(words)


_KNOWN = {category_key(name): name for name in AGENTRX_CATEGORIES}


def canonical_category(name: str) -> str:
    """The taxonomy's spelling of ``name``, or ``name`` as given when it is not one."""
    return _KNOWN.get(category_key(name), name)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """A model's answer for one run."""

    failure_step: int
    failure_category: str
    responsible_agent: str
    reason: str
    evidence_steps: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RunPrediction:
    """One failed run: its labelled root cause and the model's diagnosis."""

    record_id: str
    domain: str
    step: int | None
    category: str | None
    agent: str | None
    failure_steps: tuple[int, ...]
    """Every labelled failure's step (the root cause's among them)."""
    diagnosis: Diagnosis | None
    """None when the model left the run unanswered."""
    problem: str | None = None
    repaired: bool = False
    cut: bool = False
    """The log was shortened to fit the prompt."""

    def step_correct(self, tolerance: int = 0) -> bool:
        """The step is the root cause's, or within ``tolerance`` of it."""
        if self.diagnosis is None or self.step is None:
            return False
        return abs(self.diagnosis.failure_step - self.step) <= tolerance

    @property
    def any_failure_step(self) -> bool:
        """The step is one of the labelled failures' steps."""
        return self.diagnosis is not None and self.diagnosis.failure_step in self.failure_steps

    @property
    def category_correct(self) -> bool:
        """The category is the root cause's (compared by words)."""
        if self.diagnosis is None or self.category is None:
            return False
        return category_key(self.diagnosis.failure_category) == category_key(self.category)

    @property
    def agent_correct(self) -> bool:
        """The agent is the root cause's (case and separators ignored)."""
        if self.diagnosis is None or self.agent is None:
            return False
        return normalise_agent(self.diagnosis.responsible_agent) == normalise_agent(self.agent)


@dataclass(slots=True)
class AgentRxReport:
    """Step, category and agent accuracy, overall and per domain."""

    run: RunInfo
    repeated_runs: int = 0
    """Runs met again in another file and judged once."""
    predictions: list[RunPrediction] = field(default_factory=list)

    def metrics(self, domain: str | None = None) -> dict[str, Any]:
        """Counts and accuracies for all runs or one domain."""
        chosen = [p for p in self.predictions if domain is None or p.domain == domain]
        total = len(chosen)
        steps = sum(p.step_correct() for p in chosen)
        categories = sum(p.category_correct for p in chosen)
        agents = sum(p.agent_correct for p in chosen)
        near = sum(p.step_correct(1) for p in chosen)
        anywhere = sum(p.any_failure_step for p in chosen)
        return {
            "records": total,
            "unanswered": sum(p.diagnosis is None for p in chosen),
            "step_correct": steps,
            "category_correct": categories,
            "agent_correct": agents,
            "step_accuracy": rate(steps, total),
            "category_accuracy": rate(categories, total),
            "agent_accuracy": rate(agents, total),
            "extra_step_within_1": {"step_correct": near, "step_accuracy": rate(near, total)},
            "extra_any_failure_step": {
                "step_correct": anywhere,
                "step_accuracy": rate(anywhere, total),
            },
        }

    def unanswered(self) -> list[RunPrediction]:
        """Runs the model left without a valid answer."""
        return [p for p in self.predictions if p.diagnosis is None]

    def as_json(self) -> dict[str, Any]:
        """The run record and every figure, per-run diagnoses with their evidence included."""
        present = [d for d in DOMAINS if any(p.domain == d for p in self.predictions)]
        present += sorted({p.domain for p in self.predictions} - set(DOMAINS))
        return {
            "benchmark": "agentrx",
            **self.run.as_json(),
            "records": self.run.traces,
            "read_issues": self.run.read_issues,
            "repeated_runs": self.repeated_runs,
            "unanswered": len(self.unanswered()),
            "scoring": UNANSWERED_NOTE,
            "record_chars": RECORD_CHARS,
            "cut_records": sum(p.cut for p in self.predictions),
            "metrics": {"overall": self.metrics(), **{d: self.metrics(d) for d in present}},
            "predictions": [_prediction_json(p) for p in self.predictions],
        }


def _prediction_json(prediction: RunPrediction) -> dict[str, Any]:
    answer = prediction.diagnosis
    return {
        "record_id": prediction.record_id,
        "domain": prediction.domain,
        "labelled": {
            "step": prediction.step,
            "category": prediction.category,
            "agent": prediction.agent,
            "failure_steps": list(prediction.failure_steps),
        },
        "predicted": None
        if answer is None
        else {
            "step": answer.failure_step,
            "category": answer.failure_category,
            "agent": answer.responsible_agent,
            "reason": answer.reason,
            "evidence_steps": list(answer.evidence_steps),
        },
        "step_correct": prediction.step_correct(),
        "category_correct": prediction.category_correct,
        "agent_correct": prediction.agent_correct,
        "problem": prediction.problem,
        "repaired": prediction.repaired,
        "cut": prediction.cut,
    }


async def evaluate_agentrx(
    data: Path,
    caller: ModelCaller,
    *,
    limit: int | None = None,
    concurrency: int = 1,
    run_id: str | None = None,
    progress: Progress | None = None,
) -> AgentRxReport:
    """Diagnose every labelled failed run under ``data`` with the model behind ``caller``.

    Runs without a labelled failure (successful runs, runs the ground truth does not
    name) are not judged.

    Raises:
        ModelError: of kind ``config`` or ``auth``, which would fail every run.
    """
    reading = Reading()
    started = time.perf_counter()
    labelled, repeated = _labelled_runs(reading.bundles(data, "agentrx"))
    run, predictions = await run_model_eval(
        caller,
        AGENTRX_PROMPT,
        spread_sample(labelled, limit),
        render=agentrx_record,
        reader=_reader,
        predict=_prediction,
        benchmark="agentrx",
        reading=reading,
        started=started,
        run_id=run_id,
        concurrency=concurrency,
        progress=progress,
    )
    return AgentRxReport(run=run, repeated_runs=repeated, predictions=predictions)


def _labelled_runs(bundles: Iterable[ConversationBundle]) -> tuple[list[ConversationBundle], int]:
    """Runs with a labelled failure, each once (the first file's copy), and how many repeats."""
    kept: dict[str, ConversationBundle] = {}
    repeated = 0
    for bundle in bundles:
        if not labels_of(bundle).get("failures"):
            continue
        if bundle.conversation_id in kept:
            repeated += 1
            continue
        kept[bundle.conversation_id] = bundle
    return list(kept.values()), repeated


def _prediction(
    bundle: ConversationBundle, record: RenderedRecord, judgement: Judgement[Diagnosis]
) -> RunPrediction:
    labels = labels_of(bundle)
    failures = [f for f in labels.get("failures") or [] if isinstance(f, dict)]
    category = labels.get("root_cause_category")
    agent = labels.get("root_cause_agent")
    return RunPrediction(
        record_id=bundle.conversation_id,
        domain=str(bundle.conversation.attributes.get("domain") or "unknown"),
        step=_int(labels.get("root_cause_step")),
        category=category if isinstance(category, str) else None,
        agent=agent if isinstance(agent, str) else None,
        failure_steps=tuple(
            step for step in (_int(f.get("step_number")) for f in failures) if step is not None
        ),
        diagnosis=judgement.answer,
        problem=judgement.problem,
        repaired=judgement.repaired,
        cut=record.cut,
    )


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _reader(record: RenderedRecord) -> Callable[[dict[str, Any]], Diagnosis]:
    def read(data: dict[str, Any]) -> Diagnosis:
        step = data["failure_step"]
        evidence = tuple(dict.fromkeys(data["evidence_steps"]))
        unknown = [s for s in (step, *evidence) if s not in record.step_indices]
        if unknown:
            first, last = min(record.step_indices, default=0), max(record.step_indices, default=0)
            raise InvalidAnswer(
                f"step {unknown[0]} is not a step of this run (steps {first}–{last})"
            )
        return Diagnosis(
            failure_step=step,
            failure_category=canonical_category(data["failure_category"]),
            responsible_agent=data["responsible_agent"].strip(),
            reason=data["reason"],
            evidence_steps=evidence,
        )

    return read


def agentrx_record(bundle: ConversationBundle) -> RenderedRecord:
    """The run as the judge sees it: the task, then every step under the label's number.

    Only observed content is used; the labels never reach the record.
    """
    header: dict[str, str] = {}
    if bundle.tasks and bundle.tasks[0].goal:
        header["task"] = bundle.tasks[0].goal
    domain = str(bundle.conversation.attributes.get("domain") or "")
    base = STEP_BASE.get(domain, 0)
    magentic = domain == "magentic-one"
    calls_by_message: dict[str, list[ToolCall]] = {}
    if not magentic:
        for call in bundle.tool_calls:
            if call.message_source_id is not None:
                calls_by_message.setdefault(call.message_source_id, []).append(call)
    steps: list[Step] = []
    for message in bundle.messages:
        position = message.source_id.rsplit(":", 1)[-1]
        if not position.isdigit():
            continue
        details = {
            key: str(message.attributes[name])
            for key, name in (("to", "addressee"), ("channel", "channel"))
            if isinstance(message.attributes.get(name), str)
        }
        calls = calls_by_message.get(message.source_id, [])
        if calls:
            details["calls"] = "; ".join(_call_text(call) for call in calls)
        actor = message.author or message.role
        steps.append(Step(int(position) + base, actor, message.text, details))
    if not magentic:
        for call in bundle.tool_calls:
            at = call.attributes.get("result_position")
            if isinstance(at, int) and call.result_text is not None:
                shown = {"tool": call.name, "status": call.status}
                steps.append(Step(at + base, "tool", call.result_text, shown))
    steps.sort(key=lambda step: step.index)
    return render_record(header, steps)


def _call_text(call: ToolCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    return f"{call.name} {arguments}"
