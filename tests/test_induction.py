"""Offline induction from the recorded demo-app fixtures."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, Cli

from desktop_app.core.documents import dump_document, load_trajectory, load_workflow
from desktop_app.core.induction.heuristic import Induction, induce
from desktop_app.core.induction.intent import bind_intent, make_intent_template
from desktop_app.core.induction.naming import snake_case, unique_name
from desktop_app.core.models import (
    ClickStep,
    FillStep,
    LocatorStrategy,
    ParameterType,
    PressStep,
    SelectStep,
    TextPresent,
    UrlMatches,
)

DATA = REPO / "tests" / "data"


def _induced(name: str) -> Induction:
    return induce(load_trajectory((DATA / f"{name}.trajectory.json").read_bytes()))


def test_create_contact() -> None:
    result = _induced("create-contact")
    wf = result.workflow
    assert wf.name == "Create a contact"
    assert [(p.name, p.type, p.default) for p in wf.parameters] == [
        ("username", ParameterType.TEXT, "demo"),
        ("password", ParameterType.SECRET, None),
        ("full_name", ParameterType.TEXT, "Jane Doe"),
        ("email", ParameterType.EMAIL, "jane@example.test"),
        ("company", ParameterType.CHOICE, "Globex"),
        ("subscribe_to_newsletter", ParameterType.BOOL, True),
    ]
    company = wf.parameter("company")
    assert company is not None and company.choices == (
        "Acme",
        "Globex",
        "Initech",
        "Umbrella",
        "Hooli",
    )
    assert len(wf.steps) == 10
    assert [s.title for s in wf.steps[1:4]] == [
        "Fill 'Username' with {username}",
        "Fill 'Password' with {password}",
        "Click 'Sign in'",
    ]
    save = wf.steps[-1]
    assert isinstance(save, ClickStep) and save.title == "Click 'Save'"
    assert TextPresent(text="Contact {full_name} created") in save.expectations
    assert UrlMatches(pattern="http://127.0.0.1:8765/contacts/*") in save.expectations
    assert not any(s.irreversible for s in wf.steps)  # saving a contact can be undone
    assert wf.domains == ("127.0.0.1",)
    assert wf.source_trajectories == (
        load_trajectory((DATA / "create-contact.trajectory.json").read_bytes()).id,
    )
    # the intent template binds a new sentence without an LLM
    assert wf.intent_template == "Create a contact for {full_name} at {company}"
    assert bind_intent(wf.intent_template, "create a contact for Ann Lee at Initech") == {
        "full_name": "Ann Lee",
        "company": "Initech",
    }
    # the workflow is a valid document: it round-trips through JSON
    assert load_workflow(dump_document(wf)) == wf
    assert "demo-pass" not in dump_document(wf)


def test_expense_report_flags_the_irreversible_submit() -> None:
    wf = _induced("expense-report").workflow
    irreversible = [s.title for s in wf.steps if s.irreversible]
    assert irreversible == ["Click 'Submit report'"]
    types = {p.name: p.type for p in wf.parameters}
    assert types["date"] is ParameterType.DATE
    assert types["category"] is ParameterType.CHOICE
    assert {"description", "description_2", "amount_usd", "amount_usd_2"} <= set(types)
    submit = next(s for s in wf.steps if s.irreversible)
    assert UrlMatches(pattern="http://127.0.0.1:8765/expenses/*/submitted") in submit.expectations


def test_a_value_typed_then_clicked_becomes_one_parameter() -> None:
    wf = _induced("open-contact").workflow
    assert [p.name for p in wf.parameters] == ["username", "password", "search_contacts"]
    search = [s for s in wf.steps if isinstance(s, FillStep)][-1]
    assert search.value == "{search_contacts}"
    press = next(s for s in wf.steps if isinstance(s, PressStep))
    assert press.key == "Enter"
    result = wf.steps[-1]
    assert isinstance(result, ClickStep) and result.title == "Click '{search_contacts}'"
    role = next(loc for loc in result.target.locators if loc.strategy is LocatorStrategy.ROLE)
    assert (role.value, role.name) == ("link", "{search_contacts}")
    assert wf.intent_template == "Open the contact of {search_contacts}"


def test_filter_orders_expectations_tolerate_other_values() -> None:
    wf = _induced("filter-orders").workflow
    status = wf.parameter("status")
    assert (
        status is not None and status.type is ParameterType.CHOICE and status.default == "Shipped"
    )
    select = next(s for s in wf.steps if isinstance(s, SelectStep))
    assert select.value == "{status}"
    urls = [e.pattern for s in wf.steps for e in s.expectations if isinstance(e, UrlMatches)]
    assert "http://127.0.0.1:8765/orders?*" in urls  # not ?status=shipped: other values go there
    assert wf.name == "Show the {status} orders"


def test_intent_templates_and_names() -> None:
    assert (
        make_intent_template("Book a flight to Paris", {"to": "Paris"}) == "Book a flight to {to}"
    )
    assert make_intent_template("Book a flight", {"to": "Paris"}) is None
    assert make_intent_template("Pay 5 {EUR}", {"amount": "5"}) is None  # too short to be sure
    assert bind_intent("Book a flight to {to}", "Book a hotel in Rome") is None
    assert snake_case("Full name *") == "full_name"
    assert snake_case("E-mail address") == "e_mail_address"
    assert snake_case("2nd line") == "p_2nd_line"
    assert snake_case("") == "value"
    assert unique_name("amount", ["amount", "amount_2"]) == "amount_3"


def test_induce_command_saves_a_draft(procedura: Cli) -> None:
    path = DATA / "create-contact.trajectory.json"
    trajectory_id = json.loads(path.read_text())["id"]
    assert procedura("trajectories", "import", str(path)).exit_code == 0
    result = procedura("induce", trajectory_id[:8])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("induced 'Create a contact' as ")
    assert "6 parameters, 10 steps" in result.stdout
    listed = json.loads(procedura("workflows", "list", "--json").stdout)
    assert [(w["name"], w["status"]) for w in listed] == [("Create a contact", "draft")]
    shown = procedura("workflows", "show", "Create a contact").stdout
    assert "intent:  Create a contact for {full_name} at {company}" in shown
    assert "expect: page shows “Contact {full_name} created”" in shown
    assert "password: secret" in shown
    history = json.loads(procedura("workflows", "show", "Create a contact", "--json").stdout)
    assert history["versions"][0]["change_note"] == f"induced from trajectory {trajectory_id[:8]}"


def test_induce_an_unknown_trajectory(procedura: Cli) -> None:
    result = procedura("induce", "ffffffff")
    assert result.exit_code == 2
    assert result.stderr == "error: no trajectory matches 'ffffffff'\n"


@pytest.mark.parametrize(
    "name", ["create-contact", "expense-report", "filter-orders", "open-contact"]
)
def test_every_fixture_induces_a_valid_workflow_without_notes(name: str) -> None:
    result = _induced(name)
    assert result.notes == []
    assert all(s.title for s in result.workflow.steps)
