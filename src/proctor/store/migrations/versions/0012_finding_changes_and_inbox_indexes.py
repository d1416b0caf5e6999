"""finding changes and inbox indexes: bulk triage with an exact undo, findings paged fast

The findings inbox lists findings over every conversation and changes many at once. A
bulk change is stored (``finding_changes``) with the status each finding had before it
(``finding_change_items``), so undoing it restores exactly those statuses. Two indexes
serve the inbox and the conversations list: findings by creation time, and per
conversation by status and severity (open counts and top severity in one grouped query).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-08 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from proctor.store._schema import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_findings_created_at", "findings", ["created_at"])
    op.create_index(
        "ix_findings_conversation_id_status_severity",
        "findings",
        ["conversation_id", "status", "severity"],
    )
    op.create_table(
        "finding_changes",
        sa.Column("change_id", sa.String(length=32), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("finding_count", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("undone_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("change_id", name=op.f("pk_finding_changes")),
    )
    op.create_table(
        "finding_change_items",
        sa.Column("change_id", sa.String(length=32), nullable=False),
        sa.Column("finding_id", sa.String(length=255), nullable=False),
        sa.Column("previous_status", sa.String(length=32), nullable=False),
        sa.Column("previous_changed_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["change_id"],
            ["finding_changes.change_id"],
            name=op.f("fk_finding_change_items_change_id_finding_changes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["finding_id"],
            ["findings.finding_id"],
            name=op.f("fk_finding_change_items_finding_id_findings"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("change_id", "finding_id", name=op.f("pk_finding_change_items")),
    )
    op.create_index("ix_finding_change_items_finding_id", "finding_change_items", ["finding_id"])


def downgrade() -> None:
    op.drop_index("ix_finding_change_items_finding_id", table_name="finding_change_items")
    op.drop_table("finding_change_items")
    op.drop_table("finding_changes")
    op.drop_index("ix_findings_conversation_id_status_severity", table_name="findings")
    op.drop_index("ix_findings_created_at", table_name="findings")
