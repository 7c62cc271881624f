"""Loops induced from one demonstration: a person reminds three overdue invoices of a table
(each row's own "Remind" button) in real headless Chromium; the induced workflow goes over the
page's rows, and its replay on a bigger table reminds every overdue invoice and no other. The
judge is the server's own record of the reminders."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from demonstrations import MACHINE, Demonstrator, Scenario
from invoice_site import InvoiceData, invoice_site, invoices
from recording_support import record_demonstration
from replay_support import approve, run, services

from desktop_app.core.documents import dump_document, load_workflow
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.induction.llm_inducer import InductionPlan, StepPlan, induce_with_llm
from desktop_app.core.llm import LLMUsage
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    ForEachStep,
    ListItems,
    PageItems,
    ParameterType,
    Workflow,
)

pytestmark = pytest.mark.slow

#: The recorded page: six invoices, three of them overdue.
RECORDED = ["Overdue", "Paid", "Overdue", "Due soon", "Overdue", "Paid"]
#: The page a later run meets: twelve, seven overdue.
LATER = [
    "Overdue",
    "Paid",
    "Overdue",
    "Overdue",
    "Due soon",
    "Overdue",
    "Paid",
    "Overdue",
    "Overdue",
    "Due soon",
    "Paid",
    "Overdue",
]


def _row(page: Any, number: str) -> Any:
    return page.get_by_role("row").filter(has=page.get_by_role("cell", name=number, exact=True))


def _reminding(numbers: list[str]) -> Any:
    async def remind(do: Demonstrator) -> None:
        page = do.page
        for number in numbers:
            await do.click(_row(page, number).get_by_role("button", name="Remind"))
            await page.get_by_text(f"Reminder sent for {number}").wait_for()

    return remind


def _record(sv: Any, url: str, intent: str, demonstrate: Any) -> Trajectory:
    scenario = Scenario("invoices", "own", "", intent, demonstrate)
    return asyncio.run(record_demonstration(sv, url, scenario, MACHINE))


def _loop(workflow: Workflow) -> ForEachStep:
    loops = [s for s in workflow.steps if isinstance(s, ForEachStep)]
    assert len(loops) == 1, [s.title for s in workflow.steps]
    return loops[0]


def test_three_overdue_rows_reminded_become_a_loop_over_the_overdue_rows() -> None:
    recorded = InvoiceData(invoices(RECORDED))
    with invoice_site(recorded) as url, services() as sv:
        trajectory = _record(
            sv,
            f"{url}/invoices",
            "Send a reminder for every overdue invoice",
            _reminding(["INV-101", "INV-103", "INV-105"]),
        )
    assert recorded.reminded == ["INV-101", "INV-103", "INV-105"]

    result = induce(trajectory)
    workflow = result.workflow
    loop = _loop(workflow)
    assert isinstance(loop.over, PageItems)
    assert loop.over.css == "#invoices > tbody > tr"
    assert loop.over.contains == "Overdue"  # what the three share, the others lack, the intent says
    assert loop.limit >= 7
    (remind,) = loop.steps
    assert isinstance(remind, ClickStep)
    # found in the row showing the item's text, and only there: no position, no record id
    assert [loc.describe() for loc in remind.target.locators] == [
        '#invoices > tbody > tr with "{item}" >> role=button[name="Remind"]'
    ]
    assert remind.target.fingerprint is not None
    assert remind.target.fingerprint.nearby_text == () and remind.target.fingerprint.bbox is None
    assert not workflow.parameters
    # the workflow is a valid document
    assert load_workflow(dump_document(workflow)) == workflow
    assert any("one loop for each row showing" in n for n in result.notes), result.notes

    # An LLM titles the loop's step; it cannot drop it, nor make it expect the first row's
    # message (each round shows its own invoice's).
    plan = InductionPlan(
        name="Remind overdue invoices",
        description="Sends a reminder for each overdue invoice.",
        parameters=[],
        steps=[
            StepPlan(
                event=1, keep=False, title="Remind it", expect_text="Reminder sent for INV-101"
            )
        ],
    )

    class Model:
        def complete(self, **_: Any) -> tuple[InductionPlan, LLMUsage]:
            return plan, LLMUsage(calls=1)

    named = induce_with_llm(trajectory, result, Model())  # type: ignore[arg-type]
    assert named.used_llm, named.notes
    (titled,) = _loop(named.workflow).steps
    assert titled.title == "Remind it" and titled.expectations == remind.expectations
    assert titled.target == remind.target

    # Replayed where seven invoices are overdue: every one reminded, in page order, no other.
    later = InvoiceData(invoices(LATER, start=201))
    with invoice_site(later) as url, services() as sv:
        done = run(sv, approve(sv, workflow), url)
    assert done.run.status is RunStatus.SUCCEEDED, done.run.error
    assert later.reminded == later.numbers("Overdue")
    assert len(later.reminded) == 7
    assert not set(later.reminded) & set(later.numbers("Paid") + later.numbers("Due soon"))
    # the run record has a round for each, named by the invoice it did
    rounds = [s.title for s in done.run.steps if re.fullmatch(rf"{loop.id}#\d+", s.step_id)]
    assert [t.rsplit(": ", 1)[-1] for t in rounds] == later.numbers("Overdue"), rounds


def test_rows_chosen_for_no_reason_the_page_shows_become_a_list_to_give() -> None:
    """Two of three overdue invoices reminded: nothing on the page tells them from the third,
    so the loop goes over a list of invoice numbers (by default the two), never over every
    overdue row; a run with other numbers reminds exactly those."""
    recorded = InvoiceData(invoices(RECORDED))
    with invoice_site(recorded) as url, services() as sv:
        trajectory = _record(
            sv, f"{url}/invoices", "Send reminders", _reminding(["INV-101", "INV-105"])
        )
    result = induce(trajectory)
    loop = _loop(result.workflow)
    assert isinstance(loop.over, ListItems)
    listed = result.workflow.parameter(loop.over.value.strip("{}"))
    assert listed is not None and listed.type is ParameterType.LIST
    assert listed.default == "INV-101\nINV-105"
    assert any("nothing the page showed tells" in n for n in result.notes), result.notes

    # The same demonstration said to be about every overdue invoice: still not a loop over
    # them (the third overdue one was left alone).
    said = trajectory.model_copy(update={"intent": "Remind the overdue invoices"})
    assert isinstance(_loop(induce(said).workflow).over, ListItems)

    later = InvoiceData(invoices(LATER, start=201))
    with invoice_site(later) as url, services() as sv:
        done = run(sv, approve(sv, result.workflow), url, values={listed.name: "INV-204\nINV-201"})
    assert done.run.status is RunStatus.SUCCEEDED, done.run.error
    assert later.reminded == ["INV-204", "INV-201"]


def test_opening_each_row_ticking_and_saving_becomes_a_loop_over_every_row() -> None:
    """Open each invoice from its link (the link's own text tells the rows apart), tick
    "Disputed", save, come back: every row of the page was done, so the loop goes over every
    row of the next page too."""

    async def dispute(do: Demonstrator) -> None:
        page = do.page
        for number in ("INV-101", "INV-102", "INV-103"):
            await do.click(page.get_by_role("link", name=number, exact=True))
            await page.wait_for_url(f"**/invoice/{number}")
            await do.check(page.get_by_label("Disputed"))
            await do.click(page.get_by_role("button", name="Save"))
            await page.wait_for_load_state()
            await do.click(page.get_by_role("link", name="Back to the invoices"))
            await page.wait_for_url("**/invoices")

    recorded = InvoiceData(invoices(["Overdue", "Paid", "Due soon"]))
    with invoice_site(recorded) as url, services() as sv:
        trajectory = _record(sv, f"{url}/invoices", "Dispute the invoices", dispute)
    assert [i.disputed for i in recorded.invoices] == [True, True, True]
    workflow = induce(trajectory).workflow
    loop = _loop(workflow)
    assert isinstance(loop.over, PageItems) and loop.over.contains is None
    kinds = [s.kind for s in loop.steps]
    assert kinds == ["click", "check", "click", "click"], [s.title for s in loop.steps]
    opened = loop.steps[0]
    assert isinstance(opened, ClickStep)
    assert opened.target.locators[0].name == "{item}"
    assert isinstance(loop.steps[1], CheckStep)

    later = InvoiceData(invoices(["Paid", "Overdue", "Paid", "Due soon", "Overdue"], start=301))
    with invoice_site(later) as url, services() as sv:
        values = {p.name: str(p.default).lower() for p in workflow.parameters}
        done = run(sv, approve(sv, workflow), url, values=values)
    assert done.run.status in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED), done.run.error
    assert [i.disputed for i in later.invoices] == [True] * 5


def test_todomvc_to_dos_about_milk_completed_become_a_loop_over_them() -> None:
    """TodoMVC (vanillajs), an app nobody here wrote: three of six to-dos mention milk and
    are completed; the loop goes over the to-dos showing "milk" (the intent says so), and a
    run on another list completes every one of them and no other (the app's own
    localStorage says)."""
    from realapps.todomvc_app import TodoSite

    async def complete(do: Demonstrator) -> None:
        page = do.page
        for title in ("Buy milk", "Pour the milk", "Get oat milk"):
            item = page.get_by_role("listitem").filter(has_text=title)
            await do.check(item.get_by_role("checkbox"))
            await page.locator("li.completed", has_text=title).wait_for()

    first = ["Buy milk", "Walk the dog", "Pour the milk", "Call mom", "Get oat milk", "Pay rent"]
    with TodoSite("vanillajs") as site, services() as sv:
        site.seed([{"title": t, "completed": False} for t in first])
        trajectory = _record(sv, f"{site.url}/", "Complete the to-dos about milk", complete)
        assert [t["title"] for t in site.state()["todos"] if t["completed"]] == [
            "Buy milk",
            "Pour the milk",
            "Get oat milk",
        ]
    workflow = induce(trajectory).workflow
    loop = _loop(workflow)
    assert isinstance(loop.over, PageItems)
    assert loop.over.contains == "milk"
    assert loop.over.css == "#todo-list > li"
    (tick,) = loop.steps
    assert isinstance(tick, CheckStep)
    assert tick.target.locators[0].within is not None

    later = ["Milk the cow", "Feed the cat", "Buy milk", "Water plants", "Oat milk", "Milkshake"]
    with TodoSite("vanillajs") as site, services() as sv:
        site.seed([{"title": t, "completed": False} for t in later])
        values = {p.name: str(p.default).lower() for p in workflow.parameters}
        done = run(sv, approve(sv, workflow), site.url, values=values)
        assert done.run.status in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED), done.run.error
        completed = {t["title"]: t["completed"] for t in site.state()["todos"]}
    assert completed == {
        "Milk the cow": True,
        "Feed the cat": False,
        "Buy milk": True,
        "Water plants": False,
        "Oat milk": True,
        "Milkshake": True,  # holds "milk", as the loop's filter reads it
    }
