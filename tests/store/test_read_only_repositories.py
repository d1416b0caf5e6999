"""Readers get read-only repositories that cannot write, on SQLite and on PostgreSQL.

Two read-only stores exist: ``open_store(read_only=True)`` (the CLI's listing and showing
commands, the MCP server, the gate) and ``SqlStore.reader()`` (the API's GET routes, over the
writer's read-only engine). Neither has a write method; a write statement sent through
their connections is refused by the database (SQLite ``mode=ro``; PostgreSQL read-only
transactions), and a writing repository put over their database finds no writer.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path

import pytest
from sqlalchemy import delete, func, insert, select
from sqlalchemy.exc import DBAPIError

from proctor.errors import StoreError
from proctor.sources import prepare_bundle
from proctor.store import (
    ConversationRepository,
    ReadRepositories,
    ReadStore,
    Repositories,
    SqlStore,
    open_store,
)
from proctor.store import tables as t
from tests.builders import conversation_bundle
from tests.store.conftest import open_backend

NOW = datetime(2026, 12, 2, tzinfo=UTC)

REFUSED = re.compile(r"readonly database|read-only transaction")
"""The database's own refusal: SQLite's ``attempt to write a readonly database``,
PostgreSQL's ``cannot execute … in a read-only transaction``."""


def write_through(reader: ReadStore, *, first: str | None = None) -> None:
    """Send write statements through the reader's connection (after ``first``, if given)."""
    with reader._read() as connection:
        if first is not None:
            connection.exec_driver_sql(first)
        connection.execute(delete(t.conversations))
        connection.execute(insert(t.settings).values(key="written", value=True))
        connection.commit()


def refused_write(reader: ReadStore, *, first: str | None = None) -> str:
    """The database's refusal of a write sent through the reader's connection (SQLite's
    wrapped in the store's ``StoreError``, PostgreSQL's as the driver raised it)."""
    with pytest.raises((StoreError, DBAPIError)) as raised:
        write_through(reader, first=first)
    message = str(raised.value)
    assert REFUSED.search(message), message
    return message


@pytest.fixture
def written(store: SqlStore) -> SqlStore:
    """The writable store with one conversation and one setting."""
    store.write_conversation(prepare_bundle(conversation_bundle()))
    store.set_setting("kept", "yes")
    return store


@pytest.fixture(params=["open_store(read_only=True)", "SqlStore.reader()"])
def reader(
    request: pytest.FixtureRequest, written: SqlStore, backend_url: str | Path
) -> Iterator[ReadStore]:
    """Each way a reader gets its store: opened read-only, or the API's view of the writer."""
    if request.param == "SqlStore.reader()":
        yield written.reader()
        return
    opened = open_backend(backend_url, read_only=True)
    try:
        yield opened
    finally:
        opened.close()


def test_a_write_statement_through_a_readers_connection_is_refused_by_the_database(
    reader: ReadStore, written: SqlStore
) -> None:
    refused_write(reader)
    assert reader.counts().conversations == 1
    assert reader.get_setting("kept") == "yes"
    assert written.get_setting("written") is None
    with written._read() as connection:
        assert connection.execute(select(func.count()).select_from(t.conversations)).scalar() == 1


def test_every_repository_of_a_reader_reads_and_none_has_a_write_method(
    reader: ReadStore,
) -> None:
    assert isinstance(reader.repos, ReadRepositories)
    full = {field.name for field in dataclasses.fields(Repositories)}
    writing = Repositories.over(reader.repos.conversations._database)
    for field in dataclasses.fields(ReadRepositories):
        reads = getattr(reader.repos, field.name)
        writes = getattr(writing, field.name)
        assert field.name in full
        write_methods = {
            name
            for name in dir(type(writes))
            if not name.startswith("_") and callable(getattr(writes, name))
        } - {name for name in dir(type(reads)) if not name.startswith("_")}
        for name in write_methods:
            assert not hasattr(reads, name), f"repos.{field.name}.{name} writes"
    for name in ("write_conversation", "record_findings", "publish_result", "set_setting"):
        assert not hasattr(reader, name)
    assert reader.list_conversations()[0].conversation_id == "test:conv-1"
    assert reader.repos.conversations.count_conversations() == 1
    assert reader.repos.models.get_setting("kept") == "yes"
    assert reader.repos.reviews.review_runs() == []
    assert reader.repos.graph.overview() == []


def _write_through_search_reads(reader: ReadStore) -> None:
    with reader.repos.search.read() as connection:
        connection.execute(delete(t.search_documents))
        connection.execute(insert(t.settings).values(key="written", value=True, updated_at=NOW))
        connection.commit()


def test_the_search_index_reads_through_its_repository_and_cannot_write(
    reader: ReadStore, written: SqlStore
) -> None:
    """proctor.search reaches its tables only through ``repos.search``: a reader's has no
    ``write`` and the database refuses a write sent through its ``read()`` connection."""
    assert not hasattr(reader.repos.search, "write")
    with reader.repos.search.read() as connection:
        count = select(func.count()).select_from(t.search_documents)
        assert connection.execute(count).scalar() == 0
    with pytest.raises((StoreError, DBAPIError)) as raised:
        _write_through_search_reads(reader)
    assert REFUSED.search(str(raised.value)), raised.value
    with written.repos.search.write() as connection:
        connection.execute(insert(t.settings).values(key="written", value=True, updated_at=NOW))
    assert written.get_setting("written") is True


def test_a_writing_repository_over_a_readers_database_finds_no_writer(
    reader: ReadStore,
) -> None:
    writing = ConversationRepository(reader.repos.conversations._database)
    with pytest.raises(StoreError, match="opened read-only"):
        writing.write_conversation(prepare_bundle(conversation_bundle("test:conv-2")))
    assert reader.counts().conversations == 1


def test_a_read_only_open_of_postgresql_refuses_even_a_session_default_turned_off(
    written: SqlStore, backend_url: str | Path
) -> None:
    """Each transaction of the read-only PostgreSQL store is itself read-only: turning the
    session's default off (the first guard) still leaves the write refused."""
    if isinstance(backend_url, Path):
        pytest.skip("PostgreSQL only: a SQLite reader's file is opened mode=ro")
    opened = open_store(url=backend_url, read_only=True)
    try:
        refused_write(opened, first="SET default_transaction_read_only = off")
        assert opened.counts().conversations == 1
    finally:
        opened.close()


def test_every_facade_method_reaches_a_method_of_its_repository(written: SqlStore) -> None:
    reader = written.reader()
    for store, least in ((written, 140), (reader, 80)):
        forwarded = {
            name: value.forwarded_to
            for klass in type(store).__mro__
            for name, value in vars(klass).items()
            if hasattr(value, "forwarded_to")
        }
        assert len(forwarded) >= least
        for name, target in forwarded.items():
            assert callable(getattr(attrgetter(target)(store), name)), f"{target}.{name}"
    assert written.messages("test:conv-1") == reader.messages("test:conv-1")
    assert written.repos.conversations.transcript("test:conv-1") == reader.transcript("test:conv-1")
