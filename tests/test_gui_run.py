"""Running a workflow from the window: the parameter form, the live run view, questions, Stop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakes.keyring_backend import memory_keyring
from gui_support import Gui, top_level, until
from PySide6.QtCore import QBuffer, QByteArray, QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QWidget
from replay_support import approved, without_success_check

from desktop_app.app import Services
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.models.run import Resolution, RunStatus
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.replay.browser import Handle
from desktop_app.core.replay.person import Choice, PersonAnswer, Question
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.ui.person_dialogs import (
    ConfirmDialog,
    DialogPerson,
    LocateDialog,
    element_picture,
)
from desktop_app.ui.run_models import StepColumn, status_color
from desktop_app.ui.run_view import RunDialog, RunWindow
from desktop_app.ui.runs_page import RunColumn
from desktop_app.ui.screenshot_view import ScreenshotLoader

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def quick_healing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drifted elements are looked for by their recorded locators for half a second only."""
    monkeypatch.setenv("PROCEDURA_REPLAY_PATIENCE_S", "0.5")


def _one(kind: type[Any]) -> Any:
    found = top_level(kind)
    assert len(found) == 1, found
    return found[0]


def _open_dialog(gui: Gui, workflow_id: str, version: int | None = None) -> RunDialog:
    gui.window.open_run(workflow_id, version)
    gui.run(until(lambda: len(top_level(RunDialog)) == 1, what="the run dialog"))
    dialog: RunDialog = _one(RunDialog)
    return dialog


def _line(dialog: RunDialog, name: str) -> QLineEdit:
    field = dialog.form.field(name)
    assert isinstance(field, QLineEdit)
    return field


def _start(gui: Gui, dialog: RunDialog, base_url: str) -> RunWindow:
    _line(dialog, "password").setText(DEMO_PASSWORD)
    dialog.base_url.setText(base_url)
    dialog.show_browser.setChecked(False)
    assert dialog.is_ready(), dialog.error()
    dialog.run_button.click()
    gui.run(until(lambda: len(top_level(RunWindow)) == 1, what="the run window"))
    window: RunWindow = _one(RunWindow)
    gui.run(until(window.isActiveWindow, what="the run window in front of the main window"))
    return window


def _save_is_irreversible(sv: Services) -> WorkflowVersion:
    """create-contact whose Save step is irreversible and known only by its role and name.

    On the relabeled site ("Save contact") the recorded locator fails and the fingerprint finds
    the button: an irreversible step resolved by healing, which needs a confirmation.
    """
    version = approved(sv, "create-contact")
    steps = []
    for step in version.workflow.steps:
        if step.title == "Click 'Save'":
            target = step.target_or_none
            assert target is not None
            only_role = tuple(x for x in target.locators if x.strategy is LocatorStrategy.ROLE)
            step = step.model_copy(
                update={
                    "irreversible": True,
                    "target": target.model_copy(update={"locators": only_role}),
                }
            )
        steps.append(step)
    workflow = version.workflow.model_copy(update={"steps": tuple(steps)})
    saved = sv.workflows.save(workflow, actor="tester")
    return sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)


def test_the_form_has_a_field_per_type_and_refuses_bad_values_with_the_reason(gui: Gui) -> None:
    version = gui.call(lambda: approved(gui.services, "create-contact"))
    workflow_id = version.workflow_id
    dialog = _open_dialog(gui, workflow_id)
    form = dialog.form
    assert not dialog.findChild(QWidget, "draft-warning")
    assert isinstance(form.field("company"), QComboBox)
    assert isinstance(form.field("subscribe_to_newsletter"), QCheckBox)
    assert _line(dialog, "password").echoMode() is QLineEdit.EchoMode.Password
    assert _line(dialog, "full_name").text() == "Jane Doe"  # the default
    assert form.field("full_name").toolTip().startswith("What to enter in 'Full name'")

    assert not dialog.is_ready()  # the secret is not in the keyring: it must be typed
    assert form.problem("password") == "Password needs a value."
    assert dialog.run_button.toolTip() == "Password needs a value."
    _line(dialog, "password").setText(DEMO_PASSWORD)
    assert dialog.is_ready()

    _line(dialog, "email").setText("jane at example")
    _line(dialog, "full_name").setText("")  # blank: the default is used
    assert not dialog.is_ready() and not dialog.run_button.isEnabled()
    assert form.problem("email") == "'jane at example' is not an email address"
    assert form.problem("full_name") == ""
    _line(dialog, "email").setText("jane@example.test")
    assert dialog.is_ready() and form.problem("email") == ""

    dialog.base_url.setText("ftp://files.example")
    assert not dialog.is_ready()
    assert "not an http(s) URL" in dialog.options_error.text()
    dialog.base_url.setText("")
    assert dialog.is_ready()
    dialog.reject()

    draft = gui.call(
        lambda: gui.services.workflows.save(
            version.workflow.model_copy(update={"description": "Tried out"}), actor="tester"
        )
    )
    dialog = _open_dialog(gui, workflow_id, draft.version.version)
    warning = dialog.findChild(QWidget, "draft-warning")
    assert warning is not None and "draft" in warning.text()  # type: ignore[attr-defined]
    dialog.reject()


def test_a_run_from_the_window_shows_each_step_and_ends_with_a_summary(gui: Gui) -> None:
    with memory_keyring() as keyring, DemoSite() as site:
        version = gui.call(lambda: approved(gui.services, "create-contact"))
        dialog = _open_dialog(gui, version.workflow_id)
        _line(dialog, "full_name").setText("Ada Lovelace")
        _line(dialog, "email").setText("ada@example.test")
        company = dialog.form.field("company")
        assert isinstance(company, QComboBox)
        company.setCurrentIndex(company.findText("Initech"))
        dialog.form.remember.setChecked(True)
        window = _start(gui, dialog, site.url)

        gui.run(until(lambda: window.run is not None, timeout=60, what="the run to end"))
        run = window.run
        assert run is not None and run.status is RunStatus.SUCCEEDED, run and run.error
        assert any(
            c["full_name"] == "Ada Lovelace" and c["company"] == "Initech" for c in site.contacts()
        )

    model = window.steps_model
    assert model.rowCount() == len(version.workflow.steps) + 1 == 11  # and the success check
    assert model.text(10, StepColumn.TITLE) == "Check that the task was done"
    for row in range(model.rowCount()):
        assert model.text(row, StepColumn.STATUS) == "✓ Succeeded"
    found_by = [model.text(row, StepColumn.RESOLUTION) for row in range(model.rowCount())]
    assert found_by == ["no element"] + ["recorded locator"] * 9 + ["no element"]
    assert model.text(5, StepColumn.TITLE) == "Fill 'Full name' with Ada Lovelace"
    gui.run(until(window.screenshot.has_image, what="a screenshot"))
    assert window.outcome.text() == "✓ Succeeded"
    assert "11 steps" in window.summary_text.text() and "0 healed" in window.summary_text.text()
    assert window.totals.text() == "LLM: 0 calls · 0 tokens"
    assert window.progress.value() == window.progress.maximum()  # full
    assert not window.review_button.isVisible() and not window.stop_button.isVisible()
    secret_key = ("procedura", f"workflow:{version.workflow_id}:password")
    assert keyring.passwords[secret_key] == DEMO_PASSWORD
    with memory_keyring() as keyring:  # the keyring as it is now: it holds the password
        keyring.passwords[secret_key] = DEMO_PASSWORD
        window.again_button.click()
        gui.run(until(lambda: bool(window.findChildren(RunDialog)), what="the dialog again"))
    again = window.findChildren(RunDialog)[0]
    hint = again.form.findChild(QLabel, "hint-password")
    assert hint is not None and hint.text().endswith("filled in from the keyring"), hint.text()
    again.reject()

    window.record_button.click()
    runs = gui.window.runs
    gui.run(until(lambda: (r := runs.selected_run()) is not None and r.id == run.id))
    window.close()


def test_secrets_the_keyring_will_not_keep_are_said_in_the_window_and_the_run_goes_on(
    gui: Gui,
) -> None:
    # This machine has no keyring (the tests' own default: keyring's "fail" backend).
    with DemoSite() as site:
        version = gui.call(lambda: approved(gui.services, "create-contact"))
        dialog = _open_dialog(gui, version.workflow_id)
        _line(dialog, "full_name").setText("Kim Nokeyring")
        dialog.form.remember.setChecked(True)
        window = _start(gui, dialog, site.url)
        gui.run(until(lambda: window.run is not None, timeout=60, what="the run to end"))
        assert any(c["full_name"] == "Kim Nokeyring" for c in site.contacts())
    run = window.run
    assert run is not None and run.status is RunStatus.SUCCEEDED, run and run.error
    assert window.notice.isVisible()
    said = window.notice.text()
    assert said.startswith("Not remembered: password (no usable OS keyring"), said
    assert "used for this run only" in said and DEMO_PASSWORD not in said

    window.again_button.click()  # the password is not in any keyring: the form must not say so
    gui.run(until(lambda: bool(window.findChildren(RunDialog)), what="the dialog again"))
    again = window.findChildren(RunDialog)[0]
    hint = again.form.findChild(QLabel, "hint-password")
    assert hint is not None and "keyring" in hint.text()
    assert "as typed for the last run" in hint.text() and "from the keyring" not in hint.text()
    again.reject()
    window.close()


def test_a_run_that_nothing_shows_was_done_ends_done_unverified_not_succeeded(gui: Gui) -> None:
    with DemoSite() as site:
        version = gui.call(
            lambda: without_success_check(gui.services, approved(gui.services, "create-contact"))
        )
        dialog = _open_dialog(gui, version.workflow_id)
        _line(dialog, "full_name").setText("Uma Verity")
        window = _start(gui, dialog, site.url)
        gui.run(until(lambda: window.run is not None, timeout=60, what="the run to end"))
        assert any(c["full_name"] == "Uma Verity" for c in site.contacts())

    run = window.run
    assert run is not None and run.status is RunStatus.UNVERIFIED, run and run.error
    assert window.outcome.text() == "⚠ Done, unverified"
    colors = {
        status: color.name()
        for status in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED, RunStatus.FAILED)
        if (color := status_color(status)) is not None
    }
    assert len(set(colors.values())) == 3  # its own colour: neither the green nor the red
    assert window.outcome.property("tone") == "unverified"
    assert window.status_label.text() == "Done, unverified"
    assert (
        "the workflow has no success check to show the task was done (add one in the editor)"
        in window.summary_text.text()
    )

    window.record_button.click()  # the run record says the same
    runs = gui.window.runs
    gui.run(until(lambda: (r := runs.selected_run()) is not None and r.id == run.id))
    row = next(i for i, r in enumerate(runs.visible_runs()) if r.id == run.id)
    assert runs.model.index(row, RunColumn.STATUS).data() == "Done, unverified"
    assert runs.details.title.text().endswith("· Done, unverified")
    assert runs.details.error.text().startswith("the workflow has no success check")
    assert runs.details.error.property("tone") == "unverified"  # a reason, not a red error
    window.close()


def test_a_healed_irreversible_step_waits_for_a_person_and_stop_interrupts(gui: Gui) -> None:
    with DemoSite(variants=["relabeled"]) as site:
        version = gui.call(lambda: _save_is_irreversible(gui.services))
        dialog = _open_dialog(gui, version.workflow_id)
        _line(dialog, "full_name").setText("Bea Drift")
        assert dialog.confirm.isChecked()  # the settings' default: ask
        window = _start(gui, dialog, site.url)

        gui.run(until(lambda: bool(top_level(ConfirmDialog)), timeout=60, what="a question"))
        confirm: ConfirmDialog = _one(ConfirmDialog)
        assert confirm.question.step_title == "Click 'Save'"
        shown = confirm.findChild(QLabel, "person-element")  # what would be clicked
        assert shown is not None and shown.text() == confirm.question.element
        assert shown.text() == 'the "Save contact" button'  # what a person sees, not a locator
        assert window.status_label.text().startswith("Waiting for a confirmation")
        assert not any(c["full_name"] == "Bea Drift" for c in site.contacts())
        confirm.button("confirm").click()

        gui.run(until(lambda: window.run is not None, timeout=60, what="the run to end"))
        run = window.run
        assert run is not None and run.status is RunStatus.SUCCEEDED, run and run.error
        assert run.steps[-2].resolution is Resolution.FINGERPRINT  # Save, before the check
        assert any(c["full_name"] == "Bea Drift" for c in site.contacts())
        save = window.steps_model.rowCount() - 2
        assert window.steps_model.text(save, StepColumn.RESOLUTION) == "fingerprint match"
        assert "healed" in window.summary_text.text()
        assert run.proposed_version is not None
        assert window.review_button.isVisible()
        assert f"version {run.proposed_version}" in window.review_button.text()

        window.again_button.click()  # the same values again; this time, stop at the question
        gui.run(until(lambda: bool(window.findChildren(RunDialog)), what="the dialog again"))
        again = window.findChildren(RunDialog)[0]
        assert _line(again, "full_name").text() == "Bea Drift"
        assert _line(again, "password").text() == DEMO_PASSWORD  # kept in memory, not stored
        again.run_button.click()
        gui.run(until(lambda: bool(top_level(ConfirmDialog)), timeout=60, what="a question"))
        window.stop_button.click()
        gui.run(until(lambda: window.run is not None, timeout=30, what="the run to stop"))

    stopped = window.run
    assert stopped is not None and stopped.status is RunStatus.INTERRUPTED
    assert window.outcome.text() == "■ Interrupted"
    assert not top_level(ConfirmDialog)  # the question went away with the run
    assert gui.call(lambda: gui.services.runs.get_run(stopped.id)).status is RunStatus.INTERRUPTED
    window.close()


def test_a_person_points_at_an_element_skips_or_closes_the_question(gui: Gui) -> None:
    person = DialogPerson(gui.window)
    locate = Question(
        kind="locate",
        step_title="Click 'Save'",
        message="The step's element was not found on the page. Which is it?",
        choices=(
            Choice('the "Save contact" button', Handle(selector="#save"), 0.82),
            Choice('the "Save draft" button', Handle(selector="#draft"), 0.61),
        ),
        suggested=0,
    )

    async def ask(question: Question, answer: Any) -> PersonAnswer:
        asked = asyncio.ensure_future(person.ask(question))
        await until(lambda: person.dialog is not None and person.dialog.isVisible())
        assert person.dialog is not None
        answer(person.dialog)
        return await asked

    def pick_second(dialog: LocateDialog) -> None:
        shown = dialog.choices.item(0).text()
        assert shown == 'the "Save contact" button — much like the recorded one (82%)'
        assert dialog.choices.selectedItems() == [dialog.choices.item(0)]  # the clear best
        dialog.pick(1)

    picked = gui.run(ask(locate, pick_second))
    assert picked == PersonAnswer(action="pick", handle=Handle(selector="#draft"))

    def type_selector(dialog: LocateDialog) -> None:
        dialog.selector.setText("form button[type=submit]")
        dialog.button("pick").click()

    typed = gui.run(ask(locate, type_selector))
    assert typed.handle == Handle(selector="form button[type=submit]")
    skipped = gui.run(ask(locate, lambda d: d.button("skip").click()))
    assert skipped.action == "skip"
    closed = gui.run(ask(locate, lambda d: d.reject()))  # Esc or the close button
    assert closed.action == "abort"

    confirm = Question(
        kind="confirm", step_title="Click 'Pay'", message="Go ahead?", element='the "Pay" button'
    )
    declined = gui.run(ask(confirm, lambda d: d.close()))
    assert declined.action == "decline"  # closing a confirmation never confirms
    assert not top_level(ConfirmDialog) and not top_level(LocateDialog)


def test_a_weak_candidate_is_not_preselected_and_use_waits_for_a_pick(gui: Gui) -> None:
    person = DialogPerson(gui.window)
    weak = Question(  # "Sign out" at 27% is no answer to "where is Delete?"
        kind="locate",
        step_title="Click 'Delete'",
        message="The step's element was not found on the page. Which is it?",
        element='the "Delete" button',
        choices=(
            Choice('the "Sign out" button', Handle(selector="#out"), 0.27),
            Choice('the "Help" link', Handle(selector="#help"), 0.21),
        ),
        suggested=None,
    )

    async def ask() -> PersonAnswer:
        asked = asyncio.ensure_future(person.ask(weak))
        await until(lambda: person.dialog is not None and person.dialog.isVisible())
        dialog = person.dialog
        assert isinstance(dialog, LocateDialog)
        assert not dialog.choices.selectedItems()  # nothing chosen for the person
        assert not dialog.button("pick").isEnabled()
        assert dialog.choices.item(0).text().startswith('the "Sign out" button — little like')
        assert dialog.element is not None and dialog.element.text() == 'the "Delete" button'
        dialog.choices.setCurrentRow(1)  # the person picks: now it may be used
        assert dialog.button("pick").isEnabled()
        dialog.button("pick").click()
        return await asked

    assert gui.run(ask()) == PersonAnswer(action="pick", handle=Handle(selector="#help"))


def test_a_confirmation_names_the_element_and_shows_its_recorded_picture(gui: Gui) -> None:
    # A recorded screenshot at 1.25 device pixels per CSS pixel, the element outlined in red
    # as the recorder draws it, around the box its fingerprint recorded.
    box = BoundingBox(x=600, y=300, width=120, height=40)
    page = QImage(1600, 1000, QImage.Format.Format_RGB32)
    page.fill(QColor("white"))
    painter = QPainter(page)
    painter.setPen(QPen(QColor(0xE8, 0x11, 0x2D), 3))
    pad = 3.5 * 1.25
    painter.drawRect(
        QRectF(750 - pad, 375 - pad, 150 + 2 * pad, 50 + 2 * pad).toRect().adjusted(1, 1, -1, -1)
    )
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    page.save(buffer, "PNG")
    ref = gui.call(lambda: gui.services.media.put(bytes(data.data()), "png"))
    person = DialogPerson(gui.window, pictures=ScreenshotLoader(gui.window).load)
    confirm = Question(
        kind="confirm",
        step_title="Click 'Delete'",
        message="This step cannot be undone. Go ahead?",
        element='the "Delete" button',
        locator="aria-ref=f2e55",
        picture=ref,
        box=box,
    )

    async def ask() -> PersonAnswer:
        asked = asyncio.ensure_future(person.ask(confirm))
        await until(lambda: person.dialog is not None and person.dialog.isVisible())
        dialog = person.dialog
        assert isinstance(dialog, ConfirmDialog)
        named = dialog.findChild(QLabel, "person-element")
        assert named is not None and named.text() == 'the "Delete" button'
        assert "aria-ref" not in named.text() and "aria-ref" in named.toolTip()
        picture = dialog.findChild(QLabel, "person-picture")
        assert picture is not None and not picture.pixmap().isNull()
        # the element with some page around it, not the whole page
        crop = element_picture(page, box)
        assert crop.width() == round(120 * 1.25 + 2 * 48 * 1.25)
        assert crop.height() == round(40 * 1.25 + 2 * 48 * 1.25)
        dialog.button("decline").click()
        return await asked

    assert gui.run(ask()).action == "decline"
    assert element_picture(page, None).size() == page.size()  # no box: the whole picture
