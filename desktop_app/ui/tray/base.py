"""What the tray's parts share: its runs and state, what the icon shows, and notifications."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop_app.ui.backend import FleetCounts
from desktop_app.ui.batch_window import BatchWindow
from desktop_app.ui.host import Host
from desktop_app.ui.run_view import RunWindow
from desktop_app.ui.tray.menu_plan import MenuPlan
from desktop_app.ui.windows import bring_forward

__all__ = [
    "NO_TRAY_MESSAGE",
    "TrayBase",
    "TrayMessage",
    "TrayState",
    "_ActiveRun",
    "_Watched",
    "_short",
    "_status_text",
]

#: What the app says (once, in the status bar) where the platform has no system tray.
NO_TRAY_MESSAGE: Final = (
    "No system tray here: Procedura stays in this window, and closing it quits the app."
)

#: The longest workflow name a menu entry shows whole.
NAME_CHARS: Final = 60

#: How long a notification stays up.
MESSAGE_MS: Final = 8000

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


class TrayBase(QObject):
    """What every part of the tray works on, declared once (:class:`Tray` makes it): its state,
    what the icon shows, and the notifications.
    """

    menu_rebuilt: Signal
    run_did_finish: Signal
    _host: Host
    icon: QSystemTrayIcon | None
    menu: QMenu
    plan: MenuPlan
    search_after: int
    last_message: TrayMessage | None
    _paused: bool
    _active: dict[object, _ActiveRun]
    _watched: dict[RunWindow, _Watched]
    _batches: set[BatchWindow]
    _status_actions: dict[object, QAction]
    pause_action: QAction
    open_action: QAction
    record_action: QAction
    record_desktop_action: QAction
    batch_action: QAction
    search_action: QAction
    quit_action: QAction
    fleet_counts: FleetCounts | None
    _fleet_counting: bool
    fleet_counted: Signal
    _reload_timer: QTimer

    if TYPE_CHECKING:

        def _build_menu(self) -> None:
            """Rebuild the menu (the menu part defines it)."""

        def _update_state(self) -> None:
            """Show the state in the icon and its tooltip (the tray defines it)."""

        def run_workflow(self, workflow_id: str) -> None:
            """Run a workflow (the runs part defines it)."""

        def stop_run(self, key: object) -> None:
            """Stop one run the tray shows (the runs part defines it)."""

        def refresh_fleet(self) -> None:
            """Read the fleet's counts and newest jobs again (the fleet part defines it)."""

        @property
        def fleet_action(self) -> QAction:
            """The Fleet submenu's entry in the menu (the fleet part defines it)."""

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


def _status_text(run: _ActiveRun) -> str:
    return f"“{_short(run.name)}” — {run.progress}"


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1].rstrip() + "…"
