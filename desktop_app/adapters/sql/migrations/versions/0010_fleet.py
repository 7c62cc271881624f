"""The runner fleet: jobs, their rows (claimed by workers, with a lease and the note of an
irreversible step begun), and schedules.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from desktop_app.adapters.sql.tables import UtcDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fleet_schedules",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("workflow_id", sa.String(), nullable=False),
        sa.Column("cron", sa.String(), nullable=False),
        sa.Column("timezone", sa.String(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("last_fired_at", UtcDateTime(), nullable=True),
        sa.Column("document", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "fleet_jobs",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("workflow_id", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("schedule_id", sa.String(), nullable=True),
        # A schedule fires once per time it is due, whichever scheduler saw it first.
        sa.Column("fired_for", UtcDateTime(), nullable=True),
        sa.Column("document", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["schedule_id"], ["fleet_schedules.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("schedule_id", "fired_for", name="uq_fleet_jobs_firing"),
    )
    op.create_index("ix_fleet_jobs_created_at", "fleet_jobs", ["created_at"])
    op.create_table(
        "fleet_rows",
        sa.Column("job_id", sa.String(), nullable=False),
        sa.Column("row_no", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(), nullable=True),
        sa.Column("lease_until", UtcDateTime(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("irreversible_started", sa.String(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", UtcDateTime(), nullable=True),
        sa.Column("finished_at", UtcDateTime(), nullable=True),
        sa.Column("params", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["fleet_jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("job_id", "row_no"),
    )
    op.create_index("ix_fleet_rows_state", "fleet_rows", ["job_id", "state"])


def downgrade() -> None:
    op.drop_index("ix_fleet_rows_state", table_name="fleet_rows")
    op.drop_table("fleet_rows")
    op.drop_index("ix_fleet_jobs_created_at", table_name="fleet_jobs")
    op.drop_table("fleet_jobs")
    op.drop_table("fleet_schedules")
