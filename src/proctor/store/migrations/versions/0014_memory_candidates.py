"""memory candidates: a finding a person asked to remember, until confirmed or discarded

"Remember this" on a finding (SUP-10) drafts a memory candidate; confirming it writes a
``memories`` row (what the supervisor's window carries, SUP-3), discarding it writes
nothing else. Candidates go with their finding (and so with its conversation).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import proctor.store._schema

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_candidates",
        sa.Column("candidate_id", sa.String(length=255), nullable=False),
        sa.Column("finding_id", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("memory_id", sa.String(length=255), nullable=True),
        sa.Column("created_at", proctor.store._schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", proctor.store._schema.UTCDateTime(timezone=True), nullable=False),
        sa.Column("decided_at", proctor.store._schema.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["finding_id"],
            ["findings.finding_id"],
            name=op.f("fk_memory_candidates_finding_id_findings"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("candidate_id", name=op.f("pk_memory_candidates")),
    )
    with op.batch_alter_table("memory_candidates", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_memory_candidates_finding_id"), ["finding_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_memory_candidates_project_id"), ["project_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_memory_candidates_status"), ["status"], unique=False)


def downgrade() -> None:
    op.drop_table("memory_candidates")
