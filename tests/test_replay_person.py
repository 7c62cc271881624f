"""Rung 5 and the irreversible-step gate: a person points at the element, confirms, or aborts."""

from __future__ import annotations

import pytest
from replay_support import ScriptedPerson, approved, run, services

from desktop_app.app import Services
from desktop_app.core.models.run import Resolution, RunStatus, StepStatus
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.replay.person import PersonAnswer, Question
from desktop_app.demo_site import DemoSite

pytestmark = pytest.mark.slow

#: Elements these tests look for are gone on purpose: do not wait long for them.
QUICK = 0.5


def _submit_by_role_only(sv: Services) -> WorkflowVersion:
    """The expense workflow whose Submit step knows its button only by role and name.

    On the relabeled site ("Send report") the recorded locator fails and the fingerprint finds
    the button: an irreversible step resolved by healing.
    """
    version = approved(sv, "expense-report")
    steps = []
    for step in version.workflow.steps:
        if step.title == "Click 'Submit report'":
            assert step.irreversible
            target = step.target_or_none
            assert target is not None
            only_role = tuple(x for x in target.locators if x.strategy is LocatorStrategy.ROLE)
            step = step.model_copy(
                update={"target": target.model_copy(update={"locators": only_role})}
            )
        steps.append(step)
    workflow = version.workflow.model_copy(update={"steps": tuple(steps)})
    saved = sv.workflows.save(workflow, actor="tester")
    return sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)


def test_an_irreversible_step_found_by_healing_waits_for_a_confirmation() -> None:
    with DemoSite(variants=["relabeled"]) as site, services() as sv:
        version = _submit_by_role_only(sv)
        refused = run(sv, version, site.url, patience_s=QUICK)  # non-interactive, no --yes
        assert refused.run.status is RunStatus.FAILED
        last = refused.run.steps[-1]
        assert last.title == "Click 'Submit report'" and last.status is StepStatus.FAILED
        assert "a run nobody attends does it only with --yes" in (last.error or "")
        assert site.expense_reports()[-1]["reference"] != "EXP-1001"  # nothing submitted

        declining = ScriptedPerson(lambda q: PersonAnswer(action="decline"))
        declined = run(sv, version, site.url, person=declining, patience_s=QUICK)
        assert declined.run.status is RunStatus.FAILED
        assert [q.kind for q in declining.questions] == ["confirm"]
        asked = declining.questions[0]  # the person is shown what would be clicked, in words
        assert asked.element == 'the "Send report" button', asked.element
        assert 'recorded on the "Submit report" button' in asked.message, asked.message
        assert asked.locator and "=" not in asked.element  # the locator only for the curious
        assert not any(r["reference"] == "EXP-1001" for r in site.expense_reports())

        confirming = ScriptedPerson(lambda q: PersonAnswer(action="confirm"))
        confirmed = run(sv, version, site.url, person=confirming, patience_s=QUICK)
        assert confirmed.run.status is RunStatus.SUCCEEDED, confirmed.run.error
        submit = next(s for s in confirmed.run.steps if s.title == "Click 'Submit report'")
        assert submit.resolution is Resolution.FINGERPRINT
        assert any(r["reference"] == "EXP-1001" for r in site.expense_reports())

        with_yes = run(sv, version, site.url, assume_yes=True, patience_s=QUICK)
        assert with_yes.run.status is RunStatus.SUCCEEDED
        submitted = next(s for s in with_yes.run.steps if s.title == "Click 'Submit report'")
        assert "--yes" in (submitted.detail or "")


#: Where a person points for each step of create-contact on the relabeled site.
_RELABELED: dict[str, str] = {
    "Fill 'Username'": 'the "User name" field',
    "Fill 'Password'": 'the "Password" field',
    "Fill 'Full name'": 'the "Name" field',
    "Fill 'Email'": 'the "Email address" field',
    "Select": 'the "Organisation" list',
    "Set 'Subscribe to newsletter'": 'the "Send me the newsletter" checkbox',
    "Click 'Sign in'": 'the "Log in" button',
    "Click 'Save'": 'the "Save contact" button',
}


def test_a_person_points_at_the_element_and_the_next_run_remembers() -> None:
    def pick_name_field(question: Question) -> PersonAnswer:
        wanted = next((v for k, v in _RELABELED.items() if question.step_title.startswith(k)), "")
        choice = next((c for c in question.choices if c.label == wanted), None)
        if choice is None:
            return PersonAnswer(action="skip")
        return PersonAnswer(action="pick", handle=choice.handle)

    with DemoSite(variants=["relabeled", "renamed-ids"]) as site, services() as sv:
        version = approved(sv, "create-contact", strip_fingerprints=True)
        person = ScriptedPerson(pick_name_field)
        first = run(
            sv, version, site.url, values={"full_name": "Di Pu"}, person=person, patience_s=QUICK
        )
        assert first.run.status is RunStatus.SUCCEEDED, first.run.error  # only such runs teach
        by_person = {s.title for s in first.run.steps if s.resolution is Resolution.PERSON}
        assert "Fill 'Full name' with Di Pu" in by_person
        assert "Fill 'Username' with demo" in by_person
        asked = len(person.questions)

        second = run(
            sv, version, site.url, values={"full_name": "Ed Qi"}, person=person, patience_s=QUICK
        )
        remembered = {s.title for s in second.run.steps if s.resolution is Resolution.EXPERIENCE}
        assert "Fill 'Full name' with Ed Qi" in remembered
        assert len(person.questions) - asked < asked  # fewer questions the second time


def test_abort_ends_the_run_as_aborted() -> None:
    with DemoSite(variants=["relabeled", "renamed-ids"]) as site, services() as sv:
        version = approved(sv, "create-contact", strip_fingerprints=True)
        person = ScriptedPerson(lambda q: PersonAnswer(action="abort"))
        result = run(sv, version, site.url, person=person, patience_s=QUICK)
        assert result.run.status is RunStatus.ABORTED
        assert sv.runs.get_run(result.run.id).status is RunStatus.ABORTED


def test_elements_are_named_as_seen_and_only_a_clear_best_is_suggested() -> None:
    from desktop_app.core.models.target import Fingerprint
    from desktop_app.core.replay.naming import PLAUSIBLE, clear_best, element_words

    assert element_words(Fingerprint(role="button", name="Delete")) == 'the "Delete" button'
    assert element_words(Fingerprint(tag="input", attributes={"placeholder": "Email"})) == (
        'the "Email" field'
    )
    assert element_words(Fingerprint(role="textbox"), fallback="Type the email") == (
        'the field of step "Type the email"'
    )
    assert (
        element_words(None, fallback="Click 'Delete'") == "the element of step \"Click 'Delete'\""
    )
    assert clear_best([0.27, 0.2]) is None  # "Sign out", 27% alike: no answer
    assert clear_best([0.82, 0.78]) is None  # two look-alikes: the person decides
    assert clear_best([0.82, 0.61]) == 0
    assert clear_best([PLAUSIBLE - 0.01]) is None
