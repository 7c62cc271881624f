"""Recordings as a table (a Qt model) and the filter the Recordings screen sorts and searches by."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from desktop_app.core.models.trajectory import TrajectoryKind
from desktop_app.core.views import TrajectorySummary
from desktop_app.ui.table_model import RowsModel

__all__ = ["RecordingsModel"]

_Index = QModelIndex | QPersistentModelIndex


def _state(summary: TrajectorySummary, live_id: str | None) -> str:
    if summary.id == live_id:
        return "Recording…"
    return "Incomplete" if summary.incomplete else "Complete"


class RecordingsModel(RowsModel[TrajectorySummary]):
    """Recordings as a table (a thin adapter over :class:`TrajectorySummary`)."""

    HEADERS = ("Intent", "Kind", "Start", "Events", "Started", "State")
    SORT_ROLE = Qt.ItemDataRole.UserRole + 1
    SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._live_id: str | None = None

    def set_rows(self, rows: Iterable[TrajectorySummary], live_id: str | None = None) -> None:
        """Replace every row; *live_id* is the recording under way, if any."""
        self.beginResetModel()
        self._rows = list(rows)
        self._live_id = live_id
        self.endResetModel()

    def row_of(self, trajectory_id: str) -> int | None:
        """The model row of a recording, if listed."""
        for i, row in enumerate(self._rows):
            if row.id == trajectory_id:
                return i
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        s = self.row_at(index)
        if s is None:
            return None
        column = index.column()
        events = s.event_count or s.raw_event_count
        if role == self.SUMMARY_ROLE:
            return s
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                s.intent or "(no intent given)",
                "Web" if s.kind is TrajectoryKind.WEB else "Desktop",
                s.start or "—",
                str(events),
                s.started_at.astimezone().strftime("%Y-%m-%d %H:%M"),
                _state(s, self._live_id),
            )[column]
        if role == self.SORT_ROLE:
            return (
                s.intent.casefold(),
                s.kind.value,
                s.start or "",
                events,
                s.started_at.timestamp(),
                _state(s, self._live_id),
            )[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 0 and not s.intent:
            return Qt.GlobalColor.gray
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5 and s.incomplete and s.id != self._live_id:
                return "The recorder stopped abruptly (a crash?); the events up to then are kept"
            return f"{s.intent or '(no intent given)'}\n{s.start or ''}\nid {s.id}"
        return None


class _Filter(QSortFilterProxyModel):
    """Sorts by value, and keeps the rows whose intent or start address contain the filter."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(RecordingsModel.SORT_ROLE)
        self.text = ""

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self.text = text.strip().casefold()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if not self.text:
            return True
        model = self.sourceModel()
        s: TrajectorySummary = model.data(model.index(source_row, 0), RecordingsModel.SUMMARY_ROLE)
        return self.text in f"{s.intent} {s.start or ''} {s.id}".casefold()

    def lessThan(self, left: _Index, right: _Index) -> bool:
        a = left.data(RecordingsModel.SORT_ROLE)
        b = right.data(RecordingsModel.SORT_ROLE)
        try:
            return bool(a < b)
        except TypeError:
            return str(a) < str(b)
