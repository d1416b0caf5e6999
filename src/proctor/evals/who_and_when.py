"""Who&When: which agent caused a multi-agent run to fail, and at which step?

Each failed run's log is shown to the model with the ``who_and_when`` prompt: the task,
then every history entry as a numbered step (the number is the entry's index, the one
``mistake_step`` uses) with its author. The labels are never shown. The benchmark's
"with ground truth" setting adds the task's known correct answer (``--with-ground-truth``);
the report says which setting ran.

Metrics, overall and per subset (Hand-Crafted Magentic-One logs, Algorithm-Generated
CaptainAgent chats):

- agent accuracy: the named agent equals ``mistake_agent`` after normalisation (case,
  spaces, ``_`` and ``-`` ignored; a trailing ``(…)`` note dropped), since the labels
  spell names inconsistently ("WebSurfer" / "Websurfer");
- step accuracy: the step equals ``mistake_step`` exactly;
- an extra, not the benchmark's metric: step within ±1 of ``mistake_step``.

A run the model leaves unanswered (invalid after one repair, or a failed call) is counted
apart and scored wrong on every metric; so is a run whose label has no usable step.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from proctor.evals._common import Reading, RunInfo, labels_of, rate, spread_sample
from proctor.evals._judge_prompts import (
    RECORD_CHARS,
    WHO_AND_WHEN_PROMPT,
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
from proctor.model_types import ModelCaller
from proctor.transcript import ConversationBundle

SUBSETS = ("hand-crafted", "algorithm-generated")
UNANSWERED_NOTE = "unanswered runs are scored wrong on every metric"
_NOTE = re.compile(r"\s*\([^()]*\)\s*$")
_SEPARATORS = re.compile(r"[\s_\-]+")


def normalise_agent(name: str) -> str:
    """An agent name compared case- and separator-blind, without a trailing ``(…)`` note."""
    return _SEPARATORS.sub("", _NOTE.sub("", name)).casefold()


@dataclass(frozen=True, slots=True)
class Attribution:
    """A model's answer for one run."""

    responsible_agent: str
    decisive_step: int
    reason: str


@dataclass(frozen=True, slots=True)
class RunPrediction:
    """One failed run: the labelled and the predicted agent and step."""

    record_id: str
    subset: str
    mistake_agent: str | None
    mistake_step: int | None
    attribution: Attribution | None
    """None when the model left the run unanswered."""
    problem: str | None = None
    repaired: bool = False
    cut: bool = False
    """The log was shortened to fit the prompt."""

    @property
    def agent_correct(self) -> bool:
        """The named agent is the labelled one (after normalisation)."""
        if self.attribution is None or self.mistake_agent is None:
            return False
        return normalise_agent(self.attribution.responsible_agent) == normalise_agent(
            self.mistake_agent
        )

    def step_correct(self, tolerance: int = 0) -> bool:
        """The step is the labelled one, or within ``tolerance`` of it."""
        if self.attribution is None or self.mistake_step is None:
            return False
        return abs(self.attribution.decisive_step - self.mistake_step) <= tolerance


@dataclass(slots=True)
class WhoAndWhenReport:
    """Agent and step accuracy, overall and per subset."""

    run: RunInfo
    with_ground_truth: bool
    predictions: list[RunPrediction] = field(default_factory=list)

    def metrics(self, subset: str | None = None) -> dict[str, Any]:
        """Counts and accuracies for all runs or one subset."""
        chosen = [p for p in self.predictions if subset is None or p.subset == subset]
        agents = sum(p.agent_correct for p in chosen)
        steps = sum(p.step_correct() for p in chosen)
        near = sum(p.step_correct(1) for p in chosen)
        return {
            "records": len(chosen),
            "unanswered": sum(p.attribution is None for p in chosen),
            "agent_correct": agents,
            "step_correct": steps,
            "agent_accuracy": rate(agents, len(chosen)),
            "step_accuracy": rate(steps, len(chosen)),
            "extra_step_within_1": {
                "step_correct": near,
                "step_accuracy": rate(near, len(chosen)),
            },
        }

    def unanswered(self) -> list[RunPrediction]:
        """Runs the model left without a valid answer."""
        return [p for p in self.predictions if p.attribution is None]

    def as_json(self) -> dict[str, Any]:
        """The run record and every figure, per-run predictions included."""
        present = [s for s in SUBSETS if any(p.subset == s for p in self.predictions)]
        return {
            "benchmark": "who-and-when",
            **self.run.as_json(),
            "setting": "with ground truth" if self.with_ground_truth else "without ground truth",
            "records": self.run.traces,
            "read_issues": self.run.read_issues,
            "unanswered": len(self.unanswered()),
            "scoring": UNANSWERED_NOTE,
            "record_chars": RECORD_CHARS,
            "cut_records": sum(p.cut for p in self.predictions),
            "metrics": {"overall": self.metrics(), **{s: self.metrics(s) for s in present}},
            "predictions": [_prediction_json(p) for p in self.predictions],
        }


def _prediction_json(prediction: RunPrediction) -> dict[str, Any]:
    answer = prediction.attribution
    return {
        "record_id": prediction.record_id,
        "subset": prediction.subset,
        "mistake_agent": prediction.mistake_agent,
        "mistake_step": prediction.mistake_step,
        "responsible_agent": answer.responsible_agent if answer else None,
        "decisive_step": answer.decisive_step if answer else None,
        "reason": answer.reason if answer else None,
        "agent_correct": prediction.agent_correct,
        "step_correct": prediction.step_correct(),
        "problem": prediction.problem,
        "repaired": prediction.repaired,
        "cut": prediction.cut,
    }


async def evaluate_who_and_when(
    data: Path,
    caller: ModelCaller,
    *,
    with_ground_truth: bool = False,
    limit: int | None = None,
    concurrency: int = 1,
    run_id: str | None = None,
    progress: Progress | None = None,
) -> WhoAndWhenReport:
    """Attribute every failed run under ``data`` with the model behind ``caller``.

    Raises:
        ModelError: of kind ``config`` or ``auth``, which would fail every run.
    """
    reading = Reading()
    started = time.perf_counter()
    run, predictions = await run_model_eval(
        caller,
        WHO_AND_WHEN_PROMPT,
        spread_sample(list(reading.bundles(data, "who_and_when")), limit),
        render=partial(who_and_when_record, with_ground_truth=with_ground_truth),
        reader=_reader,
        predict=_prediction,
        benchmark="who-and-when",
        reading=reading,
        started=started,
        run_id=run_id,
        concurrency=concurrency,
        progress=progress,
    )
    return WhoAndWhenReport(run=run, with_ground_truth=with_ground_truth, predictions=predictions)


def _prediction(
    bundle: ConversationBundle, record: RenderedRecord, judgement: Judgement[Attribution]
) -> RunPrediction:
    labels = labels_of(bundle)
    agent, step = labels.get("mistake_agent"), labels.get("mistake_step")
    return RunPrediction(
        record_id=bundle.conversation_id,
        subset=str(bundle.conversation.attributes.get("subset") or "unknown"),
        mistake_agent=agent if isinstance(agent, str) else None,
        mistake_step=step if isinstance(step, int) and not isinstance(step, bool) else None,
        attribution=judgement.answer,
        problem=judgement.problem,
        repaired=judgement.repaired,
        cut=record.cut,
    )


def _reader(record: RenderedRecord) -> Callable[[dict[str, Any]], Attribution]:
    def read(data: dict[str, Any]) -> Attribution:
        step = data["decisive_step"]
        if step not in record.step_indices:
            raise InvalidAnswer(
                f"decisive_step {step} is not a step of this log "
                f"(steps 0–{max(record.step_indices, default=0)})"
            )
        return Attribution(data["responsible_agent"].strip(), step, data["reason"])

    return read


def who_and_when_record(bundle: ConversationBundle, *, with_ground_truth: bool) -> RenderedRecord:
    """The run as the judge sees it: the task, the known answer if asked for, then the log.

    Steps are the history entries, numbered by their index; agents' system prompts are
    left out. Only ``ground_truth`` (the task's answer, not an attribution label) is ever
    read from the labels, and only in the "with ground truth" setting.
    """
    header: dict[str, str] = {}
    if bundle.tasks and bundle.tasks[0].goal:
        header["task"] = bundle.tasks[0].goal
    if with_ground_truth:
        answer = labels_of(bundle).get("ground_truth")
        if answer is not None:
            header["correct_answer"] = str(answer)
    steps: list[Step] = []
    for message in bundle.messages:
        index = message.source_id.rsplit(":", 1)[-1]
        if not index.isdigit():
            continue  # an agent's system prompt, not a history entry
        details = {
            key: str(message.attributes[name])
            for key, name in (("to", "addressee"), ("channel", "channel"))
            if isinstance(message.attributes.get(name), str)
        }
        actor = message.author or str(message.attributes.get("role") or message.role)
        steps.append(Step(int(index), actor, message.text, details))
    return render_record(header, steps)
