"""Engines and migrations: one writer, read-only readers, schema upgraded on open.

SQLite runs in WAL mode so readers never block the writer. Write transactions start with
``BEGIN IMMEDIATE`` so two writing processes queue on the busy timeout instead of failing
half-way. Readers open the file with ``mode=ro``: they cannot write even by mistake.
An import's batches write with a larger page cache than other connections, and leave
copying the write-ahead log into the database file to a thread of their engine
(``use_import_cache``, ``_checkpoint.py``); the connection gives both back when it
returns to the pool.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from proctor.errors import MigrationError, StoreError
from proctor.store._checkpoint import BackgroundCheckpointer

BUSY_TIMEOUT_MS = 30_000

IMPORT_CACHE_KIB = 65_536
"""SQLite's page cache, in KiB, of the writer's connection while an import's batch
writes (``use_import_cache``), instead of SQLite's default 2 MB: a batch inserts into
the indexes of sources, messages and tool calls at random places (their ids), and with
the small cache it writes pages out and reads them back within the transaction. Pages
are taken as used; the connection's own size comes back when it returns to the pool."""

_IMPORT_CACHE = "proctor_import_cache"
_IMPORT_CHECKPOINTS = "proctor_import_checkpoints"
_MIGRATIONS = Path(__file__).with_name("migrations")


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _json_loads(value: Any) -> Any:
    # SQLite gives a JSON column NUMERIC affinity: a stored "12" comes back as 12.
    if isinstance(value, str | bytes | bytearray | memoryview):
        return orjson.loads(value)
    return value


def sqlite_url(path: Path, *, read_only: bool = False) -> str:
    """SQLAlchemy URL of a SQLite file, read-only through SQLite's URI ``mode=ro``."""
    if read_only:
        return f"sqlite:///file:{path.resolve()}?mode=ro&uri=true"
    return f"sqlite:///{path.resolve()}"


def create_sqlite_engine(path: Path, *, read_only: bool = False) -> Engine:
    """An engine on a SQLite file with WAL, foreign keys and explicit transactions."""
    engine = create_engine(
        sqlite_url(path, read_only=read_only),
        # A small persistent pool: reconnecting per transaction costs the PRAGMAs and,
        # for the last connection of a WAL database, a checkpoint. Readers keep two: a
        # large search ranks half of its full text on a second one, on a helper thread
        # (``proctor.search._query._halves``), which would otherwise reconnect each time.
        pool_size=2 if read_only else 1,
        max_overflow=4,
        # The connection returned last is handed out first: a search's own connection
        # comes back after its helper's, so searches one after another keep using the
        # same one, and what it keeps per version of the data (counts, the index's
        # freshness: ``proctor.search._unchanged``) is computed once, not once per
        # connection (FIFO alternated them: the first search on each paid 25-50 ms).
        pool_use_lifo=True,
        json_serializer=_json_dumps,
        json_deserializer=_json_loads,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # Manage transactions ourselves: pysqlite's implicit BEGIN would defer locking.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if not read_only:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
        else:
            cursor.execute("PRAGMA query_only = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    checkpointer = (
        None
        if read_only
        else BackgroundCheckpointer(path.resolve(), timeout_s=BUSY_TIMEOUT_MS / 1000)
    )

    @event.listens_for(engine, "checkin")
    def _checkin(dbapi_connection: Any, record: Any) -> None:
        # The end of an import's batch: its larger cache is freed, its connection copies
        # the log at its commits again, and this batch's log is copied on the engine's
        # thread (``use_import_cache``).
        previous = record.info.pop(_IMPORT_CACHE, None)
        checkpoints = record.info.pop(_IMPORT_CHECKPOINTS, None)
        if dbapi_connection is not None:
            with contextlib.suppress(sqlite3.Error):  # a closed connection frees its cache
                if previous is not None:
                    dbapi_connection.execute(f"PRAGMA cache_size = {int(previous)}")
                if checkpoints is not None:
                    dbapi_connection.execute(f"PRAGMA wal_autocheckpoint = {int(checkpoints)}")
        if checkpoints is not None and checkpointer is not None:
            checkpointer.request()

    if checkpointer is not None:
        event.listen(engine, "engine_disposed", lambda _engine: checkpointer.close())
    return engine


def use_import_cache(connection: Connection) -> None:
    """Give the writer's SQLite connection ``IMPORT_CACHE_KIB`` of page cache, and no
    checkpoints at its commits, until it returns to the pool (the end of the import's
    transaction), where its engine checkpoints on a thread of its own
    (``BackgroundCheckpointer``); nothing on PostgreSQL."""
    if connection.dialect.name != "sqlite" or _IMPORT_CACHE in connection.info:
        return
    driver = connection.connection.driver_connection
    assert driver is not None  # a checked-out connection
    previous = driver.execute("PRAGMA cache_size").fetchone()[0]
    driver.execute(f"PRAGMA cache_size = {-IMPORT_CACHE_KIB}")
    connection.info[_IMPORT_CACHE] = previous
    checkpoints = driver.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    driver.execute("PRAGMA wal_autocheckpoint = 0")
    connection.info[_IMPORT_CHECKPOINTS] = checkpoints


def create_url_engine(url: str, *, options: str | None = None) -> Engine:
    """An engine for a database URL (PostgreSQL: ``postgresql+psycopg://…``).

    ``options`` are PostgreSQL connection options (``-c name=value``), e.g. the read-only
    store's ``-c default_transaction_read_only=on``.
    """
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    extra: dict[str, Any] = {} if options is None else {"connect_args": {"options": options}}
    try:
        return create_engine(
            url, json_serializer=_json_dumps, json_deserializer=_json_loads, **extra
        )
    except (SQLAlchemyError, ImportError) as exc:
        raise StoreError(f"cannot use database {url!r}: {exc}") from exc


# Alembic is imported when a migration may be needed, not by every read-only process.


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest schema revision this version of Proctor knows."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


def current_revision(connection: Connection) -> str | None:
    """The schema revision a database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    revision: str | None = MigrationContext.configure(connection).get_current_revision()
    return revision


_REVISION_LINE = re.compile(r'^(revision|down_revision) = "([^"]+)"$', re.MULTILINE)


def _plain_head() -> str | None:
    """The head revision read from the migration files' own ``revision`` lines, without
    importing Alembic (400 ms of a short command); None unless they form one chain."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (_MIGRATIONS / "versions").glob("*.py"):
        found = dict(_REVISION_LINE.findall(path.read_text(encoding="utf-8")))
        if "revision" not in found:
            return None
        revisions.add(found["revision"])
        if "down_revision" in found:
            parents.add(found["down_revision"])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _already_current(engine: Engine) -> bool:
    """True when the database's recorded revision is the plain head: nothing to migrate."""
    head = _plain_head()
    if head is None:
        return False
    try:
        with engine.connect() as probe:
            recorded = probe.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    except SQLAlchemyError:
        return False
    return [row[0] for row in recorded] == [head]


def upgrade_schema(engine: Engine) -> None:
    """Bring the schema to the newest revision in one transaction (no-op when current)."""
    if _already_current(engine):
        return
    from alembic import command
    from alembic.script import ScriptDirectory

    head = head_revision()
    try:
        with engine.connect() as probe:
            if current_revision(probe) == head:
                return
        with engine.begin() as connection:
            current = current_revision(connection)
            if current == head:
                return
            known = {
                s.revision
                for s in ScriptDirectory.from_config(_alembic_config(connection)).walk_revisions()
            }
            if current is not None and current not in known:
                raise MigrationError(
                    f"the database is at schema revision {current!r}, newer than this Proctor "
                    "knows; upgrade Proctor or use another PROCTOR_HOME"
                )
            command.upgrade(_alembic_config(connection), "head")
    except MigrationError:
        raise
    except SQLAlchemyError as exc:
        raise MigrationError(f"schema migration failed and was rolled back: {exc}") from exc
