"""Picking a workflow by typing part of its name, its site or its description."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.views import WorkflowSummary
from desktop_app.ui.windows import fit_window

__all__ = ["WorkflowSearchDialog"]


class WorkflowSearchDialog(QDialog):
    """Type part of a workflow's name (or site, or description); Enter runs the one selected.

    Signals:
        picked(str): the workflow id chosen.
    """

    picked = Signal(str)

    def __init__(self, summaries: Sequence[WorkflowSummary], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tray-search-dialog")
        self.setWindowTitle("Run a workflow")
        self.setMinimumSize(460, 380)
        self._summaries = list(summaries)
        layout = QVBoxLayout(self)
        self.query = QLineEdit()
        self.query.setObjectName("tray-search-query")
        self.query.setAccessibleName("Search workflows")
        self.query.setPlaceholderText("Type part of a name, a site or a description")
        self.query.setClearButtonEnabled(True)
        layout.addWidget(self.query)
        self.results = QListWidget()
        self.results.setObjectName("tray-search-results")
        self.results.setAccessibleName("Workflows")
        layout.addWidget(self.results, 1)
        self.empty = QLabel("No approved workflow matches.")
        self.empty.setEnabled(False)
        self.empty.hide()
        layout.addWidget(self.empty)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.run_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.run_button.setText("&Run")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.query.textChanged.connect(self._on_query_text_changed)
        self.query.returnPressed.connect(self.accept)
        self.results.itemActivated.connect(lambda _item: self.accept())
        self._on_query_text_changed("")
        self.query.setFocus()
        fit_window(self, self.sizeHint(), remember="tray-search")

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Up and Down move through the results while the query keeps the focus."""
        if event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            row = self.results.currentRow() + (1 if event.key() == Qt.Key.Key_Down else -1)
            if 0 <= row < self.results.count():
                self.results.setCurrentRow(row)
            return
        super().keyPressEvent(event)

    def matches(self) -> list[str]:
        """The names listed now."""
        return [self.results.item(i).text() for i in range(self.results.count())]

    def accept(self) -> None:
        """Run the selected workflow."""
        item = self.results.currentItem()
        if item is None:
            return
        self.picked.emit(item.data(Qt.ItemDataRole.UserRole))
        super().accept()

    def _on_query_text_changed(self, text: str) -> None:
        words = text.casefold().split()
        self.results.clear()
        for summary in self._summaries:
            haystack = " ".join((summary.name, summary.description, *summary.domains)).casefold()
            if all(word in haystack for word in words):
                item = QListWidgetItem(summary.name, self.results)
                item.setData(Qt.ItemDataRole.UserRole, summary.id)
                item.setToolTip(summary.description or summary.name)
        found = self.results.count() > 0
        if found:
            self.results.setCurrentRow(0)
        self.empty.setVisible(not found)
        self.run_button.setEnabled(found)
