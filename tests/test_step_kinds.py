"""The step-kind registry (desktop_app.core.step_kinds): every kind has one entry, the entry
agrees with the kind's model, and every part that treats kinds differently handles each kind.

A kind added to the model without an entry, or an entry that forgets one of the model's fields,
fails here before an analyst meets a step the editor cannot label, a diff that names a field by
its code name, or an export that silently drops a step.
"""

from __future__ import annotations

import ast
from typing import get_args

import pytest
from factories import full_workflow

from desktop_app.core.diff import diff_workflows
from desktop_app.core.editing import EditError, blank_step, insert_step, validate
from desktop_app.core.exports.guide import describe_step as guide_sentence
from desktop_app.core.exports.playwright_script import render_playwright
from desktop_app.core.models.workflow import BLOCK_KINDS, GotoStep, StepKind, Workflow
from desktop_app.core.replay.desktop_kinds import is_desktop_step
from desktop_app.core.step_kinds import (
    INSERTABLE_KINDS,
    KINDS,
    TARGETED_KINDS,
    describe_step,
    kind_spec,
    step_summary,
)

#: Fields every step has; each kind's spec names the rest.
_BASE_FIELDS = {
    "id",
    "kind",
    "title",
    "expectations",
    "timeout_s",
    "irreversible",
    "optional",
    "dialog",
    "screenshot",
    "source_events",
    "reacts",
    "target",
}


def test_every_kind_of_step_has_one_entry_in_the_model_s_order() -> None:
    assert tuple(KINDS) == get_args(StepKind)


@pytest.mark.parametrize("kind", get_args(StepKind))
def test_an_entry_names_exactly_its_model_s_own_fields(kind: str) -> None:
    spec = kind_spec(kind)
    model_fields = spec.model.model_fields
    assert model_fields["kind"].default == kind
    assert {f.name for f in spec.fields} == set(model_fields) - _BASE_FIELDS
    assert len({f.name for f in spec.fields}) == len(spec.fields), "a field named twice"
    if spec.target == "none":
        assert "target" not in model_fields
    else:
        assert "target" in model_fields
        assert model_fields["target"].is_required() == (spec.target == "required")
    assert spec.label and spec.label[0].isupper()
    for field in spec.form_fields:
        assert field.label[0].isupper()
        if field.input in ("int", "float"):
            assert field.low < field.high, f"{kind}.{field.name} has no range"
        if field.input == "choice":
            assert field.options


def test_the_example_workflow_has_every_kind_so_the_checks_below_cover_them_all() -> None:
    assert {step.kind for step in full_workflow().steps} == set(KINDS)


def test_every_step_reads_as_one_line_in_a_diff_on_its_card_and_in_the_guide() -> None:
    workflow = full_workflow()
    for index, step in enumerate(workflow.steps):
        line = describe_step(step)
        assert line and "\n" not in line, step.kind
        assert "\n" not in step_summary(step)
        sentence = guide_sentence(workflow, index)
        assert sentence.strip(), f"the guide says nothing for a {step.kind} step"


def test_the_script_does_each_browser_step_and_says_why_it_cannot_do_the_others() -> None:
    workflow = full_workflow()
    script = render_playwright(workflow)
    ast.parse(script)
    for step in workflow.steps:
        performer = kind_spec(step.kind).performer
        assert is_desktop_step(step) == (performer == "desktop")
        if performer == "browser":
            assert step.title in script, f"the script lost the {step.kind} step"
    assert "a desktop step needs Procedura's desktop backend" in script
    assert "an agent step needs Procedura's LLM" in script
    assert "which is not in this script" in script


@pytest.mark.parametrize("kind", INSERTABLE_KINDS)
def test_a_blank_step_of_each_insertable_kind_asks_for_what_it_still_needs(kind: str) -> None:
    start = Workflow(name="Blank", steps=(GotoStep(title="Open", url="https://a.test/"),))
    step = blank_step(kind)  # type: ignore[arg-type]
    assert step.kind == kind
    assert step.title
    draft = insert_step(start, 1, step)
    errors = [i for i in validate(draft) if i.step == 1 and i.severity == "error"]
    if kind in TARGETED_KINDS:
        assert any("locator" in i.message for i in errors), errors
    elif kind in ("goto", "wait_for", "assert", "agent", *BLOCK_KINDS):
        assert errors, f"a blank {kind} step has nothing to fill in"
    else:
        assert not errors, errors


@pytest.mark.parametrize("kind", sorted(set(KINDS) - set(INSERTABLE_KINDS)))
def test_kinds_that_come_from_recordings_cannot_be_inserted_blank(kind: str) -> None:
    with pytest.raises(EditError, match="record it instead"):
        blank_step(kind)  # type: ignore[arg-type]


def test_a_diff_names_a_changed_field_as_its_kind_says() -> None:
    old = full_workflow()
    steps = list(old.steps)
    goto = steps[0]
    assert isinstance(goto, GotoStep)
    steps[0] = goto.model_copy(update={"url": "https://app.example.test/join"})
    new = old.model_copy(update={"steps": tuple(steps)})
    changed = diff_workflows(old, new).steps[0]
    assert [(f.label, f.after) for f in changed.fields] == [
        ("URL", '"https://app.example.test/join"')
    ]
