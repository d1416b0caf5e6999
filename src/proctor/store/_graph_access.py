"""The per-conversation story-graph switch (SPEC UI-4).

An agent talking to ``proctor mcp`` may read its project's story graph only while a person
has turned this switch on for its conversation. The switch is only a permission: setting it
starts no review and writes nothing besides its own row.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import delete, insert, select

from proctor._util.clock import utcnow
from proctor.store import _schema as t
from proctor.store._base import Repository


class GraphAccessRecords(Protocol):
    """Reading and setting the story-graph switch of a conversation."""

    def graph_access(self, conversation_id: str) -> bool:
        """True only when a person turned the switch on for this conversation."""
        ...

    def set_graph_access(self, conversation_id: str, enabled: bool) -> None:
        """Turn the switch on or off (the conversation must exist)."""
        ...


class GraphAccessReads(Repository):
    """Each conversation's story-graph switch: the read."""

    def graph_access(self, conversation_id: str) -> bool:
        """True only when a person turned the switch on for this conversation."""
        with self._read() as c:
            enabled = c.execute(
                select(t.graph_access.c.enabled).where(
                    t.graph_access.c.conversation_id == conversation_id
                )
            ).scalar_one_or_none()
        return enabled is True


class GraphAccessRepository(GraphAccessReads):
    """``GraphAccessReads`` and the writes (the switch), each one transaction."""

    def set_graph_access(self, conversation_id: str, enabled: bool) -> None:
        """Turn the switch on or off (the conversation must exist)."""
        with self._write() as c:
            c.execute(
                delete(t.graph_access).where(t.graph_access.c.conversation_id == conversation_id)
            )
            c.execute(
                insert(t.graph_access).values(
                    conversation_id=conversation_id, enabled=enabled, updated_at=utcnow()
                )
            )
