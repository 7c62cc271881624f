"""Alembic environment: runs migrations on the connection Procedura hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from desktop_app.adapters.sql.tables import metadata

config = context.config
connection = config.attributes.get("connection")
if not isinstance(connection, Connection):  # pragma: no cover - only via alembic's own CLI
    raise RuntimeError("run migrations through desktop_app.adapters.sql.database.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
