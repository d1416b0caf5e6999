"""Sub-agent cards in the terminal (seed 004): one panel per run a conversation started, with
its type, the task it was given, status, duration, tool calls, its own findings and its
final summary; a finished run's summary is cut to a few lines unless ``--full``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from proctor.cli._render import clip
from proctor.store import SubagentCard

DIGEST_CHARACTERS = 400


def duration_text(ms: int | None) -> str:
    """``420 ms``, ``16.7 s``, ``3 min 12 s``; ``unknown`` when not recorded."""
    if ms is None:
        return "unknown"
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {round(ms % 60_000 / 1000)} s"


def card_json(card: SubagentCard) -> dict[str, Any]:
    """The ``--json`` shape of a card (the API's ``SubagentCardOut``)."""
    return {**asdict(card), "finished": card.finished}


def card_panel(card: SubagentCard, *, full: bool) -> Panel:
    """One card; observed text (task, summary) is printed literally."""
    status = card.status or card.stop_kind or ("completed" if card.finished else "running")
    head = Text()
    head.append(f"{card.agent_type or 'agent'}", style="bold")
    head.append(f" · {status}", style="red" if status in ("error", "failed") else "green")
    head.append(
        f" · {duration_text(card.duration_ms)} · {card.tool_calls} tool calls"
        f" · {card.findings} findings ({card.open_findings} open)"
        f" · {card.total_tokens} tokens"
    )
    lines: list[Text] = [head, Text(f"task: {card.description or '—'}")]
    lines.append(Text(f"trace: proctor conversations show {card.conversation_id}", style="dim"))
    if card.parent_tool_call_id:
        lines.append(Text(f"started by {card.parent_tool_call_id}", style="dim"))
    summary = card.summary or "(no summary)"
    if not full and card.finished:
        summary = clip(summary, DIGEST_CHARACTERS)
    lines.append(Text("summary:", style="bold"))
    lines.append(Text(summary))
    return Panel(Group(*lines), title="sub-agent", title_align="left", expand=False)


def cards_view(cards: list[SubagentCard], *, full: bool) -> Group:
    """Every card, under a heading."""
    return Group(
        Text(f"sub-agent cards ({len(cards)})", style="bold"),
        *(card_panel(card, full=full) for card in cards),
    )
