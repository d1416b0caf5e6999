"""import owner: which process runs an import, so a crashed one can be marked interrupted

An import killed mid-way (``kill -9``, a crash, a power cut) left its row ``running``
forever. The row now names its process — host, id and, on Linux, boot id and start time —
and the next import marks rows whose process is gone ``interrupted``. Rows written before
this revision name no process; they are treated as interrupted when found running.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 22:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COLUMNS = (
    ("owner_host", sa.String(length=255)),
    ("owner_pid", sa.Integer()),
    ("owner_start", sa.String(length=80)),
)


def upgrade() -> None:
    for name, type_ in _COLUMNS:
        op.add_column("imports", sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("imports") as batch:
        for name, _type in reversed(_COLUMNS):
            batch.drop_column(name)
