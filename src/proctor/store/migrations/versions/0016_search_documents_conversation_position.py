"""search documents by (conversation, position): a search finds its candidates' neighbours

Hybrid search scores its candidates with the turns just before and after each (the
vectors are queried in the database, not held in memory). With only the index on
``conversation_id``, each neighbour lookup scanned its conversation's documents (150 ms a
query on 27,000 documents); the index on (conversation_id, position) answers each in one
probe and still serves everything the old one did (deleting a conversation's documents).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-11 09:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_search_documents_conversation_id", table_name="search_documents")
    op.create_index(
        "ix_search_documents_conversation_id_position",
        "search_documents",
        ["conversation_id", "position"],
    )


def downgrade() -> None:
    op.drop_index("ix_search_documents_conversation_id_position", table_name="search_documents")
    op.create_index("ix_search_documents_conversation_id", "search_documents", ["conversation_id"])
