"""What nobody caught reaches the person once: an exception in a Qt slot or in a callback on the
asyncio loop is logged and reported in the window's error dialog (desktop_app/gui/crash.py)."""

from __future__ import annotations

import asyncio
import logging
import sys

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from desktop_app.gui.crash import reporting_uncaught
from desktop_app.ui.tasks import TaskRunner


class _Button(QObject):
    clicked = Signal()


def _broken_slot() -> None:
    raise ZeroDivisionError("a bug in a slot")


def _broken_callback() -> None:
    raise LookupError("a bug in a callback")


def test_a_bug_in_a_slot_or_a_callback_is_reported_once_and_the_hooks_come_back(
    qapp: QApplication, caplog: pytest.LogCaptureFixture
) -> None:
    runner = TaskRunner(dialogs=False)
    reported: list[str] = []
    runner.error_reported.connect(lambda message, _details: reported.append(message))
    loop = asyncio.new_event_loop()
    hook_before = sys.excepthook
    try:
        with caplog.at_level(logging.ERROR), reporting_uncaught(loop, runner.report):
            button = _Button()
            button.clicked.connect(_broken_slot)
            button.clicked.emit()  # Qt hands the exception to sys.excepthook
            loop.call_soon(_broken_callback)
            loop.run_until_complete(asyncio.sleep(0))
            loop.run_until_complete(asyncio.sleep(0))
        assert reported == [
            "ZeroDivisionError: a bug in a slot",
            "LookupError: a bug in a callback",
        ]
        assert runner.last_error == "LookupError: a bug in a callback"
        assert "Traceback" in caplog.text and "a bug in a slot" in caplog.text
        assert sys.excepthook is hook_before
        assert loop.get_exception_handler() is None
    finally:
        loop.close()
