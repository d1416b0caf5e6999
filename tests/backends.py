"""The database backend the end-to-end suites run on: SQLite files or PostgreSQL.

``PROCTOR_TEST_BACKEND=postgresql`` (with ``PROCTOR_TEST_POSTGRES_URL``, an admin URL;
``make test`` sets both) runs every store a test opens on a real PostgreSQL server: each
SQLite path a test names stands for its own database, created from a migrated template
the first time the path is opened for writing (the way the file would be created) and
dropped with the test's ``tmp_path`` (databases of wider fixtures at the end of the
session). Tests keep naming paths; ``open_store`` is swapped for one that maps the path
to its database, and subprocesses get ``PROCTOR_DATABASE_URL`` through ``database_env``.

On SQLite a store a test opens in process on a new file starts as a copy of a migrated
template file, as on PostgreSQL: running every migration for each new file took a sixth of
the suite's time. ``tests/store/test_migrations.py`` opens new files the real way.
"""

from __future__ import annotations

import itertools
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import URL, Connection, make_url

from proctor.jobs import uses_queue as real_uses_queue
from proctor.store import SqlStore
from proctor.store._location import configured_database_url
from proctor.store._location import database_exists as real_database_exists
from proctor.store._store import open_store as open_real_store
from tests.store_use import note_store_use

T = TypeVar("T")

BACKEND = os.environ.get("PROCTOR_TEST_BACKEND", "sqlite").strip().lower() or "sqlite"
ON_POSTGRES = BACKEND == "postgresql"


def _postgres_admin_url() -> URL:
    raw = os.environ.get("PROCTOR_TEST_POSTGRES_URL", "").strip()
    if not raw:
        raise RuntimeError(
            "PROCTOR_TEST_BACKEND=postgresql needs PROCTOR_TEST_POSTGRES_URL, an admin URL "
            "(`bash scripts/test-postgres.sh` starts the local server and prints one)"
        )
    return make_url(raw).set(drivername="postgresql+psycopg")


@dataclass
class PostgresDatabases:
    """The PostgreSQL databases standing for the SQLite paths of one test session.

    Creating a database from the template and dropping one take the server 25-35 ms and
    15-30 ms (under load), and the PostgreSQL pass makes one or more for most of its tests:
    both are done by a thread of this process (``_Maintenance``) while the tests run, which
    keeps a few fresh copies of the template ready and drops what the tests are done with.
    A test still gets a database nothing else has used, made as before.
    """

    admin_url: URL
    session: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    by_path: dict[Path, str] = field(default_factory=dict)
    opened: list[tuple[Path, SqlStore]] = field(default_factory=list)
    """Stores opened on these databases; a test that forgets to close one (harmless on
    SQLite) would leave psycopg connections that warn when collected, so they are closed
    before their database is dropped."""
    _admin: Engine | None = None
    _template: str | None = None
    _copy_files: bool | None = None
    _maintenance: _Maintenance | None = None
    _names: Iterator[int] = field(default_factory=itertools.count)

    def admin(self) -> Engine:
        """An autocommit engine on the server's maintenance database."""
        if self._admin is None:
            self._admin = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        return self._admin

    def url(self, name: str) -> str:
        """The URL of database ``name`` on the test server."""
        return self.admin_url.set(database=name).render_as_string(hide_password=False)

    def fresh_name(self) -> str:
        """A database name not used before in this session."""
        return f"pt_{self.session}_{next(self._names)}"

    def exists(self, path: Path) -> bool:
        """Whether the database for ``path`` was created (the file exists)."""
        return path.resolve() in self.by_path

    def ensure(self, path: Path) -> str:
        """The URL of ``path``'s database, created from the migrated template if new."""
        key = path.resolve()
        name = self.by_path.get(key)
        if name is None:
            name = self.maintenance().fresh_copy()
            self.by_path[key] = name
        return self.url(name)

    def copy(self, source: Path, target: Path, *, unchanging: bool = False) -> None:
        """Make ``target``'s database a copy of ``source``'s (``CREATE DATABASE … TEMPLATE``).

        ``unchanging``: nothing writes to ``source`` any more, so the copy is one the
        maintenance thread made beforehand, and it makes the next one while the test runs.
        """
        source_name = self.by_path[source.resolve()]
        key = target.resolve()
        if key in self.by_path:
            self.maintenance().drop(self.by_path.pop(key))
        if unchanging:
            name = self.maintenance().fresh_copy(source_name)
        else:
            name = self.fresh_name()
            self._create(name, template=source_name)
        self.by_path[key] = name

    def template(self) -> str:
        """A database migrated to the newest schema, copied for every new store."""
        if self._template is None:
            name = f"pt_{self.session}_template"
            self._create(name, template="template0")
            open_real_store(url=self.url(name)).close()
            self._template = name
        return self._template

    def maintenance(self) -> _Maintenance:
        """The thread that makes fresh copies of the template and drops used databases."""
        if self._maintenance is None:
            self._maintenance = _Maintenance(self)
        return self._maintenance

    def opened_store(self, path: Path, store: SqlStore) -> SqlStore:
        """Remember ``store``, opened on ``path``'s database, to close it with the database."""
        self.opened.append((path.resolve(), store))
        return store

    def drop(self, path: Path) -> None:
        """Drop the database of ``path`` (the file is deleted)."""
        self.drop_where(lambda candidate: candidate == path.resolve())

    def drop_under(self, folder: Path) -> None:
        """Drop the databases of paths inside ``folder`` (a finished test's ``tmp_path``)."""
        root = folder.resolve()
        self.drop_where(lambda candidate: candidate.is_relative_to(root))

    def drop_where(self, chosen: Callable[[Path], bool]) -> None:
        """Close the stores on, then drop, the databases of the ``chosen`` paths."""
        for path, store in [entry for entry in self.opened if chosen(entry[0])]:
            store.close()
            self.opened.remove((path, store))
        for path in [p for p in self.by_path if chosen(p)]:
            self.maintenance().drop(self.by_path.pop(path))

    def drop_all(self) -> None:
        """Drop every database this session created, the template last."""
        self.drop_where(lambda _path: True)
        if self._maintenance is not None:
            self._maintenance.finish()
            self._maintenance = None
        if self._template is not None:
            self._drop(self._template)
            self._template = None
        if self._admin is not None:
            self._admin.dispose()
            self._admin = None

    def _create(self, name: str, *, template: str) -> None:
        with self.admin().connect() as connection:
            connection.execute(
                text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"{self._strategy()}')
            )

    def _strategy(self) -> str:
        """``STRATEGY FILE_COPY`` on a server that does not fsync (the tests' own cluster,
        ``scripts/test-postgres.sh``): the template's files are copied as they are, where
        PostgreSQL 15's default (``WAL_LOG``) writes every block of the 10 MB template
        through the write-ahead log; measured 0.09-0.13 s against 0.13-0.27 s a create and
        0.035 s against 0.07-0.11 s a drop. Its checkpoints cost nothing without fsync; on
        a server that does fsync (or before PostgreSQL 15) the default stays."""
        if self._copy_files is None:
            with self.admin().connect() as connection:
                fsync = connection.execute(text("SHOW fsync")).scalar_one()
                version = int(connection.execute(text("SHOW server_version_num")).scalar_one())
            self._copy_files = fsync == "off" and version >= 150000
        return " STRATEGY FILE_COPY" if self._copy_files else ""

    def _drop(self, name: str) -> None:
        with self.admin().connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


class _Maintenance:
    """One thread that keeps ``READY`` fresh copies of the template (and one of each
    unchanging database copied: ``PostgresDatabases.copy``) and drops the databases the
    tests are done with, so neither waits in a test. A copy is only ever handed out once; a
    drop is queued after the test's stores on it were closed (and is forced, as before,
    past any connection a subprocess left). What fails there is raised in the test that
    asks for a copy next, or at the end of the session."""

    READY = 2

    def __init__(self, databases: PostgresDatabases) -> None:
        self._databases = databases
        self._template = databases.template()
        self._ready: dict[str, queue.Queue[str | BaseException]] = {}
        self._work: queue.PriorityQueue[tuple[int, int, str, str]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._failure: BaseException | None = None
        for _ in range(self.READY):
            self._make(self._template)
        self._thread = threading.Thread(target=self._run, name="test-databases", daemon=True)
        self._thread.start()

    def _make(self, source: str) -> None:
        self._ready.setdefault(source, queue.Queue())
        self._work.put((0, next(self._order), "copy", source))

    def fresh_copy(self, source: str | None = None) -> str:
        """The name of a new copy of the template, or of ``source`` (a database nothing
        writes to any more), for one store."""
        source = source or self._template
        if source not in self._ready:
            self._make(source)  # the first copy of a database: made now
        self._make(source)  # a copy to replace this one
        made = self._ready[source].get()
        if isinstance(made, BaseException):
            raise made
        return made

    def drop(self, name: str) -> None:
        """Drop database ``name`` (soon: copies asked for go first)."""
        self._work.put((1, next(self._order), "drop", name))

    def finish(self) -> None:
        """Drop what is queued and the unused copies, then stop the thread."""
        self._work.put((2, next(self._order), "stop", ""))
        self._thread.join()
        for ready in self._ready.values():
            while not ready.empty():
                made = ready.get()
                if isinstance(made, str):
                    self._databases._drop(made)
        if self._failure is not None:
            raise self._failure

    def _run(self) -> None:
        while True:
            _priority, _order, action, name = self._work.get()
            if action == "stop":
                return
            try:
                if action == "copy":
                    made = self._databases.fresh_name()
                    self._databases._create(made, template=name)
                    self._ready[name].put(made)
                else:
                    self._databases._drop(name)
            except Exception as error:  # handed to the test waiting for a copy, or the end
                self._failure = self._failure or error
                if action == "copy":
                    self._ready[name].put(error)


DATABASES: PostgresDatabases | None = (
    PostgresDatabases(_postgres_admin_url()) if ON_POSTGRES else None
)


@dataclass
class SqliteTemplate:
    """A SQLite file migrated to the newest schema, made once per test process."""

    _folder: Path | None = None

    def file(self) -> Path:
        """The template, made on first use (in a folder of this process's own)."""
        if self._folder is None:
            folder = Path(tempfile.mkdtemp(prefix="proctor-test-template-"))
            open_real_store(folder / "template.db").close()
            # One self-contained file to copy: no write-ahead log beside it. Each store
            # opened on a copy turns WAL on again, as on a file it created itself.
            plain = sqlite3.connect(folder / "template.db")
            plain.execute("PRAGMA journal_mode = DELETE")
            plain.close()
            self._folder = folder
        return self._folder / "template.db"

    def copy_to(self, file: Path) -> None:
        """Put a copy of the template at ``file`` unless something is there already: the
        copy is made beside it and linked into place, which fails if ``file`` appeared
        meanwhile (another thread opening the same new store)."""
        template = self.file()
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_name(f".{file.name}.{uuid.uuid4().hex}.template")
        shutil.copyfile(template, partial)
        try:
            os.link(partial, file)
        except FileExistsError:
            pass
        finally:
            partial.unlink()

    def remove(self) -> None:
        """Delete the template (at the end of the session)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


SQLITE_TEMPLATE = SqliteTemplate()


def _open_from_template(
    path: Path | str | None = None, *, url: str | None = None, read_only: bool = False
) -> SqlStore:
    """``open_store`` with a new SQLite file starting as a copy of the migrated template.

    Anything else (a URL, ``PROCTOR_DATABASE_URL``, a read-only open, a file that exists)
    goes to the real function unchanged, and so does a new file the copy cannot be made
    for: the real function then reports what is wrong with the path.
    """
    note_store_use()
    from proctor._util.paths import database_path

    if url is None and not read_only and (path is not None or configured_database_url() is None):
        file = Path(path) if path is not None else database_path()
        if not file.exists():
            with suppress(OSError):
                SQLITE_TEMPLATE.copy_to(file)
    return open_real_store(path, url=url, read_only=read_only)


def _open_mapped_store(
    path: Path | str | None = None, *, url: str | None = None, read_only: bool = False
) -> SqlStore:
    """``open_store`` with every SQLite path standing for its own PostgreSQL database."""
    note_store_use()
    from proctor._util.paths import database_path

    assert DATABASES is not None
    if url is not None:
        return open_real_store(url=url, read_only=read_only)
    file = Path(path) if path is not None else database_path()
    if read_only and not DATABASES.exists(file):
        return open_real_store(file, read_only=True)  # "no database at …", as for a file
    store = open_real_store(url=DATABASES.ensure(file), read_only=read_only)
    return DATABASES.opened_store(file, store)


def _mapped_database_exists() -> bool:
    """``database_exists`` with the default file standing for its PostgreSQL database."""
    note_store_use()
    from proctor._util.paths import database_path

    assert DATABASES is not None
    return DATABASES.exists(database_path())


def _runs_in_process(store: object) -> bool:
    """``uses_queue`` for the end-to-end suites: background work runs in the test's process."""
    return False


def install() -> None:
    """On PostgreSQL: swap ``open_store`` and ``database_exists`` wherever they are bound;
    on SQLite: swap ``open_store`` for the one that copies the migrated template.

    Background work (reviews, analyses, heartbeat ticks) also stays in process as on
    SQLite: these suites test behaviour over a PostgreSQL store, not the distributed
    executor, which its own multi-process worker tests cover (``proctor.jobs``).

    Run before the test modules import Proctor (the root conftest does) and again after
    collection, so a module that bound the real function early is swapped as well.
    """
    swaps: dict[str, tuple[object, object]] = {"open_store": (open_real_store, _open_from_template)}
    if ON_POSTGRES:
        swaps = {
            "open_store": (open_real_store, _open_mapped_store),
            "database_exists": (real_database_exists, _mapped_database_exists),
            "uses_queue": (real_uses_queue, _runs_in_process),
        }
    for module in list(sys.modules.values()):
        if module is None or not module.__name__.startswith(("proctor", "tests")):
            continue
        for name, (real, mapped) in swaps.items():
            if getattr(module, name, None) is real:
                setattr(module, name, mapped)


def database_env(home: Path, *, create: bool = True) -> dict[str, str]:
    """Environment a Proctor subprocess with ``PROCTOR_HOME=home`` needs for the backend.

    On PostgreSQL: ``PROCTOR_DATABASE_URL`` of the home's database, created unless
    ``create`` is false, when a home without a store gets nothing (the process then sees
    no database, as it would see no file).

    A call with ``create`` false while the home has no store is not a use of one: the
    process gets nothing on PostgreSQL either and runs as it did on SQLite, so the
    PostgreSQL pass need not run the test again for it (``tests/store_use.py``; the gate's
    hook tests ask so for every hook process, most of them with nothing stored).
    """
    database = home / "proctor.db"
    exists = database.exists() if DATABASES is None else DATABASES.exists(database)
    if create or exists:
        note_store_use()
    if DATABASES is None:
        return {}
    if not create and not exists:
        return {}
    return {"PROCTOR_DATABASE_URL": DATABASES.ensure(database)}


def server_env(home: Path) -> dict[str, str]:
    """Environment a ``proctor serve`` on ``home`` needs for the backend, its background work
    kept in the server's process.

    On PostgreSQL the server would queue reviews for ``proctor worker`` processes
    (``proctor.jobs``); suites that drive a server test it over the store, while the
    distributed executor has its own multi-process tests, so ``PROCTOR_JOBS=inprocess``.
    """
    if DATABASES is None:
        return {}
    return {**database_env(home), "PROCTOR_JOBS": "inprocess"}


@contextmanager
def job_worker(env: Mapping[str, str]) -> Iterator[None]:
    """On PostgreSQL, where ``proctor serve`` queues background work (``proctor.jobs``),
    one ``proctor worker`` runs it for the block; on SQLite the server works in process."""
    if DATABASES is None:
        yield
        return
    worker = subprocess.Popen(
        [sys.executable, "-m", "proctor.cli.main", "worker"],
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def until(check: Callable[[], T], seconds: float = 60.0) -> T:
    """Poll ``check`` until it returns something truthy: another process's work has no
    event to wait on."""
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds:g}s: {check.__doc__ or check}")


def database_exists(path: Path) -> bool:
    """Whether the store at ``path`` was created (the file, or its PostgreSQL database)."""
    note_store_use()
    if DATABASES is None:
        return path.exists()
    return DATABASES.exists(path)


def copy_database(source: Path, target: Path, *, unchanging: bool = False) -> None:
    """A private copy of the store at ``source`` at ``target``, committed state included.

    ``unchanging``: nothing writes to ``source`` any more (a prepared store that tests only
    copy). On PostgreSQL the copy is then made before it is asked for, while the previous
    test runs (about 0.1 s a copy, for each of the hundreds of tests that take one).
    """
    note_store_use()
    if DATABASES is not None:
        DATABASES.copy(source, target, unchanging=unchanging)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    # SQLite's backup API: the copy includes what still sits in the write-ahead log.
    with sqlite3.connect(source) as reading, sqlite3.connect(target) as writing:
        reading.backup(writing)
    reading.close()
    writing.close()


def stored_bytes(path: Path) -> bytes:
    """Everything the store at ``path`` holds on disk, to search for what must not be there.

    SQLite: the file and any WAL/SHM left beside it. PostgreSQL: every row of every
    table as the server renders the whole row as text.
    """
    note_store_use()
    if DATABASES is None:
        return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))
    from proctor.store._schema import metadata

    with raw_connection(path) as connection:
        rows = [
            row
            for table in metadata.sorted_tables
            for row in connection.execute(text(f'SELECT CAST(t AS text) FROM "{table.name}" t'))
            .scalars()
            .all()
        ]
    return "\n".join(rows).encode()


@contextmanager
def raw_connection(path: Path, *, read_only: bool = False) -> Iterator[Connection]:
    """A SQLAlchemy connection straight to the store at ``path``, outside Proctor's store."""
    note_store_use()
    if DATABASES is None:
        file = path.resolve()
        engine = create_engine(
            f"sqlite:///file:{file}?mode=ro&uri=true" if read_only else f"sqlite:///{file}"
        )
    else:
        engine = create_engine(make_url(DATABASES.ensure(path)))
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()
