"""Which induced steps are irreversible: from what the control says, the option chosen, the
requests the action sent, the question the app asked first, and the page it was done on; and
never for typing, ticking, opening a menu, following a link, searching or an ordinary save."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from factories import T0

from desktop_app.adapters.llm import OpenAIStructuredLLM
from desktop_app.core.induction.heuristic import Induction, induce
from desktop_app.core.induction.irreversible import irreversible_events
from desktop_app.core.induction.llm_inducer import induce_with_llm
from desktop_app.core.models import (
    ActionKind,
    Effects,
    Event,
    Fingerprint,
    Locator,
    LocatorStrategy,
    Observation,
    PressStep,
    SelectStep,
    Step,
    Target,
    TextChange,
    Trajectory,
)
from desktop_app.core.models.trajectory import BrowserDialog, RequestSeen
from tests.fakes.openai_server import FakeOpenAIServer

LIST = "http://crm.test/admin/contacts/"


def _ev(ms: int, action: ActionKind, target: Target | None = None, **kw: Any) -> Event:
    return Event.model_validate(
        {"action": action, "at": T0 + timedelta(milliseconds=ms), "target": target, **kw}
    )


def _page(url: str = LIST, title: str | None = "Contacts") -> Observation:
    return Observation(url=url, title=title)


def _control(role: str, label: str, *, tag: str = "button", **attributes: str) -> Target:
    return Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value=role, name=label),),
        fingerprint=Fingerprint(tag=tag, role=role, name=label, attributes=attributes),
    )


def _field(name: str, role: str = "textbox") -> Target:
    return Target(
        locators=(Locator(strategy=LocatorStrategy.LABEL, value=name),),
        fingerprint=Fingerprint(tag="input", role=role, name=name, attributes={"type": "text"}),
    )


def _did(
    *texts: tuple[str, str | None],
    requests: tuple[tuple[str, str], ...] = (),
    dialogs: tuple[BrowserDialog, ...] = (),
    left_page: bool = False,
) -> Effects:
    """What an action made the page do."""
    return Effects(
        texts_added=tuple(TextChange(text=t, role=r) for t, r in texts),  # type: ignore[arg-type]
        requests=tuple(RequestSeen(method=m, path=p) for m, p in requests),
        browser_dialogs=dialogs,
        left_page=left_page,
        dom_changed=True,
        settled=True,
    )


def _induce(*events: Event, intent: str = "") -> Induction:
    return induce(Trajectory(intent=intent, started_at=T0, events=events))


def _flagged(induction: Induction) -> list[str]:
    return [s.title for s in induction.workflow.steps if s.irreversible]


def _step(induction: Induction, title: str) -> Step:
    return next(s for s in induction.workflow.steps if s.title.startswith(title))


# ── the Django admin's bulk delete, as recorded there ──────────────────────────────────────

_ROW_BOX = Target(
    locators=(
        Locator(strategy=LocatorStrategy.ROLE, value="checkbox"),
        Locator(strategy=LocatorStrategy.CSS, value='input[name="_selected_action"]'),
    ),
    fingerprint=Fingerprint(
        tag="input", role="checkbox", attributes={"name": "_selected_action", "type": "checkbox"}
    ),
)
_ACTION = _control("combobox", "Action:", tag="select", name="action")
_CONFIRMATION = (
    ("Django administration", "heading"),
    ("Are you sure?", "heading"),
    ("Summary", "heading"),
    ("Contact: Wilhelmina Strand", "item"),
    (
        "Are you sure you want to delete the selected contact? All of the following objects "
        "and their related items will be deleted:",
        None,
    ),
    ("No, take me back", None),
)
_SURE = "Are you sure? | Django site admin"


def _bulk_delete(*, answer: str = "Yes, I’m sure") -> list[Event]:
    """Tick a row, choose "Delete selected contacts", Go, then answer the confirmation page."""
    found = _page(LIST + "?q=Wilhelmina+Strand", "Select contact to change")
    asking = _page(LIST + "?q=Wilhelmina+Strand", _SURE)
    if answer.startswith("Yes"):
        answered = _ev(
            400,
            ActionKind.CLICK,
            _control("button", answer, tag="input", type="submit"),
            before=asking,
            after=asking,
            effects=_did(
                ("Successfully deleted 1 contact.", "status"),
                ("Select contact to change", "heading"),
                requests=(("POST", "/admin/contacts/"),),
                left_page=True,
            ),
        )
    else:
        answered = _ev(
            400,
            ActionKind.CLICK,
            _control("link", answer, tag="a", href="#"),
            before=asking,
            after=asking,
            effects=_did(("Select contact to change", "heading"), left_page=True),
        )
    return [
        _ev(
            0, ActionKind.CHECK, _ROW_BOX, before=found, after=found, effects=_did(("1 of 1", None))
        ),
        _ev(
            100,
            ActionKind.SELECT,
            _ACTION,
            value="Delete selected contacts",
            options=("---------", "Delete selected contacts"),
            before=found,
            after=found,
        ),
        _ev(
            200,
            ActionKind.CLICK,
            _control("button", "Go", type="submit", title="Run the selected action"),
            before=found,
            after=found,  # observed before the page it led to came
            effects=_did(*_CONFIRMATION, requests=(("POST", "/admin/contacts/"),), left_page=True),
        ),
        answered,
    ]


def test_the_bulk_delete_flags_the_choice_the_go_and_the_yes_but_not_the_row() -> None:
    induction = _induce(*_bulk_delete(), intent="Delete the contact Wilhelmina Strand")
    assert _flagged(induction) == [
        "Select {action} in 'Action:'",
        "Click 'Go'",
        "Click 'Yes, I’m sure'",
    ]
    assert isinstance(_step(induction, "Select"), SelectStep)
    # the reviewer is told why where the control's own words do not say it
    assert any(
        "Click 'Go') is irreversible: it sent a change after 'Delete selected contacts'" in n
        for n in induction.notes
    )
    assert any(
        "Click 'Yes, I’m sure') is irreversible: it answers yes to 'Are you sure you want to "
        "delete" in n
        for n in induction.notes
    )


def test_taking_the_way_back_from_the_confirmation_page_is_not_irreversible() -> None:
    induction = _induce(*_bulk_delete(answer="No, take me back"))
    assert "Click 'No, take me back'" not in _flagged(induction)


def test_the_step_that_led_to_a_question_chose_what_it_commits() -> None:
    """A button with no committing words (a row's "Manage") that led to a page asking about
    deleting is where the record was chosen; the page's "Continue" answers it."""
    row = _page("http://app.test/files", "Files")
    asking = _page("http://app.test/files/42/purge", "Confirm")
    events = [
        _ev(
            0,
            ActionKind.CLICK,
            _control("button", "Manage"),
            before=row,
            after=row,
            effects=_did(
                ("Empty the archive", "heading"),
                ("This cannot be undone.", "alert"),
                requests=(("GET", "/files/42/purge"),),
                left_page=True,
            ),
        ),
        _ev(
            100,
            ActionKind.CLICK,
            _control("button", "Continue"),
            before=asking,
            after=asking,
            effects=_did(requests=(("POST", "/files/42/archive"),), left_page=True),
        ),
    ]
    assert irreversible_events(events).keys() == {0, 1}
    assert irreversible_events(events)[0].why == "it led to a page asking 'This cannot be undone.'"


def test_a_question_in_a_dialog_is_answered_by_its_yes() -> None:
    page = _page("http://todo.test/", "Todos")
    events = [
        _ev(
            0,
            ActionKind.CLICK,
            _control("button", "⋯"),
            before=page,
            after=page,
            effects=_did(("Remove “Buy milk”?", "dialog"), ("Yes", None), ("No", None)),
        ),
        _ev(100, ActionKind.CLICK, _control("button", "Yes"), before=page, after=page),
        _ev(200, ActionKind.CLICK, _control("button", "Show all"), before=page, after=page),
    ]
    assert sorted(irreversible_events(events)) == [0, 1]  # the question is answered once


# ── each kind of evidence ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("name", ["Delete", "Pay now", "Unsubscribe", "Cancel my subscription"])
def test_a_control_whose_words_commit(name: str) -> None:
    induction = _induce(_ev(0, ActionKind.CLICK, _control("button", name), before=_page()))
    assert _flagged(induction) == [f"Click '{name}'"]
    assert not any("irreversible" in n for n in induction.notes)  # the title says it


def test_enter_or_space_on_a_committing_control_but_not_another_key() -> None:
    remove = _control("button", "Remove")
    events = [
        _ev(0, ActionKind.PRESS, remove, key="Enter", before=_page()),
        _ev(100, ActionKind.PRESS, remove, key=" ", before=_page()),
        _ev(200, ActionKind.PRESS, remove, key="Tab", before=_page()),
    ]
    steps = _induce(*events).workflow.steps
    assert all(isinstance(s, PressStep) for s in steps)
    assert [s.irreversible for s in steps] == [True, True, False]


def test_an_option_of_a_custom_list_that_commits() -> None:
    option = _control("option", "Delete selected items", tag="li")
    induction = _induce(_ev(0, ActionKind.CLICK, option, before=_page()))
    assert [s.irreversible for s in induction.workflow.steps] == [True]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/api/todos/3"),
        ("POST", "/admin/contact/delete/"),
        ("PATCH", "/api/subscriptions/8/cancel"),
        ("PUT", "/orders/7/checkout"),
        ("POST", "/api/bulkDelete"),
        ("POST", "/payments/0c2f1a9e-77aa-4e1b-9a35-1d1e3d1b2c4f/send/"),
    ],
)
def test_a_request_that_commits(method: str, path: str) -> None:
    clear = _control("button", "×")
    effects = _did(requests=((method, path),))
    events = [_ev(0, ActionKind.CLICK, clear, before=_page(), after=_page(), effects=effects)]
    evidence = irreversible_events(events)[0]
    assert evidence.why == f"it sent {method} {path}" and not evidence.own_words
    assert _flagged(_induce(*events)) == ["Click '×'"]


def test_a_key_pressed_on_the_page_that_deleted_through_the_api() -> None:
    item = _control("listitem", "Buy milk", tag="li")
    effects = _did(requests=(("DELETE", "/api/todos/3"),))
    steps = _induce(_ev(0, ActionKind.PRESS, item, key="Delete", effects=effects)).workflow.steps
    assert [s.irreversible for s in steps] == [True]


def test_an_answered_confirm_is_the_app_holding_it_final_and_a_cancelled_one_is_not() -> None:
    archive = _control("button", "Archive")
    ok = _did(dialogs=(BrowserDialog(kind="confirm", message="Proceed?", accepted=True),))
    no = _did(dialogs=(BrowserDialog(kind="confirm", message="Proceed?", accepted=False),))
    alert = _did(dialogs=(BrowserDialog(kind="alert", message="Archived"),))
    steps = _induce(
        _ev(0, ActionKind.CLICK, archive, effects=ok),
        _ev(100, ActionKind.CLICK, archive, effects=no),
        _ev(200, ActionKind.CLICK, archive, effects=alert),
    ).workflow.steps
    assert [(s.irreversible, s.dialog) for s in steps] == [
        (True, "accept"),
        (False, "dismiss"),
        (False, None),
    ]


def test_a_change_sent_from_a_page_whose_heading_or_address_says_so() -> None:
    account = _page("http://app.test/settings", "Settings")
    to_delete = _page("http://app.test/contacts/5/delete/", "Contact 5")
    events = [
        _ev(
            0,
            ActionKind.CLICK,
            _control("link", "Danger zone", tag="a"),
            before=account,
            effects=_did(("Delete account", "heading"), left_page=True),
        ),
        _ev(
            100,
            ActionKind.CLICK,
            _control("button", "Continue"),
            before=account,
            effects=_did(requests=(("POST", "/settings/danger"),), left_page=True),
        ),
        _ev(
            200,
            ActionKind.CLICK,
            _control("button", "Continue"),
            before=to_delete,
            effects=_did(requests=(("POST", "/contacts/5/"),), left_page=True),
        ),
    ]
    found = irreversible_events(events)
    assert sorted(found) == [1, 2]
    assert found[1].why == "it sent a change, and its page's heading says 'Delete account'"
    assert found[2].why == "it sent a change, and its page's address says '/contacts/5/delete/'"


def test_a_box_ticked_to_delete_makes_the_save_irreversible_not_the_tick() -> None:
    """The Django admin's inline "Delete" box: ticking it is undone by unticking; saving is not."""
    edit = _page("http://crm.test/admin/companies/3/change/", "Change company")
    delete_box = _control("checkbox", "Delete", tag="input", type="checkbox")
    save = _control("button", "Save", tag="input", type="submit")
    posted = _did(requests=(("POST", "/admin/companies/3/change/"),), left_page=True)
    induction = _induce(
        _ev(0, ActionKind.CHECK, delete_box, before=edit, after=edit),
        _ev(100, ActionKind.CLICK, save, before=edit, effects=posted),
    )
    assert _flagged(induction) == ["Click 'Save'"]


# ── what is not irreversible ─────────────────────────────────────────────────────────────────


def test_typing_ticking_menus_links_searches_and_an_ordinary_save_are_not() -> None:
    search = _page(LIST, "Select contact to change")
    add = _page(LIST + "add/", "Add contact")
    events = [
        # a click into a field whose label holds a committing word, then typing into it
        _ev(0, ActionKind.CLICK, _field("Confirm password"), before=add),
        _ev(50, ActionKind.FILL, _field("Reason to remove"), value="duplicate", before=add),
        _ev(100, ActionKind.PRESS, _field("Send to"), key="Tab", before=add),
        # an ordinary save: a POST that creates
        _ev(
            200,
            ActionKind.CLICK,
            _control("button", "Save", tag="input", type="submit"),
            before=add,
            effects=_did(
                ("The contact “Ann” was added successfully.", "status"),
                requests=(("POST", "/admin/contacts/add/"),),
                left_page=True,
            ),
        ),
        # an update through an API
        _ev(
            300,
            ActionKind.CLICK,
            _control("button", "Create"),
            before=search,
            effects=_did(requests=(("PUT", "/api/contacts/5"), ("POST", "/api/book/"))),
        ),
        # a search for a committing word: a GET
        _ev(400, ActionKind.FILL, _field("Search", "searchbox"), value="delete me", before=search),
        _ev(
            500,
            ActionKind.PRESS,
            _field("Search", "searchbox"),
            key="Enter",
            before=search,
            effects=_did(requests=(("GET", "/admin/contacts/delete"),), left_page=True),
        ),
        # ticking a row, opening a menu, following a link
        _ev(600, ActionKind.CHECK, _ROW_BOX, before=search, effects=_did(("1 of 1", None))),
        _ev(
            700,
            ActionKind.CLICK,
            _control("button", "Actions"),
            before=search,
            effects=_did(("Delete selected items", None), ("Export", None)),
        ),
        _ev(
            800,
            ActionKind.CLICK,
            _control("link", "Ann Lee", tag="a", href="/admin/contacts/5/change/"),
            before=search,
            effects=_did(("Change contact", "heading"), left_page=True),
        ),
        # a sign-in
        _ev(
            900,
            ActionKind.CLICK,
            _control("button", "Log in", tag="input", type="submit"),
            before=_page("http://crm.test/admin/login/", "Log in"),
            effects=_did(requests=(("POST", "/admin/login/"),), left_page=True),
        ),
    ]
    assert irreversible_events(events) == {}
    assert _flagged(_induce(*events)) == []


def test_a_heading_that_only_holds_a_committing_word_names_no_act() -> None:
    """SQLAdmin's brand heading "Address Book" above every form: saving there is no booking."""
    brand = _page("http://crm.test/admin/contact/edit/5", "Address Book")
    events = [
        _ev(
            0,
            ActionKind.CLICK,
            _control("link", "Edit", tag="a"),
            before=brand,
            effects=_did(
                ("Login to Address Book", "heading"), ("Address Book", "heading"), left_page=True
            ),
        ),
        _ev(
            100,
            ActionKind.CLICK,
            _control("button", "Save"),
            before=brand,
            effects=_did(requests=(("POST", "/admin/contact/edit/5"),), left_page=True),
        ),
    ]
    assert irreversible_events(events) == {}


def test_a_status_message_after_the_deed_asks_nothing() -> None:
    listed = _page("http://todo.test/", "Todos")
    events = [
        _ev(
            0,
            ActionKind.CLICK,
            _control("button", "Clear completed"),
            before=listed,
            effects=_did(("2 items permanently removed", "status")),
        ),
        _ev(100, ActionKind.CLICK, _control("button", "OK"), before=listed),
    ]
    assert irreversible_events(events) == {}


# ── the LLM cannot take the flag away ────────────────────────────────────────────────────────


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def test_the_llm_can_neither_clear_nor_drop_an_irreversible_step(server: FakeOpenAIServer) -> None:
    trajectory = Trajectory(intent="Delete Wilhelmina Strand", started_at=T0, events=_bulk_delete())
    draft = induce(trajectory)
    llm = OpenAIStructuredLLM(server.base_url, "fake-chat", "sk-test-31f0", 5.0)
    plan = {
        "name": "Delete a contact",
        "description": "Deletes one contact from the admin.",
        "parameters": [],
        "steps": [
            {"event": 1, "keep": False, "title": "Pick the action"},
            {"event": 2, "keep": False, "title": "Run it"},
            {"event": 3, "title": "Confirm"},
        ],
    }
    server.queue_chat(json.dumps(plan))
    result = induce_with_llm(trajectory, draft, llm)
    assert result.used_llm
    assert [(s.title, s.irreversible) for s in result.workflow.steps] == [
        (draft.workflow.steps[0].title, False),
        ("Pick the action", True),
        ("Run it", True),
        ("Confirm", True),
    ]
    # an answer that tries to set the flag itself does not fit the plan: the draft is kept
    server.queue_chat(json.dumps({**plan, "steps": [{**plan["steps"][2], "irreversible": False}]}))
    server.queue_chat(json.dumps({**plan, "steps": [{**plan["steps"][2], "irreversible": False}]}))
    kept = induce_with_llm(trajectory, draft, llm)
    assert not kept.used_llm
    assert [s.irreversible for s in kept.workflow.steps] == [False, True, True, True]


# ── on the real Django admin ─────────────────────────────────────────────────────────────────


@pytest.mark.slow
@pytest.mark.parametrize("version", [0, 1], ids=["django-4.2", "django-5.2"])
def test_the_django_admins_bulk_delete_recorded_there(version: int, home: Path) -> None:
    """Recorded with ``procedura record web --attach`` while a scripted person signs in,
    searches, ticks the row, chooses "Delete selected contacts", clicks Go and "Yes, I’m sure"
    (the bench's ``bulk-delete``): the choice, Go and the yes are irreversible, nothing else."""
    sys.path.insert(0, str(REPO / "bench"))
    import real_apps
    from demonstrations import MACHINE
    from realapps.corpus import APPS
    from realapps.harness import started

    from desktop_app.app import open_services
    from desktop_app.settings import load_settings

    app = next(a for a in APPS if a.name == "django-admin")
    task = next(t for t in app.tasks if t.name == "bulk-delete")
    with started(app.variants[version], task) as instance:
        trajectory_id = real_apps.record(instance, task, MACHINE)
    with open_services(load_settings(), write=False) as services:
        trajectory = services.trajectories.get(trajectory_id)
    induction = induce(trajectory)
    steps = induction.workflow.steps
    assert [(type(s).__name__, s.title) for s in steps if s.irreversible] == [
        ("SelectStep", "Select {action} in 'Action:'"),
        ("ClickStep", "Click 'Go'"),
        ("ClickStep", "Click 'Yes, I’m sure'"),
    ], [s.title for s in steps]
    assert any(
        "Click 'Yes, I’m sure') is irreversible: it answers yes" in n for n in induction.notes
    )
