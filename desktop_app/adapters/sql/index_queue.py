"""What the search index has yet to be told, kept in SQLite beside the changes themselves.

A store marks a workflow or an experience in the same transaction as it changes it; the library
clears the mark once the index has the change. A process killed in between (the index is a
separate process, written after the database commits) leaves the mark, and the next writer
finishes the work (:meth:`~desktop_app.core.library.WorkflowLibrary.repair_index`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine
from sqlmodel import Session, col, delete, select

from desktop_app.adapters.sql.database import for_writing
from desktop_app.adapters.sql.tables import IndexPendingRow
from desktop_app.core.models.common import utcnow
from desktop_app.core.ports import IndexKind

__all__ = ["SqlIndexQueue", "mark_pending"]


def mark_pending(session: Session, kind: IndexKind, item_id: str) -> None:
    """Mark *item_id* for the index, in *session*'s transaction (once: a mark is a mark)."""
    if session.get(IndexPendingRow, (kind, item_id)) is None:
        session.add(IndexPendingRow(kind=kind, item_id=item_id, since=utcnow()))


class SqlIndexQueue:
    """The marks, over a migrated SQLite engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = for_writing(engine)

    def pending(self) -> list[tuple[IndexKind, str]]:
        with Session(self._engine) as session:
            rows = session.exec(select(IndexPendingRow).order_by(col(IndexPendingRow.since)))
            return [(_kind(r.kind), r.item_id) for r in rows]

    def done(self, kind: IndexKind, ids: Sequence[str]) -> None:
        if not ids:
            return
        with Session(self._writer) as session:
            session.exec(
                delete(IndexPendingRow).where(
                    col(IndexPendingRow.kind) == kind, col(IndexPendingRow.item_id).in_(ids)
                )
            )
            session.commit()


def _kind(value: str) -> IndexKind:
    return "experience" if value == "experience" else "workflow"
