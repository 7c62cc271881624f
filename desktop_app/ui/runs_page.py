"""The Runs screen: every run, newest first, and the record of the one selected.

The history can be filtered by workflow and status and sorted by any column. The details pane
shows what the run was given (secrets masked), how each step went (status, the healing rung that
found its element, the locator used, time, error), and the screenshot of the selected step
(click it for full size).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.run import MASK, Run, RunStatus, RunStep, StepStatus
from desktop_app.core.outcomes import outcome_reason
from desktop_app.core.values import value_text
from desktop_app.core.views import RunQuery
from desktop_app.ui import theme
from desktop_app.ui.backend import Backend
from desktop_app.ui.host import Host
from desktop_app.ui.run_models import (
    RUN_STATUS_LABELS,
    RunStepsModel,
    StepColumn,
    run_summary,
    status_tone,
)
from desktop_app.ui.runs_model import (
    HEADERS,
    RUN_PAGE,
    SORTS,
    TRIGGERS,
    PairsModel,
    RunColumn,
    RunsTableModel,
)
from desktop_app.ui.screenshot_view import ScreenshotLoader, ScreenshotView

__all__ = ["RunColumn", "RunsPage", "RunsTableModel"]

#: The colour of a run's error in its record.


class _RunDetails(QWidget):
    """The record of one run: what it was given, how each step went, its screenshots."""

    def __init__(self, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._run: Run | None = None
        self._loader = ScreenshotLoader(host)
        self._shot_token = 0

        self.title = QLabel()
        self.title.setObjectName("run-details-title")
        bold = self.title.font()
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.15)
        self.title.setFont(bold)
        self.title.setWordWrap(True)
        self.meta = QLabel()
        self.meta.setObjectName("run-details-meta")
        self.meta.setWordWrap(True)
        self.meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error = QLabel()
        self.error.setObjectName("run-details-error")
        self.error.setWordWrap(True)
        theme.set_tone(self.error, "error")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.again_button = QPushButton("Run &again…")
        self.again_button.setObjectName("runs-run-again")
        self.again_button.setToolTip(
            "Run this workflow's approved version, starting from these values"
        )
        self.again_button.clicked.connect(self._on_again_button_clicked)
        self.editor_button = QPushButton("Open in &editor")
        self.editor_button.setObjectName("runs-open-editor")
        self.editor_button.setToolTip("Open the version that ran in the step editor")
        self.editor_button.clicked.connect(self._on_editor_button_clicked)
        self.review_button = QPushButton("Review &proposal")
        self.review_button.setObjectName("runs-review-repair")
        self.review_button.setToolTip("The version this run proposed with the repairs it made")
        self.review_button.clicked.connect(self._on_review_button_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.again_button)
        buttons.addWidget(self.editor_button)
        buttons.addWidget(self.review_button)
        buttons.addStretch(1)

        self.parameters = QTableWidget(0, 2)
        self.parameters.setObjectName("run-parameters")
        self.parameters.setAccessibleName("Parameters")
        self.parameters.setHorizontalHeaderLabels(["Parameter", "Value"])
        self.parameters.verticalHeader().hide()
        self.parameters.horizontalHeader().setStretchLastSection(True)
        self.parameters.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.parameters.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.parameters.setMaximumHeight(150)
        self.parameters.setAlternatingRowColors(True)
        _compact_rows(self.parameters)

        self.steps_model = RunStepsModel(self)
        self.steps = QTableView()
        self.steps.setObjectName("run-record-steps")
        self.steps.setAccessibleName("Steps")
        self.steps.setModel(self.steps_model)
        self.steps.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.steps.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.steps.setAlternatingRowColors(True)
        self.steps.setWordWrap(False)
        self.steps.verticalHeader().hide()
        head = self.steps.horizontalHeader()
        head.setSectionResizeMode(StepColumn.NUMBER, QHeaderView.ResizeMode.ResizeToContents)
        head.resizeSection(StepColumn.TITLE, 240)
        head.resizeSection(StepColumn.STATUS, 105)
        head.resizeSection(StepColumn.RESOLUTION, 130)
        head.resizeSection(StepColumn.LOCATOR, 190)
        head.resizeSection(StepColumn.DURATION, 65)
        head.resizeSection(StepColumn.LLM, 70)
        head.setStretchLastSection(True)
        _compact_rows(self.steps)
        self.steps.selectionModel().selectionChanged.connect(self._on_steps_selection_changed)

        self.screenshot = ScreenshotView("Select a step to see the page after it.")
        self.screenshot.setObjectName("run-record-screenshot")
        self.caption = QLabel()
        self.caption.setObjectName("run-record-screenshot-caption")
        self.caption.setEnabled(False)
        self.caption.setWordWrap(True)

        record = QWidget()
        left = QVBoxLayout(record)
        left.setContentsMargins(0, 0, 0, 0)
        left.addWidget(self.title)
        left.addWidget(self.meta)
        left.addWidget(self.error)
        left.addLayout(buttons)
        left.addWidget(QLabel("Parameters"))
        left.addWidget(self.parameters)
        left.addWidget(QLabel("Steps"))
        left.addWidget(self.steps, 1)
        shot = QWidget()
        right = QVBoxLayout(shot)
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(self.screenshot, 1)
        right.addWidget(self.caption)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(record)
        splitter.addWidget(shot)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)

        self.placeholder = QLabel(
            "Select a run to see its parameters, its steps and the page after each step."
        )
        self.placeholder.setObjectName("run-details-empty")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setEnabled(False)
        self._stack = QStackedWidget()
        self._stack.addWidget(self.placeholder)
        self._stack.addWidget(splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._stack)

    @property
    def run(self) -> Run | None:
        """The run shown."""
        return self._run

    def show_record(self, run: Run | None, name: str = "") -> None:
        """Show *run* (None: the placeholder)."""
        self._run = run
        if run is None:
            self._stack.setCurrentIndex(0)
            self.steps_model.set_steps([])
            self.screenshot.set_image(None)
            return
        self._stack.setCurrentIndex(1)
        self.title.setText(
            f"{name} · version {run.workflow_version} · {RUN_STATUS_LABELS[run.status]}"
        )
        theme.set_tone(self.title, status_tone(run.status))
        started = run.started_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        trigger = TRIGGERS.get(run.trigger.value, run.trigger.value)
        where = f"Started {started} from the {trigger} · run {run.id[:8]}"
        if run.proposed_version:
            where += f" · proposed version {run.proposed_version}"
        self.meta.setText(f"{run_summary(run, with_status=False)}\n{where}")
        self.meta.setToolTip(f"Run id: {run.id}")
        reason = outcome_reason(run)
        self.error.setText(reason)
        self.error.setVisible(bool(reason))
        # A run done, unverified has no error, only a reason: in its own colour, not in red.
        theme.set_tone(self.error, "unverified" if run.status is RunStatus.UNVERIFIED else "error")
        self.review_button.setVisible(run.proposed_version is not None)
        if run.proposed_version is not None:
            self.review_button.setText(f"Review &proposal (version {run.proposed_version})")

        self.parameters.setRowCount(len(run.parameters))
        for row, (param, value) in enumerate(run.parameters.items()):
            secret = param in run.secret_parameters
            shown = MASK if secret else value_text(value)
            name_item = QTableWidgetItem(param)
            value_item = QTableWidgetItem(shown)
            if secret:
                value_item.setToolTip("A secret: its value is never kept in a run record")
            self.parameters.setItem(row, 0, name_item)
            self.parameters.setItem(row, 1, value_item)
        self.parameters.resizeColumnToContents(0)

        self.steps_model.set_steps(run.steps)
        self.screenshot.set_image(None)
        self.screenshot.set_empty_text("Select a step to see the page after it.")
        self.caption.setText("")
        first = _first_interesting(run.steps)
        if first is not None:
            index = self.steps_model.index(first, 0)
            self.steps.selectionModel().select(
                index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.steps.setCurrentIndex(index)
            self.steps.scrollTo(index)

    def _on_steps_selection_changed(self, selected: QItemSelection, _old: QItemSelection) -> None:
        rows = sorted({i.row() for i in selected.indexes()})
        step = self.steps_model.step_at(rows[0]) if rows else None
        if step is not None:
            self._show_screenshot(step)

    def _show_screenshot(self, step: RunStep) -> None:
        self._shot_token += 1
        token = self._shot_token
        caption = f"After step {step.index + 1}: {step.title}"
        if not step.screenshot:
            self.screenshot.set_image(None)
            self.screenshot.set_empty_text(
                "No screenshot of this step (runs from the command line keep them only for "
                "healed and failed steps)."
            )
            self.caption.setText("")
            return
        ref = step.screenshot

        async def load() -> None:
            image = await self._loader.load(ref)
            if token != self._shot_token:
                return
            if image is None:
                self.screenshot.set_empty_text("The screenshot is no longer in the media store.")
            self.screenshot.set_image(image, caption)
            self.caption.setText(caption if image is not None else "")

        with contextlib.suppress(RuntimeError):
            self._host.tasks.start(load(), label="Loading a screenshot…")

    def _on_again_button_clicked(self) -> None:
        if self._run is not None:
            self._host.open_run(self._run.workflow_id)

    def _on_editor_button_clicked(self) -> None:
        if self._run is not None:
            self._host.open_editor(self._run.workflow_id, self._run.workflow_version)

    def _on_review_button_clicked(self) -> None:
        if self._run is not None and self._run.proposed_version is not None:
            self._host.show_review(self._run.workflow_id, self._run.proposed_version)


def _compact_rows(view: QTableView | QTableWidget) -> None:
    """Rows as tall as a line of text needs."""
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)


def _first_interesting(steps: tuple[RunStep, ...]) -> int | None:
    """The row to show first: the first failed step, else the last one with a screenshot."""
    for row, step in enumerate(steps):
        if step.status is StepStatus.FAILED:
            return row
    for row in range(len(steps) - 1, -1, -1):
        if steps[row].screenshot:
            return row
    return len(steps) - 1 if steps else None


@dataclass(frozen=True, slots=True)
class _History:
    runs: list[Run]
    """The first page."""
    shown: int
    """How many runs the query selects."""
    total: int
    """How many runs there are."""
    names: list[tuple[str, str]]
    """``(id, name)`` of the page's workflows."""


def _read_history(backend: Backend, query: RunQuery) -> _History:
    """The first page of the runs *query* selects and the counts, each in SQL. Blocking."""
    store = backend.runs
    runs = store.run_page(query, limit=RUN_PAGE)
    every = RunQuery()
    total = store.run_count(every)
    shown = total if (query.workflow_id, query.status) == (None, None) else store.run_count(query)
    names = store.run_workflows(ids=list({r.workflow_id for r in runs}))
    return _History(runs=runs, shown=shown, total=total, names=names)


def _read_one(backend: Backend, run_id: str) -> tuple[Run, str | None]:
    """One run and its workflow's name (None if the workflow is gone). Blocking."""
    run = backend.runs.get_run(run_id)
    try:
        name: str | None = backend.workflows.summary(run.workflow_id).name
    except ProceduraError:
        name = None
    return run, name


class RunsPage(QWidget):
    """The run history with a filter, and the selected run's record."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.setObjectName("runs-page")
        self._host = host
        self._wanted: str | None = None
        self._reloading = False
        self._stale = False
        self._loaded = False

        self.model = RunsTableModel(self)
        self._query = RunQuery()
        self._shown = 0  # how many first pages were shown (a later page follows the last one)

        self.workflow_filter = QComboBox()
        self.workflow_filter.setObjectName("runs-workflow-filter")
        self.workflow_filter.setAccessibleName("Workflow filter")
        self.workflow_filter.setToolTip("Only the runs of one workflow")
        self.workflow_filter.setMinimumWidth(220)
        self.workflows_model = PairsModel(self)
        self.workflows_model.set_pairs([(None, "All workflows")])
        self.workflow_filter.setModel(self.workflows_model)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("runs-status-filter")
        self.status_filter.setAccessibleName("Status filter")
        self.status_filter.setToolTip("Only the runs that ended one way")
        self.status_filter.addItem("Any status", None)
        for status in RunStatus:
            self.status_filter.addItem(RUN_STATUS_LABELS[status], status.value)
        self.count_label = QLabel()
        self.count_label.setObjectName("runs-count")
        self.count_label.setEnabled(False)
        refresh = QPushButton("Refresh")
        refresh.setObjectName("runs-refresh")
        refresh.setToolTip("Load the run history again (F5)")
        refresh.clicked.connect(self._schedule_reload)
        bar = QHBoxLayout()
        workflow_label = QLabel("&Workflow:")
        workflow_label.setBuddy(self.workflow_filter)
        status_label = QLabel("S&tatus:")
        status_label.setBuddy(self.status_filter)
        bar.addWidget(workflow_label)
        bar.addWidget(self.workflow_filter)
        bar.addWidget(status_label)
        bar.addWidget(self.status_filter)
        bar.addStretch(1)
        bar.addWidget(self.count_label)
        bar.addWidget(refresh)

        self.table = QTableView()
        self.table.setObjectName("runs-table")
        self.table.setAccessibleName("Runs")
        self.table.setModel(self.model)
        self.table.horizontalHeader().setSortIndicator(
            RunColumn.STARTED, Qt.SortOrder.DescendingOrder
        )
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        _compact_rows(self.table)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(RunColumn.WORKFLOW, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(HEADERS)):
            head.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        head.setResizeContentsPrecision(50)  # fit columns to a page's first rows, not 1,000
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)

        self.details = _RunDetails(host)
        history = QWidget()
        history_layout = QVBoxLayout(history)
        history_layout.setContentsMargins(0, 0, 0, 0)
        history_layout.addLayout(bar)
        history_layout.addWidget(self.table, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(history)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([240, 520])

        self.empty = QLabel(
            "<h3>No runs yet</h3>"
            "<p>Run a workflow from the Library (select it, then <b>Run</b>) and every run is "
            "recorded here: the values it was given, how each step went, which steps healed, "
            "and the page after each step.</p>"
            "<p>Runs from the command line (<code>procedura run</code>) and the tray show up "
            "here too.</p>"
        )
        self.empty.setObjectName("runs-empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self._stack = QStackedWidget()
        self._stack.addWidget(self.empty)
        self._stack.addWidget(splitter)
        layout = QVBoxLayout(self)
        layout.addWidget(self._stack)

        reload_action = QAction(self)
        reload_action.setShortcut(QKeySequence.StandardKey.Refresh)
        reload_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        reload_action.triggered.connect(self._schedule_reload)
        self.addAction(reload_action)

        self.model.more_wanted.connect(self._on_model_more_wanted)
        self.model.sort_wanted.connect(self._on_model_sort_wanted)
        self.workflow_filter.currentIndexChanged.connect(self._on_filter_changed)
        self.status_filter.currentIndexChanged.connect(self._on_filter_changed)
        host.events.runs_changed.connect(self._on_events_runs_changed)
        host.events.workflows_changed.connect(self._on_events_workflows_changed)

    # ── loading ─────────────────────────────────────────────────────────────────────────────

    async def reload(self) -> None:
        """Load the first page of the history in the current filter and order, and show it
        (the selection is kept)."""
        if self._reloading:
            self._stale = True
            return
        self._reloading = True
        try:
            while True:
                self._stale = False
                self._query = self._current_query()
                history = await self._host.tasks.call(
                    _read_history, self._host.backend, self._query
                )
                if not self._stale:
                    break
            self._show_history(history)
            # Then the filter's workflows (those with runs: a scan of the history's index).
            workflows = await self._host.tasks.call(self._host.backend.runs.run_workflows)
            self.model.add_names(workflows)
            self._refill_workflow_filter(workflows)
        finally:
            self._reloading = False

    def show_run(self, run_id: str) -> None:
        """Select the run *run_id* (loading it if the history does not hold it)."""
        self._wanted = run_id
        if self._select(run_id):
            return

        def found(loaded: tuple[Run, str | None]) -> None:
            run, name = loaded
            if self._wanted != run.id:
                return
            self.model.add_run(run, name)
            self._stack.setCurrentIndex(1)
            self._select(run.id)

        async def load() -> tuple[Run, str | None]:
            return await self._host.tasks.call(_read_one, self._host.backend, run_id)

        self._host.tasks.start(load(), label="Loading the run…", on_done=found)

    def selected_run(self) -> Run | None:
        """The run whose record is shown."""
        return self.details.run

    def visible_runs(self) -> list[Run]:
        """The runs the table lists (those read so far), in its order."""
        return self.model.rows()

    def set_filter(self, workflow_id: str | None = None, status: RunStatus | None = None) -> None:
        """Show only the runs of *workflow_id* and/or with *status* (None: any)."""
        blocked = self.workflow_filter.blockSignals(True), self.status_filter.blockSignals(True)
        try:
            self.workflow_filter.setCurrentIndex(self.workflows_model.row_of(workflow_id) or 0)
            index = self.status_filter.findData(status.value) if status else 0
            self.status_filter.setCurrentIndex(max(index, 0))
        finally:
            self.workflow_filter.blockSignals(blocked[0])
            self.status_filter.blockSignals(blocked[1])
        self._on_filter_changed(0)

    # ── showing ─────────────────────────────────────────────────────────────────────────────

    def _current_query(self) -> RunQuery:
        workflow_id = self.workflow_filter.currentData()
        status_value = self.status_filter.currentData()
        header = self.table.horizontalHeader()
        column = header.sortIndicatorSection()
        return RunQuery(
            workflow_id=workflow_id if isinstance(workflow_id, str) else None,
            status=RunStatus(status_value) if isinstance(status_value, str) else None,
            sort=SORTS[column] if 0 <= column < len(SORTS) else SORTS[RunColumn.STARTED],
            descending=header.sortIndicatorOrder() is Qt.SortOrder.DescendingOrder,
        )

    def _show_history(self, history: _History) -> None:
        keep = self._wanted or (self.details.run.id if self.details.run is not None else None)
        self._shown += 1
        self.model.set_runs(history.runs, self.model.names() | dict(history.names), history.shown)
        self._loaded = True
        self.count_label.setText(
            f"{history.total:,} runs"
            if history.shown == history.total
            else f"{history.shown:,} of {history.total:,} runs"
        )
        self._stack.setCurrentIndex(1 if history.total else 0)
        if keep is not None and self._select(keep):
            return
        if keep is not None and self._wanted == keep:
            self.show_run(keep)  # not in the first page
            return
        self._select_row(0)

    def _refill_workflow_filter(self, workflows: list[tuple[str, str]]) -> None:
        current = self.workflow_filter.currentData()
        blocked = self.workflow_filter.blockSignals(True)
        try:
            pairs: list[tuple[object, str]] = [(None, "All workflows")]
            pairs += [(workflow_id, name) for workflow_id, name in workflows]
            self.workflows_model.set_pairs(pairs)
            self.workflow_filter.setCurrentIndex(self.workflows_model.row_of(current) or 0)
        finally:
            self.workflow_filter.blockSignals(blocked)

    def _select(self, run_id: str) -> bool:
        row = self.model.row_of(run_id)
        if row is None:
            return False
        run = self.model.row_at(row)
        query = self._query
        if run is not None and (
            (query.workflow_id is not None and run.workflow_id != query.workflow_id)
            or (query.status is not None and run.status is not query.status)
        ):  # filtered out: show everything
            self.set_filter(None, None)
        self._select_row(row)
        if self._wanted == run_id:
            self._wanted = None
        return True

    def _select_row(self, row: int) -> None:
        if not 0 <= row < self.model.rowCount():
            self.details.show_record(None)
            return
        index = self.model.index(row, 0)
        self.table.selectionModel().select(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)
        self._show_selected()

    def _show_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            self.details.show_record(None)
            return
        run = self.model.row_at(rows[0].row())
        if run is None:
            self.details.show_record(None)
            return
        if self.details.run is not None and self.details.run == run:
            return
        self.details.show_record(run, self.model.name_of(run.workflow_id))

    # ── slots ───────────────────────────────────────────────────────────────────────────────

    def _on_table_selection_changed(self, _new: QItemSelection, _old: QItemSelection) -> None:
        self._show_selected()

    def _on_filter_changed(self, _index: int) -> None:
        self._schedule_reload()

    def _on_model_sort_wanted(self, _column: int, _order: Qt.SortOrder) -> None:
        self._schedule_reload()  # the header shows the new order; the query reads it

    def _on_model_more_wanted(self, held: int) -> None:
        async def more() -> None:
            shown = self._shown
            page = await self._host.tasks.call(
                self._host.backend.runs.run_page, self._query, offset=held, limit=RUN_PAGE
            )
            if shown == self._shown:  # else a new first page replaced those it followed
                self.model.add_runs(page)

        self._host.tasks.start(more(), label="Loading runs…")

    def _schedule_reload(self) -> None:
        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(self.reload(), label="Loading runs…")

    def _on_events_runs_changed(self, _run_id: str) -> None:
        self._schedule_reload()

    def _on_events_workflows_changed(self, _workflow_id: str) -> None:
        if self._loaded:
            self._schedule_reload()
