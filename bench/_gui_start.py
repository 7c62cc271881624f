"""Bench driver for bench/gui.py: ``python -m desktop_app gui``, reporting when the window shows.

Runs the real entry point (``desktop_app.__main__`` with the argument ``gui``, as
``python -m desktop_app gui`` does). It imports nothing of the app or of Qt before that: when
the app imports its main window, an import hook wraps ``MainWindow.showEvent`` so that, without
any hook in the app, it can print to stdout ``time.monotonic()`` (comparable across processes)
and the CPU time this process has used (``time.process_time()``, all its threads) at:

- ``bench shown <t> <cpu>``: the main window's show event (``window.show()`` in the start-up);
- ``bench painted <t> <cpu>``: its first frame painted (once the first paint of one of its
  widgets has been handled, all of that frame has);
- ``bench listed <t> <cpu>``: the Library screen's first rows (the library loaded and shown).

Then it asks the app to quit as a logout would (SIGTERM; the app closes cleanly).

    QT_QPA_PLATFORM=offscreen PROCEDURA_HOME=... .venv/bin/python bench/_gui_start.py
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import signal
import sys
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_seen: set[str] = set()
_MAIN_WINDOW = "desktop_app.ui.main_window"


def _report(what: str) -> None:
    """Print *what* happened and when (once); quit when the window is painted and listed."""
    if what in _seen:
        return
    _seen.add(what)
    print(f"bench {what} {time.monotonic():.6f} {time.process_time():.6f}", flush=True)
    if {"painted", "listed"} <= _seen:
        os.kill(os.getpid(), signal.SIGTERM)


def _watch(main_window: type[Any]) -> None:
    """Wrap *main_window*'s show event to report the milestones."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QWidget

    class FirstPaint(QObject):
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

    original = main_window.showEvent

    def show_event(self: Any, event: Any) -> None:
        original(self, event)
        if "shown" in _seen:
            return
        _report("shown")
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(FirstPaint(self))
        self.library.rows_shown.connect(lambda: _report("listed"))

    main_window.showEvent = show_event


class _WhenImported(importlib.abc.MetaPathFinder):
    """Calls :func:`_watch` on ``MainWindow`` as soon as the app has imported its module."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != _MAIN_WINDOW:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            _watch(module.MainWindow)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def main() -> Any:
    """Start the app exactly as ``python -m desktop_app gui`` would."""
    sys.meta_path.insert(0, _WhenImported())
    sys.argv = [sys.argv[0], "gui"]
    return runpy.run_module("desktop_app", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
