"""The Recordings screen: every demonstration, its steps with screenshots, and what to do with it.

Also home to what the record control bar shares with it: :func:`describe_event` (one line a
person reads for an event), :class:`EventListModel` (events as a list with thumbnails) and
:class:`ThumbnailCache` (screenshots scaled off the GUI thread), and :func:`induce_draft` /
:func:`show_draft` (induce a draft from a recording and open it in the editor).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QImage, QKeySequence, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.induction.naming import label_of
from desktop_app.core.models.trajectory import ActionKind, Event, Trajectory, TrajectoryKind
from desktop_app.core.views import TrajectorySummary
from desktop_app.ui.backend import InducedDraft
from desktop_app.ui.host import Host
from desktop_app.ui.table_model import RowsModel

__all__ = [
    "EventListModel",
    "RecordingsModel",
    "RecordingsPage",
    "ThumbnailCache",
    "describe_event",
    "event_list_view",
    "induce_draft",
    "screenshot_of",
    "show_draft",
]

_Index = QModelIndex | QPersistentModelIndex

_MAX_VALUE = 60


# ── one line per event ──────────────────────────────────────────────────────────────────────


def _clip(text: str, limit: int = _MAX_VALUE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_event(event: Event) -> str:
    """What a person reads for *event*: "Type “Jane” into “Full name”", "Click “Save”"."""
    label = label_of(event.target)
    on = f"“{_clip(label, 40)}”" if label else "the element"
    field = f"“{_clip(label, 40)}”" if label else "a field"
    value = event.value
    text = _clip(value) if isinstance(value, str) else ""
    action = event.action
    if action is ActionKind.NAVIGATE:
        title = event.after.title if event.after and event.after.title else None
        where = _clip(title or event.url or "a page", 80)
        return f"Open {where}" + ("" if event.typed is not False else " (followed a link)")
    if action is ActionKind.CLICK:
        return f"Click {on}"
    if action is ActionKind.DOUBLE_CLICK:
        return f"Double-click {on}"
    if action is ActionKind.FILL:
        if event.is_secret:
            return f"Type a secret into {field} (not stored)"
        return f"Type “{text}” into {field}" if text else f"Clear {field}"
    if action is ActionKind.SELECT:
        return f"Choose “{text}” in {field}"
    if action is ActionKind.CHECK:
        return f"Check {on}"
    if action is ActionKind.UNCHECK:
        return f"Uncheck {on}"
    if action is ActionKind.PRESS:
        chord = "+".join([*(m.value for m in event.modifiers), event.key or "a key"])
        return f"Press {chord}" + (f" in {field}" if label else "")
    if action is ActionKind.SCROLL:
        down = event.scroll is None or event.scroll.dy >= 0
        return "Scroll down" if down else "Scroll up"
    if action is ActionKind.UPLOAD:
        return f"Upload {', '.join(event.files) or 'a file'} into {field}"
    if action is ActionKind.SUBMIT:
        return "Submit the form"
    if action is ActionKind.SWITCH_TAB:
        url = event.before.url if event.before and event.before.url else None
        return f"Switch to tab {event.tab or ''}".rstrip() + (f" ({_clip(url, 60)})" if url else "")
    if action is ActionKind.DESKTOP_CLICK:
        window = event.before.window_title if event.before else None
        return f"Click {on}" + (f" in {_clip(window, 40)}" if window else "")
    if action is ActionKind.DESKTOP_TYPE:
        return "Type a secret (not stored)" if event.is_secret else f"Type “{text}”"
    if action is ActionKind.HOTKEY:
        return "Press " + "+".join([*(m.value for m in event.modifiers), event.key or "a key"])
    if action is ActionKind.NOTE:
        return f"Note: {_clip(text, 120)}"
    return action.value.replace("_", " ").capitalize()


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


def screenshot_of(event: Event) -> str | None:
    """The screenshot that shows *event* (before it took effect, else after)."""
    for observation in (event.before, event.after):
        if observation is not None and observation.screenshot:
            return observation.screenshot
    return None


# ── thumbnails ──────────────────────────────────────────────────────────────────────────────


def _scaled(get: Callable[[str], bytes], ref: str, width: int, height: int) -> QImage | None:
    """The screenshot *ref*, decoded and scaled (runs on the store thread, not the GUI's)."""
    image = QImage.fromData(get(ref))
    if image.isNull():
        return None
    return image.scaled(
        width,
        height,
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )


class ThumbnailCache(QObject):
    """Screenshots as small pixmaps, loaded in the background the first time they are asked for.

    Signals:
        thumbnail_loaded(str): the thumbnail of a media ref is ready.
    """

    thumbnail_loaded = Signal(str)

    def __init__(self, host: Host, size: QSize, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._size = size
        self._pixmaps: dict[str, QPixmap] = {}
        self._asked: set[str] = set()

    @property
    def size(self) -> QSize:
        """The size thumbnails fit in."""
        return self._size

    def get(self, ref: str) -> QPixmap | None:
        """The thumbnail of *ref* if loaded; else None, and it starts loading."""
        pixmap = self._pixmaps.get(ref)
        if pixmap is None and ref not in self._asked:
            self._asked.add(ref)
            with contextlib.suppress(RuntimeError):  # the window is closing
                self._host.tasks.start(
                    self._load(ref),
                    label="Loading screenshots…",
                    on_error=lambda _exc: True,  # a screenshot gone: the step shows none
                )
        return pixmap

    async def _load(self, ref: str) -> None:
        media = self._host.backend.media
        image = await self._host.tasks.call(
            _scaled, media.get, ref, self._size.width(), self._size.height()
        )
        if image is not None:
            self._pixmaps[ref] = QPixmap.fromImage(image)
            self.thumbnail_loaded.emit(ref)


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


# ── induction ───────────────────────────────────────────────────────────────────────────────


async def induce_draft(host: Host, trajectory_id: str) -> InducedDraft:
    """Induce a draft from a recording (with the LLM when one is configured) and save it."""
    backend = host.backend
    use_llm = await host.tasks.call(backend.llm_configured)
    draft = await host.tasks.call(backend.induce, trajectory_id, use_llm=use_llm)
    host.events.workflows_changed.emit(draft.saved.version.workflow_id)
    return draft


def show_draft(host: Host, draft: InducedDraft) -> None:
    """Open a freshly induced draft in the editor and say what induction noticed."""
    version = draft.saved.version
    workflow = version.workflow
    host.open_editor(workflow.id, version.version)
    host.show_status(
        f"Drafted “{workflow.name}”: {len(workflow.steps)} steps, "
        f"{len(workflow.parameters)} parameters — review it in the editor"
    )
    if draft.notes:
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Notes on the new draft",
            f"“{workflow.name}” was drafted from the recording. Worth a look while you review it:",
            parent=host.window,
        )
        box.setObjectName("induction-notes")
        box.setInformativeText("\n".join(f"• {note}" for note in draft.notes))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()


# ── the screen ──────────────────────────────────────────────────────────────────────────────


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


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _details_html(summary: TrajectorySummary, trajectory: Trajectory | None, *, live: bool) -> str:
    parts = [f"<h3 style='margin-bottom:2px'>{_escape(summary.intent or '(no intent given)')}</h3>"]
    started = summary.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
    duration = ""
    if summary.ended_at is not None:
        seconds = int((summary.ended_at - summary.started_at).total_seconds())
        duration = f" · {seconds // 60} min {seconds % 60:02d} s"
    kind = "Web" if summary.kind is TrajectoryKind.WEB else "Desktop"
    events = summary.event_count or summary.raw_event_count
    observed = (
        f" ({summary.raw_event_count} observed, noise included)"
        if summary.raw_event_count > events
        else ""
    )
    parts.append(
        f"<p style='color:gray;margin-top:0'>{kind} · {started}{duration} · "
        f"{events} events{observed} · id {summary.id[:8]}</p>"
    )
    if summary.start:
        parts.append(f"<p>Started at <code>{_escape(summary.start)}</code></p>")
    if live:
        parts.append("<p><b>Still recording</b> (the steps so far are shown).</p>")
    elif summary.incomplete:
        parts.append(
            "<p><b>Incomplete:</b> the recorder stopped abruptly; the events up to then are kept."
            "</p>"
        )
    if trajectory is not None and not trajectory.events:
        parts.append("<p style='color:gray'>Nothing was recorded.</p>")
    return "".join(parts)


class RecordingsPage(QWidget):
    """Every recorded demonstration; see its steps, induce a workflow from it, or delete it.

    Signals:
        rows_shown(): the table was filled.
        details_shown(str): the steps of a recording (its id) are shown.
    """

    rows_shown = Signal()
    details_shown = Signal(str)

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.setObjectName("recordings-page")
        self._host = host
        self._details_generation = 0

        self.filter = QLineEdit()
        self.filter.setObjectName("recordings-filter")
        self.filter.setPlaceholderText("Filter by intent or address")
        self.filter.setClearButtonEnabled(True)
        self.record_button = QPushButton("Record…")
        self.record_button.setObjectName("recordings-record")
        self.record_button.setToolTip("Record a new demonstration in the browser (Ctrl+R)")
        self.record_button.clicked.connect(host.start_recording)
        self.induce_button = QPushButton("Induce workflow")
        self.induce_button.setObjectName("recordings-induce")
        self.induce_button.setToolTip(
            "Learn a draft workflow from this recording and open it in the editor (Enter)"
        )
        self.induce_button.clicked.connect(self._on_induce_button_clicked)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("recordings-delete")
        self.delete_button.setToolTip(
            "Delete this recording for good (workflows induced from it stay) (Del)"
        )
        self.delete_button.clicked.connect(self._on_delete_button_clicked)
        bar = QHBoxLayout()
        bar.addWidget(self.filter, 1)
        bar.addWidget(self.record_button)

        self.model = RecordingsModel(self)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.filter.textChanged.connect(self.proxy.set_text)
        self.table = QTableView()
        self.table.setObjectName("recordings-table")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        for column in (1, 3, 4, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(2, 300)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        self.table.doubleClicked.connect(lambda _index: self._on_induce_button_clicked())
        for text, shortcut, slot in (
            ("Induce workflow", "Return", self._on_induce_button_clicked),
            ("Delete…", "Delete", self._on_delete_button_clicked),
        ):
            action = QAction(text, self.table)
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(slot)
            self.table.addAction(action)

        self.empty = QLabel(
            "<h3>No recordings yet</h3><p>Press <b>Record…</b> (Ctrl+R), say what you are about "
            "to do, and do it once in the browser that opens.<br>Procedura keeps every step "
            "with a screenshot and learns a workflow from it that you can edit and replay.</p>"
        )
        self.empty.setObjectName("recordings-empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self._stack = QStackedWidget()
        self._stack.addWidget(self.table)
        self._stack.addWidget(self.empty)

        self.header = QLabel()
        self.header.setObjectName("recordings-details")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.thumbnails = ThumbnailCache(host, QSize(160, 100), self)
        self.events = EventListModel(self.thumbnails, self)
        self.events_view = event_list_view(
            self.events, QSize(160, 100), "recordings-events", tiles=True
        )
        self.events_view.setToolTip("Double-click a step to see its screenshot full size")
        self.events_view.activated.connect(self._on_events_view_activated)
        buttons = QHBoxLayout()
        buttons.addWidget(self.induce_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.header)
        side_layout.addWidget(self.events_view, 1)
        side_layout.addLayout(buttons)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self._stack)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        self._show_details(None)
        host.events.recordings_changed.connect(self._on_events_recordings_changed)

    # ── loading ─────────────────────────────────────────────────────────────────────────────

    def refresh(self, select: str | None = None) -> None:
        """Reload in the background (then select the recording *select*, if given)."""

        async def job() -> None:
            await self.reload()
            if select:
                self.select(select)

        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(job(), label="Loading recordings…")

    async def reload(self) -> None:
        """Load every recording, newest first."""
        summaries = await self._host.tasks.call(self._host.backend.trajectories.list)
        selected = self.selected()
        self.model.set_rows(summaries, _live_id(self._host))
        self._stack.setCurrentWidget(self.table if summaries else self.empty)
        if selected is None or not self.select(selected.id):
            if self.proxy.rowCount():
                self.table.selectRow(0)
            else:
                self._show_details(None)
        self.rows_shown.emit()

    def _on_events_recordings_changed(self, trajectory_id: str) -> None:
        self.refresh(trajectory_id or None)

    # ── selection ───────────────────────────────────────────────────────────────────────────

    def visible_rows(self) -> list[TrajectorySummary]:
        """The recordings the table shows now, in display order."""
        return [
            self.proxy.index(r, 0).data(RecordingsModel.SUMMARY_ROLE)
            for r in range(self.proxy.rowCount())
        ]

    def selected(self) -> TrajectorySummary | None:
        """The selected recording."""
        index = self.table.selectionModel().currentIndex()
        if not index.isValid():
            return None
        summary: TrajectorySummary = index.data(RecordingsModel.SUMMARY_ROLE)
        return summary

    def select(self, trajectory_id: str) -> bool:
        """Select a recording if it is shown."""
        row = self.model.row_of(trajectory_id)
        if row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return False
        self.table.selectRow(index.row())
        return True

    def _on_table_current_row_changed(self, *_: object) -> None:
        self._show_details(self.selected())

    def _show_details(self, summary: TrajectorySummary | None) -> None:
        self._details_generation += 1
        generation = self._details_generation
        live = summary is not None and summary.id == _live_id(self._host)
        self.induce_button.setEnabled(summary is not None and not live)
        self.delete_button.setEnabled(summary is not None and not live)
        self.events.set_events([])
        if summary is None:
            self.header.setText(
                "<p style='color:gray'>Select a recording to see its steps.</p>"
                if self.model.rowCount()
                else ""
            )
            return
        self.header.setText(_details_html(summary, None, live=live))

        async def load() -> None:
            trajectory = await self._host.tasks.call(
                self._host.backend.trajectories.get, summary.id
            )
            if generation != self._details_generation:
                return  # another recording was selected meanwhile
            self.header.setText(_details_html(summary, trajectory, live=live))
            self.events.set_events(trajectory.events)
            self.details_shown.emit(summary.id)

        with contextlib.suppress(RuntimeError):
            self._host.tasks.start(load(), label="Loading the recording…")

    # ── actions ─────────────────────────────────────────────────────────────────────────────

    def _on_events_view_activated(self, index: QModelIndex) -> None:
        event: Event | None = index.data(EventListModel.EVENT_ROLE)
        ref = screenshot_of(event) if event is not None else None
        if event is None or ref is None:
            return
        host = self._host
        title = f"{index.row() + 1}. {describe_event(event)}"

        async def show() -> None:
            image = await host.tasks.call(_scaled, host.backend.media.get, ref, 1280, 800)
            if image is None:
                return
            viewer = QDialog(self)
            viewer.setObjectName("screenshot-viewer")
            viewer.setWindowTitle(title)
            viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            picture = QLabel()
            picture.setPixmap(QPixmap.fromImage(image))
            layout = QVBoxLayout(viewer)
            layout.setContentsMargins(0, 0, 0, 0)
            layout.addWidget(picture)
            viewer.show()

        host.tasks.start(show(), label="Opening the screenshot…")

    def _on_induce_button_clicked(self) -> None:
        summary = self.selected()
        if summary is None or summary.id == _live_id(self._host):
            return
        host = self._host
        self.induce_button.setEnabled(False)

        async def job() -> InducedDraft:
            try:
                return await induce_draft(host, summary.id)
            finally:
                self.induce_button.setEnabled(True)

        host.tasks.start(
            job(), label="Inducing a workflow…", on_done=lambda draft: show_draft(host, draft)
        )

    def _on_delete_button_clicked(self) -> None:
        summary = self.selected()
        if summary is None or summary.id == _live_id(self._host):
            return
        answer = QMessageBox.question(
            self,
            "Delete recording",
            f"Delete the recording “{summary.intent or summary.id[:8]}” with its "
            f"{summary.event_count} steps, for good?\n\nWorkflows induced from it are kept.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        host = self._host

        async def job() -> None:
            await host.tasks.call(host.backend.trajectories.delete, summary.id, confirmed=True)
            host.events.recordings_changed.emit("")
            host.show_status(f"Deleted the recording “{summary.intent or summary.id[:8]}”")

        host.tasks.start(job(), label="Deleting…")


def _live_id(host: Host) -> str | None:
    """The id of the recording under way in this window, if any."""
    from desktop_app.ui.record import active_recording  # the record bar uses this module

    controller = active_recording(host)
    return controller.trajectory_id if controller is not None else None
