"""``extract_structural``: a batch's sources → exact facts, before any model call (REV-13).

Tool calls carry almost everything (commands, tests, files, packages, URLs, commits,
sub-agents); task events carry task status changes. Of messages, only a user's own
request yields a fact: the ``episode`` it opens (``_requests.py``; its outcome is written
when the draft is assembled, ``_episodes.py``). What a message says needs judgement,
which is the semantic layer's job.
"""

from __future__ import annotations

from collections import Counter

from proctor.graph import BatchFacts
from proctor.review._batch import SourceBatch
from proctor.review.structural._builder import FactBuilder
from proctor.review.structural._calls import call_facts
from proctor.review.structural._requests import is_user_request, request_facts
from proctor.review.structural._story import activity_summary
from proctor.review.structural._tasks import task_facts


def extract_structural(batch: SourceBatch) -> BatchFacts:
    """The structural facts of one batch, every one citing sources of the batch."""
    builder = FactBuilder()
    for source in batch.sources:
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
