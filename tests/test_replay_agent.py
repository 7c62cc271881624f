"""Agent steps: the LLM carries out an open-ended instruction, one checked action at a time."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from fakes.openai_server import FakeOpenAIServer
from replay_support import PageHandler, approve, approved, run, services, serving

from desktop_app.core.models.run import RunStatus, StepStatus
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    GotoStep,
    TextPresent,
    UrlMatches,
    Workflow,
)
from desktop_app.demo_site import DemoSite

pytestmark = pytest.mark.slow


def _page(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return str(user).split("<page>", 1)[-1]


def _ref(page: str, needle: str) -> str | None:
    for line in page.splitlines():
        if needle in line and (found := re.search(r"\[ref=([a-z0-9]+)\]", line)):
            return found.group(1)
    return None


def find_the_email(body: dict[str, Any]) -> str:
    """Open James Okafor's contact, then report the email address it shows."""
    page = _page(body)
    link = _ref(page, 'link "James Okafor"')
    if link is not None:
        return json.dumps({"action": "click", "ref": link, "reason": "his contact"})
    email = re.search(r"[\w.+-]+@[\w-]+\.\w+", page)
    return json.dumps(
        {"action": "done", "output": email.group(0) if email else "", "reason": "shown"}
    )


def delete_it(body: dict[str, Any]) -> str:
    """A model that decides the best way to 'tidy up' is deleting the contact."""
    page = _page(body)
    target = _ref(page, 'link "James Okafor"') or _ref(page, 'button "Delete contact"')
    return json.dumps({"action": "click", "ref": target, "reason": "tidy up"})


def _with_agent_step(sv: Any, instruction: str, *, check_output: bool) -> Any:
    sign_in = approved(sv, "create-contact").workflow
    agent = AgentStep(
        title="Find the contact",
        instruction=instruction,
        output_variable="email_found",
        max_actions=4,
        expectations=(UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),),
    )
    steps = [*sign_in.steps[:4], agent]
    if check_output:
        steps.append(
            AssertStep(title="The email shows", condition=TextPresent(text="{email_found}"))
        )
    success = (TextPresent(text="{email_found}"),) if check_output else ()
    workflow = Workflow.model_validate(
        sign_in.model_copy(
            update={"steps": tuple(steps), "name": "Look up", "success": success}
        ).model_dump()
    )
    saved = sv.workflows.save(workflow, actor="tester")
    return sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)


def _answering(server: FakeOpenAIServer, policy: Callable[[dict[str, Any]], str]) -> None:
    server.default_chat = policy


def test_an_agent_step_follows_its_instruction_and_stores_its_output(
    llm: FakeOpenAIServer,
) -> None:
    _answering(llm, find_the_email)
    with DemoSite() as site, services() as sv:
        version = _with_agent_step(
            sv, "Open James Okafor's contact and report his email", check_output=True
        )
        result = run(sv, version, site.url, use_llm=True)
        assert result.run.status is RunStatus.SUCCEEDED, result.run.error
        agent = next(s for s in result.run.steps if s.title == "Find the contact")
        assert agent.llm_calls == 2
        assert "click on link 'James Okafor'" in (agent.detail or "")
        james = next(c for c in site.contacts() if c["full_name"] == "James Okafor")
        assert result.run.steps[-1].status is StepStatus.SUCCEEDED  # the email was on the page
        requests = llm.requests_to("/v1/chat/completions")
        assert james["email"] in requests[-1].raw_body.decode()


def test_an_agent_never_commits_to_something_without_a_confirmation(
    llm: FakeOpenAIServer,
) -> None:
    _answering(llm, delete_it)
    with DemoSite() as site, services() as sv:
        version = _with_agent_step(sv, "Tidy up James Okafor's contact", check_output=False)
        before = len(site.contacts())
        result = run(sv, version, site.url, use_llm=True)
        assert result.run.status is RunStatus.FAILED
        assert "may commit to something" in (result.run.steps[-1].error or "")
        assert len(site.contacts()) == before


def test_an_agent_step_without_an_llm_fails_clearly() -> None:
    with DemoSite() as site, services() as sv:
        version = _with_agent_step(sv, "Open any contact", check_output=False)
        result = run(sv, version, site.url)
        assert result.run.status is RunStatus.FAILED
        assert "needs an LLM" in (result.run.steps[-1].error or "")


# A notes app that draws its form 3.5 s after load, from a timer too long to be a page getting
# ready (a person would see an empty page at rest, and wait).
_LATE = """<!doctype html><title>Notes</title><h1>Notes</h1><main id=app></main>
<script>
  const draw = () => {
    document.getElementById("app").innerHTML = '<label>New note <input id=note></label>';
    document.getElementById("note").addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      fetch("/notes", {method: "POST", body: e.target.value}).then(() => {
        const saved = document.createElement("p");
        saved.textContent = "Saved: " + e.target.value;
        document.body.append(saved);
      });
    });
  };
  if (!location.search.includes("never")) setTimeout(draw, 3500);
</script>"""


class _Notes(PageHandler):
    kept: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.send_page(_LATE)

    def do_POST(self) -> None:
        self.kept.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
        self.send_page("")


def adds_the_note(body: dict[str, Any]) -> str:
    """Types the note into the New note box and presses Enter; waits while there is no box."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    taken = str(user).split("Actions taken so far:", 1)[1].split("Current page", 1)[0]
    box = _ref(_page(body), 'textbox "New note"')
    if box is None:
        answer: dict[str, Any] = {"action": "wait"}
    elif "(none yet)" in taken:
        answer = {"action": "fill", "ref": box, "value": "Call Ann"}
    elif "  2." not in taken:
        answer = {"action": "press", "ref": box, "key": "Enter"}
    else:
        answer = {"action": "done"}
    return json.dumps({**answer, "reason": "as asked"})


def _note_workflow(url: str, *, timeout_s: float = 10) -> Workflow:
    return Workflow(
        name="Add a note",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the notes", url=url),
            AgentStep(
                title="Add it",
                instruction="Add the note Call Ann",
                max_actions=3,
                timeout_s=timeout_s,
            ),
        ),
        success=(TextPresent(text="Saved: Call Ann"),),
    )


def test_an_agent_waits_for_a_page_that_draws_itself_late(llm: FakeOpenAIServer) -> None:
    _answering(llm, adds_the_note)
    _Notes.kept.clear()
    with serving(_Notes) as url, services() as sv:
        result = run(sv, approve(sv, _note_workflow(f"{url}/")), url, use_llm=True)
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert _Notes.kept == ["Call Ann"]
    agent = result.run.steps[1]
    assert agent.llm_calls == 4  # wait, fill, press, done: a wait is not one of the 3 actions
    assert agent.waited_ms > 1000


def test_an_agent_that_waits_for_nothing_stops_after_a_few_looks(llm: FakeOpenAIServer) -> None:
    _answering(llm, adds_the_note)
    _Notes.kept.clear()
    with serving(_Notes) as url, services() as sv:
        version = approve(sv, _note_workflow(f"{url}/?never", timeout_s=1))
        result = run(sv, version, url, use_llm=True)
    assert result.run.status is RunStatus.FAILED
    assert "the agent waited 3 times for the page" in (result.run.steps[-1].error or "")
    assert result.run.steps[-1].llm_calls == 4 and _Notes.kept == []
