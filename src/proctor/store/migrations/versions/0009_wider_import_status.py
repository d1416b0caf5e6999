"""wider import status: 'completed_with_errors' does not fit VARCHAR(16) on PostgreSQL

SQLite never enforced the length; PostgreSQL refused the value. SQLite cannot change a
column's type in place and rebuilding ``imports`` would cascade into ``import_issues``,
so there the column is replaced: add the wide one, copy, drop the old, rename.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29 23:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _set_status_width(old: int, new: int) -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column(
            "imports",
            "status",
            type_=sa.String(length=new),
            existing_type=sa.String(length=old),
            existing_nullable=False,
        )
        return
    op.execute(f"ALTER TABLE imports ADD COLUMN status_new VARCHAR({new}) NOT NULL DEFAULT ''")
    op.execute("UPDATE imports SET status_new = status")
    op.execute("ALTER TABLE imports DROP COLUMN status")
    op.execute("ALTER TABLE imports RENAME COLUMN status_new TO status")


def upgrade() -> None:
    _set_status_width(16, 32)


def downgrade() -> None:
    _set_status_width(32, 16)
