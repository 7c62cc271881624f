"""Alembic migrations of the SQLite schema, applied by ``database.migrate``."""
