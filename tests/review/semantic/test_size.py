"""A leaf's input stays within the issue's budget: ≤ 1.5 × the transcript's own size.

A real Claude Code session is imported and cut into batches of 30 messages (their tool
calls ride along, as in the pipeline); what one leaf call sends — system prompt and data
block — is compared with the characters of the sources themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.graph import BatchFacts
from proctor.ingest import ingest
from proctor.review._batch import BatchSource, SourceBatch
from proctor.review.semantic import LEAF_SYSTEM, RenderLimits, leaf_view
from proctor.store import open_store
from proctor.supervisor._block import data_block, new_boundary
from proctor.transcript import Message, ToolCall

SESSION = Path("claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
MESSAGES_PER_BATCH = 30


def own_chars(item: Message | ToolCall) -> int:
    if isinstance(item, Message):
        return len(item.text)
    arguments = item.arguments if isinstance(item.arguments, str) else json.dumps(item.arguments)
    return len(arguments) + len(item.result_text or "")


def batches(items: list[Message | ToolCall]) -> list[list[Message | ToolCall]]:
    cut: list[list[Message | ToolCall]] = [[]]
    for item in items:
        if (
            isinstance(item, Message)
            and sum(isinstance(i, Message) for i in cut[-1]) == MESSAGES_PER_BATCH
        ):
            cut.append([])
        cut[-1].append(item)
    return cut


def as_batch(items: list[Message | ToolCall], conversation_id: str) -> SourceBatch:
    sources = tuple(
        BatchSource(
            ref=f"s{n}",
            source_type="message" if isinstance(item, Message) else "tool_call",
            source_id=item.source_id,
            conversation_id=conversation_id,
            project_id="p",
            fingerprint="f",
            occurred_at=item.created_at,
            message=item if isinstance(item, Message) else None,
            tool_call=item if isinstance(item, ToolCall) else None,
        )
        for n, item in enumerate(items, 1)
    )
    return SourceBatch("run-1", 0, "all", sources)


@pytest.mark.shared
def test_a_30_message_leaf_sends_at_most_one_and_a_half_times_the_transcript(
    transcripts_dir: Path, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "proctor.db")
    try:
        ingest(store, [transcripts_dir / SESSION])
        [summary] = store.list_conversations()
        transcript = store.transcript(summary.conversation_id)
    finally:
        store.close()
    calls: dict[str | None, list[ToolCall]] = {}
    for call in transcript.tool_calls:
        calls.setdefault(call.message_source_id, []).append(call)
    items: list[Message | ToolCall] = []
    for message in transcript.messages:
        items += [message, *calls.get(message.source_id, [])]

    full = [
        b for b in batches(items) if sum(isinstance(i, Message) for i in b) == MESSAGES_PER_BATCH
    ]
    assert len(full) >= 5
    for items_of_batch in full:
        view = leaf_view(
            as_batch(items_of_batch, summary.conversation_id), BatchFacts(), (), (), RenderLimits()
        )
        sent = len(LEAF_SYSTEM) + len(data_block(view.lines, new_boundary()))
        assert sent <= 1.5 * sum(own_chars(i) for i in items_of_batch)
