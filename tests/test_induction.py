"""Offline induction from the recorded demo-app fixtures."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from conftest import REPO, Cli
from factories import T0

from desktop_app.core.documents import dump_document, load_trajectory, load_workflow
from desktop_app.core.induction.heuristic import Induction, induce
from desktop_app.core.induction.intent import bind_intent, make_intent_template
from desktop_app.core.induction.llm_inducer import (
    InductionPlan,
    ParameterPlan,
    StepPlan,
    induce_with_llm,
)
from desktop_app.core.induction.naming import snake_case, unique_name
from desktop_app.core.llm import LLMUsage
from desktop_app.core.models import (
    ActionKind,
    CheckStep,
    ClickStep,
    Effects,
    ElementHidden,
    Event,
    FillStep,
    Fingerprint,
    ItemContext,
    ItemScope,
    Locator,
    LocatorStrategy,
    Observation,
    ParameterType,
    PressStep,
    SelectStep,
    Target,
    TextChange,
    TextPresent,
    Trajectory,
    UrlMatches,
)

DATA = REPO / "tests" / "data"
NO_SUCCESS = (
    "no success check could be induced: runs will end 'done, unverified' until one is added "
    "in the editor"
)


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
    # the step checks what it did; the outcome is the workflow's success check
    assert save.expectations == (
        TextPresent(text="Contact {full_name} created"),
        UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
    )
    assert wf.success == (
        TextPresent(text="{full_name}"),  # the new record's heading (the message may go)
        UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
    )
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
    assert submit.expectations == (
        UrlMatches(pattern="http://127.0.0.1:8765/expenses/*/submitted"),
    )
    # the page's own "Signed in as demo" holds a value too, but not the task's: the report does
    assert wf.success == (
        TextPresent(text="“{report_title}” has been sent to Finance for approval."),
        UrlMatches(pattern="http://127.0.0.1:8765/expenses/*/submitted"),
    )


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
    assert wf.success == (
        TextPresent(text="{search_contacts}"),
        UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
    )


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
    # "orders" in the intent does not name the Orders link every page shows
    assert [p.name for p in wf.parameters] == ["username", "password", "status"]
    # the end showed "Shipped" only as the option chosen, and the address alone proves little
    # A task that only looks something up: where it leads is its outcome (the chosen option's
    # own spelling in the address is left open, the page number kept).
    assert wf.success == (
        UrlMatches(pattern="http://127.0.0.1:8765/orders?status=*&page=2", match="glob"),
    )


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
    assert load_workflow(dump_document(result.workflow)) == result.workflow


# ── binding a sentence ─────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("sentence", "bound"),
    [
        (
            "create a contact for  Ann Lee, at Initech",
            {"full_name": "Ann Lee", "company": "Initech"},
        ),
        (
            "Create a contact for Ann Lee at Initech.",
            {"full_name": "Ann Lee", "company": "Initech"},
        ),
        (
            "CREATE A CONTACT FOR “Seán O'Brien” AT ‘Initech’!",
            {"full_name": "Seán O'Brien", "company": "Initech"},
        ),
        (
            "  Create a contact for 'Ann-Marie Lee' at \"a.b@c.test\"  ",
            {"full_name": "Ann-Marie Lee", "company": "a.b@c.test"},
        ),
        ("Create a contact for Pat at Acme Pat", {"full_name": "Pat", "company": "Acme Pat"}),
    ],
)
def test_a_sentence_binds_whatever_its_case_spaces_and_punctuation(
    sentence: str, bound: dict[str, str]
) -> None:
    template = "Create a contact for {full_name} at {company}."
    assert bind_intent(template, sentence) == bound


@pytest.mark.parametrize(
    "sentence",
    [
        "Create a contact for Ann Lee",  # no company
        "Create a contactfor Ann Lee at Initech",  # words run together are other words
        "Create a contact for , at Initech",  # an empty value
        "Delete the contact Ann Lee at Initech",
    ],
)
def test_a_sentence_of_another_shape_does_not_bind(sentence: str) -> None:
    assert bind_intent("Create a contact for {full_name} at {company}.", sentence) is None


def test_the_templates_punctuation_tells_values_side_by_side_apart() -> None:
    template = "Add the contact {name} ({email}, {phone}) at {company}"
    said = "add the contact Bo Ek (bo.ek@x.test, +46 8 555 01) at Initech Systems."
    assert bind_intent(template, said) == {
        "name": "Bo Ek",
        "email": "bo.ek@x.test",
        "phone": "+46 8 555 01",
        "company": "Initech Systems",
    }
    # other punctuation still tells them apart; none at all cannot: no guess
    other = "Add the contact Bo Ek, bo.ek@x.test; +46 8 555 01, at Initech Systems"
    assert bind_intent(template, other) == bind_intent(template, said)
    assert bind_intent(template, "Add the contact Bo Ek bo.ek@x.test +46 8 at Acme") is None


def test_quotes_around_a_slot_are_not_part_of_its_value() -> None:
    template = "Click the '{button}' button"
    for sentence in (
        "click the Send button",
        "Click the “Send” button.",
        'click the "Send" button',
    ):
        assert bind_intent(template, sentence) == {"button": "Send"}


# ── trajectories built here ────────────────────────────────────────────────────────────────


def _ev(ms: int, action: ActionKind, target: Target | None = None, **kw: Any) -> Event:
    return Event.model_validate(
        {"action": action, "at": T0 + timedelta(milliseconds=ms), "target": target, **kw}
    )


def _page(url: str, title: str | None = None, snapshot: str | None = None) -> Observation:
    return Observation(url=url, title=title, aria_snapshot=snapshot)


def _field(name: str) -> Target:
    return Target(
        locators=(
            Locator(strategy=LocatorStrategy.ROLE, value="textbox", name=name),
            Locator(strategy=LocatorStrategy.LABEL, value=name),
        ),
        fingerprint=Fingerprint(tag="input", role="textbox", name=name),
    )


def _control(
    role: str, name: str, *extra: Locator, ancestors: tuple[str, ...] = ("main",)
) -> Target:
    return Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value=role, name=name), *extra),
        fingerprint=Fingerprint(tag="button", role=role, name=name, ancestors=ancestors),
    )


def _shown(*texts: tuple[str, str | None], removed: tuple[str, ...] = (), **kw: Any) -> Effects:
    return Effects(
        texts_added=tuple(TextChange(text=t, role=r) for t, r in texts),  # type: ignore[arg-type]
        texts_removed=tuple(TextChange(text=t, role="item") for t in removed),
        settled=True,
        **kw,
    )


def _induce(intent: str, *events: Event) -> Induction:
    return induce(Trajectory(intent=intent, started_at=T0, events=events))


def _locators(step: Any) -> dict[str, Locator]:
    return {loc.strategy.value: loc for loc in step.target.locators}


# ── labels the intent names ────────────────────────────────────────────────────────────────


def test_a_quoted_button_label_becomes_a_parameter() -> None:
    submit = _control(
        "button",
        "Submit",
        Locator(strategy=LocatorStrategy.TEXT, value="Submit"),
        Locator(strategy=LocatorStrategy.CSS, value='button[aria-label="Submit"]'),
        Locator(strategy=LocatorStrategy.TEST_ID, value="submit"),
    )
    at = _page("http://x.test/feedback")
    result = _induce(
        "Click the 'Submit' button on the feedback form",
        _ev(0, ActionKind.NAVIGATE, url="http://x.test/feedback", after=at),
        _ev(500, ActionKind.CLICK, submit, before=at, after=at, effects=_shown(("Thanks!", None))),
    )
    wf = result.workflow
    assert [(p.name, p.type, p.default) for p in wf.parameters] == [
        ("button", ParameterType.TEXT, "Submit")
    ]
    click = wf.steps[-1]
    assert click.title == "Click '{button}'"
    found = _locators(click)
    assert found["role"].name == "{button}" and found["text"].value == "{button}"
    assert found["css"].value == 'button[aria-label="{button}"]'
    assert found["test_id"].value == "submit"  # not the label as a whole
    assert wf.intent_template == "Click the '{button}' button on the feedback form"
    assert bind_intent(wf.intent_template, "click the “Send” button on the feedback form") == {
        "button": "Send"
    }


def test_a_tab_named_in_the_intent_is_a_choice_of_the_tabs_recorded() -> None:
    tabs = (
        '- tablist "Sections":\n  - tab "Overview" [selected]\n  - tab "Reports"\n'
        '  - tab "Settings"'
    )
    before = _page("http://x.test/app#/overview", snapshot=tabs)
    after = _page("http://x.test/app#/reports")
    wf = _induce(
        "Open the Reports tab",
        _ev(0, ActionKind.CLICK, _control("tab", "Reports"), before=before, after=after),
    ).workflow
    tab = wf.parameter("tab")
    assert tab is not None and (tab.type, tab.default) == (ParameterType.CHOICE, "Reports")
    assert tab.choices == ("Overview", "Reports", "Settings")
    assert wf.intent_template == "Open the {tab} tab"
    assert _locators(wf.steps[0])["role"].name == "{tab}"


def test_an_option_of_a_custom_list_is_named_after_what_it_sets() -> None:
    listbox = '- listbox "Status":\n  - option "Lead"\n  - option "Customer"\n  - option "Churned"'
    at = _page("http://x.test/contacts/7", snapshot=listbox)
    wf = _induce(
        "Set the status to Customer",
        _ev(0, ActionKind.CLICK, _control("combobox", "Status"), before=at, after=at),
        _ev(400, ActionKind.CLICK, _control("option", "Customer"), before=at, after=at),
    ).workflow
    assert [(p.name, p.type, p.default, p.choices) for p in wf.parameters] == [
        ("status", ParameterType.CHOICE, "Customer", ("Lead", "Customer", "Churned"))
    ]
    assert [s.title for s in wf.steps] == ["Click 'Status'", "Click '{status}'"]
    assert wf.intent_template == "Set the status to {status}"


def test_the_item_a_control_sits_in_is_named_and_its_removal_checked() -> None:
    scope = ItemScope(css="li", text="Buy milk")
    delete = Target(
        locators=(
            Locator(strategy=LocatorStrategy.ROLE, value="button", name="Delete", within=scope),
            Locator(strategy=LocatorStrategy.CSS, value="button.destroy", within=scope),
        ),
        fingerprint=Fingerprint(tag="button", role="button", name="Delete"),
    )
    at = _page("http://todo.test/#/")
    gone = _shown(("Buy milk deleted", "status"), removed=("Buy milk",), items_removed=1)
    wf = _induce(
        "Delete the to-do Buy milk",  # "Delete", the verb, names no button
        _ev(0, ActionKind.NAVIGATE, url="http://todo.test/#/", after=at),
        _ev(600, ActionKind.CLICK, delete, before=at, after=at, effects=gone),
    ).workflow
    assert [(p.name, p.default) for p in wf.parameters] == [("to_do", "Buy milk")]
    click = wf.steps[-1]
    assert click.title == "Click 'Delete' in '{to_do}'"
    assert {loc.within.text for loc in click.target.locators if loc.within} == {"{to_do}"}
    assert wf.intent_template == "Delete the to-do {to_do}"
    assert click.expectations == (TextPresent(text="{to_do} deleted"),)
    absent = Locator(strategy=LocatorStrategy.TEXT, value="{to_do}", exact=True)
    assert wf.success == (
        TextPresent(text="{to_do} deleted"),
        ElementHidden(target=Target(locators=(absent,))),
    )


@pytest.mark.parametrize(
    ("intent", "named"),
    [
        ("Open the Orders page", ["page"]),  # a word says what it is
        ("Open the 'Orders'", ["link"]),  # quoted; named after what it is
        ("Show the orders", []),  # a common word, not the link
        ("Look at Orders", []),  # every page shows it: written as it is is not enough
    ],
)
def test_a_navigation_label_is_a_parameter_only_when_the_intent_really_names_it(
    intent: str, named: list[str]
) -> None:
    nav = _control("link", "Orders", ancestors=("li", "ul.topnav-list", "nav.topnav"))
    before, after = _page("http://x.test/home"), _page("http://x.test/orders")
    wf = _induce(intent, _ev(0, ActionKind.CLICK, nav, before=before, after=after)).workflow
    assert [p.name for p in wf.parameters] == named


@pytest.mark.parametrize(
    ("intent", "label", "named"),
    [
        ("Submit the report", "Submit", False),  # the sentence's verb, not the button
        ("Apply the filter", "Filter", False),  # not written as the label is
        ("Show the Customers", "Customers list", False),  # not the whole label
        ("Show the Customers", "Custom", False),  # not inside a word
        ("Show the Customers", "Customers", True),
        ("Print it as PDF", "PDF", True),
    ],
)
def test_a_label_is_named_only_whole_as_whole_words_written_as_it_is(
    intent: str, label: str, named: bool
) -> None:
    at = _page("http://x.test/report")
    button = _control("button", label)
    wf = _induce(intent, _ev(0, ActionKind.CLICK, button, before=at, after=at)).workflow
    assert [(p.name, p.default) for p in wf.parameters] == ([("button", label)] if named else [])


# ── templating by whole values ─────────────────────────────────────────────────────────────


def test_a_user_name_that_is_part_of_the_sites_addresses_stays_out_of_them() -> None:
    login = "http://shop.test/admin/login/?next=/admin/"
    at = _page(login, "Log in | Site administration")
    home = _page("http://shop.test/admin/", "Site administration")
    users = "http://shop.test/admin/auth/user/?q=admin"
    wf = _induce(
        "Sign in to the shop's admin",
        _ev(0, ActionKind.NAVIGATE, url=login, after=at),
        _ev(100, ActionKind.FILL, _field("Username"), value="admin", before=at, after=at),
        _ev(
            200,
            ActionKind.CLICK,
            _control("button", "Log in"),
            before=at,
            after=home,
            effects=_shown(("Welcome, admin.", "status"), left_page=True),
        ),
        _ev(900, ActionKind.NAVIGATE, url=users, before=home, after=_page(users)),
    ).workflow
    sign_in = wf.steps[2]
    assert sign_in.expectations == (
        TextPresent(text="Welcome, {username}."),  # a text: the whole word is the user
        UrlMatches(pattern="http://shop.test/admin/"),  # not /{username}/: another user signs in
    )
    assert wf.steps[3].url == users  # type: ignore[union-attr]
    assert wf.success == (
        TextPresent(text="Welcome, {username}."),
        UrlMatches(pattern="http://shop.test/admin/"),
    )


def test_values_are_templated_as_whole_words_segments_and_quoted_values_only() -> None:
    at = _page("http://x.test/people")
    jane = _control(
        "link",
        "Jane",
        Locator(strategy=LocatorStrategy.TEXT, value="Jane"),
        Locator(strategy=LocatorStrategy.CSS, value='a[title="Jane"]'),
        Locator(strategy=LocatorStrategy.XPATH, value="//a[text()='Jane']"),
    )
    janet = _control(
        "link",
        "Janet",
        Locator(strategy=LocatorStrategy.CSS, value='a[href="/people/jane-2"]'),
    )
    search = "http://x.test/people/Jane%20Roe/jane-roe?name=Jane+Roe&page=2#/tab/Jane%20Roe"
    said = _shown(("Janet and Jane Roe joined HR", "status"))
    wf = _induce(
        "",
        _ev(0, ActionKind.FILL, _field("First name"), value="Jane", before=at, after=at),
        _ev(100, ActionKind.FILL, _field("Full name"), value="Jane Roe", before=at, after=at),
        _ev(200, ActionKind.FILL, _field("Team"), value="HR", before=at, after=at),
        _ev(300, ActionKind.CLICK, _control("button", "Save"), before=at, after=at, effects=said),
        _ev(400, ActionKind.CLICK, jane, before=at, after=at),
        _ev(500, ActionKind.CLICK, janet, before=at, after=at),
        _ev(600, ActionKind.NAVIGATE, url=search, before=at, after=_page(search)),
    ).workflow
    # not inside "Janet"; "Jane Roe" before "Jane"; "HR" is too short to tell apart
    assert wf.steps[3].expectations == (TextPresent(text="Janet and {full_name} joined HR"),)
    found = _locators(wf.steps[4])
    assert wf.steps[4].title == "Click '{first_name}'"
    assert (found["role"].name, found["text"].value) == ("{first_name}", "{first_name}")
    assert found["css"].value == 'a[title="{first_name}"]'
    assert found["xpath"].value == "//a[text()='{first_name}']"
    assert wf.steps[5].title == "Click 'Janet'"
    assert [loc.describe() for loc in wf.steps[5].target.locators] == [  # type: ignore[union-attr]
        'role=link[name="Janet"]',
        'css=a[href="/people/jane-2"]',
    ]
    assert wf.steps[6].url == (  # type: ignore[union-attr]
        "http://x.test/people/{full_name}/jane-roe?name={full_name}&page=2#/tab/{full_name}"
    )


# ── the success check ──────────────────────────────────────────────────────────────────────


def test_the_new_item_is_the_success_check_and_a_toast_that_went_is_not() -> None:
    at = _page("http://todo.test/#/")
    added = Effects(
        texts_added=(
            TextChange(text="Item added", role="status", gone=True),
            TextChange(text="Buy milk", role="item"),
        ),
        items_added=1,
        settled=True,
    )
    field = _field("What needs to be done?")
    wf = _induce(
        "Add Buy milk",
        _ev(0, ActionKind.NAVIGATE, url="http://todo.test/#/", after=at),
        _ev(100, ActionKind.FILL, field, value="Buy milk", before=at, after=at),
        _ev(200, ActionKind.PRESS, field, key="Enter", before=at, after=at, effects=added),
    ).workflow
    assert wf.steps[-1].expectations == (TextPresent(text="Item added"),)  # the step saw it
    assert wf.success == (TextPresent(text="{what_needs_to_be_done}"),)  # the end shows it
    assert wf.intent_template == "Add {what_needs_to_be_done}"


def test_a_recording_that_shows_no_outcome_gets_no_success_check_and_says_so() -> None:
    at = _page("http://x.test/form")
    result = _induce(
        "Fill in the form",
        _ev(0, ActionKind.FILL, _field("Name"), value="Jane Roe", before=at, after=at),
        _ev(100, ActionKind.CLICK, _control("button", "Next"), before=at, after=at),
    )
    assert result.workflow.success == ()
    assert result.notes == [NO_SUCCESS]


def test_the_llm_keeps_the_success_check_with_its_names() -> None:
    trajectory = load_trajectory((DATA / "create-contact.trajectory.json").read_bytes())
    plan = InductionPlan(
        name="Add a contact",
        description="Adds a contact.",
        parameters=[ParameterPlan(event=5, name="contact_name", description="Who")],
        steps=[StepPlan(event=9, title="Save {contact_name}")],
    )

    class Model:
        def complete(self, **_: Any) -> tuple[InductionPlan, LLMUsage]:
            return plan, LLMUsage(calls=1)

    result = induce_with_llm(trajectory, induce(trajectory), Model())  # type: ignore[arg-type]
    assert result.used_llm
    assert result.workflow.success[:1] == (TextPresent(text="{contact_name}"),)


def _radio(name: str) -> Target:
    return Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value="radio", name=name),),
        fingerprint=Fingerprint(
            tag="input", role="radio", name=name, attributes={"type": "radio", "name": "status"}
        ),
    )


def test_a_radio_button_the_intent_names_is_which_one_to_choose() -> None:
    radios = (
        '- radiogroup "Status":\n  - radio "Lead"\n  - radio "Customer" [checked]\n'
        '  - radio "Former"'
    )
    at = _page("http://x.test/contacts/add", snapshot=radios)
    wf = _induce(
        "Add the contact Cordelia Fairweather (born 1986-03-14, Customer)",
        _ev(0, ActionKind.FILL, _field("Name"), value="Cordelia Fairweather", before=at, after=at),
        _ev(100, ActionKind.FILL, _field("Birthday"), value="1986-03-14", before=at, after=at),
        _ev(200, ActionKind.CHECK, _radio("Customer"), before=at, after=at),
    ).workflow
    status = wf.parameter("status")  # the radio group's name: the word before is a date
    assert status is not None and (status.type, status.default) == (
        ParameterType.CHOICE,
        "Customer",
    )
    assert status.choices == ("Lead", "Customer", "Former")
    choose = wf.steps[-1]
    assert isinstance(choose, CheckStep) and choose.title == "Choose '{status}'"
    assert choose.checked is True and _locators(choose)["role"].name == "{status}"
    assert wf.intent_template == "Add the contact {name} (born {birthday}, {status})"


def _tick_row(name: str, ms: int = 0) -> Event:
    scope = ItemScope(css="tr", text=name)
    box = Target(
        locators=(
            Locator(
                strategy=LocatorStrategy.CSS, value='input[name="_selected_action"]', within=scope
            ),
        ),
        fingerprint=Fingerprint(tag="input", role="checkbox", name="Select this object"),
    )
    at = _page("http://x.test/admin/crm/contact/")
    return _ev(ms, ActionKind.CHECK, box, before=at, after=at)


def test_the_row_a_checkbox_is_ticked_in_is_named_by_the_intent() -> None:
    at = _page("http://x.test/admin/crm/contact/")
    done = _shown(("Successfully deleted 1 contact.", "status"), left_page=True)
    wf = _induce(
        "Delete the contact Wilhelmina Strand",
        _tick_row("Wilhelmina Strand"),
        _ev(900, ActionKind.CLICK, _control("button", "Delete"), before=at, after=at, effects=done),
    ).workflow
    assert [(p.name, p.type, p.default) for p in wf.parameters] == [
        ("contact", ParameterType.TEXT, "Wilhelmina Strand"),
        ("select_this_object", ParameterType.BOOL, True),
    ]
    tick = wf.steps[0]
    assert tick.title == "Set 'Select this object' in '{contact}' to {select_this_object}"
    assert tick.target.locators[0].describe() == (  # type: ignore[union-attr]
        'tr with "{contact}" >> css=input[name="_selected_action"]'
    )
    assert wf.intent_template == "Delete the contact {contact}"
    assert wf.success == (TextPresent(text="Successfully deleted"),)  # "1" is no entered value


def _order_box() -> Target:
    """A row's checkbox as the recorder reports it: found in the row by its first text."""
    inner = Locator(strategy=LocatorStrategy.CSS, value='input[name="sel"]')
    return Target(
        locators=(
            inner.model_copy(update={"within": ItemScope(css="tr", text="SO-10036")}),
            Locator(strategy=LocatorStrategy.CSS, value="#sel-10036"),
        ),
        fingerprint=Fingerprint(
            tag="input",
            role="checkbox",
            name="Select",
            item=ItemContext(
                css="tr", texts=("SO-10036", "Wayne Enterprises", "Shipped"), inner=inner
            ),
        ),
    )


@pytest.mark.parametrize(
    ("intent", "searched"),
    [("Archive the orders of the customer I search", True), ("Archive Wayne Enterprises", False)],
)
def test_the_row_is_found_by_the_text_a_value_gives_or_the_intent_names(
    intent: str, searched: bool
) -> None:
    at = _page("http://x.test/orders")
    fill = _ev(0, ActionKind.FILL, _field("Customer"), value="Wayne Enterprises", before=at)
    tick = _ev(500, ActionKind.CHECK, _order_box(), before=at, after=at)
    wf = _induce(intent, *([fill, tick] if searched else [tick])).workflow
    first = wf.parameters[0]
    assert (first.name, first.default) == ("customer" if searched else "item", "Wayne Enterprises")
    tick = wf.steps[-1]
    assert [loc.describe() for loc in tick.target.locators] == [  # type: ignore[union-attr]
        f'tr with "{{{first.name}}}" >> css=input[name="sel"]',  # first: that row was meant
        "css=#sel-10036",
    ]
