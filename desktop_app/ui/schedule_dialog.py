"""The Fleet screen's schedule dialog: which approved workflow, when (cron fields in a time
zone, with the next firing shown as you type), with which values, and whether its runs do
irreversible steps without asking.

Everything is checked before anything is written, by the code the command line uses: the cron
fields and the zone (:meth:`~desktop_app.ui.backend.Backend.next_firing`), the values (the
parameter form binds them as a run does). A secret parameter is not asked for: each worker takes
it from its own keyring when it runs the schedule.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Final
from zoneinfo import available_timezones

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.models.workflow import ParameterType, WorkflowVersion
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.core.values import value_text
from desktop_app.core.views import WorkflowSummary
from desktop_app.ui import theme
from desktop_app.ui.backend import ScheduleEntry, ScheduleRequest
from desktop_app.ui.host import Host
from desktop_app.ui.parameter_form import ParameterForm, field_label
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.windows import fit_window

__all__ = ["ScheduleDialog", "format_fire", "zone_names"]

#: How long typing pauses before the next firing is worked out again (a date that never comes
#: takes Celery ~20 ms to give up on: not on every keystroke).
CHECK_AFTER_MS: Final = 150

_CRON_HELP: Final = (
    "Five fields, one space apart: minute hour day-of-month month day-of-week "
    "(0-6, Sunday is 0, or sun-sat). 0 9 * * 1-5 is 09:00 on weekdays; */15 8-18 * * * every "
    "quarter hour from 08:00 to 18:45."
)


def format_fire(moment: datetime, *, now: datetime | None = None) -> str:
    """A firing in its own zone, as a person reads it: ``Mon 7 Dec 09:00 (Europe/Paris)`` (the
    year too when it is not this one)."""
    zone = getattr(moment.tzinfo, "key", None) or moment.strftime("%Z")
    year = (now or datetime.now(moment.tzinfo)).year
    day = f"{moment:%a} {moment.day} {moment:%b}"
    if moment.year != year:
        day += f" {moment.year}"
    return f"{day} {moment:%H:%M} ({zone})"


@cache
def zone_names() -> tuple[str, ...]:
    """The IANA zone names this machine knows, sorted (the zone box lists them)."""
    return tuple(sorted(n for n in available_timezones() if "/" in n or n == "UTC"))


class ScheduleDialog(QDialog):
    """Add a schedule, or change one (its workflow stays). Save does not close it: the page
    writes on the store thread, then closes it (:meth:`accept`) or says why not
    (:meth:`show_error`, :meth:`show_problem`).

    Args:
        host: the window (the backend, the job runner).
        workflows: the workflows with an approved version, by name.
        zone: the zone to start from (this machine's, or the schedule's).
        entry: the schedule to change; None to add one.

    Signals:
        save_requested(ScheduleRequest): Save was pressed and everything checked out.
    """

    save_requested = Signal(object)

    def __init__(
        self,
        host: Host,
        workflows: Sequence[WorkflowSummary],
        *,
        zone: str,
        entry: ScheduleEntry | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("schedule-dialog")
        self.setWindowTitle("Change the schedule" if entry else "Add a schedule")
        self.setMinimumWidth(600)
        self._host = host
        self._entry = entry
        self._version: WorkflowVersion | None = None
        self._busy = False
        self._timing_ok = False
        self.parameters: ParameterForm | None = None

        intro = QLabel(
            "The team's fleet runs the workflow's approved version (the one approved at each "
            "firing) whenever the cron fields match, in the zone's wall-clock time. Secrets "
            "come from each worker's keyring, never from the schedule."
        )
        intro.setWordWrap(True)
        theme.set_tone(intro, "muted")

        self.workflow = QComboBox()
        self.workflow.setObjectName("schedule-workflow")
        self.workflow.setAccessibleName("Workflow")
        if entry is not None:
            self.workflow.addItem(entry.workflow, entry.schedule.workflow_id)
            self.workflow.setEnabled(False)
            self.workflow.setToolTip(
                "A schedule keeps its workflow: remove it and add another to run a different one"
            )
        else:
            for summary in workflows:
                self.workflow.addItem(summary.name, summary.id)
            self.workflow.setToolTip("The workflows with an approved version")
        self.workflow.currentIndexChanged.connect(self._on_workflow_current_index_changed)

        self.cron = QLineEdit(entry.schedule.cron if entry else "0 9 * * 1-5")
        self.cron.setObjectName("schedule-cron")
        self.cron.setAccessibleName("Cron fields")
        self.cron.setPlaceholderText("minute hour day-of-month month day-of-week: 0 9 * * 1-5")
        self.cron.setToolTip(_CRON_HELP)
        self.cron.textChanged.connect(self._on_timing_edited)

        self.zone = QComboBox()
        self.zone.setObjectName("schedule-zone")
        self.zone.setAccessibleName("Time zone")
        self.zone.setEditable(True)
        self.zone.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.zone.addItems(list(zone_names()))
        completer = QCompleter(list(zone_names()), self.zone)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.zone.setCompleter(completer)
        self.zone.setCurrentText(entry.schedule.timezone if entry else zone)
        self.zone.setToolTip("An IANA time zone: the cron fields are wall-clock times there")
        self.zone.currentTextChanged.connect(self._on_timing_edited)

        self.next_line = QLabel()
        self.next_line.setObjectName("schedule-next")
        self.next_line.setAccessibleName("Next firing")
        self.next_line.setWordWrap(True)
        self.next_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.assume_yes = QCheckBox("Do irreversible steps &without asking")
        self.assume_yes.setObjectName("schedule-yes")
        self.assume_yes.setChecked(entry.schedule.assume_yes if entry else False)
        self.assume_yes.setToolTip(
            "Nobody attends a scheduled run: without this, a run stops before the workflow's "
            "first irreversible step (procedura schedule add --yes)"
        )

        self.workflow_label = QLabel("&Workflow:")
        self.workflow_label.setBuddy(self.workflow)
        self.cron_label = QLabel("&Cron fields:")
        self.cron_label.setBuddy(self.cron)
        self.zone_label = QLabel("Time &zone:")
        self.zone_label.setBuddy(self.zone)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(self.workflow_label, self.workflow)
        form.addRow(self.cron_label, self.cron)
        form.addRow(self.zone_label, self.zone)
        form.addRow("", self.next_line)

        self.values_box = QGroupBox("Values for each run")
        self.values_box.setObjectName("schedule-values")
        self.secrets_note = QLabel()
        self.secrets_note.setObjectName("schedule-secrets")
        self.secrets_note.setWordWrap(True)
        theme.set_tone(self.secrets_note, "muted")
        self.secrets_note.hide()
        values_column = QVBoxLayout(self.values_box)
        values_column.addWidget(self.secrets_note)
        # The form scrolls: a workflow may have many parameters, and the dialog must fit the
        # screen (it opens before the workflow's parameters are read).
        self._values_holder = QWidget()
        self._values = QVBoxLayout(self._values_holder)
        self._values.setContentsMargins(0, 0, 0, 0)
        self._values.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._values_holder)
        scroll.setMinimumHeight(240)
        values_column.addWidget(scroll, 1)

        self.error = QLabel()
        self.error.setObjectName("schedule-error")
        self.error.setAccessibleName("Why the schedule was not saved")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setText("&Save" if entry else "&Add")
        self.save_button.setObjectName("schedule-save")
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.values_box, 1)
        layout.addWidget(self.assume_yes)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_AFTER_MS)
        self._check_timer.timeout.connect(self._on_check_timer_timeout)
        self.check_timing()
        self._load_workflow()
        fit_window(self, QSize(660, 760))

    # ── what it says ────────────────────────────────────────────────────────────────────────

    @property
    def entry(self) -> ScheduleEntry | None:
        """The schedule being changed (None: a new one)."""
        return self._entry

    def request(self) -> ScheduleRequest | None:
        """What the fields say (None until the workflow's parameters are loaded)."""
        workflow_id = self.workflow.currentData()
        if not isinstance(workflow_id, str) or self.parameters is None:
            return None
        return ScheduleRequest(
            workflow_id=workflow_id,
            cron=" ".join(self.cron.text().split()),
            timezone=self.zone.currentText().strip(),
            values=self.parameters.values(),
            assume_yes=self.assume_yes.isChecked(),
        )

    def check_timing(self) -> bool:
        """Work out the next firing now and say it (or what is wrong, marking the field);
        whether the fields and the zone are good."""
        self._check_timer.stop()
        cron, zone = self.cron.text(), self.zone.currentText().strip()
        problem: ParameterError | None = None
        try:
            upcoming = self._host.backend.next_firing(cron, zone)
        except ParameterError as exc:
            problem = exc
        self._timing_ok = problem is None
        theme.set_tone(self.cron_label, "error" if problem and problem.name == "cron" else None)
        theme.set_tone(self.zone_label, "error" if problem and problem.name != "cron" else None)
        if problem is not None:
            self.next_line.setText(str(problem))
            theme.set_tone(self.next_line, "error")
        else:
            self.next_line.setText(f"next: {format_fire(upcoming)}")
            theme.set_tone(self.next_line, "ok")
        self._update_button()
        return self._timing_ok

    def set_busy(self, busy: bool) -> None:
        """While saving: the button waits, and the dialog says so."""
        self._busy = busy
        if busy:
            self._show("Saving the schedule in the team's database…", None)
        self._update_button()

    def show_error(self, line: str) -> None:
        """Say in one line why the schedule was not saved (nothing was written)."""
        self.set_busy(False)
        self._show(line, False)

    def show_problem(self, exc: ParameterError) -> None:
        """A value the store refused: mark its field, and say why in one line."""
        self.set_busy(False)
        if exc.name in ("cron", "timezone"):
            self.check_timing()
        elif self.parameters is not None and exc.name:
            self.parameters.check()
        self._show(str(exc), False)

    def _show(self, text: str, ok: bool | None) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))
        theme.set_tone(self.error, "muted" if ok is None else "ok" if ok else "error")

    def _update_button(self) -> None:
        self.save_button.setEnabled(
            not self._busy and self.parameters is not None and self._version is not None
        )

    # ── the workflow's parameters ───────────────────────────────────────────────────────────

    def _load_workflow(self) -> None:
        workflow_id = self.workflow.currentData()
        self._version = None
        self._set_form(None)
        if not isinstance(workflow_id, str):
            self._show("No workflow has an approved version: approve one first.", False)
            return
        backend = self._host.backend

        def done(version: WorkflowVersion) -> None:
            if self.workflow.currentData() == workflow_id:
                self._version = version
                self._set_form(version)

        def failed(exc: BaseException) -> bool:
            if self.workflow.currentData() == workflow_id:
                self._show(describe_error(exc), False)
            return True

        self._host.tasks.run(
            lambda: backend.workflows.runnable(workflow_id),
            label="Reading the workflow's approved version…",
            on_done=done,
            on_error=failed,
        )

    def _set_form(self, version: WorkflowVersion | None) -> None:
        if self.parameters is not None:
            self._values.removeWidget(self.parameters)
            self.parameters.hide()
            self.parameters.deleteLater()
            self.parameters = None
        self.secrets_note.hide()
        if version is not None:
            workflow = version.workflow
            secret = [p for p in workflow.parameters if p.type is ParameterType.SECRET]
            asked = tuple(p for p in workflow.parameters if p.type is not ParameterType.SECRET)
            start = (
                {k: value_text(v) for k, v in self._entry.schedule.values.items()}
                if self._entry is not None
                else None
            )
            self.parameters = ParameterForm(
                workflow.model_copy(update={"parameters": asked}), values=start
            )
            self.parameters.setObjectName("schedule-parameters")
            self.parameters.edited.connect(self._on_parameters_edited)
            self._values.insertWidget(0, self.parameters)
            if secret:
                names = ", ".join(field_label(p) for p in secret)
                self.secrets_note.setText(
                    f"Not asked here: {names}. A secret's value comes from the keyring of the "
                    "worker that runs it, never from the schedule."
                )
                self.secrets_note.show()
        self._update_button()

    # ── slots ───────────────────────────────────────────────────────────────────────────────

    def _on_workflow_current_index_changed(self, _index: int) -> None:
        self._show("", None)
        self._load_workflow()

    def _on_timing_edited(self, _text: str) -> None:
        self._check_timer.start()

    def _on_check_timer_timeout(self) -> None:
        self.check_timing()

    def _on_parameters_edited(self) -> None:
        if self.error.isVisible() and not self._busy:
            self._show("", None)

    def _on_buttons_accepted(self) -> None:
        if not self.save_button.isEnabled():
            return
        if not self.check_timing():
            self._show(self.next_line.text(), False)
            (self.cron if self.cron_label.property("tone") else self.zone).setFocus()
            return
        form = self.parameters
        if form is None:
            return
        if not form.check():
            self._show(form.error(), False)
            form.focus_first()
            return
        request = self.request()
        if request is not None:
            self.set_busy(True)
            self.save_requested.emit(request)
