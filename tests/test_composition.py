"""Composition: an approved workflow's steps inside a new recording become a call to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_induce_calls_an_approved_workflow(procedura: Any, tmp_path: Path) -> None:
    from desktop_app.core.documents import dump_document

    login = tmp_path / "sign-in.json"
    login.write_text(dump_document(_sign_in()))
    assert procedura("workflows", "import", str(login)).exit_code == 0
    assert procedura("workflows", "approve", "Sign in").exit_code == 0
    expense = load_trajectory((DATA / "expense-report.trajectory.json").read_bytes())
    procedura("trajectories", "import", str(DATA / "expense-report.trajectory.json"))
    result = procedura("induce", expense.id[:8])
    assert result.exit_code == 0, result.stderr
    assert "replaced by a call to it" in result.stderr
    shown = procedura("workflows", "show", result.stdout.split(" as ")[1].split()[0]).stdout
    assert "1. Run 'Sign in'  (call)" in shown
    plain = procedura("induce", expense.id[:8], "--no-compose", "--name", "Plain")
    assert "Run 'Sign in'" not in procedura("workflows", "show", "Plain").stdout
    assert plain.exit_code == 0
