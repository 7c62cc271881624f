"""A new user's first workflow, all from the window: record → edit → approve → run."""

from __future__ import annotations

import pytest
from demo_tasks import create_contact
from gui_support import Gui, top_level, until
from PySide6.QtWidgets import QInputDialog, QLineEdit

from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.ui.editor.window import EditorWindow
from desktop_app.ui.record import RecordDialog, active_recording
from desktop_app.ui.review_page import CommentDialog
from desktop_app.ui.run_view import RunDialog, RunWindow

pytestmark = pytest.mark.slow


def test_record_edit_approve_and_run_a_workflow_from_the_window(
    gui: Gui, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = gui.window
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("clearer name", True))

    async def journey(site: DemoSite) -> str:
        # 1. record: the dialog, the browser, the scripted person doing the task, Stop
        window.record_action.trigger()
        await until(lambda: bool(top_level(RecordDialog)), what="the record dialog")
        dialog = top_level(RecordDialog)[0]
        assert isinstance(dialog, RecordDialog)
        dialog.headless = True
        dialog.minimise_window = False
        dialog.url.setText(site.url + "/login")
        dialog.intent.setText("Create a contact for Jane Doe at Globex")
        dialog.start_button.click()
        controller = active_recording(window)
        assert controller is not None
        await until(lambda: controller.controls is not None, what="the browser")
        assert controller.controls is not None
        await create_contact(controller.controls.page)  # type: ignore[attr-defined]
        await until(lambda: "Save" in " ".join(controller.steps.texts()), what="the last step")
        controller.bar.stop_button.click()

        # 2. the draft opens in the editor: rename a parameter everywhere, save, submit
        await until(lambda: bool(top_level(EditorWindow)), timeout=60, what="the editor")
        editor = top_level(EditorWindow)[0]
        assert isinstance(editor, EditorWindow)
        await until(lambda: editor.workflow is not None, what="the draft loaded")
        assert editor.workflow is not None
        workflow_id = editor.workflow.id
        assert editor.rename_parameter("full_name", "contact_name")
        editor.action_save.trigger()
        await until(lambda: not editor.isWindowModified(), what="the save")
        await window.tasks.idle()
        editor.action_submit.trigger()
        await window.tasks.idle()
        editor.close()

        # 3. review: the submitted version waits; approve it
        window.show_review(workflow_id, None)
        await window.tasks.idle()
        review = window.review
        await until(lambda: review.approve_button.isEnabled(), what="approve offered")
        review.approve_button.click()
        comment = review.findChild(CommentDialog)
        assert comment is not None
        comment.accept()
        await window.tasks.idle()

        # 4. run it from the Library with new values
        window.show_screen("Library")
        await window.library.reload()
        assert window.library.select(workflow_id)
        window.library.run_button.click()
        await until(lambda: bool(top_level(RunDialog)), what="the run dialog")
        run_dialog = top_level(RunDialog)[0]
        assert isinstance(run_dialog, RunDialog)
        for name, value in (
            ("password", DEMO_PASSWORD),
            ("contact_name", "Grace Hopper"),
            ("email", "grace@example.test"),
        ):
            field = run_dialog.form.field(name)
            assert isinstance(field, QLineEdit), name
            field.setText(value)
        run_dialog.show_browser.setChecked(False)
        assert run_dialog.is_ready(), run_dialog.error()
        run_dialog.run_button.click()
        await until(lambda: bool(top_level(RunWindow)), what="the run window")
        run_window = top_level(RunWindow)[0]
        assert isinstance(run_window, RunWindow)
        await until(lambda: run_window.run is not None, timeout=90, what="the run to end")
        assert run_window.run is not None
        assert run_window.run.status is RunStatus.SUCCEEDED, run_window.run.error
        return workflow_id

    with DemoSite() as site:
        workflow_id = gui.run(journey(site), timeout=240)
        contacts = site.contacts()
    assert any(
        c["full_name"] == "Grace Hopper" and c["email"] == "grace@example.test" for c in contacts
    )
    library = gui.services.workflows
    approved = library.runnable(workflow_id)
    assert approved.version == 2 and approved.status is WorkflowStatus.APPROVED
    assert approved.workflow.parameter("contact_name") is not None
    assert library.get(workflow_id, 1).workflow.parameter("full_name") is not None
