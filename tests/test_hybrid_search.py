"""Search by meaning and by words, fused: over real SQLite (FTS5) and a real Chroma index."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import full_workflow
from sqlalchemy import text

from desktop_app.adapters.search.hybrid_index import HybridSearchIndex
from desktop_app.adapters.sql.database import (
    HEAD_REVISION,
    current_revision,
    migrate,
    open_database,
)
from desktop_app.adapters.sql.index_queue import SqlIndexQueue
from desktop_app.adapters.sql.text_index import SqlTextIndex, query_words
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
from desktop_app.app import Services, open_services
from desktop_app.core.fusion import reciprocal_rank_fusion
from desktop_app.core.models import Parameter, ParameterType, WorkflowStatus
from desktop_app.core.models.workflow import (
    FillStep,
    GotoStep,
    StatusTransition,
    Workflow,
    WorkflowVersion,
)
from desktop_app.core.views import IndexedWorkflow
from desktop_app.settings import load_settings

ACTOR = "ann"
_FIELD = full_workflow().steps[1].target  # type: ignore[union-attr]


def _word_ids(index: SqlTextIndex | HybridSearchIndex, query: str, **filters: Any) -> list[str]:
    """The ids of the workflows the word index finds for *query* (every word it knows)."""
    return [h.id for h in index.search_workflows_every_word(query, **filters).hits]


def _wf(name: str, description: str, fields: tuple[str, ...], domain: str) -> Workflow:
    return Workflow(
        name=name,
        description=description,
        domains=(domain,),
        parameters=(Parameter(name="value"),),
        steps=(
            GotoStep(title="Open the site", url=f"https://{domain}/"),
            *(
                FillStep(title=f"Fill '{f}' with {{value}}", target=_FIELD, value="{value}")
                for f in fields
            ),
        ),
    )


# The rare word "Kennitala" is in one step title of one workflow, nowhere else.
SUPPLIER = _wf(
    "Onboard a supplier",
    "Creates a supplier account in the purchasing system with its bank details and contacts.",
    ("Company name", "Street", "City", "Kennitala", "IBAN", "Contact email", "Phone"),
    "erp.example.test",
)
OTHERS = (
    _wf(
        "Look up a national identity number",
        "Finds the national ID number of a person in the population register of an office.",
        ("Name",),
        "gov.example.test",
    ),
    _wf(
        "Verify an identity card",
        "Checks that an ID card of a visitor is valid.",
        ("Card number",),
        "id.example.test",
    ),
    _wf(
        "Record shipping terms on an order",
        "Sets the delivery terms of a purchase order.",
        ("Order",),
        "erp.example.test",
    ),
    _wf(
        "Register a citizen",
        "Adds a resident of the country to the national registry.",
        ("Name",),
        "gov.example.test",
    ),
    _wf(
        "Renew a passport",
        "Applies for a new passport of a citizen.",
        ("Name",),
        "gov.example.test",
    ),
)
FLIGHT = _wf(
    "Book a flight",
    "Book airline tickets for a trip: choose origin, destination and dates.",
    ("From", "To", "Departure date"),
    "travel.example.test",
)


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as services:
        yield services


def _index(services: Services) -> HybridSearchIndex:
    index = services.workflows.index
    assert isinstance(index, HybridSearchIndex)
    return index


def _names(services: Services, query: str, **filters: object) -> list[str]:
    return [m.workflow.name for m in services.workflows.search(query, limit=6, **filters)]  # type: ignore[arg-type]


# ── fusion (pure) ───────────────────────────────────────────────────────────────────────────


def test_reciprocal_rank_fusion_rewards_agreement_and_keeps_ties_stable() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "b", "d", "b"]])
    assert [item for item, _ in fused] == ["c", "b", "a", "d"]  # 1/63 + 1/61 > 2/62
    assert dict(fused)["b"] == pytest.approx(1 / 62 + 1 / 62)
    assert dict(fused)["a"] == pytest.approx(1 / 61)
    assert [i for i, _ in reciprocal_rank_fusion([["x"], ["y"]])] == ["x", "y"]  # a tie
    assert reciprocal_rank_fusion([]) == []
    with pytest.raises(ValueError, match="k must be"):
        reciprocal_rank_fusion([["a"]], k=-1)


# ── what is indexed ─────────────────────────────────────────────────────────────────────────


def test_the_indexed_text_says_what_a_workflow_asks_for_in_words() -> None:
    workflow = full_workflow().model_copy(
        update={
            "parameters": (
                Parameter(name="full_name", description="The person's legal name"),
                Parameter(
                    name="plan", type=ParameterType.CHOICE, choices=("free", "pro"), default="pro"
                ),
                Parameter(name="seats", type=ParameterType.NUMBER, default=0),
                Parameter(name="password", type=ParameterType.SECRET, description="Their login"),
            ),
            "intent_template": "Sign {full_name} up for the {plan} plan",
        }
    )
    indexed = IndexedWorkflow.of(workflow, WorkflowStatus.DRAFT).text()
    assert "Sign full name up for the plan plan" in indexed
    assert "full name (The person's legal name)" in indexed
    assert "plan one of free, pro e.g. pro" in indexed
    assert "seats e.g. 0" in indexed
    assert "password (Their login)" in indexed
    assert "Fill 'Email' with user" in indexed  # a step title's placeholder in words
    assert "Sites: app.example.test" in indexed
    assert "{" not in indexed and "_" not in indexed


def test_only_the_name_and_description_are_embedded() -> None:
    indexed = IndexedWorkflow.of(SUPPLIER, WorkflowStatus.DRAFT)
    assert indexed.embedding_text() == f"{SUPPLIER.name}\n{SUPPLIER.description}"
    assert "Kennitala" in indexed.text()  # the word index holds the steps too


# ── ranking ─────────────────────────────────────────────────────────────────────────────────


def test_a_rare_word_only_in_a_step_title_finds_its_workflow_first(services: Services) -> None:
    for workflow in (*OTHERS, SUPPLIER):
        services.workflows.save(workflow, actor=ACTOR)
    query = "kennitala of an immigrant"
    index = _index(services)
    by_meaning = [h.id for h in index.search_workflows(query, limit=6)]
    assert by_meaning[0] != SUPPLIER.id  # the embedding alone misses it ...
    by_words = [h.id for h in index.search_workflows_every_word(query, limit=6).hits]
    assert by_words[0] == SUPPLIER.id  # ... the word index has it first ...
    assert _names(services, query)[0] == "Onboard a supplier"  # ... and so has the search


def test_words_several_workflows_hold_leave_the_embedding_order(services: Services) -> None:
    for workflow in (*OTHERS, SUPPLIER):
        services.workflows.save(workflow, actor=ACTOR)
    query = "national register"  # in two workflows' texts: near misses, not decisive
    assert len(_index(services).search_workflows_every_word(query).hits) == 2
    by_meaning = [h.id for h in _index(services).search_workflows(query, limit=6)]
    assert [m.workflow.id for m in services.workflows.search(query, limit=6)] == by_meaning


def test_every_word_matches_leave_out_words_no_workflow_holds(services: Services) -> None:
    for workflow in (*OTHERS, SUPPLIER):
        services.workflows.save(workflow, actor=ACTOR)
    every = _index(services).search_workflows_every_word
    found = every("kennitala of an immigrant")  # "immigrant" is in no workflow
    assert [h.id for h in found.hits] == [SUPPLIER.id] and not found.complete
    found = every("Kennitala and IBAN")
    assert [h.id for h in found.hits] == [SUPPLIER.id] and found.complete
    assert every("kennitala passport").hits == ()  # no workflow holds both
    assert every("zebra quokka") == every("the of") == every("kennitala", limit=0)
    assert not every("zebra quokka").complete


@pytest.mark.parametrize(
    "query",
    [
        '"book flight',
        "flight*",
        "-flight",
        "flight AND",
        "AND",
        "(flight",
        "flight) OR (",
        "NEAR(flight tickets)",
        "body: flight",
        "^flight",
        "*",
        '""',
        "+",
        "flight's — “tickets”",
        "Réservation d’un vol ✈ flight",
    ],
)
def test_no_query_is_a_syntax_error(services: Services, query: str) -> None:
    services.workflows.save(FLIGHT, actor=ACTOR)
    services.workflows.save(OTHERS[0], actor=ACTOR)
    words = _index(services).search_workflows_every_word(query, limit=5).hits
    found = _names(services, query)
    if "flight" in query.lower():
        assert [h.id for h in words][:1] == [FLIGHT.id]
        assert found[0] == "Book a flight"
    else:  # a word of FTS5 syntax is a word like another ("and" is in FLIGHT's description)
        assert all(h.id in {FLIGHT.id, OTHERS[0].id} for h in words)


def test_queries_are_words_or_nothing() -> None:
    assert query_words('Book "a" flight* -NOW (AND)') == ["book", "flight", "now"]
    assert query_words("full_name") == ["full", "name"]
    assert query_words(" *-()\"' ") == []
    assert query_words("the AND of") == []  # function words only


def test_words_are_stemmed_and_diacritics_folded(services: Services) -> None:
    services.workflows.save(
        _wf(
            "Submit an expense report",
            "Files a reimbursement claim for a résumé workshop.",
            ("Amount",),
            "hr.example.test",
        ),
        actor=ACTOR,
    )
    services.workflows.save(FLIGHT, actor=ACTOR)
    index = _index(services)
    for query in ("reimbursed", "claims", "resume", "REPORTS"):
        assert _word_ids(index, query, limit=5) != [], query
    assert _word_ids(index, "reimbursed", limit=5)[0] != FLIGHT.id


# ── filters ─────────────────────────────────────────────────────────────────────────────────


def test_status_domain_and_archived_hold_in_hybrid_results(services: Services) -> None:
    lib = services.workflows
    approved = _wf("Pay a supplier invoice", "Pays an invoice.", ("Invoice",), "erp.example.test")
    draft = _wf(
        "Draft a supplier invoice", "Writes an invoice.", ("Invoice",), "billing.example.test"
    )
    archived = _wf(
        "Archive a supplier invoice", "Files an invoice.", ("Invoice",), "erp.example.test"
    )
    for workflow in (approved, draft, archived):
        lib.save(workflow, actor=ACTOR)
    lib.approve(approved.id, actor=ACTOR)
    lib.archive(archived.id, actor=ACTOR)
    index = _index(services)

    assert set(_names(services, "supplier invoice")) == {
        "Pay a supplier invoice",
        "Draft a supplier invoice",
    }
    assert _names(services, "supplier invoice", status=WorkflowStatus.APPROVED) == [
        "Pay a supplier invoice"
    ]
    assert _names(services, "supplier invoice", status=WorkflowStatus.ARCHIVED) == [
        "Archive a supplier invoice"
    ]
    assert _names(services, "supplier invoice", domain="billing.example.test") == [
        "Draft a supplier invoice"
    ]
    assert _names(services, "invoice", status=WorkflowStatus.DRAFT, domain="ERP.example.test") == []

    # The word index itself filters the same way.
    assert _word_ids(index, "invoice", status=WorkflowStatus.APPROVED) == [approved.id]
    assert _word_ids(index, "invoice", domain="billing.example.test") == [draft.id]
    assert set(_word_ids(index, "invoice", domain="erp.example.test")) == {
        approved.id,
        archived.id,
    }
    assert _word_ids(index, "invoice", status=WorkflowStatus.ARCHIVED) == [archived.id]

    lib.delete(draft.id, confirmed=True)
    assert _word_ids(index, "invoice", domain="billing.example.test") == []
    assert "Draft a supplier invoice" not in _names(services, "supplier invoice")


# ── keeping in step ─────────────────────────────────────────────────────────────────────────


def test_reindex_and_check_keep_the_word_index_in_step(services: Services) -> None:
    lib = services.workflows
    lib.save(FLIGHT, actor=ACTOR)
    lib.save(OTHERS[1], actor=ACTOR)
    index = _index(services)
    index.lexical.remove_workflow(FLIGHT.id)  # the word index lost one, the embedding did not
    report = lib.check_index(fix=False)
    assert FLIGHT.id in report.stale + report.missing
    lib.check_index(fix=True)
    assert _word_ids(index, "airline", limit=5) == [FLIGHT.id]
    assert lib.check_index(fix=False).stale == ()

    index.lexical.clear()
    assert lib.reindex() == (2, 0)
    assert index.lexical.count() == 2
    assert _word_ids(index, "airline", limit=5) == [FLIGHT.id]


def _version(workflow: Workflow, status: WorkflowStatus) -> WorkflowVersion:
    return WorkflowVersion(
        workflow=workflow,
        status=status,
        created_by=ACTOR,
        transitions=(StatusTransition(from_status=None, to_status=status, actor=ACTOR),),
    )


def test_a_migrated_database_gets_its_word_index_filled(home: Path) -> None:
    settings = load_settings()
    engine = open_database(settings.database_path)
    migrate(engine, "0005")  # the schema before the word index
    store = SqlWorkflowStore(engine)
    store.add_version(_version(SUPPLIER, WorkflowStatus.APPROVED))
    store.add_version(_version(FLIGHT, WorkflowStatus.ARCHIVED))
    SqlIndexQueue(engine).done("workflow", [SUPPLIER.id, FLIGHT.id])  # indexed back then

    migrate(engine)

    assert current_revision(engine) == HEAD_REVISION
    words = SqlTextIndex(engine)
    assert words.entries() == {
        SUPPLIER.id: (1, WorkflowStatus.APPROVED),
        FLIGHT.id: (1, WorkflowStatus.ARCHIVED),
    }
    assert _word_ids(words, "kennitala") == [SUPPLIER.id]
    assert _word_ids(words, "airline", status=WorkflowStatus.APPROVED) == []
    # The embedded text changed too (name and description only): every workflow is marked
    # for re-indexing ...
    assert sorted(SqlIndexQueue(engine).pending()) == sorted(
        [("workflow", SUPPLIER.id), ("workflow", FLIGHT.id)]
    )
    engine.dispose()
    # ... which the next writer does, in both halves.
    with open_services(settings, write=True) as services:
        assert services.index_queue.pending() == []
        assert services.workflows.search("kennitala")[0].workflow.id == SUPPLIER.id
        assert [m.workflow.id for m in services.workflows.search("airline tickets")] != [FLIGHT.id]


# ── secrets ─────────────────────────────────────────────────────────────────────────────────

PLANTED = ("hunter2", "ghpzz4471", "sesame77")


def test_secrets_never_reach_the_word_index(services: Services) -> None:
    workflow = full_workflow(
        name="Log in with password hunter2", description="Signs in; the token: ghpzz4471 is set"
    ).model_copy(
        update={
            "parameters": (
                Parameter(name="user", description="Who signs in (password is sesame77)"),
                Parameter(
                    name="realm",
                    type=ParameterType.CHOICE,
                    choices=("eu", "pin: sesame77"),
                ),
                Parameter(name="note", default="token=ghpzz4471"),
                Parameter(name="password", type=ParameterType.SECRET, description="The login"),
            ),
            "intent_template": "Sign {user} in with password hunter2",
            "steps": (
                GotoStep(title="Open the sign-in page", url="https://app.example.test/login"),
            ),
        }
    )
    saved = services.workflows.save(workflow, actor=ACTOR).version.workflow
    words = _index(services).lexical
    indexed = words.text_of(saved.id)
    assert indexed is not None and "Who signs in" in indexed  # the scan looks at real text
    with services.engine.connect() as conn:
        conn.execute(
            text("CREATE VIRTUAL TABLE temp.vocabulary USING fts5vocab(main, text_index, row)")
        )
        vocabulary = {str(term) for (term,) in conn.execute(text("SELECT term FROM vocabulary"))}
    assert "sign" in vocabulary
    for secret in PLANTED:
        assert secret not in indexed
        assert secret not in vocabulary
        assert _word_ids(words, secret) == []
    stored = json.dumps(words.entries())
    assert not any(secret in stored for secret in PLANTED)
