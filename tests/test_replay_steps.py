"""Step kinds beyond the recorded ones: calls into other workflows, extracted values, gotos."""

from __future__ import annotations

import pytest
from replay_support import ScriptedPerson, approved, run, services

from desktop_app.core.induction.compose import compose
from desktop_app.core.models.run import RunStatus, StepStatus
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AssertStep,
    ExtractStep,
    GotoStep,
    TextPresent,
    Workflow,
)
from desktop_app.core.replay.person import PersonAnswer, Question
from desktop_app.demo_site import DemoSite

pytestmark = pytest.mark.slow


def test_a_call_step_runs_the_approved_sub_workflow_with_its_arguments() -> None:
    with DemoSite() as site, services() as sv:
        contact = approved(sv, "create-contact")
        sign_in = contact.workflow.model_copy(
            update={
                "id": "signin0000000000000000000000000a",
                "name": "Sign in to Acme CRM",
                "steps": contact.workflow.steps[:4],
                "parameters": tuple(
                    p for p in contact.workflow.parameters if p.name in ("username", "password")
                ),
                "intent_template": None,
                "success": (),
            }
        )
        saved = sv.workflows.save(Workflow.model_validate(sign_in.model_dump()), actor="tester")
        sv.workflows.approve(sign_in.id, actor="tester", version=saved.version.version)
        composed = compose(contact.workflow, [sign_in]).workflow
        assert composed.steps[0].kind == "call"
        version = sv.workflows.approve(
            composed.id,
            actor="tester",
            version=sv.workflows.save(composed, actor="tester").version.version,
        )
        result = run(sv, version, site.url, values={"full_name": "Fay Gu"})
        assert result.run.status is RunStatus.SUCCEEDED, result.run.error
        inner = [s for s in result.run.steps if "/" in s.step_id]
        assert [s.title for s in inner][:2] == [
            "Open Sign in — Acme CRM",
            "Fill 'Username' with demo",
        ]
        assert any(c["full_name"] == "Fay Gu" for c in site.contacts())


def test_an_extracted_value_is_used_by_later_steps() -> None:
    with DemoSite() as site, services() as sv:
        contact = approved(sv, "create-contact").workflow
        heading = Target(
            locators=(Locator(strategy=LocatorStrategy.ROLE, value="heading", name="{full_name}"),)
        )
        extra = (
            ExtractStep(title="Read the contact's name", target=heading, variable="shown_name"),
            AssertStep(
                title="The flash names it",
                condition=TextPresent(text="Contact {shown_name} created"),
            ),
        )
        workflow = Workflow.model_validate(
            contact.model_copy(update={"steps": (*contact.steps, *extra)}).model_dump()
        )
        saved = sv.workflows.save(workflow, actor="tester")
        version = sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)
        result = run(sv, version, site.url, values={"full_name": "Gil Ho"})
        assert result.run.status is RunStatus.SUCCEEDED, result.run.error
        read = next(s for s in result.run.steps if s.title == "Read the contact's name")
        assert "shown_name = 'Gil Ho'" in (read.detail or "")


def test_a_goto_outside_the_workflows_domains_is_refused() -> None:
    with DemoSite() as site, services() as sv:
        contact = approved(sv, "create-contact").workflow
        away = GotoStep(title="Open elsewhere", url="http://evil.example/collect")
        workflow = contact.model_copy(update={"steps": (contact.steps[0], away)})
        saved = sv.workflows.save(workflow, actor="tester")
        version = sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)
        result = run(sv, version, site.url)
        assert result.run.status is RunStatus.FAILED
        assert result.run.steps[-1].status is StepStatus.FAILED
        assert "outside the workflow's domains" in (result.run.steps[-1].error or "")


def test_a_wrong_element_that_leads_elsewhere_is_not_followed_by_more_guesses() -> None:
    def wrong_pick(question: Question) -> PersonAnswer:
        contacts = next(c for c in question.choices if c.label == 'the "Contacts" link')
        return PersonAnswer(action="pick", handle=contacts.handle)

    with DemoSite() as site, services() as sv:
        version = approved(sv, "open-contact")
        person = ScriptedPerson(wrong_pick)
        result = run(
            sv, version, site.url, values={"search_contacts": "Nobody Here"}, person=person,
            patience_s=0.5,
        )  # fmt: skip
        assert result.run.status is RunStatus.FAILED
        last = result.run.steps[-1]
        assert "another element is not tried on another page" in (last.error or "")
        assert len(person.questions) == 1
        opened = [a for a in site.actions() if a["element"].startswith("link:/contacts/")]
        assert opened == []  # never "Maria Garcia", the recorded contact
        assert result.learned.proposed is None and result.learned.experiences == 0


def test_a_parameterised_target_is_matched_with_this_runs_value() -> None:
    from desktop_app.core.replay.render import fingerprint_for_run

    with services() as sv:
        workflow = approved(sv, "open-contact").workflow
    step = workflow.steps[-1]
    target = step.target_or_none
    assert target is not None and target.fingerprint is not None
    assert target.fingerprint.name == "Maria Garcia"
    seen = fingerprint_for_run(target, workflow, {"search_contacts": "Hannah Müller"})
    assert seen is not None and seen.name == "Hannah Müller" and seen.text == "Hannah Müller"
    undefaulted = workflow.model_copy(
        update={
            "parameters": tuple(
                p.model_copy(update={"default": None}) if p.name == "search_contacts" else p
                for p in workflow.parameters
            )
        }
    )
    blind = fingerprint_for_run(target, undefaulted, {"search_contacts": "Hannah Müller"})
    assert blind is not None and blind.name is None and blind.text is None
