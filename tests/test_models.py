"""The domain model: every document round-trips through JSON and keeps its invariants."""

from __future__ import annotations

import typing

import pytest
from factories import experience_for, full_trajectory, full_workflow, run_for
from pydantic import ValidationError

from desktop_app.core.models import (
    MASK,
    ActionKind,
    Event,
    Experience,
    FillStep,
    Locator,
    LocatorStrategy,
    Parameter,
    ParameterType,
    Run,
    Step,
    Trajectory,
    UrlMatches,
    Workflow,
    WorkflowVersion,
)
from desktop_app.core.models.workflow import Condition, Expectation, StepKind, walk
from desktop_app.core.templating import escape, pieces, placeholders, render


def _union_kinds(annotated: object) -> set[str]:
    union = typing.get_args(annotated)[0]
    return {member.model_fields["kind"].default for member in typing.get_args(union)}


def test_full_workflow_covers_every_step_and_expectation_kind() -> None:
    wf = full_workflow()
    assert {s.kind for s in wf.steps} == set(typing.get_args(StepKind)) == _union_kinds(Step)
    used = {e.kind for s in walk(wf.steps) for e in s.expectations}
    conditions = {s.condition.kind for s in walk(wf.steps) if hasattr(s, "condition")}
    assert used | conditions == _union_kinds(Condition)
    assert _union_kinds(Expectation) == _union_kinds(Condition) - {"value"}


def test_full_trajectory_covers_every_action() -> None:
    assert {e.action for e in full_trajectory().events} == set(ActionKind)


@pytest.mark.parametrize(
    "model",
    [full_workflow(), full_trajectory(), run_for(full_workflow()), experience_for(full_workflow())],
    ids=["workflow", "trajectory", "run", "experience"],
)
def test_documents_round_trip_through_json(model: Workflow | Trajectory | Run | Experience) -> None:
    text = model.model_dump_json()
    again = type(model).model_validate_json(text)
    assert again == model
    assert again.model_dump_json() == text
    version = 2 if isinstance(model, Workflow) else 1
    assert f'"schema_version":{version}' in text


def test_version_round_trips_with_its_history() -> None:
    version = WorkflowVersion(workflow=full_workflow(), created_by="ann")
    assert WorkflowVersion.model_validate_json(version.model_dump_json()) == version


def test_models_are_frozen() -> None:
    wf = full_workflow()
    with pytest.raises(ValidationError):
        wf.name = "changed"  # type: ignore[misc]


def test_unknown_parameter_reference_names_the_path() -> None:
    wf = full_workflow()
    steps = list(wf.steps)
    steps[1] = steps[1].model_copy(update={"value": "{usr}"})
    with pytest.raises(ValidationError, match=r"steps\[1\]\.value: \{usr\} is not a parameter"):
        Workflow.model_validate({**wf.model_dump(), "steps": [s.model_dump() for s in steps]})


def test_variable_can_be_used_only_after_the_step_that_extracts_it() -> None:
    wf = full_workflow()
    data = wf.model_dump()
    data["steps"][0]["url"] = "https://app.example.test/?p={price}"
    with pytest.raises(ValidationError, match=r"steps\[0\]\.url: \{price\}"):
        Workflow.model_validate(data)


def test_locators_in_targets_are_templates_but_fingerprints_are_not() -> None:
    wf = full_workflow()
    data = wf.model_dump()
    data["steps"][1]["target"]["fingerprint"]["text"] = "{not_a_param}"
    Workflow.model_validate(data)  # recorded data, not rendered
    data["steps"][1]["target"]["locators"][0]["value"] = "{not_a_param}"
    with pytest.raises(ValidationError, match=r"steps\[1\]\.target\.locators\[0\]\.value"):
        Workflow.model_validate(data)


def test_password_field_cannot_be_filled_with_a_constant() -> None:
    wf = full_workflow()
    data = wf.model_dump()
    data["steps"][2]["value"] = "hunter2"
    with pytest.raises(ValidationError, match="password field is filled with a constant"):
        Workflow.model_validate(data)
    data["steps"][2]["value"] = "{user}"  # a parameter, but not a secret one
    with pytest.raises(ValidationError, match="password field"):
        Workflow.model_validate(data)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "secret", "default": "x"}, "secret parameter cannot have a default"),
        ({"type": "choice"}, "needs at least one choice"),
        ({"type": "choice", "choices": ["a"], "default": "b"}, "not one of the choices"),
        ({"type": "text", "choices": ["a"]}, "only a choice parameter"),
        ({"type": "bool", "default": "yes"}, "true or false"),
        ({"type": "number", "default": "3"}, "must be a number"),
        ({"name": "Full Name"}, "should match pattern"),
    ],
)
def test_parameter_rules(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Parameter.model_validate({"name": "p", **kwargs})


def test_duplicate_parameters_and_step_ids_are_refused() -> None:
    p = Parameter(name="a")
    with pytest.raises(ValidationError, match="defined twice"):
        Workflow(name="x", parameters=(p, p))
    step = FillStep(id="s1", title="t", target=full_workflow().steps[1].target, value="v")  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="used twice"):
        Workflow(name="x", steps=(step, step))


def test_intent_template_slots_must_be_non_secret_parameters() -> None:
    with pytest.raises(ValidationError, match="intent_template"):
        Workflow(name="x", intent_template="Do {thing}")
    with pytest.raises(ValidationError, match="secret parameter"):
        Workflow(
            name="x",
            parameters=(Parameter(name="pw", type=ParameterType.SECRET),),
            intent_template="Use {pw}",
        )


def test_secret_never_recorded_in_plain_text() -> None:
    fill = next(e for e in full_trajectory().events if e.action is ActionKind.FILL)
    assert fill.is_secret
    with pytest.raises(ValidationError, match="plain text"):
        Event.model_validate({**fill.model_dump(), "value": "hunter2"})


def test_run_record_refuses_an_unmasked_secret() -> None:
    run = run_for(full_workflow())
    assert run.parameters["password"] == MASK
    assert "hunter2" not in run.model_dump_json()
    with pytest.raises(ValidationError, match="not masked"):
        Run.model_validate({**run.model_dump(), "parameters": {"password": "hunter2"}})
    assert run.llm_calls == 1
    assert run.tokens == 940


def test_locator_name_only_with_role() -> None:
    assert Locator(strategy=LocatorStrategy.ROLE, value="button", name="Go").describe() == (
        'role=button[name="Go"]'
    )
    with pytest.raises(ValidationError, match="only with the 'role' or 'accessible' strategy"):
        Locator(strategy=LocatorStrategy.CSS, value="#go", name="Go")


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        UrlMatches.model_validate({"pattern": "x", "patern": "y"})


def test_templates() -> None:
    text = "Hi {name}, {{literal}} a{b c}"
    assert placeholders(text) == ["name"]
    assert render(text, {"name": "Ann"}) == "Hi Ann, {literal} a{b c}"
    for raw in ["{a}", "{{a}}", "}{", "{{", "plain", "{A}"]:
        assert render(escape(raw), {}) == raw
    with pytest.raises(KeyError):
        render("{missing}", {})
    assert pieces(text) == [("Hi ", False), ("name", True), (", {literal} a{b c}", False)]
    assert pieces("{a}{b}") == [("a", True), ("b", True)] and pieces("") == []


def test_a_check_step_takes_a_bool_parameter() -> None:
    box = full_workflow().steps[4]
    flag = Parameter(name="agree_terms", type=ParameterType.BOOL, default=True)
    step = box.model_copy(update={"checked": "{agree_terms}"}).model_dump()
    Workflow(name="x", parameters=(flag,), steps=(step,))  # type: ignore[arg-type]
    text = Parameter(name="agree_terms", type=ParameterType.TEXT)
    with pytest.raises(
        ValidationError, match=r"steps\[0\]\.checked: \{agree_terms\} is not a bool"
    ):
        Workflow(name="x", parameters=(text,), steps=(step,))  # type: ignore[arg-type]
    assert (
        Workflow.model_validate({"name": "x", "steps": [{**step, "checked": "False"}]})
        .steps[0]
        .checked
        is False
    )  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="checked is true, false or one"):
        Workflow.model_validate({"name": "x", "steps": [{**step, "checked": "yes please"}]})
