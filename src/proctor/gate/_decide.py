"""The gate's one decision function: a ``GateRequest`` in, a ``GateDecision`` out (SUP-5).

``proctor gate`` (the Claude Code hook) and, later, the HTTP endpoint call ``decide``.
Given a ``GateService`` it answers from that service's live supervisors. Without one it
builds a one-shot service whose history is the stored conversation (the database opened
read-only, when there is one: with ``sqlite3`` on SQLite, the store on PostgreSQL) plus
the request's transcript file.

A policy that cannot be read neither lets the call through unjudged nor blocks the agent
for good: the answer is ``ask``, with the reason, so the user decides and sees what to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.errors import ConfigError, StoreError
from proctor.gate._history import History, load_history
from proctor.gate._request import GateRequest
from proctor.gate._state import GateService
from proctor.gate._stored import no_database, read_stored_trace, sqlite_database
from proctor.rules import GateDecision, Policy, Trace, load_policy

if TYPE_CHECKING:
    from proctor.store import StoreReader

Warn = Callable[[str], None]
"""Receives one line about something that could not be read (the decision goes on)."""


def decide(
    request: GateRequest,
    *,
    service: GateService | None = None,
    policy_path: Path | None = None,
    warn: Warn | None = None,
) -> GateDecision:
    """Decide whether the proposed call may run.

    Args:
        request: the proposed call and where its conversation's history is.
        service: live per-conversation state to answer from; unset means a one-shot
            service reading the stored conversation and the transcript file.
        policy_path: a policy file to use instead of the one found for the request
            (one-shot only; a service carries its own policy).
        warn: told about history that could not be read.
    """
    if service is not None:
        return _judged(service, request)
    try:
        policy = load_policy(policy_path) if policy_path is not None else None
    except ConfigError as exc:
        return policy_unusable(exc)
    database = sqlite_database()
    if database is not None:
        # SQLite: read the one conversation with sqlite3; SQLAlchemy is never imported.
        def from_file(conversation_id: str) -> Trace | None:
            return read_stored_trace(database, conversation_id)

        return _one_shot(request, policy, warn, lambda asked: load_history(
            asked, None, stored_reader=from_file
        ))  # fmt: skip
    if no_database():
        # Nothing imported yet: the policy and the transcript alone, without the store's imports.
        return _one_shot(request, policy, warn, lambda asked: load_history(asked, None))
    with _read_only_store(warn) as store:
        return _one_shot(request, policy, warn, lambda asked: load_history(asked, store))


def _one_shot(
    request: GateRequest,
    policy: Policy | None,
    warn: Warn | None,
    load: Callable[[GateRequest], History],
) -> GateDecision:
    def history(asked: GateRequest) -> History:
        loaded = load(asked)
        for note in loaded.notes:
            if warn is not None:
                warn(note)
        return loaded

    one_shot = GateService(policy=policy, history=history, max_conversations=1)
    return _judged(one_shot, request)


def policy_unusable(error: ConfigError) -> GateDecision:
    """The answer when the policy cannot be read: ask the user, saying what is wrong."""
    return GateDecision(
        "ask",
        reason=(
            f"the policy could not be read, so this call was not checked ({error}). "
            "Fix the policy file; until then, decide on this call yourself."
        ),
    )


def _judged(service: GateService, request: GateRequest) -> GateDecision:
    try:
        return service.decide(request)
    except ConfigError as exc:
        return policy_unusable(exc)


@contextmanager
def _read_only_store(warn: Warn | None) -> Iterator[StoreReader | None]:
    from proctor.store import database_exists, open_store

    if not database_exists():
        yield None  # nothing imported yet: decide from the policy and the transcript
        return

    try:
        store = open_store(read_only=True)
    except StoreError as exc:
        if warn is not None:
            warn(f"the stored history could not be read: {exc}")
        yield None
        return
    try:
        yield store
    finally:
        store.close()
