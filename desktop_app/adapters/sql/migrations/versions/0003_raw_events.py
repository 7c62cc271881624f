"""The raw event stream of a recording, kept beside the cleaned events; incomplete recordings.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from desktop_app.adapters.sql.tables import UtcDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "trajectory_raw_events",
        sa.Column("trajectory_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("at", UtcDateTime(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["trajectory_id"], ["trajectories.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("trajectory_id", "seq"),
    )
    op.add_column(
        "trajectories",
        sa.Column("incomplete", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "trajectories",
        sa.Column("raw_count", sa.Integer(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    with op.batch_alter_table("trajectories") as batch:
        batch.drop_column("raw_count")
        batch.drop_column("incomplete")
    op.drop_table("trajectory_raw_events")
