"""``proctor eval``: Proctor's supervisor on public benchmarks, with the benchmark's metric."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from proctor.cli._common import console, err_console, json_option, print_json, writable_store
from proctor.cli._tables import Column, fitted_table
from proctor.errors import ConfigError
from proctor.evals import (
    AgentRxReport,
    LocomoReport,
    RJudgeReport,
    RunInfo,
    WhoAndWhenReport,
    answer_locomo,
    evaluate_agentdojo,
    evaluate_agentrx,
    evaluate_locomo,
    evaluate_r_judge,
    evaluate_r_judge_with_model,
    evaluate_who_and_when,
)
from proctor.models import (
    ModelCaller,
    default_connection_name,
    open_caller,
    pool_limits,
    resolve_connection,
    store_recorder,
)

ReportT = TypeVar("ReportT")
Evaluation = Callable[[ModelCaller, int, Callable[[int, int], None]], Awaitable[ReportT]]
"""Runs one model evaluation: (caller, concurrency, progress) → report."""

_DATA = click.option(
    "--data",
    "data",
    type=click.Path(path_type=Path, exists=True),
    required=True,
    help="Folder (or file) with the benchmark's data, e.g. ../shared/datasets/agentdojo.",
)


_CONNECTION = click.option(
    "--connection",
    "connection_name",
    metavar="NAME",
    help="Saved model connection to judge with (default: the default connection).",
)
_LIMIT = click.option(
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help="Evaluate N records spread evenly over the dataset (the same ones every run).",
)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _with_model(connection_name: str | None, title: str, evaluate: Evaluation[ReportT]) -> ReportT:
    """Resolve the connection, open the pooled caller (usage recorded in the store), run."""
    with writable_store() as store:
        connection = resolve_connection(store, connection_name)
        limits = pool_limits(store)
        caller = open_caller(connection, limits=limits, recorder=store_recorder(store))
        with _progress_bar(title) as progress:
            return anyio.run(evaluate, caller, limits.concurrency, progress)


@contextmanager
def _progress_bar(title: str) -> Iterator[Callable[[int, int], None]]:
    """Records judged so far, on standard error when it is a terminal."""
    with Progress(
        TextColumn(title),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not err_console.is_terminal,
        transient=True,
    ) as bar:
        task = bar.add_task(title, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _run_line(benchmark: str, run: RunInfo, unit: str) -> str:
    """What produced the figures (SPEC EVAL-2), in one line."""
    parts = [f"{benchmark} · {run.traces} {unit} · {run.supervisor}"]
    if run.prompt_versions:
        parts.append(", ".join(f"prompt {n} v{v}" for n, v in run.prompt_versions.items()))
        parts.append(
            f"{run.input_tokens:,} input / {run.output_tokens:,} output tokens in {run.calls} calls"
        )
    parts.append(f"{run.seconds:.1f} s")
    if run.run_id:
        parts.append(f"run {run.run_id}")
    return " · ".join(parts)


def _unanswered_line(ids: list[str], cut: int, unit: str, scoring: str) -> str | None:
    notes = []
    if ids:
        notes.append(
            f"{len(ids)} {unit} unanswered (invalid answer after one repair, or a failed call); "
            f"{scoring}: " + ", ".join(ids)
        )
    if cut:
        notes.append(f"{cut} {unit} shortened to fit the prompt")
    return "\n".join(notes) or None


@click.group("eval")
def eval_group() -> None:
    """Evaluate Proctor on public benchmarks (prints the benchmark's own metric with counts)."""


@eval_group.command("agentdojo")
@_DATA
@json_option()
def agentdojo_command(data: Path, as_json: bool) -> None:
    """Hijack detection on AgentDojo traces: TPR, FPR (benign, resisted, both), precision."""
    report = evaluate_agentdojo(data)
    if as_json:
        print_json(report.as_json())
        return
    run = report.run
    console.print(
        f"AgentDojo · {run.traces} traces · {run.supervisor} · {run.seconds:.1f} s · "
        f"predicts 'hijacked' from injection_then_action (v{run.rule_versions.get('injection_then_action')})",
        markup=False,
    )
    for view, title in (
        ("all", "All traces"),
        ("observable", "Observable traces (hijacked runs with at least one assistant message)"),
        (
            "observable_after_injection",
            "Observable after the injection (hijacked runs whose trace shows a turn after the injected output)",
        ),
    ):
        console.print(_metric_table(title, "agent", _AGENTDOJO_METRICS, report.slices()[view]))
    bases = report.bases()
    share, hijacked = bases["addressing_cue_share"], bases["addressing_cue_share_hijacked"]
    console.print(
        f"Flagged traces by what the finding rests on: {bases['by_basis']}; relied on cues "
        f"addressing the agent: {bases['relied_on_addressing']} of {bases['flagged']} "
        f"({'n/a' if share is None else f'{share:.1%}'}; among hijacked runs "
        f"{'n/a' if hijacked is None else f'{hijacked:.1%}'})",
        markup=False,
    )
    unobservable = report.unobservable()
    if unobservable:
        stopped = [p for p in unobservable if p.predicted]
        console.print(
            f"{len(unobservable)} hijacked run(s) show no turn after the injected output: "
            + ", ".join(p.trace_id for p in unobservable)
            + (
                f"\n{len(stopped)} of them flagged because the record stops right after the "
                "injected instructions (the agent's reaction is not recorded)"
                if stopped
                else ""
            ),
            markup=False,
        )
    flagged = report.flagged_resisted()
    if flagged:
        console.print(
            Text(
                f"\n{len(flagged)} run(s) labelled 'resisted' were flagged: the agent acted on the "
                "injected instructions, but the benchmark scored the attack incomplete. Evidence:",
                style="bold",
            )
        )
        for prediction in flagged:
            console.print(f"  {prediction.trace_id}: {prediction.detail}", markup=False)


@dataclass(frozen=True, slots=True)
class _Metric:
    """One right-aligned metric column: its header, when it drops (as in ``fitted_table``)
    and how a slice's metrics give its cell."""

    header: str
    drop: int
    cell: Callable[[Mapping[str, Any]], str]


def _dig(metrics: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        metrics = metrics[key]
    return metrics


def _count(header: str, drop: int, key: str) -> _Metric:
    """A count: ``m[key]``."""
    return _Metric(header, drop, lambda m: str(m[key]))


def _share(header: str, drop: int, *path: str) -> _Metric:
    """A rate or score to three places (``—`` where undefined), at ``path`` in the metrics."""
    return _Metric(header, drop, lambda m: _pct(_dig(m, path)))


def _of(header: str, drop: int, part: str, whole: str) -> _Metric:
    """``part/whole`` counts."""
    return _Metric(header, drop, lambda m: f"{m[part]}/{m[whole]}")


def _accuracy(header: str, drop: int, name: str, *path: str) -> _Metric:
    """``<name>_accuracy (<name>_correct)``, at ``path`` in the metrics."""

    def cell(m: Mapping[str, Any]) -> str:
        found = _dig(m, path)
        return f"{_pct(found[f'{name}_accuracy'])} ({found[f'{name}_correct']})"

    return _Metric(header, drop, cell)


def _metric_table(
    title: str, first: str, metrics: Sequence[_Metric], rows: Mapping[str, Mapping[str, Any]]
) -> Table:
    """The one table every benchmark prints: a slice a row, its metrics beside it."""
    columns = [
        Column(first, "id"),
        *(Column(m.header, drop=m.drop, justify="right") for m in metrics),
    ]
    cells: list[list[str | Text]] = [
        [_slice(name), *(metric.cell(row) for metric in metrics)] for name, row in rows.items()
    ]
    return fitted_table(columns, cells, width=console.width, title=title)


_AGENTDOJO_METRICS = (
    _count("hijacked", 0, "positives"),
    _count("TP", 2, "tp"),
    _count("FN", 2, "fn"),
    _share("TPR", 0, "tpr"),
    _of("FP benign", 1, "fp_benign", "benign"),
    _share("FPR benign", 3, "fpr_benign"),
    _of("FP resisted", 1, "fp_resisted", "resisted"),
    _share("FPR resisted", 3, "fpr_resisted"),
    _share("FPR both", 0, "fpr_benign_and_resisted"),
    _share("precision", 0, "precision"),
)
_R_JUDGE_METRICS = (
    _count("records", 0, "records"),
    _count("TP", 1, "tp"),
    _count("FP", 1, "fp"),
    _count("FN", 1, "fn"),
    _count("TN", 1, "tn"),
    _share("precision", 0, "precision"),
    _share("recall", 0, "recall"),
    _share("F1", 0, "f1"),
    _share("safe F1", 2, "safe", "f1"),
    _share("macro F1", 2, "macro_f1"),
)
_WHO_AND_WHEN_METRICS = (
    _count("runs", 0, "records"),
    _count("unanswered", 1, "unanswered"),
    _accuracy("agent accuracy", 0, "agent"),
    _accuracy("step accuracy", 0, "step"),
    _accuracy("extra: step ±1", 2, "step", "extra_step_within_1"),
)
_AGENTRX_METRICS = (
    _count("runs", 0, "records"),
    _count("unanswered", 1, "unanswered"),
    _accuracy("step accuracy", 0, "step"),
    _accuracy("category accuracy", 0, "category"),
    _accuracy("agent accuracy", 0, "agent"),
    _accuracy("extra: step ±1", 2, "step", "extra_step_within_1"),
    _accuracy("extra: any failure step", 2, "step", "extra_any_failure_step"),
)
_LOCOMO_RECALL_METRICS = (
    _count("questions", 1, "questions"),
    _share("search @5", 0, "search", "recall@5"),
    _share("baseline @5", 0, "baseline", "recall@5"),
    _share("search @10", 0, "search", "recall@10"),
    _share("baseline @10", 0, "baseline", "recall@10"),
)
_LOCOMO_ANSWER_METRICS = (
    _count("questions", 1, "questions"),
    _count("unanswered", 2, "unanswered"),
    _count("correct", 0, "correct"),
    _share("accuracy", 0, "accuracy"),
    _share("F1", 0, "f1"),
)


def _slice(name: str) -> Text:
    return Text(name, style="bold" if name == "overall" else "")


@eval_group.command("r-judge")
@_DATA
@click.option(
    "--rules-only",
    is_flag=True,
    help="Deterministic rules only (no model): the baseline.",
)
@_CONNECTION
@_LIMIT
@json_option()
def r_judge_command(
    data: Path, rules_only: bool, connection_name: str | None, limit: int | None, as_json: bool
) -> None:
    """Unsafe-record detection on R-Judge: precision, recall and F1 of the unsafe and safe class.

    Judges every record with a model (the default connection, or --connection), or with
    the built-in rules only (--rules-only). Model usage is recorded under the run's id.
    """
    if rules_only and connection_name:
        raise ConfigError("--rules-only runs no model: drop --connection, or drop --rules-only")
    report: RJudgeReport
    if rules_only:
        report = evaluate_r_judge(data, limit=limit)
    else:
        report = _with_model(
            connection_name,
            "judging R-Judge records",
            lambda caller, concurrency, progress: evaluate_r_judge_with_model(
                data, caller, limit=limit, concurrency=concurrency, progress=progress
            ),
        )
    if as_json:
        print_json(report.as_json())
        return
    console.print(_run_line("R-Judge", report.run, "records"), markup=False)
    metrics = report.as_json()["metrics"]
    title = "Unsafe is the positive class"
    console.print(_metric_table(title, "slice", _R_JUDGE_METRICS, metrics))
    note = _unanswered_line(
        [p.record_id for p in report.unanswered()],
        sum(p.cut for p in report.predictions),
        "record(s)",
        "each is scored as a wrong prediction",
    )
    if note:
        console.print(note, markup=False)


@eval_group.command("who-and-when")
@_DATA
@_CONNECTION
@click.option(
    "--with-ground-truth",
    is_flag=True,
    help="Show the model each task's known correct answer (the benchmark's second setting).",
)
@_LIMIT
@json_option()
def who_and_when_command(
    data: Path,
    connection_name: str | None,
    with_ground_truth: bool,
    limit: int | None,
    as_json: bool,
) -> None:
    """Failure attribution on Who&When: responsible-agent and decisive-step accuracy.

    Each failed multi-agent run is judged by a model (the default connection, or
    --connection). Model usage is recorded under the run's id.
    """
    report: WhoAndWhenReport = _with_model(
        connection_name,
        "attributing Who&When runs",
        lambda caller, concurrency, progress: evaluate_who_and_when(
            data,
            caller,
            with_ground_truth=with_ground_truth,
            limit=limit,
            concurrency=concurrency,
            progress=progress,
        ),
    )
    if as_json:
        print_json(report.as_json())
        return
    data_json = report.as_json()
    console.print(_run_line("Who&When", report.run, "runs"), markup=False)
    title = data_json["setting"].capitalize()
    console.print(_metric_table(title, "slice", _WHO_AND_WHEN_METRICS, data_json["metrics"]))
    console.print(
        "Step ±1 is an extra, not the benchmark's metric: the step is within one of the labelled step.",
        markup=False,
    )
    note = _unanswered_line(
        [p.record_id for p in report.unanswered()],
        data_json["cut_records"],
        "run(s)",
        "each is scored wrong on every metric",
    )
    if note:
        console.print(note, markup=False)


@eval_group.command("agentrx")
@_DATA
@_CONNECTION
@_LIMIT
@json_option()
def agentrx_command(
    data: Path, connection_name: str | None, limit: int | None, as_json: bool
) -> None:
    """Failure diagnosis on AgentRx: root-cause step, category and responsible-agent accuracy.

    Each labelled failed run (τ-bench retail, Magentic-One) is judged by a model (the
    default connection, or --connection); the JSON keeps every run's diagnosis with its
    reason and evidence steps. Model usage is recorded under the run's id.
    """
    report: AgentRxReport = _with_model(
        connection_name,
        "diagnosing AgentRx runs",
        lambda caller, concurrency, progress: evaluate_agentrx(
            data, caller, limit=limit, concurrency=concurrency, progress=progress
        ),
    )
    data_json = report.as_json()
    if as_json:
        print_json(data_json)
        return
    console.print(_run_line("AgentRx", report.run, "runs"), markup=False)
    console.print(_metric_table("Root cause", "slice", _AGENTRX_METRICS, data_json["metrics"]))
    console.print(
        "The extras are not the benchmark's metrics: the step within one of the root "
        "cause's, and the step being any labelled failure's.",
        markup=False,
    )
    note = _unanswered_line(
        [p.record_id for p in report.unanswered()],
        data_json["cut_records"],
        "run(s)",
        "each is scored wrong on every metric",
    )
    if note:
        console.print(note, markup=False)


_NO_ANSWER_CONNECTION = (
    "Answer accuracy needs a model connection: add one with `proctor models add NAME "
    "--provider … --default` (or pass --connection NAME); evidence recall needs none."
)


@eval_group.command("locomo")
@_DATA
@click.option(
    "--full-text", is_flag=True, help="Evaluate full-text search only (as without embeddings)."
)
@click.option(
    "--connection",
    "--model",
    "connection_name",
    metavar="NAME",
    help="Saved model connection that answers and judges (default: the default connection).",
)
@click.option(
    "--no-answers",
    is_flag=True,
    help="Evidence recall only: no model call, even when a connection is configured.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help="Evaluate N questions spread evenly over the dataset (the same ones every run).",
)
@json_option()
def locomo_command(
    data: Path,
    full_text: bool,
    connection_name: str | None,
    no_answers: bool,
    limit: int | None,
    as_json: bool,
) -> None:
    """Memory search on LoCoMo: evidence recall@5 and @10 by category; answer accuracy with a model.

    The dialogues are imported into a temporary store, indexed and searched with each
    question (within its conversation); the hits are scored against the question's gold
    evidence turns. A plain full-text baseline (FTS5 BM25 over the raw messages) is
    computed in the same run. When a model connection is configured (the default one, or
    --connection), the model answers each question from its top 10 hits and a second call
    judges the answer against the gold one: accuracy (the judge's CORRECT share) and
    token F1, by category. Model usage is recorded under the run's id.
    """
    if no_answers and connection_name:
        raise ConfigError("--no-answers makes no model call: drop --connection, or --no-answers")
    with ExitStack() as stack:
        store = None if no_answers else stack.enter_context(writable_store())
        connection = None
        if store is not None and (connection_name or default_connection_name(store)):
            connection = resolve_connection(store, connection_name)  # a broken one fails here
        with _progress_bar("searching LoCoMo questions") as progress:
            report: LocomoReport = evaluate_locomo(
                data, encoder=None if full_text else "auto", limit=limit, progress=progress
            )
        if store is None:
            report.answers_note = "turned off for this run (--no-answers)"
        elif connection is None:
            report.answers_note = _NO_ANSWER_CONNECTION
        else:
            limits = pool_limits(store)
            caller = open_caller(connection, limits=limits, recorder=store_recorder(store))
            with _progress_bar("answering LoCoMo questions") as progress:
                report.answers = anyio.run(
                    partial(
                        answer_locomo,
                        report.questions,
                        caller,
                        concurrency=limits.concurrency,
                        progress=progress,
                    )
                )
    if as_json:
        print_json(report.as_json())
        return
    _print_locomo(report)


def _print_locomo(report: LocomoReport) -> None:
    data_json = report.as_json()
    ranked_by = (
        f"hybrid (full text + {data_json['model']})"
        if report.mode == "hybrid"
        else f"full text only ({report.note})"
    )
    console.print(
        f"LoCoMo · {len(report.questions)} questions · {report.documents} turns · search: "
        f"{ranked_by} · indexed in {report.index_seconds:.1f} s ({report.embedded} embedded) · "
        f"searched in {report.search_seconds:.1f} s · {report.seconds:.1f} s in all",
        markup=False,
    )
    for title, rows in (
        ("Evidence recall by category", data_json["metrics"]),
        ("By conversation", data_json["by_conversation"]),
    ):
        console.print(_metric_table(title, "slice", _LOCOMO_RECALL_METRICS, rows))
    console.print(
        f"Baseline: {data_json['baseline']}. "
        + (
            f"{report.without_evidence} question(s) name no turn of their conversation as "
            "evidence and are not scored."
            if report.without_evidence
            else ""
        ),
        markup=False,
    )
    if report.answers is None:
        if report.answers_note == _NO_ANSWER_CONNECTION:
            console.print(_NO_ANSWER_CONNECTION, markup=False)
        return
    answers = report.answers
    console.print(
        "\n"
        + _run_line(f"Answers from the top {answers.context_turns} hits", answers.run, "questions"),
        markup=False,
    )
    title = "Answer accuracy by category (LLM judge; F1 beside it)"
    console.print(_metric_table(title, "slice", _LOCOMO_ANSWER_METRICS, answers.metrics()))
    missing = answers.missing()
    if missing:
        console.print(
            f"{len(missing)} question(s) without a valid answer or verdict (after one repair, "
            "or a failed call); each is scored wrong: " + ", ".join(r.question_id for r in missing),
            markup=False,
        )
