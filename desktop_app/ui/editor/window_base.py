"""What the step editor window's parts share: its widgets and draft, and how a snapshot shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QStyle,
)

from desktop_app.core import editing
from desktop_app.core.editing import Issue, StepPath, Where
from desktop_app.core.models.workflow import Workflow, WorkflowStatus, WorkflowVersion, walk
from desktop_app.ui import theme
from desktop_app.ui.editor.parameters import ParameterPanel, WorkflowPanel
from desktop_app.ui.editor.step_form import StepForm
from desktop_app.ui.editor.step_rows import StepRow
from desktop_app.ui.editor.steps_view import StepListModel, ThumbnailCache
from desktop_app.ui.editor.success import SuccessPanel
from desktop_app.ui.host import Host

__all__ = ["EditorWindowBase"]

_STATUS_TEXT = {
    WorkflowStatus.DRAFT: "draft",
    WorkflowStatus.IN_REVIEW: "in review",
    WorkflowStatus.APPROVED: "approved",
    WorkflowStatus.ARCHIVED: "archived",
}


class EditorWindowBase(QMainWindow):
    """The widgets and the draft every part of the editor window works on, declared once (the
    window makes them), and how a snapshot of the workflow is shown in them.
    """

    _host: Host
    base: WorkflowVersion | None
    workflow: Workflow | None
    issues: list[Issue]
    undo_stack: QUndoStack
    thumbnails: ThumbnailCache
    steps_model: StepListModel
    steps_view: QListView
    steps_header: QLabel
    steps_empty: QLabel
    _steps_stack: QStackedWidget
    success: SuccessPanel
    form: StepForm
    banner: QLabel
    parameters: ParameterPanel
    workflow_panel: WorkflowPanel
    problems: QListWidget
    parameters_dock: QDockWidget
    workflow_dock: QDockWidget
    problems_dock: QDockWidget

    if TYPE_CHECKING:

        def _update_actions(self) -> None:
            """Enable the actions that apply now (the window's actions define it)."""

    @property
    def has_unsaved_changes(self) -> bool:
        """Whether the draft differs from the version it was loaded or last saved as."""
        return not self.undo_stack.isClean()

    # ── showing a snapshot ──────────────────────────────────────────────────────────────────

    def _apply(self, workflow: Workflow, select: str | None) -> None:
        """Show *workflow* (a command's before or after) and select step *select*."""
        keep = self._selected_key()
        self.workflow = workflow
        self.issues = editing.validate(workflow)
        by_path: dict[StepPath, list[Issue]] = {}
        for issue in self.issues:
            path = issue.step_path
            if path is not None:
                by_path.setdefault(path, []).append(issue)
        self.steps_model.set_workflow(workflow, by_path)
        self._steps_stack.setCurrentWidget(self.steps_view if workflow.steps else self.steps_empty)
        self.thumbnails.request(
            s.screenshot for s in walk(workflow.steps) if s.screenshot is not None
        )
        self.parameters.show_workflow(workflow, self.issues)
        self.workflow_panel.show_workflow(workflow)
        self.success.show_workflow(workflow, self.issues)
        self._fill_problems()
        rows = self.steps_model.rows()
        row = self.steps_model.row_of(select) if select is not None else None
        if row is None and keep is not None:
            row = next((i for i, r in enumerate(rows) if r.key == keep), None)
        if row is None and rows:
            row = max(min(self.steps_view.currentIndex().row(), len(rows) - 1), 0)
        if row is not None and row != self.steps_view.currentIndex().row():
            self.steps_view.setCurrentIndex(self.steps_model.index(row))
        else:
            self._show_form()
        self._update_header()
        self._update_actions()

    def _show_form(self) -> None:
        path = self.current_step_path()
        workflow = self.workflow
        issues = [i for i in self.issues if i.step_path == path] if path is not None else []
        self.form.show_step(workflow, path, issues)

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
        elif issue.step_path is not None:
            self.select_step(issue.step_path)
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
        inside = sum(1 for _ in walk(workflow.steps)) - count
        errors = sum(1 for i in self.issues if i.is_error)
        text = f"<b>{count} step{'s' * (count != 1)}</b>"
        if inside:
            text += f" ({inside} more inside blocks)"
        if errors:
            red = theme.colours().error
            text += f" · <span style='color:{red}'>{errors} to fix before saving</span>"
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
        """The index of the selected step when it is a top-level one (see :meth:`current_path`
        for a step inside a block)."""
        path = self.current_path()
        top = path[0] if path is not None and len(path) == 1 else None
        return top if isinstance(top, int) else None

    def _selected(self) -> StepRow | None:
        index = self.steps_view.currentIndex()
        return self.steps_model.row(index.row()) if index.isValid() else None

    def _selected_key(self) -> str | None:
        selected = self._selected()
        return selected.key if selected is not None else None

    def current_path(self) -> StepPath | None:
        """Where the selected step is (None when no step's card is selected)."""
        selected = self._selected()
        return selected.path if selected is not None and selected.kind == "step" else None

    def current_step_path(self) -> StepPath | None:
        """The step the form shows: the selected one, or the block whose "Otherwise" or empty
        list is selected."""
        selected = self._selected()
        if selected is None:
            return None
        return selected.path if selected.kind == "step" else selected.path[:-1]

    def current_step_id(self) -> str | None:
        """The id of the step the form shows, if any."""
        selected = self._selected()
        return selected.step.id if selected is not None else None

    def select_step(self, where: Where) -> None:
        """Select the step at *where* (a top-level index from 0, or a path into blocks)."""
        row = self.steps_model.row_of_path(editing.as_path(where))
        if row is None:
            return
        self.steps_view.setCurrentIndex(self.steps_model.index(row))
        self.steps_view.scrollTo(self.steps_model.index(row))
