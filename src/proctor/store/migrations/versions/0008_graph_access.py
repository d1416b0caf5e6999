"""graph access: the per-conversation story-graph switch for the MCP server

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29 22:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import proctor.store._schema

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "graph_access",
        sa.Column("conversation_id", sa.String(length=255), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", proctor.store._schema.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"], ["conversations.conversation_id"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("conversation_id"),
    )


def downgrade() -> None:
    op.drop_table("graph_access")
