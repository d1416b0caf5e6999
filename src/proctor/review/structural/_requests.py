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

A request is titled by its first readable line. Some transcripts keep only a redaction
placeholder where the words were (``[REDACTED_TEXT len=115 sha=a83ebe6f]`` in sanitised
Codex and Gemini logs, ``[REDACTED:api_key]`` from Proctor's own redaction, ``<redacted>``
and the like); a placeholder says nothing to a reader, so such a request is titled
``REDACTED_REQUEST`` here and, once its work is gathered, by what came of it
(``Request (redacted) → 2 files edited; tests passing``, see ``titled_by_work``).
"""

from __future__ import annotations

import re

from proctor.review._batch import BatchSource
from proctor.review.structural._builder import FactBuilder
from proctor.transcript import Conversation, Message

TITLE_CHARS = 100
"""An episode's title: the request's first line, at most this long."""
REDACTED_REQUEST = "Request (redacted)"
"""The title of a request whose text holds nothing readable but redaction placeholders."""
_TAG = re.compile(r"</?[A-Za-z][\w-]*>")
_HIDING = re.compile(
    r"redact|\b(?:omitted|removed|scrubbed|saniti[sz]ed|withheld|hidden|elided|masked|censored)",
    re.IGNORECASE,
)
"""A word saying that something was taken out (``REDACTED_TEXT``, ``[content omitted]``)."""
_GROUP = re.compile(r"[\[(<{]\{?[^\[\](){}<>\n]*\}?[\])>}]")
"""A bracketed group without another group inside (the innermost first)."""
_BARE = re.compile(r"\bredacted\w*", re.IGNORECASE)
_PLACEHOLDER_WORDS = 3
"""A group is a placeholder when it says "taken out" in at most this many words
(``key=value`` details such as ``len=115 sha=a83ebe6f`` not counted): "[content omitted]"
is one, "(don't remove the header)" is not."""
_READABLE = re.compile(r"[^\W_]")
_HIDDEN = "\x00"


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
    """The first readable line of a request, blanks collapsed, cut at ``TITLE_CHARS``.

    Markup tags a harness wraps around what the person did (``<bash-input>``,
    ``<ide_opened_file>``) are left out; the words inside them stay. A line is readable
    when a letter or digit is left once redaction placeholders are taken out; a request
    without any such line (only placeholders, blanks or punctuation) is titled
    ``REDACTED_REQUEST``. A readable line keeps its words and shows each placeholder it
    holds as ``[redacted]`` ("Rotate [redacted] today"), however long the original was.
    """
    plain = _TAG.sub(" ", text)
    line = next((part for part in plain.splitlines() if is_readable(part)), "")
    if not line:
        return REDACTED_REQUEST
    shown = re.sub(f"{_HIDDEN}+", "[redacted]", _hide_placeholders(line))
    return _clip(" ".join(shown.split()))


def is_readable(text: str) -> bool:
    """True when ``text`` says something once redaction placeholders are taken out (with
    a label wrapped round one, as in ``[image: [REDACTED_IMAGE_URL len=9 sha=1]]``)."""
    return bool(_READABLE.search(_hide_placeholders(text).replace(_HIDDEN, " ")))


def _hide_placeholders(text: str) -> str:
    """``text`` with each placeholder as one ``_HIDDEN`` character: a bracketed group that
    says something was taken out, a bare ``REDACTED``, and a group that only labels a
    placeholder (one word or none besides it: ``[image: [REDACTED_IMAGE_URL …]]``)."""
    hidden = _BARE.sub(_HIDDEN, text.replace(_HIDDEN, " "))
    while True:
        replaced = _GROUP.sub(_placeholder_group, hidden)
        if replaced == hidden:
            return hidden
        hidden = replaced


def _placeholder_group(match: re.Match[str]) -> str:
    group = match.group(0)
    words = [w for w in group.strip("[](){}<>").replace(_HIDDEN, " ").split() if "=" not in w]
    if _HIDDEN in group and len(words) <= 1:
        return _HIDDEN
    if _HIDING.search(group) and len(words) <= _PLACEHOLDER_WORDS:
        return _HIDDEN
    return group


def titled_by_work(title: str, outcome: str) -> str:
    """An episode's title: the request's own, or for a redacted request what came of it
    (``Request (redacted) → 2 files edited; tests passing``)."""
    if title != REDACTED_REQUEST:
        return title
    return _clip(f"{REDACTED_REQUEST} → {outcome}")


def _clip(line: str) -> str:
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


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
