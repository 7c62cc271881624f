"""Blocks in the exported Playwright script: an if, loops over the page's rows and over a list
parameter, a repeat until and a try, run on their own against a site on 127.0.0.1 that keeps
what was done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import CHROMIUM
from factories import full_workflow
from invoices_site import Invoices, invoices_site

from desktop_app.core.exports.playwright_script import render_playwright
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
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

_ORIGIN = "http://127.0.0.1:8766"


def _button(name: str) -> Target:
    return Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name=name),))


def _add_note(value: str, number: str) -> tuple[FillStep, ClickStep]:
    note = Target(locators=(Locator(strategy=LocatorStrategy.LABEL, value="Note"),))
    return (
        FillStep(id=f"fill-{number}", title=f"Fill 'Note' with {value}", target=note, value=value),
        ClickStep(id=f"add-{number}", title="Click 'Add note'", target=_button("Add note")),
    )


def _remind_workflow(*, limit: int = 100) -> Workflow:
    """Accept cookies if asked, load every invoice, remind each unpaid one of more than 105,
    add a note for each line of {notes}, and try archiving (no such button: add a note)."""
    remind = ClickStep(
        title="Remind {invoice} of {amount}",
        target=Target(
            locators=(
                Locator(
                    strategy=LocatorStrategy.ROLE,
                    value="button",
                    name="Remind",
                    within=ItemScope(css="tr.invoice", text="{invoice}"),
                ),
            )
        ),
        irreversible=True,
    )
    return Workflow(
        name="Remind the big unpaid invoices",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="notes", type=ParameterType.LIST),),
        steps=(
            GotoStep(title="Open the invoices", url=f"{_ORIGIN}/"),
            IfStep(
                title="If cookies are asked about",
                condition=ElementVisible(
                    target=Target(
                        locators=(
                            Locator(strategy=LocatorStrategy.ROLE, value="dialog", name="Cookies"),
                        )
                    )
                ),
                steps=(ClickStep(title="Accept cookies", target=_button("Accept cookies")),),
            ),
            RepeatUntilStep(
                title="Load every invoice",
                condition=TextPresent(text="No more invoices"),
                max_rounds=5,
                timeout_s=2,
                steps=(ClickStep(title="Click 'Load more'", target=_button("Load more")),),
            ),
            ForEachStep(
                title="For each unpaid invoice",
                over=PageItems(
                    css="tr.invoice",
                    contains="Unpaid",
                    key="td.number",
                    fields={"amount": "td.amount"},
                ),
                item="invoice",
                limit=limit,
                steps=(
                    IfStep(
                        title="If {invoice} is over 105",
                        condition=ValueCompare(value="{amount}", op="greater", to="105"),
                        steps=(remind,),
                    ),
                ),
            ),
            ForEachStep(
                title="For each note",
                over=ListItems(value="{notes}"),
                item="note",
                steps=_add_note("{note}", "each"),
            ),
            TryStep(
                title="Try archiving",
                steps=(ClickStep(title="Click 'Archive'", target=_button("Archive"), timeout_s=1),),
                otherwise=_add_note("not archived", "fallback"),
            ),
        ),
    )


def _run(script: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM, "Chromium is not installed (bash scripts/test.sh installs it)"
    return subprocess.run(
        [
            sys.executable,
            str(script),
            "--base-url",
            url,
            "--headless",
            "--browser",
            CHROMIUM,
            *args,
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_the_script_does_each_row_the_if_picks_and_each_item_of_a_list(tmp_path: Path) -> None:
    script = tmp_path / "remind.py"
    script.write_text(render_playwright(_remind_workflow()), encoding="utf-8")
    data = Invoices(12)
    data.dialog, data.shown = True, 5
    with invoices_site(data) as (site, url):
        # A list parameter: several values after the option, lines within one, the option again.
        notes = ["--notes", "first", "second\nthird", "--notes", "fourth"]
        result = _run(script, url, *notes)
        assert result.returncode == 0, result.stderr
        big = [n for n, status, amount in site.rows if status == "Unpaid" and amount > 105]
        assert big == ["INV-006", "INV-008", "INV-010", "INV-012"]
        assert site.reminded == big  # each one once, in the page's order; no small one
        assert site.accepted and site.shown == 12
        assert site.notes == ["first", "second", "third", "fourth", "not archived"]
    err = result.stderr
    assert " 4/6 For each unpaid invoice" in err
    assert "4.1.1/6 Remind INV-006 of 106.00" in err
    assert "Remind INV-004" not in err
    assert "; falling back to step 6.2" in err
    assert err.rstrip().endswith("done: 6 steps")


@pytest.mark.slow
def test_more_rows_than_the_limit_stop_the_script_before_the_first(tmp_path: Path) -> None:
    script = tmp_path / "remind.py"
    script.write_text(render_playwright(_remind_workflow(limit=5)), encoding="utf-8")
    with invoices_site(Invoices(12)) as (site, url):
        result = _run(script, url, "--notes", "one")
        assert result.returncode == 1, result.stderr
        assert site.reminded == [] and site.notes == []
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "failed: step 4 'For each unpaid invoice': found 6 items, more than the loop's "
        "limit of 5; none was done"
    )


def test_a_list_parameter_is_required_unless_it_has_a_default(tmp_path: Path) -> None:
    script = tmp_path / "remind.py"
    script.write_text(render_playwright(_remind_workflow()), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script), "--headless"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "the following arguments are required: --notes" in result.stderr


@pytest.mark.slow
def test_a_try_never_falls_back_once_an_irreversible_step_inside_was_done(
    tmp_path: Path,
) -> None:
    remind_first = ClickStep(
        title="Remind INV-002",
        target=Target(
            locators=(
                Locator(
                    strategy=LocatorStrategy.ROLE,
                    value="button",
                    name="Remind",
                    within=ItemScope(css="tr.invoice", text="INV-002"),
                ),
            )
        ),
        irreversible=True,
    )
    workflow = Workflow(
        name="Remind, then archive",
        steps=(
            GotoStep(title="Open the invoices", url=f"{_ORIGIN}/"),
            TryStep(
                title="Try reminding and archiving",
                steps=(
                    remind_first,
                    ClickStep(title="Click 'Archive'", target=_button("Archive"), timeout_s=1),
                ),
                otherwise=_add_note("fell back", "fallback"),
            ),
        ),
    )
    script = tmp_path / "archive.py"
    text = render_playwright(workflow)
    assert "irreversible_done = True" in text
    script.write_text(text, encoding="utf-8")
    with invoices_site(Invoices(4)) as (site, url):
        result = _run(script, url)
        assert site.reminded == ["INV-002"]
        assert site.notes == []  # the fallback was not done
    assert result.returncode == 1, result.stderr
    assert "failed: step 2.2 'Click 'Archive''" in result.stderr


def test_the_script_reads_like_the_workflow_s_blocks() -> None:
    text = render_playwright(full_workflow())
    assert "    for invoice, amount in invoices:\n" in text
    assert "        at_most(step, invoices, 100)\n" in text
    assert "    if holds:\n" in text and "    else:\n" in text
    assert 'with Step(page, "17.2", "The plan is free", timeout) as step:' in text
    assert '        if not compare(args.plan, "equals", "free"):\n' in text
    assert "    except StepFailed as failure:\n" in text
    assert '"--teammates",\n        action=ListItems,\n        nargs="+",' in text
