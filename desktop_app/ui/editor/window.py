"""The step editor window: a workflow's steps as cards and, after the last one, its success check
("Done when"); the selected step's details, its parameters and problems, with undo, save as a new
version, review and export.

Every edit goes through :mod:`desktop_app.core.editing` and becomes one :class:`SnapshotCommand`
on the undo stack; the stack's clean state is "same as the version saved".

The window is put together from parts: :mod:`.window_base` (its widgets and showing a snapshot),
:mod:`.edits` (the undoable edits), :mod:`.actions` (menus and toolbar) and
:mod:`.locator_tester` (the "Test" buttons).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QListView,
    QListWidget,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import editing
from desktop_app.core.editing import EditError, Issue
from desktop_app.core.errors import NotFoundError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.workflow import Workflow, WorkflowVersion
from desktop_app.ops.changes import Origin
from desktop_app.ops.edit import save_draft
from desktop_app.ops.export import ExportChoice
from desktop_app.ops.review import Decision, decide
from desktop_app.ui.editor.actions import EditorActions
from desktop_app.ui.editor.exports import ExportFormat, build_export, default_file_name, write_files
from desktop_app.ui.editor.locator_tester import LocatorTester, LocatorTests
from desktop_app.ui.editor.parameters import ParameterPanel, WorkflowPanel
from desktop_app.ui.editor.step_form import StepForm
from desktop_app.ui.editor.steps_view import StepCardDelegate, StepListModel, ThumbnailCache
from desktop_app.ui.editor.success import SuccessPanel
from desktop_app.ui.host import Host
from desktop_app.ui.windows import fit_window

__all__ = ["EditorWindow"]


class EditorWindow(EditorActions, LocatorTests):
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
        self._host = host
        self._workflow_id = workflow_id
        self._requested_version = version
        self.base: WorkflowVersion | None = None
        #: The latest version when the edit began (or was last saved): saving refuses to go on
        #: when someone saved another since.
        self._latest_seen: int | None = None
        self.workflow: Workflow | None = None
        self.issues: list[Issue] = []
        self.last_refusal: str | None = None
        self._discard = False
        self._closing_after_save = False
        self.exported = ""
        """What the last export wrote (its status line)."""
        self.tester = LocatorTester(host.backend)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_undo_stack_clean_changed)

        self.thumbnails = ThumbnailCache(host, self)
        self.steps_model = StepListModel(self.thumbnails, self)
        self.steps_model.move_requested.connect(self._on_steps_model_move_requested)
        self.steps_view = QListView()
        self.steps_view.setObjectName("editor-steps")
        self.steps_view.setAccessibleName("Steps")
        self.steps_view.setModel(self.steps_model)
        self.steps_view.setItemDelegate(StepCardDelegate(self.steps_view))
        self.steps_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps_view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.steps_view.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.steps_view.setDragEnabled(True)
        self.steps_view.setAcceptDrops(True)
        self.steps_view.setDropIndicatorShown(True)
        self.steps_view.setUniformItemSizes(False)  # an "Otherwise" row is lower than a card
        self.steps_view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.steps_view.setMinimumWidth(300)
        self.steps_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.steps_view.setToolTip(
            "Drag a card to reorder, or into a block (drop it on the block) and out of it; "
            "Ctrl+Up/Down moves the selected one"
        )
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
        self.form.condition_test_requested.connect(self._on_form_condition_test_requested)
        self.form.source_test_requested.connect(self._on_form_source_test_requested)

        self.banner = QLabel("Loading…")
        self.banner.setObjectName("editor-banner")
        self.banner.setWordWrap(True)
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
        self.problems.setAccessibleName("Problems")
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
        self._add_actions()
        self._set_enabled(False)
        # The docks as the analyst left them last time; else sized on the first showing.
        self._docks_sized = fit_window(self, QSize(1280, 820), remember="editor")
        host.events.workflows_changed.connect(self._on_events_workflows_changed)
        self._host.tasks.start(self.reload(), label="Opening the workflow…")

    # ── loading ─────────────────────────────────────────────────────────────────────────────

    @property
    def workflow_id(self) -> str:
        """The id of the workflow edited."""
        return self._workflow_id

    async def reload(self) -> None:
        """Load the version to edit (discarding any draft and the undo history)."""
        workflows = self._host.backend.workflows
        version, latest = await self._host.tasks.call(
            _version_and_latest, workflows, self._workflow_id, self._requested_version
        )
        self.base = version
        self._latest_seen = latest
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

    # ── saving and review ───────────────────────────────────────────────────────────────────

    async def save(self, change_note: str = "") -> WorkflowVersion:
        """Save the draft as a new version (the version it started from stays as it was).

        Raises:
            EditError: the draft has errors (nothing is saved).
        """
        if self.workflow is None or self.base is None:
            raise EditError("the workflow is still loading")
        backend = self._host.backend
        done = await self._host.tasks.call(
            save_draft,
            backend.workflows,
            self.workflow,
            actor=backend.settings.actor,
            origin=Origin.WINDOW,
            parent_version=self.base.version,
            change_note=change_note,
            expected_latest=self._latest_seen,
        )
        saved = done.version
        self._latest_seen = saved.version
        self.base = saved
        self.workflow = saved.workflow
        self.undo_stack.setClean()
        self._update_banner()
        self._host.show_status(done.summary)
        self._host.events.announce(done.changes)
        if done.created:
            self.version_saved.emit(saved.version)
        return saved

    async def submit(self, comment: str = "") -> WorkflowVersion:
        """Submit the saved version for review."""
        if self.base is None:
            raise EditError("the workflow is still loading")
        backend = self._host.backend
        done = await self._host.tasks.call(
            decide,
            backend.workflows,
            self._workflow_id,
            Decision.SUBMIT,
            actor=backend.settings.actor,
            origin=Origin.WINDOW,
            version=self.base.version,
            comment=comment.strip(),
        )
        self.base = done.version
        self._update_banner()
        self._host.show_status(done.summary)
        self._host.events.announce(done.changes)
        return done.version

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

    # ── export ──────────────────────────────────────────────────────────────────────────────

    async def export(self, fmt: str, path: Path) -> Path:
        """Write the saved version in *fmt* (``playwright``, ``markdown``, ``html``, ``bundle``)."""
        version = self.base
        if version is None:
            raise EditError("the workflow is still loading")
        backend = self._host.backend

        def build_and_write() -> tuple[ExportChoice, int]:
            approved = backend.workflows.summary(version.workflow_id).approved_version
            files = build_export(fmt, version, backend.workflows, backend.media, path)
            write_files(files)
            return ExportChoice(version, approved), len(files) - 1

        choice, images = await self._host.tasks.call(build_and_write)
        extra = f" (and {images} screenshot{'s' * (images != 1)})" if images else ""
        self.exported = choice.wrote(str(path)) + extra
        self._host.show_status(self.exported)
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

    # ── docks ───────────────────────────────────────────────────────────────────────────────

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


def _version_and_latest(
    workflows: WorkflowLibrary, workflow_id: str, number: int | None
) -> tuple[WorkflowVersion, int]:
    """A version to edit and the number of the latest one (a save checks nobody added one)."""
    version = workflows.get(workflow_id, number)
    return version, workflows.summary(workflow_id).latest_version
