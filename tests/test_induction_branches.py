"""An ``if`` induced from several demonstrations: one met a cookie banner and accepted it, the
other did not meet it. The workflow accepts the banner only when it shows, and its replay
works with the banner and without it. The judge is the server's own data."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from demonstrations import MACHINE, Demonstrator, Scenario
from invoice_site import InvoiceData, invoice_site, invoices
from recording_support import record_demonstration
from replay_support import approve, run, services

from desktop_app.core.documents import dump_document, load_workflow
from desktop_app.core.induction.multi import induce_many
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.models.workflow import ClickStep, ElementVisible, IfStep

pytestmark = pytest.mark.slow

STATUSES = ["Overdue", "Paid", "Overdue", "Due soon", "Overdue", "Paid"]


def _reminding(number: str) -> Any:
    async def remind(do: Demonstrator) -> None:
        page = do.page
        accept = page.get_by_role("button", name="Accept cookies")
        if await accept.count():
            await do.click(accept)
            await accept.wait_for(state="detached")
        row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=number))
        await do.click(row.get_by_role("button", name="Remind"))
        await page.get_by_text(f"Reminder sent for {number}").wait_for()

    return remind


def _record(url: str, number: str) -> Trajectory:
    scenario = Scenario("remind", "own", "", f"Send a reminder for {number}", _reminding(number))
    with services() as sv:
        return asyncio.run(record_demonstration(sv, f"{url}/invoices", scenario, MACHINE))


def test_a_banner_one_demonstration_met_becomes_an_if() -> None:
    data = InvoiceData(invoices(STATUSES), banner=True)
    with invoice_site(data) as url:
        with_banner = _record(url, "INV-103")
        assert not data.banner  # accepted
        without = _record(url, "INV-105")
    assert data.reminded == ["INV-103", "INV-105"]
    result = induce_many([with_banner, without])
    workflow = result.workflow
    kinds = [s.kind for s in workflow.steps]
    assert kinds == ["goto", "if", "click"], [s.title for s in workflow.steps]
    banner = workflow.steps[1]
    assert isinstance(banner, IfStep) and not banner.otherwise
    assert isinstance(banner.condition, ElementVisible)
    # the condition names the button itself, never a path another element could match
    assert banner.condition.target.locators[0].describe() == ('role=button[name="Accept cookies"]')
    assert all(
        loc.strategy.value not in {"css", "xpath"} for loc in banner.condition.target.locators
    )
    (accept,) = banner.steps
    assert isinstance(accept, ClickStep) and not accept.optional
    assert any("after a dialog: done only when" in n for n in result.notes), result.notes
    assert load_workflow(dump_document(workflow)) == workflow
    (invoice,) = workflow.parameters
    assert invoice.default == "INV-103"

    with services() as sv:
        approved = approve(sv, workflow)
    for shown in (True, False):
        data = InvoiceData(invoices(STATUSES, start=201), banner=shown)
        with invoice_site(data) as url, services() as sv:
            done = run(sv, approved, url, values={invoice.name: "INV-204"})
        assert done.run.status in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED), done.run.error
        assert data.reminded == ["INV-204"]
        assert not data.banner  # accepted when it showed
        record = next(s for s in done.run.steps if s.step_id == banner.id)
        assert record.branch == ("steps" if shown else "otherwise"), record
