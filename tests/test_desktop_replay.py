"""A task done by hand in a desktop application: recorded, induced, approved, replayed with new
values, in a window that moved and a form whose layout shifted (Xvfb, xdotool as the person)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from desktop_support import (
    EMAIL,
    NAME,
    PASSWORD,
    PASSWORD_ROW,
    SAVE,
    SECRET,
    Form,
    act,
    approved_as_is,
    click_at,
    contact_form,
    grep,
    needs_xvfb,
    record,
    until,
    xvfb,
)
from fakes.openai_server import FakeOpenAIServer

from desktop_app.adapters.desktop.recorder import DesktopRecorder
from desktop_app.app import Services, open_services, replay
from desktop_app.core.models import Event, ParameterType, Trajectory
from desktop_app.core.models.run import Resolution, RunStatus
from desktop_app.core.models.workflow import (
    DesktopClickStep,
    HotkeyStep,
    Workflow,
    WorkflowVersion,
)
from desktop_app.core.replay.engine import NO_SUCCESS_CHECK as NO_CHECK
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

REPLAY_SECRET = "an0ther-Secret"


@pytest.fixture
def desktop() -> Iterator[str]:
    with xvfb() as display:
        yield display


async def _demonstrate(services: Services, form: Form) -> Trajectory:
    """The person fills the form once: name, email, the password (its row marked sensitive)."""

    async def scenario(recorder: DesktopRecorder, seen: list[Event]) -> None:
        recorder.mark_sensitive_region("Contact form", PASSWORD_ROW)
        for point, text in ((NAME, "Jane Doe"), (EMAIL, "jane@example.test"), (PASSWORD, SECRET)):
            await act(*click_at(form, point, "click", "1"))
            await act("type", text)
        await act(*click_at(form, SAVE, "mousedown", "1", "sleep", "0.1", "mouseup", "1"))
        await asyncio.to_thread(form.saved)
        await until(lambda: sum(e.point is not None for e in seen) == 4, "the click on Save")

    return await record(services, scenario)


async def _replay(services: Services, version: WorkflowVersion, name: str, email: str) -> Any:
    workflow = version.workflow
    names = [p.name for p in workflow.parameters]
    secret = next(p.name for p in workflow.parameters if p.type is ParameterType.SECRET)
    plain = [n for n in names if n != secret]
    params = bind_parameters(
        workflow, dict(zip(plain, (name, email), strict=True)), secrets={secret: REPLAY_SECRET}
    )
    result = await replay(services, version, params, options=ReplayOptions(use_llm=True))
    return result.run


async def _replay_as_is(services: Services, version: WorkflowVersion) -> Any:
    """*version* (no parameters) replayed with the LLM allowed: its run."""
    params = bind_parameters(version.workflow, {})
    return (await replay(services, version, params, options=ReplayOptions(use_llm=True))).run


def _clicks(run: Any) -> list[Any]:
    return [s for s in run.steps if s.title.startswith("Click")]


@needs_xvfb
def test_recorded_then_replayed_with_new_values_after_the_window_moved_and_the_layout_shifted(
    desktop: str, home: Path, tmp_path: Path
) -> None:
    with open_services(load_settings(), write=True) as services:
        with contact_form(tmp_path / "recorded.json") as form:
            trajectory = asyncio.run(_demonstrate(services, form))
        version = approved_as_is(services, trajectory)
        workflow = version.workflow
        assert [s.kind for s in workflow.steps] == [
            "desktop_click", "desktop_type", "desktop_click", "desktop_type",
            "desktop_click", "desktop_type", "desktop_click",
        ]  # fmt: skip
        kinds = [p.type for p in workflow.parameters]
        assert kinds.count(ParameterType.SECRET) == 1 and len(kinds) == 3
        assert all(s.window_title == "Contact form" for s in workflow.steps)  # type: ignore[union-attr]

        # The window elsewhere on the screen: the points are relative to it.
        with contact_form(tmp_path / "moved.json", x=330, y=260) as form:
            moved = asyncio.run(_replay(services, version, "Ann Lee", "ann@example.test"))
            # Nothing recorded on the desktop shows the task was done (no success check is
            # induced there): the run says so rather than "succeeded"; the form's data shows it.
            assert moved.status is RunStatus.UNVERIFIED, moved.error
            assert moved.error == NO_CHECK
            assert form.saved() == {
                "name": "Ann Lee",
                "email": "ann@example.test",
                "password_length": len(REPLAY_SECRET),
            }
        assert {s.resolution for s in _clicks(moved)} == {Resolution.DIRECT}
        assert moved.llm_calls == 0

        # And with a banner above the fields and Save moved to the left: the image anchors
        # find where each spot went.
        with contact_form(tmp_path / "shifted.json", x=90, y=120, shifted=True) as form:
            shifted = asyncio.run(_replay(services, version, "Bo Chen", "bo@example.test"))
            assert shifted.status is RunStatus.UNVERIFIED and shifted.error == NO_CHECK
            assert form.saved()["name"] == "Bo Chen"
            assert form.saved()["email"] == "bo@example.test"
        healed = [s for s in shifted.steps if s.resolution is Resolution.FINGERPRINT]
        assert len(healed) >= 2 and all("layout changed" in (s.detail or "") for s in healed)
        assert shifted.llm_calls == 0

        # The repairs are proposed as a new version for review: each healed click with the
        # point it clicked and its anchor where it was found (cut afresh there; Save, clicked
        # after the password was typed, keeps its recorded image: nothing is cut once a secret
        # could show); the approved version is untouched.
        assert shifted.proposed_version == version.version + 1
        proposed = services.workflows.get(workflow.id, shifted.proposed_version)
        assert proposed.status.value == "in_review"
        assert "Repair proposed by run" in proposed.change_note
        assert "by fingerprint" in proposed.change_note
        titles = {s.title for s in healed}
        assert workflow.steps[-1].title in titles  # Save
        for old, new in zip(workflow.steps, proposed.workflow.steps, strict=True):
            assert isinstance(old, type(new))
            if old.title in titles:
                assert isinstance(old, DesktopClickStep) and isinstance(new, DesktopClickStep)
                assert new.point != old.point and new.target != old.target
                assert new.target is not None and new.target.fingerprint is not None
                assert old.target is not None and old.target.fingerprint is not None
                assert new.target.fingerprint.bbox != old.target.fingerprint.bbox
            else:
                assert new == old
        assert services.workflows.get(workflow.id, version.version) == version

        # The approved version again, on the same drift: each healed click is taken from
        # memory, the remembered anchor at its remembered spot (no search of the screen).
        with contact_form(tmp_path / "again.json", x=140, y=90, shifted=True) as form:
            again = asyncio.run(_replay(services, version, "Cy Diaz", "cy@example.test"))
            assert again.status is RunStatus.UNVERIFIED and again.error == NO_CHECK
            assert form.saved()["name"] == "Cy Diaz"
            assert form.saved()["email"] == "cy@example.test"
        remembered = {s.title for s in again.steps if s.resolution is Resolution.EXPERIENCE}
        assert remembered == titles
        # The same repair: the version already in review, no second one.
        assert again.proposed_version == proposed.version
        assert len(services.workflows.versions(workflow.id)) == 2

        # The proposed version approved, on the shifted form: every click as recorded.
        approved = services.workflows.approve(
            workflow.id, actor="analyst", version=proposed.version
        )
        with contact_form(tmp_path / "fixed.json", x=60, y=200, shifted=True) as form:
            fixed = asyncio.run(_replay(services, approved, "Di Eng", "di@example.test"))
            assert fixed.status is RunStatus.UNVERIFIED and fixed.error == NO_CHECK
            assert form.saved()["name"] == "Di Eng"
            assert form.saved()["email"] == "di@example.test"
        assert {s.resolution for s in _clicks(fixed)} == {Resolution.DIRECT}

    # Neither the password typed while recording nor the one given to the replays is anywhere.
    assert grep(home, SECRET) == [] and grep(home, REPLAY_SECRET) == []


@needs_xvfb
def test_where_no_anchor_matches_a_vision_model_places_the_click(
    desktop: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer() as llm:
        monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("PROCEDURA_LLM_MODEL", "fake-vision")
        monkeypatch.setenv("PROCEDURA_LLM_VISION", "true")
        with open_services(load_settings(), write=True) as services:
            with contact_form(tmp_path / "recorded.json") as form:

                async def click_save(recorder: DesktopRecorder, seen: list[Event]) -> None:
                    await act(
                        *click_at(form, SAVE, "mousedown", "1", "sleep", "0.1", "mouseup", "1")
                    )
                    await until(lambda: seen, "the click on Save")

                trajectory = asyncio.run(record(services, click_save))
            version = approved_as_is(services, trajectory)
            (step,) = version.workflow.steps
            assert isinstance(step, DesktopClickStep) and step.target is not None
            # The Save button is drawn differently now (another theme): its anchor matches
            # nothing, so only the model, shown the window, can say where it went.
            blank = services.media.put(_striped_png(), "png")
            other = step.target.model_copy(
                update={"locators": (step.target.locators[0].model_copy(update={"value": blank}),)}
            )
            changed = version.workflow.model_copy(
                update={"steps": (step.model_copy(update={"target": other}),)}
            )
            saved = services.workflows.save(changed, actor="tester")
            version = services.workflows.approve(
                changed.id, actor="tester", version=saved.version.version
            )
            llm.default_chat = json.dumps(
                {"found": True, "x": SAVE[0], "y": SAVE[1], "reason": "the Save button"}
            )
            with contact_form(tmp_path / "replayed.json", x=200, y=150) as form:
                run = asyncio.run(_replay_as_is(services, version))
                assert run.status is RunStatus.UNVERIFIED and run.error == NO_CHECK
                assert form.saved()["name"] == ""  # Save was clicked
        (done,) = run.steps
        assert done.resolution is Resolution.LLM and done.llm_calls == 1
        (request,) = llm.requests_to("/v1/chat/completions")
        parts = request.json["messages"][-1]["content"]
        images = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        assert len(images) == 2 and all(i.startswith("data:image/png;base64,") for i in images)
        screen = base64.b64decode(images[1].split(",", 1)[1])
        assert screen.startswith(b"\x89PNG")

        # What the model found is proposed for review (the spot it named, with an anchor cut
        # there), and remembered: the same drift again, elsewhere on the screen, costs no call.
        with open_services(load_settings(), write=True) as services:
            assert run.proposed_version == version.version + 1
            proposed = services.workflows.get(version.workflow_id, run.proposed_version)
            (new,) = proposed.workflow.steps
            assert isinstance(new, DesktopClickStep) and new.target is not None
            assert new.point == step.point  # the model named the recorded spot
            assert "Found by the LLM: check each such element" in proposed.change_note
            (anchor,) = [loc for loc in new.target.locators if loc.strategy.value == "image_anchor"]
            assert anchor.value != blank
            assert services.media.get(anchor.value).startswith(b"\x89PNG")
            with contact_form(tmp_path / "again.json", x=90, y=60) as form:
                again = asyncio.run(_replay_as_is(services, version))
                assert form.saved()["name"] == ""  # Save was clicked
        (done,) = again.steps
        assert done.resolution is Resolution.EXPERIENCE and again.llm_calls == 0
        assert len(llm.requests_to("/v1/chat/completions")) == 1


def _striped_png() -> bytes:
    """A small image of stripes that appears nowhere on the test's screen."""
    import numpy as np

    from desktop_app.adapters.desktop.imaging import encode_png

    image = np.zeros((40, 80, 3), dtype=np.uint8)
    image[::4, :, 2] = 255
    image[:, ::6, 1] = 200
    return encode_png(image)


def test_without_a_display_a_desktop_workflow_says_so_and_runs_nothing(
    procedura: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    workflow = Workflow(
        name="Save the document",
        steps=(HotkeyStep(title="Press ctrl+s", window_title="Notes", keys=("ctrl", "s")),),
    )
    with open_services(load_settings(), write=True) as services:
        saved = services.workflows.save(workflow, actor="tester")
        services.workflows.approve(workflow.id, actor="tester", version=saved.version.version)
    result = procedura("run", workflow.id, "--non-interactive")
    assert result.exit_code != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "DISPLAY is not set" in errors[0], result.stderr
    with open_services(load_settings(), write=False) as services:
        assert services.runs.runs(workflow.id) == []  # nothing was run, nothing recorded
