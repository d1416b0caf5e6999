"""Rendering findings for people: severity first, evidence you can follow.

Transcript excerpts inside findings are untrusted text and are always shown literally.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from proctor.cli._refs import unique_prefixes
from proctor.cli._render import when
from proctor.cli._tables import Column, fitted_table
from proctor.findings import Finding

SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}


def finding_json(finding: Finding) -> dict[str, Any]:
    """The ``--json`` shape of a finding."""
    return finding.model_dump(mode="json")


def finding_block(finding: Finding, *, new: bool = False, full: bool = True) -> Text:
    """A finding with its evidence, for ``check`` and ``findings show``."""
    text = Text()
    text.append(f"{finding.severity.upper():<6}", style=SEVERITY_STYLE.get(finding.severity, ""))
    text.append(f" {finding.title}", style="bold")
    text.append(f"  [{finding.rule} v{finding.rule_version}, {finding.action}", style="dim")
    if finding.status != "open":
        text.append(f", {finding.status}", style="dim")
    text.append("]", style="dim")
    if new:
        text.append("  new", style="green")
    if finding.digested and not full:
        return text
    if finding.origin == "model":
        judged = f"\n    model judgement · confidence {finding.confidence:.2f}"
        if finding.speculative:
            judged += " · speculative: no evidence it cited could be verified"
        text.append(judged, style="magenta")
    if finding.content:
        text.append(f"\n    {finding.content}")
    if finding.actual is not None or finding.threshold is not None:
        text.append(f"\n    actual: {finding.actual!s}", style="dim")
        if finding.threshold is not None:
            text.append(f" · threshold: {finding.threshold!s}", style="dim")
    for evidence in finding.evidence:
        text.append("\n    ↳ ", style="dim")
        text.append(evidence.address(), style="cyan")
        if evidence.excerpt:
            text.append(f"\n      “{evidence.excerpt}”", style="italic")
    if finding.finding_id:
        text.append(f"\n    id {finding.finding_id[:12]}", style="dim")
    return text


def findings_table(findings: list[Finding], *, width: int) -> Table:
    """One line per finding for ``findings list``; digested findings stay one line.

    Ids are shown by the shortest prefix (12 characters at least) that no other id or key
    of the listing shares, so each one is what ``findings show`` takes.
    """
    ids = [f.finding_id for f in findings if f.finding_id]
    refs = unique_prefixes([*ids, *(f.key for f in findings if f.key)], 12)
    columns = (
        Column("id", "id", style="dim"),
        Column("sev"),
        Column("rule", "id", drop=4),
        Column("title", "text", wrap=False, least=16),
        Column("conversation", "text", drop=1, style="dim", wrap=False, least=14),
        Column("status", drop=3),
        Column("updated (UTC)", drop=2),
    )
    rows: list[list[str | Text]] = []
    for finding in findings:
        status = finding.status + (" · digested" if finding.digested else "")
        rows.append(
            [
                refs[finding.finding_id] if finding.finding_id else "",
                Text(finding.severity, style=SEVERITY_STYLE.get(finding.severity, "")),
                finding.rule,
                " ".join(finding.title.split()),
                finding.conversation_id,
                status,
                when(finding.updated_at),
            ]
        )
    return fitted_table(columns, rows, width=width)
