"""The tray's Fleet submenu: the fleet's rows running and needing attention, the Fleet screen,
and the newest jobs left to cancel or resume, each with Cancel and Resume."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Final

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMessageBox

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.fleet import FleetJob
from desktop_app.ui.backend import FleetCounts
from desktop_app.ui.fleet_page import ask_to_cancel
from desktop_app.ui.run_models import format_when
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.tray.base import TrayBase, _short
from desktop_app.ui.windows import bring_forward

__all__ = ["FLEET_JOBS", "FLEET_JOBS_READ", "TrayFleet", "fleet_line", "job_title"]

#: How many jobs the Fleet submenu lists at most: the newest unfinished or resumable ones.
FLEET_JOBS: Final = 5

#: How many of the newest jobs it looks through for them (the jobs the line counts the rows of,
#: and the Fleet screen lists).
FLEET_JOBS_READ: Final = 50


def fleet_line(counts: FleetCounts) -> str:
    """The tray's line about the fleet: ``Fleet: 3 running, 1 needs attention``."""
    attention = "needs" if counts.attention == 1 else "need"
    return f"Fleet: {counts.running} running, {counts.attention} {attention} attention"


def job_title(job: FleetJob) -> str:
    """A job's entry in the Fleet submenu: its workflow, the job and its progress in words,
    ``“Create a contact” v1 (job 4f0c1e2a): 2 of 5 rows ended; 1 needs attention, 1 running,
    2 queued, 1 succeeded``."""
    asked = " (cancel asked)" if job.cancel_requested and not job.finished else ""
    return (
        f"“{_short(job.name or job.workflow_id)}” v{job.version} (job {job.id[:8]}): "
        f"{job.ended} of {job.total} rows ended; {job.states_in_words()}{asked}"
    )


@dataclass(slots=True)
class _JobEntry:
    """A job's submenu in the Fleet submenu, and the job as last read."""

    menu: QMenu
    cancel: QAction
    resume: QAction
    job: FleetJob


class TrayFleet(TrayBase):
    """The Fleet submenu (in team mode with a fleet): its line counts the rows, its entries
    open the Fleet screen and cancel or resume the newest jobs, off the GUI thread."""

    fleet_menu: QMenu
    fleet_open_action: QAction
    _fleet_entries: dict[str, _JobEntry]
    _fleet_stale: bool
    _fleet_question: QMessageBox | None

    def _init_fleet(self) -> None:
        """Make the Fleet submenu (the tray adds it to its menu when there is a fleet)."""
        self.fleet_counts = None
        self._fleet_counting = False
        self._fleet_stale = False
        self._fleet_entries = {}
        self._fleet_question = None
        self.fleet_menu = QMenu("Fleet: …", self._host.window)
        self.fleet_menu.setObjectName("tray-fleet-menu")
        self.fleet_menu.setToolTipsVisible(True)
        self.fleet_action.setObjectName("tray-fleet")
        self.fleet_action.setToolTip("The team's runner fleet: its newest jobs, and its screen")
        self.fleet_open_action = QAction("&Open the Fleet screen", self)
        self.fleet_open_action.setObjectName("tray-fleet-open")
        self.fleet_open_action.setToolTip("The fleet's newest jobs and their rows, in the window")
        self.fleet_open_action.triggered.connect(self._on_fleet_open_action_triggered)
        self.fleet_menu.addAction(self.fleet_open_action)

    @property
    def fleet_action(self) -> QAction:
        """The Fleet submenu's entry in the tray's menu: ``Fleet: 3 running, 1 needs
        attention``. (Asked of the submenu each time: PySide lets go of the Python side of
        every action a menu's ``clear()`` removes, this one included.)"""
        return self.fleet_menu.menuAction()

    # ── reading the fleet ───────────────────────────────────────────────────────────────────

    def refresh_fleet(self) -> None:
        """Count the fleet's rows running and needing attention, and read its newest jobs,
        again (off the GUI thread: the counts' query and the jobs'); nothing without a fleet.
        Asked while a read is under way, it reads once more after that one."""
        backend = self._host.backend
        if not backend.fleet_enabled():
            return
        if self._fleet_counting:
            self._fleet_stale = True  # what is being read may be from before a change
            return
        self._fleet_counting = True
        self._fleet_stale = False

        def load() -> tuple[FleetCounts, list[FleetJob]]:
            return backend.fleet_counts(), backend.fleet_jobs(limit=FLEET_JOBS_READ)

        async def count() -> tuple[FleetCounts, list[FleetJob]]:
            try:
                return await self._host.tasks.call(load)
            finally:
                self._fleet_counting = False

        def failed(exc: BaseException) -> bool:
            self.fleet_action.setText("Fleet: the team's database did not answer")
            self.fleet_action.setToolTip(describe_error(exc))
            self._refresh_fleet_if_stale()
            return isinstance(exc, ProceduraError)

        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(
                count(),
                label="Counting the fleet's rows…",
                on_done=self._show_fleet,
                on_error=failed,
            )

    def _refresh_fleet_if_stale(self) -> None:
        if self._fleet_stale:
            self._fleet_stale = False
            self.refresh_fleet()

    def _show_fleet(self, found: tuple[FleetCounts, list[FleetJob]]) -> None:
        counts, jobs = found
        self.fleet_counts = counts
        self.fleet_action.setText(fleet_line(counts))
        self.fleet_action.setToolTip(
            "Rows of the fleet's newest jobs; cancel or resume a job here, or open the Fleet "
            "screen to see its rows"
            + (
                ": rows that need attention wait for a person to check the application"
                if counts.attention
                else ""
            )
        )
        self._show_fleet_jobs([j for j in jobs if j.cancellable or j.resumable][:FLEET_JOBS])
        self.fleet_counted.emit()
        self._refresh_fleet_if_stale()

    # ── the jobs' entries ───────────────────────────────────────────────────────────────────

    def fleet_job_menus(self) -> list[QMenu]:
        """The Fleet submenu's jobs, in menu order (each a submenu: Cancel, Resume)."""
        return [entry.menu for entry in self._fleet_entries.values()]

    def fleet_job_actions(self, job_id: str) -> tuple[QAction, QAction] | None:
        """Cancel and Resume of job *job_id*, if the Fleet submenu lists it."""
        entry = self._fleet_entries.get(job_id)
        return None if entry is None else (entry.cancel, entry.resume)

    def _show_fleet_jobs(self, jobs: list[FleetJob]) -> None:
        """List *jobs*: their submenus are kept while the same jobs are listed (one open stays
        open as a refresh comes), and only their titles and entries change."""
        if [job.id for job in jobs] != list(self._fleet_entries):
            kept = {job.id for job in jobs}
            for job_id, entry in list(self._fleet_entries.items()):
                if job_id not in kept:
                    entry.menu.deleteLater()
            menu = self.fleet_menu
            menu.clear()  # the separator and the "no job" line (the entries are the tray's)
            menu.addAction(self.fleet_open_action)
            menu.addSeparator()
            entries: dict[str, _JobEntry] = {}
            for job in jobs:
                entries[job.id] = self._fleet_entries.get(job.id) or self._new_job_entry(job)
                menu.addMenu(entries[job.id].menu)
            self._fleet_entries = entries
            if not jobs:
                none = menu.addAction("No job to cancel or resume")
                none.setObjectName("tray-fleet-no-jobs")
                none.setEnabled(False)
                none.setToolTip("The fleet's newest jobs have ended, and none can be resumed")
        for job in jobs:
            self._update_job_entry(self._fleet_entries[job.id], job)

    def _new_job_entry(self, job: FleetJob) -> _JobEntry:
        menu = QMenu(self.fleet_menu)
        menu.setObjectName("tray-fleet-job-menu")
        menu.setToolTipsVisible(True)
        menu.menuAction().setObjectName("tray-fleet-job")
        menu.menuAction().setData(job.id)
        cancel = menu.addAction("&Cancel…")
        cancel.setObjectName("tray-fleet-cancel")
        cancel.setData(job.id)
        cancel.setToolTip("Stop the job: queued rows now, running rows before their next step")
        cancel.triggered.connect(lambda _=False, wid=job.id: self.cancel_fleet_job(wid))
        resume = menu.addAction("&Resume")
        resume.setObjectName("tray-fleet-resume")
        resume.setData(job.id)
        resume.setToolTip(
            "Queue again the cancelled rows and the failed ones that began no irreversible step "
            "(rows that need attention stay as they are: a person decides)"
        )
        resume.triggered.connect(lambda _=False, wid=job.id: self.resume_fleet_job(wid))
        return _JobEntry(menu=menu, cancel=cancel, resume=resume, job=job)

    def _update_job_entry(self, entry: _JobEntry, job: FleetJob) -> None:
        entry.job = job
        entry.menu.setTitle(job_title(job).replace("&", "&&"))
        entry.menu.menuAction().setToolTip(
            f"Job {job.id} of {job.name or job.workflow_id} v{job.version}, by "
            f"{job.created_by}, submitted {format_when(job.created_at)}"
        )
        entry.cancel.setEnabled(job.cancellable)
        entry.resume.setEnabled(job.resumable)

    # ── cancel and resume ───────────────────────────────────────────────────────────────────

    def cancel_fleet_job(self, job_id: str) -> QMessageBox | None:
        """Ask first, as the Fleet screen does; on Yes, cancel job *job_id* (off the GUI
        thread), say how it went and read the fleet again. The question (None when the
        submenu does not list the job)."""
        entry = self._fleet_entries.get(job_id)
        if entry is None:
            return None
        # No parent: the main window may be hidden in the tray. Kept here until it closes.
        box = ask_to_cancel(entry.job, None, self._cancel_fleet_job)
        box.finished.connect(self._on_fleet_question_finished)
        self._fleet_question = box
        bring_forward(box)
        return box

    def _on_fleet_question_finished(self, _result: int) -> None:
        self._fleet_question = None

    def _cancel_fleet_job(self, job_id: str) -> None:
        backend = self._host.backend
        name = self._busy_job(job_id)

        def done(cancelled: int) -> None:
            self.notify(
                "Fleet job cancelled",
                f"“{name}”: {cancelled} queued rows cancelled; running rows stop after their "
                "step. Resume queues them again.",
            )
            self.refresh_fleet()

        self._host.tasks.run(
            lambda: backend.cancel_fleet_job(job_id),
            label="Cancelling the job…",
            on_done=done,
            on_error=lambda exc: self._fleet_job_failed("cancel", exc),
        )

    def resume_fleet_job(self, job_id: str) -> None:
        """Queue again job *job_id*'s cancelled rows and the failed ones that began no
        irreversible step (off the GUI thread), say how many and read the fleet again."""
        if job_id not in self._fleet_entries:
            return
        backend = self._host.backend
        name = self._busy_job(job_id)

        def done(rows: list[int]) -> None:
            if rows:
                self.notify("Fleet job resumed", f"“{name}”: {len(rows)} rows queued again.")
            else:
                self.notify(
                    "Nothing to resume",
                    f"“{name}”: no row could be queued again (a failed row that began an "
                    "irreversible step waits for a person: see the Fleet screen).",
                    show=self._host.show_fleet,
                )
            self.refresh_fleet()

        self._host.tasks.run(
            lambda: backend.resume_fleet_job(job_id),
            label="Resuming the job…",
            on_done=done,
            on_error=lambda exc: self._fleet_job_failed("resume", exc),
        )

    def _busy_job(self, job_id: str) -> str:
        """Turn the job's Cancel and Resume off while one runs; the job's name."""
        entry = self._fleet_entries.get(job_id)
        if entry is None:
            return job_id[:8]
        entry.cancel.setEnabled(False)
        entry.resume.setEnabled(False)
        return _short(entry.job.name or entry.job.workflow_id)

    def _fleet_job_failed(self, verb: str, exc: BaseException) -> bool:
        """Say why a cancel or resume failed (a bug is reported as well), and read the fleet
        again: the job's entries show where it stands."""
        self.notify(f"Could not {verb} the fleet job", describe_error(exc), failed=True)
        self.refresh_fleet()
        return isinstance(exc, ProceduraError)

    def _on_fleet_open_action_triggered(self) -> None:
        self._host.show_fleet()
