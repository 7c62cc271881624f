"""What the step form's parts share: the step shown, the form's signals and small helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QScrollArea, QToolButton, QWidget

from desktop_app.core.models.workflow import Step, Workflow, walk

__all__ = ["StepFormBase"]


class StepFormBase(QScrollArea):
    """The state every part of the step form works on, declared once (the form sets it), and the
    helpers they share."""

    step_edited: ClassVar[Signal]
    locators_edited: ClassVar[Signal]
    locator_test_requested: ClassVar[Signal]
    condition_test_requested: ClassVar[Signal]
    source_test_requested: ClassVar[Signal]
    _workflow: Workflow | None
    _step: Step | None
    _names: list[str]
    _fields: dict[str, QWidget]
    _flagged: list[QWidget]

    @property
    def step_id(self) -> str | None:
        """The id of the step shown, if any."""
        return self._step.id if self._step is not None else None

    # ── helpers ─────────────────────────────────────────────────────────────────────────────

    def _emit(self, changes: dict[str, object], what: str) -> None:
        step = self._step
        if step is None:
            return
        if all(getattr(step, key, object()) == value for key, value in changes.items()):
            return
        self.step_edited.emit(step.id, changes, what)

    def _step_by_id(self, step_id: str) -> Step | None:
        workflow = self._workflow
        if workflow is None:
            return None
        return next((s for s in walk(workflow.steps) if s.id == step_id), None)

    def _button(self, text: str, name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setObjectName(name)
        button.setToolTip(tip)
        return button

    @staticmethod
    def _shortcut(widget: QWidget, keys: str, slot: Callable[[], object]) -> None:
        """A key that acts only while *widget* has the focus (so the window's keys stay free)."""
        action = QAction(widget)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        action.triggered.connect(slot)
        widget.addAction(action)

    @staticmethod
    def _blocked(widget: QWidget, change: Callable[[], object]) -> None:
        widget.blockSignals(True)
        try:
            change()
        finally:
            widget.blockSignals(False)
