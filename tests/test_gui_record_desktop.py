"""Recording the desktop without a terminal: from the tray menu and the window, as a person who
never opens one does; and, where the desktop cannot be recorded, one line saying why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from desktop_support import needs_xvfb, xvfb
from gui_support import Gui, top_level, until
from PySide6.QtWidgets import QMessageBox
from tray_recording_on_x import NOTE

from desktop_app.app import open_services
from desktop_app.core.models import ActionKind
from desktop_app.settings import load_settings
from desktop_app.ui.record import (
    CANNOT_RECORD_THE_DESKTOP,
    RecordDialog,
    RecordingBar,
    RecordingController,
    active_recording,
)
from desktop_app.ui.tray import Tray

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).parent / "tray_recording_on_x.py"


@pytest.fixture
def tray(gui: Gui) -> Iterator[Tray]:
    """A tray over the window, as if the platform had one (offscreen, none is there); the
    window hidden in it, as after ``procedura gui --tray``."""
    made = Tray(gui.window, force=True)
    made.show()
    gui.run(made.reload())
    gui.window.hide()
    yield made
    made.hide()


def _unavailable_box() -> QMessageBox | None:
    boxes = [b for b in top_level(QMessageBox) if b.objectName() == "recording-unavailable"]
    return boxes[0] if boxes else None  # type: ignore[return-value]


async def _start_from_the_dialog(gui: Gui) -> RecordingController:
    dialog = await _shown_dialog()
    assert dialog.desktop  # "Record on the desktop…" chose it
    dialog.intent.setText("Add a contact")
    dialog.start_button.click()
    controller = active_recording(gui.window)
    assert isinstance(controller, RecordingController)
    return controller


async def _shown_dialog() -> RecordDialog:
    await until(lambda: bool(top_level(RecordDialog)), what="the record dialog")
    dialog = top_level(RecordDialog)[0]
    assert isinstance(dialog, RecordDialog)
    return dialog


@needs_xvfb
def test_from_the_tray_started_as_from_a_launcher_the_desktop_is_recorded_and_procedura_is_not(
    home: Path, tmp_path: Path
) -> None:
    """The app on a real X server (Qt's xcb), with no terminal: standard input, output and error
    closed. The tray's "Record on the desktop…" records the click and the typing in the Tk form,
    the note added on the bar, and nothing of what was clicked and typed in the bar itself."""
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")]),
    }
    with xvfb() as display:
        env["DISPLAY"] = display
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" <&- 1>&- 2>&-', "sh", sys.executable, str(DRIVER), str(out)],
            env=env,
            timeout=240,
            check=False,
        )
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert done.returncode == 0, seen.get("error")
    assert seen["stdin_is_a_terminal"] is False
    menu = seen["menu"]
    assert menu.index("Record on the &desktop…") == menu.index("&Record new…") + 1
    assert seen["dialog_desktop"] is True
    # Hidden in the tray it stays hidden: the bar is all there is while recording.
    assert seen["window_shown"] is False and seen["window_shown_while_recording"] is False

    with open_services(load_settings(), write=False) as services:
        (summary,) = services.trajectories.list()
        assert summary.id == seen["trajectory_id"]
        trajectory = services.trajectories.get(summary.id)
        raw = services.trajectories.raw_events(summary.id)
        draft = services.workflows.get(seen["draft"])
    assert trajectory.intent == "Add Jane Doe to the contacts"
    assert [(e.action, e.value) for e in trajectory.events] == [
        (ActionKind.DESKTOP_CLICK, None),
        (ActionKind.DESKTOP_TYPE, "Jane Doe"),
        (ActionKind.NOTE, NOTE),  # the bar's note, as a note: its keystrokes are left out
    ]
    assert all(e.before is not None for e in raw)
    assert {e.before.window_title for e in raw if e.action is not ActionKind.NOTE} == {  # type: ignore[union-attr]
        "Contact form"
    }
    assert not [e for e in raw if e.action is ActionKind.DESKTOP_CLICK and e.point is None]
    assert [s.kind for s in draft.workflow.steps] == ["desktop_click", "desktop_type"]


def test_from_the_tray_without_a_display_one_line_says_so_and_nothing_is_kept(
    gui: Gui, tray: Tray, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")  # a Wayland session without Xwayland

    async def scenario() -> RecordingController:
        tray.record_desktop_action.trigger()
        controller = await _start_from_the_dialog(gui)
        await until(lambda: _unavailable_box() is not None, what="the message")
        return controller

    controller = gui.run(scenario())
    gui.settle()
    box = _unavailable_box()
    assert box is not None and box.windowTitle() == CANNOT_RECORD_THE_DESKTOP
    text = box.text()
    assert text.startswith("Desktop recording and replay need an X11 display and DISPLAY is not")
    assert "a Wayland session without Xwayland cannot be recorded" in text
    assert "\n" not in text and not box.detailedText()  # one line, no traceback behind it
    message = tray.last_message
    assert message is not None and message.failed
    assert message.title == CANNOT_RECORD_THE_DESKTOP
    assert message.text.startswith("desktop recording and replay need an X11 display")
    # The controls are back to idle: no bar, no recording, the window left hidden, no error.
    assert controller.finished and not top_level(RecordingBar)
    assert active_recording(gui.window) is None
    assert not gui.window.isVisible()
    assert gui.window.tasks.last_error is None
    assert gui.call(gui.services.trajectories.list) == []
    box.close()


@needs_xvfb
def test_from_the_window_an_x_server_without_record_says_so_and_keeps_no_recording(
    gui: Gui,
) -> None:
    async def scenario() -> RecordingController:
        gui.window.start_recording()
        dialog = await _shown_dialog()
        dialog.minimise_window = False
        dialog.desktop_choice.setChecked(True)
        controller = await _start_from_the_dialog(gui)
        await until(lambda: _unavailable_box() is not None, what="the message")
        return controller

    with xvfb(1024, 768, "-extension", "RECORD"):
        controller = gui.run(scenario())
    gui.settle()
    box = _unavailable_box()
    assert box is not None
    assert box.text() == (
        "The desktop's mouse and keyboard cannot be listened to: the X server lacks the RECORD "
        "extension."
    )
    assert gui.window.statusBar().currentMessage().startswith(f"{CANNOT_RECORD_THE_DESKTOP}: ")
    assert controller.finished and not top_level(RecordingBar)
    assert active_recording(gui.window) is None
    assert gui.window.tasks.last_error is None
    # The recording began (a row) before the server said no: it is gone again.
    assert gui.call(gui.services.trajectories.list) == []
    box.close()
    # and the window records again: the dialog opens, not "a recording is already running"
    gui.window.start_recording()
    gui.run(_shown_dialog()).close()
