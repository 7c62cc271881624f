"""The main window: its screens, navigation, and how background jobs report."""

from __future__ import annotations

import asyncio

import pytest
from gui_support import Gui

from desktop_app.core.errors import StoreError

pytestmark = pytest.mark.slow


def test_the_window_shows_every_screen_and_ctrl_numbers_switch_between_them(gui: Gui) -> None:
    window = gui.window
    assert window.isVisible()
    for name in window.SCREENS:
        assert window.show_screen(name).isVisible()


def test_a_failing_job_is_reported_once_with_a_readable_line(gui: Gui) -> None:
    reported: list[tuple[str, str]] = []
    gui.window.tasks.error_reported.connect(
        lambda message, details: reported.append((message, details))
    )

    def broken() -> None:
        raise StoreError("the database is on a disk that went away")

    gui.window.tasks.run(broken, label="Saving…")
    gui.settle()
    assert [message for message, _ in reported] == ["the database is on a disk that went away"]
    assert "Traceback" in reported[0][1]


def test_a_slow_job_shows_progress_until_it_ends(gui: Gui) -> None:
    seen: list[tuple[bool, str]] = []
    gui.window.tasks.busy_changed.connect(lambda busy, label: seen.append((busy, label)))
    gui.window.tasks.start(asyncio.sleep(1.2), label="Thinking…")
    gui.settle()
    assert seen == [(True, "Thinking…"), (False, "")]
