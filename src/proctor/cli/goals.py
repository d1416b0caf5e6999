"""``proctor goals``: a conversation's goal versions, each user turn's intent, goal findings."""

from __future__ import annotations

from typing import Any

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, readable_store
from proctor.cli._findings_view import finding_block, finding_json
from proctor.store import GoalVersion, IntentLabel
from proctor.supervision import GoalView, goal_view


@click.command("goals")
@click.argument("conversation")
@json_option()
def goals_command(conversation: str, as_json: bool) -> None:
    """Show CONVERSATION's goal: versions, the user turns that set them, intents, findings.

    Goals are recorded by `proctor check` (lexical intent labels when no model is
    configured) and by supervision in goal mode.
    """
    with readable_store() as store:
        view = goal_view(store, store.resolve_conversation_id(conversation))
    if as_json:
        print_json(goals_json(view))
        return
    console.print(goals_text(view))


def goals_json(view: GoalView) -> dict[str, Any]:
    """The ``--json`` shape (the same fields as ``GET /api/conversations/{id}/goals``)."""
    return {
        "conversation_id": view.conversation_id,
        "current": None if view.current is None else _version_json(view.current),
        "versions": [_version_json(v) for v in view.versions],
        "turns": [
            {
                "source_id": turn.source_id,
                "text": turn.text,
                "created_at": turn.created_at,
                "intent": None if turn.label is None else _label_json(turn.label),
                "set_version": turn.set_version,
            }
            for turn in view.turns
        ],
        "tasks": [
            {
                "task_id": task.task_id,
                "title": task.title,
                "versions": [_version_json(v) for v in task.versions],
            }
            for task in view.tasks
        ],
        "findings": [finding_json(f) for f in view.findings],
    }


def goals_text(view: GoalView) -> Text:
    """The terminal view: current goal, history, turns with their intent, goal findings."""
    text = Text()
    text.append("Goal of ", style="bold")
    text.append(view.conversation_id)
    if view.current is None:
        text.append(
            "\nNo goal recorded yet: run `proctor check` (or supervise it in goal mode).",
            style="dim",
        )
    else:
        state = " (cancelled)" if view.current.closed else ""
        text.append(f"\nCurrent (v{view.current.version}{state}): ", style="bold")
        text.append(view.current.goal)
    if view.versions:
        text.append("\n\nHistory", style="bold")
        for version in view.versions:
            text.append(f"\n  v{version.version} {version.reason:<9}", style="cyan")
            text.append(f" {_when(version)} {version.goal_hash[:12]}", style="dim")
            text.append(f"  set by {version.source_id or '—'}", style="dim")
            text.append(f"\n      {_first_line(version.goal)}")
    if view.turns:
        text.append("\n\nUser turns", style="bold")
        for turn in view.turns:
            text.append("\n  ")
            if turn.label is None:
                text.append("unlabelled", style="dim")
            else:
                text.append(_label_text(turn.label))
            if turn.set_version is not None:
                text.append(f" → v{turn.set_version}", style="green")
            text.append(f"  {turn.source_id}", style="dim")
            text.append(f"\n      {turn.text}")
    for task in view.tasks:
        if task.versions:
            text.append(f"\n\nTask {task.task_id}: ", style="bold")
            text.append(_first_line(task.versions[-1].goal))
    text.append(f"\n\nGoal findings ({len(view.findings)})", style="bold")
    for finding in view.findings:
        text.append("\n")
        text.append(finding_block(finding, full=False))
    return text


def _label_text(label: IntentLabel) -> Text:
    text = Text(f"{label.intent:<8} {label.confidence:.2f}")
    if label.low_confidence:
        text.append(" low confidence", style="yellow")
    text.append(f" ({label.model or 'lexical'})", style="dim")
    return text


def _version_json(version: GoalVersion) -> dict[str, Any]:
    return {
        "version": version.version,
        "goal": version.goal,
        "goal_hash": version.goal_hash,
        "reason": version.reason,
        "source_id": version.source_id,
        "created_at": version.created_at,
        "closed": version.closed,
    }


def _label_json(label: IntentLabel) -> dict[str, Any]:
    return {
        "intent": label.intent,
        "confidence": label.confidence,
        "low_confidence": label.low_confidence,
        "goal_version": label.goal_version,
        "classifier": label.model or "lexical",
    }


def _when(version: GoalVersion) -> str:
    return "" if version.created_at is None else version.created_at.strftime("%Y-%m-%d %H:%M")


def _first_line(goal: str) -> str:
    line = goal.strip().splitlines()[0] if goal.strip() else ""
    return line if len(line) <= 200 else line[:199] + "…"
