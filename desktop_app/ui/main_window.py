"""The main window: navigation on the left, one screen at a time, a status bar with progress."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QProgressBar,
    QStackedWidget,
    QWidget,
)

from desktop_app.ui.backend import Backend
from desktop_app.ui.collector import GuiThreadCollector
from desktop_app.ui.host import AppEvents
from desktop_app.ui.tasks import TaskRunner
from desktop_app.ui.windows import bring_forward, fit_window, name_toolbar, scrolling

__all__ = ["MainWindow", "Screen"]

#: How long an editor's test browser may take to close when the app quits.
SHUTDOWN_GRACE_S = 3.0


class Screen(Protocol):
    """A screen of the main window."""

    async def reload(self) -> None:
        """Load what the screen shows from the stores (off the GUI thread) and show it."""
        ...


class MainWindow(QMainWindow):
    """Library, Recordings, Review, Runs, Settings and Fleet, with the jobs they start.

    Args:
        backend: the services.
        icon: the application icon, if there is one.
        dialogs: show error dialogs (tests turn them off and read ``tasks.last_error``).
    """

    SCREENS = ("Library", "Recordings", "Review", "Runs", "Settings", "Fleet")

    def __init__(
        self, backend: Backend, *, icon: QIcon | None = None, dialogs: bool = True
    ) -> None:
        super().__init__()
        self.setObjectName("main-window")
        self.setWindowTitle("Procedura")
        if icon is not None:
            self.setWindowIcon(icon)
        self._backend = backend
        self._events = AppEvents(self)
        self._tasks = TaskRunner(self, dialogs=dialogs)
        self._collector = GuiThreadCollector(self)
        self._editors: dict[str, QWidget] = {}
        self._windows: set[QWidget] = set()

        from desktop_app.ui.fleet_page import FleetPage
        from desktop_app.ui.library_page import LibraryPage
        from desktop_app.ui.recordings_page import RecordingsPage
        from desktop_app.ui.review_page import ReviewPage
        from desktop_app.ui.runs_page import RunsPage
        from desktop_app.ui.settings_page import SettingsPage

        self.library = LibraryPage(self)
        self.recordings = RecordingsPage(self)
        self.review = ReviewPage(self)
        self.runs = RunsPage(self)
        self.settings_page = SettingsPage(self)
        self.fleet = FleetPage(self)
        self._screens: list[QWidget] = [
            self.library,
            self.recordings,
            self.review,
            self.runs,
            self.settings_page,
            self.fleet,
        ]

        self._nav = QListWidget()
        self._nav.setObjectName("navigation")
        self._nav.setIconSize(QSize(20, 20))
        self._nav.setFixedWidth(180)
        self._nav.setFrameShape(QListWidget.Shape.NoFrame)
        self._nav.setAccessibleName("Screens")
        self._nav.setAccessibleDescription(
            "Library, Recordings, Review, Runs, Settings and the team's Fleet"
        )
        self._stack = QStackedWidget()
        for name, screen in zip(self.SCREENS, self._screens, strict=True):
            QListWidgetItem(name, self._nav)
            self._stack.addWidget(screen)
        self._nav.currentRowChanged.connect(self._on_nav_current_row_changed)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._nav)
        layout.addWidget(self._stack, 1)
        self.setCentralWidget(scrolling(central))  # the Review screen is wide: it may scroll

        self._progress = QProgressBar()
        self._progress.setObjectName("busy")
        self._progress.setRange(0, 0)
        self._progress.setMaximumWidth(160)
        self._progress.setAccessibleName("Busy")
        self._progress.hide()
        self._busy_label = QLabel()
        self.statusBar().addPermanentWidget(self._busy_label)
        self.statusBar().addPermanentWidget(self._progress)
        self._tasks.busy_changed.connect(self._on_tasks_busy_changed)

        self._add_actions()
        self._nav.setCurrentRow(0)
        fit_window(self, QSize(1200, 780), remember="main")

    # ── Host ────────────────────────────────────────────────────────────────────────────────

    @property
    def backend(self) -> Backend:
        """The services."""
        return self._backend

    @property
    def tasks(self) -> TaskRunner:
        """The owner of every background job."""
        return self._tasks

    @property
    def events(self) -> AppEvents:
        """Change notifications."""
        return self._events

    @property
    def window(self) -> QWidget:  # type: ignore[override]  # Host.window: a property there
        """This window."""
        return self

    def open_editor(self, workflow_id: str, version: int | None = None) -> QWidget:
        """Open the step editor on a workflow, in front (an open editor of it comes forward);
        the editor window."""
        from desktop_app.ui.editor.window import EditorWindow

        existing = self._editors.pop(workflow_id, None)
        if existing is not None:
            if existing.isVisible():
                self._editors[workflow_id] = existing
                bring_forward(existing)
                return existing
            self._windows.discard(existing)  # closed earlier; a fresh editor shows the latest
        editor = EditorWindow(self, workflow_id, version)
        self._editors[workflow_id] = editor
        self.adopt(editor)
        bring_forward(editor)
        return editor

    def open_run(
        self, workflow_id: str, version: int | None = None, *, verify: bool = False
    ) -> None:
        """Ask for the parameters, then run with the run view showing (*verify*: as a
        verification)."""
        from desktop_app.ui.run_view import open_run

        open_run(self, workflow_id, version, verify=verify)

    def show_run(self, run_id: str) -> None:
        """Switch to Runs and show one run."""
        self.show_screen("Runs")
        self.runs.show_run(run_id)

    def show_review(self, workflow_id: str, version: int | None = None) -> None:
        """Switch to Review and show one version."""
        self.show_screen("Review")
        self.review.show_version(workflow_id, version)

    def start_recording(self) -> None:
        """Open the record dialog."""
        from desktop_app.ui.record import start_recording

        start_recording(self)

    def show_fleet(self) -> None:
        """Switch to the Fleet screen (the team's runner fleet) and bring the window forward."""
        self.show_screen("Fleet")
        bring_forward(self)

    def show_status(self, message: str) -> None:
        """A message in the status bar for a few seconds."""
        self.statusBar().showMessage(message, 6000)

    # ── navigation ──────────────────────────────────────────────────────────────────────────

    def show_screen(self, name: str) -> QWidget:
        """Switch to the screen called *name* and return it."""
        row = self.SCREENS.index(name)
        self._nav.setCurrentRow(row)
        return self._screens[row]

    def adopt(self, window: QWidget) -> None:
        """Keep a top-level window (editor, run view) alive until it closes."""
        self._windows.add(window)
        window.destroyed.connect(lambda *_: self._windows.discard(window))

    async def reload_all(self) -> None:
        """Load every screen (at start-up)."""
        for screen in self._screens:
            await screen.reload()  # type: ignore[attr-defined]

    async def prepare_browser(self) -> None:
        """Load the browser automation code on a thread of its own (at start-up, once the
        screens are loaded), so the first run or recording does not hold up the window; then
        leave what start-up made out of the cycle collector's full collections."""
        await asyncio.to_thread(self._backend.prepare_browser)
        self._collector.freeze()  # start-up is over: what it made stays out of collections

    def _on_nav_current_row_changed(self, row: int) -> None:
        if row >= 0:
            self._stack.setCurrentIndex(row)

    def _add_actions(self) -> None:
        record = QAction(_record_icon(), "&Record…", self)
        record.setObjectName("action-record")
        record.setShortcut(QKeySequence("Ctrl+R"))
        record.setStatusTip("Record a new demonstration")
        record.triggered.connect(self.start_recording)
        self.record_action = record
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        name_toolbar(toolbar, "Main")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addAction(record)
        for i, name in enumerate(self.SCREENS, 1):
            go = QAction(name, self)
            go.setShortcut(QKeySequence(f"Ctrl+{i}"))
            go.triggered.connect(lambda _=False, n=name: self.show_screen(n))
            self.addAction(go)
        find = QAction("Find", self)
        find.setShortcut(QKeySequence.StandardKey.Find)
        find.triggered.connect(self._focus_search)
        self.addAction(find)
        quit_ = QAction("Quit", self)
        quit_.setObjectName("action-quit")  # the tray makes it quit the app, not hide the window
        quit_.setShortcut(QKeySequence.StandardKey.Quit)
        quit_.triggered.connect(self.close)
        self.addAction(quit_)

    def _focus_search(self) -> None:
        self.show_screen("Library")
        self.library.focus_search()

    def _on_tasks_busy_changed(self, busy: bool, label: str) -> None:
        self._progress.setVisible(busy)
        self._busy_label.setText(label if busy else "")

    # ── closing ─────────────────────────────────────────────────────────────────────────────

    def closeEvent(self, event: QCloseEvent) -> None:
        """Close the editors and run views first; stay open if one refuses (unsaved changes)."""
        for window in list(self._windows):
            window.close()
        if any(window.isVisible() for window in self._windows):
            event.ignore()
            return
        event.accept()

    async def shutdown(self) -> None:
        """Let closing windows tidy up (briefly), then cancel every job and wait for them."""
        for window in list(self._windows):
            window.close()
        for window in list(self._windows):  # an editor's test page is a browser: close it
            tester = getattr(window, "tester", None)
            if tester is not None and tester.is_open:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(tester.close(), SHUTDOWN_GRACE_S)
        await self._tasks.shutdown()
        self._collector.stop()


def _record_icon() -> QIcon:
    """A red dot, the universal "record" sign (an SVG: crisp at any scale)."""
    from desktop_app.resources import resource_path

    return QIcon(str(resource_path("icons", "record.svg")))
