"""Indexes for a long run history: the runs by start time (the Runs screen's newest page) and
per workflow by start time with their status and version (the Library's run statistics read
that index alone, not every run record).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_runs_started", "runs", ["started_at"])
    op.create_index(
        "ix_runs_workflow_recent",
        "runs",
        ["workflow_id", "started_at", "status", "workflow_version"],
    )


def downgrade() -> None:
    op.drop_index("ix_runs_workflow_recent", table_name="runs")
    op.drop_index("ix_runs_started", table_name="runs")
