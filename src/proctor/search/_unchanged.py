"""Answers about the index that stay valid while the database is unchanged, kept per
connection, so a search of an unchanged store does not count it again.

Every search asks questions whose answers only a write can change: whether the full text
is behind the sources, how many documents the index holds, the held catalog's signature.
Each is a count over every source or document (tens of milliseconds on a store of
300,000 documents). SQLite tells cheaply whether anything changed: for one connection,
``PRAGMA data_version`` changes whenever another connection commits, in this process or
any other. It is read inside the transaction that computes the answer, and SQLite reads it
from that transaction's snapshot, so an answer is kept under the version of the data it
was computed from; the next transaction that sees another version computes afresh.

Only connections that never wrote keep answers (the read-only engine's: every search
reads through one): a connection's own writes do not move its data version, and a write
rolled back after an answer was computed would leave that answer wrong. The answers live
in the pooled connection's ``info`` (they go with the connection). On PostgreSQL, which
has no such counter, every answer is computed each time.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from sqlalchemy.engine import Connection

T = TypeVar("T")

_KEPT = "proctor.search.unchanged"
KEPT_ANSWERS = 1_024
"""Answers kept per connection and version (the term counts of many different queries
would otherwise pile up on a store nobody writes to)."""


_versions: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_versions_lock = threading.Lock()


def data_version(connection: Connection) -> int | None:
    """What identifies the data this SQLite connection's transaction sees (read once per
    transaction), for a connection that never wrote; None for one that did, and on other
    databases."""
    if connection.dialect.name != "sqlite":
        return None
    if getattr(connection.connection.dbapi_connection, "total_changes", 1) != 0:
        return None
    transaction = connection.get_transaction()
    if transaction is not None:
        with _versions_lock:
            known = _versions.get(transaction)
        if known is not None:
            return known
    version = int(connection.exec_driver_sql("PRAGMA data_version").scalar_one())
    transaction = connection.get_transaction()  # begun by the statement when none was
    if transaction is not None:
        with _versions_lock:
            _versions[transaction] = version
    return version


def unless_changed(connection: Connection, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, or what it gave in an earlier transaction of this connection that saw
    the same data (SQLite's readers; elsewhere it is computed every time). ``key`` names
    the question and its arguments."""
    version = data_version(connection)
    if version is None:
        return compute()
    info: dict[Any, Any] = connection.info
    kept: tuple[int, dict[Hashable, Any]] | None = info.get(_KEPT)
    if kept is None or kept[0] != version or len(kept[1]) >= KEPT_ANSWERS:
        kept = (version, {})
        info[_KEPT] = kept
    answers = kept[1]
    if key in answers:
        return answers[key]  # type: ignore[no-any-return]
    answer = compute()
    answers[key] = answer
    return answer
