"""The Runs screen's table model: a page of the run history at a time, sorted and filtered in SQL.

The model holds the runs read so far; scrolling to its end asks for the next page
(:attr:`RunsTableModel.more_wanted`), and a click on a column header asks for the history in
another order (:attr:`RunsTableModel.sort_wanted`): the screen reads them on the store thread.
"""

from __future__ import annotations

from typing import Any, Final

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush

from desktop_app.core.models.run import Run
from desktop_app.core.outcomes import outcome_reason
from desktop_app.core.views import RunSort
from desktop_app.ui.run_models import (
    RUN_STATUS_LABELS,
    format_duration,
    format_when,
    run_seconds,
    run_summary,
    status_color,
)
from desktop_app.ui.table_model import RowsModel

__all__ = [
    "HEADERS",
    "RUN_PAGE",
    "SORTS",
    "TRIGGERS",
    "PairsModel",
    "RunColumn",
    "RunsTableModel",
]

#: How many runs a page of the history holds.
RUN_PAGE: Final = 100
SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 1
RUN_ID_ROLE: Final = Qt.ItemDataRole.UserRole + 2

TRIGGERS: Final = {
    "gui": "window",
    "tray": "tray",
    "cli": "command line",
    "batch": "batch",
    "intent": "intent",
}


class RunColumn:
    """The history's columns."""

    WORKFLOW = 0
    VERSION = 1
    STATUS = 2
    TRIGGER = 3
    STARTED = 4
    DURATION = 5
    HEALED = 6
    LLM = 7


HEADERS: Final = (
    "Workflow",
    "Version",
    "Status",
    "Trigger",
    "Started",
    "Duration",
    "Healed",
    "LLM calls",
)


#: The order of the history by each column.
SORTS: Final = (
    RunSort.WORKFLOW,
    RunSort.VERSION,
    RunSort.STATUS,
    RunSort.TRIGGER,
    RunSort.STARTED,
    RunSort.DURATION,
    RunSort.HEALED,
    RunSort.LLM_CALLS,
)


class RunsTableModel(RowsModel[Run]):
    """Runs as the history table shows them (a thin adapter over the run records), a page at
    a time.

    Signals:
        more_wanted(int): the view scrolled to the end of what is held (how many runs).
        sort_wanted(int, Qt.SortOrder): a header was clicked: the history in that order.
    """

    HEADERS = HEADERS
    more_wanted = Signal(int)
    sort_wanted = Signal(int, Qt.SortOrder)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._names: dict[str, str] = {}
        self._total = 0
        self._asked = False

    def set_runs(self, runs: list[Run], names: dict[str, str], total: int | None = None) -> None:
        """Show *runs*, the first of *total*; *names* maps workflow ids to names."""
        self.beginResetModel()
        self._rows = list(runs)
        self._names = dict(names)
        self._total = max(total if total is not None else 0, len(self._rows))
        self._asked = False
        self.endResetModel()

    def add_runs(self, runs: list[Run]) -> None:
        """Append the next page (runs already held are skipped)."""
        held = {r.id for r in self._rows}
        new = [r for r in runs if r.id not in held]
        self._asked = False
        if not new:
            self._total = len(self._rows)  # the history changed meanwhile: a reload follows
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
        self._rows += new
        self.endInsertRows()

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and not self._asked and len(self._rows) < self._total

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent):
            self._asked = True
            self.more_wanted.emit(len(self._rows))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Ask for the history in another order (it is sorted in SQL, then shown)."""
        self.sort_wanted.emit(column, order)

    def add_run(self, run: Run, name: str | None = None) -> int:
        """Add or replace one run; its row."""
        if name is not None:
            self._names[run.workflow_id] = name
        row = self.row_of(run.id)
        if row is not None:
            self._rows[row] = run
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(HEADERS) - 1))
            return row
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(run)
        self.endInsertRows()
        return row

    def row_of(self, run_id: str) -> int | None:
        """The row of the run *run_id*."""
        for row, run in enumerate(self._rows):
            if run.id == run_id:
                return row
        return None

    def name_of(self, workflow_id: str) -> str:
        """A workflow's name (its short id when it is gone)."""
        return self._names.get(workflow_id, f"(deleted {workflow_id[:8]})")

    def workflows(self) -> list[tuple[str, str]]:
        """(id, name) of the workflows that have runs here, by name."""
        ids = {r.workflow_id for r in self._rows}
        return sorted(((i, self.name_of(i)) for i in ids), key=lambda p: p[1].casefold())

    def names(self) -> dict[str, str]:
        """The workflows' names known so far, by id."""
        return dict(self._names)

    def add_names(self, names: list[tuple[str, str]]) -> None:
        """Name workflows (``(id, name)`` pairs); the rows show the names."""
        self._names.update(names)
        if self._rows:
            self.dataChanged.emit(
                self.index(0, RunColumn.WORKFLOW),
                self.index(len(self._rows) - 1, RunColumn.WORKFLOW),
            )

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        run = self.row_at(index)
        if run is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(run, column)
        if role == SORT_ROLE:
            return self._sort_key(run, column)
        if role == RUN_ID_ROLE:
            return run.id
        if role == Qt.ItemDataRole.ForegroundRole and column == RunColumn.STATUS:
            color = status_color(run.status)
            return QBrush(color) if color is not None else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == RunColumn.STARTED:
                return run.started_at.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
            if column == RunColumn.STATUS and run.error:
                return outcome_reason(run)
            if column == RunColumn.LLM:
                return f"{run.llm_calls} LLM call(s), {run.tokens:,} tokens"
            return run_summary(run)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            RunColumn.VERSION,
            RunColumn.DURATION,
            RunColumn.HEALED,
            RunColumn.LLM,
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, run: Run, column: int) -> str:
        if column == RunColumn.WORKFLOW:
            return self.name_of(run.workflow_id)
        if column == RunColumn.VERSION:
            return str(run.workflow_version)
        if column == RunColumn.STATUS:
            return RUN_STATUS_LABELS[run.status]
        if column == RunColumn.TRIGGER:
            return TRIGGERS.get(run.trigger.value, run.trigger.value)
        if column == RunColumn.STARTED:
            return format_when(run.started_at)
        if column == RunColumn.DURATION:
            seconds = run_seconds(run)
            return format_duration(seconds * 1000) if seconds is not None else "…"
        if column == RunColumn.HEALED:
            return str(len(run.healed))
        if column == RunColumn.LLM:
            return str(run.llm_calls)
        return ""

    def _sort_key(self, run: Run, column: int) -> Any:
        if column == RunColumn.WORKFLOW:
            return self.name_of(run.workflow_id).casefold()
        if column == RunColumn.VERSION:
            return run.workflow_version
        if column == RunColumn.STARTED:
            return run.started_at.timestamp()
        if column == RunColumn.DURATION:
            seconds = run_seconds(run)
            return seconds if seconds is not None else -1.0
        if column == RunColumn.HEALED:
            return len(run.healed)
        if column == RunColumn.LLM:
            return run.llm_calls
        return self._display(run, column)


class PairsModel(QAbstractListModel):
    """``(data, text)`` pairs for a combo box: a model, so that 10,000 fill it at once."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._pairs: list[tuple[object, str]] = []
        self._rows: dict[object, int] = {}

    def set_pairs(self, pairs: list[tuple[object, str]]) -> None:
        """Replace every pair."""
        self.beginResetModel()
        self._pairs = list(pairs)
        self._rows = {data: row for row, (data, _text) in enumerate(self._pairs)}
        self.endResetModel()

    def row_of(self, data: object) -> int | None:
        """The row holding *data* (a lookup: ``findData`` would call :meth:`data` per row)."""
        return self._rows.get(data)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._pairs)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._pairs):
            return None
        data, text = self._pairs[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return text
        if role == Qt.ItemDataRole.UserRole:
            return data
        return None
