"""The Recordings screen: the recordings in a table, and the selected one's steps as storyboard."""

from __future__ import annotations

import contextlib
import threading

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.models.trajectory import Event, Trajectory, TrajectoryKind
from desktop_app.core.views import TrajectorySummary
from desktop_app.ops.changes import Origin
from desktop_app.ops.induce import Induced
from desktop_app.ops.record import delete_recording
from desktop_app.ui import theme
from desktop_app.ui.host import Host
from desktop_app.ui.recordings_page.drafts import induce_draft, say_cancelled, show_draft
from desktop_app.ui.recordings_page.event_list import EventListModel, event_list_view
from desktop_app.ui.recordings_page.events import describe_event, screenshot_of
from desktop_app.ui.recordings_page.model import RecordingsModel, _Filter
from desktop_app.ui.recordings_page.thumbnails import ThumbnailCache, _scaled
from desktop_app.ui.table_model import current_item, select_source_row, visible_items

__all__ = ["RecordingsPage"]


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
        f"<p style='color:{theme.colours().muted};margin-top:0'>{kind} · {started}{duration} · "
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
        parts.append(f"<p style='color:{theme.colours().muted}'>Nothing was recorded.</p>")
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
        self.filter.setAccessibleName("Filter recordings")
        self.filter.setPlaceholderText("Filter by intent or address")
        self.filter.setClearButtonEnabled(True)
        self.record_button = QPushButton("Record…")
        self.record_button.setObjectName("recordings-record")
        self.record_button.setToolTip("Record a new demonstration in the browser (Ctrl+R)")
        self.record_button.clicked.connect(host.start_recording)
        self.induce_button = QPushButton("Induce workflow")
        self.induce_button.setObjectName("recordings-induce")
        self.induce_button.setToolTip(
            "Learn a draft workflow from this recording and open it in the editor (Enter). "
            "Select several recordings of one task (Ctrl+click) to learn what varies"
        )
        self.induce_button.clicked.connect(self._on_induce_button_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("recordings-cancel-induce")
        self.cancel_button.setToolTip(
            "Stop learning the workflow: no draft is saved, and the recordings are kept"
        )
        self.cancel_button.hide()  # shown while a workflow is being induced
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self._induction: threading.Event | None = None
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
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
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
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
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
        self.header.setAccessibleName("Recording details")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.thumbnails = ThumbnailCache(host, QSize(160, 100), self)
        self.events = EventListModel(self.thumbnails, self)
        self.events_view = event_list_view(
            self.events, QSize(160, 100), "recordings-events", tiles=True
        )
        self.events_view.setAccessibleName("Recorded steps")
        self.events_view.setToolTip("Double-click a step to see its screenshot full size")
        self.events_view.activated.connect(self._on_events_view_activated)
        buttons = QHBoxLayout()
        buttons.addWidget(self.induce_button)
        buttons.addWidget(self.cancel_button)
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
        return visible_items(self.proxy, RecordingsModel.SUMMARY_ROLE)

    def chosen(self) -> list[TrajectorySummary]:
        """Every selected recording, in display order (Ctrl- or Shift-click selects several of
        one task, to induce one workflow from them all)."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.proxy.index(r, 0).data(RecordingsModel.SUMMARY_ROLE) for r in rows]

    def selected(self) -> TrajectorySummary | None:
        """The current recording (the one whose steps are shown)."""
        summary: TrajectorySummary | None = current_item(self.table, RecordingsModel.SUMMARY_ROLE)
        return summary

    def select(self, trajectory_id: str) -> bool:
        """Select a recording if it is shown."""
        return select_source_row(self.table, self.proxy, self.model.row_of(trajectory_id))

    def _on_table_current_row_changed(self, *_: object) -> None:
        self._show_details(self.selected())

    def _update_buttons(self) -> None:
        live = _live_id(self._host)
        chosen = [summary for summary in self.chosen() if summary.id != live]
        self.induce_button.setEnabled(bool(chosen) and self._induction is None)
        self.induce_button.setText(
            f"Induce from {len(chosen)} recordings" if len(chosen) > 1 else "Induce workflow"
        )
        self.delete_button.setEnabled(len(chosen) == 1 and len(self.chosen()) == 1)

    def _show_details(self, summary: TrajectorySummary | None) -> None:
        self._details_generation += 1
        generation = self._details_generation
        live = summary is not None and summary.id == _live_id(self._host)
        self._update_buttons()
        self.events.set_events([])
        if summary is None:
            self.header.setText(
                f"<p style='color:{theme.colours().muted}'>Select a recording to see its steps.</p>"
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
        live = _live_id(self._host)
        chosen = [summary.id for summary in self.chosen() if summary.id != live]
        if not chosen:
            return
        if self._induction is not None:
            return  # one at a time
        host = self._host
        cancel = self._induction = threading.Event()
        self.induce_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.cancel_button.show()

        async def job() -> Induced:
            try:
                return await induce_draft(host, chosen, cancel=cancel)
            finally:
                self._induction = None
                self.cancel_button.hide()
                self._update_buttons()

        label = (
            "Inducing a workflow…"
            if len(chosen) == 1
            else (f"Inducing a workflow from {len(chosen)} recordings…")
        )
        host.tasks.start(
            job(),
            label=label,
            on_done=lambda draft: show_draft(host, draft),
            on_error=lambda exc: say_cancelled(host, exc),
        )

    def _on_cancel_button_clicked(self) -> None:
        if self._induction is None:
            return
        self._induction.set()
        self.cancel_button.setEnabled(False)
        self._host.show_status("Cancelling the induction…")

    def _on_delete_button_clicked(self) -> None:
        summary = self.selected()
        if summary is None or summary.id == _live_id(self._host) or len(self.chosen()) != 1:
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
            done = await host.tasks.call(
                delete_recording,
                host.backend.trajectories,
                summary.id,
                confirmed=True,
                origin=Origin.WINDOW,
            )
            host.events.announce(done.changes)
            host.show_status(done.summary)

        host.tasks.start(job(), label="Deleting…")


def _live_id(host: Host) -> str | None:
    """The id of the recording under way in this window, if any."""
    from desktop_app.ui.record import active_recording  # the record bar uses this module

    controller = active_recording(host)
    return controller.trajectory_id if controller is not None else None
