"""The word index of workflows (SQLite FTS5 with BM25, or PostgreSQL full-text search),
filled from the stored workflows; every workflow is marked for the search index, whose
embedded text changed (name and description only), so the next writer re-indexes it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from desktop_app.adapters.sql.tables import UtcDateTime
from desktop_app.adapters.sql.text_index import create_text_index, write_entries
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.core.views import IndexedWorkflow

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "text_index_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workflow_id", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("domains", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_text_index_entries_workflow_id", "text_index_entries", ["workflow_id"], unique=True
    )
    conn = op.get_bind()
    create_text_index(conn)
    latest = conn.execute(
        sa.text(
            "SELECT w.status, v.document FROM workflows AS w JOIN workflow_versions AS v "
            "ON v.workflow_id = w.id AND v.version = w.latest_version"
        )
    ).all()
    write_entries(
        conn,
        [
            IndexedWorkflow.of(Workflow.model_validate_json(document), WorkflowStatus(status))
            for status, document in latest
        ],
    )
    conn.execute(
        sa.text(
            "INSERT INTO index_pending (kind, item_id, since) "
            "SELECT 'workflow', id, :now FROM workflows WHERE true ON CONFLICT DO NOTHING"
        ).bindparams(sa.bindparam("now", type_=UtcDateTime())),
        {"now": utcnow()},
    )


def downgrade() -> None:
    op.execute("DROP TABLE text_index")
    op.drop_index("ix_text_index_entries_workflow_id", table_name="text_index_entries")
    op.drop_table("text_index_entries")
