"""Which messages are a person's requests, and the ``episode`` event each one opens.

A request is what the user typed themselves: a ``user`` message of kind ``prompt`` (the
adapters tell it apart from tool results, harness injections such as hook output or
environment context, compaction summaries and notices), with some text, in a main
conversation. A sub-agent's conversation opens with its parent's prompt, written by an
agent, so nothing in a sub-agent or compaction conversation is a request. This holds
for every format the adapters read (Claude Code, Codex, Gemini CLI, OpenAI and
Anthropic logs): the classification is theirs, made once.

Each request yields an ``episode`` event citing the message's text, at the message's
time; ``episodes.py`` later gathers the work that followed it and writes its outcome.
"""

from __future__ import annotations

import re

from proctor.review._batch import BatchSource
from proctor.review.structural._builder import FactBuilder
from proctor.transcript import Conversation, Message

TITLE_CHARS = 100
"""An episode's title: the request's first line, at most this long."""
_TAG = re.compile(r"</?[A-Za-z][\w-]*>")


def is_user_request(message: Message, conversation: Conversation | None) -> bool:
    """True for a message the user wrote to ask for something (see the module docstring)."""
    if message.role != "user" or message.kind != "prompt" or message.derived:
        return False
    if conversation is not None and (
        conversation.kind != "main" or conversation.parent_conversation_id is not None
    ):
        return False
    return bool(message.text.strip())


def request_title(text: str) -> str:
    """The first non-blank line of a request, blanks collapsed, cut at ``TITLE_CHARS``.

    Markup tags a harness wraps around what the person did (``<bash-input>``,
    ``<ide_opened_file>``) are left out; the words inside them stay.
    """
    plain = _TAG.sub(" ", text)
    line = next((part for part in plain.splitlines() if part.strip()), "")
    flat = " ".join(line.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"


def request_facts(builder: FactBuilder, source: BatchSource, message: Message) -> None:
    """The ``episode`` event a request opens (its outcome is written at assembly)."""
    builder.event(
        source,
        "episode",
        title=request_title(message.text),
        summary="The user asked for this; the work it caused is gathered with the review.",
        refs=[source.cite("text")],
        occurred_at=message.created_at or source.occurred_at,
    )
