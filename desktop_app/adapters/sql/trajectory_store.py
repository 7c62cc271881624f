"""Recorded demonstrations in SQLite: a header row plus one row per event, appended live."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, func, insert
from sqlmodel import Session, col, delete, select

from desktop_app.adapters.sql.database import for_writing
from desktop_app.adapters.sql.tables import (
    TrajectoryEventRow,
    TrajectoryRawEventRow,
    TrajectoryRow,
)
from desktop_app.core.errors import NotFoundError, StoreError
from desktop_app.core.models.trajectory import Event, Trajectory, TrajectoryKind
from desktop_app.core.redaction import scrub_stated_secrets
from desktop_app.core.views import TrajectorySummary

__all__ = ["SqlTrajectoryStore"]


class SqlTrajectoryStore:
    """The trajectory store over a migrated SQLite engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = for_writing(engine)

    def add(self, trajectory: Trajectory) -> None:
        with Session(self._writer) as session:
            _insert_header(session, trajectory)
            for seq, event in enumerate(trajectory.events):
                session.add(_event_row(trajectory.id, seq, event))
            session.commit()

    @contextmanager
    def importing(self, trajectory_id: str) -> Iterator[SqlTrajectoryImport]:
        with Session(self._engine) as session:
            # A stand-in header row for the events to refer to, replaced by finish.
            _insert_header(session, Trajectory(id=trajectory_id))
            yield SqlTrajectoryImport(session, trajectory_id)
        # Leaving the session without its commit (finish) rolls everything back.

    def begin(self, trajectory: Trajectory) -> None:
        with Session(self._writer) as session:
            _insert_header(session, trajectory.model_copy(update={"events": ()}))
            session.commit()

    def append_events(self, trajectory_id: str, events: Sequence[Event]) -> None:
        with Session(self._writer) as session:
            row = self._row(session, trajectory_id)
            for event in events:
                session.add(_event_row(trajectory_id, row.event_count, event))
                row.event_count += 1
            session.add(row)
            session.commit()

    def append_raw_events(self, trajectory_id: str, events: Sequence[Event]) -> None:
        with Session(self._writer) as session:
            row = self._row(session, trajectory_id)
            for event in events:
                session.add(
                    TrajectoryRawEventRow(
                        trajectory_id=trajectory_id,
                        seq=row.raw_count,
                        action=event.action,
                        at=event.at,
                        document=event.model_dump_json(),
                    )
                )
                row.raw_count += 1
            session.add(row)
            session.commit()

    def raw_events(self, trajectory_id: str) -> list[Event]:
        with Session(self._engine) as session:
            self._row(session, trajectory_id)
            docs = session.exec(
                select(TrajectoryRawEventRow.document)
                .where(col(TrajectoryRawEventRow.trajectory_id) == trajectory_id)
                .order_by(col(TrajectoryRawEventRow.seq))
            ).all()
        return [Event.model_validate_json(doc) for doc in docs]

    def replace_raw_events(self, trajectory_id: str, events: Mapping[int, Event]) -> None:
        with Session(self._writer) as session:
            for seq, event in events.items():
                row = session.get(TrajectoryRawEventRow, (trajectory_id, seq))
                if row is None:
                    raise NotFoundError(f"trajectory {trajectory_id} has no raw event {seq}")
                row.document = event.model_dump_json()
                session.add(row)
            session.commit()

    def finish(self, trajectory: Trajectory) -> None:
        """Write the header and replace the (clean) events with *trajectory*'s, in one go."""
        with Session(self._writer) as session:
            row = self._row(session, trajectory.id)
            header = _header_row(trajectory)
            row.intent = header.intent
            row.ended_at = header.ended_at
            row.incomplete = trajectory.incomplete
            row.header = header.header
            row.event_count = len(trajectory.events)
            session.add(row)
            session.exec(
                delete(TrajectoryEventRow).where(
                    col(TrajectoryEventRow.trajectory_id) == trajectory.id
                )
            )
            for seq, event in enumerate(trajectory.events):
                session.add(_event_row(trajectory.id, seq, event))
            session.commit()

    def get(self, trajectory_id: str) -> Trajectory:
        with Session(self._engine) as session:
            row = self._row(session, trajectory_id)
            events = session.exec(
                select(TrajectoryEventRow.document)
                .where(col(TrajectoryEventRow.trajectory_id) == trajectory_id)
                .order_by(col(TrajectoryEventRow.seq))
            ).all()
        header = Trajectory.model_validate_json(row.header)
        return header.model_copy(
            update={"events": tuple(Event.model_validate_json(doc) for doc in events)}
        )

    def summaries(self) -> list[TrajectorySummary]:
        with Session(self._engine) as session:
            rows = session.exec(
                select(TrajectoryRow).order_by(col(TrajectoryRow.started_at).desc())
            ).all()
            return [
                TrajectorySummary(
                    id=r.id,
                    intent=r.intent,
                    kind=TrajectoryKind(r.kind),
                    start=r.start,
                    started_at=r.started_at,
                    ended_at=r.ended_at,
                    event_count=r.event_count,
                    raw_event_count=r.raw_count,
                    incomplete=r.incomplete,
                )
                for r in rows
            ]

    def find(self, ref: str) -> list[tuple[str, str]]:
        with Session(self._engine) as session:
            exact = session.get(TrajectoryRow, ref)
            if exact is not None:
                return [(exact.id, exact.intent)]
            if len(ref) < 4:
                return []
            rows = session.exec(
                select(TrajectoryRow).where(col(TrajectoryRow.id).startswith(ref, autoescape=True))
            ).all()
            return [(r.id, r.intent) for r in rows]

    def delete(self, trajectory_id: str) -> None:
        with Session(self._writer) as session:
            self._row(session, trajectory_id)
            session.exec(delete(TrajectoryRow).where(col(TrajectoryRow.id) == trajectory_id))
            session.commit()

    def count(self) -> int:
        with Session(self._writer) as session:
            return session.exec(select(func.count()).select_from(TrajectoryRow)).one()

    def _row(self, session: Session, trajectory_id: str) -> TrajectoryRow:
        row = session.get(TrajectoryRow, trajectory_id)
        if row is None:
            raise NotFoundError(f"no trajectory with id {trajectory_id}")
        return row


class SqlTrajectoryImport:
    """A trajectory being inserted in one transaction, its events a batch at a time."""

    def __init__(self, session: Session, trajectory_id: str) -> None:
        self._session = session
        self._id = trajectory_id
        self._count = 0

    def append(self, events: Sequence[Event]) -> None:
        if not events:
            return
        # Rows as values, not ORM objects: the session keeps nothing of them until the commit.
        rows = [_event_values(self._id, self._count + i, event) for i, event in enumerate(events)]
        self._session.exec(insert(TrajectoryEventRow), params=rows)
        self._count += len(rows)

    def finish(self, trajectory: Trajectory) -> None:
        if trajectory.id != self._id:
            raise ValueError(f"importing trajectory {self._id}, not {trajectory.id}")
        row = self._session.get(TrajectoryRow, self._id)
        assert row is not None
        header = _header_row(trajectory)
        for field in ("intent", "kind", "start", "started_at", "ended_at", "incomplete", "header"):
            setattr(row, field, getattr(header, field))
        row.event_count = self._count
        self._session.add(row)
        self._session.commit()


def _header_row(trajectory: Trajectory) -> TrajectoryRow:
    # A secret stated in the intent ("… with password hunter2") is never stored.
    trajectory = trajectory.model_copy(update={"intent": scrub_stated_secrets(trajectory.intent)})
    return TrajectoryRow(
        id=trajectory.id,
        intent=trajectory.intent,
        kind=trajectory.kind,
        start=trajectory.start_url or trajectory.start_app,
        started_at=trajectory.started_at,
        ended_at=trajectory.ended_at,
        event_count=len(trajectory.events),
        incomplete=trajectory.incomplete,
        header=trajectory.model_copy(update={"events": ()}).model_dump_json(),
    )


def _event_row(trajectory_id: str, seq: int, event: Event) -> TrajectoryEventRow:
    return TrajectoryEventRow(**_event_values(trajectory_id, seq, event))


def _event_values(trajectory_id: str, seq: int, event: Event) -> dict[str, Any]:
    return {
        "trajectory_id": trajectory_id,
        "seq": seq,
        "action": event.action,
        "at": event.at,
        "document": event.model_dump_json(),
    }


def _insert_header(session: Session, trajectory: Trajectory) -> None:
    if session.get(TrajectoryRow, trajectory.id) is not None:
        raise StoreError(f"a trajectory with id {trajectory.id} already exists")
    session.add(_header_row(trajectory))
    session.flush()  # rows without ORM relationships: insert the parent before its events
