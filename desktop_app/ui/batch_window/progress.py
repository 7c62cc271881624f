"""The rows of a running batch as a Qt table model: values, status, run, time, error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from desktop_app.core.batch import RowStatus
from desktop_app.core.models.run import RunStatus
from desktop_app.ui import theme
from desktop_app.ui.run_models import status_color
from desktop_app.ui.table_model import RowsModel

__all__ = ["RowsProgressModel", "_Progress"]


@dataclass(slots=True)
class _Progress:
    line: int
    shown: str
    status: RowStatus | None = RowStatus.PENDING  # None: running
    run_id: str = ""
    error: str = ""
    seconds: float | None = None
    skipped: bool = False


_STATUS_TEXT: Final[dict[RowStatus, str]] = {
    RowStatus.PENDING: "Waiting",
    RowStatus.SUCCEEDED: "✓ Succeeded",
    RowStatus.UNVERIFIED: "⚠ Done, unverified",
    RowStatus.FAILED: "✗ Failed",
    RowStatus.ABORTED: "✗ Aborted",
    RowStatus.INTERRUPTED: "■ Interrupted",
}


class RowsProgressModel(RowsModel[_Progress]):
    """The rows of a batch as they run: values, status, run, time, error."""

    HEADERS = ("Row", "Values", "Status", "Run", "Time", "Error")
    LINE, VALUES, STATUS, RUN, TIME, ERROR = range(6)

    def entry(self, line: int) -> _Progress:
        """The row that starts on *line* of the file."""
        return next(p for p in self._rows if p.line == line)

    def statuses(self) -> dict[int, str]:
        """Line → the status text shown."""
        return {p.line: self._status_text(p) for p in self._rows}

    def update(self, line: int, **changes: Any) -> None:
        """Change the row on *line* and repaint it."""
        for row, item in enumerate(self._rows):
            if item.line == line:
                for name, value in changes.items():
                    setattr(item, name, value)
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))
                return

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        item = self.row_at(index)
        if item is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.LINE:
                return str(item.line)
            if column == self.VALUES:
                return item.shown
            if column == self.STATUS:
                return self._status_text(item)
            if column == self.RUN:
                return item.run_id[:8]
            if column == self.TIME:
                return f"{item.seconds:.1f} s" if item.seconds is not None else ""
            if column == self.ERROR:
                return item.error
        if role == Qt.ItemDataRole.ForegroundRole and column == self.STATUS:
            if item.status is None or item.status is RowStatus.PENDING:
                return None if item.status is None else theme.color("muted")
            return status_color(RunStatus(item.status.value))
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == self.ERROR and item.error:
                return item.error
            if column == self.VALUES:
                return item.shown
            if item.run_id:
                return "Double-click to open the run record"
        return None

    @staticmethod
    def _status_text(item: _Progress) -> str:
        if item.status is None:
            return "Running…"
        if item.skipped:
            return "✓ Succeeded before"
        return _STATUS_TEXT[item.status]
