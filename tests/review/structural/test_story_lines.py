"""One deterministic story line per conversation, sub-agents as sub-threads (REV-9)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from proctor.graph import BatchFacts, EventFact, SourceRef
from proctor.review._batch import SourceBatch
from proctor.review.structural import (
    STORY_LINE_NAMESPACE,
    conversation_story_lines,
    story_line_id,
    story_line_key,
)
from proctor.transcript import Conversation
from tests.review.structural.helpers import CLAUDE_AGENT, CLAUDE_MAIN, CODEX

_EARLIEST = datetime.min.replace(tzinfo=UTC)


def test_each_conversation_with_events_gets_one_line_in_time_order(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    lines = conversation_story_lines(examples_facts.events, examples_batch.conversations)
    assert [line.key for line in lines] == [
        story_line_key(CLAUDE_MAIN),
        story_line_key(CLAUDE_AGENT),
        story_line_key(CODEX),
    ]
    by_id = {e.event_id: e for e in examples_facts.events}
    for line in lines:
        conversation_id = line.key.removeprefix("conversation:")
        assert line.story_line_id == str(uuid.uuid5(STORY_LINE_NAMESPACE, conversation_id))
        assert line.story_line_id == story_line_id(conversation_id)
        assert line.must_exist is False
        events = [by_id[i] for i in line.event_ids]
        assert {e.conversation_id for e in events} == {conversation_id}
        times = [e.occurred_at or _EARLIEST for e in events]
        assert times == sorted(times)
    assert sum(len(line.event_ids) for line in lines) == len(examples_facts.events)


def test_lines_are_titled_and_summarised_from_structure(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    main, agent, codex = conversation_story_lines(
        examples_facts.events, examples_batch.conversations
    )
    assert main.title.startswith("Finance says some invoice totals are off by a cent.")
    assert main.summary == (
        "6 commands (6 failed), 3 files edited, 3 files read, tests: failing, 1 error, "
        "1 URL fetched, 1 sub-agent run"
    )
    assert agent.title == "Map money rounding call sites"
    assert agent.summary == "1 file read"
    assert codex.summary == (
        "8 commands (4 failed), 2 files edited, 1 file created, 2 files read, tests: failing, "
        "2 task updates"
    )


def test_a_sub_agent_line_hangs_under_its_parent_line(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    lines = {
        line.key: line
        for line in conversation_story_lines(examples_facts.events, examples_batch.conversations)
    }
    assert lines[story_line_key(CLAUDE_AGENT)].parent_key == story_line_key(CLAUDE_MAIN)
    assert lines[story_line_key(CLAUDE_MAIN)].parent_key is None
    assert lines[story_line_key(CODEX)].parent_key is None


def test_a_parent_without_events_still_gets_a_line_for_its_sub_agent(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    agent_events = [e for e in examples_facts.events if e.conversation_id == CLAUDE_AGENT]
    lines = conversation_story_lines(agent_events, examples_batch.conversations)
    assert [(line.key, line.parent_key, line.event_ids) for line in lines] == [
        (story_line_key(CLAUDE_MAIN), None, ()),
        (story_line_key(CLAUDE_AGENT), story_line_key(CLAUDE_MAIN), (agent_events[0].event_id,)),
    ]
    assert lines[0].summary == "no structural events"
    # Without the parent conversation the sub-agent's line stands alone.
    alone = conversation_story_lines(
        agent_events, {CLAUDE_AGENT: examples_batch.conversations[CLAUDE_AGENT]}
    )
    assert [(line.key, line.parent_key) for line in alone] == [(story_line_key(CLAUDE_AGENT), None)]


def test_a_conversation_without_a_title_is_named_by_its_id_and_folder() -> None:
    conversation = Conversation("gemini:abc12345-6789", "gemini_cli", "abc12345-6789",
                                cwd="/home/dev/app")  # fmt: skip
    event = EventFact(
        event_id="e1",
        project_id="p",
        kind="command",
        title="Ran ls",
        summary="ls succeeded.",
        occurred_at=None,
        conversation_id=conversation.conversation_id,
        sources=(SourceRef("tool_call", "t1"),),
        layer="structural",
        entity_ids=("x",),
        outcome="ok",
    )
    (line,) = conversation_story_lines([event], {conversation.conversation_id: conversation})
    assert line.title == "Session abc12345 in /home/dev/app"
    assert line.summary == "1 command"
