"""Confirmed memories reach the supervisor (SPEC SUP-3, SUP-10): remember → confirm → window.

A finding is remembered and confirmed; the next analysis of a conversation of the same
project sends the memory, labelled as memory, in its data block to the scripted model
server. A discarded draft, a draft never decided, and a memory of another project never
appear in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from proctor.findings import Evidence, Finding, finding_key
from proctor.models import set_default_connection
from proctor.sources import prepare_bundle
from proctor.store import SqlStore, open_store
from proctor.supervision import Scheduler, resolve_target
from proctor.supervision._execute import ModelExecutor
from proctor.supervisor import WindowLimits, build_window, memory_notes
from proctor.testing.scripted_model import ScriptedModelServer
from tests.builders import conversation_bundle
from tests.supervision.helpers import ManualClock

MINE, SIBLING, OTHER = "test:conv-1", "test:conv-3", "test:conv-2"
CONFIRMED = "Never run the migrations against the production database."
DISCARDED = "Quokka draft nobody wanted."
UNDECIDED = "Narwhal draft still waiting."
FOREIGN = "Billing project: keep the ledger in cents."


def _finding(conversation_id: str, title: str) -> Finding:
    evidence = [Evidence(source_type="tool_call", source_id=f"{conversation_id}:call-1")]
    return Finding(
        key=finding_key("budget", conversation_id, evidence, title),
        conversation_id=conversation_id,
        rule="budget",
        rule_version=1,
        action="warn",
        category="budget",
        severity="medium",
        title=title,
        evidence=evidence,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    """Conversations 1 and 3 in project invoice-service, 2 in billing; memories decided."""
    opened = open_store(tmp_path / "p.db")
    opened.write_conversation(prepare_bundle(conversation_bundle(MINE)))
    opened.write_conversation(prepare_bundle(conversation_bundle(SIBLING)))
    opened.write_conversation(prepare_bundle(conversation_bundle(OTHER, project_hint="billing")))
    titles = {
        (MINE, "Ran migrations on prod"): CONFIRMED,
        (MINE, "Pushed without tests"): DISCARDED,
        (SIBLING, "Skipped the linter"): UNDECIDED,
        (OTHER, "Floats in the ledger"): FOREIGN,
    }
    opened.record_findings([_finding(cid, title) for cid, title in titles])
    found = {(f.conversation_id, f.title): f.finding_id for f in opened.findings()[0]}
    for (cid, title), text in titles.items():
        finding_id = found[(cid, title)]
        assert finding_id is not None
        candidate = opened.remember_finding(finding_id, text)
        if text in (CONFIRMED, FOREIGN):
            opened.confirm_memory(candidate.candidate_id)
        elif text == DISCARDED:
            opened.discard_memory(candidate.candidate_id)
    yield opened
    opened.close()


def _memory_lines(text: str) -> list[dict[str, Any]]:
    """The memory entries of a data block (one JSON object per line)."""
    entries = []
    for line in text.splitlines():
        if line.startswith("{") and '"memory"' in line:
            entry = json.loads(line)
            if entry.get("type") == "memory":
                entries.append(entry)
    return entries


@pytest.mark.parametrize("conversation_id", [MINE, SIBLING])
def test_the_window_of_a_conversation_carries_only_its_projects_confirmed_memories(
    store: SqlStore, conversation_id: str
) -> None:
    notes = memory_notes(store, conversation_id)

    window = build_window(store.transcript(conversation_id), memories=notes)

    assert [note.text for note in window.memories] == [CONFIRMED]
    entries = _memory_lines("\n".join(window.lines))
    assert [entry["text"] for entry in entries] == [CONFIRMED]
    shown = "\n".join(window.lines)
    assert DISCARDED not in shown and UNDECIDED not in shown and FOREIGN not in shown


def test_another_projects_window_carries_its_own_memory_only(store: SqlStore) -> None:
    window = build_window(store.transcript(OTHER), memories=memory_notes(store, OTHER))
    assert [note.text for note in window.memories] == [FOREIGN]


def test_memories_stay_within_the_windows_count_and_character_budget(store: SqlStore) -> None:
    finding_id = store.findings(conversation_ids=[MINE])[0][0].finding_id
    assert finding_id is not None
    for number in range(4):
        candidate = store.remember_finding(finding_id, f"Memory {number}: " + "x" * 900)
        store.confirm_memory(candidate.candidate_id)
    limits = WindowLimits(memories=3, memory_chars=200)

    window = build_window(
        store.transcript(MINE), limits=limits, memories=memory_notes(store, MINE, limits)
    )

    assert len(window.memories) == 3
    assert all(len(entry["text"]) <= 260 for entry in _memory_lines("\n".join(window.lines)))
    assert CONFIRMED not in "\n".join(window.lines)  # the oldest, past the count


def test_an_analysis_sends_the_confirmed_memory_labelled_as_memory_to_the_model(
    store: SqlStore,
) -> None:
    clock = ManualClock()
    nothing: dict[str, Any] = {"decisions": []}
    with ScriptedModelServer(responder=lambda _request: nothing) as server:
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        scheduler = Scheduler(store, clock=clock, executor=ModelExecutor(store, clock=clock))

        async def analyse() -> None:
            outcome = await scheduler.request(resolve_target(store, MINE), "manual", manual=True)
            assert outcome.result is not None and outcome.result.run.status == "ok"

        anyio.run(analyse)
        [request] = [r for r in server.requests if "memory" in json.dumps(r.body)]

    data = "\n".join(m["content"] for m in request.messages if m["role"] == "user")
    assert [entry["text"] for entry in _memory_lines(data)] == [CONFIRMED]
    assert DISCARDED not in data and UNDECIDED not in data and FOREIGN not in data
    system = "\n".join(m["content"] for m in request.messages if m["role"] == "system")
    assert CONFIRMED not in system  # observed data, never instructions
