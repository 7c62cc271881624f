"""The Runs screen: the history of runs, its filter, and one run's record with screenshots."""

from __future__ import annotations

from datetime import timedelta

import pytest
from gui_support import Gui, top_level, until
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from replay_support import approved

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import MASK, Run, RunStatus, RunTrigger
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.run_models import StepColumn
from desktop_app.ui.runs_page import RunColumn, RunsPage

pytestmark = pytest.mark.slow


def _cell(page: RunsPage, row: int, column: int) -> str:
    value = page.model.index(row, column).data()
    return value if isinstance(value, str) else ""


def test_an_empty_history_says_how_runs_get_there(gui: Gui) -> None:
    page = gui.window.show_screen("Runs")
    assert isinstance(page, RunsPage)
    assert page.empty.isVisible()
    assert "No runs yet" in page.empty.text()


def test_the_history_lists_runs_and_shows_a_record_with_steps_and_screenshots(gui: Gui) -> None:
    version = gui.call(lambda: approved(gui.services, "create-contact"))
    earlier = Run(  # a run from the command line an hour ago that failed at once
        workflow_id=version.workflow_id,
        workflow_version=version.version,
        status=RunStatus.FAILED,
        trigger=RunTrigger.CLI,
        parameters={"full_name": "Old Run", "password": MASK},
        secret_parameters=("password",),
        started_at=utcnow() - timedelta(hours=1),
        finished_at=utcnow() - timedelta(hours=1) + timedelta(seconds=2),
        error="no browser",
    )
    gui.call(lambda: gui.services.runs.save_run(earlier))
    with DemoSite() as site:
        request = RunRequest(
            version=version,
            values={"full_name": "Grace Hopper"},
            secrets={"password": DEMO_PASSWORD},
            base_url=site.url,
            headless=True,
            options=ReplayOptions(trigger=RunTrigger.GUI),
        )
        run = gui.run(gui.backend.replay(request, person=None, on_event=lambda _event: None))
    assert run.status is RunStatus.SUCCEEDED
    gui.window.events.runs_changed.emit(run.id)

    page = gui.window.show_screen("Runs")
    assert isinstance(page, RunsPage)
    gui.run(until(lambda: len(page.visible_runs()) == 2, what="both runs listed"))
    assert [r.id for r in page.visible_runs()] == [run.id, earlier.id]  # newest first
    assert _cell(page, 0, RunColumn.WORKFLOW) == "Create a contact"
    assert _cell(page, 0, RunColumn.STATUS) == "Succeeded"
    assert _cell(page, 0, RunColumn.TRIGGER) == "window"
    assert _cell(page, 0, RunColumn.HEALED) == "0"
    assert _cell(page, 1, RunColumn.STATUS) == "Failed"
    assert _cell(page, 1, RunColumn.TRIGGER) == "command line"

    details = page.details
    gui.run(until(lambda: page.selected_run() is not None, what="the newest run selected"))
    assert page.selected_run() == gui.call(lambda: gui.services.runs.get_run(run.id))
    shown = {
        details.parameters.item(row, 0).text(): details.parameters.item(row, 1).text()
        for row in range(details.parameters.rowCount())
    }
    assert shown["full_name"] == "Grace Hopper"
    assert shown["password"] == MASK
    assert DEMO_PASSWORD not in " ".join(shown.values())
    steps = details.steps_model
    assert steps.rowCount() == 11  # the ten recorded and the success check
    assert steps.text(10, StepColumn.STATUS) == "✓ Succeeded"
    assert steps.text(9, StepColumn.STATUS) == "✓ Succeeded"
    assert steps.text(9, StepColumn.RESOLUTION) == "recorded locator"
    assert steps.text(9, StepColumn.LOCATOR).startswith("role=button")
    gui.run(until(details.screenshot.has_image, what="the last step's screenshot"))
    assert details.caption.text() == "After step 11: Check that the task was done"

    details.steps.selectRow(5)
    gui.run(until(lambda: details.caption.text().startswith("After step 6:"), what="step 6"))
    assert details.screenshot.has_image()
    full = details.screenshot.enlarge()
    assert full is not None and full.isVisible()
    assert [d for d in top_level(QDialog) if d.objectName() == "screenshot-dialog"]
    full.close()

    page.set_filter(status=RunStatus.FAILED)
    gui.run(until(lambda: [r.id for r in page.visible_runs()] == [earlier.id], what="filtered"))
    assert page.count_label.text() == "1 of 2 runs"
    gui.run(until(lambda: page.selected_run() == earlier))
    assert details.error.text() == "no browser"

    gui.window.show_run(run.id)  # filtered out: the filter makes way
    gui.run(until(lambda: (r := page.selected_run()) is not None and r.id == run.id))
    gui.run(until(lambda: len(page.visible_runs()) == 2, what="the filter gone"))


def test_a_run_done_unverified_reads_apart_from_a_success_and_a_failure(gui: Gui) -> None:
    version = gui.call(lambda: approved(gui.services, "create-contact"))
    ended = utcnow() - timedelta(minutes=5)

    def record(status: RunStatus, error: str | None, minutes: int) -> Run:
        return Run(
            workflow_id=version.workflow_id,
            workflow_version=version.version,
            status=status,
            started_at=ended - timedelta(minutes=minutes),
            finished_at=ended - timedelta(minutes=minutes) + timedelta(seconds=3),
            error=error,
        )

    no_check = "the workflow has no success check to show the task was done"
    runs = [
        record(RunStatus.SUCCEEDED, None, 3),
        record(RunStatus.UNVERIFIED, no_check, 2),
        record(RunStatus.FAILED, "step 4 'Click 'Sign in'' failed: could not find the element", 1),
    ]

    def save() -> None:
        for run in runs:
            gui.services.runs.save_run(run)

    gui.call(save)
    gui.window.events.runs_changed.emit("")  # as a run that ends does
    page = gui.window.show_screen("Runs")
    assert isinstance(page, RunsPage)
    gui.run(until(lambda: len(page.visible_runs()) == 3, what="the runs listed"))
    shown = {
        page.visible_runs()[row].status: (
            _cell(page, row, RunColumn.STATUS),
            page.model.index(row, RunColumn.STATUS).data(Qt.ItemDataRole.ForegroundRole),
        )
        for row in range(3)
    }
    assert shown[RunStatus.UNVERIFIED][0] == "Done, unverified"
    assert shown[RunStatus.SUCCEEDED][0] == "Succeeded" and shown[RunStatus.FAILED][0] == "Failed"
    colors = {status: brush.color().name() for status, (_text, brush) in shown.items()}
    assert len(set(colors.values())) == 3  # neither the green of a success nor the red of a failure
    filters = [page.status_filter.itemText(i) for i in range(page.status_filter.count())]
    assert "Done, unverified" in filters

    page.set_filter(status=RunStatus.UNVERIFIED)
    gui.run(until(lambda: [r.id for r in page.visible_runs()] == [runs[1].id], what="filtered"))
    gui.run(until(lambda: page.selected_run() == runs[1]))
    details = page.details
    assert details.title.text() == "Create a contact · version 1 · Done, unverified"
    assert details.error.text() == (
        "the workflow has no success check to show the task was done (add one in the editor)"
    )
    assert details.error.property("tone") == "unverified"  # its own colour, not red
