"""The Review screen's Qt models: the review queue and a version's review history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QWidget

from desktop_app.core.models.workflow import StatusTransition, WorkflowStatus, WorkflowVersion
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.ui.review_page.markup import status_colour, status_words, when
from desktop_app.ui.table_model import RowsModel

__all__ = ["HistoryModel", "QueueEntry", "ReviewQueueModel"]


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """A version waiting for review."""

    name: str
    version: WorkflowVersion

    @property
    def workflow_id(self) -> str:
        """The workflow's id."""
        return self.version.workflow_id

    @property
    def number(self) -> int:
        """The version number."""
        return self.version.version

    @property
    def is_repair(self) -> bool:
        """Whether a replay proposed it (what healed, for someone to confirm)."""
        return self.version.created_by == REPLAY_ACTOR

    @property
    def submission(self) -> StatusTransition | None:
        """The transition that put it in review."""
        return next(
            (
                t
                for t in reversed(self.version.transitions)
                if t.to_status is WorkflowStatus.IN_REVIEW
            ),
            None,
        )

    @property
    def submitted_at(self) -> datetime:
        """When it went into review."""
        submission = self.submission
        return submission.at if submission is not None else self.version.created_at


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
    """The versions in review, newest first, as a list: a thin adapter over :class:`QueueEntry`."""

    EntryRole: Final = Qt.ItemDataRole.UserRole + 1

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._entries: list[QueueEntry] = []
        self._icons: dict[bool, QIcon] = {}

    @property
    def entries(self) -> list[QueueEntry]:
        """The entries shown, in order."""
        return list(self._entries)

    def set_entries(self, entries: Sequence[QueueEntry]) -> None:
        """Show *entries* (newest first)."""
        self.beginResetModel()
        self._entries = sorted(entries, key=lambda e: e.submitted_at, reverse=True)
        self.endResetModel()

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
            submission = entry.submission
            who = submission.actor if submission is not None else entry.version.created_by
            if entry.is_repair:
                second = f"Repair proposed by a replay · {when(entry.submitted_at)}"
            else:
                second = f"Submitted by {who} · {when(entry.submitted_at)}"
            return f"{entry.name} — version {entry.number}\n{second}"
        if role == Qt.ItemDataRole.ToolTipRole:
            note = entry.version.change_note or "(no change note)"
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
