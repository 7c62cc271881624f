"""The step editor's menus, toolbar and context menu, and which of their actions apply now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton

from desktop_app.core import editing
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.step_kinds import kind_spec
from desktop_app.ui.editor.edits import DraftEdits
from desktop_app.ui.editor.exports import EXPORT_FORMATS, ExportFormat
from desktop_app.ui.windows import name_toolbar

__all__ = ["EditorActions"]


class EditorActions(DraftEdits):
    """The editor window's actions (Save, Undo, Insert step, Export, …) in its menus, toolbar and
    the step list's context menu."""

    if TYPE_CHECKING:

        def request_save(self, *, then_close: bool = False) -> None:
            """What Save does (the window defines it)."""

        def request_submit(self) -> None:
            """What Submit for review does (the window defines it)."""

        def request_export(self, fmt: ExportFormat) -> None:
            """What File → Export → *fmt* does (the window defines it)."""

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
            action = QAction(kind_spec(kind).label, self.insert_menu)
            action.setObjectName(f"action-insert-{kind}")
            action.triggered.connect(lambda _=False, k=kind: self.insert_step(k))
            self.insert_menu.addAction(action)
            self.insert_actions[kind] = action
        self.inside_menu = QMenu("Add step inside", self)
        self.inside_menu.setObjectName("editor-inside-menu")
        self.inside_menu.setToolTip(
            "Add a step at the end of the selected block (or of its selected Otherwise)"
        )
        self.inside_actions: dict[str, QAction] = {}
        for kind in editing.INSERTABLE_KINDS:
            action = QAction(kind_spec(kind).label, self.inside_menu)
            action.setObjectName(f"action-inside-{kind}")
            action.triggered.connect(lambda _=False, k=kind: self.insert_inside(k))
            self.inside_menu.addAction(action)
            self.inside_actions[kind] = action
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
        edit_menu.addMenu(self.inside_menu)
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
        name_toolbar(toolbar, "Editor")
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
        inside_button = QToolButton()
        inside_button.setObjectName("editor-inside-button")
        inside_button.setText("Add inside")
        inside_button.setToolTip("Add a step inside the selected block")
        inside_button.setMenu(self.inside_menu)
        inside_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.inside_button = inside_button
        toolbar.addWidget(inside_button)
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
        if self.inside_target() is not None:
            menu.addMenu(self.inside_menu)
        menu.addAction(self.action_duplicate)
        menu.addAction(self.action_delete)
        menu.addSeparator()
        menu.addAction(self.action_move_up)
        menu.addAction(self.action_move_down)
        menu.popup(self.steps_view.viewport().mapToGlobal(point))

    def _update_actions(self) -> None:
        path = self.current_path()
        workflow = self.workflow
        has = path is not None
        at = path[-1] if path is not None else -1
        count = len(editing.list_at(workflow, path[:-1])) if path is not None and workflow else 0
        self.action_duplicate.setEnabled(has)
        self.action_delete.setEnabled(has)
        self.action_move_up.setEnabled(has and isinstance(at, int) and at > 0)
        self.action_move_down.setEnabled(has and isinstance(at, int) and at < count - 1)
        inside = self.inside_target() is not None and workflow is not None
        self.inside_menu.setEnabled(inside)
        self.inside_button.setEnabled(inside)
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
