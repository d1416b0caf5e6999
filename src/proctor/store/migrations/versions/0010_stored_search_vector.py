"""stored search vector: PostgreSQL keeps each document's weighted tsvector in a column

Ranking read the tsvector through the expression index of migration 0005, which finds the
matches but cannot hand their vectors to ``ts_rank``: every matching row was parsed again
for every query. A stored generated column is parsed once, when the row is written, and
carries the GIN index instead. SQLite's FTS5 index already stores its postings: nothing to
do there.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30 01:40:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_WEIGHTED = (
    "setweight(to_tsvector('english', body), 'A') || "
    "setweight(to_tsvector('english', context), 'B')"
)
"""Migration 0005's expression: a message's own text weighs A, its neighbours' B."""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "ALTER TABLE search_documents ADD COLUMN search_vector tsvector "
        f"GENERATED ALWAYS AS ({_WEIGHTED}) STORED"
    )
    op.execute("DROP INDEX IF EXISTS ix_search_documents_tsv")
    op.execute(
        "CREATE INDEX ix_search_documents_search_vector ON search_documents "
        "USING gin (search_vector)"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX IF EXISTS ix_search_documents_search_vector")
    op.execute("ALTER TABLE search_documents DROP COLUMN search_vector")
    op.execute(
        f"CREATE INDEX ix_search_documents_tsv ON search_documents USING gin (({_WEIGHTED}))"
    )
