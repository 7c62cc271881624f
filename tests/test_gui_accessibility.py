"""Every control in every screen and window has a name a screen reader can say.

The check walks Qt's accessibility tree (what Orca, NVDA or VoiceOver read), not the widgets:
a control is named when its accessible interface says a name, from ``setAccessibleName``, its
text, or a label that is its buddy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import run_for
from gui_support import Gui, top_level, until
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget, QToolButton, QWidget
from replay_support import approved

from desktop_app.core.batch import ResultsFile, results_path
from desktop_app.core.replay.browser import Handle
from desktop_app.core.replay.person import Choice, Question
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.batch_window import BatchDialog, BatchWindow, open_batch
from desktop_app.ui.editor.dialogs import EXPECTATION_KINDS, ExpectationDialog, LocatorDialog
from desktop_app.ui.editor.window import EditorWindow
from desktop_app.ui.person_dialogs import ConfirmDialog, LocateDialog
from desktop_app.ui.record import RecordDialog, RecordingBar
from desktop_app.ui.recordings_page.event_list import EventListModel
from desktop_app.ui.review_page.widgets import CommentDialog
from desktop_app.ui.run_view import RunDialog, RunWindow, load_setup
from desktop_app.ui.tray import WorkflowSearchDialog

pytestmark = pytest.mark.slow

Role = QAccessible.Role

#: Roles a person operates: each needs a name.
_CONTROLS = {
    Role.PushButton,
    Role.Button,  # tool buttons
    Role.CheckBox,
    Role.RadioButton,
    Role.ComboBox,
    Role.EditableText,
    Role.SpinBox,
    Role.Slider,
    Role.Table,
    Role.List,
    Role.Tree,
    Role.PageTabList,
}
#: Roles whose children are rows and cells (named by their data), not controls.
_CONTAINERS_OF_ITEMS = {Role.Table, Role.List, Role.Tree, Role.ComboBox, Role.PageTabList}


def unnamed_controls(window: QWidget) -> list[str]:
    """The visible controls under *window* with no accessible name, as ``role class #name``."""
    root = QAccessible.queryAccessibleInterface(window)
    assert root is not None and root.isValid()
    missing: list[str] = []
    _walk(root, missing, depth=0)
    return missing


def _walk(node: QAccessibleInterface, missing: list[str], depth: int) -> None:
    assert depth < 60, "the accessibility tree loops"
    state = node.state()
    if state.invisible:
        return
    role = node.role()
    widget = node.object()
    interactive = role in _CONTROLS or (state.focusable and isinstance(widget, QWidget))
    if interactive and not _named(node, widget) and not _clear_button(widget, state):
        kind = type(widget).__name__ if widget is not None else "item"
        name = widget.objectName() if isinstance(widget, QWidget) else ""
        missing.append(f"{role.name} {kind} #{name}")
    if role in _CONTAINERS_OF_ITEMS:
        return
    for i in range(node.childCount()):
        child = node.child(i)
        if child is not None and child.isValid():
            _walk(child, missing, depth + 1)


def _clear_button(widget: object, state: QAccessible.State) -> bool:
    """A line edit's clear button: outside the tab order (the line edit is the control)."""
    return (
        isinstance(widget, QToolButton)
        and isinstance(widget.parent(), QLineEdit)
        and not state.focusable
    )


def _named(node: QAccessibleInterface, widget: object) -> bool:
    if isinstance(widget, QComboBox):  # Qt names a combo box by its current text: not a name
        return bool(widget.accessibleName().strip())
    return bool(node.text(QAccessible.Text.Name).strip())


class _Unnamed(dict[str, list[str]]):
    """What each window leaves unnamed (every window is checked before the test fails)."""

    def check(self, window: QWidget, what: str) -> None:
        missing = unnamed_controls(window)
        if missing:
            self[what] = missing


def test_every_screen_and_window_names_its_controls(gui: Gui, tmp_path: Path) -> None:
    version = gui.call(lambda: approved(gui.services, "create-contact"))
    workflow_id = version.workflow_id
    window = gui.window
    gui.run(window.reload_all())
    unnamed = _Unnamed()
    _assert_named = unnamed.check

    # The main window and each of its screens, with a workflow selected where there is one.
    run = run_for(version.workflow)
    gui.call(lambda: gui.services.runs.save_run(run))
    gui.run(window.reload_all())
    window.show_screen("Library")
    gui.run(until(lambda: window.library.select(workflow_id), what="the workflow"))
    _assert_named(window, "Library")
    for name in window.SCREENS[1:]:
        window.show_screen(name)
        if name == "Runs":
            window.show_run(run.id)
            gui.run(until(lambda: window.runs.selected_run() is not None, what="the run"))
        _assert_named(window, name)

    # The step editor.
    window.open_editor(workflow_id)
    gui.run(until(lambda: len(top_level(EditorWindow)) == 1, what="the editor"))
    editor = top_level(EditorWindow)[0]
    assert isinstance(editor, EditorWindow)
    gui.run(until(lambda: editor.workflow is not None, what="the editor's workflow"))
    for where in range(len(editor.workflow.steps)):  # each kind of step has its own fields
        editor.select_step(where)
        _assert_named(editor, f"the step editor, step {where + 1}")
    names = [p.name for p in editor.workflow.parameters]
    assert editor.parameters.select(names[0])
    _assert_named(editor, "the step editor, a parameter")
    locator = LocatorDialog(editor, None, names)
    locator.show()
    _assert_named(locator, "the locator dialog")
    locator.reject()
    for kind in EXPECTATION_KINDS:
        check = ExpectationDialog(editor, kind, None, names)
        check.show()
        _assert_named(check, f"the {kind} check dialog")
        check.reject()
    editor.close()
    comment = CommentDialog(
        window, title="Request changes", prompt="What should change?", confirm="OK", required=True
    )
    comment.show()
    _assert_named(comment, "the review comment")
    comment.reject()

    # Running: the parameter dialog and the run window (not started).
    window.open_run(workflow_id)
    gui.run(until(lambda: len(top_level(RunDialog)) == 1, what="the run dialog"))
    dialog = top_level(RunDialog)[0]
    _assert_named(dialog, "the run dialog")
    dialog.reject()
    setup = gui.call(lambda: load_setup(gui.backend, workflow_id, None))
    run_window = RunWindow(window, setup)
    run_window.show()
    _assert_named(run_window, "the run window")
    run_window.close()

    # A batch: its dialog, and its window (not started).
    people = tmp_path / "people.csv"
    people.write_text("Full name,email,Company\nAnn Lee,ann@example.test,Acme\n", encoding="utf-8")
    open_batch(window, workflow_id, people)
    gui.run(until(lambda: len(top_level(BatchDialog)) == 1, what="the batch dialog"))
    batch = top_level(BatchDialog)[0]
    assert isinstance(batch, BatchDialog)
    gui.run(until(lambda: batch.plan is not None and not batch.planning, what="the check"))
    _assert_named(batch, "the batch dialog")
    plan = batch.plan
    assert plan is not None
    results = ResultsFile(results_path(people), plan.input_columns)
    batch_window = BatchWindow(window, plan, results, RunRequest(version=setup.version))
    batch_window.show()
    _assert_named(batch_window, "the batch window")
    batch_window.close()
    batch.reject()

    # Recording: the dialog that starts one, and the bar that floats while it runs.
    record = RecordDialog(window, window)
    record.show()
    _assert_named(record, "the record dialog")
    record.reject()
    bar = RecordingBar(EventListModel(None))
    bar.show()
    _assert_named(bar, "the recording bar")
    bar.deleteLater()

    # The tray's search, and the questions a run asks a person.
    summaries = gui.call(gui.services.workflows.list)
    search = WorkflowSearchDialog(summaries, window)
    search.show()
    _assert_named(search, "the tray's search")
    search.reject()
    handle = Handle(selector="#save")
    confirm = ConfirmDialog(
        Question("confirm", "Click 'Save'", "Save the contact?", element="button “Save”"), window
    )
    confirm.show()
    _assert_named(confirm, "the confirmation")
    confirm.reject()
    locate = LocateDialog(
        Question(
            "locate",
            "Click 'Save'",
            "Which element is Save?",
            choices=(Choice("button “Save”", handle, 0.9), Choice("link “Sign out”", handle, 0.2)),
        ),
        window,
    )
    locate.show()
    _assert_named(locate, "pointing at the element")
    locate.reject()

    assert not unnamed, f"controls without an accessible name: {dict(unnamed)}"
    # The Library's own controls say what they are.
    library = window.library
    for widget, role in (
        (library.search, Role.EditableText),
        (library.table, Role.Table),
        (library.details, Role.StaticText),
        (window.findChild(QListWidget, "navigation"), Role.List),
    ):
        node = QAccessible.queryAccessibleInterface(widget)
        assert node.role() == role and node.text(QAccessible.Text.Name), widget.objectName()
    assert library.search.accessibleName() == "Search workflows"
