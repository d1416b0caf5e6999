"""``proctor eval``: Proctor's supervisor on public benchmarks, with the benchmark's metric."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from proctor.cli._common import console, json_option, print_json
from proctor.evals import evaluate_agentdojo, evaluate_r_judge

_DATA = click.option(
    "--data",
    "data",
    type=click.Path(path_type=Path, exists=True),
    required=True,
    help="Folder (or file) with the benchmark's data, e.g. ../shared/datasets/agentdojo.",
)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


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
        console.print(_table(title, report.slices()[view]))
    unobservable = report.unobservable()
    if unobservable:
        console.print(
            f"{len(unobservable)} hijacked run(s) cannot be seen in their trace: "
            + ", ".join(p.trace_id for p in unobservable),
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


def _table(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in (
        "agent",
        "hijacked",
        "TP",
        "FN",
        "TPR",
        "FP benign",
        "FPR benign",
        "FP resisted",
        "FPR resisted",
        "FPR both",
        "precision",
    ):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent, m in rows.items():
        table.add_row(
            Text(agent, style="bold" if agent == "overall" else ""),
            str(m["positives"]),
            str(m["tp"]),
            str(m["fn"]),
            _pct(m["tpr"]),
            f"{m['fp_benign']}/{m['benign']}",
            _pct(m["fpr_benign"]),
            f"{m['fp_resisted']}/{m['resisted']}",
            _pct(m["fpr_resisted"]),
            _pct(m["fpr_benign_and_resisted"]),
            _pct(m["precision"]),
        )
    return table


@eval_group.command("r-judge")
@_DATA
@click.option(
    "--rules-only",
    is_flag=True,
    required=True,
    help="Deterministic rules only (no model): the baseline.",
)
@json_option()
def r_judge_command(data: Path, rules_only: bool, as_json: bool) -> None:
    """Unsafe-record detection on R-Judge: precision, recall and F1 of the unsafe class."""
    report = evaluate_r_judge(data)
    if as_json:
        print_json(report.as_json())
        return
    metrics = report.as_json()["metrics"]
    table = Table(title=f"R-Judge · {report.run.traces} records · rules only", title_justify="left")
    for column in ("slice", "records", "TP", "FP", "FN", "TN", "precision", "recall", "F1"):
        table.add_column(column, justify="left" if column == "slice" else "right")
    for name, m in metrics.items():
        table.add_row(
            name,
            str(m["records"]),
            str(m["tp"]),
            str(m["fp"]),
            str(m["fn"]),
            str(m["tn"]),
            _pct(m["precision"]),
            _pct(m["recall"]),
            _pct(m["f1"]),
        )
    console.print(table)
