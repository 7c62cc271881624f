"""The Fleet screen: the team's runner fleet, its newest jobs and the rows of the one selected,
and (a second tab, :mod:`desktop_app.ui.fleet_schedules`) the team's schedules.

Shown with a fleet only (team mode with a queue); otherwise it says how to set one up. While the
screen is visible it reads the jobs again every few seconds, off the GUI thread. A job's rows
say where each stands (state, worker, tries, error); **Cancel** stops a job (queued rows now,
running rows before their next step), **Resume** queues again its cancelled rows and the failed
ones that began no irreversible step. Rows that need attention (their worker stopped after
beginning an irreversible step) are highlighted: a person checks the application first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Final

from PySide6.QtCore import (
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QFont, QHideEvent, QPainter, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.fleet import ROW_STATE_LABELS, FleetJob, FleetRow, RowState
from desktop_app.ui import theme
from desktop_app.ui.fleet_schedules import SchedulesPanel
from desktop_app.ui.host import Host
from desktop_app.ui.run_models import format_when
from desktop_app.ui.table_model import RowsModel
from desktop_app.ui.tasks import describe_error

__all__ = [
    "NO_FLEET",
    "REFRESH_MS",
    "FleetJobsModel",
    "FleetPage",
    "FleetRowsModel",
    "JobColumn",
    "RowColumn",
    "ask_to_cancel",
    "job_progress",
]

#: How often the screen reads the jobs again while it is visible.
REFRESH_MS: Final = 3000

#: How many of the newest jobs the screen lists.
JOB_LIMIT: Final = 50

_Index = QModelIndex | QPersistentModelIndex

#: The data role that holds a row's job (or fleet row) itself.
ITEM_ROLE: Final = Qt.ItemDataRole.UserRole + 1

_KINDS: Final = {"batch": "CSV batch", "intent": "by intent", "schedule": "schedule"}

#: The order states are counted in, and their tones.
_TONES: Final[dict[RowState, theme.Tone]] = {
    RowState.NEEDS_ATTENTION: "warning",
    RowState.RUNNING: "info",
    RowState.SUCCEEDED: "ok",
    RowState.UNVERIFIED: "unverified",
    RowState.FAILED: "error",
    RowState.CANCELLED: "muted",
}

NO_FLEET: Final = (
    "There is no runner fleet here. A fleet runs approved workflows for the whole team on "
    "machines of its own (procedura worker), from a queue on a Redis server. To use one, join "
    "your team on the Settings screen with its queue's address, then restart Procedura; "
    "docs/team.md explains how a team sets one up."
)


def job_progress(job: FleetJob) -> tuple[int, int, str]:
    """How many rows ended, out of how many, and the counts by state in words
    (``2 needs attention, 1 running, 7 succeeded``)."""
    return job.ended, job.total, job.states_in_words()


def ask_to_cancel(
    job: FleetJob, parent: QWidget | None, then: Callable[[str], object]
) -> QMessageBox:
    """Ask whether to cancel *job* (the Fleet screen and the tray ask alike): the box, open
    and deleted when it closes; *then* gets the job's id when the answer is Yes."""
    done, total = job.ended, job.total
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Cancel the job",
        f"Cancel the job of {job.name!r} ({total - done} of {total} rows not ended)? "
        "Queued rows are cancelled now; running rows stop before their next step. "
        "Resume queues them again.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("fleet-cancel-confirm")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def finished(result: int, job_id: str = job.id) -> None:
        if result == QMessageBox.StandardButton.Yes:
            then(job_id)

    box.finished.connect(finished)
    box.open()
    return box


class JobColumn:
    """The jobs table's columns."""

    WORKFLOW = 0
    KIND = 1
    BY = 2
    SUBMITTED = 3
    PROGRESS = 4
    STATES = 5


class FleetJobsModel(RowsModel[FleetJob]):
    """The newest jobs: workflow, kind, who, when, progress and counts by state."""

    HEADERS = ("Workflow", "Kind", "By", "Submitted", "Progress", "Rows")

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        job = self.row_at(index)
        if job is None:
            return None
        column = index.column()
        attention = bool(job.counts.get(RowState.NEEDS_ATTENTION))
        if role == ITEM_ROLE:
            return job
        if role == Qt.ItemDataRole.DisplayRole:
            done, total, states = job_progress(job)
            return {
                JobColumn.WORKFLOW: f"{job.name or job.workflow_id} v{job.version}",
                JobColumn.KIND: _KINDS.get(job.kind.value, job.kind.value),
                JobColumn.BY: job.created_by,
                JobColumn.SUBMITTED: format_when(job.created_at),
                JobColumn.PROGRESS: f"{done}/{total}",
                JobColumn.STATES: states
                + (" (cancel asked)" if job.cancel_requested and not job.finished else ""),
            }.get(column)
        if role == Qt.ItemDataRole.ToolTipRole:
            done, total, states = job_progress(job)
            tip = f"{job.name} v{job.version}, job {job.id}: {done} of {total} rows ended; {states}"
            if attention:
                tip += (
                    "\n\nRows need attention: their worker stopped after beginning an "
                    "irreversible step. Check the application before running them by hand."
                )
            return tip
        if role == Qt.ItemDataRole.BackgroundRole and attention:
            return QBrush(theme.color("warning_bg"))
        if role == Qt.ItemDataRole.ForegroundRole and attention:
            return QBrush(theme.color("warning_fg"))
        if role == Qt.ItemDataRole.FontRole and attention and column == JobColumn.STATES:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def find(self, job_id: str) -> int | None:
        """The row of job *job_id*, if listed."""
        for number, job in enumerate(self._rows):
            if job.id == job_id:
                return number
        return None


class RowColumn:
    """The rows table's columns."""

    ROW = 0
    STATE = 1
    WORKER = 2
    TRIES = 3
    ERROR = 4


class FleetRowsModel(RowsModel[FleetRow]):
    """A job's rows: number, state, worker, tries, error."""

    HEADERS = ("Row", "State", "Worker", "Tries", "Error")

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row_at(index)
        if row is None:
            return None
        column = index.column()
        if role == ITEM_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                RowColumn.ROW: str(row.row),
                RowColumn.STATE: ROW_STATE_LABELS[row.state],
                RowColumn.WORKER: row.worker or "",
                RowColumn.TRIES: str(row.attempt),
                RowColumn.ERROR: " ".join((row.error or "").split()),
            }.get(column)
        if role == Qt.ItemDataRole.ToolTipRole and column == RowColumn.ERROR and row.error:
            return row.error
        if role == Qt.ItemDataRole.ForegroundRole and column == RowColumn.STATE:
            tone = _TONES.get(row.state)
            return QBrush(theme.color(tone)) if tone is not None else None
        attention = row.state is RowState.NEEDS_ATTENTION
        if role == Qt.ItemDataRole.BackgroundRole and attention:
            return QBrush(theme.color("warning_bg"))
        if role == Qt.ItemDataRole.FontRole and attention:
            font = QFont()
            font.setBold(True)
            return font
        return None


class _ProgressDelegate(QStyledItemDelegate):
    """Draws a job's progress as a bar: rows ended out of all its rows."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        job = index.data(ITEM_ROLE)
        if not isinstance(job, FleetJob):
            super().paint(painter, option, index)
            return
        done, total, _ = job_progress(job)
        bar = QStyleOptionProgressBar()
        rect: QRect = option.rect
        bar.rect = rect.adjusted(2, 3, -2, -3)
        bar.minimum = 0
        bar.maximum = max(total, 1)
        bar.progress = done
        bar.text = f"{done}/{total}"
        bar.textVisible = True
        bar.state = option.state | QStyle.StateFlag.State_Horizontal  # Qt 6: no orientation
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(rect, option.palette.highlight())
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)


class FleetPage(QWidget):
    """The fleet's newest jobs and the rows of the one selected, with Cancel and Resume.

    Signals:
        jobs_loaded(): the jobs (and the selected job's rows) were read again and shown.
    """

    jobs_loaded = Signal()

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.setObjectName("fleet-page")
        self._host = host
        self._loading = False
        self._selected: str | None = None

        self.placeholder = QLabel(NO_FLEET)
        self.placeholder.setObjectName("fleet-unavailable")
        self.placeholder.setAccessibleName("No runner fleet")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setMargin(40)
        self.placeholder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        title = QLabel("Fleet")
        theme.set_role(title, "heading")
        self.summary = QLabel()
        self.summary.setObjectName("fleet-summary")
        self.summary.setAccessibleName("Fleet summary")
        self.summary.setWordWrap(True)
        theme.set_tone(self.summary, "muted")

        self.jobs_model = FleetJobsModel(self)
        self.jobs = QTableView()
        self.jobs.setObjectName("fleet-jobs")
        self.jobs.setAccessibleName("Fleet jobs")
        self.jobs.setModel(self.jobs_model)
        self.jobs.setItemDelegateForColumn(JobColumn.PROGRESS, _ProgressDelegate(self.jobs))
        self.jobs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.jobs.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.jobs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.jobs.setWordWrap(False)
        self.jobs.verticalHeader().hide()
        head = self.jobs.horizontalHeader()
        head.resizeSection(JobColumn.WORKFLOW, 260)
        head.resizeSection(JobColumn.KIND, 100)
        head.resizeSection(JobColumn.BY, 100)
        head.resizeSection(JobColumn.SUBMITTED, 130)
        head.resizeSection(JobColumn.PROGRESS, 130)
        head.setStretchLastSection(True)
        self.jobs.selectionModel().selectionChanged.connect(self._on_jobs_selection_changed)

        self.rows_title = QLabel("Select a job to see its rows.")
        self.rows_title.setObjectName("fleet-rows-title")
        self.rows_model = FleetRowsModel(self)
        self.rows = QTableView()
        self.rows.setObjectName("fleet-rows")
        self.rows.setAccessibleName("Rows of the selected job")
        self.rows.setModel(self.rows_model)
        self.rows.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.rows.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.rows.setAlternatingRowColors(True)
        self.rows.setWordWrap(False)
        self.rows.verticalHeader().hide()
        rows_head = self.rows.horizontalHeader()
        rows_head.setSectionResizeMode(RowColumn.ROW, QHeaderView.ResizeMode.ResizeToContents)
        rows_head.resizeSection(RowColumn.STATE, 130)
        rows_head.resizeSection(RowColumn.WORKER, 200)
        rows_head.resizeSection(RowColumn.TRIES, 50)
        rows_head.setStretchLastSection(True)

        self.cancel_button = QPushButton("&Cancel job…")
        self.cancel_button.setObjectName("fleet-cancel")
        self.cancel_button.setToolTip(
            "Stop the job: queued rows now, running rows before their next step"
        )
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.resume_button = QPushButton("&Resume")
        self.resume_button.setObjectName("fleet-resume")
        self.resume_button.setToolTip(
            "Queue again the cancelled rows and the failed ones that began no irreversible step "
            "(rows that need attention stay as they are: a person decides)"
        )
        self.resume_button.clicked.connect(self._on_resume_button_clicked)
        self.message = QLabel()
        self.message.setObjectName("fleet-message")
        self.message.setAccessibleName("Fleet status")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.resume_button)
        buttons.addWidget(self.message, 1)

        lower = QWidget()
        lower_column = QVBoxLayout(lower)
        lower_column.setContentsMargins(0, 0, 0, 0)
        lower_column.addWidget(self.rows_title)
        lower_column.addLayout(buttons)
        lower_column.addWidget(self.rows, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.jobs)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)

        # Jobs and schedules are two tabs, not two sections of one column: the jobs already
        # split the height with their rows, and a schedule is set up once and looked at
        # seldom, while jobs are watched. The summary above the tabs stays the jobs'.
        self.schedules = SchedulesPanel(host)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("fleet-tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(splitter, "&Jobs")
        self.tabs.addTab(self.schedules, "&Schedules")
        self.tabs.setTabToolTip(0, "The fleet's newest jobs and their rows")
        self.tabs.setTabToolTip(1, "Approved workflows the fleet runs at set times")

        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(16, 12, 16, 12)
        column.addWidget(title)
        column.addWidget(self.summary)
        column.addWidget(self.tabs, 1)

        self._stack = QStackedWidget()
        self._stack.addWidget(self.placeholder)
        self._stack.addWidget(content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._stack)

        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._update_buttons()

    # ── what it shows ───────────────────────────────────────────────────────────────────────

    @property
    def enabled(self) -> bool:
        """Whether this library has a fleet to show."""
        return self._host.backend.fleet_enabled()

    def selected_job(self) -> FleetJob | None:
        """The job selected, as last read."""
        if self._selected is None:
            return None
        number = self.jobs_model.find(self._selected)
        return None if number is None else self.jobs_model.row_at(number)

    def show_schedules(self) -> SchedulesPanel:
        """Switch to the Schedules tab (they load in the background); the tab."""
        self.tabs.setCurrentWidget(self.schedules)
        return self.schedules

    def select_job(self, job_id: str) -> bool:
        """Select job *job_id* if it is listed (its rows load in the background)."""
        number = self.jobs_model.find(job_id)
        if number is None:
            return False
        self.jobs.selectRow(number)
        return True

    async def reload(self) -> None:
        """Read the newest jobs and the selected job's rows (off the GUI thread), and show them."""
        if not self.enabled:
            self._stack.setCurrentIndex(0)
            return
        self._stack.setCurrentIndex(1)
        if self._loading:
            return
        self._loading = True
        backend = self._host.backend
        selected = self._selected
        try:

            def load() -> tuple[list[FleetJob], list[FleetRow] | None]:
                jobs = backend.fleet_jobs(JOB_LIMIT)
                listed = selected is not None and any(j.id == selected for j in jobs)
                return jobs, backend.fleet_rows(selected) if listed and selected else None

            jobs, rows = await self._host.tasks.call(load)
        finally:
            self._loading = False
        self._show(jobs, rows, selected)

    def _show(self, jobs: list[FleetJob], rows: list[FleetRow] | None, rows_of: str | None) -> None:
        keep = self._selected
        number: int | None = None
        blocker = self.jobs.selectionModel().blockSignals(True)
        try:
            self.jobs_model.set_rows(jobs)
            number = self.jobs_model.find(keep) if keep is not None else None
            if number is not None:
                self.jobs.selectRow(number)
        finally:
            self.jobs.selectionModel().blockSignals(blocker)
        if number is None:
            self._selected = None
            self.rows_model.set_rows([])
        elif rows is not None and rows_of == keep:
            self.rows_model.set_rows(rows)
        running = sum(j.counts.get(RowState.RUNNING, 0) for j in jobs)
        attention = sum(j.counts.get(RowState.NEEDS_ATTENTION, 0) for j in jobs)
        queued = sum(j.counts.get(RowState.QUEUED, 0) for j in jobs)
        need = "needs" if attention == 1 else "need"
        self.summary.setText(
            f"Rows of the newest jobs: {running} running, {queued} queued, {attention} {need} "
            f"attention. Refreshed every {REFRESH_MS // 1000} seconds while this screen shows."
            if jobs
            else "No jobs yet: procedura fleet submit WORKFLOW --csv FILE hands one to the fleet."
        )
        self._show_rows_title()
        self._update_buttons()
        self.jobs_loaded.emit()

    def _show_rows_title(self) -> None:
        job = self.selected_job()
        if job is None:
            self.rows_title.setText("Select a job to see its rows.")
            return
        done, total, states = job_progress(job)
        self.rows_title.setText(
            f"{job.name} v{job.version} (job {job.id[:8]}, by {job.created_by}): "
            f"{done} of {total} rows ended; {states}"
        )

    def _update_buttons(self) -> None:
        job = self.selected_job()
        self.cancel_button.setEnabled(job is not None and job.cancellable)
        self.resume_button.setEnabled(job is not None and job.resumable)

    def _say(self, text: str, ok: bool | None) -> None:
        self.message.setText(text)
        theme.set_tone(self.message, "muted" if ok is None else "ok" if ok else "error")

    # ── refreshing while visible ────────────────────────────────────────────────────────────

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.enabled:
            self._timer.start()
            self._refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def _on_timer_timeout(self) -> None:
        self._refresh()

    def _refresh(self) -> None:
        if self._loading:
            return
        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(
                self.reload(), label="Reading the fleet's jobs…", on_error=self._on_refresh_failed
            )

    def _on_refresh_failed(self, exc: BaseException) -> bool:
        """A refresh that failed says why in one line (the next one tries again); a bug is
        reported as well."""
        self._say(describe_error(exc), False)
        return isinstance(exc, ProceduraError)

    # ── selection ───────────────────────────────────────────────────────────────────────────

    def _on_jobs_selection_changed(self, _new: QItemSelection, _old: QItemSelection) -> None:
        index = self.jobs.selectionModel().currentIndex()
        rows = self.jobs.selectionModel().selectedRows()
        job = self.jobs_model.row_at(rows[0] if rows else index)
        self._selected = job.id if job is not None else None
        self.rows_model.set_rows([])
        self._show_rows_title()
        self._update_buttons()
        if job is None:
            return
        wanted = job.id
        backend = self._host.backend

        async def load() -> list[FleetRow]:
            return await self._host.tasks.call(backend.fleet_rows, wanted)

        def done(rows: list[FleetRow]) -> None:
            if self._selected == wanted:
                self.rows_model.set_rows(rows)
                self.jobs_loaded.emit()

        self._host.tasks.start(
            load(), label="Reading the job's rows…", on_done=done, on_error=self._on_failed
        )

    # ── cancel and resume ───────────────────────────────────────────────────────────────────

    def _on_cancel_button_clicked(self) -> None:
        job = self.selected_job()
        if job is None:
            return
        ask_to_cancel(job, self, self._cancel_job)

    def _cancel_job(self, job_id: str) -> None:
        backend = self._host.backend

        def done(cancelled: int) -> None:
            self._say(
                f"{cancelled} queued rows cancelled; running rows stop after their step.", True
            )
            self._host.show_status(f"Fleet job {job_id[:8]} cancelled")
            self._refresh()

        self._host.tasks.run(
            lambda: backend.cancel_fleet_job(job_id),
            label="Cancelling the job…",
            on_done=done,
            on_error=self._on_failed,
        )

    def _on_resume_button_clicked(self) -> None:
        job = self.selected_job()
        if job is None:
            return
        job_id = job.id
        backend = self._host.backend

        def done(rows: list[int]) -> None:
            self._say(f"{len(rows)} rows queued again.", True)
            self._host.show_status(f"Fleet job {job_id[:8]} resumed")
            self._refresh()

        self._host.tasks.run(
            lambda: backend.resume_fleet_job(job_id),
            label="Resuming the job…",
            on_done=done,
            on_error=self._on_failed,
        )

    def _on_failed(self, exc: BaseException) -> bool:
        self._say(describe_error(exc), False)
        return isinstance(exc, ProceduraError)
