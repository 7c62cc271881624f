"""The tray icon and its menu over the main window, put together from its parts."""

from __future__ import annotations

import contextlib
from typing import Final

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtGui import QAction, QCursor, QIcon
from PySide6.QtWidgets import QMenu, QMessageBox, QSystemTrayIcon

from desktop_app.ui.batch_window import BatchWindow
from desktop_app.ui.host import Host
from desktop_app.ui.run_view import RunWindow
from desktop_app.ui.tray.base import TrayMessage, TrayState, _ActiveRun, _Watched
from desktop_app.ui.tray.fleet import TrayFleet
from desktop_app.ui.tray.icons import _app_icon, _badged
from desktop_app.ui.tray.menu import SEARCH_AFTER, TrayMenu
from desktop_app.ui.tray.menu_plan import MenuPlan
from desktop_app.ui.tray.recording import TrayRecording
from desktop_app.ui.tray.runs import TrayRuns

__all__ = ["Tray"]

#: Changes that arrive this close together rebuild the menu once.
RELOAD_DELAY_MS: Final = 150

#: How often the Fleet submenu counts the rows and reads the jobs again (and when the menu
#: opens).
FLEET_REFRESH_MS: Final = 30_000


class Tray(TrayMenu, TrayRuns, TrayRecording, TrayFleet):
    """The tray icon and its menu, over the main window (*host*).

    Args:
        host: the main window.
        icon: the application icon (else the window's, else a drawn one).
        force: behave as if the platform had a system tray (tests: offscreen there is none).
        parent: the Qt parent (default: the main window).

    Signals:
        quit_requested(): the person chose Quit and the main window closed: end the app.
        menu_rebuilt(): the menu now shows the latest workflows.
        run_did_finish(str): a run the tray started ended; its run id ("" if none was recorded).
        fleet_counted(): the Fleet submenu shows new counts and jobs.
    """

    quit_requested = Signal()
    menu_rebuilt = Signal()
    run_did_finish = Signal(str)
    fleet_counted = Signal()

    def __init__(
        self,
        host: Host,
        *,
        icon: QIcon | None = None,
        force: bool = False,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent if parent is not None else host.window)
        self.setObjectName("tray")
        self._host = host
        self.available = force or QSystemTrayIcon.isSystemTrayAvailable()
        self.search_after = SEARCH_AFTER
        self.last_message: TrayMessage | None = None
        self.plan = MenuPlan()
        self._paused = False
        self._quitting = False
        self._told_hidden = False
        self._active: dict[object, _ActiveRun] = {}
        self._watched: dict[RunWindow, _Watched] = {}
        self._batches: set[BatchWindow] = set()
        self._base_icon = _app_icon(icon, host.window)
        self._icons: dict[TrayState, QIcon] = {}
        self._status_actions: dict[object, QAction] = {}
        self.menu = QMenu(host.window)
        self.menu.setObjectName("tray-menu")
        self.menu.setToolTipsVisible(True)
        self.pause_action = QAction("&Pause runs", self)
        self.pause_action.setObjectName("tray-pause")
        self.pause_action.setCheckable(True)
        self.pause_action.setToolTip("While paused, choosing a workflow here does not run it")
        self.pause_action.toggled.connect(self._on_pause_action_toggled)
        self.open_action = QAction("&Open Procedura", self)
        self.open_action.setObjectName("tray-open")
        self.open_action.triggered.connect(self.open_window)
        self.record_action = QAction("&Record new…", self)
        self.record_action.setObjectName("tray-record")
        self.record_action.setToolTip("Show Procedura a task in a browser, to learn it")
        self.record_action.triggered.connect(self._on_record_action_triggered)
        self.record_desktop_action = QAction("Record on the &desktop…", self)
        self.record_desktop_action.setObjectName("tray-record-desktop")
        self.record_desktop_action.setToolTip(
            "Show Procedura a task done in other applications' windows (clicks, typing, "
            "shortcuts), to learn it; a small bar stops the recording"
        )
        self.record_desktop_action.triggered.connect(self._on_record_desktop_action_triggered)
        self.batch_action = QAction("Run over a &CSV file…", self)
        self.batch_action.setObjectName("tray-batch")
        self.batch_action.setToolTip(
            "Run an approved workflow once per row of a CSV file, with a progress window"
        )
        self.batch_action.triggered.connect(self.choose_batch)
        self.search_action = QAction("&Search workflows…", self)
        self.search_action.setObjectName("tray-search")
        self.search_action.triggered.connect(self.search)
        self.quit_action = QAction("&Quit Procedura", self)
        self.quit_action.setObjectName("tray-quit")
        self.quit_action.triggered.connect(self._on_quit_action_triggered)
        self._init_fleet()
        self._fleet_timer = QTimer(self)
        self._fleet_timer.setInterval(FLEET_REFRESH_MS)
        self._fleet_timer.timeout.connect(self.refresh_fleet)
        if host.backend.fleet_enabled():
            self._fleet_timer.start()
            self.menu.aboutToShow.connect(self._on_menu_about_to_show)
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(RELOAD_DELAY_MS)
        self._reload_timer.timeout.connect(self._on_reload_timer_timeout)

        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(self._state_icon("idle"), self)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._on_icon_activated)
            self.icon.messageClicked.connect(self._on_icon_message_clicked)
            host.window.installEventFilter(self)
            window_quit = host.window.findChild(QAction, "action-quit")
            if window_quit is not None:  # Ctrl+Q quits the app, not just the window
                with contextlib.suppress(RuntimeError, TypeError):
                    window_quit.triggered.disconnect()
                window_quit.triggered.connect(self._on_quit_action_triggered)

        host.events.workflows_changed.connect(self._on_events_workflows_changed)
        host.events.runs_changed.connect(self._on_events_runs_changed)
        host.events.job_started.connect(self._on_events_job_started)
        self._build_menu()
        self._update_state()

    # ── quitting ────────────────────────────────────────────────────────────────────────────

    def quit(self, *, ask: bool = True) -> bool:
        """Close the main window for good (its editors may refuse) and ask the app to end.

        With *ask*, a run in progress is stopped only after the person agrees. Returns whether
        the app is ending.
        """
        if ask and self._active:
            answer = QMessageBox.question(
                None,
                "Quit Procedura?",
                "A run is in progress. Quit anyway? It is stopped, and recorded as interrupted.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self._quitting = True
        if not self._host.window.close():  # an editor with unsaved changes said no
            self._quitting = False
            self.open_window()
            return False
        self.hide()
        self.quit_requested.emit()
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """While the tray is there, closing the main window hides it (the app lives on)."""
        if (
            watched is self._host.window
            and event.type() == QEvent.Type.Close
            and not self._quitting
            and self.icon is not None
            and self.icon.isVisible()
        ):
            event.ignore()
            self._host.window.hide()
            if not self._told_hidden:
                self._told_hidden = True
                self.notify(
                    "Procedura is still running",
                    "It stays in the tray, where your workflows are one click away. "
                    "Choose Quit in its menu to end it.",
                )
            return True
        return super().eventFilter(watched, event)

    # ── state ───────────────────────────────────────────────────────────────────────────────

    def _update_state(self) -> None:
        state = self.state
        if self.icon is not None:
            self.icon.setIcon(self._state_icon(state))
            self.icon.setToolTip(self.tooltip())

    def state_icon(self) -> QIcon:
        """The icon for the current state (a badge: ▶ running, ❚❚ paused)."""
        return self._state_icon(self.state)

    def _state_icon(self, state: TrayState) -> QIcon:
        if state not in self._icons:
            self._icons[state] = _badged(self._base_icon, state)
        return self._icons[state]

    # ── slots ───────────────────────────────────────────────────────────────────────────────

    def _on_events_workflows_changed(self, _workflow_id: str) -> None:
        self.refresh()

    def _on_events_runs_changed(self, _run_id: str) -> None:
        self.refresh()  # "Recent" follows the runs

    def _on_events_job_started(self, job: QObject) -> None:
        if isinstance(job, BatchWindow):
            self._watch_batch(job)
        elif isinstance(job, RunWindow):
            self._on_run_window_started(job)

    def _on_reload_timer_timeout(self) -> None:
        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(self.reload(), label="Loading the tray menu…")

    def _on_pause_action_toggled(self, paused: bool) -> None:
        self._paused = paused
        self._update_state()
        if paused:
            self._host.show_status("Runs paused: the tray starts no run until you resume")
        else:
            self._host.show_status("Runs resumed")

    def _on_menu_about_to_show(self) -> None:
        self.refresh_fleet()  # the counts and the jobs as the menu opens

    def _on_record_action_triggered(self) -> None:
        self.open_window()
        self._host.start_recording()

    def _on_record_desktop_action_triggered(self) -> None:
        self.record_desktop()

    def _on_quit_action_triggered(self) -> None:
        self.quit()

    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.DoubleClick:
            self.open_window()
        elif reason == QSystemTrayIcon.ActivationReason.Trigger and not _is_macos():
            self.menu.popup(QCursor.pos())  # one click: the workflows (macOS does this itself)

    def _on_icon_message_clicked(self) -> None:
        self.open_message()


def _is_macos() -> bool:
    import sys

    return sys.platform == "darwin"
