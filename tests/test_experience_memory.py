"""Experience that pays: a repair the LLM found is used again for the same drift with no LLM
call, scored by how the steps that used it went, and dropped when it keeps failing or the page
changes back.

A page of our own keeps items on the server (the judge is its data, never the run's report).
The "Add" button was recorded on the page as it was; the page as it is now calls it "Create
record", has no id or class in common, and puts a "Start over" button beside it: neither the
recorded locators nor the fingerprint can tell which is meant, so the LLM is asked.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import pytest
from fakes.openai_server import FakeOpenAIServer
from replay_support import PageHandler, approve, described, run, services, serving

from desktop_app.core.models.experience import EXPIRES_AFTER_FAILURES, Experience
from desktop_app.core.models.run import Resolution, RunStatus
from desktop_app.core.models.target import Locator, LocatorStrategy
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    TextPresent,
    Workflow,
)
from desktop_app.core.replay.memory import ExperienceMemory

pytestmark = pytest.mark.slow

QUICK = 0.5


#: The "Add" button as the page shows it now: relabeled, its id and classes gone, a reset button
#: beside it (the form's buttons' markup), and the button a careful model picks.
CREATE_RECORD: Final = (
    "<button type=reset class=c-1>Start over</button><button class=c-9x>Create record</button>",
    "Create record",
)


@dataclass
class Items:
    """The server's own data, and how its form's buttons look (None: as recorded)."""

    names: list[str] = field(default_factory=list)
    buttons: str | None = None

    def reset(self) -> None:
        """As the page was recorded, with no item."""
        self.names.clear()
        self.buttons = None


ITEMS = Items()


class ItemsHandler(PageHandler):
    """The items page, and the form that adds one."""

    def do_GET(self) -> None:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in ITEMS.names)
        buttons = ITEMS.buttons or "<button id=add class='btn primary'>Add</button>"
        self.send_page(
            f"<!doctype html><title>Items</title><h1>Items</h1><ul>{items}</ul>"
            "<form method=post action=/add id=new-item><label for=name>Item name</label>"
            f"<input id=name name=name>{buttons}</form>"
        )

    def do_POST(self) -> None:
        ITEMS.names.extend(self.form().get("name", []))
        self.redirect("/items")


@contextmanager
def items_site() -> Iterator[str]:
    """The items page, fresh and as recorded (set ``ITEMS.buttons`` to drift it); its URL."""
    ITEMS.reset()
    with serving(ItemsHandler) as url:
        yield url


@pytest.fixture
def site() -> Iterator[str]:
    with items_site() as url:
        yield url


def add_item_workflow(site: str) -> Workflow:
    """ "Add an item", with its targets described on the items page as recorded."""
    url = f"{site}/items"
    field_ = described(url, Locator(strategy=LocatorStrategy.CSS, value="#name"))
    add = described(url, Locator(strategy=LocatorStrategy.CSS, value="#add"))
    return Workflow(
        name="Add an item",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="item"),),
        steps=(
            GotoStep(title="Open the items", url="http://127.0.0.1:1/items"),
            FillStep(title="Fill 'Item name'", target=field_, value="{item}"),
            ClickStep(title="Click 'Add'", target=add),
        ),
        success=(TextPresent(text="{item}"),),
    )


def picks(name: str) -> Callable[[dict[str, Any]], str]:
    """A careful model: the button named *name*, never its neighbour."""

    def policy(body: dict[str, Any]) -> str:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        for line in str(user).split("<page>", 1)[-1].splitlines():
            if f'button "{name}"' in line and (ref := re.search(r"\[ref=(\w+)\]", line)):
                return json.dumps({"action": "act", "ref": ref.group(1), "reason": "it adds"})
        return json.dumps({"action": "not_found", "ref": None, "reason": "not on the page"})

    return policy


def _click(result: Any) -> Any:
    return next(s for s in result.run.steps if s.title == "Click 'Add'")


def test_the_second_run_on_the_same_drift_uses_the_llm_s_repair_without_asking_it(
    site: str, llm: FakeOpenAIServer
) -> None:
    llm.default_chat = picks(CREATE_RECORD[1])
    version_doc = add_item_workflow(site)
    ITEMS.buttons = CREATE_RECORD[0]
    with services() as sv:
        version = approve(sv, version_doc)
        first = run(sv, version, site, values={"item": "Apples"}, use_llm=True, patience_s=QUICK)
        assert first.run.status is RunStatus.SUCCEEDED, first.run.error
        assert _click(first).resolution is Resolution.LLM
        assert first.run.llm_calls >= 1
        assert ITEMS.names == ["Apples"]
        calls = len(llm.requests_to("/v1/chat/completions"))

        second = run(sv, version, site, values={"item": "Pears"}, use_llm=True, patience_s=QUICK)
        assert second.run.status is RunStatus.SUCCEEDED, second.run.error
        assert second.run.llm_calls == 0
        assert len(llm.requests_to("/v1/chat/completions")) == calls
        assert _click(second).resolution is Resolution.EXPERIENCE
        assert ITEMS.names == ["Apples", "Pears"]

        (experience,) = sv.experiences.experiences()
        assert experience.resolution is Resolution.LLM
        assert (experience.successes, experience.failures, experience.proven) == (1, 0, True)

        # Proven by a run that succeeded, it is used unattended, without an LLM, too.
        alone = run(sv, version, site, values={"item": "Plums"}, patience_s=QUICK)
        assert alone.run.status is RunStatus.SUCCEEDED, alone.run.error
        assert ITEMS.names == ["Apples", "Pears", "Plums"]


def test_a_repair_is_retired_when_the_page_changes_back(site: str, llm: FakeOpenAIServer) -> None:
    llm.default_chat = picks(CREATE_RECORD[1])
    version_doc = add_item_workflow(site)
    ITEMS.buttons = CREATE_RECORD[0]
    with services() as sv:
        version = approve(sv, version_doc)
        first = run(sv, version, site, values={"item": "Apples"}, use_llm=True, patience_s=QUICK)
        assert _click(first).resolution is Resolution.LLM, first.run.error

        ITEMS.buttons = None
        back = run(sv, version, site, values={"item": "Pears"}, use_llm=True, patience_s=QUICK)
        assert _click(back).resolution is Resolution.DIRECT, back.run.error
        (experience,) = sv.experiences.experiences()
        assert experience.retired_at is not None and experience.expired

        # The page drifts again: the retired repair is not taken on trust; the LLM is asked.
        ITEMS.buttons = CREATE_RECORD[0]
        again = run(sv, version, site, values={"item": "Plums"}, use_llm=True, patience_s=QUICK)
        assert again.run.status is RunStatus.SUCCEEDED, again.run.error
        assert _click(again).resolution is Resolution.LLM
    assert ITEMS.names == ["Apples", "Pears", "Plums"]


def _experience(workflow_id: str, step_id: str) -> Experience:
    return Experience(
        workflow_id=workflow_id,
        workflow_version=1,
        step_id=step_id,
        step_title="Click 'Add'",
        step_kind="click",
        repaired_locator=Locator(strategy=LocatorStrategy.ROLE, value="button", name="Add"),
        resolution=Resolution.FINGERPRINT,
    )


def test_repairs_are_ranked_by_how_they_did_and_one_that_keeps_failing_is_dropped() -> None:
    with services() as sv:
        memory = ExperienceMemory(sv.experiences, None)
        w1 = approve(sv, Workflow(name="W", steps=(GotoStep(title="Go", url="http://a.test/"),)))
        w1_id = w1.workflow.id
        older, newer = _experience(w1_id, "s1"), _experience(w1_id, "s1")
        memory.remember(older)
        memory.remember(
            newer.model_copy(update={"created_at": older.created_at.replace(year=2030)})
        )
        assert [e.id for e in memory.own(w1_id, "s1")] == [newer.id, older.id]  # newest first

        memory.note_uses([(older.id, True)], proven=True)
        assert [e.id for e in memory.own(w1_id, "s1")] == [older.id, newer.id]  # it held once

        for _ in range(EXPIRES_AFTER_FAILURES):
            memory.note_uses([(older.id, False)], proven=False)
        assert [e.id for e in memory.own(w1_id, "s1")] == [newer.id]
        kept = sv.experiences.get_experience(older.id)
        assert kept is not None and (kept.successes, kept.failures) == (1, 2)  # never deleted


def test_a_site_keeps_its_most_useful_repairs_and_others_are_untouched() -> None:
    with services() as sv:
        memory = ExperienceMemory(sv.experiences, None)
        w1 = approve(sv, Workflow(name="W", steps=(GotoStep(title="Go", url="http://a.test/"),)))
        made = []
        for n in range(4):
            experience = _experience(w1.workflow.id, f"s{n}").model_copy(
                update={"page_url": "https://crm.example.test/contacts/7"}
            )
            memory.remember(experience)
            made.append(experience)
        other = _experience(w1.workflow.id, "s9").model_copy(
            update={"page_url": "https://mail.example.test/"}
        )
        memory.remember(other)
        memory.note_uses([(made[0].id, True), (made[0].id, True), (made[2].id, True)], proven=True)
        memory.note_uses([(made[1].id, False)] * EXPIRES_AFTER_FAILURES, proven=False)

        assert memory.evict("crm.example.test", keep=2) == 2
        kept = {e.id for e in sv.experiences.find_experiences(site="crm.example.test")}
        assert kept == {made[0].id, made[2].id}  # the expired one and the unused one went
        assert sv.experiences.get_experience(other.id) is not None


def test_similar_steps_repairs_come_most_similar_and_useful_first_never_expired() -> None:
    with services() as sv:
        memory = ExperienceMemory(sv.experiences, lambda: sv.workflows.index)
        w1 = approve(sv, Workflow(name="W", steps=(GotoStep(title="Go", url="http://a.test/"),)))
        proven, unused, failing = (_experience(w1.workflow.id, f"s{n}") for n in range(3))
        for experience in (unused, proven, failing):
            memory.remember(experience)
        memory.note_uses([(proven.id, True)] * 3, proven=True)
        memory.note_uses([(failing.id, False)] * EXPIRES_AFTER_FAILURES, proven=False)
        found = memory.recall("another-workflow", "its-step", "Click 'Add' | click")
        assert [e.id for e in found] == [proven.id, unused.id]


@dataclass
class Todo:
    """A list of our own: each row shows an item and its button; done items are kept here."""

    items: tuple[str, ...] = ("Apples", "Pears", "Plums")
    done: list[str] = field(default_factory=list)
    drifted: bool = False

    def reset(self) -> None:
        """As the list was recorded, nothing done."""
        self.done.clear()
        self.drifted = False


TODO = Todo()


class TodoHandler(PageHandler):
    """The list, and the form its buttons send."""

    def do_GET(self) -> None:
        rows = []
        for n, item in enumerate(TODO.items):
            if TODO.drifted:
                buttons = (
                    f"<button name=item value='{n}' formaction=/remove class=r{n}>Remove</button>"
                    f"<button name=item value='{n}' class=c{n}>Mark complete</button>"
                )
            else:
                buttons = f"<button name=item value='{n}' id=done-{n} class=done>Done</button>"
            rows.append(f"<tr><td>{html.escape(item)}</td><td>{buttons}</td></tr>")
        self.send_page(
            "<!doctype html><title>To do</title><h1>To do</h1><form method=post action=/done>"
            f"<table><tbody>{''.join(rows)}</tbody></table></form>"
        )

    def do_POST(self) -> None:
        form = self.form()
        if self.path == "/done":
            TODO.done.extend(TODO.items[int(i)] for i in form.get("item", []))
        self.redirect("/todo")


def in_row(body: dict[str, Any]) -> str:
    """A careful model: the 'Mark complete' button of the row showing the step's item."""
    user = str(next(m["content"] for m in body["messages"] if m["role"] == "user"))
    wanted = re.search(r"Step \d+ of \d+: Click 'Done' for (\w+)", user)
    lines = user.split("<page>", 1)[-1].splitlines()
    in_row = False
    for line in lines:
        if "- row" in line:
            in_row = False
        if "- cell" in line and wanted and f'"{wanted.group(1)}"' in line:
            in_row = True
        if in_row and 'button "Mark complete"' in line and (ref := re.search(r"ref=(\w+)", line)):
            return json.dumps({"action": "act", "ref": ref.group(1), "reason": "its row"})
    return json.dumps({"action": "not_found", "ref": None, "reason": "not on the page"})


def todo_workflow(site: str) -> Workflow:
    """ "Tick an item off": the row's button as the capture script describes it on the list as
    recorded, its row found by the item it shows (a parameter, recorded as "Apples")."""
    from desktop_app.core.replay.learning import templated_locator

    recorded = described(f"{site}/todo", Locator(strategy=LocatorStrategy.CSS, value="#done-0"))
    locators = tuple(
        templated_locator(loc, {"item": "Apples"})
        for loc in recorded.locators
        if loc.within is not None
    )
    assert locators, [loc.describe() for loc in recorded.locators]
    return Workflow(
        name="Tick an item off",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="item", default="Apples"),),
        steps=(
            GotoStep(title="Open the list", url="http://127.0.0.1:1/todo"),
            ClickStep(
                title="Click 'Done' for {item}",
                target=recorded.model_copy(update={"locators": locators}),
            ),
        ),
    )


@contextmanager
def todo_site() -> Iterator[str]:
    """The to-do list, fresh, as recorded (set ``TODO.drifted`` to drift it)."""
    TODO.reset()
    with serving(TodoHandler) as site:
        yield site


def test_a_repair_in_one_row_is_used_for_another_row_s_item_without_the_llm(
    llm: FakeOpenAIServer,
) -> None:
    llm.default_chat = in_row
    with todo_site() as site:
        workflow = todo_workflow(site)
        TODO.drifted = True
        with services() as sv:
            version = approve(sv, workflow)
            values = {"item": "Apples"}
            first = run(sv, version, site, values=values, use_llm=True, patience_s=QUICK)
            assert first.run.steps[1].resolution is Resolution.LLM, first.run.error
            assert TODO.done == ["Apples"]
            values = {"item": "Plums"}
            second = run(sv, version, site, values=values, use_llm=True, patience_s=QUICK)
            assert second.run.steps[1].resolution is Resolution.EXPERIENCE, second.run.error
            assert second.run.llm_calls == 0
        assert TODO.done == ["Apples", "Plums"]  # never another row's item
