"""The step form's element section: the step's locators, best first, and what testing found."""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QTableWidget, QTableWidgetItem, QToolButton

from desktop_app.core.describe import describe_locator, item_noun
from desktop_app.core.editing import TARGETED_KINDS
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy
from desktop_app.core.models.workflow import Step
from desktop_app.core.step_kinds import kind_spec
from desktop_app.ui import theme
from desktop_app.ui.editor.dialogs import LocatorDialog
from desktop_app.ui.editor.step_form_base import StepFormBase

__all__ = ["StepLocators"]

_TONES: Final[dict[str, theme.Tone]] = {
    "good": "ok",
    "warn": "warning",
    "bad": "error",
    "busy": "busy",
}


class StepLocators(StepFormBase):
    """The step form's locator table and its buttons; each change is one ``locators_edited``."""

    target_box: QGroupBox
    locators: QTableWidget
    locator_edit: QToolButton
    locator_remove: QToolButton
    locator_up: QToolButton
    locator_down: QToolButton
    fingerprint: QLabel
    _results: dict[tuple[str, str], tuple[str, str]]

    # ── the element ─────────────────────────────────────────────────────────────────────────

    def _fill_target(self, step: Step) -> None:
        has_target = "target" in type(step).model_fields
        self.target_box.setVisible(has_target)
        if not has_target:
            return
        target = step.target_or_none
        locators = target.locators if target is not None else ()
        on_desktop = kind_spec(step.kind).performer == "desktop"
        if on_desktop:
            self.target_box.setTitle(
                "Element (by accessibility, then by its picture; none: the recorded spot)"
                if step.kind == "desktop_click"
                else "Field (by accessibility; none: wherever the window's focus is)"
            )
        else:
            self.target_box.setTitle(
                "Element"
                if step.kind in TARGETED_KINDS
                else "Element (optional: none acts on the page)"
            )
        selected = self.locators.currentRow()
        self.locators.setRowCount(len(locators))
        for row, locator in enumerate(locators):
            rank = QTableWidgetItem(str(row + 1))
            rank.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.locators.setItem(row, 0, rank)
            item = QTableWidgetItem(describe_locator(locator))
            tip = locator.describe()
            if locator.within is not None:
                tip = f"{_inside(locator.within)}; Edit… changes that text.\n{tip}"
            item.setToolTip(tip)
            self.locators.setItem(row, 1, item)
            button = self.locators.cellWidget(row, 2)
            if not isinstance(button, QToolButton):  # made once per row, then reused
                button = QToolButton()
                button.setObjectName(f"locator-test-{row}")
                button.setText("Test")
                button.setToolTip(
                    "Open the test page (once) and highlight every element this locator finds"
                )
                button.clicked.connect(lambda _=False, r=row: self._on_test_clicked(r))
                self.locators.setCellWidget(row, 2, button)
            button.setEnabled(
                locator.strategy not in (LocatorStrategy.IMAGE_ANCHOR, LocatorStrategy.ACCESSIBLE)
            )
            text, tone = self._results.get((step.id, locator.describe()), ("", "busy"))
            self._show_result(row, text, tone)
        if locators:
            self.locators.selectRow(min(max(selected, 0), len(locators) - 1))
        rows = min(max(len(locators), 2), 6)
        self.locators.setFixedHeight(
            self.locators.horizontalHeader().height()
            + rows * self.locators.verticalHeader().defaultSectionSize()
            + 2 * self.locators.frameWidth()
        )
        fingerprint = target.fingerprint if target is not None else None
        if fingerprint is not None:
            parts = [f"<{fingerprint.tag}>" if fingerprint.tag else "", fingerprint.role or ""]
            name = fingerprint.name or fingerprint.text or ""
            if name:
                parts.append(f"“{name[:60]}”")
            within = fingerprint.item
            if within is not None:
                shows = f" showing “{within.texts[0][:60]}”" if within.texts else ""
                parts.append(f"in a {item_noun(within.css)}{shows}")
            self.fingerprint.setText(
                "Recorded as " + " ".join(p for p in parts if p) + ": used to find the element "
                "again when every locator fails."
                if not on_desktop
                else "Recorded as " + " ".join(p for p in parts if p) + " in its window's "
                "accessibility tree."
            )
            self.fingerprint.show()
        else:
            self.fingerprint.hide()
        self._update_locator_buttons()

    def _on_test_clicked(self, row: int) -> None:
        if self._step is not None:
            self.locator_test_requested.emit(self._step.id, row)

    def _show_result(self, row: int, text: str, tone: str) -> None:
        item = QTableWidgetItem(text)
        item.setForeground(theme.color(_TONES.get(tone, "busy")))
        self.locators.setItem(row, 3, item)

    def _current_locators(self) -> tuple[Locator, ...]:
        target = self._step.target_or_none if self._step is not None else None
        return target.locators if target is not None else ()

    def _update_locator_buttons(self) -> None:
        row = self.locators.currentRow()
        count = len(self._current_locators())
        has = 0 <= row < count
        self.locator_edit.setEnabled(has)
        self.locator_remove.setEnabled(has)
        self.locator_up.setEnabled(has and row > 0)
        self.locator_down.setEnabled(has and row < count - 1)

    def _add_locator(self) -> None:
        self._open_locator(None)

    def _edit_locator(self) -> None:
        row = self.locators.currentRow()
        locators = self._current_locators()
        if 0 <= row < len(locators):
            self._open_locator(row)

    def _open_locator(self, row: int | None) -> None:
        step = self._step
        if step is None:
            return
        locators = self._current_locators()
        dialog = LocatorDialog(self, locators[row] if row is not None else None, self._names)
        step_id = step.id

        def accepted() -> None:
            current = list(self._current_locators()) if self.step_id == step_id else list(locators)
            made = dialog.locator()
            if row is None:
                current.append(made)
                self.locators_edited.emit(step_id, tuple(current), "Add a locator")
            elif row < len(current):
                current[row] = made
                self.locators_edited.emit(step_id, tuple(current), "Edit a locator")

        dialog.accepted.connect(accepted)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def _remove_locator(self) -> None:
        row = self.locators.currentRow()
        locators = list(self._current_locators())
        if self._step is not None and 0 <= row < len(locators):
            del locators[row]
            self.locators_edited.emit(self._step.id, tuple(locators), "Remove a locator")

    def _move_locator(self, delta: int) -> None:
        row = self.locators.currentRow()
        locators = list(self._current_locators())
        to = row + delta
        if self._step is not None and 0 <= row < len(locators) and 0 <= to < len(locators):
            locators.insert(to, locators.pop(row))
            self.locators_edited.emit(self._step.id, tuple(locators), "Reorder the locators")
            self.locators.selectRow(to)


def _inside(scope: ItemScope) -> str:
    """Where a locator looks, in words: "Looks only inside the row (tr) that shows exactly
    “Ann”", and the item that one is in when it has one."""
    own = f"the {item_noun(scope.css)} ({scope.css}) that shows exactly “{scope.text}”"
    if scope.outer is None:
        return f"Looks only inside {own}"
    outer = scope.outer
    return (
        f"Looks only inside {own}, in the {item_noun(outer.css)} ({outer.css}) that shows "
        f"exactly “{outer.text}”"
    )
