"""What the search index has yet to be brought up to date with (a crash between a change and
its indexing leaves it here, for the next writer to finish).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from desktop_app.adapters.sql.tables import UtcDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "index_pending",
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("item_id", sa.String(), nullable=False),
        sa.Column("since", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "item_id"),
    )


def downgrade() -> None:
    op.drop_table("index_pending")
