"""Replay against the real demo app in headless Chromium: the happy path and the run record."""

from __future__ import annotations

import pytest
from fakes.openai_server import FakeOpenAIServer
from replay_support import approved, run, services

from desktop_app.core.models.run import Resolution, RunStatus, StepStatus
from desktop_app.core.replay.engine import SUCCESS_TITLE
from desktop_app.demo_site import DemoSite

pytestmark = pytest.mark.slow


def test_create_contact_replays_with_new_values_and_no_llm_call(
    llm: FakeOpenAIServer,
) -> None:
    with DemoSite() as site, services() as sv:
        version = approved(sv, "create-contact")
        result = run(
            sv,
            version,
            site.url,
            values={"full_name": "Bob Smith", "email": "bob@example.test", "company": "initech"},
            use_llm=True,
        )
        assert result.run.status is RunStatus.SUCCEEDED, result.run.error
        bob = [c for c in site.contacts() if c["full_name"] == "Bob Smith"]
        assert bob and bob[0]["company"] == "Initech" and bob[0]["email"] == "bob@example.test"
        assert all(
            s.resolution in (Resolution.DIRECT, Resolution.NOT_NEEDED) for s in result.run.steps
        )
        assert result.run.llm_calls == 0 and llm.requests_to("/v1/chat/completions") == []
        assert result.learned.proposed is None  # nothing healed: nothing to review
        stored = sv.runs.get_run(result.run.id)
        # Every step, then the check that the task was done.
        assert (
            stored.status is RunStatus.SUCCEEDED
            and len(stored.steps) == len(version.workflow.steps) + 1
        )
        assert stored.steps[-1].title == SUCCESS_TITLE


def test_every_recorded_task_replays_on_the_original(llm: FakeOpenAIServer) -> None:
    with DemoSite() as site, services() as sv:
        for task in ("expense-report", "filter-orders", "open-contact"):
            version = approved(sv, task)
            # The expense report is submitted (irreversible): unattended, that takes --yes.
            result = run(sv, version, site.url, use_llm=True, assume_yes=True)
            assert result.run.status is RunStatus.SUCCEEDED, (task, result.run.error)
            assert result.run.llm_calls == 0, task
        assert any(r["title"] == "Client visit Berlin" for r in site.expense_reports())
        assert llm.requests_to("/v1/chat/completions") == []


def test_a_step_whose_element_is_missing_fails_with_a_report_and_a_screenshot() -> None:
    with DemoSite() as site, services() as sv:
        version = approved(sv, "open-contact")
        result = run(sv, version, site.url, values={"search_contacts": "Nobody Here"})
        record = result.run
        assert record.status is RunStatus.FAILED
        assert [s.status for s in record.steps][-1] is StepStatus.FAILED
        failed = record.steps[-1]
        assert failed.title == "Click 'Nobody Here'"
        assert "could not find the element" in (failed.error or "")
        assert "Nobody Here" in (record.error or "")
        assert failed.screenshot is not None and sv.media.exists(failed.screenshot)
        assert sv.runs.get_run(record.id).status is RunStatus.FAILED
        assert result.learned.proposed is None
