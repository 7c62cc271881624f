"""The step editor window: a workflow's steps as cards and, after the last one, its success check
("Done when"); the selected step's details, its parameters and problems, with undo, save as a new
version, review and export.

Every edit goes through :mod:`desktop_app.core.editing` and becomes one :class:`SnapshotCommand`
on the undo stack; the stack's clean state is "same as the version saved".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import editing
from desktop_app.core.editing import EditError, Issue
from desktop_app.core.errors import BrowserError, NotFoundError
from desktop_app.core.models.target import Locator, LocatorStrategy
from desktop_app.core.models.workflow import (
    Expectation,
    Parameter,
    ParameterType,
    StepKind,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.templating import placeholders
from desktop_app.ui.backend import Backend, LocatorPreview
from desktop_app.ui.editor.commands import SnapshotCommand
from desktop_app.ui.editor.exports import (
    EXPORT_FORMATS,
    ExportFormat,
    build_export,
    default_file_name,
    write_files,
)
from desktop_app.ui.editor.parameters import ParameterPanel, WorkflowPanel
from desktop_app.ui.editor.step_form import StepForm
from desktop_app.ui.editor.steps_view import (
    KIND_LABELS,
    StepCardDelegate,
    StepListModel,
    ThumbnailCache,
)
from desktop_app.ui.editor.success import SuccessPanel
from desktop_app.ui.host import Host
from desktop_app.ui.tasks import describe_error

__all__ = ["EditorWindow", "LocatorTester"]

_STATUS_TEXT = {
    WorkflowStatus.DRAFT: "draft",
    WorkflowStatus.IN_REVIEW: "in review",
    WorkflowStatus.APPROVED: "approved",
    WorkflowStatus.ARCHIVED: "archived",
}


class LocatorTester:
    """The one live page "Test" buttons use: opened on the first test, reused after.

    A test on another address than the page was opened at opens that address instead.
    ``headless`` keeps the browser out of sight (tests set it).
    """

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._preview: LocatorPreview | None = None
        self._opened_at: str | None = None
        self._lock: asyncio.Lock | None = None
        self.headless = False
        self.opened = 0

    @property
    def is_open(self) -> bool:
        """Whether a test page is open."""
        return self._preview is not None

    async def count(self, url: str, locator: Locator, values: Mapping[str, str]) -> int:
        """How many elements *locator* finds on the test page (highlighting them there)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._preview is None or url != self._opened_at:
                await self._close()
                self._preview = await self._backend.open_preview(url, headless=self.headless)
                self._opened_at = url
                self.opened += 1
            try:
                return await self._preview.test(locator, values)
            except BrowserError:
                await self._close()
                raise

    async def close(self) -> None:
        """Close the test page and its browser, if open."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._close()

    async def _close(self) -> None:
        preview, self._preview, self._opened_at = self._preview, None, None
        if preview is not None:
            with contextlib.suppress(BrowserError):  # it was gone already
                await preview.close()


class EditorWindow(QMainWindow):
    """Edits one workflow; saving creates a new draft version and never touches an old one.

    Args:
        host: the main window.
        workflow_id: the workflow to edit.
        version: the version to start from (the latest when None).

    Signals:
        workflow_loaded(): the version was loaded and is shown.
        version_saved(int): a new version was saved (its number).
        save_refused(str): Save was pressed while the draft has errors (the reason).
    """

    workflow_loaded = Signal()
    version_saved = Signal(int)
    save_refused = Signal(str)

    def __init__(self, host: Host, workflow_id: str, version: int | None = None) -> None:
        super().__init__(host.window, Qt.WindowType.Window)
        self.setObjectName("editor-window")
        self.setWindowTitle("Step editor[*]")
        self.resize(1280, 820)
        self._host = host
        self._workflow_id = workflow_id
        self._requested_version = version
        self.base: WorkflowVersion | None = None
        self.workflow: Workflow | None = None
        self.issues: list[Issue] = []
        self.last_refusal: str | None = None
        self._discard = False
        self._closing_after_save = False
        self.tester = LocatorTester(host.backend)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_undo_stack_clean_changed)

        self.thumbnails = ThumbnailCache(host, self)
        self.steps_model = StepListModel(self.thumbnails, self)
        self.steps_model.move_requested.connect(self._on_steps_model_move_requested)
        self.steps_view = QListView()
        self.steps_view.setObjectName("editor-steps")
        self.steps_view.setModel(self.steps_model)
        self.steps_view.setItemDelegate(StepCardDelegate(self.steps_view))
        self.steps_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps_view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.steps_view.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.steps_view.setDragEnabled(True)
        self.steps_view.setAcceptDrops(True)
        self.steps_view.setDropIndicatorShown(True)
        self.steps_view.setUniformItemSizes(True)
        self.steps_view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.steps_view.setMinimumWidth(300)
        self.steps_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.steps_view.setToolTip("Drag a card to reorder; Ctrl+Up/Down moves the selected one")
        self.steps_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.steps_view.customContextMenuRequested.connect(self._on_steps_view_context_menu)
        self.steps_view.selectionModel().currentRowChanged.connect(
            self._on_steps_view_current_row_changed
        )

        self.steps_header = QLabel()
        self.steps_header.setObjectName("editor-steps-header")
        self.steps_empty = QLabel(
            "<h3>No steps</h3><p>Insert the first one with <b>Insert</b> (or Edit → Insert step), "
            "or record the task again.</p>"
        )
        self.steps_empty.setObjectName("editor-steps-empty")
        self.steps_empty.setWordWrap(True)
        self.steps_empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._steps_stack = QStackedWidget()
        self._steps_stack.addWidget(self.steps_view)
        self._steps_stack.addWidget(self.steps_empty)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(6, 6, 0, 6)
        left_layout.addWidget(self.steps_header)
        left_layout.addWidget(self._steps_stack, 1)
        self.success = SuccessPanel()
        self.success.check_added.connect(self._on_success_check_added)
        self.success.check_replaced.connect(self._on_success_check_replaced)
        self.success.check_removed.connect(self._on_success_check_removed)
        left_layout.addWidget(self.success)

        self.form = StepForm(self.thumbnails)
        self.form.step_edited.connect(self._on_form_step_edited)
        self.form.locators_edited.connect(self._on_form_locators_edited)
        self.form.locator_test_requested.connect(self._on_form_locator_test_requested)

        self.banner = QLabel("Loading…")
        self.banner.setObjectName("editor-banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "QLabel { background: palette(alternate-base); padding: 6px 10px;"
            " border-bottom: 1px solid palette(mid); }"
        )
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self.form)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setChildrenCollapsible(False)
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.banner)
        central_layout.addWidget(splitter, 1)
        self.setCentralWidget(central)

        self.parameters = ParameterPanel()
        self.parameters.add_requested.connect(self._on_parameters_add_requested)
        self.parameters.delete_requested.connect(self._on_parameters_delete_requested)
        self.parameters.rename_requested.connect(self._on_parameters_rename_requested)
        self.parameters.retype_requested.connect(self._on_parameters_retype_requested)
        self.parameters.update_requested.connect(self._on_parameters_update_requested)
        self.workflow_panel = WorkflowPanel()
        self.workflow_panel.workflow_edited.connect(self._on_workflow_panel_workflow_edited)
        self.problems = QListWidget()
        self.problems.setObjectName("editor-problems")
        self.problems.itemActivated.connect(self._on_problems_item_activated)
        self.problems.itemClicked.connect(self._on_problems_item_activated)

        self.parameters_dock = self._dock("Parameters", "editor-parameters-dock", self.parameters)
        self.workflow_dock = self._dock("Workflow", "editor-workflow-dock", self.workflow_panel)
        self.problems_dock = self._dock("Problems", "editor-problems-dock", self.problems)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.parameters_dock)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.workflow_dock)
        self.tabifyDockWidget(self.parameters_dock, self.workflow_dock)
        self.parameters_dock.raise_()
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.problems_dock)
        self._docks_sized = False

        self._add_actions()
        self._set_enabled(False)
        host.events.workflows_changed.connect(self._on_events_workflows_changed)
        self._host.tasks.start(self.reload(), label="Opening the workflow…")

    # ── loading ─────────────────────────────────────────────────────────────────────────────

    @property
    def workflow_id(self) -> str:
        """The id of the workflow edited."""
        return self._workflow_id

    @property
    def has_unsaved_changes(self) -> bool:
        """Whether the draft differs from the version it was loaded or last saved as."""
        return not self.undo_stack.isClean()

    async def reload(self) -> None:
        """Load the version to edit (discarding any draft and the undo history)."""
        version = await self._host.tasks.call(
            self._host.backend.workflows.get, self._workflow_id, self._requested_version
        )
        self.base = version
        self.undo_stack.clear()
        self._apply(version.workflow, None)
        self.undo_stack.setClean()
        if version.workflow.steps:
            self.select_step(0)
        start = editing.start_url(version.workflow)
        if start and not self.form.test_url.text():
            self.form.test_url.setText(start)
        self._set_enabled(True)
        self._update_banner()
        self.workflow_loaded.emit()

    def _on_events_workflows_changed(self, workflow_id: str) -> None:
        if workflow_id not in (self._workflow_id, "") or self.base is None:
            return
        number = self.base.version

        async def refresh() -> None:
            mine = await self._host.tasks.call(
                self._host.backend.workflows.get, self._workflow_id, number
            )
            if self.base is not None and mine.version == self.base.version:
                self.base = mine
                self._update_banner()

        def gone(exc: BaseException) -> bool:
            if not isinstance(exc, NotFoundError):
                return False
            self.banner.setText(
                "This workflow was deleted from the library. Saving puts it back as a new workflow."
            )
            return True

        self._host.tasks.start(refresh(), label="Refreshing…", on_error=gone)

    # ── showing a snapshot ──────────────────────────────────────────────────────────────────

    def _apply(self, workflow: Workflow, select: str | None) -> None:
        """Show *workflow* (a command's before or after) and select step *select*."""
        keep = self.current_step_id()
        self.workflow = workflow
        self.issues = editing.validate(workflow)
        by_step: dict[int, list[Issue]] = {}
        for issue in self.issues:
            if issue.step is not None:
                by_step.setdefault(issue.step, []).append(issue)
        self.steps_model.set_workflow(workflow, by_step)
        self._steps_stack.setCurrentWidget(self.steps_view if workflow.steps else self.steps_empty)
        self.thumbnails.request(s.screenshot for s in workflow.steps if s.screenshot is not None)
        self.parameters.show_workflow(workflow, self.issues)
        self.workflow_panel.show_workflow(workflow)
        self.success.show_workflow(workflow, self.issues)
        self._fill_problems()
        wanted = select or keep
        row = self.steps_model.row_of(wanted) if wanted is not None else None
        if row is None and workflow.steps:
            row = min(self.steps_view.currentIndex().row(), len(workflow.steps) - 1)
            row = max(row, 0)
        if row is not None and row != self.steps_view.currentIndex().row():
            self.steps_view.setCurrentIndex(self.steps_model.index(row))
        else:
            self._show_form()
        self._update_header()
        self._update_actions()

    def _show_form(self) -> None:
        row = self.current_row()
        workflow = self.workflow
        issues = [i for i in self.issues if i.step == row] if row is not None else []
        self.form.show_step(workflow, row, issues)

    def _on_steps_view_current_row_changed(
        self, current: QModelIndex, _previous: QModelIndex
    ) -> None:
        self._show_form()
        self._update_actions()

    def _fill_problems(self) -> None:
        self.problems.clear()
        style = self.style()
        for issue in self.issues:
            icon = style.standardIcon(
                QStyle.StandardPixmap.SP_MessageBoxCritical
                if issue.is_error
                else QStyle.StandardPixmap.SP_MessageBoxWarning
            )
            item = QListWidgetItem(icon, str(issue))
            item.setData(Qt.ItemDataRole.UserRole, issue)
            item.setToolTip("Click to go there")
            self.problems.addItem(item)
        if not self.issues:
            item = QListWidgetItem("No problems. Save creates a new version.")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.problems.addItem(item)
        errors = sum(1 for i in self.issues if i.is_error)
        warnings = len(self.issues) - errors
        title = "Problems"
        if self.issues:
            title += (
                f" — {errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
            )
        self.problems_dock.setWindowTitle(title)

    def _on_problems_item_activated(self, item: QListWidgetItem) -> None:
        issue = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(issue, Issue):
            self.go_to(issue)

    def go_to(self, issue: Issue) -> None:
        """Show where *issue* is: its step and field, its parameter, the success check, or the
        workflow panel."""
        if issue.is_success:
            self.success.select(issue.success_index)
        elif issue.step is not None:
            self.select_step(issue.step)
            self.form.focus_field(issue.field)
        elif issue.parameter is not None:
            self.parameters_dock.show()
            self.parameters_dock.raise_()
            self.parameters.select(issue.parameter)
        else:
            self.workflow_dock.show()
            self.workflow_dock.raise_()

    def _update_header(self) -> None:
        workflow = self.workflow
        if workflow is None:
            return
        count = len(workflow.steps)
        errors = sum(1 for i in self.issues if i.is_error)
        text = f"<b>{count} step{'s' * (count != 1)}</b>"
        if errors:
            text += f" · <span style='color:#b3261e'>{errors} to fix before saving</span>"
        self.steps_header.setText(text)
        base = self.base
        suffix = f" — v{base.version} ({_STATUS_TEXT[base.status]})" if base is not None else ""
        self.setWindowTitle(f"{workflow.name}{suffix} — Step editor[*]")

    def _update_banner(self) -> None:
        base = self.base
        if base is None:
            return
        status = _STATUS_TEXT[base.status]
        self.banner.setText(
            f"Editing version {base.version} ({status}). Saving creates a new draft version; "
            f"version {base.version} stays exactly as it is."
        )
        self._update_header()
        self._update_actions()

    # ── selection ───────────────────────────────────────────────────────────────────────────

    def current_row(self) -> int | None:
        """The index of the selected step, if any."""
        index = self.steps_view.currentIndex()
        return index.row() if index.isValid() else None

    def current_step_id(self) -> str | None:
        """The id of the selected step, if any."""
        row = self.current_row()
        return self.steps_model.step(row).id if row is not None else None

    def select_step(self, row: int) -> None:
        """Select step *row* (from 0)."""
        self.steps_view.setCurrentIndex(self.steps_model.index(row))
        self.steps_view.scrollTo(self.steps_model.index(row))

    # ── edits ───────────────────────────────────────────────────────────────────────────────

    def push(self, text: str, after: Workflow, *, select: str | None = None) -> bool:
        """Make *after* the draft as one undoable edit called *text*; False if nothing changed."""
        before = self.workflow
        if before is None or after == before:
            return False
        self.form.clear_error()
        command = SnapshotCommand(
            self._apply,
            before,
            after,
            text,
            select_before=self.current_step_id(),
            select_after=select or self.current_step_id(),
        )
        self.undo_stack.push(command)
        return True

    def insert_step(self, kind: StepKind, row: int | None = None) -> None:
        """Insert a new step of *kind* after the selected one (or at *row*), and select it."""
        if self.workflow is None:
            return
        if row is None:
            current = self.current_row()
            row = current + 1 if current is not None else len(self.workflow.steps)
        step = editing.blank_step(kind)
        after = editing.insert_step(self.workflow, row, step)
        inserted = after.steps[row].id
        if self.push(f"Insert step {row + 1} ({KIND_LABELS[kind]})", after, select=inserted):
            self.form.title.setFocus()
            self.form.title.selectAll()

    def delete_selected(self) -> None:
        """Delete the selected step."""
        row = self.current_row()
        if self.workflow is None or row is None:
            return
        after = editing.delete_step(self.workflow, row)
        select = after.steps[min(row, len(after.steps) - 1)].id if after.steps else None
        self.push(f"Delete step {row + 1}", after, select=select)

    def duplicate_selected(self) -> None:
        """Put a copy of the selected step after it, and select the copy."""
        row = self.current_row()
        if self.workflow is None or row is None:
            return
        after = editing.duplicate_step(self.workflow, row)
        self.push(f"Duplicate step {row + 1}", after, select=after.steps[row + 1].id)

    def move_selected(self, delta: int) -> None:
        """Move the selected step up (-1) or down (+1)."""
        row = self.current_row()
        if row is not None:
            self.move_step(row, row + delta)

    def move_step(self, source: int, destination: int) -> None:
        """Move step *source* so that it ends up at *destination* (one undoable edit)."""
        workflow = self.workflow
        if workflow is None or not 0 <= destination < len(workflow.steps) or source == destination:
            return
        moved = workflow.steps[source].id
        after = editing.move_step(workflow, source, destination)
        self.push(f"Move step {source + 1} to {destination + 1}", after, select=moved)

    def edit_step(self, row: int, what: str = "Edit", **changes: object) -> bool:
        """Change fields of step *row* as one edit; False (and the reason shown) if refused."""
        if self.workflow is None:
            return False
        try:
            after = editing.update_step(self.workflow, row, **changes)
        except EditError as exc:
            self.form.show_error(str(exc))
            self._show_form()
            return False
        return self.push(f"{what} (step {row + 1})", after, select=self.workflow.steps[row].id)

    def set_locators(
        self, row: int, locators: tuple[Locator, ...], what: str = "Edit locators"
    ) -> bool:
        """Give step *row* these locators, best first, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.set_locators(self.workflow, row, locators)
        except EditError as exc:
            self.form.show_error(str(exc))
            return False
        return self.push(f"{what} (step {row + 1})", after, select=self.workflow.steps[row].id)

    def _on_steps_model_move_requested(self, source: int, destination: int) -> None:
        self.move_step(source, destination)

    def _on_form_step_edited(self, step_id: str, changes: dict[str, object], what: str) -> None:
        row = self.steps_model.row_of(step_id)
        if row is not None:
            self.edit_step(row, what, **changes)

    def _on_form_locators_edited(self, step_id: str, locators: object, what: str) -> None:
        row = self.steps_model.row_of(step_id)
        if row is not None and isinstance(locators, tuple):
            self.set_locators(row, locators, what)

    # ── the success check ("done when") ─────────────────────────────────────────────────────

    def add_success_check(self, check: Expectation) -> bool:
        """Add *check* to the success check, as one edit."""
        if self.workflow is None:
            return False
        after = editing.add_success_check(self.workflow, check)
        done = self.push("Add a success check", after)
        self.success.select(len(after.success) - 1)
        return done

    def replace_success_check(self, index: int, check: Expectation) -> bool:
        """Make check *index* of the success check *check*, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.replace_success_check(self.workflow, index, check)
        except EditError as exc:
            self._host.show_status(str(exc))
            return False
        done = self.push(f"Edit success check {index + 1}", after)
        self.success.select(index)
        return done

    def remove_success_check(self, index: int) -> bool:
        """Remove check *index* of the success check, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.remove_success_check(self.workflow, index)
        except EditError as exc:
            self._host.show_status(str(exc))
            return False
        return self.push(f"Remove success check {index + 1}", after)

    def _on_success_check_added(self, check: object) -> None:
        self.add_success_check(cast(Expectation, check))

    def _on_success_check_replaced(self, index: int, check: object) -> None:
        self.replace_success_check(index, cast(Expectation, check))

    def _on_success_check_removed(self, index: int) -> None:
        self.remove_success_check(index)

    # ── parameters and the workflow ─────────────────────────────────────────────────────────

    def add_parameter(self, name: str | None = None) -> str | None:
        """Add a text parameter (a fresh name unless *name*) and select it; its name."""
        if self.workflow is None:
            return None
        chosen = name or editing.new_parameter_name(self.workflow)
        try:
            after = editing.add_parameter(self.workflow, Parameter(name=chosen))
        except (EditError, ValueError) as exc:
            self.parameters.show_error(describe_error(exc))
            return None
        self.push(f"Add parameter {{{chosen}}}", after)
        self.parameters.select(chosen)
        self.parameters.name.setFocus()
        self.parameters.name.selectAll()
        return chosen

    def rename_parameter(self, old: str, new: str) -> bool:
        """Rename a parameter and every placeholder using it, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.rename_parameter(self.workflow, old, new)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        uses = editing.parameter_uses(self.workflow, old)
        done = self.push(f"Rename {{{old}}} to {{{new}}} ({uses} places)", after)
        self.parameters.select(new)
        return done

    def retype_parameter(
        self, name: str, type_: ParameterType, choices: tuple[str, ...] | None = None
    ) -> bool:
        """Give a parameter another type (its default goes if the type cannot take it)."""
        if self.workflow is None:
            return False
        try:
            after = editing.retype_parameter(self.workflow, name, type_, choices=choices)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        done = self.push(f"Make {{{name}}} {type_.value}", after)
        self.parameters.select(name)
        return done

    def update_parameter(self, name: str, **changes: object) -> bool:
        """Change a parameter's description, default (``default_text`` as typed) or required."""
        workflow = self.workflow
        param = workflow.parameter(name) if workflow is not None else None
        if workflow is None or param is None:
            return False
        try:
            if "default_text" in changes:
                text = str(changes.pop("default_text"))
                changes["default"] = editing.parse_default(param.type, text, param.choices)
            after = editing.update_parameter(workflow, name, **changes)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        done = self.push(f"Edit {{{name}}}", after)
        self.parameters.select(name)
        return done

    def delete_parameter(self, name: str) -> bool:
        """Remove a parameter (steps still using it show a problem)."""
        if self.workflow is None:
            return False
        try:
            after = editing.delete_parameter(self.workflow, name)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        return self.push(f"Remove parameter {{{name}}}", after)

    def _on_parameters_add_requested(self) -> None:
        self.add_parameter()

    def _on_parameters_delete_requested(self, name: str) -> None:
        self.delete_parameter(name)

    def _on_parameters_rename_requested(self, old: str, new: str) -> None:
        self.rename_parameter(old, new)

    def _on_parameters_retype_requested(self, name: str, type_: object, choices: object) -> None:
        if isinstance(type_, ParameterType):
            self.retype_parameter(name, type_, choices if isinstance(choices, tuple) else None)

    def _on_parameters_update_requested(self, name: str, changes: dict[str, object]) -> None:
        self.update_parameter(name, **changes)

    def _on_workflow_panel_workflow_edited(self, changes: dict[str, object], what: str) -> None:
        if self.workflow is None:
            return
        try:
            after = editing.update_workflow(self.workflow, **changes)
        except EditError as exc:
            self._host.show_status(str(exc))
            self.workflow_panel.show_workflow(self.workflow)
            return
        self.push(what, after)

    # ── saving and review ───────────────────────────────────────────────────────────────────

    async def save(self, change_note: str = "") -> WorkflowVersion:
        """Save the draft as a new version (the version it started from stays as it was).

        Raises:
            EditError: the draft has errors (nothing is saved).
        """
        if self.workflow is None or self.base is None:
            raise EditError("the workflow is still loading")
        final = editing.finalize(self.workflow)
        backend = self._host.backend
        result = await self._host.tasks.call(
            backend.workflows.save,
            final,
            actor=backend.settings.actor,
            change_note=change_note.strip(),
            parent_version=self.base.version,
        )
        saved = result.version
        self.base = saved
        self.workflow = saved.workflow
        self.undo_stack.setClean()
        self._update_banner()
        if result.created:
            self._host.show_status(f"Saved version {saved.version} of “{saved.workflow.name}”")
            self._host.events.workflows_changed.emit(self._workflow_id)
            self.version_saved.emit(saved.version)
        else:
            self._host.show_status(f"Nothing to save: same as version {saved.version}")
        return saved

    async def submit(self, comment: str = "") -> WorkflowVersion:
        """Submit the saved version for review."""
        if self.base is None:
            raise EditError("the workflow is still loading")
        backend = self._host.backend
        updated = await self._host.tasks.call(
            backend.workflows.submit,
            self._workflow_id,
            actor=backend.settings.actor,
            version=self.base.version,
            comment=comment.strip(),
        )
        self.base = updated
        self._update_banner()
        self._host.show_status(f"Version {updated.version} is waiting for review")
        self._host.events.workflows_changed.emit(self._workflow_id)
        return updated

    def commit_pending(self) -> None:
        """Commit the field being typed in (as leaving it would), so Save or Close sees it."""
        focus = QApplication.focusWidget()
        if focus is not None and self.isAncestorOf(focus):
            focus.clearFocus()  # its focus-out commits the edit
            focus.setFocus(Qt.FocusReason.OtherFocusReason)

    def request_save(self, *, then_close: bool = False) -> None:
        """What Save (Ctrl+S) does: refuse with the reason, or ask for a note and save."""
        self.commit_pending()
        workflow = self.workflow
        if workflow is None:
            return
        blocking = editing.errors(workflow)
        if blocking:
            self._refuse_save(blocking)
            return
        if not self.has_unsaved_changes:
            self._host.show_status("No changes to save")
            if then_close:
                self._discard = True
                self.close()
            return
        note, ok = QInputDialog.getText(
            self,
            "Save a new version",
            "What changed? (optional; shown in the version history)",
        )
        if not ok:
            return

        def saved(_version: WorkflowVersion) -> None:
            if then_close:
                self._discard = True
                self.close()

        self._host.tasks.start(self.save(note), label="Saving…", on_done=saved)

    def _refuse_save(self, blocking: list[Issue]) -> None:
        count = len(blocking)
        reason = (
            f"Cannot save: {count} problem{'s' * (count != 1)} must be fixed first. {blocking[0]}"
        )
        self.last_refusal = reason
        self.problems_dock.show()
        self.problems_dock.raise_()
        first = blocking[0]
        for i in range(self.problems.count()):
            if self.problems.item(i).data(Qt.ItemDataRole.UserRole) == first:
                self.problems.setCurrentRow(i)
                break
        self.go_to(first)
        self._host.show_status(reason)
        box = QMessageBox(QMessageBox.Icon.Warning, "Cannot save yet", reason, parent=self)
        box.setObjectName("editor-save-refused")
        box.setInformativeText("The Problems list shows each one; click a problem to go there.")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.save_refused.emit(reason)

    def request_submit(self) -> None:
        """What Submit for review does: the saved version goes to review, with a comment."""
        if self.base is None:
            return
        self.commit_pending()
        if self.has_unsaved_changes:
            QMessageBox.information(
                self,
                "Save first",
                "Review is for a saved version: save your changes first, then submit.",
            )
            return
        comment, ok = QInputDialog.getText(
            self, "Submit for review", "A note for the reviewer (optional):"
        )
        if ok:
            self._host.tasks.start(self.submit(comment), label="Submitting for review…")

    # ── locator tests ───────────────────────────────────────────────────────────────────────

    def _test_values(self) -> dict[str, str]:
        workflow = self.workflow
        values: dict[str, str] = {}
        for param in workflow.parameters if workflow is not None else ():
            if param.type is ParameterType.SECRET or param.default is None:
                continue
            default = param.default
            values[param.name] = (
                ("true" if default else "false") if isinstance(default, bool) else str(default)
            )
        return values

    async def test_locator(self, row: int, locator_row: int) -> int | None:
        """Test locator *locator_row* of step *row* on the test page; the number of matches.

        The result shows beside the locator ("1 match", "3 matches", "no match") and the
        matches are outlined in the test page. None when it could not be tested (the reason
        shows instead).
        """
        workflow = self.workflow
        if workflow is None:
            return None
        step = workflow.steps[row]
        target = step.target_or_none
        if target is None or not 0 <= locator_row < len(target.locators):
            return None
        locator = target.locators[locator_row]
        url = self.form.test_url.text().strip()
        values = self._test_values()
        if not url:
            self.form.set_test_result(step.id, locator_row, "type the page address above", "bad")
            self.form.test_url.setFocus()
            return None
        if locator.strategy is LocatorStrategy.IMAGE_ANCHOR:
            self.form.set_test_result(step.id, locator_row, "desktop only", "warn")
            return None
        scope = locator.within
        texts = f"{locator.value} {locator.name or ''} {scope.text if scope is not None else ''}"
        needed = [n for n in placeholders(texts) if n not in values]
        if needed:
            self.form.set_test_result(
                step.id, locator_row, f"give {{{needed[0]}}} a default to test", "warn"
            )
            return None
        self.form.set_test_result(step.id, locator_row, "testing…", "busy")
        try:
            count = await self.tester.count(url, locator, values)
        except BrowserError as exc:
            self.form.set_test_result(step.id, locator_row, "could not test", "bad")
            raise exc
        text = "no match" if count == 0 else "1 match" if count == 1 else f"{count} matches"
        tone = "good" if count == 1 else "bad" if count == 0 else "warn"
        self.form.set_test_result(step.id, locator_row, text, tone)
        self._host.show_status(f"{locator.describe()}: {text} on {self.form.test_url.text()}")
        return count

    def _on_form_locator_test_requested(self, step_id: str, locator_row: int) -> None:
        row = self.steps_model.row_of(step_id)
        if row is not None:
            self._host.tasks.start(
                self.test_locator(row, locator_row), label="Testing the locator…"
            )

    # ── export ──────────────────────────────────────────────────────────────────────────────

    async def export(self, fmt: str, path: Path) -> Path:
        """Write the saved version in *fmt* (``playwright``, ``markdown``, ``html``, ``bundle``)."""
        version = self.base
        if version is None:
            raise EditError("the workflow is still loading")
        backend = self._host.backend

        def build_and_write() -> int:
            files = build_export(fmt, version, backend.workflows, backend.media, path)
            write_files(files)
            return len(files) - 1

        images = await self._host.tasks.call(build_and_write)
        extra = f" and {images} screenshot{'s' * (images != 1)}" if images else ""
        self._host.show_status(f"Exported version {version.version} to {path}{extra}")
        return path

    def request_export(self, fmt: ExportFormat) -> None:
        """What File → Export → *fmt* does: ask where, then write the saved version there."""
        base = self.base
        if base is None:
            return
        self.commit_pending()
        if self.has_unsaved_changes:
            answer = QMessageBox.question(
                self,
                "Export the saved version?",
                f"Export exports version {base.version} as saved; your unsaved changes are not "
                "in it. Export it anyway?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        suggested = Path.home() / default_file_name(base.workflow.name, fmt)
        name, _ = QFileDialog.getSaveFileName(
            self, f"Export {fmt.label.rstrip('…')}", str(suggested), fmt.file_filter
        )
        if not name:
            return
        path = Path(name)
        if not path.suffix:
            path = path.with_suffix(fmt.suffix)
        self._host.tasks.start(self.export(fmt.key, path), label=f"Exporting to {path.name}…")

    # ── actions ─────────────────────────────────────────────────────────────────────────────

    def _action(
        self,
        text: str,
        name: str,
        slot: object,
        shortcut: str | QKeySequence.StandardKey = "",
        tip: str = "",
    ) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(f"{tip} ({action.shortcut().toString()})" if shortcut else tip)
        action.triggered.connect(slot)
        return action

    def _add_actions(self) -> None:
        self.action_save = self._action(
            "&Save",
            "action-save",
            lambda: self.request_save(),
            QKeySequence.StandardKey.Save,
            "Save as a new version",
        )
        self.action_submit = self._action(
            "Submit for &review…",
            "action-submit",
            self.request_submit,
            "",
            "Send the saved version to review (only approved versions run from the tray)",
        )
        self.action_close = self._action("&Close", "action-close", self.close, "Ctrl+W")
        self.action_undo = self.undo_stack.createUndoAction(self, "&Undo")
        self.action_undo.setObjectName("action-undo")
        self.action_undo.setShortcuts([QKeySequence("Ctrl+Z")])
        self.action_redo = self.undo_stack.createRedoAction(self, "&Redo")
        self.action_redo.setObjectName("action-redo")
        self.action_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.action_insert = self._action(
            "&Insert step…",
            "action-insert",
            self._popup_insert_menu,
            "Insert",
            "Insert a step after the selected one",
        )
        self.action_duplicate = self._action(
            "D&uplicate step",
            "action-duplicate",
            self.duplicate_selected,
            "Ctrl+D",
            "Put a copy of the selected step after it",
        )
        self.action_delete = self._action(
            "&Delete step",
            "action-delete",
            self.delete_selected,
            "Delete",
            "Delete the selected step",
        )
        # Delete only when the step list has the focus: in a text field it deletes characters.
        self.action_delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.steps_view.addAction(self.action_delete)
        self.action_move_up = self._action(
            "Move step &up",
            "action-move-up",
            lambda: self.move_selected(-1),
            "Ctrl+Up",
            "Move the selected step one up",
        )
        self.action_move_down = self._action(
            "Move step do&wn",
            "action-move-down",
            lambda: self.move_selected(1),
            "Ctrl+Down",
            "Move the selected step one down",
        )
        self.insert_menu = QMenu("Insert step", self)
        self.insert_menu.setObjectName("editor-insert-menu")
        self.insert_actions: dict[str, QAction] = {}
        for kind in editing.INSERTABLE_KINDS:
            action = QAction(KIND_LABELS[kind], self.insert_menu)
            action.setObjectName(f"action-insert-{kind}")
            action.triggered.connect(lambda _=False, k=kind: self.insert_step(k))
            self.insert_menu.addAction(action)
            self.insert_actions[kind] = action
        self.export_actions: dict[str, QAction] = {}

        menus = self.menuBar()
        file_menu = menus.addMenu("&File")
        file_menu.addAction(self.action_save)
        file_menu.addAction(self.action_submit)
        file_menu.addSeparator()
        export_menu = file_menu.addMenu("&Export")
        export_menu.setObjectName("editor-export-menu")
        for fmt in EXPORT_FORMATS:
            action = QAction(fmt.label, self)
            action.setObjectName(f"action-export-{fmt.key}")
            action.setStatusTip(fmt.tip)
            action.triggered.connect(lambda _=False, f=fmt: self.request_export(f))
            export_menu.addAction(action)
            self.export_actions[fmt.key] = action
        file_menu.addSeparator()
        file_menu.addAction(self.action_close)
        edit_menu = menus.addMenu("&Edit")
        edit_menu.addAction(self.action_undo)
        edit_menu.addAction(self.action_redo)
        edit_menu.addSeparator()
        edit_menu.addMenu(self.insert_menu)
        edit_menu.addAction(self.action_duplicate)
        edit_menu.addAction(self.action_delete)
        edit_menu.addAction(self.action_move_up)
        edit_menu.addAction(self.action_move_down)
        view_menu = menus.addMenu("&View")
        for dock in (self.parameters_dock, self.workflow_dock, self.problems_dock):
            view_menu.addAction(dock.toggleViewAction())
        for action in (self.action_insert,):
            self.addAction(action)

        toolbar = self.addToolBar("Editor")
        toolbar.setObjectName("editor-toolbar")
        toolbar.setMovable(False)
        toolbar.addAction(self.action_save)
        # The menu's Undo/Redo say what they undo; the toolbar's stay short.
        undo = self._action("Undo", "toolbar-undo", self.undo_stack.undo, "", "Undo the last edit")
        redo = self._action(
            "Redo", "toolbar-redo", self.undo_stack.redo, "", "Redo what was undone"
        )
        undo.setEnabled(False)
        redo.setEnabled(False)
        self.undo_stack.canUndoChanged.connect(undo.setEnabled)
        self.undo_stack.canRedoChanged.connect(redo.setEnabled)
        toolbar.addAction(undo)
        toolbar.addAction(redo)
        toolbar.addSeparator()
        insert_button = QToolButton()
        insert_button.setObjectName("editor-insert-button")
        insert_button.setText("Insert")
        insert_button.setToolTip("Insert a step after the selected one (Insert)")
        insert_button.setMenu(self.insert_menu)
        insert_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        toolbar.addWidget(insert_button)
        toolbar.addAction(self.action_duplicate)
        toolbar.addAction(self.action_delete)
        toolbar.addAction(self.action_move_up)
        toolbar.addAction(self.action_move_down)
        toolbar.addSeparator()
        toolbar.addAction(self.action_submit)

    def _popup_insert_menu(self) -> None:
        index = self.steps_view.currentIndex()
        if index.isValid():
            rect = self.steps_view.visualRect(index)
            where = self.steps_view.viewport().mapToGlobal(rect.bottomLeft())
        else:
            where = self.steps_view.mapToGlobal(QPoint(20, 20))
        self.insert_menu.popup(where)

    def _on_steps_view_context_menu(self, point: QPoint) -> None:
        menu = QMenu(self)
        menu.addMenu(self.insert_menu)
        menu.addAction(self.action_duplicate)
        menu.addAction(self.action_delete)
        menu.addSeparator()
        menu.addAction(self.action_move_up)
        menu.addAction(self.action_move_down)
        menu.popup(self.steps_view.viewport().mapToGlobal(point))

    def _update_actions(self) -> None:
        row = self.current_row()
        count = len(self.workflow.steps) if self.workflow is not None else 0
        has = row is not None
        self.action_duplicate.setEnabled(has)
        self.action_delete.setEnabled(has)
        self.action_move_up.setEnabled(has and row is not None and row > 0)
        self.action_move_down.setEnabled(has and row is not None and row < count - 1)
        base = self.base
        can_submit = (
            base is not None
            and base.status is WorkflowStatus.DRAFT
            and not self.has_unsaved_changes
        )
        self.action_submit.setEnabled(can_submit)

    def _set_enabled(self, on: bool) -> None:
        for widget in (
            self.steps_view,
            self.form,
            self.parameters,
            self.workflow_panel,
            self.success,
        ):
            widget.setEnabled(on)
        for action in (self.action_save, self.action_insert, *self.export_actions.values()):
            action.setEnabled(on)
        self.insert_menu.setEnabled(on)

    def _on_undo_stack_clean_changed(self, clean: bool) -> None:
        self.setWindowModified(not clean)
        self._update_actions()

    def _dock(self, title: str, name: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetMovable
        )
        return dock

    def showEvent(self, event: QShowEvent) -> None:
        """Give the docks their first sizes once the window has its own."""
        super().showEvent(event)
        if not self._docks_sized:
            self._docks_sized = True
            self.resizeDocks([self.parameters_dock], [380], Qt.Orientation.Horizontal)
            self.resizeDocks([self.problems_dock], [110], Qt.Orientation.Vertical)

    # ── closing ─────────────────────────────────────────────────────────────────────────────

    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask about unsaved changes (Save / Discard / Cancel), then close the test page."""
        if not self._discard:
            self.commit_pending()
        if self.has_unsaved_changes and not self._discard:
            answer = QMessageBox.question(
                self,
                "Unsaved changes",
                f"Save your changes to “{self.workflow.name if self.workflow else ''}” as a new "
                "version before closing?",
                QMessageBox.StandardButton.Save
                | QMessageBox.StandardButton.Discard
                | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Save,
            )
            if answer == QMessageBox.StandardButton.Cancel:
                event.ignore()
                return
            if answer == QMessageBox.StandardButton.Save:
                event.ignore()
                self.request_save(then_close=True)
                return
        event.accept()
        if self.tester.is_open:
            self._host.tasks.start(self.tester.close(), label="Closing the test page…")
        super().closeEvent(event)
