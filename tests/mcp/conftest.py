"""A home with the bundled examples ingested, structural reviews published, the app on:
prepared once per module, copied for each test that may write."""

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
from tests.backends import copy_database, database_env
from tests.conftest import EXAMPLES_DIR


@dataclass(frozen=True)
class PreparedHome:
    """A prepared home and the ids a server can be bound to."""

    home: Path
    main_id: str
    """The Claude Code session, which has one sub-agent."""
    subagent_id: str

    @property
    def database(self) -> Path:
        """The store's file (or the PostgreSQL database standing for it)."""
        return self.home / "proctor.db"

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


@dataclass(frozen=True)
class McpHome(PreparedHome):
    """A prepared home with its store open in the test."""

    store: SqlStore


@pytest.fixture(scope="module")
def prepared_mcp_home(tmp_path_factory: pytest.TempPathFactory) -> PreparedHome:
    """The examples ingested, a global and a project review published (structural: no
    model), the app on and the main conversation's switch on. Built once per module: tests
    get a copy (``mcp_home``) or share it read-only (``shared_mcp_home``)."""
    home = tmp_path_factory.mktemp("mcp-home")
    store = open_store(home / "proctor.db")
    try:
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
    finally:
        store.close()
    return PreparedHome(home, main.conversation_id, child.conversation_id)


@pytest.fixture
def mcp_home(prepared_mcp_home: PreparedHome, proctor_home: Path) -> Iterator[McpHome]:
    """A private copy of the prepared home in the test's ``PROCTOR_HOME``: what a test
    writes, no other test sees."""
    database = proctor_home / "proctor.db"
    copy_database(prepared_mcp_home.database, database, unchanging=True)
    store = open_store(database)
    try:
        yield McpHome(proctor_home, prepared_mcp_home.main_id, prepared_mcp_home.subagent_id, store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def shared_mcp_home(prepared_mcp_home: PreparedHome) -> Iterator[McpHome]:
    """The prepared home itself, for a module whose tests only read: its store is opened
    read-only, as ``proctor mcp`` opens it (on SQLite a write fails). A module using it
    takes no ``mcp_home`` copies: PostgreSQL copies a database only while nobody is
    connected to it."""
    prepared = prepared_mcp_home
    store = open_store(prepared.database, read_only=True)
    try:
        yield McpHome(prepared.home, prepared.main_id, prepared.subagent_id, store)
    finally:
        store.close()
