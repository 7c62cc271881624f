"""Start the desktop app: Qt, one asyncio loop shared with Playwright (qasync), the main window."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from desktop_app.core.errors import ProceduraError, StoreLockedError
from desktop_app.gui.crash import reporting_uncaught, when_asked_to_quit
from desktop_app.settings import Settings

if TYPE_CHECKING:
    from desktop_app.app import Services
    from desktop_app.ui.main_window import MainWindow

__all__ = ["main", "no_display_reason"]


def no_display_reason() -> str | None:
    """Why Qt could not open a window here (no display on Linux), or None when it can."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or os.environ.get("QT_QPA_PLATFORM")
    ):
        return (
            "no display: set DISPLAY (or WAYLAND_DISPLAY), run it under xvfb-run, or use the "
            "command line (procedura --help)"
        )
    return None


def main(settings: Settings, argv: Sequence[str] = (), *, minimized: bool = False) -> int:
    """Run the app until it quits; the exit code.

    With a system tray the app lives in the tray: closing the window hides it, and "Quit" in the
    tray's menu ends the app. *minimized* (``--tray``, as at login) starts with the window hidden
    in the tray, or minimised where there is no tray. When the app already runs over the same
    data directory, its window is brought forward and this returns 0.

    Raises:
        ProceduraError: no display, or the stores cannot be opened (the caller prints it).
    """
    reason = no_display_reason()
    if reason is not None:
        raise ProceduraError(reason)

    import qasync
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from desktop_app.resources import resource_path
    from desktop_app.ui import theme

    app = QApplication.instance() or QApplication(["procedura", *argv])
    assert isinstance(app, QApplication)
    app.setApplicationName("Procedura")
    app.setOrganizationName("Procedura")
    app.setDesktopFileName("procedura")
    app.setQuitOnLastWindowClosed(False)  # the loop ends the app, after the jobs are cancelled
    icon = QIcon(str(resource_path("icons", "procedura-256.png")))
    app.setWindowIcon(icon)
    theme.apply(app)  # one style sheet for every window, light or dark as the system is
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            code: int = loop.run_until_complete(_run(settings, icon, minimized))
            return code
    finally:
        asyncio.set_event_loop(None)


async def _run(settings: Settings, icon: object, minimized: bool) -> int:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QMessageBox

    from desktop_app.app import open_services
    from desktop_app.gui.backend import ServicesBackend
    from desktop_app.ui.main_window import MainWindow

    loop = asyncio.get_running_loop()
    quit_asked = asyncio.Event()
    when_asked_to_quit(loop, quit_asked.set)  # Ctrl+C in the terminal, or a logout
    try:
        # The search index is brought up to date once the window is up (it may embed much).
        services_cm = open_services(settings, write=True, index_now=False)
        services = services_cm.__enter__()
    except StoreLockedError as exc:
        from desktop_app.handoff import show_running_app

        if show_running_app(settings):  # the app is running: its window comes forward
            print("Procedura is already running: its window was brought forward", file=sys.stderr)
            return 0
        QMessageBox.warning(None, "Procedura is already running", str(exc))
        return 1
    try:
        backend = ServicesBackend(services)
        window = MainWindow(backend, icon=icon if isinstance(icon, QIcon) else None)
        with reporting_uncaught(loop, window.tasks.report):
            return await _serve(window, services, settings, icon, minimized, quit_asked)
    finally:
        services_cm.__exit__(None, None, None)


async def _serve(
    window: MainWindow,
    services: Services,
    settings: Settings,
    icon: object,
    minimized: bool,
    quit_asked: asyncio.Event,
) -> int:
    """Show the window and the tray, serve the hand-off, and wait for the app to be quit."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from desktop_app.app import finish_indexing
    from desktop_app.gui.instance import InstanceServer
    from desktop_app.ui.tasks import signal_future
    from desktop_app.ui.tray import Tray

    tray = Tray(window, icon=icon if isinstance(icon, QIcon) else None)
    server = InstanceServer(window, settings, tray=tray)
    server.listen()
    app = QApplication.instance()
    assert app is not None
    if tray.available:  # the app lives in the tray until Quit
        closed = signal_future(tray.quit_requested)
    else:
        closed = signal_future(app.lastWindowClosed)  # type: ignore[attr-defined]
    if not minimized:
        window.show()
    elif not tray.available:
        window.showMinimized()  # at login without a tray: there, but out of the way
    tray.show()
    window.tasks.start(
        window.reload_all(),
        label="Loading the library…",
        # Once the window has what it shows: Playwright's import, not in the first run's way.
        on_done=lambda _: window.tasks.start(
            window.prepare_browser(), label="Getting the browser ready…"
        ),
    )
    window.tasks.start(tray.reload(), label="Loading the tray menu…")
    window.tasks.run(
        lambda: (finish_indexing(services), services.workflows.index),
        label="Updating the search index…",
    )
    asked = asyncio.ensure_future(quit_asked.wait())
    either: list[asyncio.Future[Any]] = [closed, asked]
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    if not closed.done():  # a signal: close as the user would (editors may still ask)
        if tray.available:
            tray.quit(ask=False)
        else:
            window.close()
    asked.cancel()
    server.close()
    tray.hide()
    await window.shutdown()
    return 0
