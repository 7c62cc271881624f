"""A table model over a Python list: the list is the single source of truth, one item a row.

Subclasses name their columns in :attr:`RowsModel.HEADERS` and write ``data``; the row and column
counts, the header and replacing every row come from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import (
    QAbstractProxyModel,
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtWidgets import QTableView

__all__ = ["RowsModel", "current_item", "select_source_row", "visible_items"]

T = TypeVar("T")
_Index = QModelIndex | QPersistentModelIndex


class RowsModel(QAbstractTableModel, Generic[T]):
    """A flat table of ``T`` rows with fixed, titled columns."""

    #: The column titles, in order (their number is the column count).
    HEADERS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[T] = []

    def set_rows(self, rows: Iterable[T]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> list[T]:
        """The rows, in model order."""
        return list(self._rows)

    def row_at(self, index: int | _Index) -> T | None:
        """The item on a row (a number or a valid index of this model); None past the end."""
        if not isinstance(index, int):
            if not index.isValid():
                return None
            index = index.row()
        return self._rows[index] if 0 <= index < len(self._rows) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API default)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API default)
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None


# ── a table shown through a sort/filter proxy ───────────────────────────────────────────────


def visible_items(proxy: QAbstractProxyModel, role: int) -> list[Any]:
    """The items a filtered, sorted table shows now (each row's *role* data), in display order."""
    return [proxy.index(row, 0).data(role) for row in range(proxy.rowCount())]


def current_item(view: QTableView, role: int) -> Any:
    """The current row's *role* data (None without one)."""
    index = view.selectionModel().currentIndex()
    return index.data(role) if index.isValid() else None


def select_source_row(view: QTableView, proxy: QAbstractProxyModel, row: int | None) -> bool:
    """Select the row the source model has at *row*, if the table shows it."""
    if row is None:
        return False
    index = proxy.mapFromSource(proxy.sourceModel().index(row, 0))
    if not index.isValid():
        return False
    view.selectRow(index.row())
    return True
