"""The Review screen's Qt models: the review queue and a version's review history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QWidget

from desktop_app.core.models.workflow import StatusTransition
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.core.views import ReviewItem, WorkflowSummary
from desktop_app.ui.review_page.markup import status_colour, status_words, when
from desktop_app.ui.table_model import RowsModel

__all__ = ["HistoryModel", "QueueEntry", "ReviewQueueModel", "WorkflowsModel"]


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """A version waiting for review, as the queue lists it."""

    item: ReviewItem

    @property
    def name(self) -> str:
        """The version's name."""
        return self.item.name

    @property
    def workflow_id(self) -> str:
        """The workflow's id."""
        return self.item.workflow_id

    @property
    def number(self) -> int:
        """The version number."""
        return self.item.version

    @property
    def is_repair(self) -> bool:
        """Whether a replay proposed it (what healed, for someone to confirm)."""
        return self.item.created_by == REPLAY_ACTOR

    @property
    def submitted_by(self) -> str:
        """Who put it in review (who created it, when it was created in review)."""
        return self.item.submitted_by or self.item.created_by

    @property
    def submitted_at(self) -> datetime:
        """When it went into review."""
        return self.item.submitted_at or self.item.created_at


def _dot(colour: str) -> QIcon:
    pixmap = QPixmap(28, 28)  # drawn at twice the size: crisp on a 2x screen
    pixmap.setDevicePixelRatio(2)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(2, 2, 10, 10)
    painter.end()
    return QIcon(pixmap)


class ReviewQueueModel(QAbstractListModel):
    """The versions in review, most recently submitted first, as a list: a thin adapter over
    :class:`QueueEntry`. It holds a page of them at a time; scrolling to its end asks for the
    next page (:attr:`more_wanted`), which :meth:`add_entries` appends.

    Signals:
        more_wanted(int): the view wants more rows; the argument is how many are held.
    """

    EntryRole: Final = Qt.ItemDataRole.UserRole + 1
    more_wanted = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._entries: list[QueueEntry] = []
        self._total = 0
        self._asked = False
        self._icons: dict[bool, QIcon] = {}

    @property
    def entries(self) -> list[QueueEntry]:
        """The entries held, in order."""
        return list(self._entries)

    @property
    def total(self) -> int:
        """How many versions wait in all (the model may hold fewer)."""
        return self._total

    def set_entries(self, entries: Sequence[QueueEntry], total: int | None = None) -> None:
        """Show *entries* (in the order given: newest submission first), the first of *total*."""
        self.beginResetModel()
        self._entries = list(entries)
        self._total = max(total if total is not None else 0, len(self._entries))
        self._asked = False
        self.endResetModel()

    def add_entries(self, entries: Sequence[QueueEntry]) -> None:
        """Append the next page (those already held are skipped)."""
        held = {(e.workflow_id, e.number) for e in self._entries}
        new = [e for e in entries if (e.workflow_id, e.number) not in held]
        self._asked = False
        if not new:
            self._total = len(self._entries)  # the queue shrank meanwhile: nothing more to ask
            return
        first = len(self._entries)
        self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
        self._entries += new
        self.endInsertRows()

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        """Whether more versions wait than the model holds (and none are being fetched)."""
        return not parent.isValid() and not self._asked and len(self._entries) < self._total

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        """Ask for the next page (once until it comes)."""
        if self.canFetchMore(parent):
            self._asked = True
            self.more_wanted.emit(len(self._entries))

    def row_of(self, workflow_id: str, number: int) -> int | None:
        """The row showing that version, if it is in the queue."""
        return next(
            (
                row
                for row, e in enumerate(self._entries)
                if e.workflow_id == workflow_id and e.number == number
            ),
            None,
        )

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        """How many versions wait."""
        return 0 if parent.isValid() else len(self._entries)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """Two lines per version: name and number, then who proposed it and when."""
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if entry.is_repair:
                second = f"Repair proposed by a replay · {when(entry.submitted_at)}"
            else:
                second = f"Submitted by {entry.submitted_by} · {when(entry.submitted_at)}"
            return f"{entry.name} — version {entry.number}\n{second}"
        if role == Qt.ItemDataRole.ToolTipRole:
            note = entry.item.change_note or "(no change note)"
            return f"{entry.name}, version {entry.number}\n\n{note}"
        if role == Qt.ItemDataRole.DecorationRole:
            if entry.is_repair not in self._icons:
                self._icons[entry.is_repair] = _dot("#d97706" if entry.is_repair else "#2563eb")
            return self._icons[entry.is_repair]
        if role == Qt.ItemDataRole.AccessibleTextRole:
            kind = "repair" if entry.is_repair else "submitted draft"
            return f"{entry.name} version {entry.number}, {kind}"
        if role == self.EntryRole:
            return entry
        return None


class HistoryModel(RowsModel[StatusTransition]):
    """A version's review history: when, who, what changed, and the comment."""

    HEADERS = ("When", "Who", "Change", "Comment")

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """One transition per row."""
        t = self.row_at(index)
        if t is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 3:
            line = " ".join(t.comment.split())
            return line if len(line) <= 140 else line[:139] + "…"
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            frm = status_words(t.from_status) if t.from_status is not None else "created"
            return (
                when(t.at),
                t.actor,
                f"{frm} → {status_words(t.to_status)}",
                t.comment,
            )[index.column()]
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 2:
            return QColor(status_colour(t.to_status))
        return None


class WorkflowsModel(QAbstractListModel):
    """Every workflow by name, for the comparison picker (a model, so that 10,000 of them fill
    the box at once, not one item at a time)."""

    IdRole: Final = Qt.ItemDataRole.UserRole

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._summaries: list[WorkflowSummary] = []
        self._rows: dict[str, int] = {}
        self._empty_text = ""

    def set_summaries(self, summaries: Sequence[WorkflowSummary], empty_text: str) -> None:
        """Show *summaries* (in order), or one line saying *empty_text* when there are none."""
        self.beginResetModel()
        self._summaries = list(summaries)
        self._rows = {s.id: row for row, s in enumerate(self._summaries)}
        self._empty_text = empty_text
        self.endResetModel()

    def row_of(self, workflow_id: str | None) -> int | None:
        """The row of a workflow (a lookup: ``findData`` would call :meth:`data` per row)."""
        return self._rows.get(workflow_id) if workflow_id is not None else None

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        """How many workflows (one line when there are none)."""
        return 0 if parent.isValid() else max(len(self._summaries), 1)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """A workflow's name, id and a tooltip."""
        if not index.isValid():
            return None
        if not self._summaries:
            return self._empty_text if role == Qt.ItemDataRole.DisplayRole else None
        s = self._summaries[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return s.name
        if role == self.IdRole:
            return s.id
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{s.name}: {s.latest_version} version(s), {status_words(s.status)}"
        return None
