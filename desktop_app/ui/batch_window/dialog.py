"""The batch dialog: the CSV file, the column mapping, the check, the secrets and the options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
)

from desktop_app.core.batch import (
    BatchFileError,
    BatchPlan,
    BatchTable,
    ResultsFile,
    RowResult,
    default_mapping,
    plan_batch,
    previous_successes,
    read_results,
    read_table,
    results_path,
    template_csv,
)
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.run import RunTrigger
from desktop_app.core.models.workflow import ParameterType
from desktop_app.core.replay.render import check_base_url
from desktop_app.ops.run import replay_options
from desktop_app.ui import theme
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.batch_window.mapping import MappingModel, _Mapping, _ParameterDelegate
from desktop_app.ui.batch_window.window import BatchWindow
from desktop_app.ui.host import Host
from desktop_app.ui.parameter_form import ParameterForm
from desktop_app.ui.run_view import RunSetup, load_setup
from desktop_app.ui.windows import bring_forward, fit_window

__all__ = ["MAX_PARALLEL", "BatchDialog", "open_batch"]

#: The most rows a batch runs at once from the window.
MAX_PARALLEL: Final = 8


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
            theme.set_role(warning, "banner", "warning")
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
        self.mapping_view.setAccessibleName("Columns and parameters")
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
            self.secrets_form = ParameterForm(
                only_secrets, secrets=setup.stored_secrets, stored=setup.stored_secrets
            )
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
        self.fleet_button: QPushButton | None = None
        if host.backend.fleet_enabled():  # team mode with a runner fleet
            self.fleet_button = QPushButton("Send to the &fleet")
            self.fleet_button.setObjectName("batch-fleet-button")
            self.fleet_button.clicked.connect(self._on_fleet_button_clicked)
            buttons.addButton(self.fleet_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        run_shortcut = QAction(self)
        run_shortcut.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        run_shortcut.triggered.connect(self.accept)
        self.addAction(run_shortcut)
        self._update()
        fit_window(self, QSize(900, 700), remember="batch-dialog")

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
            add(f"✗ {loaded.error}", theme.color("error"))
            return
        if plan is None:
            return
        if loaded is not None and loaded.results_error:
            add(f"✗ {loaded.results_error}", theme.color("error"))
        for issue in plan.issues:
            if issue.blocking:
                add(f"✗ {issue}", theme.color("error"))
        for problem in plan.problems:
            add(f"✗ {problem}", theme.color("error"))
        for note in plan.notes():
            add(f"⚠ {note}", theme.color("warning"))
        defaults = [
            f"{p.name} = {_shown_default(p.default)}"
            for p in plan.unmapped()
            if p.default is not None
        ]
        if defaults:
            add(
                "• Not in the file, so every row uses the default: " + ", ".join(defaults),
                theme.color("muted"),
            )
        if self._done:
            assert self._path is not None
            add(
                f"↻ {len(self._done)} row(s) succeeded in an earlier run "
                f"({results_path(self._path).name}); they are skipped",
                theme.color("muted"),
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
            theme.set_tone(self.status, "error" if plan is not None or self._loaded else None)
        else:
            skipped = f", {len(self._done)} skipped (succeeded before)" if self._done else ""
            assert self._path is not None
            self.status.setText(
                f"Ready: {todo} row(s) to run{skipped}. Results go to "
                f"{results_path(self._path).name} next to the file."
            )
            theme.set_tone(self.status, None)
        if self.fleet_button is not None:
            reason = self._fleet_problem()
            self.fleet_button.setEnabled(not reason)
            self.fleet_button.setToolTip(
                reason
                or "Run every row on the team's runner fleet (the Fleet screen follows them); "
                "each worker uses the secrets in its own keyring"
            )
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
        previous = self._loaded.previous
        super().accept()  # first: the dialog gone, its parent comes forward; then the window
        bring_forward(window)
        window.start(previous)

    def _fleet_problem(self) -> str:
        """Why the rows cannot go to the fleet ("" when they can)."""
        plan = self._plan
        if self._setup.unapproved:
            return "The fleet runs approved versions only."
        if plan is None or self.planning:
            return "Choose a CSV file first." if self._loaded is None else "Checking the rows…"
        if not plan.ok or not plan.rows:
            return "Every row must be right before anything is sent."
        return ""

    def send_to_fleet(self) -> None:
        """Hand every row to the team's fleet, then show the Fleet screen."""
        plan = self._plan
        if self._fleet_problem() or plan is None:
            return
        rows = [dict(row.given) for row in plan.rows]
        version = self._setup.version
        assume_yes = not self.confirm.isChecked()
        backend = self._host.backend

        async def job() -> None:
            done = await self._host.tasks.call(
                backend.submit_to_fleet, version, rows, assume_yes=assume_yes
            )
            self._host.show_status(
                f"Sent {done.total} row{'s' if done.total != 1 else ''} of “{done.name}” "
                "to the fleet"
            )
            if not self._gone:
                self.accept_without_running()
            self._host.show_fleet()

        self._host.tasks.start(job(), label="Sending the rows to the fleet…")

    def accept_without_running(self) -> None:
        """Close the dialog as done (the rows went elsewhere)."""
        QDialog.accept(self)

    # ── slots ───────────────────────────────────────────────────────────────────────────────

    def _on_fleet_button_clicked(self) -> None:
        self.send_to_fleet()

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


def _shown_default(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
