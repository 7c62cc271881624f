"""Workflows become schema version 2 (blocks: if, for each, repeat until, try; conditions; list
parameters). A version 1 workflow is a version 2 one as it is: each stored version's document
gets ``schema_version`` 2 and its content hash is computed again; nothing else changes.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from desktop_app.adapters.sql.workflow_store import content_hash
from desktop_app.core.models.common import WORKFLOW_SCHEMA_VERSION
from desktop_app.core.models.workflow import Workflow

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.text("SELECT workflow_id, version, document FROM workflow_versions")
    ).all()
    for workflow_id, version, document in rows:
        raw = json.loads(document)
        if raw.get("schema_version") == WORKFLOW_SCHEMA_VERSION:
            continue
        raw["schema_version"] = WORKFLOW_SCHEMA_VERSION
        workflow = Workflow.model_validate(raw)
        conn.execute(
            sa.text(
                "UPDATE workflow_versions SET document = :doc, content_hash = :h "
                "WHERE workflow_id = :w AND version = :v"
            ),
            {"doc": workflow.model_dump_json(), "h": content_hash(workflow), "w": workflow_id,
             "v": version},
        )  # fmt: skip


def downgrade() -> None:
    raise NotImplementedError("a version 2 workflow may hold blocks version 1 cannot")
