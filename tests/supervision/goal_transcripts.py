"""Claude Code session files in which the user changes the goal, in many phrasings.

Each session opens with a request (the goal), gets a reply, and then the user says
something for every step of ``turns``: the reply after each keeps the agent talking, so
every turn is a typed user turn with the agent's reply before it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

FIRST_REQUEST = "Please fix the rounding of the invoice totals and add a regression test."


@dataclass(frozen=True)
class Turn:
    """A user turn and the intent the lexical classifier should give it."""

    text: str
    intent: str
    changes_goal: bool


RE_GOALS: tuple[Turn, ...] = (
    Turn("New task: write the changelog for release 2.0.", "new_goal", True),
    Turn("Switching gears — draft the release notes for the mobile app.", "new_goal", True),
    Turn("Moving on: add a dark mode toggle to the settings page.", "new_goal", True),
    Turn("Never mind that. Please set up the CI pipeline for the docs site.", "new_goal", True),
    Turn("Actually, the bug is in the VAT code, not the totals.", "correct", True),
    Turn("I meant the export command, not the import one.", "correct", True),
    Turn("Also add a test for the credit notes.", "expand", True),
    Turn("While you're at it, update the README section on rounding.", "expand", True),
    Turn("Make sure the totals use half-even rounding.", "refine", True),
    Turn("Stop.", "cancel", True),
)
"""Turns that change the goal, one phrasing each (the classifier's vocabulary varied)."""

CHATTER: tuple[Turn, ...] = (
    Turn("How is it going?", "continue", False),
    Turn("ok", "continue", False),
)
"""Turns that leave the goal as it is (low confidence or an explicit continue)."""


def session_lines(session_id: str, turns: list[str], *, cwd: str = "/srv/invoices") -> list[str]:
    """JSON Lines of a Claude Code session: the first request, then ``turns``, each answered."""
    lines: list[str] = []
    parent: str | None = None
    second = 0

    def add(kind: str, message: dict[str, object]) -> None:
        nonlocal parent, second
        record_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/{len(lines)}"))
        lines.append(
            json.dumps(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "userType": "external",
                    "cwd": cwd,
                    "sessionId": session_id,
                    "version": "2.1.39",
                    "type": kind,
                    "message": message,
                    "uuid": record_id,
                    "timestamp": f"2026-02-17T09:{second // 60:02d}:{second % 60:02d}.000Z",
                }
            )
        )
        parent = record_id
        second += 7

    for number, text in enumerate([FIRST_REQUEST, *turns]):
        add("user", {"role": "user", "content": text})
        add(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-test",
                "id": f"msg_{session_id}_{number}",
                "type": "message",
                "content": [{"type": "text", "text": f"Working on it (step {number})."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )
    return lines


def write_session(folder: Path, session_id: str, turns: list[str]) -> Path:
    """Write one session file under ``folder`` (a Claude Code project folder); its path."""
    project = folder / "-srv-invoices"
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"{session_id}.jsonl"
    path.write_text("\n".join(session_lines(session_id, turns)) + "\n", encoding="utf-8")
    return path
