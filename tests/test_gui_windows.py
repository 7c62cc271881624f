"""Windows that fit the screen, come back where they were and open in front; a form that holds
still while you type."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gui_support import Gui, top_level, until
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from replay_support import approved

from desktop_app.settings import window_state_path
from desktop_app.ui.editor.window import EditorWindow
from desktop_app.ui.run_view import RunDialog
from desktop_app.ui.windows import fitted, usable_area

pytestmark = pytest.mark.slow


def _on_screen(window: QWidget) -> bool:
    """Whether the whole window, frame and all, lies in the available area of its screen."""
    return window.screen().availableGeometry().contains(window.frameGeometry())


def _open_editor(gui: Gui, workflow_id: str) -> EditorWindow:
    gui.window.open_editor(workflow_id)
    gui.run(until(lambda: len(top_level(EditorWindow)) == 1, what="the editor"))
    editor = top_level(EditorWindow)[0]
    assert isinstance(editor, EditorWindow)
    gui.run(until(lambda: editor.workflow is not None, what="the workflow in the editor"))
    return editor


def _close(gui: Gui, editor: EditorWindow) -> None:
    editor.close()
    gui.run(until(lambda: not top_level(EditorWindow), what="the editor to close"))


def test_fitted_shrinks_and_moves_a_rectangle_onto_the_area_as_little_as_needed() -> None:
    area = QRect(0, 30, 1440, 870)
    assert fitted(QRect(100, 100, 800, 600), area) == QRect(100, 100, 800, 600)
    assert fitted(QRect(0, 0, 1800, 1169), area) == area  # 1200×780 at scale 1.5
    assert fitted(QRect(1300, 800, 400, 300), area) == QRect(1040, 600, 400, 300)
    assert fitted(QRect(-3000, 5000, 500, 400), area) == QRect(0, 500, 500, 400)  # screen gone


def test_windows_fit_the_screen_open_in_front_and_come_back_where_they_were(
    gui: Gui, tmp_path: Path
) -> None:
    screen = QGuiApplication.primaryScreen()
    area = usable_area(screen)
    window = gui.window
    # The main window asks for 1200×780 and the screen is smaller: it fits, minimum size too.
    assert area.width() < 1200
    assert _on_screen(window) and window.minimumSize().width() <= area.width()
    assert window.minimumSizeHint().width() <= area.width()  # wide screens scroll instead

    version = gui.call(lambda: approved(gui.services, "create-contact"))
    editor = _open_editor(gui, version.workflow_id)
    assert _on_screen(editor)  # 1280×820 asked for: as large as the screen allows
    assert editor.frameGeometry().size() == screen.availableGeometry().size()
    # a new window opens in front of the main window, with the focus
    assert editor.isActiveWindow() and QApplication.activeWindow() is editor

    # closed somewhere else, it opens there next time; kept in the config dir, not the data
    where = QRect(area.x() + 40, area.y() + 30, 640, 500)
    editor.setGeometry(where)
    _close(gui, editor)
    state = window_state_path()
    assert state.is_file() and state.is_relative_to(Path(os.environ["XDG_CONFIG_HOME"]))
    editor = _open_editor(gui, version.workflow_id)
    assert editor.geometry() == where

    # larger than the screen now (or on a screen that is gone): back on it, no larger than it
    editor.setGeometry(QRect(area.right() + 2000, area.y(), area.width() + 500, 2000))
    _close(gui, editor)
    editor = _open_editor(gui, version.workflow_id)
    assert _on_screen(editor), (editor.frameGeometry(), screen.availableGeometry())

    # maximised, it comes back maximised
    editor.showMaximized()
    _close(gui, editor)
    editor = _open_editor(gui, version.workflow_id)
    assert editor.isMaximized()
    _close(gui, editor)

    # the main window too (it saves as it closes with the app, or hides to the tray)
    window.setGeometry(QRect(area.x() + 10, area.y() + 20, 700, 500))
    window.hide()
    window.show()
    assert window.geometry() == QRect(area.x() + 10, area.y() + 20, 700, 500)


def test_the_run_dialog_holds_its_fields_still_while_you_type(gui: Gui) -> None:
    version = gui.call(lambda: approved(gui.services, "create-contact"))
    gui.window.open_run(version.workflow_id)
    gui.run(until(lambda: len(top_level(RunDialog)) == 1, what="the run dialog"))
    dialog = top_level(RunDialog)[0]
    assert isinstance(dialog, RunDialog)
    assert dialog.isActiveWindow()
    gui.run(until(lambda: _on_screen(dialog), what="the dialog on the screen"))
    form = dialog.form
    fields = [form.field(p.name) for p in version.workflow.parameters]

    def places() -> list[QRect]:
        QApplication.processEvents()  # the layout settles
        return [QRect(f.mapTo(dialog, QPoint(0, 0)), f.size()) for f in fields]

    # The focus is in the first field that needs a value (the password), its problem under it.
    typing = QApplication.focusWidget()
    assert typing is form.field("password") and form.problem("password")
    before = places()
    QTest.keyClicks(typing, "s")  # the problem goes: nothing moves
    assert not form.problem("password")
    assert places() == before
    QTest.keyClick(typing, Qt.Key.Key_Backspace)  # and comes back: nothing moves either
    assert form.problem("password")
    assert places() == before
    QTest.keyClicks(form.field("email"), "@")  # another field's problem appears
    assert form.problem("email")
    assert places() == before
    dialog.reject()
