"""Alembic environment: runs on the connection Proctor hands over (never from alembic.ini)."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from proctor.store._schema import is_search_fts_table, metadata

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "Proctor migrations run through proctor.store.open_store(), not the alembic CLI"
    )

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
    # The SQLite full-text index is derived data that migrations create by hand.
    include_name=lambda name, kind, _parent: not (kind == "table" and is_search_fts_table(name)),
)
context.run_migrations()
