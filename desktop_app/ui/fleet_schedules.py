"""The Fleet screen's Schedules tab: the team's schedules, and Add, Edit, Enable/Disable and
Remove for its approvers.

Each schedule shows its workflow, cron fields, zone, whether it is enabled, when it last fired
and when it fires next, both in the schedule's own zone. While the tab is visible it reads them
again every few seconds, off the GUI thread, with the member's roles: only an approver or an
admin may change schedules (the team's server refuses anyone else), so for others the buttons
are off and say why. The verbs are the command line's (``procedura schedule``).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any, Final

from PySide6.QtCore import (
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.fleet import Schedule
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.core.values import value_text
from desktop_app.core.views import WorkflowSummary
from desktop_app.ui import theme
from desktop_app.ui.backend import FleetMember, ScheduleEntry, ScheduleRequest
from desktop_app.ui.host import Host
from desktop_app.ui.schedule_dialog import ScheduleDialog, format_fire
from desktop_app.ui.table_model import RowsModel
from desktop_app.ui.tasks import describe_error

__all__ = ["REFRESH_MS", "ScheduleColumn", "SchedulesModel", "SchedulesPanel", "not_allowed"]

#: How often the tab reads the schedules again while it is visible (as the jobs are).
REFRESH_MS: Final = 3000

_Index = QModelIndex | QPersistentModelIndex


def not_allowed(member: FleetMember | None) -> str | None:
    """Why *member* may not change schedules, in words (None: they may)."""
    if member is None:
        return "Reading your roles in the team…"
    if member.may_schedule:
        return None
    roles = ", ".join(member.roles) or "no role"
    return (
        f"Only an approver or an admin may change the team's schedules; {member.user} is "
        f"{roles}. The team's admin can add the role (procedura team add-member)."
    )


class ScheduleColumn:
    """The schedules table's columns."""

    WORKFLOW = 0
    CRON = 1
    ZONE = 2
    ENABLED = 3
    LAST = 4
    NEXT = 5


class SchedulesModel(RowsModel[ScheduleEntry]):
    """The team's schedules: workflow, cron fields, zone, enabled, last and next firing."""

    HEADERS = ("Workflow", "Cron fields", "Zone", "Enabled", "Last fired", "Next firing")

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        entry = self.row_at(index)
        if entry is None:
            return None
        schedule = entry.schedule
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                ScheduleColumn.WORKFLOW: entry.workflow,
                ScheduleColumn.CRON: schedule.cron,
                ScheduleColumn.ZONE: schedule.timezone,
                ScheduleColumn.ENABLED: "yes" if schedule.enabled else "no",
                ScheduleColumn.LAST: _in_zone(schedule.last_fired_at, schedule) or "never",
                ScheduleColumn.NEXT: (
                    format_fire(entry.next_fire) if entry.next_fire is not None else "—"
                ),
            }.get(column)
        if role == Qt.ItemDataRole.ToolTipRole:
            values = ", ".join(f"{k}={value_text(v)}" for k, v in schedule.values.items())
            unattended = (
                "does irreversible steps without asking"
                if schedule.assume_yes
                else "stops before an irreversible step (nobody is there to confirm it)"
            )
            return (
                f"{entry.workflow} at {schedule.cron!r} in {schedule.timezone}, schedule "
                f"{schedule.id[:8]} by {schedule.created_by}\n"
                f"Values: {values or 'none'}\nEach run {unattended}."
            )
        if role == Qt.ItemDataRole.ForegroundRole and not schedule.enabled:
            return QBrush(theme.color("muted"))
        return None

    def find(self, schedule_id: str) -> int | None:
        """The row of schedule *schedule_id*, if listed."""
        for number, entry in enumerate(self._rows):
            if entry.schedule.id == schedule_id:
                return number
        return None


def _in_zone(moment: datetime | None, schedule: Schedule) -> str:
    if moment is None:
        return ""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return format_fire(moment.astimezone(ZoneInfo(schedule.timezone)))
    except (ZoneInfoNotFoundError, ValueError):
        return format_fire(moment)


class SchedulesPanel(QWidget):
    """The schedules table with Add…, Edit…, Enable/Disable and Remove….

    Signals:
        schedules_loaded(): the schedules and the member's roles were read again and shown.
    """

    schedules_loaded = Signal()

    def __init__(self, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fleet-schedules")
        self._host = host
        self._loading = False
        self._again = False
        self._selected: str | None = None
        self.member: FleetMember | None = None
        self.dialog: ScheduleDialog | None = None

        self.summary = QLabel()
        self.summary.setObjectName("schedules-summary")
        self.summary.setWordWrap(True)
        theme.set_tone(self.summary, "muted")

        self.model = SchedulesModel(self)
        self.table = QTableView()
        self.table.setObjectName("schedules-table")
        self.table.setAccessibleName("Schedules")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        head = self.table.horizontalHeader()
        head.resizeSection(ScheduleColumn.WORKFLOW, 240)
        head.resizeSection(ScheduleColumn.CRON, 120)
        head.resizeSection(ScheduleColumn.ZONE, 140)
        head.resizeSection(ScheduleColumn.ENABLED, 70)
        head.resizeSection(ScheduleColumn.LAST, 250)
        head.setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.table.doubleClicked.connect(self._on_table_double_clicked)

        def button(text: str, name: str, slot: Any) -> QPushButton:
            made = QPushButton(text)
            made.setObjectName(name)
            made.clicked.connect(slot)
            return made

        self.add_button = button("&Add…", "schedule-add", self._on_add_button_clicked)
        self.edit_button = button("&Edit…", "schedule-edit", self._on_edit_button_clicked)
        self.toggle_button = button("&Disable", "schedule-toggle", self._on_toggle_button_clicked)
        self.remove_button = button("Re&move…", "schedule-remove", self._on_remove_button_clicked)
        self.message = QLabel()
        self.message.setObjectName("schedules-message")
        self.message.setAccessibleName("Schedules status")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        for made in (self.add_button, self.edit_button, self.toggle_button, self.remove_button):
            buttons.addWidget(made)
        buttons.addWidget(self.message, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)

        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._update_buttons()

    # ── what it shows ───────────────────────────────────────────────────────────────────────

    def selected(self) -> ScheduleEntry | None:
        """The schedule selected, as last read."""
        if self._selected is None:
            return None
        number = self.model.find(self._selected)
        return None if number is None else self.model.row_at(number)

    def select(self, schedule_id: str) -> bool:
        """Select schedule *schedule_id* if it is listed."""
        number = self.model.find(schedule_id)
        if number is None:
            return False
        self.table.selectRow(number)
        return True

    async def reload(self) -> None:
        """Read the schedules and the member's roles (off the GUI thread), and show them."""
        if self._loading or not self._host.backend.fleet_enabled():
            return
        self._loading = True
        backend = self._host.backend
        try:

            def load() -> tuple[list[ScheduleEntry], FleetMember]:
                return backend.schedules(), backend.fleet_member()

            entries, member = await self._host.tasks.call(load)
        finally:
            self._loading = False
            if self._again:
                self._again = False
                self._refresh()
        self._show(entries, member)

    def _show(self, entries: list[ScheduleEntry], member: FleetMember) -> None:
        self.member = member
        keep = self._selected
        blocker = self.table.selectionModel().blockSignals(True)
        try:
            self.model.set_rows(entries)
            number = self.model.find(keep) if keep is not None else None
            if number is not None:
                self.table.selectRow(number)
            else:
                self._selected = None
        finally:
            self.table.selectionModel().blockSignals(blocker)
        enabled = sum(e.schedule.enabled for e in entries)
        self.summary.setText(
            f"{len(entries)} schedules, {enabled} enabled. Times are in each schedule's own "
            "zone; the team's scheduler (procedura worker --schedules) fires them."
            if entries
            else "No schedules yet. Add… runs an approved workflow on the fleet at set times."
        )
        self._update_buttons()
        self.schedules_loaded.emit()

    def _update_buttons(self) -> None:
        why = not_allowed(self.member)
        entry = self.selected()
        self.add_button.setEnabled(why is None)
        self.add_button.setToolTip(why or "Run an approved workflow on the fleet at set times")
        for made, tip in (
            (self.edit_button, "Change the cron fields, the zone, the values"),
            (self.toggle_button, "A disabled schedule stays listed and fires no more"),
            (self.remove_button, "Delete the schedule (the jobs it made stay)"),
        ):
            made.setEnabled(why is None and entry is not None)
            made.setToolTip(why or (tip if entry is not None else "Select a schedule first"))
        enabled = entry is None or entry.schedule.enabled
        self.toggle_button.setText("&Disable" if enabled else "E&nable")
        if why is None and entry is not None and not enabled:
            self.toggle_button.setToolTip("Fire again from the schedule's next time on")

    def _say(self, text: str, ok: bool | None) -> None:
        self.message.setText(text)
        theme.set_tone(self.message, "muted" if ok is None else "ok" if ok else "error")

    # ── refreshing while visible ────────────────────────────────────────────────────────────

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._host.backend.fleet_enabled():
            self._timer.start()
            self._refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def _on_timer_timeout(self) -> None:
        self._refresh()

    def _refresh(self) -> None:
        if self._loading:
            self._again = True  # after a change: read again once this read is done
            return
        with contextlib.suppress(RuntimeError):  # the window is closing
            self._host.tasks.start(
                self.reload(), label="Reading the schedules…", on_error=self._on_failed
            )

    def _on_failed(self, exc: BaseException) -> bool:
        """A failure says why in one line (a refresh tries again); a bug is reported too."""
        self._say(describe_error(exc), False)
        return isinstance(exc, ProceduraError)

    # ── selection ───────────────────────────────────────────────────────────────────────────

    def _on_table_selection_changed(self, _new: QItemSelection, _old: QItemSelection) -> None:
        rows = self.table.selectionModel().selectedRows()
        entry = self.model.row_at(rows[0]) if rows else None
        self._selected = entry.schedule.id if entry is not None else None
        self._update_buttons()

    def _on_table_double_clicked(self, _index: QModelIndex) -> None:
        if self.edit_button.isEnabled():
            self._on_edit_button_clicked()

    # ── add and edit ────────────────────────────────────────────────────────────────────────

    def _on_add_button_clicked(self) -> None:
        self._open_dialog(None)

    def _on_edit_button_clicked(self) -> None:
        entry = self.selected()
        if entry is not None:
            self._open_dialog(entry)

    def _open_dialog(self, entry: ScheduleEntry | None) -> None:
        """Read what the dialog offers (approved workflows, this machine's zone; the cron
        parser loaded, so the dialog's live line never waits for it), then open it."""
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return
        backend = self._host.backend

        def load() -> tuple[list[WorkflowSummary], str]:
            backend.next_firing("0 9 * * *", "UTC")
            approved = [s for s in backend.workflows.list() if s.approved_version is not None]
            return sorted(approved, key=lambda s: s.name.casefold()), backend.local_zone() or "UTC"

        def done(found: tuple[list[WorkflowSummary], str]) -> None:
            workflows, zone = found
            dialog = ScheduleDialog(self._host, workflows, zone=zone, entry=entry, parent=self)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.save_requested.connect(
                lambda request, d=dialog: self._on_dialog_save_requested(d, request)
            )
            dialog.finished.connect(self._on_dialog_finished)
            self.dialog = dialog
            dialog.open()

        self._host.tasks.run(
            load, label="Reading the approved workflows…", on_done=done, on_error=self._on_failed
        )

    def _on_dialog_finished(self, _result: int) -> None:
        self.dialog = None  # closed: deleted next

    def _on_dialog_save_requested(self, dialog: ScheduleDialog, request: ScheduleRequest) -> None:
        backend = self._host.backend
        entry = dialog.entry

        def save() -> Schedule:
            if entry is None:
                return backend.add_schedule(request)
            return backend.update_schedule(entry.schedule.id, request)

        def done(saved: Schedule) -> None:
            name = dialog.workflow.currentText()
            dialog.accept()
            self._selected = saved.id
            what = "added" if entry is None else "changed"
            self._say(
                f"Schedule {saved.id[:8]} {what}: {name!r} at {saved.cron!r} in {saved.timezone}.",
                True,
            )
            self._host.show_status(f"Schedule {saved.id[:8]} {what}")
            self._refresh()

        def failed(exc: BaseException) -> bool:
            if isinstance(exc, ParameterError):
                dialog.show_problem(exc)
            else:
                dialog.show_error(describe_error(exc))
            return isinstance(exc, ProceduraError)

        self._host.tasks.run(save, label="Saving the schedule…", on_done=done, on_error=failed)

    # ── enable, disable, remove ─────────────────────────────────────────────────────────────

    def _on_toggle_button_clicked(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        schedule_id, enable = entry.schedule.id, not entry.schedule.enabled
        backend = self._host.backend

        def done(saved: Schedule) -> None:
            state = "enabled" if saved.enabled else "disabled: it fires no more"
            self._say(f"Schedule {saved.id[:8]} of {entry.workflow!r} {state}.", True)
            self._host.show_status(f"Schedule {saved.id[:8]} {'enabled' if enable else 'disabled'}")
            self._refresh()

        self._host.tasks.run(
            lambda: backend.set_schedule_enabled(schedule_id, enable),
            label="Enabling the schedule…" if enable else "Disabling the schedule…",
            on_done=done,
            on_error=self._on_failed,
        )

    def _on_remove_button_clicked(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove the schedule",
            f"Remove the schedule of {entry.workflow!r} at {entry.schedule.cron!r} in "
            f"{entry.schedule.timezone}? It fires no more; the jobs it made stay.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setObjectName("schedule-remove-confirm")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda result, e=entry: self._on_remove_confirm_finished(e, result))
        box.open()

    def _on_remove_confirm_finished(self, entry: ScheduleEntry, result: int) -> None:
        if result != QMessageBox.StandardButton.Yes:
            return
        schedule_id = entry.schedule.id
        backend = self._host.backend

        def done(removed: Schedule) -> None:
            self._say(f"Schedule {removed.id[:8]} of {entry.workflow!r} removed.", True)
            self._host.show_status(f"Schedule {removed.id[:8]} removed")
            self._refresh()

        self._host.tasks.run(
            lambda: backend.remove_schedule(schedule_id),
            label="Removing the schedule…",
            on_done=done,
            on_error=self._on_failed,
        )
