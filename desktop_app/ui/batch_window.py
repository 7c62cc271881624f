"""Running a workflow over the rows of a CSV file: the batch dialog, then the batch window.

:func:`open_batch` loads the version to run and opens a :class:`BatchDialog`: pick the CSV file,
see which column gives which parameter (and change it), see every problem before anything runs
(Run stays disabled while a row is bad), type the secrets once for every row, and choose how many
rows run at once. Run opens a :class:`BatchWindow` that lists every row with its status as the
rows run, can stop the batch, and ends with the results file (``<stem>.results.csv`` next to the
input). Running the same file again resumes: rows that succeeded before are skipped.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import QAction, QCloseEvent, QColor, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.batch import (
    BatchFileError,
    BatchPlan,
    BatchSummary,
    BatchTable,
    PlannedRow,
    ResultsFile,
    RowOutcome,
    RowResult,
    RowStatus,
    default_mapping,
    plan_batch,
    previous_successes,
    read_results,
    read_table,
    results_path,
    run_batch,
    template_csv,
)
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.run import RunStatus, RunTrigger
from desktop_app.core.models.workflow import ParameterType, Workflow
from desktop_app.core.replay.render import check_base_url
from desktop_app.ops.changes import Origin, run_changes
from desktop_app.ops.run import replay_options
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.host import Host
from desktop_app.ui.parameter_form import ParameterForm
from desktop_app.ui.person_dialogs import DialogPerson
from desktop_app.ui.run_models import status_color
from desktop_app.ui.run_view import RunSetup, load_setup
from desktop_app.ui.table_model import RowsModel
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.windows import bring_forward, may_close_while_running

__all__ = ["BatchDialog", "BatchWindow", "MappingModel", "RowsProgressModel", "open_batch"]

#: The most rows a batch runs at once from the window.
MAX_PARALLEL: Final = 8
_IGNORED: Final = "— ignored —"
_RED: Final = QColor("#b3261e")
_AMBER: Final = QColor("#9a6700")
_GREY: Final = QColor("#6e6e6e")
_ERROR_STYLE: Final = "color: #b3261e;"


def open_batch(
    host: Host, workflow_id: str, csv_path: Path | None = None, *, version: int | None = None
) -> None:
    """Open the batch dialog for a workflow (its approved version unless *version*).

    Args:
        host: the main window.
        workflow_id: the workflow.
        csv_path: a CSV file to start with; without one, a file dialog asks for it.
        version: a version to run (it may be a draft; the dialog says so).
    """

    async def load() -> RunSetup:
        return await host.tasks.call(load_setup, host.backend, workflow_id, version)

    def show(setup: RunSetup) -> None:
        dialog = BatchDialog(host, setup)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        if csv_path is not None:
            dialog.load_csv(csv_path)
        else:
            dialog.choose_file()

    host.tasks.start(load(), label="Opening the workflow…", on_done=show)


# ── the mapping table ───────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Mapping:
    column: str
    sample: str
    parameter: str | None
    explicit: bool = False


class MappingModel(RowsModel[_Mapping]):
    """Column → parameter, one CSV column a row; the parameter is edited with a combo box.

    Signals:
        mapping_edited(): a person chose another parameter for a column.
    """

    HEADERS = ("Column", "Parameter", "First row's value")
    COLUMN, PARAMETER, SAMPLE = range(3)
    mapping_edited = Signal()

    def __init__(self, workflow: Workflow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workflow = workflow

    def mapping(self) -> dict[str, str | None]:
        """Column → parameter name (None: ignored)."""
        return {m.column: m.parameter for m in self.rows()}

    def explicit(self) -> list[str]:
        """The columns whose parameter a person chose."""
        return [m.column for m in self.rows() if m.explicit]

    def parameter_of(self, column: str) -> str | None:
        """The parameter *column* gives (None: ignored)."""
        return self.mapping().get(column)

    def set_parameter(self, column: str, parameter: str | None) -> None:
        """Map *column* to *parameter* (None: ignore it), as a person would."""
        for row, item in enumerate(self._rows):
            if item.column == column:
                self.setData(self.index(row, self.PARAMETER), parameter or "")
                return
        raise KeyError(column)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        flags = super().flags(index)
        if index.isValid() and index.column() == self.PARAMETER:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        item = self.row_at(index)
        if item is None:
            return None
        column = index.column()
        param = self._workflow.parameter(item.parameter) if item.parameter else None
        secret = param is not None and param.type is ParameterType.SECRET
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.COLUMN:
                return item.column
            if column == self.PARAMETER:
                if item.parameter is None:
                    return _IGNORED
                return f"🔒 {item.parameter} — a secret: refused" if secret else item.parameter
            return item.sample
        if role == Qt.ItemDataRole.EditRole and column == self.PARAMETER:
            return item.parameter or ""
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == self.PARAMETER and (secret or (item.parameter and param is None)):
                return _RED
            if column == self.PARAMETER and item.parameter is None:
                return _GREY
        if role == Qt.ItemDataRole.ToolTipRole and column == self.PARAMETER:
            if secret:
                return (
                    "Secrets are never read from a file. Ignore this column and type the "
                    "secret below."
                )
            if item.parameter is None:
                return "This column is not used. Choose the parameter it gives, if any."
            return param.description if param is not None else ""
        return None

    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = 2
    ) -> bool:
        item = self.row_at(index)
        if item is None or index.column() != self.PARAMETER or role != Qt.ItemDataRole.EditRole:
            return False
        chosen = str(value) or None
        if chosen == item.parameter and item.explicit:
            return False
        item.parameter = chosen
        item.explicit = True
        self.dataChanged.emit(index, index)
        self.mapping_edited.emit()
        return True


class _ParameterDelegate(QStyledItemDelegate):
    """A combo box of the workflow's parameters (secrets left out: they never come from a file)."""

    def __init__(self, workflow: Workflow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workflow = workflow

    def createEditor(
        self,
        parent: QWidget,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> QWidget:
        combo = QComboBox(parent)
        combo.setObjectName("mapping-parameter")
        combo.addItem(_IGNORED, "")
        for param in self._workflow.parameters:
            if param.type is not ParameterType.SECRET:
                combo.addItem(f"{param.name}  ({param.type.value})", param.name)
        combo.setToolTip("The parameter this column gives, or “ignored”")
        combo.activated.connect(lambda _i: self.commitData.emit(combo))
        return combo

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QComboBox)
        found = editor.findData(index.data(Qt.ItemDataRole.EditRole) or "")
        if found < 0:  # a secret: not offered, shown as "ignored" in the combo
            found = 0
            editor.setStyleSheet(_ERROR_STYLE)
            editor.setToolTip(
                "This column names a secret parameter. Secrets are never read from a file; "
                "leave it ignored and type the secret below."
            )
        else:
            editor.setStyleSheet("")
        editor.setCurrentIndex(found)

    def setModelData(
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentData() or "", Qt.ItemDataRole.EditRole)


# ── the dialog ──────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Loaded:
    table: BatchTable | None
    previous: tuple[RowResult, ...] = ()
    error: str = ""
    results_error: str = ""


def _load_file(path: Path) -> _Loaded:
    """The CSV and its earlier results (blocking: file reads)."""
    try:
        table = read_table(path)
    except BatchFileError as exc:
        return _Loaded(table=None, error=str(exc))
    try:
        previous = read_results(results_path(path), delimiter=table.delimiter)
    except BatchFileError as exc:
        return _Loaded(table=table, results_error=str(exc))
    return _Loaded(table=table, previous=previous)


class BatchDialog(QDialog):
    """The file, the column mapping, the report, the secrets and the options of a batch.

    Args:
        host: the main window.
        setup: the version to run and what to prefill (stored secrets).
    """

    def __init__(self, host: Host, setup: RunSetup) -> None:
        super().__init__(host.window)
        self.setObjectName("batch-dialog")
        self._host = host
        self._setup = setup
        self._workflow = setup.version.workflow
        self._path: Path | None = None
        self._loaded: _Loaded | None = None
        self._plan: BatchPlan | None = None
        self._done: frozenset[int] = frozenset()
        self._token = 0
        self._planning = 0
        self._gone = False
        self.finished.connect(self._on_finished)
        workflow = self._workflow
        self.setWindowTitle(f"Run “{workflow.name}” over a CSV file")
        self.resize(900, 700)
        layout = QVBoxLayout(self)

        title = QLabel(workflow.name)
        big = title.font()
        big.setPointSizeF(big.pointSizeF() * 1.25)
        big.setBold(True)
        title.setFont(big)
        layout.addWidget(title)
        about = QLabel(
            f"Version {setup.version.version} · one run per row; each column gives a parameter"
        )
        about.setEnabled(False)
        layout.addWidget(about)
        if setup.unapproved:
            warning = QLabel(
                f"⚠ Version {setup.version.version} is not approved. Run it to try it out."
            )
            warning.setObjectName("draft-warning")
            warning.setStyleSheet(
                "background: #fff4ce; color: #5c4400; border: 1px solid #e0c060; "
                "border-radius: 4px; padding: 6px;"
            )
            layout.addWidget(warning)

        file_row = QHBoxLayout()
        self.file_edit = QLineEdit()
        self.file_edit.setObjectName("batch-file")
        self.file_edit.setPlaceholderText("A CSV file: one row per run, a column per parameter")
        self.file_edit.setToolTip("The CSV file to run over (Enter loads a typed path)")
        self.file_edit.returnPressed.connect(self._on_file_edit_return_pressed)
        choose = QPushButton("&Choose…")
        choose.setObjectName("batch-choose")
        choose.setToolTip("Choose the CSV file (Ctrl+O)")
        choose.setShortcut(QKeySequence.StandardKey.Open)
        choose.clicked.connect(self.choose_file)
        template = QPushButton("Save a &template…")
        template.setObjectName("batch-template")
        template.setToolTip(
            "Save a CSV whose first line names this workflow's parameters and whose second "
            "line has their defaults: fill it in, one row per run"
        )
        template.clicked.connect(self._on_template_clicked)
        file_label = QLabel("&File:")
        file_label.setBuddy(self.file_edit)
        file_row.addWidget(file_label)
        file_row.addWidget(self.file_edit, 1)
        file_row.addWidget(choose)
        file_row.addWidget(template)
        layout.addLayout(file_row)

        mapping_box = QGroupBox("Columns → parameters")
        mapping_layout = QVBoxLayout(mapping_box)
        self.mapping_model = MappingModel(workflow, self)
        self.mapping_model.mapping_edited.connect(self._on_mapping_model_mapping_edited)
        self.mapping_view = QTableView()
        self.mapping_view.setObjectName("batch-mapping")
        self.mapping_view.setModel(self.mapping_model)
        self.mapping_view.setItemDelegateForColumn(
            MappingModel.PARAMETER, _ParameterDelegate(workflow, self.mapping_view)
        )
        self.mapping_view.verticalHeader().hide()
        self.mapping_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.mapping_view.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        head = self.mapping_view.horizontalHeader()
        head.setSectionResizeMode(MappingModel.COLUMN, QHeaderView.ResizeMode.Interactive)
        head.resizeSection(MappingModel.COLUMN, 200)
        head.resizeSection(MappingModel.PARAMETER, 260)
        head.setStretchLastSection(True)
        self.mapping_view.verticalHeader().setDefaultSectionSize(
            self.mapping_view.fontMetrics().height() + 14
        )
        names = ", ".join(p.name for p in workflow.parameters if p.type is not ParameterType.SECRET)
        self.empty = QLabel(
            "Choose a CSV file (Ctrl+O). Its first line names the columns; a column named after "
            f"a parameter gives that parameter's value: {names or 'this workflow has none'}. "
            "Save a template to start from one."
        )
        self.empty.setObjectName("batch-empty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setEnabled(False)
        self._mapping_stack = QStackedWidget()
        self._mapping_stack.addWidget(self.empty)
        self._mapping_stack.addWidget(self.mapping_view)
        mapping_layout.addWidget(self._mapping_stack)
        layout.addWidget(mapping_box, 4)

        report_box = QGroupBox("Check")
        report_layout = QVBoxLayout(report_box)
        self.report = QListWidget()
        self.report.setObjectName("batch-report")
        self.report.setWordWrap(True)
        self.report.setToolTip("Every problem is listed before anything runs")
        report_layout.addWidget(self.report)
        layout.addWidget(report_box, 2)

        secret_params = tuple(p for p in workflow.parameters if p.type is ParameterType.SECRET)
        self.secrets_form: ParameterForm | None = None
        bottom = QHBoxLayout()
        if secret_params:
            secrets_box = QGroupBox("Secrets (the same for every row)")
            secrets_layout = QVBoxLayout(secrets_box)
            only_secrets = workflow.model_copy(update={"parameters": secret_params})
            self.secrets_form = ParameterForm(only_secrets, secrets=setup.stored_secrets)
            self.secrets_form.validity_changed.connect(self._on_secrets_form_validity_changed)
            secrets_layout.addWidget(self.secrets_form)
            bottom.addWidget(secrets_box, 1)

        options = QGroupBox("Options")
        form = QFormLayout(options)
        self.parallel = QSpinBox()
        self.parallel.setObjectName("batch-parallel")
        self.parallel.setRange(1, MAX_PARALLEL)
        self.parallel.setValue(1)
        self.parallel.setSuffix(" at a time")
        self.parallel.setToolTip(
            "How many rows run at once, each in its own browser. Over 1, the browsers are "
            "headless and no one is asked during the runs: a step that needs a person fails."
        )
        self.parallel.valueChanged.connect(self._on_parallel_value_changed)
        form.addRow("&Rows:", self.parallel)
        self.base_url = QLineEdit()
        self.base_url.setObjectName("batch-base-url")
        self.base_url.setClearButtonEnabled(True)
        self.base_url.setPlaceholderText("the site as recorded")
        self.base_url.setToolTip(
            "Run against another origin (a staging copy, another port); empty uses the "
            "recorded site"
        )
        self.base_url.textChanged.connect(self._on_base_url_text_changed)
        form.addRow("&Base URL:", self.base_url)
        self.show_browser = QCheckBox("&Show the browser while it runs")
        self.show_browser.setObjectName("batch-show-browser")
        self.show_browser.setChecked(True)
        form.addRow(self.show_browser)
        self.use_llm = QCheckBox("Allow the &LLM to repair steps (rung 4)")
        self.use_llm.setObjectName("batch-use-llm")
        self.use_llm.setChecked(setup.llm_configured)
        self.use_llm.setEnabled(setup.llm_configured)
        if not setup.llm_configured:
            self.use_llm.setToolTip("No LLM is configured: set one up under Settings.")
        form.addRow(self.use_llm)
        self.confirm = QCheckBox("&Confirm irreversible steps found by healing")
        self.confirm.setObjectName("batch-confirm-irreversible")
        self.confirm.setChecked(host.backend.settings.confirm_irreversible)
        form.addRow(self.confirm)
        bottom.addWidget(options, 1)
        layout.addLayout(bottom)

        self.status = QLabel("No file yet.")
        self.status.setObjectName("batch-status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = QPushButton("&Run")
        self.run_button.setObjectName("batch-run-button")
        self.run_button.setDefault(True)
        buttons.addButton(self.run_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        run_shortcut = QAction(self)
        run_shortcut.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        run_shortcut.triggered.connect(self.accept)
        self.addAction(run_shortcut)
        self._update()

    # ── state ───────────────────────────────────────────────────────────────────────────────

    @property
    def plan(self) -> BatchPlan | None:
        """The checked batch (None before a file is loaded, or while it is being checked)."""
        return self._plan

    @property
    def planning(self) -> bool:
        """Whether the file is being read or checked."""
        return self._planning > 0

    def is_ready(self) -> bool:
        """Whether Run is enabled."""
        return self.run_button.isEnabled()

    def report_lines(self) -> list[str]:
        """The lines of the report, as shown."""
        return [self.report.item(i).text() for i in range(self.report.count())]

    # ── the file ────────────────────────────────────────────────────────────────────────────

    def choose_file(self) -> None:
        """Ask for the CSV file (a file dialog over this one)."""
        start = str(self._path.parent) if self._path is not None else ""
        dialog = QFileDialog(self, "Choose the CSV file", start, "CSV files (*.csv *.tsv *.txt)")
        dialog.setObjectName("batch-file-dialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda chosen: self.load_csv(Path(chosen)))
        dialog.open()

    def load_csv(self, path: Path) -> None:
        """Read *path* (and its earlier results), map its columns and check every row."""
        self._path = path
        self.file_edit.setText(str(path))
        self._plan = None
        self._token += 1
        token = self._token
        self._planning += 1
        self._update()

        async def job() -> None:
            try:
                loaded = await self._host.tasks.call(_load_file, path)
                if token != self._token or self._gone:
                    return
                self._loaded = loaded
                rows = []
                if loaded.table is not None:
                    mapping = default_mapping(self._workflow, loaded.table.columns)
                    first = loaded.table.rows[0].cells
                    rows = [
                        _Mapping(c, first[i] if i < len(first) else "", mapping[c])
                        for i, c in enumerate(loaded.table.columns)
                    ]
                self.mapping_model.set_rows(rows)
                self._open_editors()
                self._mapping_stack.setCurrentIndex(1 if rows else 0)
                await self._check(token)
            finally:
                self._planning -= 1
                if not self._gone:
                    self._update()

        self._host.tasks.start(job(), label="Reading the CSV file…")

    def _open_editors(self) -> None:
        for row in range(self.mapping_model.rowCount()):
            self.mapping_view.openPersistentEditor(
                self.mapping_model.index(row, MappingModel.PARAMETER)
            )

    def _replan(self) -> None:
        self._token += 1
        token = self._token
        self._plan = None
        self._planning += 1
        self._update()

        async def job() -> None:
            try:
                await self._check(token)
            finally:
                self._planning -= 1
                if not self._gone:
                    self._update()

        self._host.tasks.start(job(), label="Checking the rows…")

    async def _check(self, token: int) -> None:
        loaded = self._loaded
        if loaded is None or loaded.table is None:
            self._show_report(None)
            return
        plan = await self._host.tasks.call(
            plan_batch,
            self._workflow,
            loaded.table,
            self.mapping_model.mapping(),
            explicit=self.mapping_model.explicit(),
        )
        done = previous_successes(plan, loaded.previous) if plan.ok else frozenset()
        if token != self._token or self._gone:
            return
        self._plan, self._done = plan, done
        self._show_report(plan)

    def _show_report(self, plan: BatchPlan | None) -> None:
        self.report.clear()
        loaded = self._loaded

        def add(text: str, color: QColor | None = None, tip: str = "") -> None:
            item = QListWidgetItem(text)
            if color is not None:
                item.setForeground(color)
            item.setToolTip(tip or text)
            self.report.addItem(item)

        if loaded is not None and loaded.error:
            add(f"✗ {loaded.error}", _RED)
            return
        if plan is None:
            return
        if loaded is not None and loaded.results_error:
            add(f"✗ {loaded.results_error}", _RED)
        for issue in plan.issues:
            if issue.blocking:
                add(f"✗ {issue}", _RED)
        for problem in plan.problems:
            add(f"✗ {problem}", _RED)
        for note in plan.notes():
            add(f"⚠ {note}", _AMBER)
        defaults = [
            f"{p.name} = {_shown_default(p.default)}"
            for p in plan.unmapped()
            if p.default is not None
        ]
        if defaults:
            add(
                "• Not in the file, so every row uses the default: " + ", ".join(defaults),
                _GREY,
            )
        if self._done:
            assert self._path is not None
            add(
                f"↻ {len(self._done)} row(s) succeeded in an earlier run "
                f"({results_path(self._path).name}); they are skipped",
                _GREY,
            )
        if plan.ok and not (loaded is not None and loaded.results_error):
            add(f"✓ {len(plan.rows)} row(s) checked: every value fits its parameter")

    # ── Run ─────────────────────────────────────────────────────────────────────────────────

    def _problem(self) -> str:
        """What keeps Run disabled ("" when nothing)."""
        if self._path is None:
            return "Choose a CSV file first."
        if self.planning:
            return "Checking the rows…"
        loaded = self._loaded
        if loaded is not None and loaded.error:
            return loaded.error
        if loaded is not None and loaded.results_error:
            return loaded.results_error
        plan = self._plan
        if plan is None:
            return "Checking the rows…"
        if not plan.ok:
            bad = len(plan.bad_lines)
            return (
                f"{bad} of {len(plan.table.rows)} row(s) cannot run; fix the file and "
                "choose it again"
                if bad
                else "Fix the columns first (see the check above)."
            )
        if len(self._done) == len(plan.rows):
            return "Every row has succeeded already; nothing to run."
        if self.secrets_form is not None and not self.secrets_form.is_valid():
            return self.secrets_form.error()
        text = self.base_url.text().strip()
        if text:
            try:
                check_base_url(text)
            except ProceduraError:
                return f"Base URL {text!r} is not an http(s) URL."
        return ""

    def _update(self) -> None:
        problem = self._problem()
        plan = self._plan
        todo = len(plan.rows) - len(self._done) if plan is not None else 0
        self.run_button.setEnabled(not problem)
        self.run_button.setText(
            f"&Run {todo} row{'s' if todo != 1 else ''}" if todo and not problem else "&Run"
        )
        self.run_button.setToolTip(problem or "Start the batch (Ctrl+Enter)")
        if problem:
            self.status.setText(problem)
            self.status.setStyleSheet(_ERROR_STYLE if plan is not None or self._loaded else "")
        else:
            skipped = f", {len(self._done)} skipped (succeeded before)" if self._done else ""
            assert self._path is not None
            self.status.setText(
                f"Ready: {todo} row(s) to run{skipped}. Results go to "
                f"{results_path(self._path).name} next to the file."
            )
            self.status.setStyleSheet("")
        parallel = self.parallel.value() > 1
        self.show_browser.setEnabled(not parallel)
        self.show_browser.setToolTip(
            "Rows that run at once always run headless."
            if parallel
            else "Unchecked, the browser runs headless (no window)."
        )

    def accept(self) -> None:
        """Start the batch in a batch window (only when every row can run)."""
        self._update()
        plan = self._plan
        if not self.is_ready() or plan is None or self._path is None or self._loaded is None:
            return
        parallel = self.parallel.value()
        secrets = self.secrets_form.secrets() if self.secrets_form is not None else {}
        request = RunRequest(
            version=self._setup.version,
            secrets=secrets,
            options=replay_options(
                self._host.backend.settings,
                trigger=RunTrigger.BATCH,
                confirm=self.confirm.isChecked(),
                use_llm=self.use_llm.isChecked(),
            ),
            base_url=self.base_url.text().strip() or None,
            headless=parallel > 1 or not self.show_browser.isChecked(),
            save_secrets=(self.secrets_form is not None and self.secrets_form.remember_secrets()),
        )
        results = ResultsFile(
            results_path(self._path),
            plan.input_columns,
            delimiter=plan.table.delimiter,
            secrets=tuple(v for v in secrets.values() if v),
        )
        window = BatchWindow(self._host, plan, results, request, parallel=parallel)
        self._host.adopt(window)
        window.show()
        window.start(self._loaded.previous)
        super().accept()

    # ── slots ───────────────────────────────────────────────────────────────────────────────

    def _on_finished(self, _result: int) -> None:
        self._gone = True  # jobs still reading or checking show nothing any more

    def _on_file_edit_return_pressed(self) -> None:
        text = self.file_edit.text().strip()
        if text:
            self.load_csv(Path(text).expanduser())

    def _on_mapping_model_mapping_edited(self) -> None:
        self._replan()

    def _on_secrets_form_validity_changed(self, _valid: bool) -> None:
        self._update()

    def _on_parallel_value_changed(self, _value: int) -> None:
        self._update()

    def _on_base_url_text_changed(self, _text: str) -> None:
        self._update()

    def _on_template_clicked(self) -> None:
        name = "".join(c if c.isalnum() else "-" for c in self._workflow.name.lower()).strip("-")
        dialog = QFileDialog(self, "Save a template", f"{name or 'batch'}.csv", "CSV files (*.csv)")
        dialog.setObjectName("batch-template-dialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("csv")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda chosen: self.save_template(Path(chosen)))
        dialog.open()

    def save_template(self, path: Path) -> None:
        """Write a CSV to fill in (the parameters as columns, their defaults as a first row)."""
        text = template_csv(self._workflow)

        async def job() -> None:
            await self._host.tasks.call(path.write_bytes, text.encode("utf-8-sig"))
            self._host.show_status(f"Saved {path.name}: fill it in, one row per run")

        self._host.tasks.start(job(), label="Saving the template…")


# ── the batch window ────────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Progress:
    line: int
    shown: str
    status: RowStatus | None = RowStatus.PENDING  # None: running
    run_id: str = ""
    error: str = ""
    seconds: float | None = None
    skipped: bool = False


_STATUS_TEXT: Final[dict[RowStatus, str]] = {
    RowStatus.PENDING: "Waiting",
    RowStatus.SUCCEEDED: "✓ Succeeded",
    RowStatus.UNVERIFIED: "⚠ Done, unverified",
    RowStatus.FAILED: "✗ Failed",
    RowStatus.ABORTED: "✗ Aborted",
    RowStatus.INTERRUPTED: "■ Interrupted",
}


class RowsProgressModel(RowsModel[_Progress]):
    """The rows of a batch as they run: values, status, run, time, error."""

    HEADERS = ("Row", "Values", "Status", "Run", "Time", "Error")
    LINE, VALUES, STATUS, RUN, TIME, ERROR = range(6)

    def entry(self, line: int) -> _Progress:
        """The row that starts on *line* of the file."""
        return next(p for p in self._rows if p.line == line)

    def statuses(self) -> dict[int, str]:
        """Line → the status text shown."""
        return {p.line: self._status_text(p) for p in self._rows}

    def update(self, line: int, **changes: Any) -> None:
        """Change the row on *line* and repaint it."""
        for row, item in enumerate(self._rows):
            if item.line == line:
                for name, value in changes.items():
                    setattr(item, name, value)
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))
                return

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        item = self.row_at(index)
        if item is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.LINE:
                return str(item.line)
            if column == self.VALUES:
                return item.shown
            if column == self.STATUS:
                return self._status_text(item)
            if column == self.RUN:
                return item.run_id[:8]
            if column == self.TIME:
                return f"{item.seconds:.1f} s" if item.seconds is not None else ""
            if column == self.ERROR:
                return item.error
        if role == Qt.ItemDataRole.ForegroundRole and column == self.STATUS:
            if item.status is None or item.status is RowStatus.PENDING:
                return None if item.status is None else _GREY
            return status_color(RunStatus(item.status.value))
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == self.ERROR and item.error:
                return item.error
            if column == self.VALUES:
                return item.shown
            if item.run_id:
                return "Double-click to open the run record"
        return None

    @staticmethod
    def _status_text(item: _Progress) -> str:
        if item.status is None:
            return "Running…"
        if item.skipped:
            return "✓ Succeeded before"
        return _STATUS_TEXT[item.status]


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
        self._task: asyncio.Task[BatchSummary] | None = None
        self._latest: tuple[RowResult, ...] = ()
        self._skipped: frozenset[int] = frozenset()
        self._started: dict[int, float] = {}
        self._began = 0.0
        self._closed = False
        self._remembered = False
        self.summary_result: BatchSummary | None = None
        self.person = DialogPerson(self) if parallel == 1 else None
        workflow = request.version.workflow
        self.setWindowTitle(f"Batch — {workflow.name}")
        self.resize(1000, 620)
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(500)
        self._elapsed.timeout.connect(self._on_elapsed_timeout)
        self._build()

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
        return self._task is not None and not self._task.done()

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
        self._task = self._host.tasks.start(
            run_batch(
                self._plan,
                self._run_row,
                save=self._save,
                parallel=self._parallel,
                previous=previous,
                on_started=self._on_row_started,
                on_finished=self._on_row_finished,
            ),
            label=f"Running a batch of “{self._request.version.workflow.name}”…",
            on_done=self._on_batch_done,
            on_error=self._on_batch_error,
        )
        if self._task is not None:
            self._task.add_done_callback(self._on_task_done)
            self._host.events.job_started.emit(self)

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
        assert self._task is not None
        self.status_label.setText("Stopping…")
        self.stop_button.setEnabled(False)
        self._task.cancel()

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
        if not self._closed:
            self.notice.setText(text)
            self.notice.show()

    def _save(self, results: tuple[RowResult, ...]) -> None:
        self._results.write(results)
        self._latest = results

    def _on_row_started(self, row: PlannedRow) -> None:
        self._started[row.line] = time.monotonic()
        if not self._closed:
            self.rows_model.update(row.line, status=None)
            self._update_progress()

    def _on_row_finished(self, result: RowResult) -> None:
        seconds = time.monotonic() - self._started.get(result.line, time.monotonic())
        if self._closed:
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

    def _on_batch_done(self, summary: BatchSummary) -> None:
        self._host.events.announce(run_changes(None, Origin.WINDOW))
        if not self._closed:
            self._finish(summary)

    def _on_batch_error(self, exc: BaseException) -> bool:
        if not self._closed:
            self._finish(None, describe_error(exc))
        return isinstance(exc, ProceduraError)

    def _on_task_done(self, task: asyncio.Task[BatchSummary]) -> None:
        if task.cancelled() and not self._closed:
            self._host.events.announce(run_changes(None, Origin.WINDOW))
            self._finish(None, "")

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
            color = _RED if error else _AMBER
        elif summary.all_succeeded:
            headline = f"✓ All {len(summary.results)} rows succeeded"
            color = status_color(RunStatus.SUCCEEDED) or _GREY
        elif summary.not_done:
            unverified = summary.count(RowStatus.UNVERIFIED)
            headline = f"✗ {summary.not_done} of {len(summary.results)} rows did not succeed" + (
                f", {unverified} done, unverified" if unverified else ""
            )
            color = _RED
        else:  # every row that did not succeed did every step: nothing showed the task was done
            unverified = summary.count(RowStatus.UNVERIFIED)
            headline = f"⚠ {unverified} of {len(summary.results)} rows done, unverified"
            color = status_color(RunStatus.UNVERIFIED) or _GREY
        self.outcome.setText(headline)
        self.outcome.setStyleSheet(f"color: {color.name()};")
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
        self._closed = True
        self._elapsed.stop()
        if self.running:
            assert self._task is not None
            self._task.cancel()
        event.accept()


def _shown_default(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _ignore(_event: object) -> None:
    """Per-step progress is not shown for a batch (each row's run record has it)."""
