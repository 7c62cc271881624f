"""Bench driver for bench/gui.py: ``python -m desktop_app gui``, reporting when the window shows.

Runs the real entry point (``desktop_app.__main__`` with the argument ``gui``, as
``python -m desktop_app gui`` does) after wrapping ``MainWindow.showEvent`` so that, without any
hook in the app, it can print to stdout ``time.monotonic()`` (comparable across processes) and
the CPU time this process has used (``time.process_time()``, all its threads) at:

- ``bench shown <t> <cpu>``: the main window's show event (``window.show()`` in the start-up);
- ``bench painted <t> <cpu>``: its first frame painted (once the first paint of one of its
  widgets has been handled, all of that frame has);
- ``bench listed <t> <cpu>``: the Library screen's first rows (the library loaded and shown).

Then it asks the app to quit as a logout would (SIGTERM; the app closes cleanly).

    QT_QPA_PLATFORM=offscreen PROCEDURA_HOME=... .venv/bin/python bench/_gui_start.py
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import time
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QApplication, QWidget

from desktop_app.ui.main_window import MainWindow

_seen: set[str] = set()


def _report(what: str) -> None:
    """Print *what* happened and when (once); quit when the window is painted and listed."""
    if what in _seen:
        return
    _seen.add(what)
    print(f"bench {what} {time.monotonic():.6f} {time.process_time():.6f}", flush=True)
    if {"painted", "listed"} <= _seen:
        os.kill(os.getpid(), signal.SIGTERM)


class _FirstPaint(QObject):
    """Reports the first frame of *window* once its paint events have all been handled."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and QWidget.window(watched) is self._window  # MainWindow.window is a property
        ):
            app = QApplication.instance()
            if app is not None:
                app.removeEventFilter(self)
            QTimer.singleShot(0, lambda: _report("painted"))  # after this frame's painting
        return False


_original_show_event = MainWindow.showEvent


def _show_event(self: MainWindow, event: QShowEvent) -> None:
    _original_show_event(self, event)
    if "shown" in _seen:
        return
    _report("shown")
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(_FirstPaint(self))
    self.library.rows_shown.connect(lambda: _report("listed"))


def main() -> Any:
    """Start the app exactly as ``python -m desktop_app gui`` would."""
    MainWindow.showEvent = _show_event  # type: ignore[method-assign]
    sys.argv = [sys.argv[0], "gui"]
    return runpy.run_module("desktop_app", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
