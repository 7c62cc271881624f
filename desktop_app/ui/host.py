"""What every screen gets from the main window: the backend, the job runner, events, navigation."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from desktop_app.ops.changes import MANY, Changes
from desktop_app.ui.backend import Backend
from desktop_app.ui.tasks import TaskRunner

__all__ = ["AppEvents", "Host"]


class AppEvents(QObject):
    """What changed in the stores, so each screen refreshes only what it shows.

    Signals carry the id of what changed ("" when many things did). Screens do not emit them:
    they :meth:`announce` the :class:`~desktop_app.ops.changes.Changes` an operation returned.
    """

    workflows_changed = Signal(str)
    recordings_changed = Signal(str)
    runs_changed = Signal(str)
    settings_changed = Signal()
    #: A window began a long job the tray follows (a run or a batch window; its job says when
    #: it ended).
    job_started = Signal(QObject)

    def announce(self, changes: Changes) -> None:
        """Tell every screen what an operation changed (one signal per id; settings first,
        since what the others show may depend on them)."""
        if changes.settings:
            self.settings_changed.emit()
        for signal, ids in (
            (self.workflows_changed, changes.workflows),
            (self.recordings_changed, changes.recordings),
            (self.runs_changed, changes.runs),
        ):
            # "Any" covers the rest: one refresh, not one per id.
            for changed in (MANY,) if MANY in ids else sorted(ids):
                signal.emit(changed)


class Host(Protocol):
    """The main window as the screens see it."""

    @property
    def backend(self) -> Backend:
        """The services."""
        ...

    @property
    def tasks(self) -> TaskRunner:
        """The owner of every background job."""
        ...

    @property
    def events(self) -> AppEvents:
        """Change notifications."""
        ...

    @property
    def window(self) -> QWidget:
        """The main window (parent for dialogs)."""
        ...

    def open_editor(self, workflow_id: str, version: int | None = None) -> QWidget | None:
        """Open a workflow (the latest version unless *version*) in the step editor, in front
        of the other windows; the editor window."""
        ...

    def open_run(
        self, workflow_id: str, version: int | None = None, *, verify: bool = False
    ) -> None:
        """Ask for a run's parameters, then run it with the run view showing (*verify*: as a
        verification, stopping before the first irreversible step)."""
        ...

    def show_run(self, run_id: str) -> None:
        """Show a run record on the Runs screen."""
        ...

    def show_review(self, workflow_id: str, version: int | None = None) -> None:
        """Show a version on the Review screen."""
        ...

    def start_recording(self) -> None:
        """Open the record dialog."""
        ...

    def show_fleet(self) -> None:
        """Show the team's runner fleet (the Fleet screen), in front."""
        ...

    def adopt(self, window: QWidget) -> None:
        """Keep a top-level window (editor, run view) alive until it closes, and close it with
        the app."""
        ...

    def show_status(self, message: str) -> None:
        """A short message in the status bar."""
        ...
