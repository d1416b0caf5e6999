"""Deleting a conversation and everything derived from it, in one transaction (ING-8, ING-8b).

What goes, with the conversation and its sub-agent conversations:

- its sources and their history, messages, tool calls, tasks, task events, sub-agent
  records, findings and their notifications, search documents (with their vectors and,
  on SQLite, their full-text entries) and the graph-access switch — the foreign keys
  cascade from ``conversations``;
- the supervision of the conversation and of its tasks: sessions, runs, goal versions,
  intent labels and the model-call records of those runs (``target_id`` names a
  conversation or a task, no foreign key can);
- model-call records of other work that name the conversation as their target (a review
  batch that read only this conversation); the review keeps its own usage counters;
- the review checkpoints of its sources, so a re-import is read again like anything new;
- the fast-path records of the files it came from (``import_files``): importing such a
  file again reads it and brings the conversation back, as importing any new file would.

Review runs keep their manifest positions, so their coverage still adds up, but the
entries of the deleted sources lose their ids and read as ``omitted``; a run still
reading leaves them out (ING-8). Published review history stays as published (ING-8:
"published history keeps its own snapshot"): results and their snapshots, the story
graph's objects, their citations of the deleted sources (which then read as gone), the
saved batch facts of runs, suggestions made from results and what a person accepted or
edited. A person removes such objects with the graph's own edits. The import log
(``imports``, ``import_issues``) stays too: it records the paths given and per-file
problems, never a conversation's content.

``tests/store/test_deletion_is_complete.py`` classifies every table of the schema by
these rules and fails when a new table is not classified.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson
from sqlalchemy import Text, and_, cast, delete, exists, or_, select, update
from sqlalchemy.engine import Connection

from proctor.store import _schema as t

_CHUNK = 400  # ids per IN (...) clause, well under every backend's parameter limit


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


def with_subagents(connection: Connection, conversation_id: str) -> list[str]:
    """The conversation and, transitively, every sub-agent conversation under it."""
    doomed = [conversation_id]
    frontier = [conversation_id]
    while frontier:
        children: list[str] = []
        for chunk in _chunks(frontier):
            children.extend(
                connection.execute(
                    select(t.conversations.c.conversation_id).where(
                        t.conversations.c.parent_conversation_id.in_(chunk)
                    )
                ).scalars()
            )
        frontier = [child for child in children if child not in doomed]
        doomed.extend(frontier)
    return doomed


def delete_conversations(connection: Connection, doomed: Sequence[str]) -> None:
    """Delete ``doomed`` conversations and everything derived from them (module docstring).

    Runs inside the caller's transaction: all of it happens, or none.
    """
    targets = list(doomed)
    for chunk in _chunks(doomed):
        targets.extend(
            connection.execute(
                select(t.tasks.c.task_id).where(t.tasks.c.conversation_id.in_(chunk))
            ).scalars()
        )
    for chunk in _chunks(targets):
        _forget_supervision(connection, chunk)
    for chunk in _chunks(doomed):
        _forget_source_state(connection, chunk)
        _forget_imported_files(connection, chunk)
        connection.execute(
            delete(t.conversations).where(t.conversations.c.conversation_id.in_(chunk))
        )


def _forget_supervision(connection: Connection, targets: list[str]) -> None:
    """Sessions, runs, goals, intent labels and model calls of these targets."""
    runs = t.supervision_runs
    sessions = t.supervision_sessions
    run_ids = list(
        connection.execute(
            select(runs.c.run_id).where(
                or_(
                    runs.c.target_id.in_(targets),
                    runs.c.session_id.in_(
                        select(sessions.c.session_id).where(sessions.c.target_id.in_(targets))
                    ),
                )
            )
        ).scalars()
    )
    connection.execute(delete(t.model_calls).where(t.model_calls.c.target_id.in_(targets)))
    for chunk in _chunks(run_ids):
        connection.execute(delete(t.model_calls).where(t.model_calls.c.run_id.in_(chunk)))
        connection.execute(delete(runs).where(runs.c.run_id.in_(chunk)))
    connection.execute(delete(sessions).where(sessions.c.target_id.in_(targets)))
    connection.execute(delete(t.goal_versions).where(t.goal_versions.c.target_id.in_(targets)))
    connection.execute(delete(t.intent_labels).where(t.intent_labels.c.target_id.in_(targets)))


def _forget_source_state(connection: Connection, doomed: list[str]) -> None:
    """What is kept per source elsewhere: review checkpoints, intent labels, manifests.

    Checkpoints and labels of the conversations' sources go; review manifest entries keep
    their position (a run's coverage still adds up) but lose their ids and read as
    ``omitted``.
    """
    sources = t.sources
    for table in (t.review_checkpoints, t.intent_labels):
        source_type = (
            [sources.c.source_type == table.c.source_type] if "source_type" in table.c else []
        )
        connection.execute(
            delete(table).where(
                exists().where(
                    and_(
                        *source_type,
                        sources.c.source_id == table.c.source_id,
                        sources.c.conversation_id.in_(doomed),
                    )
                )
            )
        )
    manifest = t.review_manifest
    connection.execute(
        update(manifest)
        .where(manifest.c.conversation_id.in_(doomed))
        .values(source_id="", conversation_id="", fingerprint="", state="omitted")
    )


def _forget_imported_files(connection: Connection, doomed: list[str]) -> None:
    """Fast-path records of files any of these conversations came from."""
    files = t.import_files
    listed = cast(files.c.conversation_ids, Text)
    candidates = connection.execute(
        select(files.c.path, files.c.conversation_ids).where(
            or_(*(listed.contains(orjson.dumps(cid).decode(), autoescape=True) for cid in doomed))
        )
    ).all()
    gone = set(doomed)
    paths = [path for path, ids in candidates if gone.intersection(ids or ())]
    for chunk in _chunks(paths):
        connection.execute(delete(files).where(files.c.path.in_(chunk)))
