"""sources by (source_type, updated_at): the search index's freshness check reads one index

Every search (and every catch-up of the server's background indexer) asks whether the
messages and tool calls changed since the last full-text pass: their count and latest
``updated_at``. With only the primary key, that read every source row (18 ms a check on
41,600 sources, about 90 ms on the 1 GB corpus, twice per search in ``proctor serve``); the
index on (source_type, updated_at) answers it from the index alone (2.5 ms on 41,600).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-12 08:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_sources_source_type_updated_at", "sources", ["source_type", "updated_at"])


def downgrade() -> None:
    op.drop_index("ix_sources_source_type_updated_at", table_name="sources")
