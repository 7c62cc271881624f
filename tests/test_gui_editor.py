"""The step editor: editing with undo, parameters renamed everywhere, validation, saving as a new
version, reordering by drag, testing locators in a live page, the success check ("Done when"),
locators inside a repeated item, and exporting from the menu."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import full_workflow
from gui_support import Gui, top_level, until
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QMessageBox
from replay_support import approved

from desktop_app.core.editing import EditError
from desktop_app.core.errors import ConflictError
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    ParameterType,
    TextPresent,
    UrlMatches,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.step_kinds import KINDS
from desktop_app.demo_site import DemoSite
from desktop_app.ui import theme
from desktop_app.ui.editor.dialogs import ExpectationDialog, LocatorDialog
from desktop_app.ui.editor.exports import EXPORT_FORMATS
from desktop_app.ui.editor.steps_view import StepListModel
from desktop_app.ui.editor.success import EMPTY_WARNING
from desktop_app.ui.editor.template_edit import TemplateEdit
from desktop_app.ui.editor.window import EditorWindow

pytestmark = pytest.mark.slow


@pytest.fixture
def contact(gui: Gui) -> WorkflowVersion:
    """The create-contact workflow, approved as version 1."""
    return gui.call(lambda: approved(gui.services, "create-contact"))


@pytest.fixture(autouse=True)
def no_blocking_questions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Closing an editor with changes asks Save/Discard/Cancel; tests answer Discard unless they
    say otherwise (a modal dialog would block the test)."""
    asked: list[str] = []

    def question(_parent: object, title: str, *_args: object, **_kwargs: object) -> object:
        asked.append(title)
        return QMessageBox.StandardButton.Discard

    monkeypatch.setattr(QMessageBox, "question", question)
    yield asked


def open_editor(gui: Gui, workflow_id: str, version: int | None = None) -> EditorWindow:
    gui.window.open_editor(workflow_id, version)
    editors = [w for w in top_level(EditorWindow) if isinstance(w, EditorWindow)]
    [editor] = [e for e in editors if e.workflow_id == workflow_id]
    gui.run(until(lambda: editor.workflow is not None, what="the editor to load"))
    gui.settle()
    return editor


def titles(editor: EditorWindow) -> list[str]:
    assert editor.workflow is not None
    return [step.title for step in editor.workflow.steps]


def card_titles(editor: EditorWindow) -> list[str]:
    model = editor.steps_model
    return [model.index(row).data() for row in range(model.rowCount())]


def saved_json(gui: Gui, workflow_id: str, version: int) -> Any:
    """A stored version as its JSON document."""
    return json.loads(gui.call(lambda: gui.services.workflows.export_json(workflow_id, version)))


def type_into(widget: TemplateEdit, text: str) -> None:
    widget.setFocus()
    widget.selectAll()
    QTest.keyClick(widget, Qt.Key.Key_Delete)
    QTest.keyClicks(widget, text)
    QTest.keyClick(widget, Qt.Key.Key_Return)


def test_steps_are_inserted_duplicated_moved_and_deleted_with_undo_and_redo(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    original = titles(editor)
    assert card_titles(editor)[1] == "2. Fill 'Username' with {username}"
    assert editor.windowTitle().startswith("Create a contact — v1 (approved)")
    assert not editor.isWindowModified()

    editor.select_step(2)
    editor.insert_actions["press"].trigger()
    assert titles(editor)[3] == "Press Enter"
    assert editor.current_row() == 3
    type_into(editor.form.title, "Press Tab to leave the password")
    assert titles(editor)[3] == "Press Tab to leave the password"
    assert editor.isWindowModified()

    editor.select_step(1)
    editor.action_duplicate.trigger()  # Ctrl+D
    assert titles(editor)[1:3] == [original[1], original[1]]
    assert editor.current_row() == 2
    editor.action_move_down.trigger()  # Ctrl+Down
    assert titles(editor)[3] == original[1] and editor.current_row() == 3
    editor.action_move_up.trigger()  # Ctrl+Up
    editor.action_delete.trigger()  # Delete
    assert titles(editor) == [*original[:3], "Press Tab to leave the password", *original[3:]]

    undo_texts = [editor.undo_stack.text(i) for i in range(editor.undo_stack.count())]
    assert undo_texts == [
        "Insert step 4 (Press a key)",
        "Edit the title (step 4)",
        "Duplicate step 2",
        "Move step 3 to 4",
        "Move step 4 to 3",
        "Delete step 3",
    ]
    while editor.undo_stack.canUndo():
        editor.action_undo.trigger()
    assert titles(editor) == original
    assert card_titles(editor)[9] == "10. Click 'Save'"
    assert not editor.isWindowModified()
    while editor.undo_stack.canRedo():
        editor.action_redo.trigger()
    assert titles(editor) == [*original[:3], "Press Tab to leave the password", *original[3:]]
    assert [a.shortcut().toString() for a in (editor.action_undo, editor.action_redo)] == [
        "Ctrl+Z",
        "Ctrl+Shift+Z",
    ]
    assert editor.action_duplicate.shortcut().toString() == "Ctrl+D"
    editor.close()


def test_keyboard_shortcuts_act_on_the_step_list(gui: Gui, contact: WorkflowVersion) -> None:
    editor = open_editor(gui, contact.workflow_id)
    original = titles(editor)
    editor.activateWindow()
    editor.select_step(4)
    editor.steps_view.setFocus()
    QTest.keyClick(editor.steps_view, Qt.Key.Key_Delete)
    assert titles(editor) == original[:4] + original[5:]
    QTest.keyClick(editor.steps_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert titles(editor) == original
    QTest.keyClick(editor.steps_view, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    assert titles(editor)[3] == original[4]
    QTest.keyClick(
        editor.steps_view,
        Qt.Key.Key_Z,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert titles(editor)[3] == original[4]  # nothing left to redo: still moved
    # Delete in a text field deletes characters, not the step.
    editor.form.title.setFocus()
    QTest.keyClick(editor.form.title, Qt.Key.Key_Delete)
    assert len(titles(editor)) == len(original)
    editor.close()


def test_renaming_a_parameter_rewrites_it_everywhere_in_the_saved_version(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    panel = editor.parameters
    assert panel.select("full_name")
    panel.name.setText("contact_name")
    panel.name.editingFinished.emit()
    # the value, the Save step's check, the intent, and the success checks that use it
    in_success = [c for c in contact.workflow.success if "{full_name}" in c.model_dump_json()]
    places = 3 + len(in_success)
    assert (
        editor.undo_stack.text(0) == f"Rename {{full_name}} to {{contact_name}} ({places} places)"
    )
    assert panel.selected() is not None and panel.selected().name == "contact_name"  # type: ignore[union-attr]
    assert card_titles(editor)[5] == "6. Fill 'Full name' with {contact_name}"
    # The description follows the rename (the quoted page label does not: the page says it).
    described = editor.workflow_panel.description.toPlainText()
    assert "contact name" in described and "full name" not in described.lower(), described

    saved = gui.run(editor.save("Clearer parameter name"))
    assert saved.version == 2 and saved.parent_version == 1
    assert saved.change_note == "Clearer parameter name"
    assert not editor.isWindowModified()
    assert "v2 (draft)" in editor.windowTitle()

    document = saved_json(gui, contact.workflow_id, 2)
    text = json.dumps(document)
    assert "{full_name}" not in text and text.count("{contact_name}") == places + 1  # + title
    assert document["intent_template"] == "Create a contact for {contact_name} at {company}"
    assert document["description"] == described
    steps = document["steps"]
    assert steps[5]["title"] == "Fill 'Full name' with {contact_name}"
    assert steps[5]["value"] == "{contact_name}"
    assert steps[9]["expectations"][0]["text"] == "Contact {contact_name} created"
    assert document["success"] == [
        json.loads(c.model_dump_json().replace("{full_name}", "{contact_name}"))
        for c in contact.workflow.success
    ]

    # Version 1 is untouched and still the approved one.
    assert saved_json(gui, contact.workflow_id, 1) == json.loads(contact.workflow.model_dump_json())
    summary = gui.call(lambda: gui.services.workflows.summary(contact.workflow_id))
    assert (summary.latest_version, summary.approved_version) == (2, 1)
    editor.close()


def test_a_version_saved_elsewhere_meanwhile_stops_the_save_and_keeps_the_edit(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    panel = editor.parameters
    assert panel.select("full_name")
    panel.name.setText("contact_name")
    panel.name.editingFinished.emit()
    # Meanwhile a teammate (or another window) saves version 2.
    theirs = contact.workflow.model_copy(update={"description": "Their wording"})
    gui.call(lambda: gui.services.workflows.save(theirs, actor="bob"))

    with pytest.raises(ConflictError, match=r"bob saved version 2 .* nothing was saved"):
        gui.run(editor.save("Mine"))
    versions = gui.call(lambda: gui.services.workflows.versions(contact.workflow_id))
    assert [v.version for v in versions] == [1, 2]
    assert versions[1].workflow.description == "Their wording"  # theirs, untouched
    assert editor.isWindowModified()  # mine, still in the editor
    assert editor.workflow is not None
    assert "contact_name" in [p.name for p in editor.workflow.parameters]


def test_parameters_are_added_retyped_and_given_defaults_from_the_panel(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    panel = editor.parameters
    panel.add_button.click()
    assert panel.selected() is not None and panel.selected().name == "value"  # type: ignore[union-attr]
    assert any(i.parameter == "value" and not i.is_error for i in editor.issues)  # unused

    panel.name.setText("Bad Name")
    panel.name.editingFinished.emit()
    assert panel.error.isVisible() and "cannot be a parameter name" in panel.error.text()
    assert editor.workflow is not None and editor.workflow.parameter("value") is not None

    panel.type.setCurrentIndex(panel.type.findData(ParameterType.NUMBER))
    panel.type.activated.emit(panel.type.currentIndex())
    panel.default.setText("three")
    panel.default.editingFinished.emit()
    assert "'three' is not a number" in panel.error.text()
    panel.default.setText("3")
    panel.default.editingFinished.emit()
    param = editor.workflow.parameter("value")
    assert param is not None and (param.type, param.default) == (ParameterType.NUMBER, 3)
    panel.secret.setChecked(True)
    param = editor.workflow.parameter("value")
    assert param is not None and (param.type, param.default) == (ParameterType.SECRET, None)
    assert not panel.default.isEnabled()

    panel.remove_button.click()
    assert editor.workflow.parameter("value") is None
    editor.undo_stack.undo()
    assert editor.workflow.parameter("value") is not None
    editor.close()


def test_typing_a_brace_offers_parameters_and_shows_placeholders_as_chips(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    editor.select_step(5)
    value = editor.form.field_widget("value")
    assert isinstance(value, TemplateEdit)
    value.setFocus()
    value.selectAll()
    QTest.keyClicks(value, "Dr {full")
    completer = value.completer()
    assert completer.popup().isVisible()
    assert completer.currentCompletion() == "full_name"
    QTest.keyClick(completer.popup(), Qt.Key.Key_Return)
    assert value.text() == "Dr {full_name}"
    QTest.keyClick(value, Qt.Key.Key_Return)
    assert editor.workflow is not None
    assert editor.workflow.steps[5].value == "Dr {full_name}"  # type: ignore[union-attr]
    # a known placeholder is a blue chip, an unknown one red
    layout = value.document().firstBlock().layout()
    formats = {f.start: f.format.background().color().name() for f in layout.formats()}
    assert formats == {3: theme.colours().info_bg}
    type_into(value, "{nobody}")
    formats = {
        f.start: f.format.background().color().name()
        for f in value.document().firstBlock().layout().formats()
    }
    assert formats == {0: theme.colours().error_bg}
    editor.close()


def test_problems_show_inline_and_block_saving_until_fixed(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    refused: list[str] = []
    editor.save_refused.connect(refused.append)
    editor.select_step(1)
    type_into(editor.form.title, "")
    editor.select_step(2)
    value = editor.form.field_widget("value")
    assert isinstance(value, TemplateEdit)
    type_into(value, "hunter2")

    problems = [editor.problems.item(i).text() for i in range(editor.problems.count())]
    assert problems == [
        "Parameter password: no step uses {password}; use it in a value or remove it",
        "Step 2 · title: the step has no title; say what it does, e.g. “Click Save”",
        "Step 3 · value: a password field is filled with a constant; use a secret parameter",
    ]
    issues = editor.steps_model.index(1).data(StepListModel.ISSUES_ROLE)
    assert [i.field for i in issues] == ["title"]
    assert "no title" in editor.steps_model.index(1).data(Qt.ItemDataRole.ToolTipRole)
    assert editor.form.problems.isVisible() and "password field" in editor.form.problems.text()
    assert "2 to fix before saving" in editor.steps_header.text()

    editor.action_save.trigger()
    assert refused == [
        "Cannot save: 2 problems must be fixed first. "
        "Step 2 · title: the step has no title; say what it does, e.g. “Click Save”"
    ]
    assert editor.current_row() == 1  # it went to the first problem
    box = next(w for w in top_level(QMessageBox) if w.objectName() == "editor-save-refused")
    box.close()
    with pytest.raises(EditError, match="cannot save yet"):
        gui.run(editor.save())
    assert gui.call(lambda: gui.services.workflows.summary(contact.workflow_id)).latest_version == 1

    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert not editor.issues
    editor.close()


def test_save_from_the_menu_asks_for_a_note_and_submit_sends_it_to_review(
    gui: Gui, contact: WorkflowVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    changed: list[str] = []
    gui.window.events.workflows_changed.connect(changed.append)
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("Mark Save irreversible", True))
    assert not editor.action_submit.isEnabled()  # version 1 is approved, not a draft
    editor.select_step(9)
    editor.form.irreversible.setChecked(True)
    assert editor.undo_stack.text(0) == "Mark irreversible (step 10)"
    editor.form.title.setFocus()
    QTest.keyClicks(editor.form.title, " the contact")  # not committed yet: Save commits it
    editor.action_save.trigger()
    gui.run(until(lambda: not editor.isWindowModified(), what="the save"))
    gui.settle()
    assert editor.base is not None and editor.base.version == 2
    assert changed == [contact.workflow_id]
    step = saved_json(gui, contact.workflow_id, 2)["steps"][9]
    assert (step["irreversible"], step["title"]) == (True, "Click 'Save' the contact")
    assert saved_json(gui, contact.workflow_id, 1)["steps"][9]["irreversible"] is False

    assert editor.action_submit.isEnabled()
    editor.action_submit.trigger()
    gui.settle()
    version = gui.call(lambda: gui.services.workflows.get(contact.workflow_id, 2))
    assert version.status is WorkflowStatus.IN_REVIEW
    assert version.transitions[-1].comment == "Mark Save irreversible"
    assert "version 2 (in review)" in editor.banner.text()
    editor.close()

    older = open_editor(gui, contact.workflow_id, 1)  # an older version opens as it was
    assert older.base is not None and older.base.version == 1
    assert titles(older)[9] == "Click 'Save'"
    older.close()


def test_cards_are_reordered_by_dragging(gui: Gui, contact: WorkflowVersion) -> None:
    editor = open_editor(gui, contact.workflow_id)
    original = titles(editor)
    model = editor.steps_model

    # the model's move API, as the list view calls it for an internal move
    assert model.moveRows(QModelIndex(), 9, 1, QModelIndex(), 0)
    assert titles(editor) == [original[9], *original[:9]]
    assert editor.current_row() == 0 and editor.undo_stack.text(0) == "Move step 10 to 1"

    # what a drop does: the dragged card's row travels as mime data to the row dropped on
    mime = model.mimeData([model.index(1)])
    assert model.canDropMimeData(mime, Qt.DropAction.MoveAction, 4, 0, QModelIndex())
    assert model.dropMimeData(mime, Qt.DropAction.MoveAction, 4, 0, QModelIndex())
    moved = [original[9], *original[:9]]
    expected = [moved[0], moved[2], moved[3], moved[1], *moved[4:]]
    assert titles(editor) == expected
    assert card_titles(editor)[3] == f"4. {moved[1]}"
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert titles(editor) == original
    editor.close()


def test_cards_show_screenshot_thumbnails(gui: Gui, contact: WorkflowVersion) -> None:
    image = QImage(320, 200, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.darkCyan)
    path = Path(gui.services.settings.home) / "shot.png"
    image.save(str(path))
    ref = gui.call(lambda: gui.services.media.put(path.read_bytes(), "png"))
    steps = list(contact.workflow.steps)
    steps[3] = steps[3].model_copy(update={"screenshot": ref})
    workflow = contact.workflow.model_copy(update={"steps": tuple(steps)})
    gui.call(lambda: gui.services.workflows.save(workflow, actor="tester"))

    editor = open_editor(gui, contact.workflow_id)
    gui.run(until(lambda: editor.thumbnails.loaded(ref), what="the thumbnail"))
    thumb = editor.steps_model.index(3).data(Qt.ItemDataRole.DecorationRole)
    assert thumb is not None and not thumb.isNull() and thumb.width() <= 104
    assert editor.steps_model.index(2).data(Qt.ItemDataRole.DecorationRole) is None
    editor.select_step(3)
    assert editor.form.screenshot_box.isVisible()
    assert editor.form.screenshot.pixmap().width() == 480
    editor.close()


def test_testing_locators_highlights_matches_in_a_live_page(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    editor.tester.headless = True
    editor.select_step(1)
    assert editor.form.test_url.text() == "http://127.0.0.1:8765/login"  # the first goto step
    with DemoSite() as site:
        editor.form.test_url.setText(site.url.rstrip("/") + "/login")
        assert gui.run(editor.test_locator(1, 0)) == 1
        assert editor.form.result_text(0) == "1 match"
        assert editor.tester.opened == 1

        broken = Locator(strategy=LocatorStrategy.CSS, value="#user-name")
        step = editor.workflow.steps[1]  # type: ignore[union-attr]
        editor.set_locators(1, (*step.target_or_none.locators, broken), "Add a locator")  # type: ignore[union-attr]
        assert gui.run(editor.test_locator(1, 4)) == 0
        assert editor.form.result_text(4) == "no match"
        assert editor.form.result_text(0) == "1 match"  # earlier results stay
        assert gui.run(editor.test_locator(1, 2)) == 1  # css=#username
        # the Test button itself, as a person presses it
        button = editor.form.locators.cellWidget(1, 2)
        button.click()  # type: ignore[union-attr]
        gui.run(until(lambda: editor.form.result_text(1) == "1 match", what="label=Username"))
        gui.settle()
        assert editor.tester.opened == 1  # one page for every test
        # the person closes the test browser's window: the next test opens a new one
        preview = editor.tester.preview
        assert preview is not None and preview.is_open
        gui.run(preview.close())
        assert not preview.is_open
        assert gui.run(editor.test_locator(1, 0)) == 1
        assert editor.form.result_text(0) == "1 match" and editor.tester.opened == 2
        editor.close()
        gui.settle()
    assert not editor.tester.is_open


@pytest.mark.parametrize("fmt", ["html", "markdown", "playwright", "bundle"])
def test_export_from_the_menu_writes_the_saved_version(
    gui: Gui, contact: WorkflowVersion, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    suffix = next(f.suffix for f in EXPORT_FORMATS if f.key == fmt)
    chosen = tmp_path / "out" / f"create-contact{suffix}"
    offered: list[str] = []

    def save_dialog(_parent: object, _title: str, suggested: str, _filter: str) -> tuple[str, str]:
        offered.append(suggested)
        return str(chosen), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    editor.export_actions[fmt].trigger()
    gui.settle()
    assert Path(offered[0]).name == f"create-a-contact{suffix}"
    data = chosen.read_bytes()
    if fmt == "bundle":
        assert data[:2] == b"PK"
    else:
        text = data.decode("utf-8")
        assert "Sign in" in text or "sign_in" in text.lower()
    if fmt == "html":
        assert text.lstrip().lower().startswith("<!doctype html>")
    said = f'Wrote "{contact.workflow.name}" v{contact.version} (approved) to {chosen}'
    assert editor.exported.startswith(said)  # which version went out, in the status bar
    editor.close()


def test_closing_with_unsaved_changes_asks_first(
    gui: Gui, contact: WorkflowVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    editor.select_step(0)
    editor.action_delete.trigger()
    monkeypatch.setattr(
        QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Cancel
    )
    editor.close()
    assert editor.isVisible() and editor.has_unsaved_changes
    monkeypatch.setattr(
        QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Discard
    )
    editor.close()
    assert not editor.isVisible()
    assert gui.call(lambda: gui.services.workflows.summary(contact.workflow_id)).latest_version == 1


def test_locators_and_checks_are_edited_through_their_dialogs(
    gui: Gui, contact: WorkflowVersion
) -> None:
    editor = open_editor(gui, contact.workflow_id)
    editor.select_step(6)  # Fill 'Email'
    form = editor.form

    form.locator_add.click()
    [dialog] = [w for w in top_level(LocatorDialog) if isinstance(w, LocatorDialog)]
    dialog.strategy.setCurrentIndex(dialog.strategy.findData(LocatorStrategy.CSS))
    dialog.accept()  # nothing typed: refused, with the reason
    assert dialog.isVisible() and dialog.error.text() == "say what to look for"
    type_into(dialog.value, "input[type=email]")
    dialog.accept()
    step = editor.workflow.steps[6]  # type: ignore[union-attr]
    assert step.target_or_none.locators[-1].describe() == "css=input[type=email]"  # type: ignore[union-attr]
    form.locators.selectRow(form.locators.rowCount() - 1)
    form.locator_up.click()
    assert step.target_or_none is not None
    locators = editor.workflow.steps[6].target_or_none.locators  # type: ignore[union-attr]
    assert locators[-2].describe() == "css=input[type=email]"
    form.locator_remove.click()
    assert len(editor.workflow.steps[6].target_or_none.locators) == len(locators) - 1  # type: ignore[union-attr]

    form.expectation_add.menu().findChild(QAction, "expectation-add-text").trigger()
    [check] = [w for w in top_level(ExpectationDialog) if isinstance(w, ExpectationDialog)]
    type_into(check.text, "Email {email} is valid")
    check.accept()
    step = editor.workflow.steps[6]  # type: ignore[union-attr]
    assert [e.kind for e in step.expectations] == ["text"]
    assert form.expectations.item(0).text() == "page shows “Email {email} is valid”"
    assert [editor.undo_stack.text(i) for i in range(editor.undo_stack.count())] == [
        "Add a locator (step 7)",
        "Reorder the locators (step 7)",
        "Remove a locator (step 7)",
        "Add a check (step 7)",
    ]

    editor.workflow_panel.name.setText("Create a CRM contact")
    editor.workflow_panel.name.editingFinished.emit()
    assert editor.windowTitle().startswith("Create a CRM contact — v1")
    editor.close()


def test_every_kind_of_step_opens_in_the_form(gui: Gui) -> None:
    workflow = full_workflow()
    gui.call(lambda: gui.services.workflows.save(workflow, actor="tester"))
    editor = open_editor(gui, workflow.id)
    seen = []
    for row, step in enumerate(workflow.steps):
        editor.select_step(row)
        assert editor.form.heading.text().count(f"Step {row + 1} ·") == 1
        seen.append(step.kind)
        if step.kind == "hotkey":
            keys = editor.form.field_widget("keys")
            assert isinstance(keys, QLineEdit) and keys.text() == "ctrl+s"
            keys.setText("ctrl+shift+s")
            keys.editingFinished.emit()
        no_checks = [
            editor.form.expectations.item(i).text() for i in range(editor.form.expectations.count())
        ]
        if not step.expectations:  # the empty list speaks of what the step acts in
            place = "a window" if step.kind.startswith(("desktop", "hotkey")) else "a page"
            assert no_checks == [f"No checks. Add one so replays notice when {place} changed."]
        if step.kind in ("desktop_click", "desktop_type"):  # no page to test it on
            assert editor.form.test_page.isHidden()
            assert editor.form.target_box.title().startswith(
                "Element (by accessibility" if step.kind == "desktop_click" else "Field"
            )
        elif "target" in type(step).model_fields:
            assert not editor.form.test_page.isHidden()
        if step.kind == "call":
            argument = editor.form.field_widget("arguments").findChild(TemplateEdit)  # type: ignore[union-attr]
            assert argument.text() == "{user}"
            type_into(argument, "{user}.admin")
    assert set(seen) == set(KINDS)  # the blocks too
    assert editor.workflow is not None
    assert editor.workflow.steps[15].keys == ("ctrl", "shift", "s")  # type: ignore[union-attr]
    assert editor.workflow.steps[11].arguments == {"email": "{user}.admin"}  # type: ignore[union-attr]
    editor.close()


# ── the success check ("Done when") and locators inside a repeated item ─────────────────────


def saved_as_latest(gui: Gui, workflow: Workflow) -> WorkflowVersion:
    """*workflow* saved as the next version (a draft)."""
    return gui.call(lambda: gui.services.workflows.save(workflow, actor="tester")).version


def undo_texts(editor: EditorWindow) -> list[str]:
    return [editor.undo_stack.text(i) for i in range(editor.undo_stack.count())]


def problem_texts(editor: EditorWindow) -> list[str]:
    return [editor.problems.item(i).text() for i in range(editor.problems.count())]


def test_done_when_shows_the_success_check_after_the_steps_and_warns_when_empty(
    gui: Gui, contact: WorkflowVersion
) -> None:
    checks = (
        TextPresent(text="Contact {full_name} created"),
        UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
    )
    saved_as_latest(gui, contact.workflow.model_copy(update={"success": checks}))
    editor = open_editor(gui, contact.workflow_id)
    done = editor.success
    assert done.title() == "Done when" and done.isVisible()
    assert done.texts() == [
        "page shows “Contact {full_name} created”",
        "URL matches http://127.0.0.1:8765/contacts/*",
    ]
    assert not done.warning.isVisible()
    # it sits under the step list: after the last step
    steps_bottom = editor.steps_view.mapTo(editor, editor.steps_view.rect().bottomLeft()).y()
    assert done.mapTo(editor, done.rect().topLeft()).y() >= steps_bottom

    done.checks.setCurrentRow(0)
    done.remove_button.click()
    done.checks.setCurrentRow(0)
    done.remove_button.click()
    assert done.texts() == [] and editor.workflow is not None and editor.workflow.success == ()
    assert done.warning.isVisible() and EMPTY_WARNING in done.warning.text()
    assert EMPTY_WARNING == (
        "No success check: runs will end 'done, unverified'. Add what shows the task was done."
    )
    assert undo_texts(editor) == ["Remove success check 1", "Remove success check 1"]
    assert editor.action_undo.text() == "&Undo Remove success check 1"
    editor.action_undo.trigger()
    assert done.texts() == ["URL matches http://127.0.0.1:8765/contacts/*"]
    assert not done.warning.isVisible()
    editor.close()


def test_a_success_check_is_added_edited_and_removed_with_undo_and_saved_as_a_version(
    gui: Gui, contact: WorkflowVersion
) -> None:
    empty = saved_as_latest(gui, contact.workflow.model_copy(update={"success": ()}))
    editor = open_editor(gui, contact.workflow_id)
    done = editor.success
    assert done.warning.isVisible() and not done.checks.isVisible()

    done.add_button.menu().findChild(QAction, "success-add-text").trigger()
    [dialog] = [w for w in top_level(ExpectationDialog) if isinstance(w, ExpectationDialog)]
    assert dialog.windowTitle() == "Done when: The page shows text"
    type_into(dialog.text, "Contact {full_name} created")
    dialog.accept()
    assert done.texts() == ["page shows “Contact {full_name} created”"]
    assert not done.warning.isVisible() and editor.isWindowModified()

    # an unknown placeholder is an error where it is, and blocks saving
    done.checks.setCurrentRow(0)
    done.edit_button.click()
    [dialog] = [w for w in top_level(ExpectationDialog) if isinstance(w, ExpectationDialog)]
    assert dialog.text.text() == "Contact {full_name} created"
    type_into(dialog.text, "Contact {contact} created")
    dialog.accept()
    assert done.texts() == ["page shows “Contact {contact} created”"]
    message = (
        "{contact} is not a parameter nor a variable a step stores; "
        "add the parameter or fix the name"
    )
    assert problem_texts(editor) == [f"Done when · check 1: {message}"]
    assert done.problems.isVisible() and message in done.problems.text()
    assert "1 to fix before saving" in editor.steps_header.text()
    with pytest.raises(EditError, match="cannot save yet: Done when · check 1"):
        gui.run(editor.save())
    editor.problems.itemClicked.emit(editor.problems.item(0))  # goes to the check
    assert editor.focusWidget() is done.checks and done.checks.currentRow() == 0

    editor.action_undo.trigger()
    assert done.texts() == ["page shows “Contact {full_name} created”"]
    assert not done.problems.isVisible() and problem_texts(editor) == [
        "No problems. Save creates a new version."
    ]
    done.add_button.menu().findChild(QAction, "success-add-url").trigger()
    [dialog] = [w for w in top_level(ExpectationDialog) if isinstance(w, ExpectationDialog)]
    type_into(dialog.text, "http://127.0.0.1:8765/contacts/*")
    dialog.accept()
    assert undo_texts(editor) == ["Add a success check", "Add a success check"]
    assert undo_texts(editor)[-1] == "Add a success check"

    saved = gui.run(editor.save("Say when it is done"))
    assert saved.version == empty.version + 1 and saved.parent_version == empty.version
    assert saved_json(gui, contact.workflow_id, saved.version)["success"] == [
        {"kind": "text", "text": "Contact {full_name} created"},
        {"kind": "url", "pattern": "http://127.0.0.1:8765/contacts/*", "match": "glob"},
    ]
    assert saved_json(gui, contact.workflow_id, empty.version)["success"] == []

    editor.activateWindow()
    assert QTest.qWaitForWindowActive(editor)
    done.checks.setCurrentRow(0)
    done.checks.setFocus()
    QTest.keyClick(done.checks, Qt.Key.Key_Delete)  # Delete in the list removes the check
    assert done.texts() == ["URL matches http://127.0.0.1:8765/contacts/*"]
    assert editor.isWindowModified()
    editor.action_undo.trigger()
    assert len(done.texts()) == 2 and not editor.isWindowModified()
    editor.close()


def _row_workflow(contact: WorkflowVersion) -> Workflow:
    """The contact workflow with a last step clicking Edit in the row of {full_name}."""
    params = tuple(
        p.model_copy(update={"default": "John Smith"}) if p.name == "full_name" else p
        for p in contact.workflow.parameters
    )
    in_row = Locator(
        strategy=LocatorStrategy.ROLE,
        value="button",
        name="Edit",
        within=ItemScope(css="tr", text="{full_name}"),
    )
    anywhere = Locator(strategy=LocatorStrategy.ROLE, value="button", name="Edit")
    edit = ClickStep(
        title="Edit the contact {full_name}", target=Target(locators=(in_row, anywhere))
    )
    steps = (*contact.workflow.steps, edit)
    return contact.workflow.model_copy(update={"parameters": params, "steps": steps})


def test_a_locator_inside_a_row_reads_in_words_and_its_item_text_is_edited(
    gui: Gui, contact: WorkflowVersion
) -> None:
    saved_as_latest(gui, _row_workflow(contact))
    editor = open_editor(gui, contact.workflow_id)
    last = len(editor.workflow.steps) - 1  # type: ignore[union-attr]
    editor.select_step(last)
    form = editor.form
    shown = form.locators.item(0, 1)
    assert shown.text() == "in the row showing “{full_name}”: button “Edit”"
    assert "Looks only inside the row (tr)" in shown.toolTip()
    assert form.locators.item(1, 1).text() == 'role=button[name="Edit"]'
    card = editor.steps_model.index(last).data(StepListModel.SUMMARY_ROLE)
    assert card == "in the row showing “{full_name}”: button “Edit”"

    form.locators.selectRow(0)
    form.locator_edit.click()
    [dialog] = [w for w in top_level(LocatorDialog) if isinstance(w, LocatorDialog)]
    assert (dialog.item_css.text(), dialog.item_text.text()) == ("tr", "{full_name}")
    type_into(dialog.item_text, "{email}")
    dialog.accept()
    locator = editor.workflow.steps[last].target_or_none.locators[0]  # type: ignore[union-attr]
    assert locator.within == ItemScope(css="tr", text="{email}")
    assert form.locators.item(0, 1).text() == "in the row showing “{email}”: button “Edit”"
    assert undo_texts(editor)[-1] == f"Edit a locator (step {last + 1})"

    # half an item is refused with the reason; clearing both looks in the whole page
    form.locator_edit.click()
    [dialog] = [w for w in top_level(LocatorDialog) if isinstance(w, LocatorDialog)]
    dialog.item_css.setText("")
    dialog.accept()
    assert dialog.isVisible() and "give both the item" in dialog.error.text()
    dialog.item_text.set_text("")
    dialog.accept()
    assert not dialog.isVisible()
    locator = editor.workflow.steps[last].target_or_none.locators[0]  # type: ignore[union-attr]
    assert locator.within is None
    editor.action_undo.trigger()
    editor.action_undo.trigger()
    locator = editor.workflow.steps[last].target_or_none.locators[0]  # type: ignore[union-attr]
    assert locator.within == ItemScope(css="tr", text="{full_name}")
    editor.close()


def test_a_locator_inside_an_item_of_a_line_item_keeps_the_line_item_when_edited(
    gui: Gui, contact: WorkflowVersion
) -> None:
    wrapper = ItemScope(
        css="div.field", text="Description", outer=ItemScope(css="fieldset", text="Item 2")
    )
    workflow = _row_workflow(contact)
    last = len(workflow.steps) - 1
    step = workflow.steps[last]
    nested = Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value="textbox", within=wrapper),)
    )
    steps = (*workflow.steps[:last], step.model_copy(update={"target": nested}))
    saved_as_latest(gui, workflow.model_copy(update={"steps": steps}))
    editor = open_editor(gui, contact.workflow_id)
    editor.select_step(last)
    form = editor.form
    shown = form.locators.item(0, 1)
    assert shown.text() == (
        "in the item showing “Description” in the group showing “Item 2”: textbox"
    )
    assert "in the group (fieldset) that shows exactly “Item 2”" in shown.toolTip()
    form.locators.selectRow(0)
    form.locator_edit.click()
    [dialog] = [w for w in top_level(LocatorDialog) if isinstance(w, LocatorDialog)]
    assert (dialog.outer_css.text(), dialog.outer_text.text()) == ("fieldset", "Item 2")
    assert dialog.outer_text.isVisible()
    type_into(dialog.item_text, "Amount")
    dialog.accept()
    locator = editor.workflow.steps[last].target_or_none.locators[0]  # type: ignore[union-attr]
    assert locator.within == wrapper.model_copy(update={"text": "Amount"})  # Item 2 kept
    editor.close()


def test_a_locator_inside_a_row_is_tested_live_with_the_item_text_filled_in(
    gui: Gui, contact: WorkflowVersion
) -> None:
    from capture_harness import PageServer

    saved_as_latest(gui, _row_workflow(contact))
    editor = open_editor(gui, contact.workflow_id)
    editor.tester.headless = True
    last = len(editor.workflow.steps) - 1  # type: ignore[union-attr]
    editor.select_step(last)
    server = PageServer()
    try:
        editor.form.test_url.setText(server.url("contact.html"))
        # {full_name} defaults to John Smith: only the Edit button of his row
        assert gui.run(editor.test_locator(last, 0)) == 1
        assert editor.form.result_text(0) == "1 match"
        assert gui.run(editor.test_locator(last, 1)) == 3  # every row's Edit
        assert editor.form.result_text(1) == "3 matches"

        step = editor.workflow.steps[last]  # type: ignore[union-attr]
        nobody = step.target_or_none.locators[0].model_copy(  # type: ignore[union-attr]
            update={"within": ItemScope(css="tr", text="Nobody Here")}
        )
        editor.set_locators(last, (nobody,), "Edit a locator")
        assert gui.run(editor.test_locator(last, 0)) == 0
        assert editor.form.result_text(0) == "no match"

        editor.update_parameter("full_name", default_text="")
        unknown = nobody.model_copy(update={"within": ItemScope(css="tr", text="{full_name}")})
        editor.set_locators(last, (unknown,), "Edit a locator")
        assert gui.run(editor.test_locator(last, 0)) is None
        assert editor.form.result_text(0) == "give {full_name} a default to test"
        editor.close()
        gui.settle()
    finally:
        server.close()
    assert not editor.tester.is_open
