"""The Fleet screen's Schedules tab on a real PostgreSQL server (no Redis: schedules live in the
team's database): the list, Add… through the dialog (its live "next" line, a bad cron refused
with its reason, the server's refusal), Disable and Remove…, and a runner's window, whose
buttons are off and say why."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import full_workflow
from gui_support import Gui, open_gui, until
from postgres_server import PostgresServer
from PySide6.QtWidgets import QMessageBox

from desktop_app.adapters.sql.database import open_database
from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.adapters.sql.team import TeamRole, add_member, group_role
from desktop_app.app import Services, open_services
from desktop_app.core.models.fleet import Schedule
from desktop_app.fleet.schedules import add_schedule
from desktop_app.settings import load_settings
from desktop_app.team import init_team
from desktop_app.ui.fleet_page import FleetPage
from desktop_app.ui.fleet_schedules import ScheduleColumn, SchedulesPanel
from desktop_app.ui.schedule_dialog import ScheduleDialog

pytestmark = pytest.mark.slow

WORKFLOW = "Sign a teammate up"


@pytest.fixture
def team_db(postgres: PostgresServer) -> str:
    """A team's database with an approver (amy) and a runner (rita)."""
    database = postgres.new_database()
    init_team(postgres.url(database))
    engine = open_database(postgres.url(database))
    add_member(engine, "amy", "amy-pw", [TeamRole.APPROVER])
    add_member(engine, "rita", "rita-pw", [TeamRole.RUNNER])
    engine.dispose()
    return database


def _as(user: str, postgres: PostgresServer, team_db: str, mp: pytest.MonkeyPatch) -> None:
    """The team settings of *user*'s machine, in the environment."""
    mp.setenv("PROCEDURA_TEAM_DATABASE", f"postgresql://{user}@127.0.0.1:{postgres.port}/{team_db}")
    mp.setenv("PROCEDURA_TEAM_PASSWORD", f"{user}-pw")
    mp.setenv("PROCEDURA_TEAM_QUEUE", "redis://127.0.0.1:9/0")


@pytest.fixture
def amy_gui(
    qapp: Any, postgres: PostgresServer, team_db: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Gui]:
    """The window of amy, an approver, with an approved workflow in the team's library."""
    _as("amy", postgres, team_db, monkeypatch)
    with open_gui(qapp) as gui:
        gui.call(lambda: _approved(gui.services))
        yield gui


@pytest.fixture
def rita_gui(
    qapp: Any,
    postgres: PostgresServer,
    team_db: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Iterator[tuple[Gui, str]]:
    """The window of rita, a runner, and a schedule amy added from her machine."""
    _as("amy", postgres, team_db, monkeypatch)
    with open_services(load_settings(home=tmp_path / "amy"), write=True) as amy:
        wid = _approved(amy)
        added = add_schedule(amy, wid, "0 9 * * 1-5", "Europe/Paris", {"user": "jo@example.com"})
    _as("rita", postgres, team_db, monkeypatch)
    with open_gui(qapp) as gui:
        yield gui, added.id


def _approved(services: Services) -> str:
    workflows = services.workflows
    workflow = full_workflow(name=WORKFLOW)
    saved = workflows.save(workflow, actor="amy").version
    workflows.submit(workflow.id, actor="amy")
    workflows.approve(workflow.id, actor="amy", version=saved.version)
    return workflow.id


def _workflow_id(gui: Gui) -> str:
    return gui.call(lambda: gui.services.workflows.resolve(WORKFLOW))


def _stored(gui: Gui) -> list[Schedule]:
    """The team's schedules as the database holds them (read here, as a test may)."""
    return SqlFleetStore(gui.services.engine).schedules()


def _schedules(gui: Gui) -> SchedulesPanel:
    page = gui.window.show_screen("Fleet")
    assert isinstance(page, FleetPage)
    panel = page.show_schedules()
    assert panel.isVisible() and not page.jobs.isVisible()
    gui.run(until(lambda: panel.member is not None, what="the schedules and the roles"))
    return panel


def _add(gui: Gui, cron: str = "0 9 * * 1-5", zone: str = "Europe/Paris") -> Schedule:
    wid = _workflow_id(gui)
    return gui.call(lambda: add_schedule(gui.services, wid, cron, zone, {"user": "jo@example.com"}))


def _open_dialog(gui: Gui, panel: SchedulesPanel, button: Callable[[], None]) -> ScheduleDialog:
    button()
    gui.run(until(lambda: panel.dialog is not None and panel.dialog.isVisible(), what="dialog"))
    dialog = panel.dialog
    assert dialog is not None
    gui.run(until(lambda: dialog.parameters is not None, what="the workflow's parameters"))
    return dialog


def _cell(panel: SchedulesPanel, row: int, column: int) -> str:
    return str(panel.model.index(row, column).data())


def test_the_list_shows_a_schedule_added_by_the_command_lines_verb(amy_gui: Gui) -> None:
    gui = amy_gui
    added = _add(gui)
    panel = _schedules(gui)
    gui.run(until(lambda: panel.model.rowCount() == 1, what="the schedule listed"))
    assert _cell(panel, 0, ScheduleColumn.WORKFLOW) == WORKFLOW
    assert _cell(panel, 0, ScheduleColumn.CRON) == "0 9 * * 1-5"
    assert _cell(panel, 0, ScheduleColumn.ZONE) == "Europe/Paris"
    assert _cell(panel, 0, ScheduleColumn.ENABLED) == "yes"
    assert _cell(panel, 0, ScheduleColumn.LAST) == "never"
    upcoming = _cell(panel, 0, ScheduleColumn.NEXT)
    assert upcoming.endswith(" 09:00 (Europe/Paris)"), upcoming
    assert upcoming.split()[0] in ("Mon", "Tue", "Wed", "Thu", "Fri")
    assert added.id[:8] in str(panel.model.index(0, 0).data(3))  # the tooltip names it
    assert panel.summary.text().startswith("1 schedules, 1 enabled.")
    # amy is an approver: Add… is on; the others wait for a selection.
    assert panel.add_button.isEnabled() and not panel.edit_button.isEnabled()
    assert panel.select(added.id)
    assert panel.edit_button.isEnabled() and panel.remove_button.isEnabled()
    assert panel.toggle_button.text() == "&Disable"


def test_adding_through_the_dialog_stores_the_schedule_in_its_zone(amy_gui: Gui) -> None:
    gui = amy_gui
    panel = _schedules(gui)
    dialog = _open_dialog(gui, panel, panel.add_button.click)
    assert dialog.workflow.currentText() == WORKFLOW
    assert dialog.zone.currentText() == gui.backend.local_zone()  # this machine's
    # The secret is not asked for: the worker's keyring has it.
    parameters = dialog.parameters
    assert parameters is not None
    assert "password" not in parameters.values()
    assert dialog.secrets_note.isVisible() and "Password" in dialog.secrets_note.text()

    dialog.cron.setText("30 6 1 * *")
    dialog.zone.setCurrentText("America/New_York")
    gui.run(
        until(
            lambda: dialog.next_line.text().endswith(" 06:30 (America/New_York)"),
            what="the next firing in New York",
        )
    )
    assert dialog.next_line.text().startswith("next: ")
    parameters.set_value("user", "jo@example.com")
    dialog.assume_yes.setChecked(True)
    dialog.save_button.click()
    gui.run(until(lambda: panel.dialog is None, what="the dialog to close"))

    [stored] = _stored(gui)
    assert (stored.cron, stored.timezone) == ("30 6 1 * *", "America/New_York")
    assert stored.workflow_id == _workflow_id(gui) and stored.enabled and stored.assume_yes
    assert stored.values["user"] == "jo@example.com" and "password" not in stored.values
    assert stored.created_by == "amy"
    gui.run(until(lambda: panel.model.rowCount() == 1, what="the new schedule listed"))
    assert "added" in panel.message.text() and "America/New_York" in panel.message.text()
    assert panel.selected() is not None  # the one added is selected


def test_a_bad_cron_shows_its_reason_and_stores_nothing(amy_gui: Gui) -> None:
    gui = amy_gui
    panel = _schedules(gui)
    dialog = _open_dialog(gui, panel, panel.add_button.click)
    parameters = dialog.parameters
    assert parameters is not None
    parameters.set_value("user", "jo@example.com")
    dialog.cron.setText("0 25 * * *")
    gui.run(until(lambda: "hour field" in dialog.next_line.text(), what="the cron's problem"))
    reason = dialog.next_line.text()
    assert "the hour field '25' is not valid" in reason and "\n" not in reason
    assert dialog.cron_label.property("tone") == "error"
    assert dialog.zone_label.property("tone") == ""
    dialog.save_button.click()
    gui.settle()
    assert dialog.isVisible() and dialog.error.isVisible()
    assert dialog.error.text() == reason
    assert _stored(gui) == []

    # A misspelt zone: the zone is marked, and the one meant named.
    dialog.cron.setText("0 9 * * *")
    dialog.zone.setCurrentText("Europe/Pariss")
    gui.run(until(lambda: "did you mean" in dialog.next_line.text(), what="the zone's problem"))
    assert dialog.next_line.text().endswith("did you mean Europe/Paris?")
    assert dialog.zone_label.property("tone") == "error"
    assert dialog.cron_label.property("tone") == ""

    # A bad value: its field says why, and nothing is written either.
    dialog.zone.setCurrentText("UTC")
    parameters.set_value("user", "not an address")
    dialog.save_button.click()
    gui.settle()
    assert dialog.isVisible() and dialog.error.text().startswith("User")
    assert parameters.problem("user")
    assert _stored(gui) == []
    dialog.reject()


def test_the_servers_refusal_is_shown_in_one_line(
    amy_gui: Gui, postgres: PostgresServer, team_db: str
) -> None:
    gui = amy_gui
    panel = _schedules(gui)
    dialog = _open_dialog(gui, panel, panel.add_button.click)
    # amy's roles change under the open window: a runner now, no longer an approver.
    with postgres.connect(team_db) as conn:
        conn.execute(f'GRANT "{group_role(team_db, TeamRole.RUNNER)}" TO amy')
        conn.execute(f'REVOKE "{group_role(team_db, TeamRole.APPROVER)}" FROM amy')
    parameters = dialog.parameters
    assert parameters is not None
    parameters.set_value("user", "jo@example.com")
    dialog.save_button.click()
    gui.run(until(lambda: dialog.save_button.isEnabled(), what="the refusal"))
    line = dialog.error.text()
    assert dialog.isVisible() and line.startswith("the team's server refused: permission denied")
    assert "\n" not in line
    assert gui.window.tasks.last_error is None  # told in the dialog, not as a bug
    assert _stored(gui) == []
    dialog.reject()
    # The next read of the roles turns the buttons off.
    gui.run(until(lambda: not panel.add_button.isEnabled(), timeout=10, what="Add… off"))


def test_disable_through_the_page_turns_the_schedule_off_in_the_database(amy_gui: Gui) -> None:
    gui = amy_gui
    added = _add(gui)
    panel = _schedules(gui)
    gui.run(until(lambda: panel.select(added.id), what="the schedule listed"))
    panel.toggle_button.click()
    gui.run(until(lambda: not _stored(gui)[0].enabled, what="the schedule disabled"))
    gui.run(
        until(
            lambda: _cell(panel, 0, ScheduleColumn.ENABLED) == "no",
            what="the schedule shown disabled",
        )
    )
    assert _cell(panel, 0, ScheduleColumn.NEXT) == "—"
    assert panel.toggle_button.text() == "E&nable"
    assert "disabled" in panel.message.text()
    panel.toggle_button.click()
    gui.run(until(lambda: _stored(gui)[0].enabled, what="the schedule enabled again"))


def test_a_runners_window_shows_the_buttons_off_and_why(rita_gui: tuple[Gui, str]) -> None:
    gui, added = rita_gui
    panel = _schedules(gui)
    gui.run(until(lambda: panel.model.rowCount() == 1, what="the schedule listed"))
    assert panel.member is not None and panel.member.user == "rita"
    assert not panel.member.may_schedule
    assert panel.select(added)
    for button in (
        panel.add_button,
        panel.edit_button,
        panel.toggle_button,
        panel.remove_button,
    ):
        assert not button.isEnabled()
        assert button.toolTip().startswith("Only an approver or an admin may change")
        assert "rita is runner" in button.toolTip()


def test_remove_asks_first_then_deletes_the_schedule(amy_gui: Gui) -> None:
    gui = amy_gui
    added = _add(gui)
    panel = _schedules(gui)
    gui.run(until(lambda: panel.select(added.id), what="the schedule listed"))

    panel.remove_button.click()
    box = panel.findChild(QMessageBox, "schedule-remove-confirm")
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.No).click()
    gui.settle()
    assert [s.id for s in _stored(gui)] == [added.id]

    panel.remove_button.click()
    box = panel.findChild(QMessageBox, "schedule-remove-confirm")
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Yes).click()
    gui.run(until(lambda: "removed" in panel.message.text(), what="the removal"))
    assert _stored(gui) == []
    gui.run(until(lambda: panel.model.rowCount() == 0, what="the list emptied"))
    assert not panel.edit_button.isEnabled()


def test_edit_changes_the_fields_zone_and_values_and_keeps_the_workflow(amy_gui: Gui) -> None:
    gui = amy_gui
    added = _add(gui)
    panel = _schedules(gui)
    gui.run(until(lambda: panel.select(added.id), what="the schedule listed"))
    dialog = _open_dialog(gui, panel, panel.edit_button.click)
    assert not dialog.workflow.isEnabled() and dialog.workflow.currentText() == WORKFLOW
    assert (dialog.cron.text(), dialog.zone.currentText()) == ("0 9 * * 1-5", "Europe/Paris")
    parameters = dialog.parameters
    assert parameters is not None and parameters.values()["user"] == "jo@example.com"
    dialog.cron.setText("0 7 * * mon,thu")
    dialog.zone.setCurrentText("Asia/Tokyo")
    parameters.set_value("user", "kim@example.com")
    dialog.save_button.click()
    gui.run(until(lambda: panel.dialog is None, what="the dialog to close"))
    [stored] = _stored(gui)
    assert (stored.id, stored.workflow_id) == (added.id, added.workflow_id)
    assert (stored.cron, stored.timezone) == ("0 7 * * mon,thu", "Asia/Tokyo")
    assert stored.values["user"] == "kim@example.com"
    gui.run(
        until(
            lambda: _cell(panel, 0, ScheduleColumn.NEXT).endswith(" 07:00 (Asia/Tokyo)"),
            what="the new next firing",
        )
    )
