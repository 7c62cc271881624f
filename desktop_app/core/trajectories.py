"""The recordings library: list, show, import, export and delete trajectories."""

from __future__ import annotations

from contextlib import ExitStack
from typing import BinaryIO

from desktop_app.core.documents import TrajectoryReader, dump_document, load_trajectory
from desktop_app.core.errors import ConfirmationRequired, DocumentError
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.ports import TrajectoryImport, TrajectoryStore
from desktop_app.core.recording import RecordingSession, clean_events, recover_abandoned
from desktop_app.core.references import resolve_reference
from desktop_app.core.views import TrajectorySummary

__all__ = ["TrajectoryLibrary"]


class TrajectoryLibrary:
    """Every operation on recorded demonstrations the app and the command line offer."""

    def __init__(self, store: TrajectoryStore) -> None:
        self._store = store

    def resolve(self, ref: str) -> str:
        """The id of the trajectory *ref* names (its id or a unique prefix of it)."""
        return resolve_reference(ref, self._store.find(ref), noun="trajectory")

    def get(self, ref: str) -> Trajectory:
        """A trajectory with all its events.

        A recording still under way (or abandoned and not yet recovered) has no clean events
        yet; its events are then derived from the raw stream so far.
        """
        trajectory = self._store.get(self.resolve(ref))
        if trajectory.incomplete and not trajectory.events:
            raw = self._store.raw_events(trajectory.id)
            trajectory = trajectory.model_copy(update={"events": tuple(clean_events(raw))})
        return trajectory

    def raw_events(self, ref: str) -> list[Event]:
        """The raw stream a recorder captured, before noise was dropped."""
        return self._store.raw_events(self.resolve(ref))

    def start_recording(self, header: Trajectory) -> RecordingSession:
        """A new recording session, its trajectory created (marked incomplete) at once."""
        session = RecordingSession(self._store, header)
        session.start()
        return session

    def recover_abandoned(self) -> list[str]:
        """Keep the events of recordings whose recorder died; see :func:`recover_abandoned`."""
        return recover_abandoned(self._store)

    def list(self) -> list[TrajectorySummary]:
        """Every trajectory, newest first."""
        return self._store.summaries()

    def count(self) -> int:
        """How many trajectories are stored."""
        return self._store.count()

    def export_json(self, ref: str) -> str:
        """A trajectory as a document (JSON text)."""
        return dump_document(self.get(ref))

    def import_json(self, data: bytes | str, *, source: str = "") -> Trajectory:
        """Validate a trajectory document and store it; nothing is written if it is invalid.

        Raises:
            DocumentError: the document is invalid or a trajectory with its id exists already
                (trajectories are never overwritten).
        """
        trajectory = load_trajectory(data, source=source)
        self._check_new(trajectory.id, source)
        self._store.add(trajectory)
        return trajectory

    def import_file(self, file: BinaryIO, *, source: str = "") -> TrajectorySummary:
        """:meth:`import_json` for a file, read and stored an event at a time: however large
        the document, it is never held in memory whole (see
        :class:`~desktop_app.core.documents.TrajectoryReader`). *file* is binary and seekable.

        The events are written as they are read, in one transaction that is committed only once
        the whole document has proved valid; nothing is written if it is invalid.

        Raises:
            DocumentError: as :meth:`import_json`.
        """
        reader = TrajectoryReader(file, source=source)
        with ExitStack() as transaction:
            writer: TrajectoryImport | None = None
            for number, events in enumerate(reader.events()):
                if (
                    number == 0
                    and reader.first_id is not None
                    and not self._stored(reader.first_id)
                ):
                    writer = transaction.enter_context(self._store.importing(reader.first_id))
                if writer is not None:
                    writer.append(events)
            header, count = reader.result()
            self._check_new(header.id, source)
            if writer is not None and header.id == reader.first_id and not reader.void:
                writer.finish(header)
                return self._summary(header.id)
        # The events were not written as they were read (the id came after them, or a second
        # one replaced it): read them again, the trajectory's header known now.
        with self._store.importing(header.id) as writer:
            if count:
                file.seek(0)
                again = TrajectoryReader(file, source=source, stream=not reader.void)
                for events in again.events():
                    writer.append(events)
            writer.finish(header)
        return self._summary(header.id)

    def _stored(self, trajectory_id: str) -> bool:
        return any(found == trajectory_id for found, _ in self._store.find(trajectory_id))

    def _check_new(self, trajectory_id: str, source: str) -> None:
        if self._stored(trajectory_id):
            raise DocumentError(
                f"a trajectory with id {trajectory_id} is already stored; trajectories are never "
                "overwritten",
                path="id",
                source=source,
            )

    def _summary(self, trajectory_id: str) -> TrajectorySummary:
        return next(s for s in self._store.summaries() if s.id == trajectory_id)

    def delete(self, ref: str, *, confirmed: bool) -> TrajectorySummary:
        """Delete a trajectory. Needs *confirmed*."""
        trajectory_id = self.resolve(ref)
        summary = next(s for s in self._store.summaries() if s.id == trajectory_id)
        if not confirmed:
            raise ConfirmationRequired(
                f"deleting the recording {summary.intent or trajectory_id!r} removes its "
                f"{summary.event_count} events for good; confirm to go ahead (--yes)"
            )
        self._store.delete(trajectory_id)
        return summary
