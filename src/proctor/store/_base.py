"""Store plumbing shared by every part of ``SqlStore``: one writer, read-only readers.

``_read()`` yields a connection from the read-only engine; ``_write()`` one transaction on
the writer that commits on success and rolls back on any error. The parts of the store
that own a group of tables (``_model_settings.py``, ``_supervision_store.py``,
``_goal_store.py``) are mixins over this base.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.engine import Connection
from sqlalchemy.engine.base import OptionEngine
from sqlalchemy.exc import IntegrityError, OperationalError

from proctor.errors import ConversationWriteError, StoreError


class StoreBase:
    """Engines and the two context managers every store method goes through."""

    def __init__(self, writer: Engine, reader: Engine | OptionEngine, *, description: str) -> None:
        self._writer = writer
        self._reader = reader
        self.description = description
        """Where the data lives, for messages (a file path or a URL without password)."""

    @property
    def dialect(self) -> str:
        """The database kind: ``sqlite`` (embedded) or ``postgresql`` (scale-out)."""
        return str(self._writer.dialect.name)

    def database_url(self) -> str:
        """The writer's URL, password included: for a job queue on the same database."""
        return str(self._writer.url.render_as_string(hide_password=False))

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self._reader.connect() as connection:
                yield connection
        except OperationalError as exc:
            raise StoreError(f"cannot read {self.description}: {exc.orig}") from exc

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        try:
            with self._writer.begin() as connection:
                yield connection
        except IntegrityError as exc:
            raise ConversationWriteError(
                f"the write was refused and rolled back ({exc.orig}); nothing of it was stored"
            ) from exc
        except OperationalError as exc:
            raise StoreError(f"cannot write {self.description}: {exc.orig}") from exc

    def close(self) -> None:
        """Release every pooled connection."""
        self._writer.dispose()
        self._reader.dispose()
