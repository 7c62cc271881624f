"""Learning is safe: only runs that got to the end teach, and a repair the LLM found is not
used by a run that could not have asked the LLM or a person until a run it helped succeeded."""

from __future__ import annotations

import pytest
from fakes.openai_server import FakeOpenAIServer
from replay_support import approve, approved, run, services
from test_replay_llm import good_policy

from desktop_app.core.models.run import Resolution, RunStatus
from desktop_app.core.models.workflow import AssertStep, TextPresent
from desktop_app.demo_site import DemoSite

pytestmark = pytest.mark.slow

QUICK = 0.5
_DRIFT = ["relabeled", "renamed-ids"]


def test_a_run_that_failed_teaches_nothing(llm: FakeOpenAIServer) -> None:
    llm.default_chat = good_policy
    with DemoSite(variants=_DRIFT) as site, services() as sv:
        healed_then_fails = approved(sv, "create-contact", strip_fingerprints=True).workflow
        never = AssertStep(
            title="A text no page shows",
            condition=TextPresent(text="no page says this"),
            timeout_s=1,
        )
        version = approve(
            sv,
            healed_then_fails.model_copy(
                update={"steps": (*healed_then_fails.steps, never), "success": ()}
            ),
        )
        failed = run(sv, version, site.url, use_llm=True, patience_s=QUICK)
        assert failed.run.status is RunStatus.FAILED
        healed = [s for s in failed.run.steps if s.resolution is Resolution.LLM]
        assert healed, "steps before the failing one were healed by the LLM"
        assert failed.learned.proposed is None and failed.learned.experiences == 0
        assert sv.experiences.count() == 0
        newest = max(v.version for v in sv.workflows.versions(version.workflow.id))
        assert newest == version.version  # nothing proposed


def test_a_repair_the_llm_found_waits_for_a_run_to_prove_it(llm: FakeOpenAIServer) -> None:
    llm.default_chat = good_policy
    with DemoSite(variants=_DRIFT) as site, services() as sv:
        version = approved(sv, "create-contact", strip_fingerprints=True)
        found = run(sv, version, site.url, use_llm=True, patience_s=QUICK)
        assert found.run.status is RunStatus.SUCCEEDED, found.run.error
        assert found.learned.experiences > 0
        assert all(e.proven is False for e in sv.experiences.experiences())
        proposed = found.learned.proposed
        assert proposed is not None and "Found by the LLM" in proposed.change_note

        # Unattended, without the LLM: the unproven repairs are not taken on trust.
        alone = run(sv, version, site.url, values={"full_name": "Al One"}, patience_s=QUICK)
        assert alone.run.status is RunStatus.FAILED
        said = (alone.run.steps[-1].error or "") + (alone.run.steps[-1].detail or "")
        assert "not used before a run proved it" in said
        assert not any(c["full_name"] == "Al One" for c in site.contacts())

        # A run that could ask the LLM uses them (no call needed) and, succeeding, proves them.
        calls = len(llm.requests_to("/v1/chat/completions"))
        proving = run(
            sv, version, site.url, values={"full_name": "Pro Ven"}, use_llm=True, patience_s=QUICK
        )
        assert proving.run.status is RunStatus.SUCCEEDED, proving.run.error
        assert len(llm.requests_to("/v1/chat/completions")) == calls
        used = [s for s in proving.run.steps if s.resolution is Resolution.EXPERIENCE]
        assert used
        assert all(e.proven for e in sv.experiences.experiences() if e.resolution is Resolution.LLM)

        trusted = run(sv, version, site.url, values={"full_name": "Tr Usted"}, patience_s=QUICK)
        assert trusted.run.status is RunStatus.SUCCEEDED, trusted.run.error
        assert any(c["full_name"] == "Tr Usted" for c in site.contacts())
