"""Recording from the window: the record dialog, the control bar, and the job between them.

``start_recording(host)`` opens the :class:`RecordDialog`. Its Start hands the request to a
:class:`RecordingController`, which minimises the main window, shows the always-on-top
:class:`RecordingBar` (elapsed time, steps so far, Pause/Resume, Mark field sensitive, Add
note…, Stop, and the live list of steps with thumbnails), and runs the recording as one owned
job. When the browser closes or Stop is pressed, the bar shows "Inducing…" while a draft is
learned from the recording; then the main window comes back with the editor open on the draft
in front of it.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from PySide6.QtCore import QElapsedTimer, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.models.trajectory import Event
from desktop_app.core.recording import PROFILE_NAME_RULE, clean_events, is_profile_name
from desktop_app.core.replay.desktop import DesktopUnavailable
from desktop_app.ops.changes import MANY, Changes, Origin
from desktop_app.ops.induce import Induced
from desktop_app.ops.record import keep_recording, started
from desktop_app.ui import theme
from desktop_app.ui.backend import RecordingControls, RecordingRequest
from desktop_app.ui.host import Host
from desktop_app.ui.recordings_page import (
    EventListModel,
    ThumbnailCache,
    event_list_view,
    induce_draft,
    say_cancelled,
    show_draft,
)
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.windows import bring_forward, fit_window

__all__ = [
    "CANNOT_RECORD_THE_DESKTOP",
    "RecordDialog",
    "RecordingBar",
    "RecordingController",
    "active_recording",
    "check_url",
    "start_recording",
]

#: The title of what the window and the tray say when the desktop cannot be recorded here.
CANNOT_RECORD_THE_DESKTOP: Final = "Cannot record on the desktop"

_LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: A scheme such as ``mailto:`` or ``javascript:`` (not a ``host:port``).
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:(?!\d)", re.IGNORECASE)
_THUMBNAIL = QSize(96, 60)


def check_url(text: str) -> tuple[str | None, str]:
    """The address to open for what was typed, or None and why it will not do.

    A bare host name gets ``https://`` (``http://`` for this machine), as a browser would.
    """
    text = text.strip()
    if not text:
        return None, "Enter the address of the page to start on."
    if any(c.isspace() for c in text):
        return None, "An address has no spaces."
    if "://" not in text and not _SCHEME.match(text):
        local = text.lower().startswith(_LOCAL_HOSTS)
        text = ("http://" if local else "https://") + text
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        return None, "That is not a valid address."
    if parts.scheme not in ("http", "https", "file"):
        return None, "Only http, https and file addresses can be recorded."
    if parts.scheme != "file" and not parts.hostname:
        return None, "The address has no host name."
    return text, ""


def _profiles(home: Path) -> list[str]:
    """The browser profiles kept under *home* (read on the store thread)."""
    folder = home / "profiles"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and is_profile_name(p.name))


_WEB_TIP: Final = (
    "While you record, a small bar stays on top: <b>Pause</b> what should not be "
    "recorded, <b>Mark field sensitive</b> for a value that must never be stored (or "
    "press Alt+Shift+S in the field), and <b>Add note…</b> for the reviewer. Close the "
    "browser or press <b>Stop</b> when done; a draft workflow opens in the editor."
)
_DESKTOP_TIP: Final = (
    "Procedura's window goes out of the way; do the task in the application's own windows. "
    "A small bar stays on top: <b>Pause</b> what should not be recorded, <b>Mark window "
    "sensitive</b> so that what is typed in the window you last used is never stored (and is "
    "masked in pictures), and <b>Add note…</b>. Press <b>Stop</b> when done; a draft workflow "
    "opens in the editor."
)


class RecordDialog(QDialog):
    """Where to start, what the demonstration is for, and which browser profile to use.

    ``headless`` and ``minimise_window`` are for tests and scripted demonstrations: record
    without a browser window, and leave the main window as it is.

    Signals:
        request_made(object): Start was pressed; the :class:`RecordingRequest`.
    """

    request_made = Signal(object)

    def __init__(self, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("record-dialog")
        self.setWindowTitle("Record a demonstration")
        self.setMinimumWidth(560)
        self._host = host
        self.headless = False
        self.minimise_window = True

        self.web_choice = QRadioButton("Web — in a Chromium window")
        self.web_choice.setObjectName("record-kind-web")
        self.web_choice.setChecked(True)
        self.desktop_choice = QRadioButton("Desktop — clicks and typing in any window")
        self.desktop_choice.setObjectName("record-kind-desktop")
        self.desktop_choice.setToolTip(
            "Record what you do in other applications' windows: clicks (with a picture of the "
            "spot), typing and shortcuts. Procedura's own windows are left out."
        )
        kinds = QVBoxLayout()
        kinds.setSpacing(2)
        kinds.addWidget(self.web_choice)
        kinds.addWidget(self.desktop_choice)

        self.url = QLineEdit()
        self.url.setObjectName("record-url")
        self.url.setPlaceholderText("https://crm.example.com/login")
        self.url.setToolTip("The page the browser opens first; the recording starts there")
        self.url_hint = QLabel()
        self.url_hint.setObjectName("record-url-hint")
        self.url_hint.setWordWrap(True)
        self.intent = QLineEdit()
        self.intent.setObjectName("record-intent")
        self.intent.setPlaceholderText("e.g. Create a contact for Jane Doe at Acme")
        self.intent.setToolTip(
            "Say it with the values you are about to use: they become the workflow's parameters, "
            "and later you can ask for the task in the same words with other values"
        )
        self.profile = QComboBox()
        self.profile.setObjectName("record-profile")
        self.profile.setAccessibleName("Browser profile")
        self.profile.setEditable(True)
        self.profile.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        line = self.profile.lineEdit()
        if line is not None:
            line.setPlaceholderText("Fresh profile (nothing is kept)")
        self.profile.setToolTip(
            "A named profile keeps cookies, consents and sign-ins between recordings (type a new "
            "name to create one). Leave empty to start from a fresh, empty profile."
        )
        self.profile_hint = QLabel()
        self.profile_hint.setObjectName("record-profile-hint")

        form = QFormLayout()
        form.addRow("Record:", kinds)
        form.addRow("Start at:", self.url)
        form.addRow("", self.url_hint)
        form.addRow("What are you about to do?", self.intent)
        form.addRow("Browser profile:", self.profile)
        form.addRow("", self.profile_hint)
        self._form = form

        tip = QLabel()
        tip.setWordWrap(True)
        tip.setObjectName("record-tip")
        self.tip = tip

        buttons = QDialogButtonBox()
        self.start_button = buttons.addButton(
            "Start recording", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.start_button.setObjectName("record-start")
        self.start_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(tip)
        layout.addWidget(buttons)

        self.url.textChanged.connect(lambda _text: self._validate())
        self.profile.currentTextChanged.connect(lambda _text: self._validate())
        self.desktop_choice.toggled.connect(lambda _on: self._validate())
        self._validate()
        fit_window(self, self.sizeHint())

    @property
    def desktop(self) -> bool:
        """Whether the desktop (not a browser) is to be recorded."""
        return self.desktop_choice.isChecked()

    async def load(self) -> None:
        """Fill the profiles, and start where the last recording started."""
        backend = self._host.backend
        names = await self._host.tasks.call(_profiles, backend.settings.home)
        typed = self.profile.currentText()
        self.profile.clear()
        self.profile.addItems(names)
        self.profile.setEditText(typed)
        if not self.url.text():
            recent = await self._host.tasks.call(backend.trajectories.list)
            start = next((s.start for s in recent if s.start), None)
            if start and not self.url.text():
                self.url.setText(start)
                self.url.selectAll()

    def request(self) -> RecordingRequest | None:
        """What the dialog asks for, or None while something is invalid."""
        if self.desktop:
            return RecordingRequest(url="", intent=self.intent.text().strip(), kind="desktop")
        url, _ = check_url(self.url.text())
        profile = self.profile.currentText().strip()
        if url is None or (profile and not is_profile_name(profile)):
            return None
        return RecordingRequest(
            url=url,
            intent=self.intent.text().strip(),
            profile=profile or None,
            headless=self.headless,
        )

    def _validate(self) -> None:
        desktop = self.desktop
        for field in (self.url, self.profile):
            self._form.setRowVisible(field, not desktop)
        for hint in (self.url_hint, self.profile_hint):
            self._form.setRowVisible(hint, not desktop)
        self.tip.setText(_DESKTOP_TIP if desktop else _WEB_TIP)
        if desktop:
            self.start_button.setEnabled(True)
            return
        url, problem = check_url(self.url.text())
        if url is None:
            self.url_hint.setText(problem if self.url.text().strip() else "")
        elif url != self.url.text().strip():
            self.url_hint.setText(f"Opens {url}")
        else:
            self.url_hint.setText("")
        theme.set_tone(self.url_hint, "error" if url is None else "muted")
        profile = self.profile.currentText().strip()
        bad_profile = bool(profile) and not is_profile_name(profile)
        self.profile_hint.setText(
            f"A profile name is {PROFILE_NAME_RULE}."
            if bad_profile
            else (
                f"Kept in {self._host.backend.settings.home / 'profiles' / profile}"
                if profile
                else ""
            )
        )
        theme.set_tone(self.profile_hint, "error" if bad_profile else "muted")
        self.start_button.setEnabled(url is not None and not bad_profile)

    def _on_buttons_accepted(self) -> None:
        request = self.request()
        if request is None:
            return
        self.request_made.emit(request)
        self.accept()


class RecordingBar(QWidget):
    """The compact, always-on-top control bar shown while recording.

    Signals:
        pause_clicked(): Pause (or Resume) was pressed.
        stop_clicked(): Stop was pressed, or the bar was closed while recording.
        mark_sensitive_clicked(): Mark field sensitive was pressed.
        note_entered(str): a note was typed and added.
    """

    pause_clicked = Signal()
    stop_clicked = Signal()
    mark_sensitive_clicked = Signal()
    note_entered = Signal(str)

    def __init__(self, steps: EventListModel) -> None:
        super().__init__(
            None, Qt.WindowType.Tool | Qt.WindowType.WindowStaysOnTopHint
        )  # no parent: it stays up while the main window is minimised
        self.setObjectName("recording-bar")
        self.setWindowTitle("Recording — Procedura")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._closable = False
        self.where = "in the browser"
        """Where the task is done, as the bar's texts say it ("on the desktop" for a desktop
        recording)."""

        self.state = QLabel()
        self.state.setObjectName("recording-state")
        self.elapsed = QLabel("0:00")
        self.elapsed.setObjectName("recording-elapsed")
        self.elapsed.setToolTip("How long the recording has been running")
        self.count = QLabel("0 steps")
        self.count.setObjectName("recording-count")
        self.count.setToolTip("Steps captured so far (typing in a field counts once)")
        self.pause_button = QPushButton("&Pause")
        self.pause_button.setObjectName("recording-pause")
        self.pause_button.setToolTip(
            "Pause: nothing you do in the browser is recorded until you resume (Alt+P)"
        )
        self.mark_button = QPushButton("&Mark field sensitive")
        self.mark_button.setObjectName("recording-mark-sensitive")
        self.mark_button.setToolTip(
            "The field that has the focus in the browser becomes sensitive: what was typed into "
            "it is scrubbed, and its value is never stored (Alt+M; in the page: Alt+Shift+S)"
        )
        self.note_button = QPushButton("Add &note…")
        self.note_button.setObjectName("recording-add-note")
        self.note_button.setToolTip(
            "Leave a note for whoever reviews the workflow, at this point (Alt+N)"
        )
        self.stop_button = QPushButton("&Stop")
        self.stop_button.setObjectName("recording-stop")
        self.stop_button.setToolTip("End the recording and learn a workflow from it (Alt+S)")
        self.steps_button = QPushButton("S&teps ▾")
        self.steps_button.setObjectName("recording-show-steps")
        self.steps_button.setCheckable(True)
        self.steps_button.setToolTip("Show the steps captured so far (Alt+T)")
        for button in (
            self.pause_button,
            self.mark_button,
            self.note_button,
            self.stop_button,
            self.steps_button,
        ):
            button.setAutoDefault(False)
            button.setEnabled(False)
        self.pause_button.clicked.connect(self.pause_clicked)
        self.stop_button.clicked.connect(self.stop_clicked)
        self.mark_button.clicked.connect(self.mark_sensitive_clicked)
        self.note_button.clicked.connect(self._on_note_button_clicked)
        self.steps_button.toggled.connect(self._on_steps_button_toggled)

        top = QHBoxLayout()
        top.addWidget(self.state)
        top.addWidget(self.elapsed)
        top.addWidget(self.count)
        top.addStretch(1)
        for button in (
            self.pause_button,
            self.mark_button,
            self.note_button,
            self.stop_button,
            self.steps_button,
        ):
            top.addWidget(button)

        self.note_input = QLineEdit()
        self.note_input.setObjectName("recording-note-input")
        self.note_input.setPlaceholderText(
            "A note for the reviewer, e.g. “pick the newest invoice”"
        )
        self.note_input.returnPressed.connect(self._on_note_input_return_pressed)
        add = QPushButton("Add")
        add.setObjectName("recording-note-add")
        add.setAutoDefault(False)
        add.clicked.connect(self._on_note_input_return_pressed)
        self.note_row = QWidget()
        note_layout = QHBoxLayout(self.note_row)
        note_layout.setContentsMargins(0, 0, 0, 0)
        note_layout.addWidget(self.note_input, 1)
        note_layout.addWidget(add)
        self.note_row.hide()
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self.note_input, self.note_row.hide)

        self.message = QLabel()
        self.message.setObjectName("recording-message")
        self.message.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setObjectName("recording-progress")
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(8)
        self.progress.setTextVisible(False)
        self.progress.hide()

        self.steps_view = event_list_view(steps, _THUMBNAIL, "recording-steps")
        self.steps_view.setMinimumHeight(260)
        self.steps_view.hide()
        steps.rowsInserted.connect(lambda *_: self.steps_view.scrollToBottom())

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.note_row)
        layout.addWidget(self.message)
        layout.addWidget(self.progress)
        layout.addWidget(self.steps_view, 1)
        self.setMinimumWidth(720)
        self.set_state("starting")

    def set_state(self, state: str) -> None:
        """Show where the recording is: starting, recording, paused, saving or inducing."""
        texts: dict[str, tuple[str, theme.Tone]] = {
            "starting": (
                "Starting the browser…" if self.where == "in the browser" else "Starting…",
                "busy",
            ),
            "recording": ("● Recording", "recording"),
            "paused": ("❚❚ Paused", "warning"),
            "saving": ("Saving…", "busy"),
            "inducing": ("Inducing…", "busy"),
        }
        text, tone = texts[state]
        self.state.setText(text)
        theme.set_tone(self.state, tone, strong=True)
        live = state in ("recording", "paused")
        for button in (self.pause_button, self.mark_button, self.note_button, self.stop_button):
            button.setEnabled(live)
        self.steps_button.setEnabled(state != "starting")
        self.mark_button.setEnabled(state == "recording")
        self.pause_button.setText("&Resume" if state == "paused" else "&Pause")
        self.pause_button.setToolTip(
            "Resume recording (Alt+R)"
            if state == "paused"
            else f"Pause: nothing you do {self.where} is recorded until you resume (Alt+P)"
        )
        self.progress.setVisible(state in ("starting", "saving", "inducing"))
        if state == "inducing":  # Stop becomes Cancel: the recording is kept, no draft is made
            self.stop_button.setText("&Cancel")
            self.stop_button.setToolTip(
                "Stop learning the workflow: the recording is kept, and no draft is saved"
            )
            self.stop_button.setEnabled(True)
        if not live:
            self.note_row.hide()

    def set_count(self, steps: int) -> None:
        """How many steps were captured."""
        self.count.setText(f"{steps} step" + ("" if steps == 1 else "s"))

    def say(self, text: str) -> None:
        """A one-line message under the buttons."""
        self.message.setText(text)

    def place(self) -> None:
        """Top centre of the screen, out of the way of most pages' content."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        self.adjustSize()
        self.move(area.x() + (area.width() - self.width()) // 2, area.y() + 8)

    def allow_close(self) -> None:
        """Let the bar close (it only closes by itself once the recording is over)."""
        self._closable = True

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the bar while recording stops the recording; the bar stays until it ends."""
        if self._closable:
            event.accept()
            return
        event.ignore()
        if self.stop_button.isEnabled():
            self.stop_clicked.emit()

    def _on_note_button_clicked(self) -> None:
        self.note_row.show()
        self.note_input.setFocus()
        self.activateWindow()

    def _on_note_input_return_pressed(self) -> None:
        text = self.note_input.text().strip()
        if text:
            self.note_entered.emit(text)
        self.note_input.clear()
        self.note_row.hide()

    def _on_steps_button_toggled(self, shown: bool) -> None:
        self.steps_view.setVisible(shown)
        self.steps_button.setText("S&teps ▴" if shown else "S&teps ▾")
        self.adjustSize()


def _identity(event: Event) -> tuple[object, ...]:
    """What stays the same when a stored event is rewritten (a late sensitive marking)."""
    return (event.action, event.at, event.tab, event.frame)


#: Why a desktop recording may end empty (the window's words for NOTHING_RECORDED_ON_THE_DESKTOP).
_NOTHING_ON_THE_DESKTOP = (
    "No click or key press reached the recorder, so there is nothing to learn from and no "
    "recording was kept. What is done in Procedura's own windows (this one and the recording "
    "bar) and while paused is left out. Record again and do the task in another application's "
    "window."
)


class RecordingController(QObject):
    """Runs one recording from the window: the bar, the job, and the induction after it.

    Signals:
        recording_started(str): the browser is open and recording (the trajectory's id).
        steps_changed(int): the live list of steps changed; how many there are.
        draft_opened(str): the draft induced from the recording was opened (its workflow id).
        recording_unavailable(str): the desktop cannot be recorded here (no display, no way
            to listen to the input, a library missing); the one-line reason. Nothing was kept.
    """

    recording_started = Signal(str)
    recording_unavailable = Signal(str)
    steps_changed = Signal(int)
    draft_opened = Signal(str)

    def __init__(self, host: Host, request: RecordingRequest, *, minimise: bool) -> None:
        super().__init__(host.window)
        self.setObjectName("recording-controller")
        self._host = host
        self.request = request
        self._minimise = minimise
        self._minimised = False
        self.controls: RecordingControls | None = None
        self.finished = False
        self._induction: threading.Event | None = None
        self._raw: list[Event] = []
        self.thumbnails = ThumbnailCache(host, _THUMBNAIL, self)
        self.steps = EventListModel(self.thumbnails, self)
        self.bar = RecordingBar(self.steps)
        if request.kind == "desktop":
            self.bar.where = "on the desktop"
            self.bar.set_state("starting")
            self.bar.mark_button.setText("&Mark window sensitive")
            self.bar.mark_button.setToolTip(
                "The window you last clicked or typed in becomes sensitive: from now on what is "
                "typed there is never stored, and it is masked in every picture (Alt+M)"
            )
            self.bar.pause_button.setToolTip(
                "Pause: nothing you do on the desktop is recorded until you resume (Alt+P)"
            )
        self.bar.pause_clicked.connect(self._on_bar_pause_clicked)
        self.bar.stop_clicked.connect(self._on_bar_stop_clicked)
        self.bar.mark_sensitive_clicked.connect(self._on_bar_mark_sensitive_clicked)
        self.bar.note_entered.connect(self._on_bar_note_entered)
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def trajectory_id(self) -> str | None:
        """The recording's id, once the browser is open."""
        return self.controls.trajectory_id if self.controls is not None else None

    def start(self) -> None:
        """Show the bar, minimise the window, and start recording."""
        adopt = getattr(self._host.window, "adopt", None)
        if callable(adopt):
            adopt(self.bar)  # the main window closes it when it closes
        self.bar.show()
        self.bar.place()
        window = self._host.window
        # A window hidden in the tray stays hidden: minimising it would show it in the taskbar.
        if self._minimise and window.isVisible() and not window.isMinimized():
            window.showMinimized()
            self._minimised = True
        self._host.tasks.start(
            self._run(), label="Recording…", on_done=self._on_job_done, on_error=self._on_job_error
        )

    def raise_bar(self) -> None:
        """Bring the bar to the front."""
        self.bar.show()
        self.bar.raise_()
        self.bar.activateWindow()

    # ── the job ─────────────────────────────────────────────────────────────────────────────

    async def _run(self) -> Induced | None:
        host = self._host
        backend = host.backend
        try:
            trajectory = await backend.record(
                self.request, on_started=self._on_started, on_event=self._on_event
            )
            self.controls = None
            self._timer.stop()
            kept = await host.tasks.call(
                keep_recording, backend.trajectories, trajectory, origin=Origin.WINDOW
            )
            host.events.announce(kept.changes)
            if kept.trajectory is None:
                return None
            self.bar.set_state("inducing")
            self.bar.say("Learning a workflow from the recording…")
            self._induction = threading.Event()
            return await induce_draft(host, [kept.trajectory.id], cancel=self._induction)
        finally:
            self._close()

    def _on_started(self, controls: RecordingControls) -> None:
        self.controls = controls
        self._clock.start()
        self._timer.start()
        self.bar.set_state("recording")
        self.bar.say(
            "Do the task on the desktop, in the application's own windows. Press Stop here "
            "when you are done."
            if self.request.kind == "desktop"
            else "Do the task in the browser. Close it or press Stop when you are done."
        )
        self._host.events.announce(started(controls.trajectory_id, Origin.WINDOW))
        self.recording_started.emit(controls.trajectory_id)

    def _on_event(self, event: Event) -> None:
        key = _identity(event)
        for i in range(len(self._raw) - 1, -1, -1):
            if _identity(self._raw[i]) == key:
                self._raw[i] = event  # rewritten (scrubbed), or typing in the same field
                break
        else:
            self._raw.append(event)
        self.steps.set_events(clean_events(self._raw))
        count = self.steps.rowCount()
        self.bar.set_count(count)
        self.steps_changed.emit(count)

    def _on_job_done(self, draft: Induced | None) -> None:
        self.deleteLater()
        if draft is None:
            box = QMessageBox(
                QMessageBox.Icon.Information,
                "Nothing was recorded",
                _NOTHING_ON_THE_DESKTOP
                if self.request.kind == "desktop"
                else "The browser closed before anything was done in it, so there is nothing "
                "to learn from. Record again and do the task in the browser that opens.",
                parent=self._host.window,
            )
            box.setObjectName("recording-empty")
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self._bring_window()
            box.open()
            self._host.show_status("Nothing was recorded")
            return
        show_draft(self._host, draft)  # the editor opens in front of the window
        self.draft_opened.emit(draft.saved.version.workflow_id)

    def _on_job_error(self, exc: BaseException) -> bool:
        self.deleteLater()
        self._bring_window()
        self._host.events.announce(Changes.of(Origin.WINDOW, recordings=[MANY]))
        if isinstance(exc, DesktopUnavailable):
            self._say_cannot_record(str(exc))
            return True
        return say_cancelled(self._host, exc)  # else reported once, in the window

    def _say_cannot_record(self, reason: str) -> None:
        """The desktop cannot be recorded here: its one line in a box (a person's problem to
        fix, not a bug: no details to show), in the status bar, and to whoever listens."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            CANNOT_RECORD_THE_DESKTOP,
            reason[:1].upper() + reason[1:] + ("" if reason.endswith(".") else "."),
            parent=self._host.window,
        )
        box.setObjectName("recording-unavailable")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self._host.show_status(f"{CANNOT_RECORD_THE_DESKTOP}: {reason}")
        self.recording_unavailable.emit(reason)

    def _bring_window(self) -> None:
        """The main window to the front, when it went out of the way for the recording."""
        if self._minimised:
            bring_forward(self._host.window)

    def _close(self) -> None:
        """The recording is over (whatever ended it): close the bar, show the window again.

        The window is not raised or activated here: the editor opens on the draft next and
        must end up in front of it (:meth:`_bring_window` brings it forward when none opens).
        """
        self.finished = True
        self.controls = None
        self._timer.stop()
        self.bar.allow_close()
        self.bar.close()
        if self._minimised:
            self._host.window.showNormal()

    # ── the bar ─────────────────────────────────────────────────────────────────────────────

    def _on_timer_timeout(self) -> None:
        seconds = self._clock.elapsed() // 1000
        self.bar.elapsed.setText(f"{seconds // 60}:{seconds % 60:02d}")

    def _on_bar_pause_clicked(self) -> None:
        controls = self.controls
        if controls is None:
            return
        if controls.paused:
            controls.resume()
            self.bar.set_state("recording")
            self.bar.say("Recording again.")
        else:
            controls.pause()
            self.bar.set_state("paused")
            self.bar.say(f"Paused: nothing you do {self.bar.where} is recorded until you resume.")

    def _on_bar_stop_clicked(self) -> None:
        if self._induction is not None:  # Cancel, while the workflow is being induced
            self._induction.set()
            self.bar.stop_button.setEnabled(False)
            self.bar.say("Cancelling…")
            return
        if self.controls is None:
            return
        self.controls.stop()
        self.bar.set_state("saving")
        self.bar.say("Saving the recording…")

    def _on_bar_note_entered(self, text: str) -> None:
        if self.controls is None:
            return
        self.controls.add_note(text)
        self.bar.say(f"Note added: “{text}”")

    def _on_bar_mark_sensitive_clicked(self) -> None:
        controls = self.controls
        if controls is None:
            return
        self.bar.mark_button.setEnabled(False)

        async def mark() -> str | None:
            try:
                return await controls.mark_sensitive()
            finally:
                self.bar.mark_button.setEnabled(self.controls is not None and not controls.paused)

        def done(label: str | None) -> None:
            if self.request.kind == "desktop":
                self.bar.say(
                    "Click or type in the window first, then press Mark window sensitive."
                    if label is None
                    else f"“{label}” is sensitive now: what is typed there is never stored, and "
                    "it is masked in every picture."
                )
                return
            if label is None:
                self.bar.say(
                    "No field has the focus: click into the field in the browser, then press "
                    "Mark field sensitive (or Alt+Shift+S in the field)."
                )
            else:
                name = f"“{label}”" if label else "The field"
                self.bar.say(
                    f"{name} is sensitive now: what was typed into it is scrubbed, and its "
                    "value is never stored."
                )

        def failed(exc: BaseException) -> bool:
            self.bar.say(describe_error(exc))
            return True

        self._host.tasks.start(
            mark(), label="Marking the field sensitive…", on_done=done, on_error=failed
        )


def active_recording(host: Host) -> RecordingController | None:
    """The recording under way in this window, if any."""
    for controller in host.window.findChildren(RecordingController):
        if not controller.finished:
            return controller
    return None


def start_recording(
    host: Host,
    *,
    desktop: bool = False,
    on_controller: Callable[[RecordingController], object] | None = None,
) -> RecordDialog | None:
    """Open the record dialog (or, while a recording runs, bring its bar forward, and None).

    With *desktop* the dialog has the desktop chosen. *on_controller* gets the recording's
    controller once Start is pressed (the tray follows it).
    """
    running = active_recording(host)
    if running is not None:
        running.raise_bar()
        host.show_status("A recording is already running; stop it first")
        return None
    dialog = RecordDialog(host, host.window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if desktop:
        dialog.desktop_choice.setChecked(True)
        dialog.intent.setFocus()

    def begin(request: RecordingRequest) -> None:
        controller = RecordingController(host, request, minimise=dialog.minimise_window)
        if on_controller is not None:
            on_controller(controller)
        controller.start()

    dialog.request_made.connect(begin)
    if host.window.isVisible():
        dialog.open()
    else:  # from the tray, the main window hidden: the dialog on its own, in front
        bring_forward(dialog)
    with contextlib.suppress(RuntimeError):  # the window is closing
        loading = host.tasks.start(dialog.load(), label="Loading profiles…")
        if loading is not None:  # a dialog closed at once (Start) has no profiles to fill
            dialog.finished.connect(lambda _result: loading.cancel())
    return dialog
