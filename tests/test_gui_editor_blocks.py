"""The step editor with blocks: a loop built by inserting a for_each, adding steps inside and
dragging steps into and out of it, every state restored exactly by undo and redo; what a block
still needs, in the Problems list; a condition and a loop's page items tested live on a page
served on 127.0.0.1; saving as a valid version 2 workflow."""

from __future__ import annotations

import json

import pytest
from capture_harness import PageServer
from gui_support import Gui, top_level, until
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from desktop_app.core.models.workflow import (
    ForEachStep,
    GotoStep,
    IfStep,
    ListItems,
    PageItems,
    Parameter,
    ParameterType,
    PressStep,
    TextPresent,
    ValueCompare,
    Workflow,
)
from desktop_app.ui.editor.template_edit import TemplateEdit
from desktop_app.ui.editor.window import EditorWindow

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def discard_on_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing an editor with changes asks; tests answer Discard (a modal would block)."""
    monkeypatch.setattr(
        QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Discard
    )


def open_editor(gui: Gui, workflow: Workflow) -> EditorWindow:
    gui.call(lambda: gui.services.workflows.save(workflow, actor="tester"))
    gui.window.open_editor(workflow.id, None)
    [editor] = [
        w
        for w in top_level(EditorWindow)
        if isinstance(w, EditorWindow) and w.workflow_id == workflow.id
    ]
    gui.run(until(lambda: editor.workflow is not None, what="the editor to load"))
    gui.settle()
    return editor


def rows(editor: EditorWindow) -> list[str]:
    """The step list as shown: each row's text, indented by its depth."""
    model = editor.steps_model
    return ["  " * model.row(r).depth + model.index(r).data() for r in range(model.rowCount())]


def type_into(widget: TemplateEdit, text: str) -> None:
    widget.setFocus()
    widget.selectAll()
    QTest.keyClick(widget, Qt.Key.Key_Delete)
    QTest.keyClicks(widget, text)
    QTest.keyClick(widget, Qt.Key.Key_Return)


def drop(editor: EditorWindow, source_row: int, row: int, on: int | None = None) -> None:
    """What the list view does when a card is dropped between rows (*row*) or on one (*on*)."""
    model = editor.steps_model
    mime = model.mimeData([model.index(source_row)])
    parent = model.index(on) if on is not None else QModelIndex()
    assert model.dropMimeData(
        mime, Qt.DropAction.MoveAction, -1 if on is not None else row, 0, parent
    )


def invoices() -> Workflow:
    return Workflow(
        name="Remind customers",
        parameters=(
            Parameter(name="names", type=ParameterType.LIST, default="Jane Doe\nJohn Smith"),
        ),
        steps=(
            GotoStep(title="Open the customers", url="http://127.0.0.1:8765/customers"),
            PressStep(title="Press Tab", key="Tab"),
            PressStep(title="Press Enter", key="Enter"),
        ),
    )


def test_a_loop_is_built_by_inserting_adding_inside_and_dragging_with_undo_and_redo(
    gui: Gui,
) -> None:
    editor = open_editor(gui, invoices())
    states = [editor.workflow]

    editor.select_step(0)
    editor.insert_actions["for_each"].trigger()
    states.append(editor.workflow)
    assert rows(editor) == [
        "1. Open the customers",
        "2. For each item",
        "  No step inside yet: drop one here, or Add step inside",
        "3. Press Tab",
        "4. Press Enter",
    ]
    problems = [editor.problems.item(i).text() for i in range(editor.problems.count())]
    assert (
        "Step 2 · steps: add a step inside 'For each item': what to do with each item" in problems
    )
    assert (
        "Step 2 · over.value: say what the loop goes over, e.g. {invoices} (a list parameter)"
        in problems
    )
    assert editor.form.heading.text().count("Step 2 · For each") == 1

    source = editor.form.source_editor()
    assert source is not None and source.test_button.isHidden()  # a list: nothing to test
    type_into(source.value, "{names}")
    states.append(editor.workflow)
    item = editor.form.field_widget("item")
    item.setText("name")  # type: ignore[union-attr]
    item.editingFinished.emit()  # type: ignore[union-attr]
    states.append(editor.workflow)
    loop = editor.workflow.steps[1]  # type: ignore[union-attr]
    assert isinstance(loop, ForEachStep)
    assert (loop.over, loop.item) == (ListItems(value="{names}"), "name")

    assert editor.inside_button.isEnabled()
    editor.inside_actions["press"].trigger()  # Add step inside → the loop's first step
    states.append(editor.workflow)
    assert editor.current_path() == (1, "steps", 0)
    assert editor.form.heading.text().startswith("<h3 style='margin:0'>Step 2.1 · Press a key")
    key = editor.form.field_widget("key")
    key.setText("{name}")  # type: ignore[union-attr]
    key.editingFinished.emit()  # type: ignore[union-attr]
    states.append(editor.workflow)
    assert rows(editor)[1:4] == ["2. For each item", "  2.1. Press Enter", "3. Press Tab"]

    # drag "Press Tab" onto the loop's card: first inside it
    drop(editor, source_row=3, row=-1, on=1)
    states.append(editor.workflow)
    assert rows(editor) == [
        "1. Open the customers",
        "2. For each item",
        "  2.1. Press Tab",
        "  2.2. Press Enter",
        "3. Press Enter",
    ]
    # drag the loop's "Press Enter" out, below the last step
    drop(editor, source_row=3, row=5)
    states.append(editor.workflow)
    assert rows(editor)[2:] == ["  2.1. Press Tab", "3. Press Enter", "4. Press Enter"]
    # and reorder inside: the last step dropped on the loop's "Press Tab" goes after it
    drop(editor, source_row=4, row=-1, on=2)
    states.append(editor.workflow)
    assert rows(editor)[2:] == ["  2.1. Press Tab", "  2.2. Press Enter", "3. Press Enter"]

    assert [editor.undo_stack.text(i) for i in range(editor.undo_stack.count())] == [
        "Insert step 2 (For each)",
        "Change what the loop goes over (step 2)",
        "Edit the item (step 2)",
        "Add a step inside 'For each item' (Press a key)",
        "Edit the key (step 2.1)",
        "Move step 3 into 'For each item'",
        "Move step 2.2 out of 'For each item'",
        "Move step 4 into 'For each item'",
    ]
    assert editor.workflow is not None and not [i for i in editor.issues if i.is_error]
    for state in reversed(states[:-1]):
        editor.action_undo.trigger()
        assert editor.workflow == state
    assert not editor.isWindowModified()
    for state in states[1:]:
        editor.action_redo.trigger()
        assert editor.workflow == state

    saved = gui.run(editor.save("Remind each customer"))
    document = json.loads(
        gui.call(lambda: gui.services.workflows.export_json(saved.workflow_id, saved.version))
    )
    assert document["schema_version"] == 2
    assert document["steps"][1]["kind"] == "for_each"
    assert [s["title"] for s in document["steps"][1]["steps"]] == ["Press Tab", "Press Enter"]
    assert document["steps"][1]["steps"][1]["key"] == "{name}"
    editor.close()


def test_an_empty_block_and_an_item_used_outside_its_loop_are_problems_where_they_are(
    gui: Gui,
) -> None:
    editor = open_editor(gui, invoices())
    editor.select_step(2)
    editor.insert_actions["if"].trigger()
    assert rows(editor)[3:6] == [
        "4. If the page shows…",
        "  No step inside yet: drop one here, or Add step inside",
        "  Otherwise",
    ]
    problems = [editor.problems.item(i).text() for i in range(editor.problems.count())]
    assert problems == [
        "Parameter names: no step uses {names}; use it in a value or remove it",
        "Step 4 · steps: add a step inside 'If the page shows…': what to do when the "
        "condition holds",
        "Step 4 · condition.text: the condition has no text yet: say which text to look for",
    ]
    card = editor.steps_model.index(3).data(editor.steps_model.ISSUES_ROLE)
    assert [i.field for i in card] == ["steps", "condition.text"]
    editor.action_save.trigger()
    assert editor.last_refusal is not None and "2 problems" in editor.last_refusal
    box = next(w for w in top_level(QMessageBox) if w.objectName() == "editor-save-refused")
    box.close()

    # select the Otherwise row: Add step inside puts the step there
    editor.steps_view.setCurrentIndex(editor.steps_model.index(5))
    editor.inside_actions["press"].trigger()
    assert editor.current_path() == (3, "otherwise", 0)
    assert rows(editor)[5:7] == ["  Otherwise", "  4 otherwise 1. Press Enter"]
    editor.problems.itemClicked.emit(editor.problems.item(1))
    assert editor.current_path() == (3,)
    editor.close()


def _live() -> Workflow:
    return Workflow(
        name="Live blocks",
        parameters=(Parameter(name="plan", type=ParameterType.TEXT, default="pro"),),
        steps=(
            GotoStep(title="Open the contacts", url="http://127.0.0.1:8765/contact.html"),
            IfStep(
                title="If the form is there",
                condition=TextPresent(text="New contact"),
                steps=(PressStep(title="Press Tab", key="Tab"),),
            ),
            ForEachStep(
                title="For each contact",
                over=PageItems(css="tbody tr", key="td"),
                item="contact",
                steps=(PressStep(title="Press Enter", key="Enter"),),
            ),
        ),
    )


def test_a_condition_and_a_loop_s_items_are_tested_live_on_the_page(gui: Gui) -> None:
    editor = open_editor(gui, _live())
    editor.tester.headless = True
    server = PageServer()
    try:
        editor.select_step(1)
        condition = editor.form.condition_editor()
        assert condition is not None and editor.form.test_page.isVisible()
        editor.form.test_url.setText(server.url("contact.html"))
        assert gui.run(editor.test_condition(1)) is True
        assert condition.result_text() == "holds now"

        type_into(condition.text, "Nowhere to be seen")
        assert editor.workflow.steps[1].condition == TextPresent(text="Nowhere to be seen")  # type: ignore[union-attr]
        assert condition.result_text() == ""  # a changed condition is not tested yet
        condition.test_button.click()  # as a person presses it
        gui.run(until(lambda: condition.result_text() == "does not hold now", what="the test"))
        gui.settle()

        # a value compared: the parameters' defaults, no page needed
        condition.kind.setCurrentIndex(condition.kind.findData("value"))
        condition.kind.activated.emit(condition.kind.currentIndex())
        type_into(condition.value, "{plan}")
        type_into(condition.to, "pro")
        assert editor.workflow.steps[1].condition == ValueCompare(value="{plan}", to="pro")  # type: ignore[union-attr]
        assert gui.run(editor.test_condition(1)) is True
        assert condition.result_text() == "holds now"
        assert editor.undo_stack.text(editor.undo_stack.count() - 1) == (
            "Change the condition (step 2)"
        )

        editor.select_step(2)
        source = editor.form.source_editor()
        assert source is not None and not source.test_button.isHidden()
        assert gui.run(editor.test_source(2)) == ["Jane Doe", "John Smith", "Ada Lovelace"]
        assert source.result_text() == "finds 3 items: Jane Doe, John Smith, Ada Lovelace"
        source.contains.set_text("globex")
        source.contains.editing_finished.emit()
        assert gui.run(editor.test_source(2)) == ["John Smith"]
        assert source.result_text() == "finds 1 item: John Smith"
        assert editor.tester.opened == 1  # one test page for every test
        editor.close()
        gui.settle()
    finally:
        server.close()
    assert not editor.tester.is_open
