"""Watching another process's import through the store it writes."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from tests.backends import database_exists, raw_connection


class ConversationCounter:
    """The store's conversations counted on one connection, opened once the store is there
    and kept until ``stack`` closes: a poll is one query in a new snapshot, not a connection
    of its own (on PostgreSQL a server process started and ended every 20 ms of a wait).
    Close ``stack`` before killing the import, so no reader is open when it dies, as before."""

    def __init__(self, db: Path, stack: ExitStack) -> None:
        self.db = db
        self.stack = stack
        self.connection: Connection | None = None

    def __call__(self) -> int:
        if self.connection is None:
            if not database_exists(self.db):
                return 0
            self.connection = self.stack.enter_context(raw_connection(self.db, read_only=True))
        try:
            return int(
                self.connection.execute(text("SELECT count(*) FROM conversations")).scalar_one()
            )
        except DBAPIError:
            return 0  # the schema is not there yet
        finally:
            self.connection.rollback()  # the next poll sees what was committed since
