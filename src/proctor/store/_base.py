"""Store plumbing shared by every repository: one database, one writer, read-only readers.

``Database`` holds the two engines and the one transaction mechanism: ``read()`` yields a
connection from the read-only engine, ``write()`` one transaction on the writer that commits
on success and rolls back on any error. A database opened read-only has no writer at all,
and its connections are refused every write by the database itself (SQLite ``mode=ro`` and
``query_only``; PostgreSQL ``default_transaction_read_only`` or read-only transactions).

``Repository`` is the base of every repository (``ConversationRepository``,
``GraphRepository`` …): it holds the shared ``Database`` and gives its methods ``_read()``
and ``_write()``. ``SqlStore`` composes one of each over one ``Database``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from operator import attrgetter
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from sqlalchemy import Engine
from sqlalchemy.engine import Connection
from sqlalchemy.engine.base import OptionEngine
from sqlalchemy.exc import DataError, IntegrityError, OperationalError

from proctor.errors import ConversationWriteError, StoreError

NUL_REFUSED = (
    "a value holds a NUL character (\\x00 or \\u0000), which no stored text has and "
    "PostgreSQL cannot compare: remove it; nothing was changed"
)
"""Why a statement with NUL in a text parameter was refused (PostgreSQL refuses any; stored
text never holds one — import and intake replace it — so such a value can match nothing)."""


def _holds_nul(exc: DataError) -> bool:
    return "NUL" in str(exc.orig)


class Database:
    """The engines of one database and the context managers every query goes through.

    ``writer`` is ``None`` for a database opened read-only: ``write()`` then refuses.
    """

    def __init__(
        self, writer: Engine | None, reader: Engine | OptionEngine, *, description: str
    ) -> None:
        self._writer = writer
        self._reader = reader
        self.description = description
        """Where the data lives, for messages (a file path or a URL without password)."""

    @property
    def read_only(self) -> bool:
        """Whether this database was opened without a writer."""
        return self._writer is None

    @property
    def reader(self) -> Engine | OptionEngine:
        """The read-only engine."""
        return self._reader

    @property
    def writer(self) -> Engine:
        """The writing engine; ``StoreError`` when the database was opened read-only."""
        if self._writer is None:
            raise StoreError(f"{self.description} was opened read-only: nothing may be written")
        return self._writer

    @property
    def dialect(self) -> str:
        """The database kind: ``sqlite`` (embedded) or ``postgresql`` (scale-out)."""
        return str(self._reader.dialect.name)

    def url(self) -> str:
        """The URL, password included: for a job queue on the same database."""
        engine = self._writer if self._writer is not None else self._reader
        return str(engine.url.render_as_string(hide_password=False))

    def read_only_view(self) -> Database:
        """The same database through its read-only engine only (sharing its connections;
        closing the view closes nothing)."""
        return _View(self._reader, description=self.description)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection of the read-only engine."""
        try:
            with self._reader.connect() as connection:
                yield connection
        except OperationalError as exc:
            raise StoreError(f"cannot read {self.description}: {exc.orig}") from exc
        except DataError as exc:
            if not _holds_nul(exc):
                raise
            raise StoreError(NUL_REFUSED) from exc

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction on the writer: committed when the block ends, else rolled back."""
        writer = self.writer
        try:
            with writer.begin() as connection:
                yield connection
        except IntegrityError as exc:
            raise ConversationWriteError(
                f"the write was refused and rolled back ({exc.orig}); nothing of it was stored"
            ) from exc
        except OperationalError as exc:
            raise StoreError(f"cannot write {self.description}: {exc.orig}") from exc
        except DataError as exc:
            if not _holds_nul(exc):
                raise
            raise StoreError(NUL_REFUSED) from exc

    def close(self) -> None:
        """Release every pooled connection."""
        if self._writer is not None:
            self._writer.dispose()
        self._reader.dispose()


class _View(Database):
    """A read-only view of a database another owner closes."""

    def __init__(self, reader: Engine | OptionEngine, *, description: str) -> None:
        super().__init__(None, reader, description=description)

    def close(self) -> None:
        """Nothing: the database the view was taken from owns the connections."""


class Repository:
    """The base of every repository: the shared database and its two context managers."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @property
    def dialect(self) -> str:
        """The database kind: ``sqlite`` or ``postgresql``."""
        return self._database.dialect

    @property
    def _writer(self) -> Engine:
        return self._database.writer

    def _read(self) -> AbstractContextManager[Connection]:
        return self._database.read()

    def _write(self) -> AbstractContextManager[Connection]:
        return self._database.write()


P = ParamSpec("P")
R = TypeVar("R")


def forward(
    target: str, method: Callable[Concatenate[Any, P], R]
) -> Callable[Concatenate[Any, P], R]:
    """A method that calls ``method`` on ``self.<target>`` (a dotted path, e.g.
    ``repos.graph``): how a facade composes a repository without repeating its signatures."""
    name = method.__name__
    held = attrgetter(target)

    def call(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return cast(R, getattr(held(self), name)(*args, **kwargs))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    call.__dict__["forwarded_to"] = target
    return call
