"""Desktop steps that know their element: a GTK form recorded through its accessibility tree at
machine speed, a Tk form (no tree) by images, each replayed into a moved, re-laid-out (other row
spacing, other font size) and doubled form; judged by what each form saved (Xvfb, a private
accessibility bus, xdotool as the person)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from desktop_support import (
    Form,
    GtkForm,
    a11y_session,
    act,
    approved_as_is,
    grep,
    needs_a11y,
    needs_xvfb,
    record,
    until,
    xvfb,
)

from desktop_app.adapters.desktop.recorder import DesktopRecorder
from desktop_app.app import Services, open_services, replay
from desktop_app.core.models import ActionKind, Event, ParameterType, SecretPlaceholder
from desktop_app.core.models.run import Run, RunStatus
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.workflow import DesktopTypeStep, WorkflowVersion
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.settings import load_settings

pytestmark = [pytest.mark.slow, needs_xvfb]

SECRET = "s3cret-Pa55word"
OPTIONS = ReplayOptions(use_llm=False, assume_yes=True, time_limit_s=90)


@pytest.fixture
def desktop() -> Iterator[str]:
    with xvfb(), a11y_session() as bus:
        yield bus


async def _fill(services: Services, form: Any, *, mark_password: bool) -> Any:
    """The person fills the form at machine speed: no pause between a click and the typing
    or between the last key and the click on Save."""

    async def scenario(recorder: DesktopRecorder, seen: list[Event]) -> None:
        if mark_password:
            recorder.mark_sensitive_region("Contact form", form.box("password"))
        x, y, _, _ = form.geometry()
        for part, text in (
            ("name", "Jane Doe"),
            ("email", "jane@example.test"),
            ("password", SECRET),
        ):
            px, py = form.point(part)
            await act("mousemove", str(x + px), str(y + py), "click", "1", "type", text)
        px, py = form.point("save")
        await act("mousemove", str(x + px), str(y + py), "click", "1")
        await asyncio.to_thread(form.saved)
        await until(lambda: sum(e.point is not None for e in seen) == 4, "the click on Save")

    return await record(services, scenario)


def _replay(services: Services, version: WorkflowVersion, values: tuple[str, str, str]) -> Run:
    workflow = version.workflow
    plain = [p.name for p in workflow.parameters if p.type is not ParameterType.SECRET]
    secret = next(p.name for p in workflow.parameters if p.type is ParameterType.SECRET)
    params = bind_parameters(
        workflow, dict(zip(plain, values[:2], strict=True)), secrets={secret: values[2]}
    )
    return asyncio.run(replay(services, version, params, options=OPTIONS)).run


def _strategies(run: Run) -> set[str]:
    return {s.locator.strategy.value for s in run.steps if s.locator is not None}


@needs_a11y
def test_a_gtk_form_recorded_at_machine_speed_replays_by_its_tree_moved_relaid_and_doubled(
    desktop: str, home: Path, tmp_path: Path
) -> None:
    with open_services(load_settings(), write=True) as services:
        with GtkForm(tmp_path / "recorded.json") as form:
            trajectory = asyncio.run(_fill(services, form, mark_password=False))

        typed = [e for e in trajectory.events if e.action is ActionKind.DESKTOP_TYPE]
        assert [e.value for e in typed][:2] == ["Jane Doe", "jane@example.test"]
        # The password field says it is one: its typing is a secret without anything marked.
        assert isinstance(typed[2].value, SecretPlaceholder)
        assert grep(home, SECRET) == [] and grep(tmp_path, SECRET) == []
        fields = [e.target.locators[0].describe() for e in typed if e.target is not None]
        assert fields == [
            'accessible=text[name="Name"]',  # a labelled-by relation
            'accessible=text[name="Email"]',  # the label on its row: no relation
            'accessible=password text[name="Password"]',
        ]
        version = approved_as_is(services, trajectory)
        steps = version.workflow.steps
        assert all(s.target is not None for s in steps if isinstance(s, DesktopTypeStep))

        for n, where in enumerate(
            ({"x": 330, "y": 260}, {"x": 90, "y": 120, "relayout": True}, {"scale": 2})
        ):
            values = (f"Ann Lee {n}", f"ann{n}@example.test", f"an0ther-Secret-{n}")
            with GtkForm(tmp_path / f"replay{n}.json", **where) as target:
                run = _replay(services, version, values)
                saved = target.saved()
            assert run.status is not RunStatus.FAILED, (where, run.error)
            assert saved == {
                "name": values[0],
                "email": values[1],
                "password_length": len(values[2]),
            }, where
            assert _strategies(run) == {LocatorStrategy.ACCESSIBLE.value}, where


def test_a_tk_form_without_a_tree_replays_by_element_sized_anchors_relaid_and_doubled(
    desktop: str, home: Path, tmp_path: Path
) -> None:
    with open_services(load_settings(), write=True) as services:
        with Form(tmp_path / "recorded.json") as form:
            trajectory = asyncio.run(_fill(services, form, mark_password=True))
        clicks = [e for e in trajectory.events if e.action is ActionKind.DESKTOP_CLICK]
        anchors = [e.target.fingerprint.bbox for e in clicks if e.target and e.target.fingerprint]
        # Sized to the element clicked: no anchor takes in a neighbouring row.
        assert anchors and all(box is not None and box.height <= 44 for box in anchors)
        version = approved_as_is(services, trajectory)

        values = ("Bo Chen", "bo@example.test", "an0ther-Secret")
        with Form(tmp_path / "relaid.json", relayout=True, x=90, y=120) as target:
            run = _replay(services, version, values)
            saved = target.saved()
        assert run.status is not RunStatus.FAILED, run.error
        assert saved == {"name": values[0], "email": values[1], "password_length": len(values[2])}
        assert _strategies(run) == {LocatorStrategy.IMAGE_ANCHOR.value}

        # Twice the size: no one scale fits a whole row (its text and its borders grow apart);
        # each row is found by its label, the field beside it.
        values = ("Cy Dee", "cy@example.test", "yet-an0ther-Secret")
        with Form(tmp_path / "doubled.json", scale=2) as target:
            run = _replay(services, version, values)
            saved = target.saved()
        assert run.status is not RunStatus.FAILED, run.error
        assert saved == {"name": values[0], "email": values[1], "password_length": len(values[2])}
        assert any("found by its label" in (s.detail or "") for s in run.steps)


@needs_a11y
def test_two_fields_alike_stop_the_run_before_anything_is_typed_into_either(
    desktop: str, home: Path, tmp_path: Path
) -> None:
    with open_services(load_settings(), write=True) as services:
        with GtkForm(tmp_path / "recorded.json") as form:
            recorded = asyncio.run(_fill(services, form, mark_password=False))
        version = approved_as_is(services, recorded)

        # The form now has two fields labelled "Email": neither the tree (role, name and
        # ancestors alike) nor the image (two rows alike) may pick one by its position.
        with GtkForm(tmp_path / "twins.json", twins=True) as target:
            run = _replay(services, version, ("Di Eve", "di@example.test", "an0ther-Secret"))
            saved = target.out.exists()
        assert run.status is RunStatus.FAILED
        failed = next(s for s in run.steps if s.error)
        assert "not telling them apart by position" in failed.error, failed.error
        assert not saved  # Save was never clicked: nothing was done with a guessed field
