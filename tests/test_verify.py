"""Verification before approval: ``procedura workflows verify`` replays a draft with its recorded
values and stops before its first irreversible step (unless told to go through), and Review
shows each step's result. Judged by the page's own data: a verification submits nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import test_failure_diagnosis as pages
from conftest import Cli
from gui_support import Gui, top_level, until
from replay_support import services, serving
from test_failure_diagnosis import _button, _field

from desktop_app.core.models.run import Run, RunStatus, RunStep, RunTrigger, StepStatus
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    TextPresent,
    Workflow,
)
from desktop_app.ui.run_view import RunDialog, RunWindow

pytestmark = pytest.mark.slow

COMMON = ("--headless", "--non-interactive", "--no-llm")


@pytest.fixture
def site() -> Iterator[str]:
    """The customers page of ``test_failure_diagnosis``, its data fresh."""
    pages.DATA = pages._Customers()
    with serving(pages._Handler) as url:
        yield url


def _draft(*, save: str = "Save") -> Workflow:
    """ "New customer", recorded with Ada's values, its Save step irreversible."""
    return Workflow(
        name="New customer",
        domains=("127.0.0.1",),
        parameters=(
            Parameter(name="name", default="Ada"),
            Parameter(name="email", default="ada@example.test"),
        ),
        steps=(
            GotoStep(title="Open the form", url="http://127.0.0.1:1/customers/plain"),
            FillStep(title="Fill 'Name'", target=_field("#name", "Name"), value="{name}"),
            FillStep(title="Fill 'Email'", target=_field("#email", "Email"), value="{email}"),
            ClickStep(title=f"Click '{save}'", target=_button(save), irreversible=True),
        ),
        success=(TextPresent(text="Customer created"),),
    )


def _saved_draft(workflow: Workflow) -> str:
    with services() as sv:
        sv.workflows.save(workflow, actor="tester")
    return workflow.id


def test_verify_replays_a_draft_and_stops_before_its_irreversible_step(
    site: str, procedura: Cli
) -> None:
    workflow_id = _saved_draft(_draft())
    result = procedura("workflows", "verify", workflow_id[:8], "--base-url", site, *COMMON)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (
        "verified: 3 step(s) went as expected, then stopped before step 4 'Click 'Save'' "
        "(irreversible); nothing after it ran"
    ) in result.stdout
    assert pages.DATA.saved == []  # nothing was submitted
    with services() as sv:
        (run,) = sv.runs.runs(workflow_id)
        assert sv.workflows.get(workflow_id).status.value == "draft"  # a draft stays a draft
    assert run.trigger is RunTrigger.VERIFY and run.status is RunStatus.UNVERIFIED
    assert [s.status for s in run.steps] == [StepStatus.SUCCEEDED] * 3

    through = procedura(
        "workflows", "verify", workflow_id[:8], "--base-url", site, "--through-irreversible",
        "--yes", "-p", "name=Bo", "-p", "email=bo@example.test", *COMMON,
    )  # fmt: skip
    assert through.exit_code == 0, through.stdout + through.stderr
    assert "verified: all 4 step(s) went as expected and the success check held" in (through.stdout)
    assert pages.DATA.saved == [("Bo", "bo@example.test")]


def test_a_verification_that_fails_names_the_step_and_why_and_exits_1(
    site: str, procedura: Cli
) -> None:
    draft = _draft()
    broken = draft.steps[2].model_copy(update={"target": _field("#e-mail", "E-mail address")})
    workflow_id = _saved_draft(draft.model_copy(update={"steps": (*draft.steps[:2], broken)}))
    result = procedura("workflows", "verify", workflow_id[:8], "--base-url", site, *COMMON)
    assert result.exit_code == 1
    assert "verification failed at step 3 'Fill 'Email'' (element missing)" in result.stdout
    assert pages.DATA.saved == []


def test_review_shows_the_newest_verification_step_by_step(gui: Gui) -> None:
    def seed() -> str:
        workflow = _draft()
        gui.services.workflows.save(workflow, actor="tester")
        steps = tuple(
            RunStep(
                index=i,
                step_id=step.id,
                title=step.title,
                status=StepStatus.SUCCEEDED,
                started_at=Run(workflow_id="w", workflow_version=1).started_at,
                duration_ms=10,
            )
            for i, step in enumerate(workflow.steps[:3])
        )
        gui.services.runs.save_run(
            Run(
                workflow_id=workflow.id,
                workflow_version=1,
                trigger=RunTrigger.VERIFY,
                status=RunStatus.UNVERIFIED,
                error="stopped before step 4 'Click 'Save'' (irreversible)",
                steps=steps,
            )
        )
        return workflow.id

    workflow_id = gui.call(seed)
    review = gui.window.review
    review.show_version(workflow_id, 1)
    gui.run(until(lambda: "Verification" in review.diff_view.toPlainText()))
    text = review.diff_view.toPlainText()
    assert "✓ verified: 3 step(s) went as expected, then stopped before step 4" in text
    assert "✓ Fill 'Email'" in text


def test_verify_from_review_runs_the_draft_and_shows_the_result(site: str, gui: Gui) -> None:
    workflow = _draft()
    gui.call(lambda: gui.services.workflows.save(workflow, actor="tester"))
    review = gui.window.review
    review.show_version(workflow.id, 1)
    gui.run(until(lambda: "Not verified yet" in review.diff_view.toPlainText()))
    assert review.verify_button.isEnabled()
    review.verify_button.click()
    gui.run(until(lambda: len(top_level(RunDialog)) == 1, what="the verify dialog"))
    (dialog,) = top_level(RunDialog)
    assert dialog.windowTitle() == "Verify “New customer”"
    assert dialog.form.values() == {"name": "Ada", "email": "ada@example.test"}  # as recorded
    dialog.base_url.setText(site)
    dialog.show_browser.setChecked(False)
    dialog.run_button.click()
    gui.run(until(lambda: len(top_level(RunWindow)) == 1, what="the run window"))
    (window,) = top_level(RunWindow)
    gui.run(until(lambda: window.run is not None, timeout=60, what="the verification to end"))
    assert window.run is not None and window.run.trigger is RunTrigger.VERIFY
    assert pages.DATA.saved == []  # stopped before Save
    gui.run(until(lambda: "✓ verified: 3 step(s)" in review.diff_view.toPlainText()))
    window.close()
