"""The workflow and trajectory services over real SQLite and a real Chroma index."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories import full_trajectory, full_workflow

from desktop_app.app import Services, open_services
from desktop_app.core.errors import (
    AmbiguousReferenceError,
    ConfirmationRequired,
    DocumentError,
    NotFoundError,
    TransitionError,
)
from desktop_app.core.models import Parameter, WorkflowStatus
from desktop_app.core.models.workflow import FillStep, GotoStep, Workflow
from desktop_app.settings import load_settings

ACTOR = "ann"


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as services:
        yield services


def _wf(name: str, description: str, titles: tuple[str, ...], domain: str) -> Workflow:
    params = (Parameter(name="value"),)
    fill_target = full_workflow().steps[1].target  # type: ignore[union-attr]
    steps = (
        GotoStep(title="Open the site", url=f"https://{domain}/"),
        *(FillStep(title=t, target=fill_target, value="{value}") for t in titles),
    )
    return Workflow(
        name=name, description=description, domains=(domain,), parameters=params, steps=steps
    )


FLIGHT = _wf(
    "Book a flight",
    "Book airline tickets for a trip: choose origin, destination and dates, then pay.",
    ("Fill 'From' with {value}", "Fill 'To' with {value}", "Fill 'Departure date' with {value}"),
    "travel.example.test",
)
CAKE = _wf(
    "Bake a cake",
    "Look up a sponge cake recipe and add the ingredients to the shopping list.",
    ("Fill 'Recipe' with {value}", "Fill 'Servings' with {value}"),
    "recipes.example.test",
)
INVOICE = _wf(
    "Send an invoice",
    "Create an invoice for a customer in the billing system and email it to them.",
    ("Fill 'Customer' with {value}", "Fill 'Amount' with {value}"),
    "billing.example.test",
)


def test_save_creates_versions_and_skips_identical_content(services: Services) -> None:
    lib = services.workflows
    first = lib.save(FLIGHT, actor=ACTOR)
    assert first.created and first.version.version == 1
    assert first.version.status is WorkflowStatus.DRAFT
    again = lib.save(FLIGHT, actor=ACTOR)
    assert not again.created and again.version.version == 1
    second = lib.save(FLIGHT.model_copy(update={"description": "Cheaper flights."}), actor=ACTOR)
    assert second.version.version == 2 and second.version.parent_version == 1
    assert lib.get(FLIGHT.id, 1).workflow.description.startswith("Book airline")
    assert lib.count() == (1, 2)


def test_review_flow_and_the_version_that_runs(services: Services) -> None:
    lib = services.workflows
    lib.save(FLIGHT, actor=ACTOR)
    with pytest.raises(TransitionError, match="no approved version"):
        lib.runnable("Book a flight")
    lib.submit("book a flight", actor=ACTOR)
    with pytest.raises(TransitionError, match="comment is required"):
        lib.request_changes(FLIGHT.id, actor="bo", comment=" ")
    lib.request_changes(FLIGHT.id, actor="bo", comment="Name the dates")
    lib.submit(FLIGHT.id, actor=ACTOR)
    lib.approve(FLIGHT.id, actor="bo", comment="ok")
    with pytest.raises(TransitionError, match="is approved; it cannot become approved"):
        lib.approve(FLIGHT.id, actor="bo")
    lib.save(FLIGHT.model_copy(update={"name": "Book a flight (v2)"}), actor=ACTOR)
    assert lib.runnable(FLIGHT.id).version == 1  # the new draft does not run until approved
    history = [(t.from_status, t.to_status, t.actor) for t in lib.get(FLIGHT.id, 1).transitions]
    assert history == [
        (None, WorkflowStatus.DRAFT, ACTOR),
        (WorkflowStatus.DRAFT, WorkflowStatus.IN_REVIEW, ACTOR),
        (WorkflowStatus.IN_REVIEW, WorkflowStatus.DRAFT, "bo"),
        (WorkflowStatus.DRAFT, WorkflowStatus.IN_REVIEW, ACTOR),
        (WorkflowStatus.IN_REVIEW, WorkflowStatus.APPROVED, "bo"),
    ]


def test_archive_hides_and_restore_brings_back(services: Services) -> None:
    lib = services.workflows
    lib.save(FLIGHT, actor=ACTOR)
    lib.approve(FLIGHT.id, actor=ACTOR)
    lib.save(CAKE, actor=ACTOR)
    lib.archive(FLIGHT.id, actor=ACTOR, comment="trip cancelled")
    assert [s.name for s in lib.list()] == ["Bake a cake"]
    assert [s.name for s in lib.list(status=WorkflowStatus.ARCHIVED)] == ["Book a flight"]
    assert lib.search("reserve airline tickets", limit=5)[0].workflow.name == "Bake a cake"
    with pytest.raises(TransitionError, match="already archived"):
        lib.archive(FLIGHT.id, actor=ACTOR)
    restored = lib.restore(FLIGHT.id, actor=ACTOR)
    assert restored.status is WorkflowStatus.DRAFT
    assert lib.search("reserve airline tickets")[0].workflow.name == "Book a flight"


def test_semantic_search_ranks_a_paraphrase_first(services: Services) -> None:
    lib = services.workflows
    for wf in (CAKE, FLIGHT, INVOICE):
        lib.save(wf, actor=ACTOR)
    results = lib.search("reserve airline tickets")
    names = [m.workflow.name for m in results]
    assert names[0] == "Book a flight"
    assert names.index("Book a flight") < names.index("Bake a cake")
    assert results[0].score > results[-1].score
    assert lib.search("bill a client")[0].workflow.name == "Send an invoice"
    assert lib.search("what can I cook for dessert")[0].workflow.name == "Bake a cake"


def test_search_filters_by_status_and_domain(services: Services) -> None:
    lib = services.workflows
    for wf in (CAKE, FLIGHT, INVOICE):
        lib.save(wf, actor=ACTOR)
    lib.approve(INVOICE.id, actor=ACTOR)
    approved = lib.search("reserve airline tickets", status=WorkflowStatus.APPROVED)
    assert [m.workflow.name for m in approved] == ["Send an invoice"]
    by_domain = lib.search("reserve airline tickets", domain="recipes.example.test")
    assert [m.workflow.name for m in by_domain] == ["Bake a cake"]
    assert [s.name for s in lib.list(domain="example.test")] == [
        "Send an invoice",
        "Book a flight",
        "Bake a cake",
    ]


def test_reindex_rebuilds_a_lost_index(home: Path) -> None:
    with open_services(load_settings(), write=True) as services:
        for wf in (CAKE, FLIGHT, INVOICE):
            services.workflows.save(wf, actor=ACTOR)
    shutil.rmtree(home / "index")
    with open_services(load_settings(), write=True) as services:
        # The word index lives in the database: a workflow holding every word of the query is
        # still found (one holding some of them is not: only the embedding could place it).
        found = services.workflows.search("airline tickets")
        assert [(m.workflow.name, m.score) for m in found] == [("Book a flight", 0.0)]
        assert services.workflows.search("reserve airline tickets") == []
        assert services.workflows.reindex() == (3, 0)
        assert (
            services.workflows.search("reserve airline tickets")[0].workflow.name == "Book a flight"
        )
        assert services.workflows.index.count() == (3, 0)


def test_references_by_prefix_and_name(services: Services) -> None:
    lib = services.workflows
    a = lib.save(FLIGHT.model_copy(update={"id": "abcd1111"}), actor=ACTOR).version
    lib.save(CAKE.model_copy(update={"id": "abcd2222"}), actor=ACTOR)
    assert lib.get("abcd1").workflow_id == a.workflow_id
    assert lib.get("BOOK A FLIGHT").workflow_id == a.workflow_id
    with pytest.raises(AmbiguousReferenceError, match="matches 2 workflows"):
        lib.get("abcd")
    with pytest.raises(NotFoundError, match="did you mean 'Book a flight'"):
        lib.get("Book a flite")


def test_delete_needs_confirmation(services: Services) -> None:
    lib = services.workflows
    lib.save(FLIGHT, actor=ACTOR)
    with pytest.raises(ConfirmationRequired, match="removes its 1 version"):
        lib.delete(FLIGHT.id, confirmed=False)
    assert lib.count() == (1, 1)
    lib.delete(FLIGHT.id, confirmed=True)
    assert lib.count() == (0, 0)
    assert lib.search("reserve airline tickets") == []


def test_pinned_workflows_come_first(services: Services) -> None:
    lib = services.workflows
    lib.save(FLIGHT, actor=ACTOR)
    lib.save(CAKE, actor=ACTOR)
    assert lib.list()[0].name == "Bake a cake"
    lib.set_pinned(FLIGHT.id, True)
    assert [s.name for s in lib.list()] == ["Book a flight", "Bake a cake"]


def test_import_is_all_or_nothing(services: Services) -> None:
    lib = services.workflows
    bad = full_workflow().model_dump_json().replace('"{user}"', '"{usr}"', 1)
    with pytest.raises(DocumentError, match=r"\{usr\}"):
        lib.import_json(bad, actor=ACTOR, source="bad.json")
    assert lib.count() == (0, 0)
    result = lib.import_json(full_workflow().model_dump_json(), actor=ACTOR, source="ok.json")
    assert result.version.change_note == "imported from ok.json"
    assert result.version.status is WorkflowStatus.DRAFT


def test_trajectories_are_never_overwritten(services: Services) -> None:
    lib = services.trajectories
    t = full_trajectory()
    lib.import_json(t.model_dump_json(), source="t.json")
    with pytest.raises(DocumentError, match="never overwritten"):
        lib.import_json(t.model_dump_json(), source="t.json")
    assert lib.get(t.id[:6]) == t
    with pytest.raises(ConfirmationRequired):
        lib.delete(t.id, confirmed=False)
    lib.delete(t.id, confirmed=True)
    assert lib.list() == []
