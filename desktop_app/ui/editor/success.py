"""The editor's "Done when" section: the workflow's success check, shown after the last step.

The success check is what shows the task was done (a text on the page, an address, an element
shown or gone), checked once the last step is done and the page has settled. A run succeeds only
when it holds; a workflow without one runs to "done, unverified". Like the step form, the panel
never changes the workflow itself: each add, edit or remove is a signal the editor turns into one
undoable edit, and the panel is then shown the new snapshot.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.describe import describe_expectation
from desktop_app.core.editing import Issue, known_names
from desktop_app.core.models.workflow import Expectation, Workflow
from desktop_app.ui import theme
from desktop_app.ui.editor.dialogs import EXPECTATION_KINDS, ExpectationDialog

__all__ = ["EMPTY_WARNING", "SuccessPanel"]

#: What the panel says while the workflow has no success check.
EMPTY_WARNING = (
    "No success check: runs will end 'done, unverified'. Add what shows the task was done."
)

_TIP = (
    "What shows the task was done, checked once the last step is done and the page has "
    "settled. A run succeeds only when every check here holds; without any, a run that did "
    "every step ends “done, unverified”."
)
#: The most checks shown at once (the list scrolls beyond).
_MAX_ROWS = 4


class SuccessPanel(QGroupBox):
    """Shows and edits the workflow's success check ("Done when"), after the last step.

    Signals:
        check_added(object): a check (an :data:`Expectation`) should be added.
        check_replaced(int, object): check *index* should become this one.
        check_removed(int): check *index* should go.
    """

    check_added = Signal(object)
    check_replaced = Signal(int, object)
    check_removed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Done when", parent)
        self.setObjectName("editor-success")
        self.setToolTip(_TIP)
        self._workflow: Workflow | None = None
        self._names: list[str] = []

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        self.lead = QLabel("After the last step, the run checks that:")
        self.lead.setObjectName("editor-success-lead")
        theme.set_tone(self.lead, "muted")
        layout.addWidget(self.lead)
        self.warning = QLabel(f"⚠ {EMPTY_WARNING}")
        self.warning.setObjectName("editor-success-empty")
        self.warning.setWordWrap(True)
        theme.set_tone(self.warning, "warning", strong=True)
        layout.addWidget(self.warning)
        self.checks = QListWidget()
        self.checks.setObjectName("success-list")
        self.checks.setToolTip(_TIP)
        self.checks.itemDoubleClicked.connect(lambda _item: self._edit())
        self.checks.itemSelectionChanged.connect(self._update_buttons)
        layout.addWidget(self.checks)
        self.problems = QLabel()
        self.problems.setObjectName("editor-success-problems")
        self.problems.setWordWrap(True)
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        self.problems.hide()
        layout.addWidget(self.problems)

        row = QHBoxLayout()
        self.add_button = QToolButton()
        self.add_button.setObjectName("success-add")
        self.add_button.setText("Add")
        self.add_button.setToolTip("Add a check that shows the task was done")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.add_button)
        for kind, label in EXPECTATION_KINDS.items():
            action = QAction(label, menu)
            action.setObjectName(f"success-add-{kind}")
            action.triggered.connect(lambda _=False, k=kind: self.open_check(k, None))
            menu.addAction(action)
        self.add_button.setMenu(menu)
        self.edit_button = QToolButton()
        self.edit_button.setObjectName("success-edit")
        self.edit_button.setText("Edit…")
        self.edit_button.setToolTip("Change the selected check")
        self.edit_button.clicked.connect(self._edit)
        self.remove_button = QToolButton()
        self.remove_button.setObjectName("success-remove")
        self.remove_button.setText("Remove")
        self.remove_button.setToolTip("Remove the selected check")
        self.remove_button.clicked.connect(self._remove)
        _shortcut(self.checks, "Delete", self._remove)
        for button in (self.add_button, self.edit_button, self.remove_button):
            row.addWidget(button)
        row.addStretch(1)
        layout.addLayout(row)
        self._update_buttons()

    # ── showing ─────────────────────────────────────────────────────────────────────────────

    def show_workflow(self, workflow: Workflow, issues: list[Issue]) -> None:
        """Show *workflow*'s success check with its problems (those about ``success[…]``)."""
        self._workflow = workflow
        self._names = known_names(workflow)
        checks = workflow.success
        mine = [i for i in issues if i.is_success]
        row = self.checks.currentRow()
        self.checks.clear()
        for k, check in enumerate(checks):
            item = QListWidgetItem(describe_expectation(check))
            found = [i for i in mine if i.success_index == k]
            if any(i.is_error for i in found):
                item.setForeground(theme.color("error"))
            if found:
                item.setToolTip("\n".join(i.message for i in found))
            elif _kind_of(check) not in EXPECTATION_KINDS:
                item.setToolTip("Recorded on the desktop; it can be removed here, not edited")
            self.checks.addItem(item)
        if checks:
            self.checks.setCurrentRow(min(max(row, 0), len(checks) - 1))
        rows = min(max(len(checks), 1), _MAX_ROWS)  # as tall as its checks, up to a few
        self.checks.setFixedHeight(
            rows * self.checks.sizeHintForRow(0) + 2 * self.checks.frameWidth() + 4 if checks else 0
        )
        self.checks.setVisible(bool(checks))
        self.lead.setVisible(bool(checks))
        self.warning.setVisible(not checks)
        self._show_problems(mine)
        self._update_buttons()

    def _show_problems(self, issues: list[Issue]) -> None:
        if not issues:
            self.problems.hide()
            theme.set_invalid(self.checks, False)
            return
        lines = []
        for issue in issues:
            color = theme.colours().error if issue.is_error else theme.colours().warning
            mark = "✖" if issue.is_error else "⚠"
            where = f"check {(issue.success_index or 0) + 1}: "
            lines.append(f"<span style='color:{color}'>{mark} {where}{_html(issue.message)}</span>")
        self.problems.setText("<br>".join(lines))
        self.problems.show()
        errors = any(i.is_error for i in issues)
        theme.set_invalid(self.checks, errors)

    def texts(self) -> list[str]:
        """The checks as shown, one line each."""
        return [self.checks.item(k).text() for k in range(self.checks.count())]

    def select(self, index: int | None) -> None:
        """Select check *index* (when there is one) and put the focus on the list."""
        if index is not None and 0 <= index < self.checks.count():
            self.checks.setCurrentRow(index)
        self.checks.setFocus(Qt.FocusReason.OtherFocusReason)

    # ── editing ─────────────────────────────────────────────────────────────────────────────

    def _current(self) -> tuple[int, Expectation] | None:
        workflow = self._workflow
        row = self.checks.currentRow()
        if workflow is None or not 0 <= row < len(workflow.success):
            return None
        return row, workflow.success[row]

    def _update_buttons(self) -> None:
        current = self._current()
        self.edit_button.setEnabled(
            current is not None and _kind_of(current[1]) in EXPECTATION_KINDS
        )
        self.remove_button.setEnabled(current is not None)

    def _edit(self) -> None:
        current = self._current()
        if current is not None and _kind_of(current[1]) in EXPECTATION_KINDS:
            self.open_check(_kind_of(current[1]), current[0])

    def _remove(self) -> None:
        current = self._current()
        if current is not None:
            self.check_removed.emit(current[0])

    def open_check(self, kind: str, row: int | None) -> ExpectationDialog | None:
        """Open the dialog that adds a check of *kind* (row None) or edits check *row*."""
        workflow = self._workflow
        if workflow is None:
            return None
        current = workflow.success[row] if row is not None else None
        dialog = ExpectationDialog(self, kind, current, self._names)
        dialog.setWindowTitle(f"Done when: {EXPECTATION_KINDS.get(kind, 'check').rstrip('…')}")

        def accepted() -> None:
            made = dialog.expectation()
            if row is None:
                self.check_added.emit(made)
            else:
                self.check_replaced.emit(row, made)

        dialog.accepted.connect(accepted)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog


def _kind_of(expectation: Expectation) -> str:
    return expectation.kind


def _shortcut(widget: QWidget, keys: str, slot: Callable[[], object]) -> None:
    """A key that acts only while *widget* has the focus (so the window's keys stay free)."""
    action = QAction(widget)
    action.setShortcut(QKeySequence(keys))
    action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
    action.triggered.connect(slot)
    widget.addAction(action)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
