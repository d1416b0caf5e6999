"""``proctor findings``: list, show and triage findings."""

from __future__ import annotations

from typing import get_args

import click

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.cli._findings_view import finding_block, finding_json, findings_table
from proctor.findings import SEVERITY_ORDER, Status

STATUSES = list(get_args(Status))


@click.group()
def findings() -> None:
    """List, show and triage findings (acknowledge, resolve, dismiss, false positive, digest)."""


@findings.command("list")
@click.option("--conversation", "conversation", help="Only this conversation (id or prefix).")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(STATUSES),
    help="Only these statuses (default: open and acknowledged).",
)
@click.option("--all", "all_statuses", is_flag=True, help="Every status.")
@click.option("--min-severity", type=click.Choice(list(SEVERITY_ORDER)))
@click.option("--rule", help="Only this rule id.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@json_option()
def list_command(
    conversation: str | None,
    statuses: tuple[Status, ...],
    all_statuses: bool,
    min_severity: str | None,
    rule: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """List findings, most severe first."""
    chosen: list[Status] | None = (
        None if all_statuses else list(statuses or ("open", "acknowledged"))
    )
    with readable_store() as store:
        ids = None if conversation is None else [store.resolve_conversation_id(conversation)]
        rows, total = store.findings(
            conversation_ids=ids,
            statuses=chosen,
            min_severity=min_severity,
            rule=rule,
            limit=limit,
            offset=offset,
        )
    if as_json:
        print_json({"total": total, "offset": offset, "items": [finding_json(f) for f in rows]})
        return
    if not rows:
        console.print("No findings. Run `proctor check --all` to check stored conversations.")
        return
    console.print(findings_table(rows, width=console.width))
    if total > offset + len(rows) or offset:
        console.print(f"{offset + 1}–{offset + len(rows)} of {total}; use --offset to page")


@findings.command("show")
@click.argument("finding")
@json_option()
def show_command(finding: str, as_json: bool) -> None:
    """Show one finding with all its evidence (FINDING: id, key or prefix)."""
    with readable_store() as store:
        found = store.finding(store.resolve_finding_id(finding))
    if as_json:
        print_json(finding_json(found))
    else:
        console.print(finding_block(found, full=True))


def _status_command(name: str, status: Status, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("refs", nargs=-1, required=True)
    def command(refs: tuple[str, ...]) -> None:
        with writable_store() as store:
            for ref in refs:
                finding_id = store.resolve_finding_id(ref)
                changed = store.set_finding_status(finding_id, status)
                console.print(f"{finding_id[:12]} → {status}: {changed.title}", markup=False)

    return command


findings.add_command(
    _status_command("ack", "acknowledged", "Acknowledge findings (seen, being handled).")
)
findings.add_command(_status_command("resolve", "resolved", "Mark findings resolved."))
findings.add_command(
    _status_command("dismiss", "dismissed", "Dismiss findings (not worth acting on).")
)
findings.add_command(
    _status_command(
        "false-positive",
        "false_positive",
        "Mark findings as false positives (kept as evaluation data).",
    )
)
findings.add_command(_status_command("reopen", "open", "Reopen closed findings."))


@findings.command("digest")
@click.argument("refs", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Expand the findings again.")
def digest_command(refs: tuple[str, ...], undo: bool) -> None:
    """Collapse findings to one line in lists (or expand them again with --undo)."""
    with writable_store() as store:
        for ref in refs:
            finding_id = store.resolve_finding_id(ref)
            store.set_finding_digested(finding_id, not undo)
            console.print(f"{finding_id[:12]} {'expanded' if undo else 'digested'}", markup=False)
