"""A workflow with a loop run from the window: its list typed one item per line, each round
shown under the loop as it goes, the progress counting the workflow's own steps."""

from __future__ import annotations

import pytest
from gui_support import Gui, top_level, until
from invoices_site import invoices_site
from PySide6.QtWidgets import QPlainTextEdit
from replay_support import approve

from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    ForEachStep,
    GotoStep,
    ListItems,
    Parameter,
    ParameterType,
    TextPresent,
    Workflow,
)
from desktop_app.ui.run_models import StepColumn
from desktop_app.ui.run_view import RunDialog, RunWindow

pytestmark = pytest.mark.slow


def _workflow(url: str) -> Workflow:
    remind = Target(
        locators=(
            Locator(
                strategy=LocatorStrategy.ROLE,
                value="button",
                name="Remind",
                within=ItemScope(css="tr.invoice", text="{invoice}"),
            ),
        )
    )
    return Workflow(
        name="Remind the listed invoices",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="invoices", type=ParameterType.LIST),),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            ForEachStep(
                title="Remind each listed invoice",
                over=ListItems(value="{invoices}"),
                item="invoice",
                steps=(ClickStep(title="Remind {invoice}", target=remind, reacts=True),),
            ),
        ),
        success=(TextPresent(text="3 reminded"),),
    )


def test_a_loop_runs_from_the_window_with_its_rounds_under_it(gui: Gui) -> None:
    with invoices_site() as (data, url):
        version = gui.call(lambda: approve(gui.services, _workflow(url)))
        gui.window.open_run(version.workflow_id, None)
        gui.run(until(lambda: len(top_level(RunDialog)) == 1, what="the run dialog"))
        dialog: RunDialog = top_level(RunDialog)[0]
        field = dialog.form.field("invoices")
        assert isinstance(field, QPlainTextEdit), "a list is typed one item per line"
        assert not dialog.is_ready()
        field.setPlainText("INV-003\n\nINV-001\nINV-007\n")
        dialog.base_url.setText(url)
        dialog.show_browser.setChecked(False)
        assert dialog.is_ready(), dialog.error()
        dialog.run_button.click()
        gui.run(until(lambda: len(top_level(RunWindow)) == 1, what="the run window"))
        window: RunWindow = top_level(RunWindow)[0]
        gui.run(until(lambda: window.run is not None, timeout=60, what="the run to end"))
        run = window.run
        assert run is not None and run.status is RunStatus.SUCCEEDED, run and run.error
        assert data.reminded == ["INV-003", "INV-001", "INV-007"]

    model = window.steps_model
    titles = [model.text(row, StepColumn.TITLE).rstrip() for row in range(model.rowCount())]
    assert titles[:4] == [
        "Open the invoices",
        "Remind each listed invoice",
        "    Item 1 of 3: INV-003",
        "        Remind INV-003",
    ], titles
    assert titles[-1] == "Check that the task was done"
    assert window.progress.value() == window.progress.maximum()
    # The window shows the replay's events in batches: every step of the record is on a row
    # of its own, numbered as the record numbers it, and none is left waiting or running.
    assert sorted(model.steps(), key=lambda s: s.index) == list(run.steps)
    numbers = [model.text(row, StepColumn.NUMBER) for row in range(model.rowCount())]
    assert sorted(numbers, key=int) == [str(n) for n in range(1, len(run.steps) + 1)]
    statuses = {model.text(row, StepColumn.STATUS) for row in range(model.rowCount())}
    assert statuses == {"✓ Succeeded"}, statuses
    assert window.status_label.text() == "Succeeded"
    window.close()
