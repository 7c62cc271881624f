"""Cleaning a raw event stream, and recording sessions that survive a crash."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from factories import T0

from desktop_app.app import Services, open_services
from desktop_app.core.models import (
    ActionKind,
    Event,
    Fingerprint,
    Locator,
    LocatorStrategy,
    Observation,
    Target,
    Trajectory,
)
from desktop_app.core.recording import clean_events
from desktop_app.settings import load_settings


def _target(css: str, *, tag: str = "button", role: str | None = "button") -> Target:
    return Target(
        locators=(
            Locator(strategy=LocatorStrategy.TEXT, value=css.strip("#")),
            Locator(strategy=LocatorStrategy.CSS, value=css),
        ),
        fingerprint=Fingerprint(tag=tag, role=role),
    )


FIELD = _target("#name", tag="input", role="textbox")
SAVE = _target("#save")
TEXT = _target("#intro", tag="p", role=None)


def _ev(ms: int, action: ActionKind, target: Target | None = None, **kw: object) -> Event:
    return Event.model_validate(
        {"action": action, "at": T0 + timedelta(milliseconds=ms), "target": target, **kw}
    )


def _kinds(events: list[Event]) -> list[str]:
    return [e.action.value for e in events]


def test_typing_is_coalesced_into_one_fill_with_the_final_value() -> None:
    raw = [
        _ev(0, ActionKind.FILL, FIELD, value="Ja"),
        _ev(900, ActionKind.FILL, FIELD, value="Jane D"),
        _ev(1500, ActionKind.FILL, FIELD, value="Jane Doe"),
        _ev(3000, ActionKind.CLICK, SAVE, effect=True),
    ]
    clean = clean_events(raw)
    assert _kinds(clean) == ["fill", "click"]
    assert clean[0].value == "Jane Doe"
    assert clean[0].at == T0
    assert clean[0].ended_at == T0 + timedelta(milliseconds=1500)


def test_fills_of_different_fields_stay_apart() -> None:
    other = _target("#email", tag="input", role="textbox")
    clean = clean_events(
        [_ev(0, ActionKind.FILL, FIELD, value="a"), _ev(10, ActionKind.FILL, other, value="b")]
    )
    assert [e.value for e in clean] == ["a", "b"]


def test_focus_clicks_are_dropped() -> None:
    raw = [
        _ev(0, ActionKind.CLICK, FIELD, effect=False),
        _ev(100, ActionKind.FILL, FIELD, value="x"),
        _ev(2000, ActionKind.CLICK, FIELD, effect=False),  # clicked into it again, typed nothing
        _ev(3000, ActionKind.CLICK, SAVE, effect=True),
    ]
    assert _kinds(clean_events(raw)) == ["fill", "click"]


def test_clicks_without_effect_on_plain_content_are_dropped_but_buttons_kept() -> None:
    raw = [
        _ev(0, ActionKind.CLICK, TEXT, effect=False),
        _ev(500, ActionKind.CLICK, TEXT, effect=True),
        _ev(1000, ActionKind.CLICK, SAVE, effect=False),
        _ev(2000, ActionKind.CLICK, _target("#x", tag="div", role=None)),  # effect unknown: kept
    ]
    assert len(clean_events(raw)) == 3


def test_accidental_repeats_and_the_clicks_of_a_double_click() -> None:
    raw = [
        _ev(0, ActionKind.CLICK, SAVE, effect=True),
        _ev(150, ActionKind.CLICK, SAVE, effect=True),
        _ev(5000, ActionKind.CLICK, SAVE, effect=True),
        _ev(5100, ActionKind.CLICK, SAVE, effect=True),
        _ev(5150, ActionKind.DOUBLE_CLICK, SAVE),
    ]
    assert _kinds(clean_events(raw)) == ["click", "double_click"]


def test_navigations_caused_by_an_action_fold_into_its_after_observation() -> None:
    after = Observation(url="http://x/contacts/1", title="Jane")
    raw = [
        _ev(0, ActionKind.NAVIGATE, url="http://x/new", typed=True),
        _ev(10, ActionKind.NAVIGATE, url="http://x/new", typed=True),  # duplicate
        _ev(1000, ActionKind.CLICK, SAVE, effect=True, after=Observation(url="http://x/new")),
        _ev(1100, ActionKind.SUBMIT, _target("#form", tag="form", role="form")),
        _ev(1300, ActionKind.NAVIGATE, url="http://x/contacts/1", typed=False, after=after),
        _ev(9000, ActionKind.NAVIGATE, url="http://x/orders", typed=True),
    ]
    clean = clean_events(raw)
    assert _kinds(clean) == ["navigate", "click", "navigate"]
    assert clean[1].after == after
    assert clean[2].url == "http://x/orders"


def test_the_first_navigation_in_a_new_tab_is_kept() -> None:
    opened = Observation(url="http://x/orders")
    raw = [
        _ev(0, ActionKind.CLICK, SAVE, effect=True, tab="tab-1"),
        _ev(5000, ActionKind.SWITCH_TAB, tab="tab-2", after=opened),
        _ev(
            5010, ActionKind.NAVIGATE, url="http://x/orders", typed=None, tab="tab-2", after=opened
        ),
    ]
    assert _kinds(clean_events(raw)) == ["click", "switch_tab", "navigate"]


def test_injected_input_is_never_the_users() -> None:
    raw = [_ev(0, ActionKind.CLICK, SAVE, effect=True, injected=True)]
    assert clean_events(raw) == []


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as services:
        yield services


def test_a_session_persists_each_event_and_keeps_the_raw_stream(services: Services) -> None:
    session = services.trajectories.start_recording(
        Trajectory(intent="Save", start_url="http://x/")
    )
    raw = [
        _ev(0, ActionKind.FILL, FIELD, value="J"),
        _ev(500, ActionKind.FILL, FIELD, value="Jo"),
        _ev(900, ActionKind.CLICK, SAVE, effect=True),
    ]
    for event in raw:
        session.add(event)
    live = services.trajectories.get(session.trajectory_id)  # while recording
    assert live.incomplete and _kinds(list(live.events)) == ["fill", "click"]
    done = session.finish()
    assert not done.incomplete and done.ended_at is not None
    stored = services.trajectories.get(session.trajectory_id)
    assert stored == done
    assert services.trajectories.raw_events(session.trajectory_id) == raw


def test_an_abandoned_recording_is_kept_marked_incomplete(home: Path) -> None:
    with open_services(load_settings(), write=True) as services:
        session = services.trajectories.start_recording(Trajectory(intent="Crash", started_at=T0))
        session.add(_ev(0, ActionKind.FILL, FIELD, value="Jane"))
        session.add(_ev(2000, ActionKind.CLICK, SAVE, effect=True))
        trajectory_id = session.trajectory_id
        # the recorder dies here: finish() is never called
    with open_services(load_settings(), write=True) as services:
        summary = next(s for s in services.trajectories.list() if s.id == trajectory_id)
        assert summary.incomplete and summary.event_count == 2
        recovered = services.trajectories.get(trajectory_id)
        assert recovered.ended_at == T0 + timedelta(seconds=2)
        assert [e.value for e in recovered.events] == ["Jane", None]


def test_marking_a_field_sensitive_late_scrubs_what_was_stored(services: Services) -> None:
    from desktop_app.core.redaction import REDACTED

    shot = "c" * 64 + ".jpg"
    ref = services.media.put(b"a screenshot showing the value", "jpg")
    session = services.trajectories.start_recording(Trajectory(intent="late"))
    notes = _target("#notes", tag="textarea", role="textbox")
    session.add(_ev(0, ActionKind.CLICK, SAVE, effect=True, before=Observation(screenshot=shot)))
    session.add(
        _ev(
            100,
            ActionKind.FILL,
            notes,
            value="PIN 4242",
            before=Observation(screenshot=ref),
            after=Observation(aria_snapshot='- textbox "Notes" [ref=e3]: PIN 4242'),
        )
    )
    changes = session.redact_field("#notes", services.media)
    raw = services.trajectories.raw_events(session.trajectory_id)
    assert raw[0].before is not None and raw[0].before.screenshot == shot  # before the typing
    assert raw[1].is_secret and raw[1].before is not None and raw[1].before.screenshot is None
    assert raw[1].after is not None and raw[1].after.aria_snapshot == (
        f'- textbox "Notes" [ref=e3]: {REDACTED}'
    )
    assert sorted(changes) == [1] and changes[1].is_secret
    assert not services.media.exists(ref)


def test_recovery_never_ends_a_recording_before_it_began(home: Path) -> None:
    began = T0 + timedelta(hours=1)  # events stamped by a clock behind the recorder's
    with open_services(load_settings(), write=True) as services:
        session = services.trajectories.start_recording(Trajectory(intent="Skew", started_at=began))
        session.add(_ev(0, ActionKind.FILL, FIELD, value="Jane"))
        trajectory_id = session.trajectory_id
    with open_services(load_settings(), write=True) as services:
        recovered = services.trajectories.get(trajectory_id)
    assert recovered.incomplete and recovered.ended_at == began
    assert [e.value for e in recovered.events] == ["Jane"]
