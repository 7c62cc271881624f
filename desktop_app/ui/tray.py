"""The system tray: approved workflows one click away, runs in the background, notifications.

:class:`Tray` puts an icon in the system tray whose menu lists the approved workflows (pinned
first, then the recently run ones, then the rest grouped by site, with a search entry when there
are many), "Record new…", "Open Procedura", "Pause runs" and "Quit". Choosing a workflow asks for
its parameters (prefilled with the last run's values and the keyring's secrets) when it has any,
then runs it in the background: the icon and its tooltip show the run going, the menu can show
or stop it, questions for the person running it open as dialogs even while the main window is
hidden, and a notification says how it ended (clicking it opens the run record).

While the tray is there, closing the main window only hides it; the app ends with "Quit" (or
Ctrl+Q in the window). Where the platform has no tray, the tray says so once and the window stays
the app, as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final, Literal

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QCursor,
    QFont,
    QIcon,
    QKeyEvent,
    QPainter,
    QPixmap,
    QPolygon,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.models.run import Run, RunStatus, RunTrigger
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.outcomes import outcome_reason
from desktop_app.core.views import RunStats, WorkflowSummary
from desktop_app.ops.run import replay_options
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.batch_window import BatchWindow, open_batch
from desktop_app.ui.host import Host
from desktop_app.ui.run_models import run_summary
from desktop_app.ui.run_view import RunDialog, RunSetup, RunWindow, load_setup
from desktop_app.ui.windows import bring_forward

__all__ = [
    "NO_TRAY_MESSAGE",
    "MenuPlan",
    "Tray",
    "TrayMessage",
    "TrayState",
    "WorkflowSearchDialog",
    "plan_menu",
]

#: What the app says (once, in the status bar) where the platform has no system tray.
NO_TRAY_MESSAGE: Final = (
    "No system tray here: Procedura stays in this window, and closing it quits the app."
)

#: How many recently run workflows the menu lists after the pinned ones.
RECENT_COUNT: Final = 5

#: Above this many approved workflows, the menu gets a "Search workflows…" entry.
SEARCH_AFTER: Final = 12

#: Above this many workflows outside Pinned and Recent, each site gets a submenu.
SUBMENUS_AFTER: Final = 10

#: The longest workflow name a menu entry shows whole.
NAME_CHARS: Final = 60

#: How long a notification stays up.
MESSAGE_MS: Final = 8000

#: Changes that arrive this close together rebuild the menu once.
RELOAD_DELAY_MS: Final = 150

TrayState = Literal["idle", "running", "paused"]


@dataclass(frozen=True, slots=True)
class TrayMessage:
    """A notification the tray showed (the last one is kept, for tests and for its click)."""

    title: str
    text: str
    run_id: str | None = None
    failed: bool = False
    unverified: bool = False
    """Done, unverified: every step ran, but nothing showed the task was done (not a failure,
    not a success: the warning icon)."""
    show: Callable[[], object] | None = None


@dataclass(frozen=True, slots=True)
class MenuPlan:
    """The workflows of the tray menu, in the order and groups it shows them."""

    pinned: tuple[WorkflowSummary, ...] = ()
    recent: tuple[WorkflowSummary, ...] = ()
    groups: tuple[tuple[str, tuple[WorkflowSummary, ...]], ...] = ()

    @property
    def count(self) -> int:
        """How many workflows the plan holds."""
        return len(self.pinned) + len(self.recent) + sum(len(g) for _, g in self.groups)


def plan_menu(
    summaries: Sequence[WorkflowSummary],
    stats: dict[str, RunStats],
    *,
    recent: int = RECENT_COUNT,
) -> MenuPlan:
    """Group the approved workflows: pinned, the *recent* last run, the rest by site.

    Each workflow appears once. Within a group names sort alphabetically; recent ones come
    newest first; sites sort alphabetically with workflows that open no site last.
    """
    runnable = [s for s in summaries if s.status is WorkflowStatus.APPROVED]
    pinned = sorted((s for s in runnable if s.pinned), key=_name_key)
    ran: list[tuple[datetime, WorkflowSummary]] = []
    for s in runnable:
        last = stats[s.id].last_run_at if s.id in stats else None
        if not s.pinned and last is not None:
            ran.append((last, s))
    ran.sort(key=lambda pair: pair[0], reverse=True)
    latest = tuple(s for _, s in ran[:recent])
    shown = {s.id for s in pinned} | {s.id for s in latest}
    by_site: dict[str, list[WorkflowSummary]] = {}
    for s in runnable:
        if s.id not in shown:
            by_site.setdefault(s.domains[0] if s.domains else "", []).append(s)
    groups = tuple(
        (site or "Other", tuple(sorted(found, key=_name_key)))
        for site, found in sorted(by_site.items(), key=lambda item: (not item[0], item[0]))
    )
    return MenuPlan(pinned=tuple(pinned), recent=latest, groups=groups)


def _name_key(summary: WorkflowSummary) -> str:
    return summary.name.casefold()


@dataclass
class _ActiveRun:
    """A run going on that the tray shows and can stop."""

    name: str
    stop: Callable[[], object]
    show: Callable[[], object] | None = None
    progress: str = "starting"


@dataclass
class _Watched:
    """A run window the tray follows."""

    window: RunWindow
    name: str
    notify: bool
    ended: bool = field(default=False)


class Tray(QObject):
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
    """

    quit_requested = Signal()
    menu_rebuilt = Signal()
    run_did_finish = Signal(str)

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
        host.tasks.busy_changed.connect(self._on_tasks_busy_changed)
        self._build_menu()
        self._update_state()

    # ── showing ─────────────────────────────────────────────────────────────────────────────

    def show(self) -> None:
        """Put the icon in the tray, or (without a tray) say once that the window stays."""
        if self.icon is not None:
            self.icon.show()
        else:
            self._host.show_status(NO_TRAY_MESSAGE)

    def hide(self) -> None:
        """Take the icon out of the tray (at quit)."""
        if self.icon is not None:
            self.icon.hide()

    def open_window(self) -> None:
        """Bring the main window forward."""
        bring_forward(self._host.window)

    @property
    def state(self) -> TrayState:
        """``running`` while a run goes on, else ``paused`` while runs are paused, else ``idle``."""
        if self._active:
            return "running"
        return "paused" if self._paused else "idle"

    def tooltip(self) -> str:
        """What the icon's tooltip says now."""
        if len(self._active) == 1:
            run = next(iter(self._active.values()))
            text = f"Procedura — running “{run.name}” ({run.progress})"
        elif self._active:
            text = f"Procedura — {len(self._active)} runs in progress"
        else:
            text = "Procedura"
        if self._paused:
            text += " — runs paused" if not self._active else "; new runs paused"
        return text

    # ── the menu ────────────────────────────────────────────────────────────────────────────

    def refresh(self) -> None:
        """Reload the workflows shortly (several changes close together reload once)."""
        self._reload_timer.start()

    async def reload(self) -> None:
        """Load the approved workflows and their run statistics, and rebuild the menu."""
        backend = self._host.backend

        def load() -> tuple[list[WorkflowSummary], dict[str, RunStats]]:
            return backend.workflows.list(status=WorkflowStatus.APPROVED), backend.runs.run_stats()

        summaries, stats = await self._host.tasks.call(load)
        self.plan = plan_menu(summaries, stats)
        self._build_menu()

    def workflow_actions(self) -> list[QAction]:
        """Every workflow entry of the menu (submenus included), in menu order."""
        found: list[QAction] = []

        def walk(menu: QMenu) -> None:
            for action in menu.actions():
                if action.menu() is not None:
                    walk(action.menu())  # type: ignore[arg-type]
                elif isinstance(action.data(), str) and action.data():
                    found.append(action)

        walk(self.menu)
        return found

    def workflow_action(self, workflow_id: str) -> QAction | None:
        """The menu entry that runs *workflow_id*, if the menu lists it."""
        for action in self.workflow_actions():
            if action.data() == workflow_id:
                return action
        return None

    def _build_menu(self) -> None:
        menu = self.menu
        menu.clear()
        self._status_actions.clear()
        for submenu in menu.findChildren(QMenu):
            submenu.deleteLater()
        self._add_run_entries(menu)
        plan = self.plan
        if plan.count == 0:
            empty = menu.addAction("No approved workflows yet")
            empty.setObjectName("tray-empty")
            empty.setEnabled(False)
            empty.setToolTip("Approve a workflow on the Review screen and it appears here")
        else:
            if plan.count > self.search_after:
                menu.addAction(self.search_action)
            if plan.pinned:
                menu.addSection("Pinned")
                for summary in plan.pinned:
                    self._add_workflow(menu, summary, pinned=True)
            if plan.recent:
                menu.addSection("Recent")
                for summary in plan.recent:
                    self._add_workflow(menu, summary)
            rest = sum(len(group) for _, group in plan.groups)
            if rest > SUBMENUS_AFTER and len(plan.groups) > 1:
                menu.addSection("All workflows")
                for site, group in plan.groups:
                    submenu = menu.addMenu(site)
                    submenu.setObjectName(f"tray-site-{site}")
                    submenu.setToolTipsVisible(True)
                    for summary in group:
                        self._add_workflow(submenu, summary)
            else:
                for site, group in plan.groups:
                    menu.addSection(site)
                    for summary in group:
                        self._add_workflow(menu, summary)
        menu.addSeparator()
        self.batch_action.setEnabled(plan.count > 0)
        menu.addAction(self.batch_action)
        menu.addAction(self.record_action)
        menu.addAction(self.open_action)
        menu.addAction(self.pause_action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        self.menu_rebuilt.emit()

    def _add_run_entries(self, menu: QMenu) -> None:
        if not self._active:
            return
        menu.addSection("Running")
        for key, run in list(self._active.items()):
            status = menu.addAction(_status_text(run))
            status.setObjectName("tray-run-status")
            status.setEnabled(False)
            self._status_actions[key] = status
            if run.show is not None:
                show = menu.addAction("Show its progress")
                show.setObjectName("tray-show-run")
                show.triggered.connect(run.show)
            stop = menu.addAction(f"■ Stop “{_short(run.name)}”")
            stop.setObjectName("tray-stop-run")
            stop.setToolTip(
                "Stop now: what was done stays done; the run is recorded as interrupted"
            )
            stop.triggered.connect(lambda _=False, k=key: self.stop_run(k))

    def _add_workflow(self, menu: QMenu, summary: WorkflowSummary, *, pinned: bool = False) -> None:
        label = _short(summary.name).replace("&", "&&")
        asks = bool(summary.parameters)
        action = menu.addAction(("★ " if pinned else "") + label + ("…" if asks else ""))
        action.setObjectName(f"tray-workflow-{summary.id}")
        action.setData(summary.id)
        tip = summary.description or summary.name
        if asks:
            tip += "\n\nAsks for: " + ", ".join(summary.parameters)
        action.setToolTip(tip)
        action.triggered.connect(lambda _=False, wid=summary.id: self.run_workflow(wid))

    def search(self) -> WorkflowSearchDialog:
        """Pick a workflow by typing part of its name, then run it."""
        return self._pick(self.run_workflow)

    def choose_batch(self) -> WorkflowSearchDialog | None:
        """Pick a workflow, then a CSV file: the batch dialog (mapping, report, options)."""
        if self._paused:
            self.notify(
                "Runs are paused",
                "Nothing was run. Untick “Pause runs” in the tray menu to run workflows again.",
            )
            return None
        return self._pick(
            lambda workflow_id: open_batch(self._host, workflow_id),
            title="Run a workflow over a CSV file",
            button="&Choose the file…",
        )

    def _pick(
        self, then: Callable[[str], object], *, title: str = "", button: str = ""
    ) -> WorkflowSearchDialog:
        everything = [*self.plan.pinned, *self.plan.recent]
        for _, group in self.plan.groups:
            everything.extend(group)
        dialog = WorkflowSearchDialog(everything)
        if title:
            dialog.setWindowTitle(title)
        if button:
            dialog.run_button.setText(button)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.picked.connect(then)
        bring_forward(dialog)
        return dialog

    # ── running ─────────────────────────────────────────────────────────────────────────────

    @property
    def paused(self) -> bool:
        """Whether choosing a workflow in the tray (or handing a run over) is refused for now."""
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume runs started from the tray."""
        self.pause_action.setChecked(paused)  # toggled → _on_pause_action_toggled

    def run_workflow(self, workflow_id: str) -> None:
        """Run the approved version of *workflow_id*: the parameter dialog first, if it has any."""
        if self._paused:
            self.notify(
                "Runs are paused",
                "Nothing was run. Untick “Pause runs” in the tray menu to run workflows again.",
            )
            return
        host = self._host

        async def load() -> RunSetup:
            return await host.tasks.call(load_setup, host.backend, workflow_id, None)

        host.tasks.start(load(), label="Opening the workflow…", on_done=self._on_setup_loaded)

    def _on_setup_loaded(self, setup: RunSetup) -> None:
        if not setup.version.workflow.parameters:
            self._start(setup, self._direct_request(setup))
            return
        dialog = RunDialog(setup, self._host.backend.settings, None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._start(setup, dialog.request()))
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()

    def _direct_request(self, setup: RunSetup) -> RunRequest:
        options = replay_options(
            self._host.backend.settings, trigger=RunTrigger.TRAY, use_llm=setup.llm_configured
        )
        return RunRequest(version=setup.version, options=options)

    def _start(self, setup: RunSetup, request: RunRequest) -> None:
        if self._paused:
            self.notify("Runs are paused", "Nothing was run: runs were paused meanwhile.")
            return
        request = replace(request, options=replace(request.options, trigger=RunTrigger.TRAY))
        window = RunWindow(self._host, setup)
        self._host.adopt(window)
        window.start(request)
        if not window.running:  # the app is closing
            window.close()
            return
        self._watch(window, setup.version.workflow.name, notify=True)

    def stop_run(self, key: object) -> None:
        """Stop one run the tray shows (it is recorded as interrupted)."""
        run = self._active.get(key)
        if run is not None:
            run.progress = "stopping"
            run.stop()
            self._update_state()
            status = self._status_actions.get(key)
            if status is not None:
                status.setText(_status_text(run))

    def stop_all(self) -> None:
        """Stop every run going on."""
        for key in list(self._active):
            self.stop_run(key)

    # The tray's runs, and those it notices, as one list: the instance server adds hand-offs.

    def track_run(
        self,
        key: object,
        name: str,
        stop: Callable[[], object],
        show: Callable[[], object] | None = None,
    ) -> None:
        """Show a run in progress (icon, tooltip, a Stop entry) until :meth:`end_run`."""
        self._active[key] = _ActiveRun(name=name, stop=stop, show=show)
        self._update_state()
        self._build_menu()

    def progress_run(self, key: object, progress: str) -> None:
        """Say how far a tracked run has got ("step 3 of 10")."""
        run = self._active.get(key)
        if run is not None and run.progress != "stopping":
            run.progress = progress
            self._update_state()
            status = self._status_actions.get(key)
            if status is not None:  # in place: the menu may be open
                status.setText(_status_text(run))

    def end_run(self, key: object) -> None:
        """A tracked run is over."""
        if self._active.pop(key, None) is not None:
            self._update_state()
            self._build_menu()

    def _watch(self, window: RunWindow, name: str, *, notify: bool) -> None:
        watched = _Watched(window=window, name=name, notify=notify)
        self._watched[window] = watched
        self.track_run(window, name, window.stop, show=lambda: bring_forward(window))
        window.progress.valueChanged.connect(lambda _v, w=window: self._on_window_progress(w))
        window.destroyed.connect(lambda *_, w=window: self._forget(w))
        if window.progress.value() > 0:  # found under way
            self._on_window_progress(window)

    def _on_window_progress(self, window: RunWindow) -> None:
        with contextlib.suppress(RuntimeError):
            bar = window.progress
            self.progress_run(window, f"step {bar.value()} of {bar.maximum()}")

    def _forget(self, window: RunWindow) -> None:
        self._watched.pop(window, None)
        self.end_run(window)

    def _check_windows(self) -> None:
        """Note the watched runs that ended: notify for the tray's own, close hidden windows."""
        for window, watched in list(self._watched.items()):
            try:
                over = not window.running and not window.summary.isHidden()
            except RuntimeError:  # deleted meanwhile
                self._forget(window)
                continue
            if not over or watched.ended:
                continue
            watched.ended = True
            self._watched.pop(window, None)
            self.end_run(window)
            run = window.run
            if watched.notify:
                self._notify_end(watched.name, run, window.summary_text.text())
                self.run_did_finish.emit(run.id if run is not None else "")
            if not window.isVisible():
                window.close()

    def _notify_end(self, name: str, run: Run | None, error: str) -> None:
        if run is None:
            self.notify(
                f"“{name}” did not run", error or "It stopped before it began.", failed=True
            )
            return
        if run.status is RunStatus.SUCCEEDED:
            title = f"✓ “{name}” succeeded"
        elif run.status is RunStatus.UNVERIFIED:
            title = f"⚠ “{name}” done, unverified"
        elif run.status is RunStatus.INTERRUPTED:
            title = f"■ “{name}” was stopped"
        else:
            title = f"✗ “{name}” {run.status.value}"
        lines = [run_summary(run, with_status=False)]
        reason = outcome_reason(run)
        if reason:
            lines.append(reason)
        if run.proposed_version is not None:
            lines.append(f"A repair waits for review as version {run.proposed_version}.")
        lines.append("Click to open the run record.")
        unverified = run.status is RunStatus.UNVERIFIED
        self.notify(
            title,
            "\n".join(lines),
            run_id=run.id,
            failed=run.status is not RunStatus.SUCCEEDED and not unverified,
            unverified=unverified,
        )

    def _watch_batch(self, window: BatchWindow) -> None:
        """Show a batch in progress like a run, and notify when it ends (Retry starts again)."""
        if window not in self._batches:
            self._batches.add(window)
            window.progress.valueChanged.connect(lambda _v, w=window: self._on_batch_progress(w))
            window.ended.connect(lambda w=window: self._on_batch_ended(w))
            window.destroyed.connect(lambda *_, w=window: self._forget_batch(w))
        name = window.workflow_name
        self.track_run(window, f"{name} (batch)", window.stop, show=lambda: bring_forward(window))
        self._on_batch_progress(window)

    def _forget_batch(self, window: BatchWindow) -> None:
        self._batches.discard(window)
        self.end_run(window)

    def _on_batch_progress(self, window: BatchWindow) -> None:
        with contextlib.suppress(RuntimeError):
            bar = window.progress
            self.progress_run(window, f"{bar.value()} of {bar.maximum()} rows")

    def _on_batch_ended(self, window: BatchWindow) -> None:
        self.end_run(window)

        def show() -> None:
            try:
                bring_forward(window)
            except RuntimeError:  # closed since
                self.open_window()

        name = window.workflow_name
        self.notify(
            f"“{name}” over a CSV file: {window.outcome.text()}",
            f"{window.status_label.text()}\n{window.results_label.text()}\n"
            "Click to show the batch.",
            failed=window.some_not_done,
            unverified=not window.all_succeeded and not window.some_not_done,
            show=show,
        )

    def _scan_run_windows(self) -> None:
        """Follow run windows opened elsewhere (the main window's Run button)."""
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, RunWindow) and widget not in self._watched and widget.running:
                title = widget.windowTitle().removeprefix("Run — ")
                self._watch(widget, title, notify=False)

    # ── notifications ───────────────────────────────────────────────────────────────────────

    def notify(
        self,
        title: str,
        text: str,
        *,
        run_id: str | None = None,
        failed: bool = False,
        unverified: bool = False,
        show: Callable[[], object] | None = None,
    ) -> None:
        """A desktop notification (the status bar where there is no tray); clicking it opens
        the run record of *run_id*, or calls *show*. A failure, or a run done, unverified, gets
        the warning icon, never the information icon of a success."""
        self.last_message = TrayMessage(
            title=title, text=text, run_id=run_id, failed=failed, unverified=unverified, show=show
        )
        if self.icon is not None and self.icon.isVisible() and QSystemTrayIcon.supportsMessages():
            kind = (
                QSystemTrayIcon.MessageIcon.Warning
                if failed or unverified
                else QSystemTrayIcon.MessageIcon.Information
            )
            self.icon.showMessage(title, text, kind, MESSAGE_MS)
        else:
            self._host.show_status(f"{title}: {text.splitlines()[0]}" if text else title)

    def open_message(self) -> None:
        """What clicking the last notification does: show its run record in the main window."""
        message = self.last_message
        if message is None:
            return
        if message.show is not None:
            message.show()
            return
        if message.run_id:
            self._host.show_run(message.run_id)
        self.open_window()

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
        QTimer.singleShot(0, self, self._check_windows)
        self.refresh()  # "Recent" follows the runs

    def _on_events_job_started(self, job: QObject) -> None:
        if isinstance(job, BatchWindow):
            self._watch_batch(job)

    def _on_tasks_busy_changed(self, busy: bool, _label: str) -> None:
        if busy:
            self._scan_run_windows()

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

    def _on_record_action_triggered(self) -> None:
        self.open_window()
        self._host.start_recording()

    def _on_quit_action_triggered(self) -> None:
        self.quit()

    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.DoubleClick:
            self.open_window()
        elif reason == QSystemTrayIcon.ActivationReason.Trigger and not _is_macos():
            self.menu.popup(QCursor.pos())  # one click: the workflows (macOS does this itself)

    def _on_icon_message_clicked(self) -> None:
        self.open_message()


# ── picking a workflow by name ──────────────────────────────────────────────────────────────


class WorkflowSearchDialog(QDialog):
    """Type part of a workflow's name (or site, or description); Enter runs the one selected.

    Signals:
        picked(str): the workflow id chosen.
    """

    picked = Signal(str)

    def __init__(self, summaries: Sequence[WorkflowSummary], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tray-search-dialog")
        self.setWindowTitle("Run a workflow")
        self.setMinimumSize(460, 380)
        self._summaries = list(summaries)
        layout = QVBoxLayout(self)
        self.query = QLineEdit()
        self.query.setObjectName("tray-search-query")
        self.query.setPlaceholderText("Type part of a name, a site or a description")
        self.query.setClearButtonEnabled(True)
        layout.addWidget(self.query)
        self.results = QListWidget()
        self.results.setObjectName("tray-search-results")
        layout.addWidget(self.results, 1)
        self.empty = QLabel("No approved workflow matches.")
        self.empty.setEnabled(False)
        self.empty.hide()
        layout.addWidget(self.empty)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.run_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.run_button.setText("&Run")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.query.textChanged.connect(self._on_query_text_changed)
        self.query.returnPressed.connect(self.accept)
        self.results.itemActivated.connect(lambda _item: self.accept())
        self._on_query_text_changed("")
        self.query.setFocus()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Up and Down move through the results while the query keeps the focus."""
        if event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            row = self.results.currentRow() + (1 if event.key() == Qt.Key.Key_Down else -1)
            if 0 <= row < self.results.count():
                self.results.setCurrentRow(row)
            return
        super().keyPressEvent(event)

    def matches(self) -> list[str]:
        """The names listed now."""
        return [self.results.item(i).text() for i in range(self.results.count())]

    def accept(self) -> None:
        """Run the selected workflow."""
        item = self.results.currentItem()
        if item is None:
            return
        self.picked.emit(item.data(Qt.ItemDataRole.UserRole))
        super().accept()

    def _on_query_text_changed(self, text: str) -> None:
        words = text.casefold().split()
        self.results.clear()
        for summary in self._summaries:
            haystack = " ".join((summary.name, summary.description, *summary.domains)).casefold()
            if all(word in haystack for word in words):
                item = QListWidgetItem(summary.name, self.results)
                item.setData(Qt.ItemDataRole.UserRole, summary.id)
                item.setToolTip(summary.description or summary.name)
        found = self.results.count() > 0
        if found:
            self.results.setCurrentRow(0)
        self.empty.setVisible(not found)
        self.run_button.setEnabled(found)


# ── icons ───────────────────────────────────────────────────────────────────────────────────


def _status_text(run: _ActiveRun) -> str:
    return f"“{_short(run.name)}” — {run.progress}"


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1].rstrip() + "…"


def _is_macos() -> bool:
    import sys

    return sys.platform == "darwin"


def _app_icon(icon: QIcon | None, window: QWidget) -> QIcon:
    for candidate in (icon, window.windowIcon(), QApplication.windowIcon()):
        if candidate is not None and not candidate.isNull():
            return candidate
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor("#2f5fb3"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawRoundedRect(4, 4, 56, 56, 12, 12)
    painter.setPen(QColor("white"))
    font = QFont()
    font.setBold(True)
    font.setPixelSize(38)
    painter.setFont(font)
    painter.drawText(QRect(4, 4, 56, 56), Qt.AlignmentFlag.AlignCenter, "P")
    painter.end()
    return QIcon(pixmap)


def _badged(base: QIcon, state: TrayState) -> QIcon:
    """*base* with a badge in the corner: green ▶ while running, grey ❚❚ while paused."""
    if state == "idle":
        return base
    size = 64
    pixmap = base.pixmap(size, size)
    if pixmap.isNull():
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    badge = QRect(size - 30, size - 30, 28, 28)
    painter.setPen(QColor("white"))
    painter.setBrush(QColor("#1b7f3b") if state == "running" else QColor("#6e6e6e"))
    painter.drawEllipse(badge)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("white"))
    cx, cy = badge.center().x(), badge.center().y()
    if state == "running":
        painter.drawPolygon(
            QPolygon([QPoint(cx - 4, cy - 7), QPoint(cx - 4, cy + 7), QPoint(cx + 7, cy)])
        )
    else:
        painter.drawRect(cx - 6, cy - 6, 4, 12)
        painter.drawRect(cx + 2, cy - 6, 4, 12)
    painter.end()
    return QIcon(pixmap)
