"""Replay waits for the app the way a person does: a page that attaches its handlers a moment
after ``load`` (by a timer, or by a script a loader fetches late) gets its input, a save
debounced or sent by a late request is made before the browser closes, an action the page
ignores is done once more when it has caught up and fails when it still does nothing, and an
item the app did not keep is not "succeeded". Pages of our own; the judge is what the app
wrote to its storage (mirrored to the server as it was written) after the browser closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from late_app import MODES_TO_WAIT_FOR, STORED, ListHandler, add_item
from replay_support import approve, run, services, serving

from desktop_app.core.models.run import RunStatus, StepStatus
from desktop_app.core.models.workflow import FillStep, GotoStep, PressStep

pytestmark = pytest.mark.slow


@pytest.fixture
def site() -> Iterator[str]:
    STORED.clear()
    with serving(ListHandler) as url:
        yield url


@pytest.mark.parametrize("mode", MODES_TO_WAIT_FOR)
def test_an_item_is_added_and_kept_whenever_the_app_gets_ready_or_saves(
    site: str, mode: str
) -> None:
    with services() as sv:
        result = run(sv, approve(sv, add_item(mode)), site, values={"item": "Oat milk"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    # The judge: what the app wrote to its storage, with the browser closed.
    assert STORED and STORED[-1] == ["Oat milk"], STORED
    # The time spent waiting for the app is in the run record.
    waited = sum(s.waited_ms for s in result.run.steps) + result.run.closing_wait_ms
    assert waited > 0


def test_a_page_ready_only_after_it_ignored_the_key_gets_it_once_more(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, add_item("lazy")), site, values={"item": "Eggs"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert STORED and STORED[-1] == ["Eggs"], STORED
    press = result.run.steps[2]
    assert "did it again" in (press.detail or ""), press.detail


def test_a_key_the_page_silently_ignores_fails_its_step(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, add_item("dead", timeout_s=3)), site, values={"item": "Tea"})
    assert result.run.status is RunStatus.FAILED
    press = result.run.steps[2]
    assert press.status is StepStatus.FAILED
    assert "did not react" in (press.error or ""), press.error
    assert not STORED


def test_an_item_the_app_did_not_keep_is_not_succeeded(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, add_item("forgetful")), site, values={"item": "Bread"})
    assert result.run.status is RunStatus.UNVERIFIED, result.run.status
    assert "after the page was loaded again, expected" in (result.run.error or "")
    assert "the app may not have kept" in (result.run.error or "")


def test_a_page_that_asks_to_stay_is_not_left_and_not_succeeded(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, add_item("unsaved")), site, values={"item": "Jam"})
    assert result.run.status is RunStatus.UNVERIFIED, result.run.status
    assert "the page asked to stay" in (result.run.error or ""), result.run.error


def test_an_item_the_app_kept_in_its_storage_is_seen_again_after_a_reload(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, add_item("ready")), site, values={"item": "Rice"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert STORED[-1] == ["Rice"]


async def _add_oat_milk(do: Any) -> None:
    field = do.page.get_by_role("textbox", name="New item")
    await do.type_into(field, "Oat milk")
    await do.press(field, "Enter")
    await do.page.get_by_text("Oat milk").wait_for()


def test_a_recorded_key_the_page_reacted_to_must_get_a_reaction_again(site: str) -> None:
    import asyncio

    from demonstrations import MACHINE, Scenario
    from recording_support import record_demonstration

    from desktop_app.core.induction.heuristic import induce

    scenario = Scenario("add", "own", "", "Add 'Oat milk' to the shopping list", _add_oat_milk)
    with services() as sv:
        trajectory = asyncio.run(record_demonstration(sv, f"{site}/?mode=ready", scenario, MACHINE))
        workflow = induce(trajectory).workflow
        press = next(s for s in workflow.steps if isinstance(s, PressStep))
        fill = next(s for s in workflow.steps if isinstance(s, FillStep))
        assert press.reacts, "the list grew when Enter was pressed"
        assert not fill.reacts, "what typing shows depends on what is typed"
        # Replayed where the page ignores the key: the run stops there, nothing is kept.
        STORED.clear()
        dead = workflow.model_copy(
            update={
                "steps": tuple(
                    s.model_copy(update={"url": f"{site}/?mode=dead"})
                    if isinstance(s, GotoStep)
                    else s
                    for s in workflow.steps
                )
            }
        )
        result = run(sv, approve(sv, dead), site, values={workflow.parameters[0].name: "Tea"})
    assert result.run.status is RunStatus.FAILED
    assert "did not react" in (result.run.error or ""), result.run.error
    assert not STORED
