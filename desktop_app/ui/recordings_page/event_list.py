"""Recorded events as a list with thumbnails (a Qt model), and its views: a list or a storyboard."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from desktop_app.core.models.trajectory import Event
from desktop_app.ui.recordings_page.events import describe_event, screenshot_of
from desktop_app.ui.recordings_page.thumbnails import ThumbnailCache

__all__ = ["EventListModel", "event_list_view"]

_Index = QModelIndex | QPersistentModelIndex


def _event_tooltip(index: int, event: Event) -> str:
    lines = [f"Event {index}: {event.action.value}", event.at.astimezone().strftime("%H:%M:%S")]
    url = event.url or (event.before.url if event.before else None)
    if url:
        lines.append(url)
    if event.after is not None and event.after.url and event.after.url != url:
        lines.append(f"→ {event.after.url}")
    if event.target is not None and event.target.locators:
        lines.append(event.target.locators[0].describe())
    return "\n".join(lines)


class EventListModel(QAbstractListModel):
    """Events as a list (a thin adapter over a list of :class:`Event`): a line and a thumbnail."""

    EVENT_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self, thumbnails: ThumbnailCache | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._events: list[Event] = []
        self._thumbnails = thumbnails
        if thumbnails is not None:
            thumbnails.thumbnail_loaded.connect(self._on_thumbnails_thumbnail_loaded)

    def events(self) -> list[Event]:
        """The events shown, in order."""
        return list(self._events)

    def texts(self) -> list[str]:
        """What each row says."""
        return [describe_event(e) for e in self._events]

    def set_events(self, events: Sequence[Event]) -> None:
        """Show *events*; rows that stay the same are left alone (the view keeps its place)."""
        new = list(events)
        old = self._events
        same = 0
        while same < min(len(old), len(new)) and old[same] == new[same]:
            same += 1
        if same == len(old) == len(new):
            return
        if len(old) == len(new) and same == len(old) - 1:
            self._events = new
            index = self.index(same)
            self.dataChanged.emit(index, index)
            return
        if same < len(old):
            self.beginRemoveRows(QModelIndex(), same, len(old) - 1)
            self._events = old[:same]
            self.endRemoveRows()
        if same < len(new):
            self.beginInsertRows(QModelIndex(), same, len(new) - 1)
            self._events = new
            self.endInsertRows()
        self._events = new

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API default)
        return 0 if parent.isValid() else len(self._events)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._events):
            return None
        event = self._events[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{index.row() + 1}. {describe_event(event)}"
        if role == Qt.ItemDataRole.DecorationRole and self._thumbnails is not None:
            ref = screenshot_of(event)
            return self._thumbnails.get(ref) if ref else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return _event_tooltip(index.row(), event)
        if role == self.EVENT_ROLE:
            return event
        return None

    def _on_thumbnails_thumbnail_loaded(self, ref: str) -> None:
        for row, event in enumerate(self._events):
            if screenshot_of(event) == ref:
                index = self.index(row)
                self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole])


class _TileDelegate(QStyledItemDelegate):
    """A storyboard tile: the thumbnail (or an empty frame), its line beneath in two lines."""

    _TEXT_LINES = 2

    def __init__(self, size: QSize, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._size = size

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        line = option.fontMetrics.lineSpacing()
        return QSize(self._size.width() + 16, self._size.height() + 14 + line * self._TEXT_LINES)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        painter.save()
        rect = option.rect.adjusted(2, 2, -2, -2)
        palette = option.palette
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(rect, palette.highlight())
            text_color = palette.highlightedText().color()
        else:
            text_color = palette.text().color()
        frame = QRect(
            rect.x() + (rect.width() - self._size.width()) // 2,
            rect.y() + 4,
            self._size.width(),
            self._size.height(),
        )
        pixmap = index.data(Qt.ItemDataRole.DecorationRole)
        if isinstance(pixmap, QPixmap) and not pixmap.isNull():
            x = frame.x() + (frame.width() - pixmap.width()) // 2
            y = frame.y() + (frame.height() - pixmap.height()) // 2
            painter.drawPixmap(x, y, pixmap)
        else:
            painter.setPen(palette.mid().color())
            painter.drawRect(frame.adjusted(0, 0, -1, -1))
            painter.drawText(frame, Qt.AlignmentFlag.AlignCenter, "no screenshot")
        painter.setPen(text_color)
        text_rect = QRect(
            rect.x() + 4, frame.bottom() + 4, rect.width() - 8, rect.bottom() - frame.bottom() - 4
        )
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        metrics = option.fontMetrics
        lines: list[str] = []
        words = text.split()
        while words and len(lines) < self._TEXT_LINES:
            line = words.pop(0)
            while words and metrics.horizontalAdvance(f"{line} {words[0]}") <= text_rect.width():
                line = f"{line} {words.pop(0)}"
            lines.append(line)
        if words and lines:
            lines[-1] = metrics.elidedText(
                f"{lines[-1]} {' '.join(words)}", Qt.TextElideMode.ElideRight, text_rect.width()
            )
        painter.drawText(
            text_rect,
            int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop),
            "\n".join(
                metrics.elidedText(x, Qt.TextElideMode.ElideRight, text_rect.width()) for x in lines
            ),
        )
        painter.restore()


def event_list_view(
    model: EventListModel, size: QSize, name: str, *, tiles: bool = False
) -> QListView:
    """A view of *model*: a list with thumbnails of *size* beside each line, or (*tiles*) a
    storyboard of thumbnails with their line beneath, flowing left to right."""
    view = QListView()
    view.setObjectName(name)
    view.setModel(model)
    view.setIconSize(size)
    view.setUniformItemSizes(True)
    view.setWordWrap(True)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    if tiles:
        view.setViewMode(QListView.ViewMode.IconMode)
        view.setFlow(QListView.Flow.LeftToRight)
        view.setWrapping(True)
        view.setResizeMode(QListView.ResizeMode.Adjust)
        view.setMovement(QListView.Movement.Static)
        view.setSpacing(6)
        view.setItemDelegate(_TileDelegate(size, view))
    else:
        view.setSpacing(2)
        view.setAlternatingRowColors(True)
    return view
