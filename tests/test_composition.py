"""Composition: an approved workflow's steps inside a new recording become a call to it."""

from __future__ import annotations

from conftest import REPO

from desktop_app.core.documents import load_trajectory
from desktop_app.core.induction.compose import compose
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models import CallStep, FillStep, Workflow

DATA = REPO / "tests" / "data"


def _induced(name: str) -> Workflow:
    return induce(load_trajectory((DATA / f"{name}.trajectory.json").read_bytes())).workflow


def _sign_in() -> Workflow:
    """The "Sign in" workflow an analyst cut from the create-contact recording and approved."""
    recorded = _induced("create-contact")
    return Workflow(
        name="Sign in",
        parameters=tuple(p for p in recorded.parameters if p.name in {"username", "password"}),
        steps=recorded.steps[:4],
    )


def test_a_login_span_becomes_a_call_with_mapped_arguments() -> None:
    sign_in = _sign_in()
    expense = _induced("expense-report")
    result = compose(expense, [sign_in])
    call = result.workflow.steps[0]
    assert isinstance(call, CallStep)
    assert (call.workflow_id, call.version, call.title) == (sign_in.id, 1, "Run 'Sign in'")
    assert call.arguments == {"username": "{username}", "password": "{password}"}
    assert call.expectations == expense.steps[3].expectations  # where signing in leads
    assert call.source_events == (0, 1, 2, 3)
    assert len(result.workflow.steps) == len(expense.steps) - 3
    assert result.workflow.steps[1:] == expense.steps[4:]
    assert result.notes == [
        "steps 1–4 do what 'Sign in' (version 1) does: replaced by a call to it"
    ]
    # the secret stays a secret parameter of the outer workflow, handed on by reference
    password = result.workflow.parameter("password")
    assert password is not None and password.type.value == "secret"


def test_every_recording_that_signs_in_the_same_way_composes() -> None:
    sign_in = _sign_in()
    for name in ("create-contact", "filter-orders", "open-contact"):
        composed = compose(_induced(name), [sign_in]).workflow
        assert isinstance(composed.steps[0], CallStep), name


def test_no_call_where_the_callee_has_another_constant() -> None:
    sign_in = _sign_in()
    steps = list(sign_in.steps)
    username = steps[1]
    assert isinstance(username, FillStep)
    steps[1] = username.model_copy(update={"value": "admin"})  # a "Sign in as admin" workflow
    as_admin = Workflow(
        name="Sign in as admin",
        parameters=tuple(p for p in sign_in.parameters if p.name == "password"),
        steps=tuple(steps),
    )
    result = compose(_induced("expense-report"), [as_admin])
    assert result.notes == []
    assert not any(isinstance(s, CallStep) for s in result.workflow.steps)


def test_a_workflow_never_calls_itself_and_short_ones_are_not_calls() -> None:
    expense = _induced("expense-report")
    assert compose(expense, [expense]).notes == []
    one_step = Workflow(name="Open", steps=expense.steps[:1])
    assert compose(expense, [one_step]).notes == []
