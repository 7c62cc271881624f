"""The batch window: every row's status as the rows run, Stop, then the counts and results."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QModelIndex, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.batch import (
    BatchPlan,
    BatchSummary,
    PlannedRow,
    ResultsFile,
    RowOutcome,
    RowResult,
    RowStatus,
    previous_successes,
    run_batch,
)
from desktop_app.ops.changes import Origin, run_changes
from desktop_app.ui import theme
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.batch_window.progress import RowsProgressModel, _Progress
from desktop_app.ui.host import Host
from desktop_app.ui.jobs import Job
from desktop_app.ui.person_dialogs import DialogPerson
from desktop_app.ui.screenshot_view import ScreenshotLoader
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.windows import bring_forward, fit_window, may_close_while_running

__all__ = ["BatchWindow"]


class BatchWindow(QMainWindow):
    """A batch as it runs: every row's status, Stop; then the counts and the results file.

    Args:
        host: the main window.
        plan: the checked batch.
        results: where the results go.
        request: the version, secrets and options every row runs with (values come per row).
        parallel: how many rows run at once.

    Signals:
        ended(): the batch finished or was stopped; the summary shows.
    """

    ended = Signal()

    def __init__(
        self,
        host: Host,
        plan: BatchPlan,
        results: ResultsFile,
        request: RunRequest,
        *,
        parallel: int = 1,
    ) -> None:
        super().__init__()
        self.setObjectName("batch-window")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._host = host
        self._plan = plan
        self._results = results
        self._request = request
        self._parallel = parallel
        #: The batch, owned by this window (the tray watches it).
        self.job = Job(host.tasks, self)
        self._latest: tuple[RowResult, ...] = ()
        self._skipped: frozenset[int] = frozenset()
        self._started: dict[int, float] = {}
        self._began = 0.0
        self._remembered = False
        self.summary_result: BatchSummary | None = None
        self.person = (
            DialogPerson(self, pictures=ScreenshotLoader(host).load) if parallel == 1 else None
        )
        workflow = request.version.workflow
        self.setWindowTitle(f"Batch — {workflow.name}")
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(500)
        self._elapsed.timeout.connect(self._on_elapsed_timeout)
        self._build()
        fit_window(self, QSize(1000, 620), remember="batch")

    def _build(self) -> None:
        workflow = self._request.version.workflow
        central = QWidget()
        layout = QVBoxLayout(central)
        header = QHBoxLayout()
        names = QVBoxLayout()
        title = QLabel(workflow.name)
        big = title.font()
        big.setPointSizeF(big.pointSizeF() * 1.3)
        big.setBold(True)
        title.setFont(big)
        names.addWidget(title)
        how = (
            f"{self._parallel} rows at a time, headless"
            if self._parallel > 1
            else ("one row at a time" + (", headless" if self._request.headless else ""))
        )
        where = f" on {self._request.base_url}" if self._request.base_url else ""
        self.subtitle = QLabel(
            f"{len(self._plan.rows)} rows of {Path(self._plan.table.source).name} · {how}{where}"
        )
        self.subtitle.setObjectName("batch-subtitle")
        self.subtitle.setEnabled(False)
        names.addWidget(self.subtitle)
        header.addLayout(names, 1)
        self.stop_button = QPushButton("■ &Stop")
        self.stop_button.setObjectName("batch-stop-button")
        self.stop_button.setToolTip(
            "Stop now (Shift+F5): the rows running are recorded as interrupted, the others stay "
            "pending. Run the file again to go on where it stopped."
        )
        self.stop_button.setShortcut(QKeySequence("Shift+F5"))
        self.stop_button.clicked.connect(self.stop)
        header.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(header)

        row = QHBoxLayout()
        self.status_label = QLabel("Starting…")
        self.status_label.setObjectName("batch-progress-status")
        row.addWidget(self.status_label, 1)
        self.elapsed_label = QLabel()
        self.elapsed_label.setObjectName("batch-elapsed")
        row.addWidget(self.elapsed_label)
        layout.addLayout(row)
        self.notice = QLabel()
        self.notice.setObjectName("batch-notice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        layout.addWidget(self.notice)
        self.progress = QProgressBar()
        self.progress.setObjectName("batch-progress")
        self.progress.setFormat("%v of %m rows")
        self.progress.setRange(0, len(self._plan.rows))
        layout.addWidget(self.progress)

        self.rows_model = RowsProgressModel(self)
        self.rows_model.set_rows(_Progress(r.line, r.shown(400)) for r in self._plan.rows)
        self.rows_view = QTableView()
        self.rows_view.setObjectName("batch-rows")
        self.rows_view.setAccessibleName("Rows")
        self.rows_view.setModel(self.rows_model)
        self.rows_view.verticalHeader().hide()
        self.rows_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.rows_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.rows_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.rows_view.setAlternatingRowColors(True)
        self.rows_view.setWordWrap(False)
        head = self.rows_view.horizontalHeader()
        head.setSectionResizeMode(RowsProgressModel.LINE, QHeaderView.ResizeMode.ResizeToContents)
        head.resizeSection(RowsProgressModel.VALUES, 330)
        head.resizeSection(RowsProgressModel.STATUS, 140)
        head.resizeSection(RowsProgressModel.RUN, 80)
        head.resizeSection(RowsProgressModel.TIME, 60)
        head.setStretchLastSection(True)
        self.rows_view.verticalHeader().setDefaultSectionSize(
            self.rows_view.fontMetrics().height() + 8
        )
        self.rows_view.doubleClicked.connect(self._on_rows_view_double_clicked)
        layout.addWidget(self.rows_view, 1)

        self.summary = QFrame()
        self.summary.setObjectName("batch-summary")
        self.summary.setFrameShape(QFrame.Shape.StyledPanel)
        summary_layout = QVBoxLayout(self.summary)
        self.outcome = QLabel()
        self.outcome.setObjectName("batch-outcome")
        bold = self.outcome.font()
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.15)
        self.outcome.setFont(bold)
        summary_layout.addWidget(self.outcome)
        self.results_label = QLabel()
        self.results_label.setObjectName("batch-results-path")
        self.results_label.setWordWrap(True)
        self.results_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        summary_layout.addWidget(self.results_label)
        actions = QHBoxLayout()
        self.folder_button = QPushButton("Open results &folder")
        self.folder_button.setObjectName("batch-open-folder")
        self.folder_button.setToolTip("Show the folder of the results file")
        self.folder_button.clicked.connect(self._on_folder_button_clicked)
        self.retry_button = QPushButton("&Retry the rows that did not succeed")
        self.retry_button.setObjectName("batch-retry")
        self.retry_button.setToolTip(
            "Run again the rows that failed, were interrupted, did not start or are done, "
            "unverified (F5); rows that succeeded are skipped"
        )
        self.retry_button.setShortcut(QKeySequence("F5"))
        self.retry_button.clicked.connect(self.retry)
        close = QPushButton("&Close")
        close.setObjectName("batch-close")
        close.clicked.connect(self.close)
        actions.addWidget(self.folder_button)
        actions.addStretch(1)
        actions.addWidget(self.retry_button)
        actions.addWidget(close)
        summary_layout.addLayout(actions)
        self.summary.hide()
        layout.addWidget(self.summary)

        close_action = QAction(self)
        close_action.setShortcut(QKeySequence.StandardKey.Close)
        close_action.triggered.connect(self.close)
        self.addAction(close_action)
        self.setCentralWidget(central)

    # ── running ─────────────────────────────────────────────────────────────────────────────

    @property
    def running(self) -> bool:
        """Whether the batch is going on."""
        return self.job.running

    def start(self, previous: tuple[RowResult, ...] = ()) -> None:
        """Run the rows that have not succeeded in *previous* (an earlier run's results)."""
        if self.running:
            raise RuntimeError("this batch is still running")
        self._skipped = previous_successes(self._plan, previous)
        for line in self._skipped:
            self.rows_model.update(line, status=RowStatus.SUCCEEDED, skipped=True, error="")
        self.summary.hide()
        self.stop_button.setEnabled(True)
        self.stop_button.show()
        self.summary_result = None
        self._began = time.monotonic()
        self._elapsed.start()
        self._on_elapsed_timeout()
        self._update_progress()
        started = self.job.start(
            self._batch(previous),
            label=f"Running a batch of “{self._request.version.workflow.name}”…",
            on_done=self._finish,
            on_error=lambda exc: self._finish(None, describe_error(exc)),
            on_stopped=lambda: self._finish(None, ""),
        )
        if started:
            self._host.events.job_started.emit(self)

    async def _batch(self, previous: tuple[RowResult, ...]) -> BatchSummary:
        """Run the rows; whatever becomes of this window, the run lists hear of it."""
        try:
            return await run_batch(
                self._plan,
                self._run_row,
                save=self._save,
                parallel=self._parallel,
                previous=previous,
                on_started=self._on_row_started,
                on_finished=self._on_row_finished,
            )
        finally:
            self._host.events.announce(run_changes(None, Origin.WINDOW))

    @property
    def workflow_name(self) -> str:
        """The name of the workflow the batch runs."""
        return self._request.version.workflow.name

    @property
    def all_succeeded(self) -> bool:
        """Whether the batch ended with every row succeeded (now or before)."""
        return self.summary_result is not None and self.summary_result.all_succeeded

    @property
    def some_not_done(self) -> bool:
        """Whether the batch was stopped, or a row failed, was aborted or interrupted (rows done,
        unverified are not among them)."""
        return self.summary_result is None or self.summary_result.not_done > 0

    def stop(self) -> None:
        """Stop the batch: running rows are interrupted, the others stay pending."""
        if not self.running:
            return
        self.status_label.setText("Stopping…")
        self.stop_button.setEnabled(False)
        self.job.stop()

    def retry(self) -> None:
        """Run again the rows that have not succeeded."""
        if self.running:
            return
        for result in self._latest:
            if result.status is not RowStatus.SUCCEEDED:
                self.rows_model.update(
                    result.line, status=RowStatus.PENDING, error="", run_id="", seconds=None
                )
        self.start(self._latest)

    async def _run_row(self, row: PlannedRow) -> RowOutcome:
        request = RunRequest(
            version=self._request.version,
            values=dict(row.given),
            secrets=self._request.secrets,
            options=self._request.options,
            base_url=self._request.base_url,
            headless=self._request.headless,
            # The same secrets serve every row: kept (or told why not) once.
            save_secrets=self._request.save_secrets and not self._remembered,
        )
        self._remembered = True
        run = await self._host.backend.replay(
            request, person=self.person, on_event=_ignore, on_note=self._on_note
        )
        self._host.events.announce(run_changes(run, Origin.WINDOW))
        return RowOutcome.of_run(run)

    def _on_note(self, text: str) -> None:
        if not self.job.released:
            self.notice.setText(text)
            self.notice.show()

    def _save(self, results: tuple[RowResult, ...]) -> None:
        self._results.write(results)
        self._latest = results

    def _on_row_started(self, row: PlannedRow) -> None:
        self._started[row.line] = time.monotonic()
        if not self.job.released:
            self.rows_model.update(row.line, status=None)
            self._update_progress()

    def _on_row_finished(self, result: RowResult) -> None:
        seconds = time.monotonic() - self._started.get(result.line, time.monotonic())
        if self.job.released:
            return
        self.rows_model.update(
            result.line,
            status=result.status,
            run_id=result.run_id,
            error=result.error,
            seconds=seconds,
            skipped=False,
        )
        self._update_progress()

    def _update_progress(self) -> None:
        entries = self.rows_model.rows()
        done = sum(1 for e in entries if e.status not in (None, RowStatus.PENDING))
        running = sum(1 for e in entries if e.status is None)
        self.progress.setValue(done)
        failed = sum(
            1
            for e in entries
            if e.status in (RowStatus.FAILED, RowStatus.ABORTED, RowStatus.INTERRUPTED)
        )
        unverified = sum(1 for e in entries if e.status is RowStatus.UNVERIFIED)
        text = f"{done} of {len(entries)} done"
        if running:
            text += f" · {running} running"
        if failed:
            text += f" · {failed} did not succeed"
        if unverified:
            text += f" · {unverified} done, unverified"
        self.status_label.setText(text)

    def _on_elapsed_timeout(self) -> None:
        seconds = int(time.monotonic() - self._began)
        self.elapsed_label.setText(f"Elapsed {seconds // 60}:{seconds % 60:02d}")

    # ── the end ─────────────────────────────────────────────────────────────────────────────

    def _finish(self, summary: BatchSummary | None, error: str = "") -> None:
        self._elapsed.stop()
        self.stop_button.hide()
        self.summary_result = summary
        if summary is None:
            summary = BatchSummary(results=self._latest, skipped=self._skipped)
            for entry in self.rows_model.rows():
                if entry.status is None:  # its result was saved as interrupted
                    self.rows_model.update(entry.line, status=RowStatus.INTERRUPTED)
            headline = f"✗ Stopped: {error}" if error else "■ Stopped"
            tone: theme.Tone = "error" if error else "warning"
        elif summary.all_succeeded:
            headline = f"✓ All {len(summary.results)} rows succeeded"
            tone = "ok"
        elif summary.not_done:
            unverified = summary.count(RowStatus.UNVERIFIED)
            headline = f"✗ {summary.not_done} of {len(summary.results)} rows did not succeed" + (
                f", {unverified} done, unverified" if unverified else ""
            )
            tone = "error"
        else:  # every row that did not succeed did every step: nothing showed the task was done
            unverified = summary.count(RowStatus.UNVERIFIED)
            headline = f"⚠ {unverified} of {len(summary.results)} rows done, unverified"
            tone = "unverified"
        self.outcome.setText(headline)
        theme.set_tone(self.outcome, tone)
        self._update_progress()
        self.status_label.setText(summary.line() if summary.results else "Nothing ran.")
        self.results_label.setText(f"Results: {self._results.path}")
        self.retry_button.setVisible(not summary.all_succeeded and bool(self._latest))
        self.summary.show()
        self.retry_button.setFocus()
        self.ended.emit()

    def _on_folder_button_clicked(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._results.path.parent)))

    def _on_rows_view_double_clicked(self, index: QModelIndex) -> None:
        entry = self.rows_model.row_at(index)
        if entry is not None and entry.run_id:
            self._host.show_run(entry.run_id)
            bring_forward(self._host.window)

    # ── closing ─────────────────────────────────────────────────────────────────────────────

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing a running batch stops it (after asking, when a person closed the window)."""
        if not may_close_while_running(
            self,
            event,
            running=self.running,
            title="Stop the batch?",
            question="The batch is still running. Stop it? The rows running are recorded as "
            "interrupted; run the file again to go on where it stopped.",
        ):
            return
        self._elapsed.stop()
        self.job.release()
        event.accept()


def _ignore(_event: object) -> None:
    """Per-step progress is not shown for a batch (each row's run record has it)."""
