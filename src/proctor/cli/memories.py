"""``proctor memories``: what the supervisor remembers — candidates from findings, confirmed."""

from __future__ import annotations

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.store import MemoryCandidate


@click.group()
def memories() -> None:
    """Memories: remember a finding, then confirm or discard the drafted candidate.

    Only confirmed memories reach the supervisor, for conversations of their project.
    """


@memories.command("list")
@click.option("--project", help="Only this project (id or name).")
@json_option()
def list_command(project: str | None, as_json: bool) -> None:
    """Confirmed memories and the candidates waiting for a decision."""
    with readable_store() as store:
        confirmed = store.memories(project=project)
        pending = store.memory_candidates(project=project)
    if as_json:
        print_json(
            {
                "memories": [
                    {
                        "memory_id": m.memory_id,
                        "project_id": m.project_id,
                        "text": m.text,
                        "entity_id": m.entity_id,
                        "suggestion_id": m.suggestion_id,
                    }
                    for m in confirmed
                ],
                "candidates": [_candidate_json(c) for c in pending],
            }
        )
        return
    if not confirmed and not pending:
        console.print("No memories. `proctor memories remember FINDING` drafts one from a finding.")
        return
    for candidate in pending:
        console.print(
            Text.assemble(("candidate ", "yellow"), (candidate.candidate_id[:12], "dim"), " ")
            + Text(candidate.text)
        )
    for memory in confirmed:
        origin = f" (from suggestion {memory.suggestion_id[:8]})" if memory.suggestion_id else ""
        console.print(
            Text.assemble(("memory    ", "green"), (memory.memory_id[:12], "dim"), " ")
            + Text(memory.text)
            + Text(origin, style="dim")
        )


@memories.command("remember")
@click.argument("finding")
@click.option("--text", help="The memory's text (default: drafted from the finding).")
@json_option()
def remember_command(finding: str, text: str | None, as_json: bool) -> None:
    """Draft a memory candidate from FINDING (id, key or prefix)."""
    with writable_store() as store:
        candidate = store.remember_finding(store.resolve_finding_id(finding), text)
    _show(candidate, as_json, "drafted; confirm it with `proctor memories confirm ID`")


@memories.command("confirm")
@click.argument("candidate")
@click.option("--text", help="The text to keep (default: the candidate's).")
@json_option()
def confirm_command(candidate: str, text: str | None, as_json: bool) -> None:
    """Confirm CANDIDATE: the supervisor sees it from now on."""
    with writable_store() as store:
        decided = store.confirm_memory(
            _candidate_id(store.memory_candidates(status=None), candidate), text
        )
    _show(decided, as_json, "confirmed")


@memories.command("discard")
@click.argument("candidate")
@json_option()
def discard_command(candidate: str, as_json: bool) -> None:
    """Discard CANDIDATE: nothing reaches the supervisor."""
    with writable_store() as store:
        decided = store.discard_memory(
            _candidate_id(store.memory_candidates(status=None), candidate)
        )
    _show(decided, as_json, "discarded")


def _candidate_id(known: list[MemoryCandidate], ref: str) -> str:
    """A full candidate id for an id or unique prefix (the id itself when none matches)."""
    matches = [c.candidate_id for c in known if c.candidate_id.startswith(ref)]
    return matches[0] if len(matches) == 1 else ref


def _show(candidate: MemoryCandidate, as_json: bool, what: str) -> None:
    if as_json:
        print_json(_candidate_json(candidate))
        return
    console.print(
        Text.assemble((candidate.candidate_id[:12], "dim"), f" {what}: ") + Text(candidate.text)
    )


def _candidate_json(candidate: MemoryCandidate) -> dict[str, object]:
    return {
        "candidate_id": candidate.candidate_id,
        "finding_id": candidate.finding_id,
        "project_id": candidate.project_id,
        "text": candidate.text,
        "status": candidate.status,
        "memory_id": candidate.memory_id,
        "created_at": candidate.created_at,
        "decided_at": candidate.decided_at,
    }
