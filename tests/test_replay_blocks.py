"""Blocks replayed on a page of invoices: a loop over the rows that match, an ``if`` for a
dialog that comes or not, a ``try`` that falls back, a ``repeat_until`` that loads more. Every
run is judged by what the page's server holds, never by Procedura's report alone."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.openai_server import FakeOpenAIServer
from invoices_site import Invoices, invoices_site
from replay_support import ScriptedPerson, approve, run, services

from desktop_app.app import replay
from desktop_app.core.models.run import Resolution, RunStatus, StepStatus
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    CsvRows,
    ElementVisible,
    FillStep,
    ForEachStep,
    GotoStep,
    IfStep,
    ListItems,
    PageItems,
    Parameter,
    ParameterType,
    RepeatUntilStep,
    TextPresent,
    TryStep,
    ValueCompare,
    Workflow,
)
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.person import PersonAnswer


@pytest.fixture
def invoices() -> Iterator[tuple[Invoices, str]]:
    with invoices_site() as site:
        yield site


def _remind_in_row(text: str = "{invoice}") -> Target:
    return Target(
        locators=(
            Locator(
                strategy=LocatorStrategy.ROLE,
                value="button",
                name="Remind",
                within=ItemScope(css="tr.invoice", text=text),
            ),
        )
    )


def _button(name: str) -> Target:
    return Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name=name),))


def _remind_each_unpaid(url: str, *, limit: int = 100, contains: str = "Unpaid") -> Workflow:
    return Workflow(
        name="Remind every unpaid invoice",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            ForEachStep(
                title="Remind each unpaid invoice",
                over=PageItems(css="tr.invoice", contains=contains, key="td.number",
                               fields={"amount": "td.amount"}),
                item="invoice",
                limit=limit,
                steps=(ClickStep(title="Remind {invoice} ({amount})", target=_remind_in_row(),
                                 reacts=True),),
            ),
        ),
        success=(TextPresent(text="reminded"),),
    )  # fmt: skip


def test_a_loop_over_the_matching_rows_acts_on_each_and_on_no_other(
    invoices: tuple[Invoices, str],
) -> None:
    data, url = invoices
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url))
        result = run(sv, version, url)
    run_record = result.outcome.run
    assert run_record.status is RunStatus.SUCCEEDED, run_record.error
    assert data.reminded == data.unpaid(), "each unpaid invoice once, in page order, no paid one"
    rounds = [s for s in run_record.steps if "#" in s.step_id and "/" not in s.step_id]
    assert [s.iteration for s in rounds] == list(range(1, len(data.unpaid()) + 1))
    assert rounds[1].title == "Item 2 of 6: INV-004"
    clicks = [s for s in run_record.steps if s.title.startswith("Remind INV-")]
    assert [s.title for s in clicks][:2] == ["Remind INV-002 (102.00)", "Remind INV-004 (104.00)"]
    assert all(s.depth == 2 and s.status is StepStatus.SUCCEEDED for s in clicks)
    loop = next(s for s in run_record.steps if s.title == "Remind each unpaid invoice")
    assert loop.detail == "did 6 item(s)" and loop.depth == 0


def test_rows_a_loop_cannot_tell_apart_stop_it_before_it_does_anything(
    invoices: tuple[Invoices, str],
) -> None:
    data, url = invoices
    data.rows.append(("INV-002", "Unpaid", 7))  # a second row showing the same number
    data.shown = len(data.rows)
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url))
        outcome = run(sv, version, url).outcome.run
    assert outcome.status is RunStatus.FAILED
    assert "could not tell them apart; none was done" in (outcome.error or "")
    assert data.reminded == []


def test_more_items_than_the_limit_are_refused_before_the_first(
    invoices: tuple[Invoices, str],
) -> None:
    data, url = invoices
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url, limit=5))
        outcome = run(sv, version, url).outcome.run
    assert outcome.status is RunStatus.FAILED
    assert "found 6 items, more than the loop's limit of 5; none was done" in (outcome.error or "")
    assert data.reminded == []


def test_a_loop_over_nothing_does_nothing_and_says_so(invoices: tuple[Invoices, str]) -> None:
    data, url = invoices
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url, contains="Overdue"))
        outcome = run(sv, version, url).outcome.run
    assert outcome.status is RunStatus.SUCCEEDED
    assert data.reminded == []
    assert any(s.detail == "no items: nothing to do" for s in outcome.steps)


def _accept_cookies_if_asked(url: str) -> Workflow:
    return Workflow(
        name="Add a note",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="note"),),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            IfStep(
                title="If the cookie dialog shows",
                condition=ElementVisible(target=_button("Accept cookies")),
                timeout_s=0.5,
                steps=(ClickStep(title="Accept cookies", target=_button("Accept cookies"),
                                 reacts=True),),
            ),
            FillStep(title="Type the note", value="{note}", target=Target(
                locators=(Locator(strategy=LocatorStrategy.LABEL, value="Note"),))),
            ClickStep(title="Add the note", target=_button("Add note"), reacts=True),
        ),
    )  # fmt: skip


@pytest.mark.parametrize("dialog", [True, False], ids=["with-dialog", "without-dialog"])
def test_an_if_handles_the_page_with_and_without_its_dialog(
    invoices: tuple[Invoices, str], dialog: bool
) -> None:
    data, url = invoices
    data.dialog = dialog
    with services() as sv:
        version = approve(sv, _accept_cookies_if_asked(url))
        outcome = run(sv, version, url, values={"note": "checked"}).outcome.run
    assert outcome.status is RunStatus.UNVERIFIED, outcome.error  # no success check: done
    assert data.notes == ["checked"]
    assert data.accepted is dialog
    block = next(s for s in outcome.steps if s.title == "If the cookie dialog shows")
    assert block.branch == ("steps" if dialog else "otherwise")
    assert ("did 1 step(s)" if dialog else "did not hold; nothing to do") in (block.detail or "")


def test_a_list_parameter_and_a_csv_file_each_drive_a_loop(
    invoices: tuple[Invoices, str], tmp_path: Path
) -> None:
    data, url = invoices
    sheet = tmp_path / "chase.csv"
    sheet.write_text("Invoice,Why\nINV-003,late\nINV-005,very late\n", encoding="utf-8")
    workflow = Workflow(
        name="Remind the listed invoices",
        domains=("127.0.0.1",),
        parameters=(
            Parameter(name="numbers", type=ParameterType.LIST),
            Parameter(name="sheet"),
        ),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            ForEachStep(
                title="Remind each listed invoice",
                over=ListItems(value="{numbers}"),
                item="invoice",
                steps=(ClickStep(title="Remind {invoice}", target=_remind_in_row(), reacts=True),),
            ),
            ForEachStep(
                title="Remind each invoice of the sheet",
                over=CsvRows(path="{sheet}", column="Invoice", fields={"why": "Why"}),
                item="row",
                steps=(ClickStep(title="Remind {row}: {why}", target=_remind_in_row("{row}"),
                                 reacts=True),),
            ),
        ),
    )  # fmt: skip
    with services() as sv:
        version = approve(sv, workflow)
        outcome = run(
            sv, version, url, values={"numbers": '["INV-010", "INV-001"]', "sheet": str(sheet)}
        ).outcome.run
    assert outcome.status is RunStatus.UNVERIFIED, outcome.error
    assert data.reminded == ["INV-010", "INV-001", "INV-003", "INV-005"]
    assert any(s.title == "Remind INV-005: very late" for s in outcome.steps)


def test_a_try_falls_back_when_its_steps_fail_and_never_after_an_irreversible_one(
    invoices: tuple[Invoices, str],
) -> None:
    data, url = invoices

    def workflow(irreversible_first: bool) -> Workflow:
        return Workflow(
            name="Remind one way or another",
            domains=("127.0.0.1",),
            steps=(
                GotoStep(title="Open the invoices", url=f"{url}/"),
                TryStep(
                    title="Try the express reminder",
                    steps=(
                        ClickStep(title="Remind INV-002", target=_remind_in_row("INV-002"),
                                  reacts=True, irreversible=irreversible_first),
                        ClickStep(title="Express", target=_button("Express reminder"),
                                  timeout_s=1),
                    ),
                    otherwise=(ClickStep(title="Remind INV-004", target=_remind_in_row("INV-004"),
                                         reacts=True),),
                ),
            ),
        )  # fmt: skip

    with services() as sv:
        fell_back = run(sv, approve(sv, workflow(False)), url, patience_s=0.5).outcome.run
        assert fell_back.status is RunStatus.UNVERIFIED, fell_back.error
        assert data.reminded == ["INV-002", "INV-004"]
        data.reminded.clear()
        stopped = run(
            sv, approve(sv, workflow(True)), url, patience_s=0.5, assume_yes=True
        ).outcome.run
    assert stopped.status is RunStatus.FAILED
    assert "not falling back to 'otherwise': an irreversible step was done" in (stopped.error or "")
    assert data.reminded == ["INV-002"], "the fallback was not done after the irreversible step"


def test_repeat_until_loads_more_until_the_page_says_no_more_and_stops_at_its_bound(
    invoices: tuple[Invoices, str],
) -> None:
    data, url = invoices
    data.shown = 2

    def workflow(rounds: int) -> Workflow:
        return Workflow(
            name="Load every invoice",
            domains=("127.0.0.1",),
            steps=(
                GotoStep(title="Open the invoices", url=f"{url}/"),
                RepeatUntilStep(
                    title="Load more until there is no more",
                    condition=TextPresent(text="No more invoices"),
                    max_rounds=rounds,
                    steps=(ClickStep(title="Load more", target=_button("Load more"), reacts=True),),
                ),
            ),
        )

    with services() as sv:
        short = run(sv, approve(sv, workflow(1)), url).outcome.run
        assert short.status is RunStatus.FAILED
        assert "still not page shows “No more invoices” after 1 rounds" in (short.error or "")
        data.shown = 2
        enough = run(sv, approve(sv, workflow(5)), url).outcome.run
    assert enough.status is RunStatus.UNVERIFIED, enough.error
    assert data.shown == len(data.rows)
    block = next(s for s in enough.steps if s.title == "Load more until there is no more")
    assert block.detail == "page shows “No more invoices”: held after 2 round(s)"


def test_a_value_condition_compares_numbers_and_text(invoices: tuple[Invoices, str]) -> None:
    data, url = invoices
    workflow = Workflow(
        name="Remind big ones",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            ForEachStep(
                title="Each unpaid invoice",
                over=PageItems(css="tr.invoice", contains="unpaid", key="td.number",
                               fields={"amount": "td.amount"}),
                item="invoice",
                steps=(
                    IfStep(
                        title="If {invoice} is over 106",
                        condition=ValueCompare(value="{amount}", op="greater", to="106"),
                        steps=(ClickStep(title="Remind {invoice}", target=_remind_in_row(),
                                         reacts=True),),
                    ),
                ),
            ),
        ),
    )  # fmt: skip
    with services() as sv:
        outcome = run(sv, approve(sv, workflow), url).outcome.run
    assert outcome.status is RunStatus.UNVERIFIED, outcome.error
    assert data.reminded == ["INV-008", "INV-010", "INV-012"]


def test_stop_between_rounds_leaves_the_rest_undone(invoices: tuple[Invoices, str]) -> None:
    data, url = invoices
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url))
        params = bind_parameters(version.workflow, {})

        async def stopped_after_two() -> Any:
            task: asyncio.Task[Any] | None = None

            def on_event(event: Any) -> None:
                if event.step is None and event.title == "Item 3 of 6: INV-006":
                    assert task is not None
                    task.cancel()

            task = asyncio.ensure_future(
                replay(sv, version, params, options=ReplayOptions(use_llm=False),
                       base_url=url, headless=True, on_event=on_event)
            )  # fmt: skip
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(stopped_after_two())
        saved = sv.runs.runs()[0]
    assert saved.status is RunStatus.INTERRUPTED
    assert data.reminded == ["INV-002", "INV-004"]


def _nudge_in_the_row(body: dict[str, Any]) -> str:
    """A model that finds the renamed button in the row the step names."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    number = re.search(r"Remind (INV-\d+)", user)
    page = user.split("<page>", 1)[-1].splitlines()
    row = next((i for i, line in enumerate(page) if number and number.group(1) in line), None)
    for line in page[row or 0 :] if row is not None else []:
        found = re.search(r'button "Nudge" \[ref=([a-z0-9]+)\]', line)
        if found:
            return json.dumps({"action": "act", "ref": found.group(1), "reason": "its row"})
    return json.dumps({"action": "not_found", "ref": None, "reason": "not on the page"})


def test_a_heal_in_the_first_round_serves_the_next_rounds_without_the_llm(
    invoices: tuple[Invoices, str], llm: FakeOpenAIServer
) -> None:
    data, url = invoices
    data.button = "Nudge"  # the page changed since the loop was written
    llm.default_chat = _nudge_in_the_row
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url))
        result = run(sv, version, url, use_llm=True, patience_s=0.5)
    outcome = result.outcome.run
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert data.reminded == data.unpaid()
    clicks = [s for s in outcome.steps if s.title.startswith("Remind INV-")]
    assert clicks[0].resolution is Resolution.LLM and clicks[0].llm_calls == 1
    assert all(s.resolution is Resolution.ALTERNATE and s.llm_calls == 0 for s in clicks[1:])
    assert len(llm.requests_to("/v1/chat/completions")) == 1
    assert result.learned.proposed is None, "a round's element is never proposed for all rounds"


def test_a_run_past_its_time_limit_stops_before_its_next_round(
    invoices: tuple[Invoices, str],
) -> None:
    data, url = invoices
    with services() as sv:
        version = approve(sv, _remind_each_unpaid(url))
        options = ReplayOptions(use_llm=False, time_limit_s=0.5)
        result = asyncio.run(
            replay(sv, version, bind_parameters(version.workflow, {}), options=options,
                   base_url=url, headless=True)
        )  # fmt: skip
    outcome = result.outcome.run
    assert outcome.status is RunStatus.FAILED
    assert "took longer than its time limit (0.5 s); stopped before step" in (outcome.error or "")
    assert len(data.reminded) < len(data.unpaid()), "stopped before the last round"


@pytest.mark.parametrize(("confirm", "asked"), [("each", 6), ("once", 1)])
def test_an_irreversible_step_in_a_loop_is_confirmed_each_round_or_once_as_chosen(
    invoices: tuple[Invoices, str], llm: FakeOpenAIServer, confirm: str, asked: int
) -> None:
    data, url = invoices
    data.button = "Nudge"  # found by healing: an irreversible step then asks
    llm.default_chat = _nudge_in_the_row
    person = ScriptedPerson(lambda question: PersonAnswer(action="confirm"))
    loop = _remind_each_unpaid(url)
    block = loop.steps[1]
    assert isinstance(block, ForEachStep)
    click = block.steps[0].model_copy(update={"irreversible": True})
    loop = loop.model_copy(
        update={"steps": (loop.steps[0], block.model_copy(update={"steps": (click,),
                                                                   "confirm": confirm}))}
    )  # fmt: skip
    with services() as sv:
        outcome = run(
            sv, approve(sv, loop), url, use_llm=True, patience_s=0.5, person=person
        ).outcome.run
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert data.reminded == data.unpaid()
    assert len(person.questions) == asked
    assert all(q.kind == "confirm" for q in person.questions)
