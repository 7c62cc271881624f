"""The system tray: the approved workflows one click away, background runs, notifications."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fakes.keyring_backend import memory_keyring
from gui_support import Gui, top_level, until
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLineEdit
from replay_support import approved, without_success_check

from desktop_app.adapters.secrets import set_parameter_secret
from desktop_app.app import Services
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Run, RunStatus, RunTrigger
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.ui.batch_window import BatchDialog, BatchWindow, open_batch
from desktop_app.ui.run_view import RunDialog, RunWindow
from desktop_app.ui.tray import Tray, WorkflowSearchDialog

pytestmark = pytest.mark.slow


@pytest.fixture
def tray(gui: Gui) -> Iterator[Tray]:
    """A tray over the window, as if the platform had one (offscreen, none is there)."""
    made = Tray(gui.window, force=True)
    made.show()
    gui.run(made.reload())
    yield made
    made.hide()


def _entries(tray: Tray) -> list[str]:
    """The menu as a person reads it: section titles in [brackets], entries as they are."""
    shown = []
    for action in tray.menu.actions():
        if action.isSeparator():
            if action.text():
                shown.append(f"[{action.text()}]")
        else:
            shown.append(action.text())
    return shown


def _changed(gui: Gui, tray: Tray, workflow_id: str = "") -> None:
    """Tell the window the workflows changed (as the screens do) and wait for the new menu."""
    before = tray.plan
    gui.window.events.workflows_changed.emit(workflow_id)
    gui.run(until(lambda: tray.plan is not before, what="the menu to reload"))


def _elsewhere(sv: Services, version: WorkflowVersion) -> WorkflowVersion:
    """An approved one-step workflow without parameters on another site."""
    workflow = version.workflow
    other = workflow.model_copy(
        update={
            "id": "crm0lookup",
            "name": "Look up a CRM contact",
            "description": "Opens the CRM",
            "domains": ("crm.example.com",),
            "parameters": (),
            "intent_template": None,
            "steps": workflow.steps[:1],
            "success": (),
        }
    )
    saved = sv.workflows.save(other, actor="tester")
    return sv.workflows.approve(other.id, actor="tester", version=saved.version.version)


def test_the_menu_lists_approved_workflows_pinned_first_by_site_and_follows_changes(
    gui: Gui, tray: Tray
) -> None:
    assert tray.available and tray.state == "idle" and tray.tooltip() == "Procedura"
    assert _entries(tray) == [
        "No approved workflows yet",
        "Run over a &CSV file…",
        "&Record new…",
        "Record on the &desktop…",
        "&Open Procedura",
        "&Pause runs",
        "&Quit Procedura",
    ]

    def setup() -> tuple[str, str, str]:
        sv = gui.services
        contact = approved(sv, "create-contact")
        orders = approved(sv, "filter-orders")
        approved(sv, "open-contact")
        _elsewhere(sv, contact)
        draft = approved(sv, "expense-report")
        sv.workflows.save(  # a draft on top of an approved version: the approved one shows
            draft.workflow.model_copy(update={"description": "changed"}), actor="tester"
        )
        sv.workflows.set_pinned(contact.workflow_id, True)
        return contact.workflow_id, orders.workflow_id, draft.workflow_id

    assert not tray.batch_action.isEnabled()  # nothing to run over a file yet
    contact_id, orders_id, expense_id = gui.call(setup)
    _changed(gui, tray)
    assert tray.batch_action.isEnabled()
    assert _entries(tray)[:8] == [
        "[Pinned]",
        "★ Create a contact…",  # "…": it asks for parameters first
        "[127.0.0.1]",
        "Open the contact…",
        "Show the {status} orders…",
        "Submit an expense report for the client visit in Berlin…",
        "[crm.example.com]",
        "Look up a CRM contact",  # no parameters: it runs at once
    ]
    contact = tray.workflow_action(contact_id)
    assert contact is not None and contact.toolTip().endswith(
        "Asks for: username, password, full_name, email, company, subscribe_to_newsletter"
    )

    gui.call(lambda: gui.services.workflows.archive(orders_id, actor="tester"))
    _changed(gui, tray, orders_id)
    assert tray.workflow_action(orders_id) is None
    assert "Show the {status} orders…" not in _entries(tray)

    def rename() -> None:
        workflows = gui.services.workflows
        latest = workflows.get(expense_id)
        renamed = latest.workflow.model_copy(update={"name": "File an expense report"})
        saved = workflows.save(renamed, actor="tester")
        workflows.approve(expense_id, actor="tester", version=saved.version.version)

    gui.call(rename)
    _changed(gui, tray, expense_id)
    assert "File an expense report…" in _entries(tray)
    assert not any(e.startswith("Submit an expense") for e in _entries(tray))

    tray.search_after = 3  # many workflows: a search entry comes first
    _changed(gui, tray)
    assert _entries(tray)[0] == "&Search workflows…"
    tray.search_action.trigger()
    search: WorkflowSearchDialog = top_level(WorkflowSearchDialog)[0]  # type: ignore[assignment]
    assert len(search.matches()) == 4
    search.query.setText("crm.example")  # its site
    assert search.matches() == ["Look up a CRM contact"]
    search.query.setText("nothing like this")
    assert search.matches() == [] and search.empty.isVisible()
    search.reject()


def test_pausing_refuses_runs_and_closing_the_window_keeps_the_app_in_the_tray(
    gui: Gui, tray: Tray
) -> None:
    workflow_id = gui.call(lambda: approved(gui.services, "open-contact").workflow_id)
    _changed(gui, tray, workflow_id)

    tray.pause_action.trigger()
    assert tray.paused and tray.state == "paused"
    assert tray.tooltip() == "Procedura — runs paused"
    action = tray.workflow_action(workflow_id)
    assert action is not None
    action.trigger()
    assert tray.last_message is not None and tray.last_message.title == "Runs are paused"
    gui.settle()
    assert not top_level(RunDialog)  # nothing was started
    tray.set_paused(False)
    assert tray.state == "idle" and not tray.pause_action.isChecked()

    gui.window.close()  # the title bar's close button
    assert not gui.window.isVisible()
    assert tray.last_message.title == "Procedura is still running"
    tray.open_action.trigger()
    assert gui.window.isVisible()

    quits: list[bool] = []
    tray.quit_requested.connect(lambda: quits.append(True))
    quit_key = gui.window.findChild(QAction, "action-quit")
    assert quit_key is not None and quit_key.shortcut().matches(QKeySequence.StandardKey.Quit)
    quit_key.trigger()  # Ctrl+Q quits the app, not just the window
    assert quits == [True] and not gui.window.isVisible()


def test_a_tray_entry_runs_the_workflow_in_the_background_and_notifies(
    gui: Gui, tray: Tray
) -> None:
    with memory_keyring(), DemoSite() as site:

        def setup() -> str:
            version = approved(gui.services, "create-contact")
            set_parameter_secret(version.workflow_id, "password", DEMO_PASSWORD)
            return version.workflow_id

        workflow_id = gui.call(setup)
        _changed(gui, tray, workflow_id)
        gui.window.close()  # in the tray: the dialogs come without the main window
        assert not gui.window.isVisible()

        def ask(name: str) -> str:
            action = tray.workflow_action(workflow_id)
            assert action is not None
            action.trigger()
            gui.run(until(lambda: bool(top_level(RunDialog)), what="the parameter dialog"))
            dialog: RunDialog = top_level(RunDialog)[0]  # type: ignore[assignment]
            password = dialog.form.field("password")
            assert isinstance(password, QLineEdit)
            assert password.text() == DEMO_PASSWORD  # from the keyring, masked
            assert password.echoMode() is QLineEdit.EchoMode.Password
            full_name = dialog.form.field("full_name")
            assert isinstance(full_name, QLineEdit)
            before = full_name.text()
            full_name.setText(name)
            dialog.base_url.setText(site.url)
            dialog.show_browser.setChecked(False)
            assert dialog.is_ready(), dialog.error()
            dialog.run_button.click()
            return before

        ask("Tray Person")
        gui.run(until(lambda: tray.state == "running", what="the run to show in the tray"))
        assert tray.tooltip().startswith("Procedura — running “Create a contact”")
        assert not top_level(RunWindow)  # it runs in the background
        stop = [a for a in tray.menu.actions() if a.objectName() == "tray-stop-run"]
        assert [a.text() for a in stop] == ["■ Stop “Create a contact”"]
        gui.run(until(lambda: tray.state == "idle", timeout=60, what="the run to end"))
        message = tray.last_message
        assert message is not None and message.title == "✓ “Create a contact” succeeded"
        assert message.run_id and "11 steps" in message.text
        assert any(c["full_name"] == "Tray Person" for c in site.contacts())
        run = gui.call(lambda: gui.services.runs.get_run(message.run_id or ""))
        assert run.status is RunStatus.SUCCEEDED and run.trigger is RunTrigger.TRAY
        assert run.parameters["full_name"] == "Tray Person"

        assert ask("Stopped Person") == "Tray Person"  # the last values; stop this one midway
        gui.run(until(lambda: "step 2 of 10" in tray.tooltip(), timeout=60, what="a step or two"))
        tray.stop_all()
        gui.run(until(lambda: tray.state == "idle", timeout=30, what="the run to stop"))
        stopped = tray.last_message
        assert stopped is not None and stopped.title == "■ “Create a contact” was stopped"
        assert not any(c["full_name"] == "Stopped Person" for c in site.contacts())

    assert not gui.window.isVisible()
    tray.last_message = message
    tray.open_message()  # clicking the notification: the run record, in the window
    assert gui.window.isVisible()
    runs = gui.window.runs
    gui.run(until(lambda: (r := runs.selected_run()) is not None and r.id == run.id))


def test_a_csv_batch_starts_from_the_tray_with_the_window_closed_and_notifies(
    gui: Gui, tray: Tray, tmp_path: Path
) -> None:
    workflow_id = gui.call(lambda: approved(gui.services, "create-contact").workflow_id)
    _changed(gui, tray, workflow_id)
    gui.window.close()
    assert not gui.window.isVisible()
    people = tmp_path / "people.csv"
    people.write_text("full_name,email\nBatch Tray,batch@example.test\n", encoding="utf-8")

    tray.batch_action.trigger()  # pick the workflow, then the file
    picker: WorkflowSearchDialog = top_level(WorkflowSearchDialog)[0]  # type: ignore[assignment]
    assert picker.windowTitle() == "Run a workflow over a CSV file"
    picker.query.setText("contact")
    picker.accept()
    gui.run(until(lambda: bool(top_level(BatchDialog)), what="the batch dialog"))
    dialog: BatchDialog = top_level(BatchDialog)[0]  # type: ignore[assignment]
    files = dialog.findChild(QFileDialog, "batch-file-dialog")
    assert files is not None and files.isVisible()
    files.fileSelected.emit(str(people))  # as if chosen there
    files.close()
    gui.run(until(lambda: dialog.plan is not None and not dialog.planning, what="the check"))
    assert dialog.secrets_form is not None
    password = dialog.secrets_form.field("password")
    assert isinstance(password, QLineEdit)
    password.setText(DEMO_PASSWORD)
    dialog.show_browser.setChecked(False)
    with DemoSite() as site:
        dialog.base_url.setText(site.url)
        assert dialog.is_ready(), dialog.run_button.toolTip()
        dialog.run_button.click()
        gui.run(until(lambda: tray.state == "running", what="the batch to show in the tray"))
        assert tray.tooltip().startswith("Procedura — running “Create a contact (batch)”")
        assert [a.text() for a in tray.menu.actions() if a.objectName() == "tray-stop-run"] == [
            "■ Stop “Create a contact (batch)”"
        ]
        gui.run(until(lambda: tray.state == "idle", timeout=60, what="the batch to end"))
        assert any(c["full_name"] == "Batch Tray" for c in site.contacts())

    message = tray.last_message
    assert message is not None
    assert message.title == "“Create a contact” over a CSV file: ✓ All 1 rows succeeded"
    assert f"Results: {tmp_path / 'people.results.csv'}" in message.text
    assert not message.failed
    (window,) = top_level(BatchWindow)
    window.hide()
    tray.open_message()  # clicking the notification: the batch window again
    assert window.isVisible() and not gui.window.isVisible()
    window.close()


def test_a_run_done_unverified_is_notified_as_such_never_as_a_success_or_a_failure(
    gui: Gui, tray: Tray
) -> None:
    ended = utcnow()
    run = Run(
        workflow_id="w" * 32,
        workflow_version=1,
        status=RunStatus.UNVERIFIED,
        trigger=RunTrigger.TRAY,
        started_at=ended - timedelta(seconds=4),
        finished_at=ended,
        error="the workflow has no success check to show the task was done",
    )
    tray._notify_end("Create a contact", run, "")
    message = tray.last_message
    assert message is not None and message.title == "⚠ “Create a contact” done, unverified"
    assert message.text.splitlines()[1] == (
        "the workflow has no success check to show the task was done (add one in the editor)"
    )
    assert message.unverified and not message.failed and message.run_id == run.id

    failed = run.model_copy(update={"status": RunStatus.FAILED, "error": "step 4 failed"})
    tray._notify_end("Create a contact", failed, "")
    message = tray.last_message
    assert message is not None and message.title == "✗ “Create a contact” failed"
    assert message.failed and not message.unverified


def test_a_batch_whose_rows_are_done_unverified_says_so_in_its_window_and_the_tray(
    gui: Gui, tray: Tray, tmp_path: Path
) -> None:
    version = gui.call(
        lambda: without_success_check(gui.services, approved(gui.services, "create-contact"))
    )
    people = tmp_path / "people.csv"
    people.write_text("full_name\nUma Verity\n", encoding="utf-8")
    open_batch(gui.window, version.workflow_id, people)
    gui.run(until(lambda: bool(top_level(BatchDialog)), what="the batch dialog"))
    dialog: BatchDialog = top_level(BatchDialog)[0]  # type: ignore[assignment]
    gui.run(until(lambda: dialog.plan is not None and not dialog.planning, what="the check"))
    assert dialog.secrets_form is not None
    password = dialog.secrets_form.field("password")
    assert isinstance(password, QLineEdit)
    password.setText(DEMO_PASSWORD)
    dialog.show_browser.setChecked(False)
    with DemoSite() as site:
        dialog.base_url.setText(site.url)
        assert dialog.is_ready(), dialog.run_button.toolTip()
        dialog.run_button.click()
        gui.run(until(lambda: len(top_level(BatchWindow)) == 1, what="the batch window"))
        (window,) = top_level(BatchWindow)
        assert isinstance(window, BatchWindow)
        gui.run(until(lambda: window.summary.isVisible(), timeout=60, what="the batch's end"))
        assert any(c["full_name"] == "Uma Verity" for c in site.contacts())

    assert window.rows_model.statuses() == {2: "⚠ Done, unverified"}
    assert window.outcome.text() == "⚠ 1 of 1 rows done, unverified"
    assert window.status_label.text() == "1 row: 0 succeeded, 1 done unverified"
    assert window.retry_button.isVisible()  # they run again: only rows that succeeded are skipped
    gui.run(until(lambda: tray.last_message is not None, what="the notification"))
    message = tray.last_message
    assert message is not None
    assert message.title == "“Create a contact” over a CSV file: ⚠ 1 of 1 rows done, unverified"
    assert message.unverified and not message.failed
    window.close()
