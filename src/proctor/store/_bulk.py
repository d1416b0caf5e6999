"""Plain ``executemany`` for the import's hot tables: compiled once, bound like SQLAlchemy.

``connection.execute(insert(table), rows)`` builds a cache key, looks the compiled
statement up and walks every row through SQLAlchemy's parameter machinery; on an import
of hundreds of thousands of rows that bookkeeping costs more than the database's own
work. ``insert_rows`` compiles each INSERT once per dialect and column set, converts each
value with the very bind processor SQLAlchemy would apply, ``None`` included (so the
stored bytes are the same: times, JSON — a ``None`` JSON value is JSON ``null`` —,
booleans) and hands the rows to the driver's ``executemany`` inside
the caller's transaction.

Inside ``direct_writes`` (the import's batches), ``run_driver`` and ``insert_rows`` run
a statement on the driver's own cursor, inside the caller's
transaction, without SQLAlchemy's per-statement bookkeeping (the execution context, the
result object, the events: ~0.3 ms a statement, hundreds of statements per transaction of
an import); the driver's errors are raised as SQLAlchemy's exceptions, as
``Connection.execute`` raises them (an ``IntegrityError`` still names a refused write).
``driver_sql`` turns a statement written with ``?`` placeholders into the driver's
paramstyle.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import JSON, Boolean, Table, insert
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import Executable

from proctor.store._engine import _json_dumps
from proctor.store._schema import UTCDateTime

Processor = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class _Statement:
    """One compiled INSERT: its text, the order of its values and how each is bound."""

    sql: str
    keys: tuple[str, ...]
    processors: tuple[tuple[int, str, Processor], ...]
    positional: bool
    by_value: tuple[bool, ...] = ()
    """For each processor: its column's values are bound by distinct value (``_bound``)."""
    given: tuple[int, ...] | None = None
    """Where each of ``keys`` is in a row of values given in the order the statement
    was asked for (``insert_values``); None when that order is ``keys``."""

    def parameters(self, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """The driver's parameters for ``rows``: tuples (qmark) or dicts (pyformat)."""
        return self._bound_columns(list(zip(*map(_values(self.keys), rows), strict=True)), rows)

    def value_parameters(self, rows: Sequence[tuple[Any, ...]]) -> list[Any]:
        """The driver's parameters for ``rows`` of values in the order the statement was
        asked for (``_statement``'s ``keys``)."""
        columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
        if self.given is not None and columns:
            columns = [columns[index] for index in self.given]
        return self._bound_columns(columns, rows)

    def _bound_columns(self, columns: list[Sequence[Any]], rows: Sequence[Any]) -> list[Any]:
        """Rows of ``columns`` (the values of ``keys``, column by column) bound.

        Column by column, in C where it can be: each column bound (``_bound``), columns
        back to rows (tuples for qmark, dicts for pyformat)."""
        if not columns:
            return [() if self.positional else {} for _ in rows]
        for (index, _key, process), by_value in zip(self.processors, self.by_value, strict=True):
            columns[index] = _bound(process, by_value, columns[index])
        if self.positional:
            return list(zip(*columns, strict=True))
        keys = self.keys
        return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]


def _bound(process: Processor, by_value: bool, column: Sequence[Any]) -> list[Any]:
    """``process`` applied to every value of ``column``.

    ``by_value``: the column's values are hashable and equal values bind alike (times,
    booleans, ``None``): each distinct value is converted once, and the column is mapped
    through the results in C. A conversation's rows share a few times (the write's own
    time, a message's time in its source row and its content row)."""
    if not by_value or len(column) < 2:
        return list(map(process, column))
    try:
        converted = {value: process(value) for value in set(column)}
    except TypeError:  # an unhashable value where none was expected: bind each
        return list(map(process, column))
    return list(map(converted.__getitem__, column))


def _values(keys: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A row's values in ``keys`` order, as a tuple (``itemgetter``, in C)."""
    if len(keys) == 1:
        only = keys[0]
        return lambda row: (row[only],)
    if not keys:
        return lambda _row: ()
    return operator.itemgetter(*keys)


_SQLITE_TIME_TEXTS: dict[datetime, str] = {}
"""SQLite texts of recent UTC times, shared by every time column's bind (each text is
the same whatever the column); emptied when it holds ``_TIME_TEXTS_MAX``."""
_TIME_TEXTS_MAX = 4096


def _sqlite_utc_text(general: Processor) -> Processor:
    """SQLite's bind of a ``UTCDateTime`` (``general``: the UTC naive time, then SQLite's
    ``YYYY-MM-DD HH:MM:SS.ffffff`` text) done by ``datetime.isoformat`` in C for a plain
    datetime: the same text, without a Python-level format of seven fields."""

    texts = _SQLITE_TIME_TEXTS

    def bind(value: Any) -> Any:
        if type(value) is not datetime:
            return general(value)
        if value.tzinfo is UTC:  # most times: the text without its "+00:00"
            # Equal UTC times have equal fields: one text for a message's time in its
            # content row, its source row and its calls' rows.
            text = texts.get(value)
            if text is None:
                if len(texts) >= _TIME_TEXTS_MAX:
                    texts.clear()
                text = texts[value] = value.isoformat(" ", "microseconds")[:-6]
            return text
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat(" ", "microseconds")

    return bind


def _plain_json_text(dialect: Dialect, column_type: JSON) -> bool:
    """True when SQLAlchemy binds ``column_type`` on ``dialect`` as the store's
    serializer's text, unconverted further (SQLite: the engine's ``_json_dumps``)."""
    string_type = column_type._str_impl
    return (
        getattr(dialect, "_json_serializer", None) is _json_dumps
        and string_type.dialect_impl(dialect).bind_processor(dialect) is None
    )


def _sqlite_json_text(general: Processor) -> Processor:
    """SQLite's bind of a JSON value: for a dict or a list, the text SQLAlchemy's
    processor would make (``_json_dumps``), without its two Python calls per value;
    anything else (``None``, SQLAlchemy's null markers, scalars) through ``general``."""

    def bind(value: Any) -> Any:
        kind = type(value)
        if kind is dict or kind is list:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        return general(value)

    return bind


_Key = tuple[str, tuple[str, ...], bool]
_compiled: weakref.WeakKeyDictionary[Dialect, dict[_Key, _Statement]] = weakref.WeakKeyDictionary()


def _compile(dialect: Dialect, table: Table, keys: tuple[str, ...], skip: bool) -> _Statement:
    statement: Executable
    if not skip:
        statement = insert(table)
    elif dialect.name == "postgresql":
        # Imported here: on SQLite, PostgreSQL's dialect is ~5 % of a command's imports.
        from sqlalchemy.dialects import postgresql

        statement = postgresql.insert(table).on_conflict_do_nothing()
    else:
        from sqlalchemy.dialects import sqlite

        statement = sqlite.insert(table).on_conflict_do_nothing()
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))
    order = tuple(compiled.positiontup or ()) if compiled.positional else keys
    processors: list[tuple[int, str, Processor]] = []
    by_value: list[bool] = []
    for index, key in enumerate(order):
        column_type = table.c[key].type
        process: Processor | None = column_type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None and dialect.name == "sqlite":
            if isinstance(column_type, UTCDateTime):
                process = _sqlite_utc_text(process)
            elif isinstance(column_type, JSON) and _plain_json_text(dialect, column_type):
                process = _sqlite_json_text(process)
        if process is not None:
            processors.append((index, key, process))
            by_value.append(isinstance(column_type, UTCDateTime | Boolean))
    given = None if order == keys else tuple(keys.index(key) for key in order)
    return _Statement(
        compiled.string, order, tuple(processors), compiled.positional, tuple(by_value), given
    )


def _statement(dialect: Dialect, table: Table, keys: tuple[str, ...], skip: bool) -> _Statement:
    by_key = _compiled.setdefault(dialect, {})
    key = (table.name, keys, skip)
    found = by_key.get(key)
    if found is None:
        found = by_key[key] = _compile(dialect, table, keys, skip)
    return found


def insert_rows(
    connection: Connection,
    table: Table,
    rows: Sequence[dict[str, Any]],
    *,
    skip_conflicts: bool = False,
) -> None:
    """Insert ``rows`` (every row with the same keys) in one ``executemany``.

    ``skip_conflicts``: a row whose key is already stored is left out (``ON CONFLICT DO
    NOTHING``), as ``sqlite.insert(...).on_conflict_do_nothing()`` would.
    Inside ``direct_writes`` (the import's batches) on the driver's cursor.
    """
    if not rows:
        return
    statement = _statement(connection.dialect, table, tuple(rows[0]), skip_conflicts)
    _run_insert(connection, statement, statement.parameters(rows))


def insert_values(
    connection: Connection,
    table: Table,
    columns: tuple[str, ...],
    rows: Sequence[tuple[Any, ...]],
    *,
    skip_conflicts: bool = False,
) -> None:
    """``insert_rows`` for rows given as tuples of the values of ``columns``, in that
    order: the same statement and binds, without a dict per row."""
    if not rows:
        return
    statement = _statement(connection.dialect, table, columns, skip_conflicts)
    _run_insert(connection, statement, statement.value_parameters(rows))


def _run_insert(connection: Connection, statement: _Statement, parameters: list[Any]) -> None:
    if len(parameters) == 1:
        run_driver(connection, statement.sql, parameters[0])
    else:
        run_driver(connection, statement.sql, parameters, many=True)


_DIRECT: ContextVar[bool] = ContextVar("proctor_direct_writes", default=False)


@contextmanager
def direct_writes() -> Iterator[None]:
    """Within the block, ``run_driver`` and ``insert_rows`` use the driver's cursor (the
    import's batches); elsewhere they go through ``Connection.exec_driver_sql``, whose
    events other writers' tests and tools observe."""
    token = _DIRECT.set(True)
    try:
        yield
    finally:
        _DIRECT.reset(token)


def in_direct_writes() -> bool:
    """Whether the caller runs inside ``direct_writes`` (an import's batch)."""
    return _DIRECT.get()


def run_driver(
    connection: Connection, sql: str, parameters: Any = (), *, many: bool = False
) -> list[tuple[Any, ...]]:
    """Run ``sql`` on the driver's cursor inside the caller's transaction; return its
    rows (none for a statement that returns none).

    ``parameters``: the driver's (a tuple or a dict; with ``many``, a list of them). The
    rows are the driver's tuples, values as the driver gives them (use it for columns
    SQLAlchemy converts no further: text, integers).
    """
    if not _DIRECT.get() or not connection.in_transaction():
        # Outside ``direct_writes``, or no transaction begun yet: SQLAlchemy's execute
        # begins one (autobegin), which the driver's cursor would not (SQLite would
        # commit each statement alone).
        result = connection.exec_driver_sql(sql, parameters)
        return list(map(tuple, result)) if result.returns_rows else []
    dialect = connection.dialect
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        if many:
            cursor.executemany(sql, parameters)
        else:
            cursor.execute(sql, parameters)
        rows = cursor.fetchall() if cursor.description is not None else []
    except dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(
            sql, parameters, exc, dialect.loaded_dbapi.Error, dialect=dialect
        ) from exc
    finally:
        cursor.close()
    return list(rows)


_driver_sql: dict[tuple[str, str], str] = {}


def driver_sql(dialect: Dialect, sql: str) -> str:
    """``sql`` written with ``?`` placeholders, in ``dialect``'s driver paramstyle."""
    key = (dialect.paramstyle, sql)
    found = _driver_sql.get(key)
    if found is None:
        if dialect.paramstyle == "qmark":
            found = sql
        elif dialect.paramstyle in ("format", "pyformat"):
            found = sql.replace("%", "%%").replace("?", "%s")
        else:  # pragma: no cover - the store runs on SQLite and psycopg only
            raise ValueError(f"unsupported paramstyle {dialect.paramstyle!r}")
        _driver_sql[key] = found
    return found
