"""``proctor check``: run the deterministic rules over stored conversations."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, writable_store
from proctor.cli._exit import EXIT_PARTIAL
from proctor.cli._findings_view import finding_block, finding_json
from proctor.errors import ConfigError
from proctor.findings import SEVERITY_ORDER, Severity
from proctor.notify import hand_off_webhooks
from proctor.supervision import check_conversations


@click.command("check")
@click.argument("conversations", nargs=-1)
@click.option("--all", "check_all", is_flag=True, help="Check every stored conversation.")
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Policy file to use instead of the one found for each project.",
)
@click.option(
    "--fail-on",
    type=click.Choice(list(SEVERITY_ORDER)),
    help="Exit with status 1 when a finding of this severity or worse is open.",
)
@json_option()
@click.pass_context
def check_command(
    ctx: click.Context,
    conversations: tuple[str, ...],
    check_all: bool,
    policy_path: Path | None,
    fail_on: Severity | None,
    as_json: bool,
) -> None:
    """Run the deterministic rules over CONVERSATIONS (ids, session ids or prefixes).

    Findings are recorded by key: running again updates them instead of adding duplicates,
    and never changes a status you set.
    """
    if not conversations and not check_all:
        raise ConfigError("name the conversations to check, or pass --all")
    with writable_store() as store:
        if check_all:
            ids = [
                row.conversation_id
                for row in store.list_conversations(limit=1_000_000, include_children=False)
            ]
        else:
            ids = [store.resolve_conversation_id(ref) for ref in conversations]
        results = check_conversations(store, ids, policy_path=policy_path)
        hand_off_webhooks(store)  # detached: the command never waits for a receiver
    found = [f for result in results for f in result.findings]
    if as_json:
        print_json(
            {
                "conversations": [
                    {
                        "conversation_id": r.conversation_id,
                        "policy": r.policy_source,
                        "new": list(r.outcome.new),
                        "updated": list(r.outcome.updated),
                        "notified": list(r.outcome.notified),
                        "findings": [finding_json(f) for f in r.findings],
                    }
                    for r in results
                ]
            }
        )
    else:
        for result in results:
            if not result.findings:
                continue
            console.print(Text(f"\n{result.conversation_id}", style="bold underline"))
            new = set(result.outcome.new)
            ordered = sorted(result.findings, key=lambda f: -SEVERITY_ORDER[f.severity])
            for finding in ordered:
                console.print(finding_block(finding, new=finding.key in new))
        notified = sum(len(r.outcome.notified) for r in results)
        summary = f"\n{len(results)} conversation(s) checked · {len(found)} finding(s)"
        summary += f" · {sum(len(r.outcome.new) for r in results)} new"
        if notified:
            summary += f" · {notified} notification(s)"
        console.print(summary, markup=False)
    if fail_on is not None and any(
        SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER[fail_on] for f in found
    ):
        ctx.exit(EXIT_PARTIAL)
