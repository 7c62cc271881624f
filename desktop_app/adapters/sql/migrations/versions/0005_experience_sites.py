"""The site of each remembered repair (the host of its page), indexed: the experience memory is
bounded per site.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _site(document: str) -> str:
    try:
        url = json.loads(document).get("page_url") or ""
        return (urlsplit(url).hostname or "").lower()
    except (ValueError, AttributeError):
        return ""


def upgrade() -> None:
    op.add_column(
        "experiences",
        sa.Column("site", sa.String(), nullable=False, server_default=sa.text("''")),
    )
    op.create_index("ix_experiences_site", "experiences", ["site"])
    connection = op.get_bind()
    rows = connection.execute(sa.text("SELECT id, document FROM experiences")).all()
    for row_id, document in rows:
        site = _site(document)
        if site:
            connection.execute(
                sa.text("UPDATE experiences SET site = :site WHERE id = :id"),
                {"site": site, "id": row_id},
            )


def downgrade() -> None:
    op.drop_index("ix_experiences_site", table_name="experiences")
    with op.batch_alter_table("experiences") as batch:
        batch.drop_column("site")
