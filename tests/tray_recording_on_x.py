"""The desktop app on a real X server, started as from a launcher (run by
tests/test_gui_record_desktop.py under Xvfb): its tray menu's "Record on the desktop…" records
what the person does in the Tk contact form, and nothing done in Procedura's own recording bar.

    DISPLAY=:N QT_QPA_PLATFORM=xcb python tests/tray_recording_on_x.py RESULT.json

The person is xdotool: a click in the form's Name field and "Jane Doe" typed, then on the bar a
click on "Add note…", a note typed into it and Return, and a click on Stop. The window stays
hidden in the tray throughout (as after ``procedura gui --tray``). RESULT.json gets what was
seen, or the traceback (the test starts this with no terminal and no stdout or stderr).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, TypeVar

import qasync
from desktop_support import NAME, click_at, contact_form, xdotool
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget

from desktop_app.adapters.desktop.recorder.windows import started_from_a_terminal
from desktop_app.app import open_services
from desktop_app.gui.backend import ServicesBackend
from desktop_app.settings import load_settings
from desktop_app.startup import open_standard_streams
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.record import RecordDialog, active_recording
from desktop_app.ui.tray import Tray

T = TypeVar("T")

#: What the person types into the bar's note field (never a typed event: the bar is ours).
NOTE = "typed in the bar"


async def _until(what: str, predicate: Any, timeout: float = 30) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := predicate()):
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
    return value


async def _x(*args: str) -> None:
    await asyncio.to_thread(xdotool, *args)


async def _click(widget: QWidget) -> None:
    """xdotool's click in the middle of *widget*, pausing on it as a hand does."""
    centre = widget.mapToGlobal(QPoint(widget.width() // 2, widget.height() // 2))
    await _x("mousemove", str(centre.x()), str(centre.y()), "sleep", "0.15", "click", "1")


def _dialog() -> RecordDialog | None:
    shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, RecordDialog)]
    return shown[0] if shown and shown[0].isVisible() else None


async def _main(out: Path) -> dict[str, Any]:
    found: dict[str, Any] = {"stdin_is_a_terminal": started_from_a_terminal()}
    # Below the recording bar (top centre of the screen), as a person keeps their work in sight.
    with (
        contact_form(out.with_name("form.json"), y=200) as form,
        open_services(load_settings(), write=True) as services,
    ):
        backend = ServicesBackend(services)
        window = MainWindow(backend, dialogs=False)
        tray = Tray(window, force=True)  # Xvfb has no tray; the menu is what a tray shows
        await tray.reload()
        found["menu"] = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
        found["window_shown"] = window.isVisible()

        tray.record_desktop_action.trigger()
        dialog = await _until("the record dialog", _dialog)
        found["dialog_desktop"] = dialog.desktop
        dialog.intent.setText("Add Jane Doe to the contacts")
        dialog.start_button.click()
        controller = await _until("the recording", lambda: active_recording(window))
        await _until("the recorder to listen", lambda: controller.controls is not None)
        bar = controller.bar
        await _until("the bar on the screen", lambda: bar.isVisible() and bar.windowHandle())
        found["window_shown_while_recording"] = window.isVisible()

        await _x(*click_at(form, NAME, "click", "1"))
        await _x("windowfocus", "--sync", form.window)  # as a window manager does on a click
        await _x("type", "--delay", "40", "Jane Doe")
        await _until("the typing in the live list", lambda: controller.steps.rowCount() >= 2)

        await _click(bar.note_button)
        await _until("the note field", lambda: bar.note_input.isVisible())
        await _x("windowfocus", "--sync", str(int(bar.winId())))
        await _x("type", "--delay", "40", NOTE)
        await _until("the note typed", lambda: bar.note_input.text() == NOTE)
        await _x("key", "Return")
        await _until("the note added", lambda: NOTE in bar.message.text())

        drafts: list[str] = []
        controller.draft_opened.connect(drafts.append)
        await _click(bar.stop_button)
        await _until("the draft", lambda: drafts, timeout=90)
        found["trajectory_id"] = controller.trajectory_id or services.trajectories.list()[0].id
        found["draft"] = drafts[0]
        await window.tasks.idle()
        tray.hide()
        for widget in QApplication.topLevelWidgets():
            if widget is not window:
                widget.close()
        window.close()
        await window.shutdown()
    return found


def main() -> int:
    open_standard_streams()  # as the entry point does: a launcher may have closed them
    out = Path(sys.argv[1])
    app = QApplication(["procedura"])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            found = loop.run_until_complete(_main(out))
    except BaseException:  # the test reads it: there is no stderr
        out.write_text(json.dumps({"error": traceback.format_exc()}), encoding="utf-8")
        return 1
    out.write_text(json.dumps({**found, "pid": os.getpid()}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
