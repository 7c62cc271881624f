"""The run window: one run as it goes (steps, screenshot, questions, Stop), then a summary."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from datetime import datetime
from typing import Final

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Run, RunStatus, RunStep
from desktop_app.core.models.workflow import ParameterType
from desktop_app.core.outcomes import outcome_reason
from desktop_app.core.replay.engine import ReplayEvent
from desktop_app.core.replay.ladder import public_title
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.person import PersonAnswer, Question
from desktop_app.ops.changes import Origin, run_changes
from desktop_app.ui import theme
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.host import Host
from desktop_app.ui.jobs import Job
from desktop_app.ui.person_dialogs import DialogPerson
from desktop_app.ui.run_models import (
    RUN_STATUS_LABELS,
    RunStepsModel,
    StepColumn,
    run_summary,
    status_tone,
)
from desktop_app.ui.run_view.dialog import RunDialog
from desktop_app.ui.run_view.run_setup import STATUS_WORDS, RunSetup
from desktop_app.ui.screenshot_view import ScreenshotLoader, ScreenshotView
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.windows import bring_forward, fit_window, may_close_while_running

__all__ = ["RunWindow"]


class RunWindow(QMainWindow):
    """One run as it goes: steps, the latest screenshot, questions, Stop; then a summary."""

    def __init__(self, host: Host, setup: RunSetup) -> None:
        super().__init__()
        self.setObjectName("run-window")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._host = host
        self._setup = setup
        self._version = setup.version
        self._request: RunRequest | None = None
        #: The replay, owned by this window (the tray watches it).
        self.job = Job(host.tasks, self)
        self._run: Run | None = None
        self._stopped: Run | None = None  # the record of a run stopped, if one was made
        self._began: datetime | None = None
        self._follow = True
        self._selecting = False
        self._shot_token = 0
        self._loader = ScreenshotLoader(host)
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(500)
        self._elapsed.timeout.connect(self._on_elapsed_timeout)
        #: Replay events not shown yet: applied together, at most every :data:`_BATCH_MS`.
        self._pending: list[ReplayEvent] = []
        self._batch = QTimer(self)
        self._batch.setSingleShot(True)
        self._batch.setInterval(_BATCH_MS)
        self._batch.timeout.connect(self._on_batch_timeout)
        self.person = DialogPerson(
            self,
            on_asked=self._on_person_asked,
            on_answered=self._on_person_answered,
            pictures=self._loader.load,
        )
        workflow = self._version.workflow
        self.setWindowTitle(f"{'Verify' if setup.verify else 'Run'} — {workflow.name}")
        self._build()
        fit_window(self, QSize(1180, 720), remember="run")

    # ── building ────────────────────────────────────────────────────────────────────────────

    def _build(self) -> None:
        workflow = self._version.workflow
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
        state = STATUS_WORDS[self._version.status]
        self.subtitle = QLabel(f"Version {self._version.version} · {state}")
        self.subtitle.setObjectName("run-subtitle")
        self.subtitle.setEnabled(False)
        names.addWidget(self.subtitle)
        header.addLayout(names, 1)
        self.stop_button = QPushButton("■ &Stop")
        self.stop_button.setObjectName("stop-button")
        self.stop_button.setToolTip(
            "Stop the run now (Shift+F5). What was done stays done; the run is recorded as "
            "interrupted."
        )
        self.stop_button.setShortcut(QKeySequence("Shift+F5"))
        self.stop_button.clicked.connect(self.stop)
        header.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(header)

        progress_row = QHBoxLayout()
        self.status_label = QLabel("Starting…")
        self.status_label.setObjectName("run-status")
        progress_row.addWidget(self.status_label, 1)
        self.totals = QLabel()
        self.totals.setObjectName("run-totals")
        self.totals.setToolTip("LLM calls and tokens this run has used so far")
        progress_row.addWidget(self.totals)
        self.elapsed_label = QLabel()
        self.elapsed_label.setObjectName("run-elapsed")
        progress_row.addWidget(self.elapsed_label)
        layout.addLayout(progress_row)
        self.progress = QProgressBar()
        self.progress.setObjectName("run-progress")
        self.progress.setTextVisible(True)
        self.progress.setFormat("%v of %m steps")
        layout.addWidget(self.progress)

        self.steps_model = RunStepsModel(self)
        self.steps = QTableView()
        self.steps.setObjectName("run-steps")
        self.steps.setAccessibleName("Steps")
        self.steps.setModel(self.steps_model)
        self.steps.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.steps.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.steps.setAlternatingRowColors(True)
        self.steps.verticalHeader().hide()
        self.steps.setWordWrap(False)
        self.steps.setColumnHidden(StepColumn.LOCATOR, True)
        head = self.steps.horizontalHeader()
        # A fixed width for the step numbers: sizing a column to its contents measures every
        # row again at each change of the table, as a run goes.
        head.setSectionResizeMode(StepColumn.NUMBER, QHeaderView.ResizeMode.Fixed)
        digits = self.steps.fontMetrics().horizontalAdvance("0000")
        head.resizeSection(StepColumn.NUMBER, digits + 12)
        head.setSectionResizeMode(StepColumn.TITLE, QHeaderView.ResizeMode.Interactive)
        head.resizeSection(StepColumn.TITLE, 250)
        head.resizeSection(StepColumn.STATUS, 105)
        head.resizeSection(StepColumn.RESOLUTION, 125)
        head.resizeSection(StepColumn.DURATION, 62)
        head.resizeSection(StepColumn.LLM, 60)
        _compact_rows(self.steps)
        head.setStretchLastSection(True)
        self.steps.selectionModel().selectionChanged.connect(self._on_steps_selection_changed)

        shot_panel = QWidget()
        shot_layout = QVBoxLayout(shot_panel)
        shot_layout.setContentsMargins(0, 0, 0, 0)
        self.screenshot = ScreenshotView("The page appears here after the first step.")
        self.screenshot.setObjectName("run-screenshot")
        self.shot_caption = QLabel()
        self.shot_caption.setObjectName("run-screenshot-caption")
        self.shot_caption.setEnabled(False)
        self.shot_caption.setWordWrap(True)
        shot_layout.addWidget(self.screenshot, 1)
        shot_layout.addWidget(self.shot_caption)

        self.notice = QLabel()
        self.notice.setObjectName("run-notice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        layout.addWidget(self.notice)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.steps)
        splitter.addWidget(shot_panel)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([780, 400])
        layout.addWidget(splitter, 1)

        self.summary = QFrame()
        self.summary.setObjectName("run-summary")
        self.summary.setFrameShape(QFrame.Shape.StyledPanel)
        summary_layout = QVBoxLayout(self.summary)
        self.outcome = QLabel()
        self.outcome.setObjectName("run-outcome")
        bold = self.outcome.font()
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.15)
        self.outcome.setFont(bold)
        self.summary_text = QLabel()
        self.summary_text.setObjectName("run-summary-text")
        self.summary_text.setWordWrap(True)
        self.summary_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        summary_layout.addWidget(self.outcome)
        summary_layout.addWidget(self.summary_text)
        actions = QHBoxLayout()
        self.review_button = QPushButton("Review &proposal")
        self.review_button.setObjectName("review-repair-button")
        self.review_button.setToolTip(
            "The healed steps were saved as a new version with the locators that worked; "
            "review it to make the repair permanent."
        )
        self.review_button.clicked.connect(self._on_review_button_clicked)
        self.record_button = QPushButton("Open run &record")
        self.record_button.setObjectName("open-record-button")
        self.record_button.setToolTip("Show this run on the Runs screen of the main window")
        self.record_button.clicked.connect(self._on_record_button_clicked)
        self.again_button = QPushButton("Run &again…")
        self.again_button.setObjectName("run-again-button")
        self.again_button.setToolTip("Run the same version again, starting from these values (F5)")
        self.again_button.setShortcut(QKeySequence("F5"))
        self.again_button.clicked.connect(self.run_again)
        close = QPushButton("&Close")
        close.setObjectName("close-button")
        close.clicked.connect(self.close)
        actions.addWidget(self.review_button)
        actions.addWidget(self.record_button)
        actions.addStretch(1)
        actions.addWidget(self.again_button)
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
        """Whether the replay is going on."""
        return self.job.running

    @property
    def run(self) -> Run | None:
        """The finished run's record (None while it runs, or if none was made)."""
        return self._run

    def start(self, request: RunRequest) -> None:
        """Start the replay *request* describes."""
        if self.running:
            raise RuntimeError("this window's run is still going")
        self._request = request
        self._run = None
        self._pending = []
        self._batch.stop()
        self._follow = True
        self.summary.hide()
        self.notice.hide()
        self.stop_button.setEnabled(True)
        self.stop_button.show()
        workflow = request.version.workflow
        try:
            bound = bind_parameters(workflow, request.values, secrets=request.secrets)
            titles = [public_title(step, bound) for step in workflow.steps]
        except ProceduraError:
            titles = [step.title for step in workflow.steps]
        self.steps_model.plan(titles)
        self.progress.setRange(0, len(titles))
        self.progress.setValue(0)
        self._update_totals()
        where = f" on {request.base_url}" if request.base_url else ""
        self.subtitle.setText(
            f"Version {self._version.version} · {STATUS_WORDS[self._version.status]}{where}"
            + (" · headless" if request.headless else "")
        )
        self.status_label.setText("Starting the browser…")
        self._began = utcnow()
        self._elapsed.start()
        self._on_elapsed_timeout()
        self._stopped = None
        started = self.job.start(
            self._replay(request, self._began),
            label=f"Running “{workflow.name}”…",
            on_done=self._finish,
            on_error=self._on_replay_error,
            on_stopped=self._on_replay_stopped,
        )
        if started:
            self._host.events.job_started.emit(self)

    async def _replay(self, request: RunRequest, began: datetime) -> Run:
        """Replay; whatever becomes of this window, the other screens hear of the run."""
        host = self._host
        try:
            run = await host.backend.replay(
                request, person=self.person, on_event=self._on_replay_event, on_note=self._on_note
            )
        except asyncio.CancelledError:
            stopped: Run | None = None
            with contextlib.suppress(Exception):  # the app is closing: the record says it all
                found = await host.tasks.call(
                    host.backend.runs.runs, request.version.workflow_id, 1
                )
                if found and found[0].started_at >= began:
                    stopped = found[0]  # recorded as interrupted
            self._stopped = stopped
            host.events.announce(run_changes(stopped, Origin.WINDOW))
            raise
        except BaseException:
            host.events.announce(run_changes(None, Origin.WINDOW))
            raise
        host.events.announce(run_changes(run, Origin.WINDOW))
        return run

    def _on_note(self, text: str) -> None:
        """Something the person should know that is not a step (secrets not remembered)."""
        if not self.job.released:
            self.notice.setText(text)
            self.notice.show()

    def stop(self) -> None:
        """Stop the run (it is recorded as interrupted)."""
        if not self.running:
            return
        self.status_label.setText("Stopping…")
        self.stop_button.setEnabled(False)
        self.job.stop()

    def run_again(self) -> None:
        """Ask for the values again (starting from this run's) and run once more."""
        if self.running or self._request is None:
            return
        self._host.tasks.start(self._run_again(self._request), label="Opening Run again…")

    async def _run_again(self, request: RunRequest) -> None:
        # What the keyring holds now (the last run may have remembered a secret, or not): the
        # form says truthfully where each secret comes from.
        backend = self._host.backend
        workflow = self._setup.version.workflow
        names = [p.name for p in workflow.parameters if p.type is ParameterType.SECRET]

        def stored() -> dict[str, str]:
            found = {name: backend.stored_secret(workflow.id, name) for name in names}
            return {name: value for name, value in found.items() if value}

        held = await self._host.tasks.call(stored) if names else {}
        if self.running or self._request is not request:
            return
        self._setup = replace(self._setup, stored_secrets=held)
        dialog = RunDialog(self._setup, self._host.backend.settings, self, previous=request)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.start(dialog.request()))
        dialog.open()

    # ── progress ────────────────────────────────────────────────────────────────────────────

    def _on_replay_event(self, event: ReplayEvent) -> None:
        """A replay event: kept, and shown with the others that come within the batch time."""
        if self.job.released:
            return
        self._pending.append(event)
        if not self._batch.isActive():
            self._batch.start()

    def _on_batch_timeout(self) -> None:
        self._show_pending()

    def _show_pending(self) -> None:
        """Apply the events kept so far to the table, in order; then the labels, the selection
        and the screenshot once, as the last of them leaves them."""
        self._batch.stop()
        events, self._pending = self._pending, []
        if not events or self.job.released:
            return
        row: int | None = None
        status: str | None = None
        shot: RunStep | None = None
        finished = False
        for event in events:
            if event.step is None:
                row = self.steps_model.step_started(event.index, event.title, event.depth)
                status = f"Step {event.index + 1}: {event.title}"
            else:
                row = self.steps_model.step_finished(event.step)
                finished = True
                if event.step.screenshot:
                    shot = event.step
        if status is not None:
            self.status_label.setText(status)
        if finished:
            done = sum(1 for s in self.steps_model.steps() if s.top_level)
            self.progress.setValue(min(done, self.progress.maximum()))
            self._update_totals()
        if self._follow and row is not None:
            self._select(row)
            if shot is not None:
                self._show_screenshot(shot)

    def _update_totals(self) -> None:
        steps = self.steps_model.steps()
        calls = sum(s.llm_calls for s in steps)
        tokens = sum(s.prompt_tokens + s.completion_tokens for s in steps)
        self.totals.setText(f"LLM: {calls} call{'s' if calls != 1 else ''} · {tokens:,} tokens")

    def _on_elapsed_timeout(self) -> None:
        if self._began is None:
            return
        seconds = int((utcnow() - self._began).total_seconds())
        self.elapsed_label.setText(f"Elapsed {seconds // 60}:{seconds % 60:02d}")

    def _on_person_asked(self, question: Question) -> None:
        self._show_pending()  # the table up to the step that asks
        what = "a confirmation" if question.kind == "confirm" else "you to point at an element"
        self.status_label.setText(f"Waiting for {what}: {question.step_title}")
        self.raise_()
        QApplication.alert(self)

    def _on_person_answered(self, answer: PersonAnswer) -> None:
        if not self.job.released:
            self.status_label.setText("Going on…" if answer.action != "abort" else "Aborting…")

    # ── screenshots ─────────────────────────────────────────────────────────────────────────

    def _select(self, row: int) -> None:
        self._selecting = True
        try:
            index = self.steps_model.index(row, 0)
            self.steps.selectionModel().select(
                index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.steps.setCurrentIndex(index)
            self.steps.scrollTo(index)
        finally:
            self._selecting = False

    def _on_steps_selection_changed(self, selected: QItemSelection, _old: QItemSelection) -> None:
        if self._selecting:
            return
        rows = {i.row() for i in selected.indexes()}
        if not rows:
            return
        row = min(rows)
        running = self.steps_model.running_row()
        finished = [
            r for r in range(self.steps_model.rowCount()) if self.steps_model.step_at(r) is not None
        ]
        latest = max(finished) if finished else -1
        self._follow = self.running and row >= max(latest, running if running is not None else -1)
        step = self.steps_model.step_at(row)
        if step is not None:
            self._show_screenshot(step)

    def _show_screenshot(self, step: RunStep) -> None:
        self._shot_token += 1
        token = self._shot_token
        caption = f"After step {step.index + 1}: {step.title}"
        if not step.screenshot:
            self.screenshot.set_image(None)
            self.screenshot.set_empty_text("No screenshot of this step.")
            self.shot_caption.setText("")
            return
        ref = step.screenshot

        async def load() -> None:
            image = await self._loader.load(ref)
            if self.job.released or token != self._shot_token:
                return
            self.screenshot.set_image(image, caption)
            self.shot_caption.setText(caption if image is not None else "")

        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(load(), label="Loading a screenshot…")

    # ── the end ─────────────────────────────────────────────────────────────────────────────

    def _on_replay_error(self, exc: BaseException) -> None:
        self._finish(None, describe_error(exc))

    def _on_replay_stopped(self) -> None:
        run = self._stopped
        self._finish(
            run, "" if run is not None else "Stopped before the run began; nothing was done."
        )

    def _finish(self, run: Run | None, error: str = "") -> None:
        self._show_pending()
        self._run = run
        self._elapsed.stop()
        self.steps_model.end()
        self.stop_button.hide()
        if run is not None:
            status = run.status
            self.outcome.setText(_OUTCOME[status])
            theme.set_tone(self.outcome, status_tone(status))
            lines = [run_summary(run, with_status=False)]
            reason = outcome_reason(run)
            if reason:
                lines.append(reason)
            healed = len(run.healed)
            if healed and run.proposed_version is not None:
                lines.append(
                    f"{healed} step(s) healed: the page had drifted. The repair is proposed as "
                    f"version {run.proposed_version}, waiting for review."
                )
            elif healed:
                lines.append(f"{healed} step(s) healed: the page had drifted.")
            elif run.proposed_version is not None:
                lines.append(
                    f"What this run and the ones before it did is proposed as version "
                    f"{run.proposed_version}, waiting for review."
                )
            self.summary_text.setText("\n".join(lines))
            self.status_label.setText(RUN_STATUS_LABELS[status])
            self.review_button.setVisible(run.proposed_version is not None)
            if run.proposed_version is not None:
                self.review_button.setText(f"Review &proposal (version {run.proposed_version})")
            self.record_button.setVisible(True)
        else:
            self.outcome.setText("✗ Not run" if error else "Stopped")
            theme.set_tone(self.outcome, "error")
            self.summary_text.setText(error)
            self.status_label.setText("Not run")
            self.review_button.hide()
            self.record_button.hide()
        self.again_button.setEnabled(True)
        self.summary.show()
        self.again_button.setFocus()

    def _on_review_button_clicked(self) -> None:
        if self._run is not None and self._run.proposed_version is not None:
            self._host.show_review(self._run.workflow_id, self._run.proposed_version)
            self._bring_main_window()

    def _on_record_button_clicked(self) -> None:
        if self._run is not None:
            self._host.show_run(self._run.id)
            self._bring_main_window()

    def _bring_main_window(self) -> None:
        bring_forward(self._host.window)

    # ── closing ─────────────────────────────────────────────────────────────────────────────

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing a running run stops it (after asking, when a person closed the window)."""
        if not may_close_while_running(
            self,
            event,
            running=self.running,
            title="Stop the run?",
            question="The run is still going. Stop it? What was done stays done, and the run is "
            "recorded as interrupted.",
        ):
            return
        self._elapsed.stop()
        self.job.release()
        event.accept()


def _compact_rows(view: QTableView) -> None:
    """Rows as tall as a line of text needs."""
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)


#: How long replay events wait to be shown together (ms): a burst of steps (a loop's rounds)
#: updates the table once, not once a step.
_BATCH_MS: Final = 40

_OUTCOME: Final[dict[RunStatus, str]] = {
    RunStatus.RUNNING: "Running",
    RunStatus.SUCCEEDED: "✓ Succeeded",
    RunStatus.UNVERIFIED: "⚠ Done, unverified",
    RunStatus.FAILED: "✗ Failed",
    RunStatus.ABORTED: "✗ Aborted",
    RunStatus.INTERRUPTED: "■ Interrupted",
}
