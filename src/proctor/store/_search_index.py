"""The search index's tables, for ``proctor.search``.

The index (``search_documents``, its full-text table and its vectors) is built and queried
by ``proctor.search``, which owns that SQL; it reaches the database only through this
repository: ``store.repos.search.read()`` (a read-only connection, also on a ``ReadStore``)
and ``.write()`` (one transaction, only on a writer), the same mechanism as every other
repository.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from sqlalchemy.engine import Connection

from proctor.store._base import Repository


class SearchIndexReads(Repository):
    """Read connections for the search index's queries."""

    def read(self) -> AbstractContextManager[Connection]:
        """A connection of the read-only engine."""
        return self._read()


class SearchIndexRepository(SearchIndexReads):
    """Read connections and write transactions for the search index."""

    def write(self) -> AbstractContextManager[Connection]:
        """One write transaction: committed when the block ends, else rolled back."""
        return self._write()
