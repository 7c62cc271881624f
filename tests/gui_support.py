"""The desktop app in tests: a real main window over real stores, on a qasync loop.

Tests drive it with real widgets and await what the window does (``gui.run(coro)``); nothing
blocks the loop (no ``qtbot.waitSignal`` inside a running coroutine).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import qasync
from PySide6.QtWidgets import QApplication, QWidget

from desktop_app.app import Services, open_services
from desktop_app.gui.backend import ServicesBackend
from desktop_app.settings import load_settings
from desktop_app.ui.main_window import MainWindow

T = TypeVar("T")


@dataclass
class Gui:
    """A main window and the loop it runs on."""

    window: MainWindow
    backend: ServicesBackend
    loop: asyncio.AbstractEventLoop

    @property
    def services(self) -> Services:
        """The stores under the window."""
        return self.backend.services

    def run(self, job: Coroutine[Any, Any, T] | Awaitable[T], timeout: float = 120) -> T:
        """Run *job* on the window's loop (Qt events are processed meanwhile)."""
        return self.loop.run_until_complete(asyncio.wait_for(job, timeout))

    def settle(self) -> None:
        """Wait until every job the window started has finished."""
        self.run(self.window.tasks.idle())

    def call(self, fn: Callable[[], T]) -> T:
        """Run blocking *fn* on the window's store thread."""

        async def job() -> T:
            return await self.window.tasks.call(fn)

        return self.run(job())


async def until(predicate: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
    """Poll *predicate* on the loop (letting Qt and jobs run) until it holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.02)


def top_level(kind: type[QWidget]) -> list[QWidget]:
    """Visible top-level widgets of *kind* (dialogs, editor windows, run views)."""
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


@contextmanager
def open_gui(qapp: QApplication) -> Iterator[Gui]:
    """A shown main window over the test's data directory, closed and drained at the end."""
    qapp.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    try:
        with open_services(load_settings(), write=True) as services:
            backend = ServicesBackend(services)
            window = MainWindow(backend, dialogs=False)
            window.show()
            gui = Gui(window=window, backend=backend, loop=loop)
            try:
                gui.run(window.reload_all())
                yield gui
            finally:
                window.close()
                loop.run_until_complete(window.shutdown())
                window.deleteLater()
                QApplication.processEvents()
                gc.collect()  # here, on the GUI thread: never a widget deleted off it later
    finally:
        asyncio.set_event_loop(None)
        loop.close()
