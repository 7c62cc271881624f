"""Recording from the window: the dialog, the control bar, induction, and the Recordings screen."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from demo_tasks import HUMAN_CLICK_MS, KEY_DELAY_MS, click, sign_in, type_into
from desktop_support import EMAIL, NAME, SAVE, Form, act, click_at, contact_form, needs_xvfb, xvfb
from factories import T0
from fakes.openai_server import FakeOpenAIServer
from gui_support import Gui, top_level, until
from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.models.trajectory import ActionKind, Event, Trajectory
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.recording import clean_events
from desktop_app.demo_site.server import DemoSite
from desktop_app.ui.record import (
    RecordDialog,
    RecordingBar,
    RecordingController,
    active_recording,
    check_url,
)

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"
INTENT = "Create a contact for Jane Doe at Globex"
PIN = "my PIN is 4242-9999"
PAUSED = "typed-while-paused"
NOTE = "Pick the company the customer named"


def _grep(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _notes_box() -> QMessageBox | None:
    boxes = [b for b in top_level(QMessageBox) if b.objectName() == "induction-notes"]
    return boxes[0] if boxes else None  # type: ignore[return-value]


async def _open_dialog(gui: Gui) -> RecordDialog:
    gui.window.start_recording()
    await until(lambda: bool(top_level(RecordDialog)), what="the record dialog")
    dialog = top_level(RecordDialog)[0]
    assert isinstance(dialog, RecordDialog)
    dialog.headless = True
    dialog.minimise_window = False
    return dialog


def test_notes_stay_where_they_were_made_and_change_no_cleaning() -> None:
    field = Target(
        locators=(Locator(strategy=LocatorStrategy.CSS, value="#name"),),
        fingerprint=Fingerprint(tag="input", role="textbox", name="Name"),
    )
    save = Target(
        locators=(Locator(strategy=LocatorStrategy.CSS, value="#save"),),
        fingerprint=Fingerprint(tag="button", role="button", name="Save"),
    )

    def ev(ms: int, action: ActionKind, **kw: object) -> Event:
        return Event.model_validate({"action": action, "at": T0 + timedelta(milliseconds=ms), **kw})

    raw = [
        ev(0, ActionKind.NAVIGATE, url="https://crm.test/new", typed=True),
        ev(100, ActionKind.FILL, target=field, value="Ja"),
        ev(900, ActionKind.NOTE, value="the name as on the ID card"),
        ev(1500, ActionKind.FILL, target=field, value="Jane Doe"),
        ev(2000, ActionKind.CLICK, target=save, effect=True),
        ev(2100, ActionKind.NOTE, value="it saves at once"),
        ev(
            2200,
            ActionKind.NAVIGATE,
            url="https://crm.test/contacts/1",
            before={"url": "https://crm.test/contacts/1"},
        ),
    ]
    clean = clean_events(raw)
    assert [e.action for e in clean] == [
        ActionKind.NAVIGATE,
        ActionKind.FILL,  # the typing around the note is still one fill
        ActionKind.NOTE,
        ActionKind.CLICK,  # the navigation it caused is still folded into it
        ActionKind.NOTE,
    ]
    assert clean[1].value == "Jane Doe"
    assert clean[3].after is not None and clean[3].after.url == "https://crm.test/contacts/1"
    induced = induce(Trajectory(intent="Add Jane Doe", events=tuple(clean)))
    assert [s.kind for s in induced.workflow.steps] == ["goto", "fill", "click"]
    assert "your note before step 3: the name as on the ID card" in induced.notes
    assert "your note before step 4: it saves at once" in induced.notes


def test_the_url_check_says_what_is_wrong() -> None:
    assert check_url("crm.example.com/login") == ("https://crm.example.com/login", "")
    assert check_url("localhost:8765") == ("http://localhost:8765", "")
    assert check_url("")[0] is None
    assert "spaces" in check_url("my crm")[1]
    assert "http" in check_url("javascript:alert(1)")[1]
    assert check_url("https://")[1] == "The address has no host name."


def test_recording_from_the_window_through_to_the_draft(
    gui: Gui, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[tuple[str, int | None]] = []
    monkeypatch.setattr(
        gui.window, "open_editor", lambda wid, version=None: opened.append((wid, version))
    )
    (home / "profiles" / "work").mkdir(parents=True)
    seen: dict[str, object] = {}

    async def scenario(site: DemoSite) -> None:
        dialog = await _open_dialog(gui)
        await until(lambda: dialog.profile.findText("work") >= 0, what="the profiles")
        dialog.url.setText("not an address")
        assert not dialog.start_button.isEnabled()
        assert "spaces" in dialog.url_hint.text()
        dialog.url.setText(site.url + "/login")
        dialog.intent.setText(INTENT)
        dialog.profile.setEditText("../elsewhere")
        assert not dialog.start_button.isEnabled()
        dialog.profile.setEditText("")
        assert dialog.start_button.isEnabled()
        assert dialog.desktop_choice.isEnabled() and not dialog.desktop
        dialog.start_button.click()

        controller = active_recording(gui.window)
        assert isinstance(controller, RecordingController)
        bar = controller.bar
        assert bar.isVisible()
        set_state = bar.set_state
        states: list[str] = []

        def record_state(state: str) -> None:
            states.append(state)
            set_state(state)

        bar.set_state = record_state  # type: ignore[method-assign]
        assert bar.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
        await until(lambda: controller.controls is not None, what="the browser to start")
        assert controller.controls is not None
        page = controller.controls.page  # type: ignore[attr-defined]
        trajectory_id = controller.controls.trajectory_id
        steps = controller.steps
        bar.steps_button.click()
        assert bar.steps_view.isVisible()

        # the user signs in; the live list shows the steps as they happen
        await sign_in(page)
        await until(
            lambda: "secret into “Password”" in " ".join(steps.texts()),
            what="the password (as a secret) in the live list",
        )
        assert any(t.startswith("Open ") for t in steps.texts())
        assert any("Type “demo” into “Username”" in t for t in steps.texts())
        assert bar.count.text() == f"{steps.rowCount()} steps"
        await until(
            lambda: any(
                isinstance(steps.data(steps.index(r), Qt.ItemDataRole.DecorationRole), QPixmap)
                for r in range(steps.rowCount())
            ),
            what="a thumbnail in the live list",
        )

        # paused: what is typed meanwhile is not recorded, even once resumed
        bar.pause_button.click()
        assert controller.controls.paused and "Paused" in bar.state.text()
        assert bar.pause_button.text() == "&Resume"
        search = page.get_by_test_id("search")
        await search.click(delay=HUMAN_CLICK_MS)
        await search.press_sequentially(PAUSED, delay=KEY_DELAY_MS)
        bar.pause_button.click()
        assert not controller.controls.paused
        await page.get_by_test_id("new-contact").click(delay=HUMAN_CLICK_MS)
        await page.wait_for_url("**/contacts/new")
        await type_into(page, "Full name", "Jane Doe")
        await type_into(page, "Email", "jane@example.test")

        # a field marked sensitive after typing: its value is scrubbed everywhere
        notes = page.get_by_label("Notes")
        await notes.click(delay=HUMAN_CLICK_MS)
        await notes.press_sequentially(PIN, delay=KEY_DELAY_MS)
        await until(lambda: PIN in " ".join(steps.texts()), what="the PIN in the live list")
        bar.mark_button.click()
        await until(lambda: "sensitive now" in bar.message.text(), what="the field marked")
        assert "“Notes”" in bar.message.text()
        await until(lambda: PIN not in " ".join(steps.texts()), what="the PIN scrubbed")
        assert any("secret into “Notes”" in t for t in steps.texts())
        await notes.press_sequentially(" and 1234", delay=KEY_DELAY_MS)

        # a note for the reviewer
        bar.note_button.click()
        assert bar.note_row.isVisible()
        bar.note_input.setText(NOTE)
        QTest.keyClick(bar.note_input, Qt.Key.Key_Return)
        assert not bar.note_row.isVisible()
        await until(lambda: f"Note: {NOTE}" in steps.texts()[-1], what="the note in the list")

        await page.get_by_label("Company").select_option("Globex")
        await click(page, "button:Save")
        await page.get_by_text("Contact Jane Doe created").wait_for()
        await until(lambda: "Click “Save”" in " ".join(steps.texts()), what="the save click")

        # Stop → induction → the editor opens on the new draft
        bar.stop_button.click()
        assert not bar.stop_button.isEnabled()
        await until(lambda: bool(opened), timeout=60, what="the editor to open")
        assert active_recording(gui.window) is None
        assert not top_level(RecordingBar)
        assert states[-2:] == ["saving", "inducing"]
        await until(lambda: _notes_box() is not None, what="the induction notes")
        box = _notes_box()
        assert box is not None
        seen["notes"] = box.informativeText()
        seen["trajectory_id"] = trajectory_id

        # the Recordings screen lists the recording and shows its steps
        page_widget = gui.window.show_screen("Recordings")
        recordings = gui.window.recordings
        assert page_widget is recordings
        await until(
            lambda: any(r.id == trajectory_id for r in recordings.visible_rows()),
            what="the recording listed",
        )
        assert recordings.select(trajectory_id)
        # All its steps: the screen may still show what it loaded while the recording was live.
        await until(
            lambda: any(t == f"Note: {NOTE}" for t in recordings.events.texts()),
            what="the recording's steps, to the end",
        )
        seen["listed"] = recordings.visible_rows()
        seen["details"] = recordings.events.texts()

    with DemoSite() as site:
        gui.run(scenario(site))
    gui.settle()

    trajectory_id = str(seen["trajectory_id"])
    trajectory = gui.call(lambda: gui.services.trajectories.get(trajectory_id))
    raw = gui.call(lambda: gui.services.trajectories.raw_events(trajectory_id))
    assert trajectory.intent == INTENT and not trajectory.incomplete
    # paused typing is nowhere: not as an event, not in the data directory
    assert not any(e.target is not None and "search" in str(e.target.locators) for e in raw), (
        "an action done while paused was recorded"
    )
    assert _grep(home, PAUSED) == []
    # the sensitive value is nowhere under the data directory
    assert _grep(home, "4242-9999") == [] and _grep(home, "and 1234") == []
    notes_fill = [e for e in trajectory.events if e.target and "Notes" in str(e.target.locators)]
    assert notes_fill and all(e.is_secret for e in notes_fill)
    # the note is stored as an event, in order
    noted = [e for e in trajectory.events if e.action is ActionKind.NOTE]
    assert [e.value for e in noted] == [NOTE]
    # a draft exists and is what the editor was opened on
    workflow_id, version = opened[0]
    draft = gui.call(lambda: gui.services.workflows.get(workflow_id))
    assert draft.status is WorkflowStatus.DRAFT and draft.version == version
    assert draft.workflow.source_trajectories == (trajectory_id,)
    assert NOTE in str(seen["notes"])
    assert [r.intent for r in seen["listed"]] == [INTENT]  # type: ignore[attr-defined]
    assert f"Note: {NOTE}" in " ".join(seen["details"])  # type: ignore[arg-type]


@needs_xvfb
def test_recording_the_desktop_from_the_window(
    gui: Gui, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[tuple[str, int | None]] = []
    monkeypatch.setattr(
        gui.window, "open_editor", lambda wid, version=None: opened.append((wid, version))
    )

    async def scenario(form: Form) -> None:
        dialog = await _open_dialog(gui)
        dialog.desktop_choice.setChecked(True)
        assert dialog.request() is not None and dialog.start_button.isEnabled()
        assert dialog.url.isHidden() and dialog.profile.isHidden()  # no browser to set up
        assert "Mark window" in dialog.tip.text()
        dialog.intent.setText("Add Jane Doe in the contact form")
        dialog.start_button.click()
        controller = active_recording(gui.window)
        assert isinstance(controller, RecordingController)
        await until(lambda: controller.controls is not None, what="the recorder to listen")
        bar = controller.bar
        assert bar.mark_button.text() == "&Mark window sensitive"
        said = (bar.message.text(), bar.pause_button.toolTip(), bar.state.text())
        assert not any("browser" in text for text in said), said  # a desktop recording
        assert bar.message.text().startswith("Do the task on the desktop")
        await act(*click_at(form, NAME, "click", "1"))
        await act("type", "Jane Doe")
        await until(lambda: controller.steps.rowCount() >= 2, what="the typing in the live list")
        bar.mark_button.click()
        await until(lambda: "sensitive now" in bar.message.text(), what="the window marked")
        assert "“Contact form”" in bar.message.text()
        await act(*click_at(form, EMAIL, "click", "1"))
        await act("type", "private@example.test")
        await act(*click_at(form, SAVE, "click", "1"))
        await asyncio.to_thread(form.saved)
        await until(lambda: controller.steps.rowCount() >= 5, what="the click on Save")
        bar.stop_button.click()
        await until(lambda: bool(opened), timeout=60, what="the editor to open")

    with xvfb(), contact_form(tmp_path / "out.json") as form:
        gui.run(scenario(form))
    gui.settle()

    draft = gui.call(lambda: gui.services.workflows.get(opened[0][0]))
    steps = draft.workflow.steps
    assert [s.kind for s in steps] == [
        "desktop_click", "desktop_type", "desktop_click", "desktop_type", "desktop_click",
    ]  # fmt: skip
    assert all(getattr(s, "window_title", None) == "Contact form" for s in steps)
    kinds = {p.name: p.type.value for p in draft.workflow.parameters}
    assert list(kinds.values()) == ["text", "secret"]  # typed after the window was marked
    assert _grep(home, "private@example.test") == []


@needs_xvfb
def test_a_desktop_recording_with_nothing_in_it_says_why_and_keeps_nothing(gui: Gui) -> None:
    async def scenario() -> None:
        dialog = await _open_dialog(gui)
        dialog.desktop_choice.setChecked(True)
        dialog.start_button.click()
        controller = active_recording(gui.window)
        assert isinstance(controller, RecordingController)
        await until(lambda: controller.controls is not None, what="the recorder to listen")
        controller.bar.stop_button.click()
        await until(lambda: _empty_box() is not None, what="the message")

    with xvfb():
        gui.run(scenario())
    gui.settle()
    box = _empty_box()
    assert box is not None and box.windowTitle() == "Nothing was recorded"
    assert box.text().startswith("No click or key press reached the recorder")
    assert "another application's window" in box.text()  # not "in the browser"
    assert gui.window.statusBar().currentMessage() == "Nothing was recorded"
    assert gui.call(gui.services.trajectories.list) == []
    box.close()


@needs_xvfb
def test_the_induction_after_a_recording_can_be_cancelled_and_the_recording_stays(
    llm: FakeOpenAIServer, gui: Gui, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(gui.window, "open_editor", lambda wid, version=None: opened.append(wid))
    said: list[str] = []
    monkeypatch.setattr(gui.window, "show_status", said.append)
    gate = llm.hold("/v1/chat/completions")

    async def scenario(form: Form) -> None:
        dialog = await _open_dialog(gui)
        dialog.desktop_choice.setChecked(True)
        dialog.start_button.click()
        controller = active_recording(gui.window)
        assert isinstance(controller, RecordingController)
        await until(lambda: controller.controls is not None, what="the recorder to listen")
        await act(*click_at(form, NAME, "click", "1"))
        await act("type", "Jane")
        await until(lambda: controller.steps.rowCount() >= 2, what="the typing in the live list")
        bar = controller.bar
        bar.stop_button.click()
        await until(lambda: bool(llm.requests_to("/v1/chat/completions")), what="the LLM asked")
        assert bar.stop_button.text() == "&Cancel" and bar.stop_button.isEnabled()
        bar.stop_button.click()
        await until(lambda: controller.finished, what="the induction to stop")

    try:
        with xvfb(), contact_form(tmp_path / "out.json") as form:
            gui.run(scenario(form))
        gui.settle()
        assert said[-1] == "Induction cancelled: no draft was saved, and the recordings are kept"
        assert gui.window.tasks.last_error is None
    finally:
        gate.set()
    assert not opened
    assert gui.call(gui.services.workflows.count)[0] == 0
    (kept,) = gui.call(gui.services.trajectories.list)
    assert kept.event_count == 2


def _empty_box() -> QMessageBox | None:
    boxes = [b for b in top_level(QMessageBox) if b.objectName() == "recording-empty"]
    return boxes[0] if boxes else None  # type: ignore[return-value]


@pytest.fixture
def missing_browser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "no-such-chrome"
    monkeypatch.setenv("PROCEDURA_BROWSER", str(path))
    return path


def test_a_browser_that_will_not_start_is_a_readable_error_and_stores_nothing(
    missing_browser: Path, gui: Gui
) -> None:
    async def scenario() -> None:
        dialog = await _open_dialog(gui)
        dialog.url.setText("http://127.0.0.1:9/")
        dialog.start_button.click()
        assert active_recording(gui.window) is not None
        await until(lambda: gui.window.tasks.last_error is not None, what="the error")
        await until(lambda: active_recording(gui.window) is None, what="the bar to close")

    gui.run(scenario())
    gui.settle()
    assert str(missing_browser) in str(gui.window.tasks.last_error)
    assert "\n" not in str(gui.window.tasks.last_error)
    assert gui.call(gui.services.trajectories.list) == []


def test_the_recordings_screen_induces_and_deletes(
    gui: Gui, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (DATA / "create-contact.trajectory.json").read_text(encoding="utf-8")
    recording = gui.call(lambda: gui.services.trajectories.import_json(text))
    opened: list[str] = []
    monkeypatch.setattr(gui.window, "open_editor", lambda wid, version=None: opened.append(wid))
    monkeypatch.setattr(
        QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Yes
    )
    page = gui.window.recordings
    gui.window.show_screen("Recordings")
    assert page.empty.isVisibleTo(page)  # loaded before the import: says what to do

    async def scenario() -> None:
        gui.window.events.recordings_changed.emit(recording.id)
        await until(lambda: bool(page.visible_rows()), what="the recording listed")
        assert page.selected() is not None and page.selected().id == recording.id  # type: ignore[union-attr]
        await until(lambda: page.events.rowCount() == len(recording.events), what="its steps")
        assert page.events.texts()[0].startswith("Open ")
        assert "“Globex”" in " ".join(page.events.texts())
        assert page.table.model().index(0, 5).data() == "Complete"
        page.induce_button.click()
        await until(lambda: bool(opened), what="the editor to open")
        page.delete_button.click()
        await until(lambda: not page.visible_rows(), what="the recording gone")

    gui.run(scenario())
    gui.settle()
    assert gui.call(gui.services.workflows.count)[0] == 1
    assert gui.call(gui.services.trajectories.list) == []
    assert page.empty.isVisibleTo(page)


def test_several_recordings_of_one_task_induce_one_workflow_from_the_recordings_screen(
    gui: Gui, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = []
    for name in ("create-contact", "create-contact-2", "create-contact-3"):
        text = (DATA / f"{name}.trajectory.json").read_text(encoding="utf-8")
        ids.append(gui.call(lambda text=text: gui.services.trajectories.import_json(text)).id)
    opened: list[str] = []
    monkeypatch.setattr(gui.window, "open_editor", lambda wid, version=None: opened.append(wid))
    page = gui.window.recordings
    gui.window.show_screen("Recordings")

    async def scenario() -> None:
        gui.window.events.recordings_changed.emit("")
        await until(lambda: len(page.visible_rows()) == 3, what="the recordings listed")
        page.table.selectAll()
        await until(lambda: len(page.chosen()) == 3, what="all three chosen")
        assert page.induce_button.text() == "Induce from 3 recordings"
        assert not page.delete_button.isEnabled()  # one at a time
        page.induce_button.click()
        await until(lambda: bool(opened), what="the editor to open")

    gui.run(scenario())
    gui.settle()
    (summary,) = gui.call(gui.services.workflows.list)
    version = gui.call(lambda: gui.services.workflows.get(summary.id))
    assert version.change_note.startswith("induced from trajectories ")
    assert all(i[:8] in version.change_note for i in ids)
    # What differs between the demonstrations became parameters (the CLI finds these four too).
    assert len(version.workflow.parameters) == 4


def test_cancelling_an_induction_on_the_recordings_screen_saves_nothing(
    llm: FakeOpenAIServer, gui: Gui, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("create-contact", "create-contact-2"):
        text = (DATA / f"{name}.trajectory.json").read_text(encoding="utf-8")
        gui.call(lambda text=text: gui.services.trajectories.import_json(text))
    opened: list[str] = []
    monkeypatch.setattr(gui.window, "open_editor", lambda wid, version=None: opened.append(wid))
    said: list[str] = []
    monkeypatch.setattr(gui.window, "show_status", said.append)
    gate = llm.hold("/v1/chat/completions")  # the LLM thinks until the test is over
    page = gui.window.recordings
    gui.window.show_screen("Recordings")

    async def scenario() -> None:
        gui.window.events.recordings_changed.emit("")
        await until(lambda: len(page.visible_rows()) == 2, what="the recordings listed")
        assert not page.cancel_button.isVisibleTo(page)
        page.table.selectAll()
        page.induce_button.click()
        await until(lambda: bool(llm.requests_to("/v1/chat/completions")), what="the LLM asked")
        assert page.cancel_button.isVisibleTo(page) and not page.induce_button.isEnabled()
        page.cancel_button.click()
        await until(lambda: not page.cancel_button.isVisibleTo(page), what="the job to stop")
        assert page.induce_button.isEnabled()  # the LLM has not answered, and need not

    try:
        gui.run(scenario())
        gui.settle()
        assert said[-1].startswith("Induction cancelled: no draft was saved")
        assert gui.window.tasks.last_error is None  # no error dialog: the person asked for it
    finally:
        gate.set()
    assert not opened
    assert gui.call(gui.services.workflows.count)[0] == 0
    assert len(gui.call(gui.services.trajectories.list)) == 2
