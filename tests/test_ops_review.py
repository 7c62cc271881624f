"""Review decisions — submit, approve, send back, restore, archive — one way for the command
line, the Review screen and the Library (desktop_app/ops/review.py), over a real library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES

from desktop_app.app import Services, open_services
from desktop_app.core.errors import TransitionError
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.ops.changes import Origin
from desktop_app.ops.review import Decision, archive, decide
from desktop_app.ops.run import version_to_run
from desktop_app.settings import load_settings


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as opened:
        yield opened


def _saved(services: Services) -> Workflow:
    text = (EXAMPLES / "create-contact.workflow.json").read_text(encoding="utf-8")
    workflow = Workflow.model_validate_json(text)
    services.workflows.save(workflow, actor="author")
    return workflow


def test_a_draft_goes_through_review_and_each_step_says_what_it_did(services: Services) -> None:
    workflow = _saved(services)
    lib = services.workflows
    submitted = decide(lib, workflow.id, Decision.SUBMIT, actor="author", origin=Origin.CLI)
    assert submitted.summary == "'Create a contact' version 1 is in review"
    assert submitted.changes.workflows == {workflow.id}
    assert submitted.changes.origin is Origin.CLI
    back = decide(
        lib,
        workflow.id,
        Decision.REQUEST_CHANGES,
        actor="reviewer",
        origin=Origin.WINDOW,
        comment="name the contact's company too",
    )
    assert back.version.status is WorkflowStatus.DRAFT
    assert back.summary == "'Create a contact' version 1 is back in draft"
    decide(lib, workflow.id, Decision.SUBMIT, actor="author", origin=Origin.WINDOW)
    approved = decide(lib, workflow.id, Decision.APPROVE, actor="reviewer", origin=Origin.WINDOW)
    assert approved.summary == "'Create a contact' version 1 is approved"
    assert version_to_run(lib, workflow.id).version == 1
    history = [t.to_status for t in lib.get(workflow.id, 1).transitions]
    assert history[-4:] == [
        WorkflowStatus.IN_REVIEW,
        WorkflowStatus.DRAFT,
        WorkflowStatus.IN_REVIEW,
        WorkflowStatus.APPROVED,
    ]


def test_sending_back_needs_a_comment_and_changes_nothing_without_one(services: Services) -> None:
    workflow = _saved(services)
    lib = services.workflows
    decide(lib, workflow.id, Decision.SUBMIT, actor="author", origin=Origin.CLI)
    with pytest.raises(TransitionError, match="a comment is required"):
        decide(lib, workflow.id, Decision.REQUEST_CHANGES, actor="reviewer", origin=Origin.CLI)
    assert lib.get(workflow.id, 1).status is WorkflowStatus.IN_REVIEW


def test_an_archived_workflow_does_not_run_until_restored_as_a_draft(services: Services) -> None:
    workflow = _saved(services)
    lib = services.workflows
    decide(lib, workflow.id, Decision.APPROVE, actor="reviewer", origin=Origin.CLI)
    archived = archive(lib, workflow.id, actor="reviewer", origin=Origin.WINDOW, comment="old")
    assert archived.summary == (
        f"'Create a contact' is archived (restore it with: procedura workflows restore "
        f"{workflow.id[:8]})"
    )
    assert archived.changes.workflows == {workflow.id}
    with pytest.raises(TransitionError, match="archived; restore it first"):
        version_to_run(lib, workflow.id, version=1)
    restored = decide(lib, workflow.id, Decision.RESTORE, actor="reviewer", origin=Origin.WINDOW)
    assert restored.version.status is WorkflowStatus.DRAFT
    assert restored.summary == "'Create a contact' version 1 is a draft again"
