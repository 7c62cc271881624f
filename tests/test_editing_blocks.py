"""Editing steps inside blocks (the step editor's core): steps addressed by a path, moved into
and out of a block, and what a block still needs in words."""

from __future__ import annotations

import json

import pytest
from factories import full_workflow

from desktop_app.core import editing
from desktop_app.core.documents import dump_document, load_workflow
from desktop_app.core.editing import EditError
from desktop_app.core.models.workflow import (
    ForEachStep,
    GotoStep,
    IfStep,
    ListItems,
    Parameter,
    ParameterType,
    PressStep,
    TextPresent,
    ValueCompare,
    Workflow,
    walk,
)


def start() -> Workflow:
    return Workflow(
        name="Invoices",
        parameters=(Parameter(name="invoices", type=ParameterType.LIST),),
        steps=(
            GotoStep(title="Open the invoices", url="https://a.test/invoices"),
            PressStep(title="Press Tab", key="Tab"),
        ),
    )


def loop(workflow: Workflow) -> Workflow:
    """*workflow* with a for_each over {invoices} inserted second."""
    made = editing.insert_step(workflow, 1, editing.blank_step("for_each"))
    return editing.update_step(made, 1, over=ListItems(value="{invoices}"), item="invoice")


def test_a_blank_loop_asks_for_a_step_inside_and_something_to_go_over() -> None:
    draft = editing.insert_step(start(), 1, editing.blank_step("for_each"))
    found = {(i.step, i.field): i.message for i in editing.validate(draft) if i.is_error}
    assert found == {
        (1, "steps"): "add a step inside 'For each item': what to do with each item",
        (1, "over.value"): "say what the loop goes over, e.g. {invoices} (a list parameter)",
    }
    [issue] = [i for i in editing.validate(draft) if i.field == "steps"]
    assert issue.where == "Step 2 · steps" and issue.path == (1,)


def test_steps_are_inserted_updated_duplicated_and_deleted_inside_a_block() -> None:
    draft = loop(start())
    draft = editing.insert_step(draft, (1, "steps", 0), editing.blank_step("press"))
    draft = editing.update_step(draft, (1, "steps", 0), title="Type {invoice}", key="{invoice}")
    block = draft.steps[1]
    assert isinstance(block, ForEachStep)
    assert [s.title for s in block.steps] == ["Type {invoice}"]
    assert editing.step_at(draft, (1, "steps", 0)).title == "Type {invoice}"
    assert editing.validate(draft) == []

    twice = editing.duplicate_step(draft, (1, "steps", 0))
    inside = twice.steps[1].steps  # type: ignore[union-attr]
    assert len(inside) == 2 and inside[0].id != inside[1].id
    copied = editing.duplicate_step(draft, 1)  # a block is copied with new ids inside too
    assert len({s.id for s in walk(copied.steps)}) == len(list(walk(copied.steps)))

    emptied = editing.delete_step(draft, (1, "steps", 0))
    assert [i.message for i in editing.validate(emptied)] == [
        "add a step inside 'For each item': what to do with each item"
    ]
    with pytest.raises(EditError, match=r"there is no step 2\.2"):
        editing.delete_step(draft, (1, "steps", 1))
    with pytest.raises(EditError, match="has no 'otherwise'"):
        editing.insert_step(draft, (1, "otherwise", 0), editing.blank_step("press"))
    with pytest.raises(EditError, match="holds no steps"):
        editing.insert_step(draft, (0, "steps", 0), editing.blank_step("press"))


def test_a_step_moves_into_a_block_and_out_of_it() -> None:
    draft = loop(start())  # goto, loop, press
    # dropped on the loop's empty body: inside it
    inside = editing.move_into(draft, 2, (1, "steps", 0))
    assert [s.kind for s in inside.steps] == ["goto", "for_each"]
    assert inside.steps[1].steps[0].title == "Press Tab"  # type: ignore[union-attr]
    # dropped before the goto: out of the loop, first
    out = editing.move_into(inside, (1, "steps", 0), 0)
    assert [s.title for s in out.steps] == ["Press Tab", "Open the invoices", "For each item"]
    # a step earlier in the list dropped into a later block: the block's index moves up
    into_later = editing.move_into(draft, 0, (1, "steps", 0))
    assert [s.kind for s in into_later.steps] == ["for_each", "press"]
    assert editing.slot_after_removal(0, (2, "steps", 0)) == (1, "steps", 0)
    assert editing.slot_after_removal((1, "steps", 0), 3) == (3,)
    with pytest.raises(EditError, match="into itself"):
        editing.move_into(draft, 1, (1, "steps", 0))
    # the old top-level move keeps its meaning
    assert [s.kind for s in editing.move_step(draft, 2, 0).steps] == ["press", "goto", "for_each"]


def test_a_loop_s_item_is_known_inside_the_loop_only() -> None:
    draft = loop(start())
    draft = editing.insert_step(draft, (1, "steps", 0), PressStep(title="Type", key="{invoice}"))
    draft = editing.update_step(draft, 2, key="{invoice}")
    [issue] = editing.validate(draft)
    assert issue.message == (
        "{invoice} is only known inside 'For each item'; use it in a step inside that loop"
    )
    assert (issue.step, issue.path, issue.field) == (2, (2,), "key")
    assert "invoice" in editing.known_names(draft)
    with pytest.raises(EditError, match="puts each item in"):
        editing.add_parameter(draft, Parameter(name="invoice"))


def test_nested_problems_point_to_the_step_inside() -> None:
    draft = loop(start())
    draft = editing.insert_step(draft, (1, "steps", 0), editing.blank_step("if"))
    draft = editing.insert_step(draft, (1, "steps", 0, "otherwise", 0), editing.blank_step("goto"))
    issues = editing.validate(draft)
    where = {(i.path, i.field): i.message for i in issues}
    assert where[((1, "steps", 0), "condition.text")] == (
        "the condition has no text yet: say which text to look for"
    )
    assert where[((1, "steps", 0, "otherwise", 0), "url")] == "say which address to open"
    labels = [i.where for i in issues]
    assert "Step 2.1 · condition.text" in labels
    assert "Step 2.1 otherwise 1 · url" in labels
    assert all(i.step == 1 for i in issues)  # the top-level step they are in


def test_a_value_condition_and_try_say_what_they_need() -> None:
    draft = editing.insert_step(start(), 0, editing.blank_step("try"))
    messages = {i.field: i.message for i in editing.validate(draft) if i.step == 0}
    assert messages["steps"] == "add a step inside 'Try, otherwise…': what to try"
    assert messages["otherwise"].startswith("add a step under Otherwise")
    draft = editing.insert_step(start(), 0, editing.blank_step("if"))
    draft = editing.update_step(
        draft, 0, condition=ValueCompare.model_construct(value="", op="equals", to="")
    )
    messages = {i.field: i.message for i in editing.validate(draft) if i.step == 0}
    assert messages["condition.value"] == "say which value the condition looks at, e.g. {status}"


def test_a_loop_built_by_edits_saves_as_a_valid_v2_document() -> None:
    draft = loop(start())
    draft = editing.move_into(draft, 2, (1, "steps", 0))
    draft = editing.insert_step(draft, 2, editing.blank_step("if"))
    draft = editing.update_step(draft, 2, condition=TextPresent(text="Done"))
    draft = editing.insert_step(draft, (2, "steps", 0), PressStep(title="Enter", key="Enter"))
    final = editing.finalize(draft)
    text = dump_document(final)
    assert json.loads(text)["schema_version"] == 2
    again = load_workflow(text)
    assert again == final
    assert isinstance(again.steps[2], IfStep) and again.steps[2].steps[0].title == "Enter"


def test_every_step_of_the_example_reads_where_it_is() -> None:
    workflow = full_workflow()
    assert editing.validate(workflow) == [] or all(
        not i.is_error for i in editing.validate(workflow)
    )
    paths = [p for p, _s in editing.step_paths(workflow.steps)]
    assert (16, "otherwise", 0) in paths
    assert editing.path_label((16, "otherwise", 0)) == "17 otherwise 1"
    assert editing.path_label((17, "steps", 0)) == "18.1"
