"""What a recording's observations mean for the workflow: navigations the page made fold into
what caused them, focus moves are noise, checks come from what each step made the page do, and
URL checks hold however the app spells its addresses. Pure functions, no browser."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from factories import T0

from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models import (
    ActionKind,
    Effects,
    Event,
    Fingerprint,
    Locator,
    LocatorStrategy,
    Observation,
    Target,
    TextChange,
    TextPresent,
    Trajectory,
    UrlMatches,
)
from desktop_app.core.recording import clean_events
from desktop_app.core.urls import normal_url, url_matches


def _target(
    css: str, *, tag: str = "button", role: str | None = "button", name: str = ""
) -> Target:
    locators = [Locator(strategy=LocatorStrategy.CSS, value=css)]
    if name:
        locators.insert(0, Locator(strategy=LocatorStrategy.ROLE, value=role or "", name=name))
    return Target(locators=tuple(locators), fingerprint=Fingerprint(tag=tag, role=role, name=name))


FIELD = _target("#todo", tag="input", role="textbox", name="What needs to be done?")
SAVE = _target("#save", name="Save")


def _ev(ms: int, action: ActionKind, target: Target | None = None, **kw: Any) -> Event:
    return Event.model_validate(
        {"action": action, "at": T0 + timedelta(milliseconds=ms), "target": target, **kw}
    )


def _page(url: str, title: str | None = None) -> Observation:
    return Observation(url=url, title=title)


def _kinds(events: list[Event]) -> list[str]:
    return [e.action.value for e in events]


# ── navigations ────────────────────────────────────────────────────────────────────────────


def test_a_router_rewriting_the_address_is_no_step_even_if_the_history_says_typed() -> None:
    raw = [
        _ev(0, ActionKind.NAVIGATE, url="http://x/app/", typed=True, initiated_by="browser"),
        # the page's script moves to /#/ at load: Chromium keeps the entry "typed"
        _ev(9000, ActionKind.NAVIGATE, url="http://x/app/#/", typed=True, initiated_by="script"),
        _ev(9500, ActionKind.FILL, FIELD, value="Buy milk", before=_page("http://x/app/#/")),
    ]
    clean = clean_events(raw)
    assert _kinds(clean) == ["navigate", "fill"]
    assert clean[0].url == "http://x/app/" and clean[0].after is not None
    assert clean[0].after.url == "http://x/app/#/"  # where it arrived: its check


def test_a_slow_link_still_belongs_to_its_click_and_a_typed_address_is_a_step() -> None:
    raw = [
        _ev(0, ActionKind.NAVIGATE, url="http://x/", typed=True, initiated_by="browser"),
        _ev(1000, ActionKind.CLICK, SAVE, effect=True, before=_page("http://x/")),
        # the server took 8 s: no time limit when Chromium says a link led there
        _ev(9000, ActionKind.NAVIGATE, url="http://x/saved", initiated_by="link"),
        _ev(9100, ActionKind.NAVIGATE, url="http://x/saved/", initiated_by="refresh"),
        _ev(20000, ActionKind.NAVIGATE, url="http://x/orders", typed=True, initiated_by="browser"),
    ]
    clean = clean_events(raw)
    assert _kinds(clean) == ["navigate", "click", "navigate"]
    assert clean[1].after is not None and clean[1].after.url == "http://x/saved/"
    assert clean[2].url == "http://x/orders"


def test_a_page_that_left_during_an_action_went_there_itself_whoever_chromium_names() -> None:
    raw = [
        _ev(0, ActionKind.NAVIGATE, url="http://x/", typed=True, initiated_by="browser"),
        # NiceGUI goes to the list from its server, over its socket: Chromium names nobody
        _ev(
            1000,
            ActionKind.CLICK,
            SAVE,
            effects=Effects(left_page=True),
            before=_page("http://x/new"),
        ),
        _ev(1400, ActionKind.NAVIGATE, url="http://x/", typed=False, initiated_by="browser"),
        # much later, with the page at rest: the person went there
        _ev(9000, ActionKind.NAVIGATE, url="http://x/orders", typed=False, initiated_by="browser"),
    ]
    clean = clean_events(raw)
    assert _kinds(clean) == ["navigate", "click", "navigate"]
    assert clean[1].after is not None and clean[1].after.url == "http://x/"
    assert clean[2].url == "http://x/orders"


def test_a_field_the_page_wrote_again_as_the_focus_left_is_no_second_typing() -> None:
    closed = Effects(texts_removed=(TextChange(text="Sun Mon Tue"),), settled=True)
    raw = [
        _ev(0, ActionKind.FILL, FIELD, value="1991-06-05"),
        _ev(500, ActionKind.PRESS, FIELD, key="Tab"),
        # the date picker writes the same value back as it closes
        _ev(520, ActionKind.FILL, FIELD, value="1991-06-05", effects=closed),
        _ev(900, ActionKind.CLICK, SAVE, effect=True),
    ]
    clean = clean_events(raw)
    assert _kinds(clean) == ["fill", "press", "click"]  # the Tab closed the calendar: kept
    assert clean[1].effects == closed


def test_the_page_a_step_led_to_adds_what_it_showed_as_it_loaded() -> None:
    shown = Effects(
        texts_added=(TextChange(text="Contact Jane Doe created", role="status"),), settled=True
    )
    raw = [
        _ev(0, ActionKind.CLICK, SAVE, effect=True, effects=Effects(dom_changed=True)),
        _ev(
            300,
            ActionKind.NAVIGATE,
            url="http://x/contacts/13",
            initiated_by="form",
            effects=shown,
            before=Observation(url="http://x/contacts/13", screenshot="a" * 64 + ".jpg"),
        ),
    ]
    [click] = clean_events(raw)
    assert click.effects is not None and click.effects.left_page
    assert [t.text for t in click.effects.texts_added] == ["Contact Jane Doe created"]
    assert click.before is None or click.before.screenshot is None  # its own picture only


def test_focus_moves_are_noise_unless_the_page_answered() -> None:
    quiet = Effects(dom_changed=True, settled=True)  # a focus ring, nothing a person reads
    filled = Effects(
        values_changed=(), texts_added=(TextChange(text="Globex Corporation"),), settled=True
    )
    raw = [
        _ev(0, ActionKind.CLICK, FIELD, effect=True, effects=quiet),
        _ev(100, ActionKind.FILL, FIELD, value="Glo"),
        _ev(900, ActionKind.PRESS, FIELD, key="Tab", effects=quiet),
        _ev(1500, ActionKind.PRESS, FIELD, key="Tab", modifiers=["Shift"], effects=quiet),
        _ev(2000, ActionKind.PRESS, FIELD, key="Tab", effects=filled),  # it completed the value
        _ev(
            3000,
            ActionKind.CLICK,
            _target("#date", tag="input", role="textbox"),
            effect=True,
            effects=Effects(dialogs_opened=1, settled=True),
        ),  # a date picker opened: kept
    ]
    assert _kinds(clean_events(raw)) == ["fill", "press", "click"]


# ── checks ─────────────────────────────────────────────────────────────────────────────────


def _trajectory(*events: Event) -> Trajectory:
    return Trajectory(intent="Add Buy milk", started_at=T0, events=events)


def test_checks_come_from_what_the_step_made_the_page_do() -> None:
    saved = Effects(
        texts_added=(
            TextChange(text="Ticket #12 created for Buy milk", role="status"),
            TextChange(text="Buy milk", role="item"),
        ),
        settled=True,
    )
    workflow = induce(
        _trajectory(
            _ev(0, ActionKind.NAVIGATE, url="http://x/#/", typed=True, after=_page("http://x/#/")),
            _ev(100, ActionKind.FILL, FIELD, value="Buy milk", before=_page("http://x/#/")),
            _ev(
                900,
                ActionKind.PRESS,
                FIELD,
                key="Enter",
                effects=saved,
                before=_page("http://x/#/"),
                after=_page("http://x/#/"),
            ),
        )
    ).workflow
    press = workflow.steps[-1]
    # the ticket's number is no entered value: left out, the longest part kept
    assert press.expectations == (TextPresent(text="created for {what_needs_to_be_done}"),)
    # the workflow's success check: the new item holding the entered value (a message may go)
    assert workflow.success == (TextPresent(text="{what_needs_to_be_done}"),)


def test_a_message_that_is_only_a_number_checks_nothing() -> None:
    effects = Effects(texts_added=(TextChange(text="#4711", role="status"),), settled=True)
    workflow = induce(
        _trajectory(_ev(0, ActionKind.CLICK, SAVE, effect=True, effects=effects))
    ).workflow
    assert workflow.steps[0].expectations == ()


def test_a_route_inside_the_page_is_checked_and_an_empty_one_is_not() -> None:
    workflow = induce(
        _trajectory(
            _ev(
                0,
                ActionKind.CLICK,
                _target("#active", tag="a", role="link", name="Active"),
                effect=True,
                before=_page("http://x/app#/"),
                after=_page("http://x/app#/active"),
            ),
        )
    ).workflow
    assert workflow.steps[0].expectations == (UrlMatches(pattern="http://x/app#/active"),)


# ── addresses ──────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://x/app/", "http://x/app/#/"),
        ("HTTP://Example.TEST:80/contacts/", "http://example.test/contacts"),
        ("https://x:443/a#!/", "https://x/a"),
    ],
)
def test_the_same_place_however_it_is_spelt(a: str, b: str) -> None:
    assert normal_url(a) == normal_url(b)
    assert url_matches(a, b, "exact") and url_matches(b, a, "glob")


def test_other_places_stay_other() -> None:
    assert not url_matches("http://x/app#/active", "http://x/app#/", "exact")
    assert not url_matches("http://x/contacts/13", "http://x/orders/*", "glob")
    assert url_matches("http://x/contacts/13/", "http://x/contacts/*", "glob")
    assert url_matches("http://x/a?b=1", r"b=\d", "regex")
