"""The Library's table: one row per workflow, sorted and filtered in the model itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from desktop_app.core.models.workflow import (
    WorkflowStatus,
    status_label,
)
from desktop_app.core.scores import FAILING_RUNS, stale_why
from desktop_app.core.views import RunStats, WorkflowSummary
from desktop_app.ui.table_model import RowsModel

__all__ = ["LibraryModel", "LibraryRow"]

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class LibraryRow:
    """One line of the library: a workflow, how its runs went, and its search score."""

    summary: WorkflowSummary
    stats: RunStats | None = None
    score: float | None = None
    stale: str | None = None
    """Why its approved version is stale (its last runs failed, or nobody ran it for long)."""

    def with_stale(self, *, stale_after_days: int, now: datetime) -> LibraryRow:
        """This row with its approved version's staleness, as the details say it
        (:func:`~desktop_app.core.scores.stale_reason`)."""
        s, stats = self.summary, self.stats
        if s.status is not WorkflowStatus.APPROVED or s.approved_version is None:
            return self
        failing = stats is not None and stats.failing_version == s.approved_version
        reason = stale_why(
            FAILING_RUNS if failing else 0,
            stats.last_run_at if stats is not None else None,
            since=s.updated_at,
            now=now,
            stale_after_days=stale_after_days,
        )
        return replace(self, stale=reason)

    @property
    def version_text(self) -> str:
        """``v3`` or, when a newer draft exists over the approved one, ``v2 (v3 draft)``."""
        s = self.summary
        if s.approved_version is not None and s.approved_version != s.latest_version:
            latest = status_label(s.latest_status).lower()
            return f"v{s.approved_version} (v{s.latest_version} {latest})"
        return f"v{s.latest_version}"

    @property
    def last_run_text(self) -> str:
        """When it last ran, or an em dash."""
        if self.stats is None or self.stats.last_run_at is None:
            return "—"
        return self.stats.last_run_at.astimezone().strftime("%Y-%m-%d %H:%M")

    @property
    def success_text(self) -> str:
        """``80% of 5`` or an em dash."""
        rate = self.stats.success_rate if self.stats is not None else None
        if rate is None or self.stats is None:
            return "—"
        return f"{rate:.0%} of {self.stats.finished}"

    @property
    def success_help(self) -> str | None:
        """``3 of 5 finished runs succeeded; 1 done, unverified`` (None before any run ended)."""
        if self.stats is None or not self.stats.finished:
            return None
        text = f"{self.stats.succeeded} of {self.stats.finished} finished runs succeeded"
        if self.stats.unverified:
            text += (
                f"; {self.stats.unverified} done, unverified (every step ran, but nothing "
                "showed the task was done)"
            )
        return text


def _name_key(row: LibraryRow) -> str:
    return ("0" if row.summary.pinned else "1") + row.summary.name.casefold()


def _last_run_key(row: LibraryRow) -> float:
    last = row.stats.last_run_at if row.stats is not None else None
    return last.timestamp() if last is not None else 0.0


def _success_key(row: LibraryRow) -> float:
    rate = row.stats.success_rate if row.stats is not None else None
    return rate if rate is not None else -1.0


#: Each column's sort key of a row: a plain str, int or float (dates and rates as values), one
#: call per row when sorting (Python's sort then compares them in C, not one call per pair).
_SORT_KEYS: tuple[Callable[[LibraryRow], str | int | float], ...] = (
    _name_key,  # pinned first, then by name
    lambda row: row.summary.status.value,
    lambda row: row.summary.latest_version,
    lambda row: len(row.summary.parameters),
    lambda row: ", ".join(row.summary.domains),
    _last_run_key,
    _success_key,
)


class LibraryModel(RowsModel[LibraryRow]):
    """The library's rows as a table (a thin adapter over :class:`LibraryRow`).

    It sorts and filters its rows itself: sorting computes each row's key once (see
    :data:`_SORT_KEYS`) and a filter keeps the sorted order, so neither calls Python once per
    comparison as a sort proxy over a Python model does. It hands the view its rows a page at
    a time (:meth:`canFetchMore`/:meth:`fetchMore`), so the first paint of 10,000 rows lays
    out one page. A change of sort or filter resets the model.
    """

    HEADERS = ("Name", "Status", "Version", "Parameters", "Domain", "Last run", "Success")
    #: The role holding a row's sort key (so dates and rates sort as values, not text).
    SORT_ROLE = Qt.ItemDataRole.UserRole + 1
    ROW_ROLE = Qt.ItemDataRole.UserRole + 2
    #: How many rows the view gets at a time.
    PAGE = 200

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._given: list[LibraryRow] = []  # in the order given (a search's ranking)
        self._sorted: list[LibraryRow] = []
        self._fetched = 0
        self._column = -1
        self._order = Qt.SortOrder.AscendingOrder
        self._status: WorkflowStatus | None = None
        self._domain: str | None = None

    # ── contents ────────────────────────────────────────────────────────────────────────────

    def set_rows(self, rows: Iterable[LibraryRow]) -> None:
        """Replace every row (kept in the current sort, through the current filters)."""
        self._given = list(rows)
        self._reset(sort=True)

    def set_filters(self, status: WorkflowStatus | None, domain: str | None) -> None:
        """Show the rows with *status* (None: all but archived ones) on *domain* (None: any)."""
        if (status, domain) != (self._status, self._domain):
            self._status, self._domain = status, domain
            self._reset(sort=False)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by *column* (-1: in the order the rows were given)."""
        if (column, order) != (self._column, self._order):
            self._column, self._order = column, order
            self._reset(sort=True)

    def all_rows(self) -> list[LibraryRow]:
        """Every row, filtered out or not."""
        return list(self._given)

    def _accepts(self, row: LibraryRow) -> bool:
        s = row.summary
        if self._status is None:
            if s.status is WorkflowStatus.ARCHIVED:
                return False
        elif s.status != self._status:
            return False
        return self._domain is None or self._domain in s.domains

    def _reset(self, *, sort: bool) -> None:
        self.beginResetModel()
        if sort:
            if 0 <= self._column < len(_SORT_KEYS):
                self._sorted = sorted(
                    self._given,
                    key=_SORT_KEYS[self._column],
                    reverse=self._order is Qt.SortOrder.DescendingOrder,
                )
            else:
                self._sorted = list(self._given)
        self._rows = [row for row in self._sorted if self._accepts(row)]
        self._fetched = min(self.PAGE, len(self._rows))
        self.endResetModel()

    # ── lazy population ─────────────────────────────────────────────────────────────────────

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API default)
        return 0 if parent.isValid() else self._fetched

    def canFetchMore(self, parent: _Index) -> bool:
        return not parent.isValid() and self._fetched < len(self._rows)

    def fetchMore(self, parent: _Index) -> None:
        self.reveal(self._fetched + self.PAGE - 1)

    def reveal(self, row: int) -> None:
        """Hand the view the rows up to *row* (a page's worth past it)."""
        last = min(max(row, self._fetched + self.PAGE - 1), len(self._rows) - 1)
        if last < self._fetched:
            return
        self.beginInsertRows(QModelIndex(), self._fetched, last)
        self._fetched = last + 1
        self.endInsertRows()

    def row_of(self, workflow_id: str) -> int | None:
        """The model row of a workflow, if it passes the filters (maybe not handed out yet)."""
        for i, row in enumerate(self._rows):
            if row.summary.id == workflow_id:
                return i
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row_at(index)
        if row is None:
            return None
        s = row.summary
        column = index.column()
        if role == self.ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                ("★ " if s.pinned else "") + s.name,
                status_label(s.status) + (" · stale" if row.stale else ""),
                row.version_text,
                ", ".join(s.parameters) or "—",
                ", ".join(s.domains) or "—",
                row.last_run_text,
                row.success_text,
            )[column]
        if role == self.SORT_ROLE:
            return _SORT_KEYS[column](row)
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            score = f"\nmatch {row.score:.0%}" if row.score is not None else ""
            return (s.description or s.name) + score
        if role == Qt.ItemDataRole.ToolTipRole and column == self.HEADERS.index("Success"):
            return row.success_help
        if role == Qt.ItemDataRole.ToolTipRole and column == self.HEADERS.index("Status"):
            return f"Stale: {row.stale}" if row.stale else None
        return None
