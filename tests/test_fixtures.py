"""The recorded fixtures later features build on are valid, complete and free of secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO
from demo_tasks import TASKS

from desktop_app.core.documents import load_trajectory
from desktop_app.core.models import ActionKind, LocatorStrategy
from desktop_app.demo_site import DEMO_PASSWORD

DATA = REPO / "tests" / "data"


@pytest.mark.parametrize("name", sorted(TASKS))
def test_fixture_is_a_clean_recording_of_its_task(name: str) -> None:
    path = DATA / f"{name}.trajectory.json"
    assert path.exists(), "run: python scripts/record_fixtures.py"
    text = path.read_text()
    assert DEMO_PASSWORD not in text
    trajectory = load_trajectory(text, source=path.name)
    assert trajectory.intent == TASKS[name][0]
    assert not trajectory.incomplete
    events = trajectory.events
    assert events[0].action is ActionKind.NAVIGATE and events[0].typed is True
    assert events[2].is_secret  # the password, as a placeholder
    for event in events:
        if event.target is not None:
            strategies = {loc.strategy for loc in event.target.locators}
            assert {LocatorStrategy.CSS, LocatorStrategy.XPATH} <= strategies
            assert event.target.fingerprint is not None
    assert events[-1].after is not None and events[-1].after.aria_snapshot


def test_fixtures_cover_the_demo_tasks() -> None:
    kinds = {
        p.name: [e.action for e in load_trajectory(p.read_bytes()).events]
        for p in sorted(Path(DATA).glob("*.trajectory.json"))
    }
    assert ActionKind.SELECT in kinds["filter-orders.trajectory.json"]
    assert kinds["expense-report.trajectory.json"].count(ActionKind.FILL) >= 7
    assert kinds["create-contact.trajectory.json"][-2:] == [ActionKind.CHECK, ActionKind.CLICK]
