"""``proctor findings``: list, show and triage findings."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, get_args

import click

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.cli._findings_view import finding_block, finding_json, findings_table
from proctor.findings import SEVERITY_ORDER, Severity, Status
from proctor.store import FindingFilter, FindingSort, ReadStore

STATUSES = list(get_args(Status))
DATE_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]


@click.group()
def findings() -> None:
    """List, show and triage findings (acknowledge, resolve, dismiss, false positive, digest)."""


def _filter_options(command: Callable[..., None]) -> Callable[..., None]:
    """The inbox's filters, shared by ``list`` and ``bulk``."""
    options = [
        click.option(
            "--conversation", "conversation", help="Only this conversation (id or prefix)."
        ),
        click.option(
            "--status",
            "statuses",
            multiple=True,
            type=click.Choice(STATUSES),
            help="Only these statuses (default: open and acknowledged).",
        ),
        click.option("--all", "all_statuses", is_flag=True, help="Every status."),
        click.option("--min-severity", type=click.Choice(list(SEVERITY_ORDER))),
        click.option(
            "--severity",
            "severities",
            multiple=True,
            type=click.Choice(list(SEVERITY_ORDER)),
            help="Only these severities (repeat for several).",
        ),
        click.option("--rule", "rules", multiple=True, help="Only these rule ids (repeatable)."),
        click.option(
            "--origin",
            "origins",
            multiple=True,
            type=click.Choice(["rule", "model"]),
            help="Only from rules, or only from the model supervisor.",
        ),
        click.option("--project", "projects", multiple=True, help="Only these projects (by name)."),
        click.option(
            "--since",
            type=click.DateTime(DATE_FORMATS),
            help="Created at or after (UTC; a date or date and time).",
        ),
        click.option("--until", type=click.DateTime(DATE_FORMATS), help="Created before (UTC)."),
        click.option("-q", "--query", "text", help="Words the title or the content contains."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _chosen(
    store: ReadStore,
    *,
    conversation: str | None,
    statuses: tuple[Status, ...],
    all_statuses: bool,
    min_severity: Severity | None,
    severities: tuple[str, ...],
    rules: tuple[str, ...],
    origins: tuple[str, ...],
    projects: tuple[str, ...],
    since: datetime | None,
    until: datetime | None,
    text: str | None,
) -> FindingFilter:
    return FindingFilter(
        conversation_ids=None
        if conversation is None
        else [store.resolve_conversation_id(conversation)],
        statuses=None if all_statuses else list(statuses or ("open", "acknowledged")),
        min_severity=min_severity,
        severities=list(severities) or None,
        rules=list(rules) or None,
        origins=list(origins) or None,
        projects=list(projects) or None,
        since=None if since is None else since.replace(tzinfo=UTC),
        until=None if until is None else until.replace(tzinfo=UTC),
        text=text,
    )


@findings.command("list")
@_filter_options
@click.option(
    "--sort",
    type=click.Choice(["severity", "created", "updated", "rule", "conversation"]),
    default="severity",
    show_default=True,
)
@click.option("--asc", "ascending", is_flag=True, help="Ascending (default: descending).")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@json_option()
def list_command(
    sort: FindingSort, ascending: bool, limit: int, offset: int, as_json: bool, **filters: Any
) -> None:
    """List findings over every conversation, most severe first, with the total."""
    with readable_store() as store:
        page = store.findings_page(
            _chosen(store, **filters),
            sort=sort,
            order="asc" if ascending else "desc",
            limit=limit,
            offset=offset,
        )
    rows, total = page.findings, page.total
    if as_json:
        print_json({"total": total, "offset": offset, "items": [finding_json(f) for f in rows]})
        return
    if not rows:
        if total:
            console.print(f"No findings past {offset}; {total} match.")
        else:
            console.print("No findings. Run `proctor check --all` to check stored conversations.")
        return
    console.print(findings_table(rows, width=console.width))
    if total > offset + len(rows) or offset:
        console.print(f"{offset + 1}–{offset + len(rows)} of {total}; use --offset to page")


BULK_ACTIONS: dict[str, Status] = {
    "ack": "acknowledged",
    "resolve": "resolved",
    "dismiss": "dismissed",
    "false-positive": "false_positive",
}


@findings.command("bulk")
@click.argument("action", type=click.Choice(list(BULK_ACTIONS)))
@_filter_options
@click.option("--yes", is_flag=True, help="Do it without asking.")
@json_option()
def bulk_command(action: str, yes: bool, as_json: bool, **filters: Any) -> None:
    """Change every finding the filters match in one transaction (ACTION: ack, resolve,
    dismiss or false-positive); prints the change id ``findings undo`` takes back."""
    with writable_store() as store:
        chosen = _chosen(store, **filters)
        matching = store.findings_page(chosen, limit=1).total
        if not yes and not as_json:
            click.confirm(f"{action} {matching} finding(s)?", abort=True)
        change = store.change_findings(
            chosen, action=action.replace("-", "_"), status=BULK_ACTIONS[action]
        )
    if as_json:
        print_json(
            {
                "change_id": change.change_id,
                "status": change.status,
                "changed": change.changed,
                "unchanged": change.unchanged,
            }
        )
        return
    console.print(
        f"{change.changed} finding(s) → {change.status}; {change.unchanged} unchanged.",
        markup=False,
    )
    if change.change_id:
        console.print(f"Undo with: proctor findings undo {change.change_id}", markup=False)


@findings.command("undo")
@click.argument("change")
@json_option()
def undo_command(change: str, as_json: bool) -> None:
    """Give every finding of a bulk change its previous status back (CHANGE: the id
    ``findings bulk`` printed); refused when any of them changed status since."""
    with writable_store() as store:
        outcome = store.undo_finding_change(change)
    if as_json:
        print_json({"change_id": outcome.change_id, "restored": outcome.restored})
    else:
        console.print(f"Undone: {outcome.restored} finding(s) restored.", markup=False)


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
