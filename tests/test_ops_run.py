"""Which version a run uses and how it may behave: one rule for the command line, the run
window, a batch, the tray and the hand-off (desktop_app/ops/run.py), over a real library."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES

from desktop_app.app import Services, open_services
from desktop_app.core.errors import NotFoundError, TransitionError
from desktop_app.core.models.run import RunTrigger
from desktop_app.core.models.workflow import Workflow
from desktop_app.ops.run import RunPlan, replay_options, version_to_run
from desktop_app.settings import load_settings


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as opened:
        yield opened


def _workflow() -> Workflow:
    text = (EXAMPLES / "create-contact.workflow.json").read_text(encoding="utf-8")
    return Workflow.model_validate_json(text)


def _two_versions(services: Services) -> Workflow:
    """Version 1 approved, version 2 a draft."""
    workflow = _workflow()
    services.workflows.save(workflow, actor="tester")
    services.workflows.approve(workflow.id, actor="tester", version=1)
    changed = workflow.model_copy(update={"description": "Now with a second version"})
    services.workflows.save(changed, actor="tester")
    return workflow


def test_the_approved_version_runs_unless_a_draft_or_a_number_is_asked_for(
    services: Services,
) -> None:
    workflow = _two_versions(services)
    assert version_to_run(services.workflows, workflow.name).version == 1
    assert version_to_run(services.workflows, workflow.id, allow_draft=True).version == 2
    assert version_to_run(services.workflows, workflow.id, version=2).version == 2
    with pytest.raises(NotFoundError):
        version_to_run(services.workflows, workflow.id, version=7)


def test_a_workflow_without_an_approved_version_does_not_run_by_default(
    services: Services,
) -> None:
    workflow = _workflow()
    services.workflows.save(workflow, actor="tester")
    with pytest.raises(TransitionError, match="no approved version"):
        version_to_run(services.workflows, workflow.id)
    assert version_to_run(services.workflows, workflow.id, allow_draft=True).version == 1


def test_an_archived_workflow_never_runs_however_it_is_asked_for(services: Services) -> None:
    workflow = _two_versions(services)
    services.workflows.archive(workflow.id, actor="tester")
    for asked in ({}, {"allow_draft": True}, {"version": 1}, {"version": 2}):
        with pytest.raises(TransitionError, match=r"archived|no approved version"):
            version_to_run(services.workflows, workflow.id, **asked)  # type: ignore[arg-type]
    services.workflows.restore(workflow.id, actor="tester")
    assert version_to_run(services.workflows, workflow.id, allow_draft=True).version >= 2


def test_run_options_come_from_the_settings_and_the_persons_choices(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_CONFIRM_IRREVERSIBLE", "false")
    monkeypatch.setenv("PROCEDURA_LLM_MAX_CALLS_PER_STEP", "5")
    monkeypatch.setenv("PROCEDURA_REPLAY_PATIENCE_S", "7")
    settings = load_settings()
    tray = replay_options(settings, trigger=RunTrigger.TRAY)
    assert tray.assume_yes  # as the setting says: no confirmation asked
    assert (tray.max_llm_calls_per_step, tray.patience_s, tray.trigger) == (5, 7, RunTrigger.TRAY)
    asked = replay_options(settings, trigger=RunTrigger.GUI, confirm=True, use_llm=False)
    assert not asked.assume_yes and not asked.use_llm  # the run window's boxes win


def test_a_plan_handed_to_the_app_carries_the_choices_and_no_secret(services: Services) -> None:
    workflow = _two_versions(services)
    version = version_to_run(services.workflows, workflow.id, version=2)
    options = replay_options(
        services.settings, trigger=RunTrigger.CLI, confirm=False, use_llm=False
    )
    plan = RunPlan.of(version, {"name": "Ada"}, options, headless=True, interactive=False)
    wire = json.loads(plan.model_dump_json())
    assert "secrets" not in wire  # they travel beside the plan, never in it
    received = RunPlan.model_validate(wire)
    assert received.version_in(services.workflows).version == 2
    again = received.options(services.settings)
    assert (again.assume_yes, again.use_llm, again.trigger) == (True, False, RunTrigger.CLI)
    assert (received.values, received.headless, received.interactive) == (
        {"name": "Ada"},
        True,
        False,
    )
    # Archived meanwhile: the app refuses what the plan names.
    services.workflows.archive(workflow.id, actor="tester")
    with pytest.raises(TransitionError, match="archived"):
        received.version_in(services.workflows)
    with pytest.raises(ValueError, match="version"):
        RunPlan.model_validate({**wire, "version": 0})
