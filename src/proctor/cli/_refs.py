"""The short refs a listing prints: unique in the listing, accepted by the commands that take them.

Conversations are the hard case: their short ref is the format's own session id, and
formats reuse those (four Claude Code files of one folder may all say session ``s1``;
two sessions may hold a sub-agent of the same id). Each candidate is therefore checked
with the store's own resolver, the one ``conversations show``, ``supervise`` and
``mcp`` use, and a row whose session id is ambiguous is shown by the shortest part of
its conversation id that is not (``cc:session:dag_fork``, ``codex:01a20cd6``).
Other ids are random or content hashes: a prefix is lengthened until no other id of the
listing shares it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from proctor.errors import NotFoundError
from proctor.store import ConversationSummary

SESSION_REF_CHARS = 12
"""A session id longer than 13 characters is shown by its first 12."""
_SEPARATORS = frozenset("-:._/")


class ConversationResolver(Protocol):
    """What resolving a typed conversation ref needs (a ``SqlStore``)."""

    def resolve_conversation_id(self, ref: str) -> str:
        """The full id for an id, external id or unique prefix."""
        ...


def conversation_refs(
    store: ConversationResolver, rows: Iterable[ConversationSummary]
) -> dict[str, str]:
    """conversation id → the shortest of its candidate refs that resolves back to it."""
    refs: dict[str, str] = {}
    for row in rows:
        conversation_id = row.conversation_id
        chosen = conversation_id  # always accepted as an exact id
        for candidate in _candidates(row):
            if _resolves_to(store, candidate, conversation_id):
                chosen = candidate
                break
        refs[conversation_id] = chosen
    return refs


def _candidates(row: ConversationSummary) -> Iterator[str]:
    external = row.conversation.external_id
    if external:
        if len(external) > SESSION_REF_CHARS + 1:
            yield external[:SESSION_REF_CHARS]
        yield external
    # then the conversation id, cut where a part of it ends: cc:session:01a20cd6, codex:01a20cd6
    conversation_id = row.conversation_id
    for end, character in enumerate(conversation_id):
        if character in _SEPARATORS and end >= SESSION_REF_CHARS:
            yield conversation_id[:end]
    yield conversation_id


def _resolves_to(store: ConversationResolver, ref: str, conversation_id: str) -> bool:
    try:
        return store.resolve_conversation_id(ref) == conversation_id
    except NotFoundError:  # no match, or several
        return False


def unique_prefixes(ids: Sequence[str], length: int) -> dict[str, str]:
    """id → its shortest prefix, at least ``length`` long, that no other id of ``ids`` shares."""
    ordered = sorted(set(ids))
    prefixes: dict[str, str] = {}
    for position, full in enumerate(ordered):
        shared = 0
        for neighbour in ordered[max(position - 1, 0) : position + 2]:
            if neighbour != full:
                shared = max(shared, _common_prefix(full, neighbour))
        prefixes[full] = full[: max(length, shared + 1)]
    return prefixes


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size
