"""The Review screen: the queue, the diff (with the success check), request changes, approve, and
what a replay healed."""

from __future__ import annotations

import pytest
from gui_support import Gui
from replay_support import approved

from desktop_app.app import replay
from desktop_app.core.models.workflow import TextPresent, WorkflowStatus, WorkflowVersion
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.ui.review_page import CommentDialog, ReviewPage

pytestmark = pytest.mark.slow


def _page(gui: Gui) -> ReviewPage:
    page = gui.window.show_screen("Review")
    assert isinstance(page, ReviewPage)
    return page


def _submitted_edit(gui: Gui) -> WorkflowVersion:
    """Version 1 approved; version 2 (the Save button retitled, a longer wait) in review."""
    library = gui.services.workflows
    v1 = approved(gui.services, "create-contact")
    steps = list(v1.workflow.steps)
    save = next(i for i, s in enumerate(steps) if s.title == "Click 'Save'")
    steps[save] = steps[save].model_copy(update={"title": "Click 'Save contact'", "timeout_s": 30})
    edited = v1.workflow.model_copy(update={"steps": tuple(steps)})
    saved = library.save(edited, actor="analyst", change_note="The button says Save contact now")
    v2 = library.submit(v1.workflow_id, actor="analyst", version=saved.version.version)
    gui.window.events.workflows_changed.emit(v1.workflow_id)
    gui.settle()
    return v2


def _dialog(page: ReviewPage) -> CommentDialog:
    dialog = page.findChild(CommentDialog)
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_an_empty_queue_says_what_to_do(gui: Gui) -> None:
    page = _page(gui)
    assert page.queue_empty.isVisible()
    assert "Nothing waits for review" in page.queue_empty.text()
    assert not page.approve_button.isEnabled()


def test_a_submitted_draft_appears_in_the_queue_with_what_it_changes(gui: Gui) -> None:
    page = _page(gui)
    v2 = _submitted_edit(gui)

    [entry] = page.queue_model.entries
    assert (entry.workflow_id, entry.number, entry.is_repair) == (v2.workflow_id, 2, False)
    assert page.queue.isVisible() and not page.queue_empty.isVisible()
    assert "Submitted by analyst" in page.queue_model.index(0).data()
    # The newest version in review is shown against the approved one it came from.
    assert page.shown == (v2.workflow_id, 2, 1)
    text = page.diff_view.toPlainText()
    assert "1 step changed" in text
    assert "Click 'Save contact'" in text and "(was “Click 'Save'”)" in text
    assert "10 s  →  30 s" in text
    assert "The button says Save contact now" in text
    assert "What healed" not in text
    assert page.approve_button.isEnabled() and page.request_button.isEnabled()
    assert not page.submit_button.isVisible()
    # Compared with nothing, the whole version reads as new.
    page.base_combo.setCurrentIndex(0)
    page.base_combo.activated.emit(0)
    gui.settle()
    assert page.shown == (v2.workflow_id, 2, None)
    assert "the whole version is shown as new" in page.diff_view.toPlainText()
    history = page.history_model
    assert [history.index(r, 2).data() for r in range(history.rowCount())] == [
        "created → draft",
        "draft → in review",
    ]


def test_a_change_to_the_success_check_reads_in_words_and_none_left_is_flagged(
    gui: Gui,
) -> None:
    page = _page(gui)
    library = gui.services.workflows
    v1 = approved(gui.services, "create-contact")
    checks = (TextPresent(text="Contact {full_name} created"),)
    base = library.save(v1.workflow.model_copy(update={"success": checks}), actor="analyst")
    library.approve(v1.workflow_id, actor="tester", version=base.version.version)
    edited = base.version.workflow.model_copy(
        update={"success": (TextPresent(text="Contact {full_name} saved"),)}
    )
    saved = library.save(edited, actor="analyst", change_note="The message changed")
    library.submit(v1.workflow_id, actor="analyst", version=saved.version.version)
    gui.window.events.workflows_changed.emit(v1.workflow_id)
    gui.settle()

    assert page.shown == (v1.workflow_id, saved.version.version, base.version.version)
    text = page.diff_view.toPlainText()
    assert "success check changed" in text
    assert "Done when" in text and "A run succeeds only when it holds." in text
    change = "page shows “Contact {full_name} created”  →  page shows “Contact {full_name} saved”"
    assert change in text
    assert "No success check" not in text

    gone = library.save(edited.model_copy(update={"success": ()}), actor="analyst")
    library.submit(v1.workflow_id, actor="analyst", version=gone.version.version)
    gui.window.events.workflows_changed.emit(v1.workflow_id)
    gui.settle()
    row = page.queue_model.row_of(v1.workflow_id, gone.version.version)
    assert row is not None
    page.queue.setCurrentIndex(page.queue_model.index(row))
    gui.settle()
    text = page.diff_view.toPlainText()
    assert "No success check: runs of this version end “done, unverified”." in text
    assert "page shows “Contact {full_name} saved”" in text  # removed, struck through


def test_request_changes_needs_a_comment_then_sends_the_version_back(gui: Gui) -> None:
    page = _page(gui)
    v2 = _submitted_edit(gui)
    library = gui.services.workflows

    page.request_button.click()
    dialog = _dialog(page)
    dialog.accept()  # no comment: refused
    assert dialog.isVisible() and dialog.problem.isVisible()
    assert library.get(v2.workflow_id, 2).status is WorkflowStatus.IN_REVIEW

    dialog.editor.setPlainText("Keep the old timeout; 10 s is plenty.")
    dialog.accept()
    gui.settle()

    back = library.get(v2.workflow_id, 2)
    assert back.status is WorkflowStatus.DRAFT
    last = back.transitions[-1]
    assert (last.actor, last.comment) == ("tester", "Keep the old timeout; 10 s is plenty.")
    assert page.queue_empty.isVisible()
    # Still shown, now as a draft that can be submitted again.
    assert page.shown[:2] == (v2.workflow_id, 2)
    assert "draft" in page.title.text()
    assert page.submit_button.isVisible() and page.submit_button.isEnabled()
    assert not page.request_button.isVisible()


def test_approve_makes_it_the_approved_version_and_a_stale_decision_reads_clearly(
    gui: Gui,
) -> None:
    page = _page(gui)
    v2 = _submitted_edit(gui)
    library = gui.services.workflows

    page.approve_button.click()
    _dialog(page).accept()  # a comment is optional
    gui.settle()
    assert library.get(v2.workflow_id, 2).status is WorkflowStatus.APPROVED
    assert library.summary(v2.workflow_id).approved_version == 2
    assert library.runnable(v2.workflow_id).version == 2
    assert "approved" in page.title.text()
    assert not page.approve_button.isEnabled()

    # Someone else decided first: the error says so on the page, in one line.
    saved = library.save(
        v2.workflow.model_copy(update={"description": "Adds a contact to the CRM."}),
        actor="analyst",
    )
    library.submit(v2.workflow_id, actor="analyst", version=saved.version.version)
    gui.window.events.workflows_changed.emit(v2.workflow_id)
    gui.settle()
    row = page.queue_model.row_of(v2.workflow_id, 3)
    assert row is not None
    page.queue.setCurrentIndex(page.queue_model.index(row))  # as a click in the queue does
    gui.settle()
    assert page.shown == (v2.workflow_id, 3, 2)
    assert "description" in page.diff_view.toPlainText()
    library.approve(v2.workflow_id, actor="someone-else", version=3)
    page.approve_button.click()
    _dialog(page).accept()
    gui.settle()
    assert page.problem.isVisible()
    assert page.problem.text() == (
        "version 3 of 'Create a contact' is approved; it cannot become approved"
    )
    assert gui.window.tasks.last_error is None


def test_a_repair_proposed_by_a_replay_shows_what_healed_and_why(gui: Gui) -> None:
    page = _page(gui)
    version = approved(gui.services, "create-contact")
    params = bind_parameters(version.workflow, {}, secrets={"password": DEMO_PASSWORD})
    with DemoSite(variants=["relabeled,renamed-ids"]) as site:
        result = gui.run(
            replay(
                gui.services,
                version,
                params,
                options=ReplayOptions(use_llm=False, patience_s=1.0),
                base_url=site.url,
                headless=True,
            )
        )
    assert result.run.proposed_version == 2
    gui.window.events.runs_changed.emit(result.run.id)
    gui.settle()

    [entry] = page.queue_model.entries
    assert entry.is_repair and entry.number == 2
    assert "Repair proposed by a replay" in page.queue_model.index(0).data()
    assert page.shown == (version.workflow_id, 2, 1)
    text = page.diff_view.toPlainText()
    assert "What healed and why" in text
    assert f"Run {result.run.id[:8]} of version 1" in text
    # The full-name field was found by its fingerprint, now first by its new label.
    assert "Fill 'Full name' with Jane Doe" in text
    assert "fingerprint match (rung 2)" in text
    assert 'role=textbox[name="Name"]' in text
    assert "fingerprint 0." in text and "runner-up" in text
    # The sign-in button was found by an alternate recorded locator.
    assert "an alternate recorded locator (rung 1)" in text
    assert "test_id=sign-in" in text
    # The diff: the new locator tried first, the recorded one demoted.
    assert '+ role=button[name="Log in"]' in text
    assert 'role=button[name="Sign in"]' in text and "re-ranked" in text
    # Screenshots of the healed steps are shown.
    assert page.diff_view.images
    assert "repair" in page.title.text()
