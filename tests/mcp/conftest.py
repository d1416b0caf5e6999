"""A home with the bundled examples ingested, a structural review published, the app on."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore, open_store
from tests.backends import database_env
from tests.conftest import EXAMPLES_DIR


@dataclass(frozen=True)
class McpHome:
    """The prepared home and the ids a server can be bound to."""

    home: Path
    store: SqlStore
    main_id: str
    """The Claude Code session, which has one sub-agent."""
    subagent_id: str

    def env(self) -> dict[str, str]:
        """The environment of a ``proctor mcp`` subprocess on this home."""
        return {
            "PROCTOR_HOME": str(self.home),
            "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
            "PATH": os.environ.get("PATH", ""),
            **database_env(self.home),
        }

    def command(self, *args: str) -> list[str]:
        """``proctor mcp`` bound to the main conversation, with ``args``."""
        return [
            sys.executable,
            "-m",
            "proctor.cli.main",
            "mcp",
            "--conversation",
            self.main_id,
            *args,
        ]


@pytest.fixture
def mcp_home(proctor_home: Path) -> Iterator[McpHome]:
    store = open_store()
    ingest(store, [EXAMPLES_DIR])
    main = next(c for c in store.list_conversations() if c.subagents)
    # A global review too: its facts span projects and must never reach a bound agent.
    start_review(store, ReviewRequest(), semantic=None)
    start_review(store, ReviewRequest(project=main.project, reanalyze=True), semantic=None)
    store.set_setting("app.enabled", True)
    child = next(
        c
        for c in store.list_conversations(include_children=True)
        if c.conversation.parent_conversation_id == main.conversation_id
    )
    store.set_graph_access(main.conversation_id, True)
    try:
        yield McpHome(proctor_home, store, main.conversation_id, child.conversation_id)
    finally:
        store.close()
