"""The gate's test bench: real-shaped hook payloads, a Claude Code session, small test rules.

``fixtures/session.jsonl`` is a Claude Code session log (records in the shape Claude Code
2.1 writes: a request, a ``Read``, a failing ``pytest``); ``fixtures/session_tail.jsonl`` is
what Claude Code appends next: a new request, a vendored README whose output carries
instructions addressed to the agent, and the assistant message whose ``WebFetch`` call the
``PreToolUse`` hook in ``pre_tool_use_webfetch_injected.json`` is asked about.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from proctor._util.paths import proctor_home
from proctor.rules import Hit, Rule, RuleContext, cite_call, command_text
from proctor.rules._trace import Event
from proctor.transcript import ToolCall
from tests.backends import ON_POSTGRES, database_env

FIXTURES = Path(__file__).with_name("fixtures")
FIXTURE_CWD = "/home/dev/shop"
"""The project folder the fixtures were recorded in; tests move it to a temporary folder."""
SESSION_ID = "5d0f8a1e-7c44-4b8e-9a51-2f3c6e0b9d17"
CONVERSATION_ID = f"cc:session:{SESSION_ID}"
HOOK = [sys.executable, "-m", "proctor.cli.main", "gate"]

ASKED_ON_POSTGRES = "pre_tool_use_webfetch_injected.json"
"""The one payload fixture the hook-process comparisons ask on PostgreSQL (``on_backend``).

Those tests run every fixture through two ways of deciding (an entry point and the click
command, a kept cache and none) and compare the bytes; what differs between the fixtures is
the rules and the answer, which do not depend on the store. A ``PreToolUse`` payload reads
the stored session, the same way whichever it is: run on PostgreSQL through
``python -m proctor.cli.main gate`` and ``python -m proctor.gate`` under ``coverage run
--branch --source=proctor.store,proctor.gate``, each of the five reached the same 4,952
lines and arcs of ``proctor.store`` and of the gate modules that branch on the backend
(``_decide``, ``_kept``, ``_stored``, ``_history``), and ``post_tool_use.json`` and bytes
that are no payload reach no store at all. This one is decided from the stored history
(the injected text is in the session's tail)."""


def on_backend(names: Iterable[str]) -> list[str]:
    """``names``, or on PostgreSQL only ``ASKED_ON_POSTGRES`` of them."""
    return [name for name in names if not ON_POSTGRES or name == ASKED_ON_POSTGRES]


def _text(name: str, project: Path | None) -> str:
    text = (FIXTURES / name).read_text()
    return text if project is None else text.replace(FIXTURE_CWD, str(project))


def payload(name: str, *, project: Path | None = None, **overrides: Any) -> dict[str, Any]:
    """A hook payload fixture, moved to ``project``, with fields replaced (``None`` removes)."""
    data: dict[str, Any] = json.loads(_text(name, project))
    for key, value in overrides.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def write_session(folder: Path, *parts: str, project: Path | None = None) -> Path:
    """The session log as Claude Code names it (``<session id>.jsonl``), from fixture parts."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION_ID}.jsonl"
    path.write_text("".join(_text(part, project) for part in parts))
    return path


def append_session(path: Path, *parts: str, project: Path | None = None) -> None:
    """Append records, as Claude Code does while the session goes on."""
    with path.open("a") as handle:
        for part in parts:
            handle.write(_text(part, project))


def ingest_session(path: Path) -> None:
    """Import a session into the store of the current ``PROCTOR_HOME``."""
    from proctor.ingest import ingest
    from proctor.store import open_store

    store = open_store()
    try:
        report = ingest(store, [path])
    finally:
        store.close()
    assert not report.errors, report.errors


def run_hook(stdin: dict[str, Any] | bytes, *args: str) -> subprocess.CompletedProcess[str]:
    """``proctor gate`` as Claude Code runs it: a process reading the payload on stdin."""
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    env = {**os.environ, **database_env(proctor_home(), create=False)}
    completed = subprocess.run(
        [*HOOK, *args], input=data, capture_output=True, timeout=120, check=False, env=env
    )
    return subprocess.CompletedProcess(
        completed.args,
        completed.returncode,
        completed.stdout.decode(),
        completed.stderr.decode(),
    )


def write_policy(project: Path, text: str) -> Path:
    """``.proctor/policy.toml`` in a project folder."""
    path = project / ".proctor" / "policy.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class NoRootRemoval(Rule):
    """Test rule: a shell command that removes ``/`` is denied."""

    id = "test_no_root_removal"
    category = "risk"
    description = "A shell command removes the root folder."
    gate_mode = "deny"

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        """Fire on ``rm -rf /``."""
        command = command_text(call) or ""
        if "rm -rf /" in command:
            yield Hit(
                title="Removes the root folder",
                severity="high",
                content="rm -rf / deletes everything on the machine",
                evidence=(cite_call(call, "arguments.command", command),),
            )


class RepeatsFailedCommand(Rule):
    """Test rule, history-dependent: asks before re-running a command that already failed."""

    id = "test_repeats_failed_command"
    category = "repetition"
    description = "A shell command that failed before is run again unchanged."
    gate_mode = "ask"

    def start(self, context: RuleContext) -> set[str]:
        """Failed commands seen so far."""
        return set()

    def observe(self, state: set[str], event: Event, context: RuleContext) -> Iterable[Hit]:
        """Remember commands whose result was an error."""
        if event.kind == "result" and event.call is not None and event.call.status == "error":
            command = command_text(event.call)
            if command:
                state.add(command)
        return ()

    def before_call(self, state: set[str], call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        """Fire on a command already in ``state``."""
        command = command_text(call)
        if command in state:
            yield Hit(
                title="Repeats a command that failed",
                severity="medium",
                evidence=(cite_call(call, "arguments.command", command),),
            )


class CountsCalls(Rule):
    """Test rule: never fires; counts the events it observed."""

    id = "test_counts_calls"
    category = "budget"
    description = "Counts observed events."

    def __init__(self) -> None:
        self.observed: list[Event] = []

    def observe(self, state: Any, event: Event, context: RuleContext) -> Iterable[Hit]:
        """Record the event."""
        self.observed.append(event)
        return ()
