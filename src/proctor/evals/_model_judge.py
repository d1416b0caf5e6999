"""The judging loop model-based evaluations share: one request per record, checked, repaired once.

Each record's answer is checked against the prompt's JSON Schema, then by the
evaluation's own reading of it (e.g. the step must exist). An answer that fails gets one
repair call naming the problem; if that fails too, or a call fails, the record is
*unanswered*: it keeps its reason and the evaluation scores it as a wrong prediction, so
no record is ever dropped silently. A failure that no other record can escape (a missing
key, a broken connection setting) stops the run instead.

Records go through the caller in order, at most ``concurrency`` at a time; the caller's
pool enforces its own limit on top.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from proctor.errors import ModelError, ModelErrorKind
from proctor.evals._common import Reading, RunInfo
from proctor.evals._judge_prompts import (
    JudgePrompt,
    RenderedRecord,
    record_messages,
    repair_messages,
)
from proctor.model_types import ChatMessage, ModelCaller, ModelRequest, ModelResponse, Stage
from proctor.transcript import ConversationBundle

AnswerT = TypeVar("AnswerT")
AnswerT_co = TypeVar("AnswerT_co", covariant=True)
PredictionT = TypeVar("PredictionT")

Progress = Callable[[int, int], None]
"""Told ``(records judged, records in the run)`` before the first record and after each."""

FATAL_KINDS: frozenset[ModelErrorKind] = frozenset({"config", "auth"})
"""Call failures that would fail every record alike: they stop the run."""


class InvalidAnswer(ValueError):
    """An answer that matches the schema but not the record (e.g. a step it does not have)."""


@dataclass(frozen=True, slots=True)
class JudgeJob(Generic[AnswerT_co]):
    """One record to judge: its id, the messages to send, and how to read the answer."""

    record_id: str
    messages: tuple[ChatMessage, ...]
    interpret: Callable[[dict[str, Any]], AnswerT_co]
    """Turns a schema-valid answer into the evaluation's value; raises ``InvalidAnswer``."""


@dataclass(frozen=True, slots=True)
class Judgement(Generic[AnswerT_co]):
    """The outcome for one record: an answer, or why there is none, and what it cost."""

    record_id: str
    answer: AnswerT_co | None
    problem: str | None
    """Why the record is unanswered (None when answered)."""
    repaired: bool
    input_tokens: int
    output_tokens: int
    calls: int


@dataclass(slots=True)
class _Cost:
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0

    def add(self, response: ModelResponse) -> None:
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens


class ModelJudge:
    """Judges records through one model caller with one versioned prompt."""

    def __init__(
        self,
        caller: ModelCaller,
        prompt: JudgePrompt,
        *,
        run_id: str,
        concurrency: int = 1,
        progress: Progress | None = None,
    ) -> None:
        self.caller = caller
        self.prompt = prompt
        self.run_id = run_id
        self.concurrency = max(concurrency, 1)
        self.progress = progress
        self._validator = Draft202012Validator(prompt.schema)

    async def judge_all(self, jobs: Sequence[JudgeJob[AnswerT]]) -> list[Judgement[AnswerT]]:
        """Judge every job, in order, ``concurrency`` at a time; results in job order.

        Raises:
            ModelError: a failure of kind ``config`` or ``auth`` (the run stops).
        """
        results: dict[int, Judgement[AnswerT]] = {}
        pending = iter(enumerate(jobs))
        stopped: list[ModelError] = []
        if self.progress is not None:
            self.progress(0, len(jobs))

        async def worker(scope: anyio.CancelScope) -> None:
            for index, job in pending:  # one shared iterator: each job goes to one worker
                try:
                    results[index] = await self.judge(job)
                except ModelError as exc:
                    stopped.append(exc)
                    scope.cancel()
                    return
                if self.progress is not None:
                    self.progress(len(results), len(jobs))

        async with anyio.create_task_group() as group:
            for _ in range(min(self.concurrency, len(jobs))):
                group.start_soon(worker, group.cancel_scope)
        if stopped:
            raise stopped[0]
        return [results[index] for index in range(len(jobs))]

    async def judge(self, job: JudgeJob[AnswerT]) -> Judgement[AnswerT]:
        """One record: ask, check, repair once; unanswered with its reason otherwise."""
        cost = _Cost()
        answer: AnswerT | None
        problem: str | None
        try:
            response = await self._call(job, job.messages, "eval", cost)
            answer, problem = self._check(job, response)
            if problem is None:
                return self._judgement(job, answer, None, repaired=False, cost=cost)
            repair = repair_messages(job.messages, response.text, problem)
            response = await self._call(job, repair, "repair", cost)
        except ModelError as exc:
            if exc.kind in FATAL_KINDS:
                raise
            return self._judgement(
                job, None, f"the model call failed ({exc.kind}): {exc}", repaired=False, cost=cost
            )
        answer, problem = self._check(job, response)
        if problem is not None:
            problem = f"invalid answer after one repair: {problem}"
            return self._judgement(job, None, problem, repaired=False, cost=cost)
        return self._judgement(job, answer, None, repaired=True, cost=cost)

    async def _call(
        self, job: JudgeJob[Any], messages: tuple[ChatMessage, ...], stage: Stage, cost: _Cost
    ) -> ModelResponse:
        cost.calls += 1
        response = await self.caller.complete(
            ModelRequest(
                messages=messages,
                json_schema=self.prompt.schema,
                schema_name=self.prompt.name,
                stage=stage,
                target_id=job.record_id,
                run_id=self.run_id,
            )
        )
        cost.add(response)
        return response

    def _check(
        self, job: JudgeJob[AnswerT], response: ModelResponse
    ) -> tuple[AnswerT | None, str | None]:
        if response.data is None:
            return None, "it is not one JSON object"
        error = best_match(self._validator.iter_errors(response.data))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "the answer"
            return None, f"{where}: {error.message}"
        try:
            return job.interpret(response.data), None
        except InvalidAnswer as exc:
            return None, str(exc)

    @staticmethod
    def _judgement(
        job: JudgeJob[AnswerT],
        answer: AnswerT | None,
        problem: str | None,
        *,
        repaired: bool,
        cost: _Cost,
    ) -> Judgement[AnswerT]:
        return Judgement(
            record_id=job.record_id,
            answer=answer,
            problem=problem,
            repaired=repaired,
            input_tokens=cost.input_tokens,
            output_tokens=cost.output_tokens,
            calls=cost.calls,
        )


def new_run_id(benchmark: str) -> str:
    """A fresh id for one evaluation run; its model calls are recorded under it."""
    return f"eval-{benchmark}-{uuid.uuid4().hex[:12]}"


def model_run_info(
    judge: ModelJudge,
    judgements: Sequence[Judgement[Any]],
    *,
    seconds: float,
    read_issues: int,
) -> RunInfo:
    """The EVAL-2 run record of a model-judged evaluation (no rules run in it)."""
    connection = judge.caller.connection
    return RunInfo(
        supervisor=f"model {connection.model} (connection {connection.name})",
        rule_versions={},
        seconds=seconds,
        traces=len(judgements),
        read_issues=read_issues,
        connection=connection.name,
        model=connection.model,
        prompt_versions={judge.prompt.name: judge.prompt.version},
        input_tokens=sum(j.input_tokens for j in judgements),
        output_tokens=sum(j.output_tokens for j in judgements),
        calls=sum(j.calls for j in judgements),
        run_id=judge.run_id,
    )


async def run_model_eval(
    caller: ModelCaller,
    prompt: JudgePrompt,
    bundles: Sequence[ConversationBundle],
    *,
    render: Callable[[ConversationBundle], RenderedRecord],
    reader: Callable[[RenderedRecord], Callable[[dict[str, Any]], AnswerT]],
    predict: Callable[[ConversationBundle, RenderedRecord, Judgement[AnswerT]], PredictionT],
    benchmark: str,
    reading: Reading,
    started: float,
    run_id: str | None = None,
    concurrency: int = 1,
    progress: Progress | None = None,
) -> tuple[RunInfo, list[PredictionT]]:
    """A model-judged evaluation's one flow: each bundle rendered as a record, judged by
    ``prompt`` (its answer read by ``reader(record)``), made a prediction by ``predict``.

    ``started`` (a ``time.perf_counter()`` reading taken before the benchmark was read) and
    ``reading`` (its issues) go into the run record with the judge's cost.

    Raises:
        ModelError: of kind ``config`` or ``auth``, which would fail every record.
    """
    records = [render(bundle) for bundle in bundles]
    judge = ModelJudge(
        caller,
        prompt,
        run_id=run_id or new_run_id(benchmark),
        concurrency=concurrency,
        progress=progress,
    )
    judgements = await judge.judge_all(
        [
            JudgeJob(bundle.conversation_id, record_messages(prompt, record), reader(record))
            for bundle, record in zip(bundles, records, strict=True)
        ]
    )
    predictions = [
        predict(bundle, record, judgement)
        for bundle, record, judgement in zip(bundles, records, judgements, strict=True)
    ]
    run = model_run_info(
        judge, judgements, seconds=time.perf_counter() - started, read_issues=len(reading.issues)
    )
    return run, predictions
