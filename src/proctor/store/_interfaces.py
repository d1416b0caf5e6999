"""The store's two facade interfaces: what readers may call, and what writers add.

``StoreReader`` is the least a surface that only reads needs (the gate's history takes it);
``ReadStore`` is the whole read-only store. ``Store`` composes the protocols of every
repository (``_repository_protocols.py`` and those beside each group's records).
"""

from __future__ import annotations

from typing import Protocol

from proctor.store._goal_store import GoalStoreProtocol
from proctor.store._graph_access import GraphAccessRecords
from proctor.store._graph_interfaces import GraphRecords
from proctor.store._heartbeat_records import HeartbeatRecords
from proctor.store._memory_store import MemoryCandidateRecords
from proctor.store._model_settings import ModelSettings
from proctor.store._repository_protocols import (
    ConversationReader,
    ConversationRecords,
    FindingReader,
    FindingRecords,
    ImportRecords,
    NotificationReader,
)
from proctor.store._review_records import ReviewRecords
from proctor.store._suggestion_store import SuggestionRecords
from proctor.store._supervision_store import SupervisionRecords


class StoreReader(ConversationReader, FindingReader, NotificationReader, Protocol):
    """Read-only access: everything a surface that only shows data may call (the reads of
    conversations, sources, imports, findings and notifications)."""


class Store(
    StoreReader,
    ConversationRecords,
    ImportRecords,
    FindingRecords,
    ModelSettings,
    SupervisionRecords,
    GoalStoreProtocol,
    ReviewRecords,
    GraphRecords,
    HeartbeatRecords,
    SuggestionRecords,
    MemoryCandidateRecords,
    GraphAccessRecords,
    Protocol,
):
    """Read and write access: the protocols of the repositories, composed (``SqlStore``).

    Every method that writes is one transaction.
    """

    def close(self) -> None:
        """Release connections."""
        ...
