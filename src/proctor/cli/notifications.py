"""``proctor notifications``: list notifications, newest first, and mark them read."""

from __future__ import annotations

from typing import Any

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.cli._findings_view import SEVERITY_STYLE
from proctor.cli._refs import unique_prefixes
from proctor.cli._render import when
from proctor.cli._tables import Column, fitted_table
from proctor.errors import ConfigError
from proctor.store import Notification, NotificationPage

ID_CHARS = 8
"""A notification is shown by the shortest prefix of its id, at least this long, that no
other notification of the listing shares."""


def notification_json(notification: Notification) -> dict[str, Any]:
    """The ``--json`` shape of a notification (the API's too)."""
    return {
        "id": notification.key,
        "created_at": notification.created_at,
        "read_at": notification.read_at,
        "unread": notification.unread,
        "finding_id": notification.finding_id,
        "title": notification.title,
        "severity": notification.severity,
        "action": notification.action,
        "category": notification.category,
        "rule": notification.rule,
        "origin": notification.origin,
        "status": notification.status,
        "conversation_id": notification.conversation_id,
        "conversation_title": notification.conversation_title,
        "project": notification.project,
        "show": f"proctor findings show {notification.finding_id}",
        "webhook": {
            "state": notification.webhook_state,
            "attempts": notification.webhook_attempts,
            "error": notification.webhook_error,
        },
    }


def notifications_table(page: NotificationPage, *, width: int) -> Any:
    """One line per notification: its id, when, severity, title, finding and conversation."""
    refs = unique_prefixes([n.key for n in page.items], ID_CHARS)
    findings = unique_prefixes([n.finding_id for n in page.items], 12)
    columns = (
        Column("id", "id", style="dim"),
        Column("new"),
        Column("sev"),
        Column("title", "text", wrap=False, least=16),
        Column("finding", "id", drop=3),
        Column("project", "text", drop=1, style="dim", wrap=False, least=10),
        Column("created (UTC)", drop=2),
    )
    rows: list[list[str | Text]] = [
        [
            refs[n.key],
            Text("●", style="bold") if n.unread else "",
            Text(n.severity, style=SEVERITY_STYLE.get(n.severity, "")),
            " ".join(n.title.split()),
            findings[n.finding_id],
            n.project,
            when(n.created_at),
        ]
        for n in page.items
    ]
    return fitted_table(columns, rows, width=width)


@click.group(invoke_without_command=True)
@click.option("--unread", is_flag=True, help="Only notifications not yet read.")
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="How many to show."
)
@click.option("--offset", type=click.IntRange(0), default=0, help="How many to skip (paging).")
@json_option()
@click.pass_context
def notifications(ctx: click.Context, unread: bool, limit: int, offset: int, as_json: bool) -> None:
    """List notifications, newest first (● in "new": not read yet).

    A notification is written once per finding that asks for attention: a review request,
    a high-severity warning, a pause or a stop. Each names its finding: `proctor findings
    show FINDING` shows it. `proctor notifications read ID…` (or `--all`) marks them read.
    """
    if ctx.invoked_subcommand is not None:
        return
    with readable_store() as store:
        page = store.notification_page(unread_only=unread, limit=limit, offset=offset)
    if as_json:
        print_json(
            {
                "total": page.total,
                "unread": page.unread,
                "offset": offset,
                "limit": limit,
                "items": [notification_json(n) for n in page.items],
            }
        )
        return
    if not page.items:
        console.print(
            "No unread notifications." if unread else "No notifications.",
            markup=False,
        )
        return
    console.print(notifications_table(page, width=console.width))
    shown = f"{offset + 1}–{offset + len(page.items)} of {page.total}"
    console.print(
        f"{shown} · {page.unread} unread · `proctor findings show FINDING` shows one · "
        "`proctor notifications read ID…` or `--all` marks read",
        markup=False,
    )


@notifications.command("read")
@click.argument("refs", nargs=-1, metavar="[ID]...")
@click.option("--all", "read_all", is_flag=True, help="Mark every unread notification read.")
@json_option()
def read_command(refs: tuple[str, ...], read_all: bool, as_json: bool) -> None:
    """Mark notifications read (ID: a notification's id, its finding's id, or a unique
    prefix of either), or all of them with --all."""
    if bool(refs) == read_all:
        raise ConfigError("name the notifications to mark read, or pass --all (not both)")
    with writable_store() as store:
        keys = None if read_all else [store.resolve_notification_key(ref) for ref in refs]
        marked = store.mark_notifications_read(keys)
        unread = store.unread_notification_count()
    if as_json:
        print_json({"marked": marked, "unread": unread})
        return
    console.print(f"{len(marked)} marked read · {unread} unread", markup=False)
