"""Small conversations written into a real store through the product's write path."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.transcript import Conversation, ConversationBundle, Message, ToolCall

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def dialogue(
    conversation_id: str,
    turns: Sequence[tuple[str, str]],
    *,
    project: str = "memories",
    title: str = "Two friends",
    calls: Sequence[ToolCall] = (),
) -> ConversationBundle:
    """A conversation of ``(author, text)`` turns, one minute apart."""
    messages = tuple(
        Message(
            source_id=f"{conversation_id}:t{i}",
            role="user",
            kind="prompt",
            text=text,
            author=author,
            created_at=T0 + timedelta(minutes=i),
        )
        for i, (author, text) in enumerate(turns)
    )
    return ConversationBundle(
        conversation=Conversation(
            conversation_id=conversation_id,
            format="test",
            external_id=conversation_id,
            title=title,
            project_hint=project,
            started_at=T0,
        ),
        messages=messages,
        tool_calls=tuple(calls),
    )


def write(store: SqlStore, bundle: ConversationBundle) -> None:
    """Store a conversation as an import would."""
    store.write_conversation(prepare_bundle(bundle))


FRIENDS = [
    ("Caroline", "Hey Mel! I went to a support group yesterday and it was so powerful."),
    ("Melanie", "That's wonderful, Caroline. What happened there?"),
    ("Caroline", "People shared their stories about coming out, it felt like family."),
    ("Melanie", "I painted a sunrise over the lake last weekend, want to see it?"),
    ("Caroline", "Wow, the colours are gorgeous. Painting suits you."),
    ("Melanie", "Thanks! The kids and I are going camping in the mountains next month."),
    ("Caroline", "Camping sounds fun. I am saving up to adopt a child."),
    ("Melanie", "Adoption is a beautiful way to build a family."),
]
"""A short dialogue with distinct topics: support group, painting, camping, adoption."""
