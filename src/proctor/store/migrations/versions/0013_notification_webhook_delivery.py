"""notification webhook delivery: each notification's delivery to the policy's webhook

A notification is delivered to ``notify.webhook_url`` once: the row says whether it is
pending, claimed by one process (``sending``), delivered, failed (and why) or skipped
(no webhook in the policy), how many attempts it took and when the last one was.
Notifications written before this revision are left NULL: they are never sent, so
configuring a webhook later does not replay the past.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-08 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from proctor.store._schema import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("notifications", sa.Column("webhook_state", sa.String(length=16)))
    op.add_column("notifications", sa.Column("webhook_attempts", sa.Integer()))
    op.add_column("notifications", sa.Column("webhook_at", UTCDateTime()))
    op.add_column("notifications", sa.Column("webhook_error", sa.Text()))
    op.create_index("ix_notifications_webhook_state", "notifications", ["webhook_state"])


def downgrade() -> None:
    op.drop_index("ix_notifications_webhook_state", table_name="notifications")
    with op.batch_alter_table("notifications") as batch:
        batch.drop_column("webhook_error")
        batch.drop_column("webhook_at")
        batch.drop_column("webhook_attempts")
        batch.drop_column("webhook_state")
