"""Review decisions — submit, approve, send back, restore, archive — and saving an edited draft,
one way for the command line, the Review screen, the Library and the step editor
(desktop_app/ops/review.py, ops/edit.py), over a real library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES

from desktop_app.app import Services, open_services
from desktop_app.core.editing import EditError
from desktop_app.core.errors import TransitionError
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.ops.changes import Origin
from desktop_app.ops.edit import save_draft
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


def test_saving_an_edited_draft_makes_the_next_version_once_and_never_a_broken_one(
    services: Services,
) -> None:
    workflow = _saved(services)
    lib = services.workflows
    edited = workflow.model_copy(update={"description": "Adds one contact"})
    saved = save_draft(lib, edited, actor="ann", origin=Origin.WINDOW, parent_version=1)
    assert (saved.created, saved.version.version) == (True, 2)
    assert saved.summary == "Saved version 2 of “Create a contact”"
    assert saved.changes.workflows == {workflow.id}
    again = save_draft(lib, edited, actor="ann", origin=Origin.WINDOW, parent_version=2)
    assert not again.created and again.changes.empty
    assert again.summary == "Nothing to save: same as version 2"
    # A step using a value nobody gives: the editor shows the error; saving refuses it.
    fill = edited.steps[1].model_copy(update={"value": "{nobody_gives_this}"})
    broken = edited.model_copy(update={"steps": (edited.steps[0], fill, *edited.steps[2:])})
    with pytest.raises(EditError, match="cannot save yet"):
        save_draft(lib, broken, actor="ann", origin=Origin.WINDOW, parent_version=2)
    assert lib.get(workflow.id).version == 2
