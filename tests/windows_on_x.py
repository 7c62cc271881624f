"""The desktop app on a real X server (run by tests/test_gui_windows.py under Xvfb): its main
window on the screen it has, then what follows a recording — the window back from minimised and
the editor opening on the draft. Prints what X says as one JSON line.

    DISPLAY=:N QT_QPA_PLATFORM=xcb [QT_SCALE_FACTOR=1.5] python tests/windows_on_x.py
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, TypeVar

import qasync
from PySide6.QtWidgets import QApplication

from desktop_app.app import open_services
from desktop_app.gui.backend import ServicesBackend
from desktop_app.ops.changes import Origin
from desktop_app.ops.induce import induce
from desktop_app.settings import load_settings
from desktop_app.ui.backend import RecordingRequest
from desktop_app.ui.main_window import MainWindow
from desktop_app.ui.record import RecordingController
from desktop_app.ui.run_view import RunDialog, RunWindow

DATA = Path(__file__).parent / "data"
T = TypeVar("T")


def _x(*args: str) -> str:
    return subprocess.run(args, capture_output=True, text=True, timeout=20, check=True).stdout


async def _top_level(kind: type[T]) -> T:
    for _ in range(600):
        shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
        if shown:
            return shown[0]
        await asyncio.sleep(0.05)
    raise SystemExit(f"no {kind.__name__} opened")


def _stacking() -> list[int]:
    """The root's mapped children, bottom to top (as X stacks them)."""
    ids = []
    for line in _x("xwininfo", "-root", "-children").splitlines():
        parts = line.split()
        if parts and parts[0].startswith("0x") and "(has no name)" not in line:
            ids.append(int(parts[0], 16))
    return ids[::-1]  # xwininfo lists the top-most first


async def _focused(widget: Any) -> int:
    """The window X gives the focus, once it is *widget* (or after 5 s, whichever it is)."""
    focus = 0
    for _ in range(100):
        await asyncio.sleep(0.05)
        focus = int(_x("xdotool", "getwindowfocus").strip())
        if focus == int(widget.winId()) and widget.isActiveWindow():
            break
    return focus


def _geometry(widget: Any) -> list[int]:
    rect = widget.frameGeometry()
    return [rect.x(), rect.y(), rect.width(), rect.height()]


async def _main() -> dict[str, Any]:
    found: dict[str, Any] = {}
    with open_services(load_settings(), write=True) as services:
        backend = ServicesBackend(services)
        window = MainWindow(backend, dialogs=False)
        window.show()
        await window.reload_all()
        await asyncio.sleep(0.3)
        screen = window.screen().availableGeometry()
        found["screen"] = [screen.x(), screen.y(), screen.width(), screen.height()]
        found["main"] = _geometry(window)

        text = (DATA / "create-contact.trajectory.json").read_text(encoding="utf-8")
        recording = await window.tasks.call(lambda: services.trajectories.import_json(text))
        draft = await window.tasks.call(
            lambda: induce(
                services.trajectories,
                services.workflows,
                [recording.id],
                actor="tester",
                origin=Origin.WINDOW,
            )
        )
        # What the window does once a recording ends (the controller's own steps, without a
        # recorder): the bar closes, the window comes back from minimised, the draft opens.
        controller = RecordingController(
            window, RecordingRequest(url="", kind="desktop"), minimise=True
        )
        window.showMinimized()
        controller._minimised = True  # as start() leaves it
        await asyncio.sleep(0.3)
        controller._close()
        controller._on_job_done(draft)
        editor = next(
            w for w in QApplication.topLevelWidgets() if w.objectName() == "editor-window"
        )
        found["editor_id"] = int(editor.winId())
        found["focus"] = await _focused(editor)
        found["editor"] = _geometry(editor)
        found["main_id"] = int(window.winId())
        found["stacking"] = _stacking()
        editor.close()

        # A run: the dialog asks, Run, and the run window opens (it fails at once: no site).
        window.open_run(draft.saved.version.workflow_id, draft.saved.version.version)
        dialog = await _top_level(RunDialog)
        dialog.show_browser.setChecked(False)
        dialog.base_url.setText("http://127.0.0.1:9")
        for name in dialog.form.secrets():
            dialog.form.set_value(name, "not-a-real-password")
        dialog.run_button.click()
        run_window = await _top_level(RunWindow)
        found["run_id"] = int(run_window.winId())
        found["run_focus"] = await _focused(run_window)
        found["run"] = _geometry(run_window)
        run_window.stop()
        await window.tasks.idle()
        window.close()
        await window.shutdown()
    return found


def main() -> int:
    app = QApplication(["procedura"])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        found = loop.run_until_complete(_main())
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
