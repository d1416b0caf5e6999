"""graph read indexes: source references by object and result

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29 21:10:00.000000

A bounded ``graph()`` read numbers each shown object's references in one result (the
first ``SOURCES_PER_OBJECT``, and how many there are). With ``result_id`` in the index
that is an index-only range per object, instead of reading every reference any result
recorded for it. The new index starts with the old one's columns, which it replaces.
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("source_refs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_source_refs_object_type_object_id_result_id",
            ["object_type", "object_id", "result_id"],
            unique=False,
        )
        batch_op.drop_index("ix_source_refs_object_type_object_id")


def downgrade() -> None:
    with op.batch_alter_table("source_refs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_source_refs_object_type_object_id", ["object_type", "object_id"], unique=False
        )
        batch_op.drop_index("ix_source_refs_object_type_object_id_result_id")
