"""``extract_structural``: a batch's sources → exact facts, before any model call (REV-13).

Tool calls carry almost everything (commands, tests, files, packages, URLs, commits,
sub-agents); task events carry task status changes. Of messages, only a user's own
request yields a fact: the ``episode`` it opens (``_requests.py``; its outcome is written
when the draft is assembled, ``_episodes.py``). What a message says needs judgement,
which is the semantic layer's job.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from proctor.graph import BatchFacts
from proctor.review._batch import BatchSource, SourceBatch
from proctor.review.structural._builder import FactBuilder
from proctor.review.structural._calls import call_facts
from proctor.review.structural._requests import is_user_request, request_facts
from proctor.review.structural._story import activity_summary
from proctor.review.structural._tasks import task_facts


def reading_order(sources: Sequence[BatchSource]) -> list[BatchSource]:
    """The sources in the order things happened, so facts are recorded in that order.

    A batch lists a conversation's messages and tool calls each in their own order. Where
    they have times that is enough (episodes order by time); a conversation without any
    time (an API message list) is read as it happened instead: each message followed by
    the tool calls it issued.
    """
    untimed = {s.conversation_id for s in sources} - {
        s.conversation_id for s in sources if s.occurred_at is not None
    }
    if not untimed:
        return list(sources)
    issued: dict[str, list[BatchSource]] = defaultdict(list)
    messages = {s.source_id for s in sources if s.message is not None}
    for source in sources:
        call = source.tool_call
        if (
            source.conversation_id in untimed
            and call is not None
            and call.message_source_id in messages
        ):
            issued[call.message_source_id or ""].append(source)
    placed = {id(s) for calls in issued.values() for s in calls}
    ordered: list[BatchSource] = []
    for source in sources:
        if id(source) in placed:
            continue
        ordered.append(source)
        if source.message is not None:
            ordered.extend(issued.get(source.source_id, ()))
    return ordered


def extract_structural(batch: SourceBatch) -> BatchFacts:
    """The structural facts of one batch, every one citing sources of the batch."""
    builder = FactBuilder()
    for source in reading_order(batch.sources):
        conversation = batch.conversations.get(source.conversation_id)
        if source.tool_call is not None:
            call_facts(builder, source, source.tool_call, conversation, batch.subagent_runs)
        elif source.task_event is not None:
            task_facts(builder, source, source.task_event)
        elif source.message is not None and is_user_request(source.message, conversation):
            request_facts(builder, source, source.message)
    facts = builder.facts(summary="", change_digest="")
    conversations = len({s.conversation_id for s in batch.sources})
    summary = (
        f"Structure of {len(batch.sources)} sources in {conversations} conversation(s): "
        + activity_summary(facts.events)
        + "."
    )
    kinds = Counter(e.kind for e in facts.entities)
    digest = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "no entities"
    return BatchFacts(
        entities=facts.entities,
        events=facts.events,
        relations=facts.relations,
        summary=summary,
        change_digest=f"Entities seen: {digest}.",
    )
