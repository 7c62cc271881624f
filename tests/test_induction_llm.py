"""The LLM inducer against a real local OpenAI-compatible server: used when it fits, not trusted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from string import Template
from typing import Any

import pytest
from conftest import REPO

from desktop_app.adapters.llm import OpenAIStructuredLLM
from desktop_app.core.documents import load_trajectory
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.induction.llm_inducer import InductionPlan, induce_with_llm, prompt_templates
from desktop_app.core.models import TextPresent, Trajectory
from desktop_app.demo_site import DEMO_PASSWORD
from tests.fakes.openai_server import FakeOpenAIServer

KEY = "sk-test-never-in-a-body-31f0"
TRAJECTORY = load_trajectory(
    (REPO / "tests" / "data" / "create-contact.trajectory.json").read_bytes()
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def _llm(server: FakeOpenAIServer, timeout: float = 5.0) -> OpenAIStructuredLLM:
    return OpenAIStructuredLLM(server.base_url, "fake-chat", KEY, timeout, secrets=(DEMO_PASSWORD,))


def _good_plan(trajectory: Trajectory) -> dict[str, Any]:
    """What a good model answers for the create-contact recording."""
    return {
        "name": "Add a CRM contact",
        "description": "Signs in to Acme CRM and adds a contact with a company.",
        "parameters": [
            {"event": 1, "name": "login", "description": "Your CRM user name"},
            {"event": 5, "name": "contact_name", "description": "The new contact's full name"},
            {"event": 6, "name": "contact_email", "description": "Their work email"},
            {"event": 7, "name": "company", "description": "Their company"},
        ],
        "steps": [
            {"event": 0, "title": "Open the CRM"},
            {"event": 4, "title": "Start a new contact"},
            {
                "event": 9,
                "title": "Save {contact_name}",
                "expect_text": "Contact Jane Doe created",
            },
        ],
        "intent_template": "Create a contact for {contact_name} at {company}",
    }


def test_a_good_answer_is_used(server: FakeOpenAIServer) -> None:
    server.queue_chat(json.dumps(_good_plan(TRAJECTORY)))
    result = induce_with_llm(TRAJECTORY, induce(TRAJECTORY), _llm(server), secrets=(DEMO_PASSWORD,))
    wf = result.workflow
    assert result.used_llm and result.notes == []
    assert wf.name == "Add a CRM contact"
    assert [p.name for p in wf.parameters] == [
        "login",
        "password",
        "contact_name",
        "contact_email",
        "company",
        "subscribe_to_newsletter",
    ]
    assert wf.parameter("contact_name") is not None
    assert wf.steps[5].value == "{contact_name}"  # type: ignore[union-attr]
    save = wf.steps[-1]
    assert save.title == "Save {contact_name}"
    assert TextPresent(text="Contact Jane Doe created") in save.expectations
    assert TextPresent(text="Contact {contact_name} created") in save.expectations
    assert wf.intent_template == "Create a contact for {contact_name} at {company}"
    assert wf.steps[0].target_or_none is None and wf.steps[1].target_or_none is not None
    assert result.usage.calls == 1 and result.usage.prompt_tokens > 0
    (request,) = server.requests_to("/v1/chat/completions")
    body = json.dumps(request.json)
    assert DEMO_PASSWORD not in body and KEY not in body
    assert request.json["response_format"]["type"] == "json_schema"
    assert "[2] fill on 'Password' value {password}" in body


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        (lambda s: s.queue_chat("not json", "still { not json"), "could not be used"),
        (lambda s: s.queue_chat({"refusal": "I can't help with that."}), "could not be used"),
        (
            lambda s: s.fail_next(429, "slow down", headers={"Retry-After": "3"}),
            "could not be used",
        ),
        (lambda s: s.set_delay(2.0), "could not be used"),
    ],
    ids=["garbage", "refusal", "rate-limited", "timeout"],
)
def test_failures_fall_back_to_the_offline_result(
    server: FakeOpenAIServer, setup: Any, why: str
) -> None:
    setup(server)
    draft = induce(TRAJECTORY)
    result = induce_with_llm(TRAJECTORY, draft, _llm(server, timeout=0.5))
    assert not result.used_llm
    assert result.workflow == draft.workflow
    assert why in result.notes[-1] and "this is the offline result" in result.notes[-1]
    for request in server.requests:
        assert DEMO_PASSWORD not in request.raw_body.decode(errors="replace")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda p: p["steps"].append({"event": 42, "title": "Teleport"}), "event 42"),
        (lambda p: p["steps"][2].update(expect_text="Payment received"), "never showed"),
        (
            lambda p: p["parameters"].append({"event": 3, "name": "x", "description": ""}),
            "enters no value",
        ),
        (lambda p: p["parameters"][1].update(name="login"), "same name"),
    ],
    ids=["unknown-event", "invented-message", "not-a-value", "duplicate-name"],
)
def test_an_answer_that_does_not_fit_the_recording_is_not_used(
    server: FakeOpenAIServer, change: Any, problem: str
) -> None:
    plan = _good_plan(TRAJECTORY)
    change(plan)
    InductionPlan.model_validate(plan)  # well-formed: only the recording can tell it is wrong
    server.queue_chat(json.dumps(plan))
    draft = induce(TRAJECTORY)
    result = induce_with_llm(TRAJECTORY, draft, _llm(server))
    assert not result.used_llm and result.workflow == draft.workflow
    assert problem in result.notes[-1]
    assert result.usage.calls == 1


def test_prompt_templates_use_exactly_the_placeholders_the_code_fills() -> None:
    system, user = prompt_templates()

    def names(template: Template) -> set[str]:
        found = (
            m.group("named") or m.group("braced")
            for m in template.pattern.finditer(template.template)
        )
        return {name for name in found if name}

    assert names(system) == set()
    assert names(user) == {"intent", "parameters", "events"}


def test_induce_command_with_llm(
    server: FakeOpenAIServer, procedura: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PROCEDURA_LLM_MODEL", "fake-chat")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = REPO / "tests" / "data" / "create-contact.trajectory.json"
    procedura("trajectories", "import", str(path))
    server.queue_chat(json.dumps(_good_plan(TRAJECTORY)))
    result = procedura("induce", TRAJECTORY.id[:8], "--llm")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("induced 'Add a CRM contact' as ")
    shown = json.loads(procedura("workflows", "show", "Add a CRM contact", "--json").stdout)
    note = shown["versions"][0]["change_note"]
    assert note.startswith(
        f"induced from trajectory {TRAJECTORY.id[:8]}; LLM fake-chat: used (1 call(s), "
    )
    # a second time the model answers garbage: the offline result is saved, with the reason
    server.queue_chat("no", "still no")
    again = procedura("induce", TRAJECTORY.id[:8], "--llm", "--name", "Offline")
    assert again.exit_code == 0
    assert "note: the LLM could not be used" in again.stderr
    for request in server.requests:
        assert (
            KEY not in request.raw_body.decode() and DEMO_PASSWORD not in request.raw_body.decode()
        )


def test_induce_uses_a_configured_llm_unless_told_not_to(
    server: FakeOpenAIServer, procedura: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PROCEDURA_LLM_MODEL", "fake-chat")
    procedura(
        "trajectories", "import", str(REPO / "tests" / "data" / "create-contact.trajectory.json")
    )
    offline = procedura("induce", TRAJECTORY.id[:8], "--no-llm", "--name", "Offline")
    assert offline.exit_code == 0, offline.stderr
    assert server.requests == []
    server.queue_chat(json.dumps(_good_plan(TRAJECTORY)))
    result = procedura("induce", TRAJECTORY.id[:8])  # as the Recordings screen does
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) == 1
    assert result.stdout.startswith("induced 'Add a CRM contact' as ")


def test_induce_with_llm_needs_one(procedura: Any) -> None:
    path = REPO / "tests" / "data" / "create-contact.trajectory.json"
    procedura("trajectories", "import", str(path))
    result = procedura("induce", TRAJECTORY.id[:8], "--llm")
    assert result.exit_code == 2
    assert "--llm needs an LLM: set OPENAI_API_KEY or PROCEDURA_LLM_BASE_URL" in result.stderr
