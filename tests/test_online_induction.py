"""Online induction: runs that went well propose what a person would otherwise record.

The items page of ``test_experience_memory`` keeps its items on the server; each replay is judged
by them, never by the run's report. The "agent" is the fake LLM server answering as a careful
model would: fill the item's name, click "Add", done.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, cast

import pytest
from conftest import Cli
from fakes.openai_server import FakeOpenAIServer
from gui_support import Gui, until
from realapps.corpus import APPS
from replay_support import approve, run, services
from test_experience_memory import ITEMS, items_site

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Run, RunStatus, RunStep, StepStatus, TakenAction
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AgentStep,
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    ParameterType,
    TextPresent,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.replay.online import ONLINE_ACTOR, proposal, propose

pytestmark = pytest.mark.slow


@pytest.fixture
def site() -> Iterator[str]:
    with items_site() as url:
        yield url


def _user(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def _ref(page: str, needle: str) -> str | None:
    for line in page.splitlines():
        if needle in line and (found := re.search(r"\[ref=(\w+)\]", line)):
            return found.group(1)
    return None


def adds_the_item(*, then: str = "click") -> Callable[[dict[str, Any]], str]:
    """A careful agent: types the item the instruction names into "Item name", then clicks
    "Add" (or, *then* "enter", presses Enter in the field), then says it is done."""

    def policy(body: dict[str, Any]) -> str:
        user = _user(body)
        item = re.search(r"Instruction: Add (?:the item )?(.+?) to the list", user)
        taken = user.split("Actions taken so far:", 1)[1].split("Current page", 1)[0]
        page = user.split("<page>", 1)[-1]
        field = _ref(page, 'textbox "Item name"')
        if "(none yet)" in taken and item is not None:
            answer = {"action": "fill", "ref": field, "value": item.group(1)}
        elif "  2." not in taken:
            if then == "enter":
                answer = {"action": "press", "ref": field, "key": "Enter"}
            else:
                answer = {"action": "click", "ref": _ref(page, 'button "Add"')}
        else:
            answer = {"action": "done", "reason": "added"}
        return json.dumps({**answer, "reason": answer.get("reason", "the instruction")})

    return policy


def agent_workflow(site: str) -> Workflow:
    """ "Add an item" done by an agent step."""
    return Workflow(
        name="Add an item",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="item", default="Fig"),),
        steps=(
            GotoStep(title="Open the items", url=f"{site}/items"),
            AgentStep(title="Add it", instruction="Add {item} to the list", max_actions=4),
        ),
        success=(TextPresent(text="{item}"),),
    )


def test_an_agent_step_done_the_same_way_three_times_is_proposed_as_recorded_steps(
    site: str, llm: FakeOpenAIServer
) -> None:
    llm.default_chat = adds_the_item()
    with services() as sv:
        version = approve(sv, agent_workflow(site))
        proposed = []
        for item in ("Apple", "Pear", "Plum"):
            result = run(sv, version, site, values={"item": item}, use_llm=True)
            assert result.run.status is RunStatus.SUCCEEDED, result.run.error
            proposed.append(result.learned.proposed)
        assert ITEMS.names == ["Apple", "Pear", "Plum"]
        assert proposed[:2] == [None, None]  # not before the third run that did the same
        new = proposed[2]
        assert new is not None and new.status is WorkflowStatus.IN_REVIEW
        assert new.created_by == ONLINE_ACTOR and "the agent step 'Add it'" in new.change_note
        steps = new.workflow.steps
        assert [type(s) for s in steps] == [GotoStep, FillStep, ClickStep]
        assert isinstance(steps[1], FillStep) and steps[1].value == "{item}"
        assert [s.title for s in steps[1:]] == ["Fill 'Item name'", "Click 'Add'"]
        assert result.run.proposed_version == new.version

        # Approved, it adds another item with no LLM at all.
        approved = sv.workflows.approve(new.workflow_id, actor="analyst", version=new.version)
        calls = len(llm.requests_to("/v1/chat/completions"))
        again = run(sv, approved, site, values={"item": "Kiwi"})
        assert again.run.status is RunStatus.SUCCEEDED, again.run.error
        assert ITEMS.names[-1] == "Kiwi"
        assert len(llm.requests_to("/v1/chat/completions")) == calls


def test_runs_that_did_it_differently_propose_nothing_and_nothing_is_proposed_twice(
    site: str, llm: FakeOpenAIServer
) -> None:
    with services() as sv:
        version = approve(sv, agent_workflow(site))
        for item, then in (("Apple", "click"), ("Pear", "enter"), ("Plum", "click")):
            llm.default_chat = adds_the_item(then=then)
            result = run(sv, version, site, values={"item": item}, use_llm=True)
            assert result.run.status is RunStatus.SUCCEEDED, result.run.error
            assert result.learned.proposed is None
        llm.default_chat = adds_the_item()
        for item in ("Fig", "Lime"):
            result = run(sv, version, site, values={"item": item}, use_llm=True)
        assert result.learned.proposed is not None  # the last three did the same
        turned_down = result.learned.proposed
        sv.workflows.request_changes(
            turned_down.workflow_id, actor="analyst", comment="keep the agent"
        )
        result = run(sv, version, site, values={"item": "Date"}, use_llm=True)
        assert result.run.status is RunStatus.SUCCEEDED
        assert result.learned.proposed is None  # the analyst is not asked again
        assert len(sv.workflows.versions_by_id(version.workflow_id)) == 2


# ── parameters the runs tell more about (the record of runs, no browser) ──────────────────


def _version(*params: Parameter) -> WorkflowVersion:
    workflow = Workflow(
        name="Order",
        domains=("shop.test",),
        parameters=params,
        steps=(GotoStep(title="Open", url="https://shop.test/"),),
    )
    return WorkflowVersion(workflow=workflow, status=WorkflowStatus.APPROVED, created_by="analyst")


def _runs(version: WorkflowVersion, *values: dict[str, str]) -> list[Run]:
    now = utcnow()
    step = RunStep(
        index=0,
        step_id=version.workflow.steps[0].id,
        title="Open",
        status=StepStatus.SUCCEEDED,
        started_at=now,
        duration_ms=1,
    )
    return [
        Run(
            workflow_id=version.workflow_id,
            workflow_version=1,
            status=RunStatus.SUCCEEDED,
            parameters=dict(v),
            steps=(step,),
        )
        for v in values
    ]


def test_runs_with_different_values_give_a_text_parameter_its_type() -> None:
    version = _version(
        Parameter(name="quantity", default="2"),
        Parameter(name="due", default="2026-12-01"),
        Parameter(name="buyer", default="ann@shop.test"),
        Parameter(name="postcode", default="02139"),
        Parameter(name="note", default="1"),
    )
    runs = _runs(
        version,
        {"quantity": "3", "due": "2026-12-24", "buyer": "bo@x.test", "postcode": "10115"},
        {"quantity": "12", "due": "2027-01-05", "buyer": "cy@x.test", "postcode": "02139"},
        {"quantity": "7", "due": "2026-12-31", "buyer": "di@x.test", "postcode": "75001"},
    )
    found = proposal(version, runs, 3)
    assert found is not None
    types = {p.name: p.type for p in found.workflow.parameters}
    assert types == {
        "quantity": ParameterType.NUMBER,
        "due": ParameterType.DATE,
        "buyer": ParameterType.EMAIL,
        "postcode": ParameterType.TEXT,  # "02139" as a number would be typed 2139
        "note": ParameterType.TEXT,  # no run gave it a value
    }
    assert found.workflow.parameter("quantity").default == 2  # type: ignore[union-attr]
    assert "'quantity' is a number: runs gave '3', '12', '7'" in found.note
    assert proposal(version, runs[:2], 3) is None  # two runs are not enough


def test_the_same_value_every_time_or_a_failed_run_proposes_no_type() -> None:
    version = _version(Parameter(name="quantity", default="2"))
    same = _runs(version, {"quantity": "3"}, {"quantity": "3"}, {"quantity": "3"})
    assert proposal(version, same, 3) is None
    mixed = _runs(version, {"quantity": "3"}, {"quantity": "4"}, {"quantity": "5"})
    mixed[1] = mixed[1].model_copy(update={"status": RunStatus.FAILED})
    assert proposal(version, mixed, 3) is None


# ── a request no workflow did ────────────────────────────────────────────────────────────────


def test_a_request_no_workflow_does_is_done_by_the_agent_and_proposed_as_a_workflow(
    site: str, llm: FakeOpenAIServer, procedura: Cli
) -> None:
    llm.default_chat = adds_the_item()
    sentence = "Add the item Mango to the list"
    quietly = ("--yes", "--non-interactive", "--headless")
    refused = procedura("run", "--intent", sentence, *quietly)
    assert refused.exit_code != 0 and "--agent-from" in refused.stderr
    assert ITEMS.names == []

    done = procedura("run", "--intent", sentence, "--agent-from", f"{site}/items", *quietly)
    assert done.exit_code == 3, done.stderr  # done, unverified: nothing says what success is
    assert ITEMS.names == ["Mango"]
    assert "proposed as version 2 (in review)" in done.stdout

    (listed,) = json.loads(procedura("workflows", "list", "--json").stdout)
    shown = json.loads(procedura("workflows", "show", listed["id"], "--json").stdout)
    assert shown["version"]["status"] == "in_review"
    workflow = shown["version"]["workflow"]
    assert workflow["intent_template"] == "Add the item {item_name} to the list"
    assert [p["name"] for p in workflow["parameters"]] == ["item_name"]
    assert [s["kind"] for s in workflow["steps"]] == ["goto", "fill", "click"]

    # Approved, the next request of that shape runs it with no LLM.
    approved = procedura("workflows", "approve", listed["id"], "--version", "2")
    assert approved.exit_code == 0, approved.stderr
    calls = len(llm.requests_to("/v1/chat/completions"))
    again = procedura("run", "--intent", "Add the item Papaya to the list", *quietly, "--no-llm")
    assert again.exit_code == 3, again.stderr
    assert ITEMS.names == ["Mango", "Papaya"]
    assert len(llm.requests_to("/v1/chat/completions")) == calls


# ── what Review shows of a proposal ──────────────────────────────────────────────────────────


def _agent_runs(
    version: WorkflowVersion, items: tuple[str, ...], *, typed: str = "{item}"
) -> list[Run]:
    agent = version.workflow.steps[1]
    field = Target(locators=(Locator(strategy=LocatorStrategy.LABEL, value="Item name"),))
    add = Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name="Add"),))
    actions = (
        TakenAction(action="fill", target=field, value=typed, label="textbox 'Item name'"),
        TakenAction(action="click", target=add, label="button 'Add'"),
    )
    now = utcnow()
    return [
        Run(
            workflow_id=version.workflow_id,
            workflow_version=version.version,
            status=RunStatus.SUCCEEDED,
            parameters={"item": item},
            started_at=now - timedelta(minutes=n),
            steps=(
                RunStep(
                    index=1,
                    step_id=agent.id,
                    title=agent.title,
                    status=StepStatus.SUCCEEDED,
                    started_at=now,
                    duration_ms=900,
                    detail="agent: fill 'x' on textbox 'Item name'; click on button 'Add'",
                    actions=actions,
                ),
            ),
        )
        for n, item in enumerate(items)
    ]


def test_actions_that_would_not_make_a_valid_workflow_propose_nothing() -> None:
    version = WorkflowVersion(
        workflow=agent_workflow("http://127.0.0.1:9"),
        status=WorkflowStatus.APPROVED,
        created_by="analyst",
    )
    fruits = ("Apple", "Pear", "Plum")
    assert proposal(version, _agent_runs(version, fruits), 3) is not None
    # "{ghost}": a placeholder nothing in the workflow defines (the run ends as it did).
    assert proposal(version, _agent_runs(version, fruits, typed="{ghost}"), 3) is None


def test_review_shows_what_a_proposal_was_learned_from(gui: Gui) -> None:
    def seed() -> tuple[str, int]:
        version = approve(gui.services, agent_workflow("http://127.0.0.1:9"))
        runs = _agent_runs(version, ("Apple", "Pear", "Plum"))
        for r in runs:
            gui.services.runs.save_run(r)
        proposed = propose(gui.services.workflows, version, runs, 3)
        assert proposed is not None
        gui.services.runs.save_run(runs[0].model_copy(update={"proposed_version": 2}))
        return version.workflow_id, proposed.version

    workflow_id, number = gui.call(seed)
    review = gui.window.review
    review.show_version(workflow_id, number)
    gui.run(until(lambda: "What the runs did" in review.diff_view.toPlainText()))
    text = review.diff_view.toPlainText()
    assert "the agent step 'Add it' did the same 2 action(s) in runs" in text  # the note
    assert "Add it: agent: fill 'x' on textbox 'Item name'" in text
    assert "learned from runs" in review.title.text()


# ── on an app nobody here wrote ──────────────────────────────────────────────────────────────


def types_the_todo(body: dict[str, Any]) -> str:
    """A careful agent on TodoMVC: types the to-do into the new-to-do box, presses Enter."""
    user = _user(body)
    title = re.search(r"Instruction: Add the to-do (.+?) to the list", user)
    taken = user.split("Actions taken so far:", 1)[1].split("Current page", 1)[0]
    box = _ref(user.split("<page>", 1)[-1], 'textbox "What needs to be done?"')
    if box is None:  # still putting itself together: look again
        answer: dict[str, Any] = {"action": "wait"}
    elif "(none yet)" in taken and title is not None:
        answer = {"action": "fill", "ref": box, "value": title.group(1)}
    elif "  2." not in taken:
        answer = {"action": "press", "ref": box, "key": "Enter"}
    else:
        answer = {"action": "done"}
    return json.dumps({**answer, "reason": "as asked"})


# vanillajs renders on load; React compiles its JSX after load, so the agent's first look waits
# for the page to come to rest.
@pytest.mark.parametrize("implementation", ["vanillajs", "react"])
def test_on_todomvc_what_the_agent_did_three_times_runs_without_it(
    implementation: str, llm: FakeOpenAIServer
) -> None:
    todomvc = next(a for a in APPS if a.name == "todomvc")
    variant = next(v for v in todomvc.variants if v.name.endswith(f" {implementation}"))
    llm.default_chat = types_the_todo
    with variant.start() as app, services() as sv:
        workflow = Workflow(
            name="Add a to-do",
            domains=("127.0.0.1",),
            parameters=(Parameter(name="title", default="Water the plants"),),
            steps=(
                GotoStep(title="Open the list", url=f"{app.url}/"),
                AgentStep(
                    title="Add it", instruction="Add the to-do {title} to the list", max_actions=4
                ),
            ),
            success=(TextPresent(text="{title}"),),
        )
        version = approve(sv, workflow)
        for title in ("Buy milk", "Call Ann", "Pay rent"):
            result = run(sv, version, app.url, values={"title": title}, use_llm=True)
            assert result.run.status is RunStatus.SUCCEEDED, result.run.error
        new = result.learned.proposed
        assert new is not None, "three runs did the same: a proposal"
        assert [s.kind for s in new.workflow.steps] == ["goto", "fill", "press"]
        approved = sv.workflows.approve(new.workflow_id, actor="analyst", version=new.version)
        calls = len(llm.requests_to("/v1/chat/completions"))
        # Every run's browser starts afresh, from what the app is seeded with.
        cast(Any, app).seed([{"title": "Water the plants", "completed": False}])
        again = run(sv, approved, app.url, values={"title": "Feed the cat"})
        assert again.run.status is RunStatus.SUCCEEDED, again.run.error
        assert len(llm.requests_to("/v1/chat/completions")) == calls
        todos = app.state()["todos"]
        assert [t["title"] for t in todos] == ["Water the plants", "Feed the cat"]


def test_a_request_that_finds_a_workflow_with_no_template_never_runs_on_its_recorded_values(
    site: str, procedura: Cli
) -> None:
    with services() as sv:
        approve(sv, agent_workflow(site))  # "Add an item", no intent template
    quietly = ("--yes", "--non-interactive", "--headless", "--no-llm")
    refused = procedura("run", "--intent", "Add the item Kiwi to the list", *quietly)
    assert refused.exit_code == 2, refused.stderr
    assert "the sentence gives no value for item" in refused.stderr
    assert json.loads(procedura("runs", "list", "--json").stdout) == []  # nothing ran
    assert ITEMS.names == []
