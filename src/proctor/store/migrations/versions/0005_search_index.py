"""search index: documents, embeddings, the full-text index and its state

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 20:30:00.000000

SQLite gets an FTS5 index over ``search_documents`` (body and context; external content,
porter stemming) kept in step by triggers, so a deleted conversation's documents leave the
index in the same statement. PostgreSQL ranks the same two columns with ``to_tsvector``
(body weighted A, context B) and gets a GIN index on that expression.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import proctor.store._schema

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_SQLITE_FTS = [
    "CREATE VIRTUAL TABLE search_fts USING fts5(body, context, "
    "content='search_documents', content_rowid='row_id', tokenize='porter unicode61')",
    "CREATE TRIGGER search_documents_fts_insert AFTER INSERT ON search_documents BEGIN "
    "INSERT INTO search_fts(rowid, body, context) VALUES (new.row_id, new.body, new.context); "
    "END",
    "CREATE TRIGGER search_documents_fts_delete AFTER DELETE ON search_documents BEGIN "
    "INSERT INTO search_fts(search_fts, rowid, body, context) "
    "VALUES ('delete', old.row_id, old.body, old.context); END",
    "CREATE TRIGGER search_documents_fts_update AFTER UPDATE OF body, context "
    "ON search_documents BEGIN "
    "INSERT INTO search_fts(search_fts, rowid, body, context) "
    "VALUES ('delete', old.row_id, old.body, old.context); "
    "INSERT INTO search_fts(rowid, body, context) VALUES (new.row_id, new.body, new.context); "
    "END",
]
POSTGRES_TSVECTOR = (
    "setweight(to_tsvector('english', body), 'A') || "
    "setweight(to_tsvector('english', context), 'B')"
)
# The same expression as ``proctor.search._query.POSTGRES_TSVECTOR``, so the index is used.
_POSTGRES_FTS = (
    f"CREATE INDEX ix_search_documents_tsv ON search_documents USING gin (({POSTGRES_TSVECTOR}))"
)


def upgrade() -> None:
    op.create_table(
        "search_documents",
        sa.Column("row_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("doc_key", sa.String(length=300), nullable=False),
        sa.Column("doc_type", sa.String(length=32), nullable=False),
        sa.Column("doc_id", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=True),
        sa.Column("conversation_id", sa.String(length=255), nullable=True),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("context", sa.Text(), nullable=False),
        sa.Column("occurred_at", proctor.store._schema.UTCDateTime(timezone=True), nullable=True),
        sa.Column("source_refs", sa.JSON(), nullable=False),
        sa.Column("basis", sa.String(length=32), nullable=False),
        sa.Column("indexed_at", proctor.store._schema.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.conversation_id"],
            name=op.f("fk_search_documents_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("row_id", name=op.f("pk_search_documents")),
        sa.UniqueConstraint("doc_key", name=op.f("uq_search_documents_doc_key")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("search_documents", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_search_documents_conversation_id"), ["conversation_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_search_documents_doc_type"), ["doc_type"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_search_documents_project_id"), ["project_id"], unique=False
        )

    op.create_table(
        "search_vectors",
        sa.Column("row_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("model", sa.String(length=100), nullable=False),
        sa.Column("text_hash", sa.String(length=32), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["row_id"],
            ["search_documents.row_id"],
            name=op.f("fk_search_vectors_row_id_search_documents"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("row_id", name=op.f("pk_search_vectors")),
    )

    op.create_table(
        "search_state",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("updated_at", proctor.store._schema.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_search_state")),
    )

    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in _SQLITE_FTS:
            op.execute(statement)
    elif dialect == "postgresql":
        op.execute(_POSTGRES_FTS)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS search_documents_fts_{trigger}")
        op.execute("DROP TABLE IF EXISTS search_fts")
    op.drop_table("search_state")
    op.drop_table("search_vectors")
    with op.batch_alter_table("search_documents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_search_documents_project_id"))
        batch_op.drop_index(batch_op.f("ix_search_documents_doc_type"))
        batch_op.drop_index(batch_op.f("ix_search_documents_conversation_id"))
    op.drop_table("search_documents")
