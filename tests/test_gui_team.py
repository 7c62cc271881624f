"""Team mode and the runner fleet in the window, on a real PostgreSQL server: the Settings
screen's Team section (join, a refused login, leave), the Fleet screen (jobs, rows, Cancel) and
the tray's Fleet submenu (its line, the jobs, Cancel, and Resume on a real Redis queue)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import full_workflow
from fakes.keyring_backend import MemoryKeyring, memory_keyring
from fleet_support import RedisServer
from gui_support import Gui, open_gui, top_level, until
from postgres_server import PostgresServer, make_team
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.adapters.sql.team import ROLE_RIGHTS, TeamRole
from desktop_app.core.models.fleet import FleetJob, JobKind, RowState
from desktop_app.settings import SETTINGS_FILE, load_settings
from desktop_app.ui.fleet_page import NO_FLEET, FleetPage
from desktop_app.ui.settings_page import SettingsPage
from desktop_app.ui.tray import Tray

pytestmark = pytest.mark.slow


@pytest.fixture
def keyring_memory() -> Iterator[MemoryKeyring]:
    with memory_keyring() as backend:
        yield backend


@pytest.fixture
def team_db(postgres: PostgresServer) -> str:
    """A team's database with an analyst (ann) and an approver (amy)."""
    return make_team(postgres, {"ann": "analyst", "amy": "approver"})


def _settings_page(gui: Gui) -> SettingsPage:
    page = gui.window.show_screen("Settings")
    assert isinstance(page, SettingsPage)
    gui.run(until(lambda: page.team is not None, what="the Team section"))
    return page


def _join(gui: Gui, page: SettingsPage, url: str, password: str, **more: str) -> None:
    page.team_join_button.click()
    dialog = page.join_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.database.setText(url)
    dialog.password.setText(password)
    for name, value in more.items():
        getattr(dialog, name).setText(value)
    assert dialog.password.echoMode() == dialog.password.EchoMode.Password
    dialog.join_button.click()


def test_the_team_section_shows_personal_mode_and_no_fleet(gui: Gui) -> None:
    page = _settings_page(gui)
    assert page.team is not None and not page.team.team
    assert page.team_mode.text().startswith("Personal: your own library, in ")
    assert str(gui.services.settings.database_path) in page.team_mode.text()
    assert not page.team_user.isVisible() and not page.team_roles.isVisible()
    assert page.team_join_button.isEnabled() and not page.team_leave_button.isEnabled()
    fleet = gui.window.show_screen("Fleet")
    assert isinstance(fleet, FleetPage)
    assert fleet.placeholder.isVisible() and fleet.placeholder.text() == NO_FLEET
    assert "docs/team.md" in NO_FLEET
    tray = Tray(gui.window, force=True)
    gui.run(tray.reload())
    assert tray.fleet_action not in tray.menu.actions()


def test_joining_a_team_through_the_dialog_writes_the_settings_and_shows_the_roles(
    gui: Gui, postgres: PostgresServer, team_db: str, keyring_memory: MemoryKeyring
) -> None:
    page = _settings_page(gui)
    bare = f"postgresql://ann@127.0.0.1:{postgres.port}/{team_db}"
    _join(gui, page, bare, "ann-pw", queue="redis://:queue-pw@127.0.0.1:6390/2")
    dialog = page.join_dialog
    assert dialog is not None
    gui.run(until(lambda: not dialog.isVisible(), what="the dialog to close"))
    gui.run(until(lambda: page.team is not None and page.team.team, what="team mode to be shown"))
    gui.settle()

    # The settings the next start uses: the team's, with no secret in the file.
    written = load_settings()
    assert written.team_database == bare
    assert written.team_queue == "redis://127.0.0.1:6390/2"
    text = (gui.services.settings.home / SETTINGS_FILE).read_text()
    assert "ann-pw" not in text and "queue-pw" not in text
    assert sorted(keyring_memory.passwords.values()) == ["ann-pw", "queue-pw"]

    # What the section says: who ann is in the team and what her roles let her do, in words.
    assert page.team_mode.text() == f"Team: {bare}"
    assert page.team_user.isVisible() and page.team_user.text() == "ann"
    roles = page.team_roles.text().splitlines()
    assert roles == [
        f"recorder: {ROLE_RIGHTS[TeamRole.RECORDER]}",
        f"analyst: {ROLE_RIGHTS[TeamRole.ANALYST]}",
    ]
    assert page.team_queue.text() == "redis://127.0.0.1:6390/2"
    assert not page.team_problem.isVisible()
    assert page.team_note.isVisible() and "next starts" in page.team_note.text()
    assert "Joined" in page.message.text() and "start it again" in page.message.text()
    assert page.team_leave_button.isEnabled()

    # The window keeps the library it opened until the next start.
    assert not gui.services.settings.team and not gui.backend.fleet_enabled()
    assert gui.services.settings.actor == "tester"

    # Leaving (confirmed) goes back to personal mode and forgets the secrets.
    page.team_leave_button.click()
    box = page.findChild(QMessageBox, "settings-team-leave-confirm")
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Yes).click()
    gui.run(until(lambda: page.team is not None and not page.team.team, what="personal mode"))
    assert load_settings().team_database is None and load_settings().team_queue is None
    assert keyring_memory.passwords == {}
    assert not page.team_note.isVisible()


def test_a_wrong_password_shows_the_servers_refusal_and_changes_nothing(
    gui: Gui, postgres: PostgresServer, team_db: str, keyring_memory: MemoryKeyring
) -> None:
    page = _settings_page(gui)
    before = page.team
    url = f"postgresql://ann@127.0.0.1:{postgres.port}/{team_db}"
    _join(gui, page, url, "not-her-password")
    dialog = page.join_dialog
    assert dialog is not None
    gui.run(until(lambda: dialog.join_button.isEnabled(), what="the join to fail"))
    line = dialog.error.text()
    assert dialog.isVisible() and dialog.error.isVisible()
    assert 'password authentication failed for user "ann"' in line
    assert "\n" not in line and "ann-pw" not in line
    gui.settle()
    assert load_settings().team_database is None
    assert not (gui.services.settings.home / SETTINGS_FILE).exists()
    assert keyring_memory.passwords == {}
    assert page.team == before and page.team_mode.text().startswith("Personal")
    assert gui.window.tasks.last_error is None  # told in the dialog, not as a bug
    dialog.reject()


# ── the Fleet screen ────────────────────────────────────────────────────────────────────────


@pytest.fixture
def team_gui(
    qapp: Any, postgres: PostgresServer, team_db: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Gui]:
    """The window of amy, an approver of the team, whose team has a fleet (no Redis is needed
    to list jobs or cancel them)."""
    monkeypatch.setenv(
        "PROCEDURA_TEAM_DATABASE", f"postgresql://amy@127.0.0.1:{postgres.port}/{team_db}"
    )
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "amy-pw")
    monkeypatch.setenv("PROCEDURA_TEAM_QUEUE", "redis://127.0.0.1:9/0")
    with open_gui(qapp) as opened:
        yield opened


def _job(gui: Gui, postgres: PostgresServer, team_db: str) -> FleetJob:
    """A job of five rows: one succeeded, one needs attention, one running, two queued."""
    services = gui.services
    saved = services.workflows.save(full_workflow(), actor="amy").version
    job = FleetJob(
        kind=JobKind.BATCH,
        workflow_id=saved.workflow_id,
        version=saved.version,
        name=saved.workflow.name,
        created_by="amy",
    )
    SqlFleetStore(services.engine).add_job(job, [{"n": n} for n in range(1, 6)])
    with postgres.connect(team_db) as conn:
        for row, state, worker, error in (
            (1, "succeeded", "host-a:11", None),
            (2, "needs_attention", "host-b:12", "the worker stopped after 'Submit'"),
            (3, "running", "host-a:11", None),
        ):
            conn.execute(
                "UPDATE fleet_rows SET state = %s, worker = %s, attempt = 1, error = %s "
                "WHERE job_id = %s AND row_no = %s",
                (state, worker, error, job.id, row),
            )
    return job


def _states(postgres: PostgresServer, team_db: str, job_id: str) -> list[str]:
    with postgres.connect(team_db) as conn:
        found = conn.execute(
            "SELECT state FROM fleet_rows WHERE job_id = %s ORDER BY row_no", (job_id,)
        ).fetchall()
    return [str(state) for (state,) in found]


def test_the_fleet_screen_lists_a_job_its_rows_and_cancels_its_queued_rows(
    team_gui: Gui, postgres: PostgresServer, team_db: str, tmp_path: Path
) -> None:
    gui = team_gui
    assert gui.backend.fleet_enabled()
    job = gui.call(lambda: _job(gui, postgres, team_db))
    page = gui.window.show_screen("Fleet")
    assert isinstance(page, FleetPage)
    assert not page.placeholder.isVisible() and page.jobs.isVisible()
    gui.run(until(lambda: page.jobs_model.find(job.id) is not None, what="the job"))
    number = page.jobs_model.find(job.id)
    assert number is not None

    def cell(column: int) -> str:
        return str(page.jobs_model.index(number, column).data())

    assert cell(0) == f"{job.name} v{job.version}"
    assert (cell(1), cell(2), cell(4)) == ("CSV batch", "amy", "2/5")
    assert cell(5) == "1 needs attention, 1 running, 2 queued, 1 succeeded"
    # A job with rows that need attention is highlighted.
    assert page.jobs_model.index(number, 0).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert page.summary.text().startswith(
        "Rows of the newest jobs: 1 running, 2 queued, 1 needs attention."
    )

    # Its rows: state, worker, tries, error.
    assert page.select_job(job.id)
    gui.run(until(lambda: page.rows_model.rowCount() == 5, what="the job's rows"))
    shown = [[str(page.rows_model.index(r, c).data()) for c in range(5)] for r in range(5)]
    assert shown[0] == ["1", "Succeeded", "host-a:11", "1", ""]
    assert shown[1] == [
        "2",
        "Needs attention",
        "host-b:12",
        "1",
        "the worker stopped after 'Submit'",
    ]
    assert shown[2][:3] == ["3", "Running", "host-a:11"]
    assert [r[1] for r in shown[3:]] == ["Queued", "Queued"]
    assert page.cancel_button.isEnabled() and not page.resume_button.isEnabled()

    # Refreshing while visible keeps the selection and its rows.
    loads = []
    page.jobs_loaded.connect(lambda: loads.append(1))
    gui.run(until(lambda: len(loads) >= 1, timeout=10, what="a refresh by the timer"))
    assert page.selected_job() is not None and page.rows_model.rowCount() == 5

    # Cancel asks first; No changes nothing.
    page.cancel_button.click()
    box = page.findChild(QMessageBox, "fleet-cancel-confirm")
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.No).click()
    gui.settle()
    assert _states(postgres, team_db, job.id).count("queued") == 2

    page.cancel_button.click()
    box = page.findChild(QMessageBox, "fleet-cancel-confirm")
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Yes).click()
    gui.run(until(lambda: "2 queued rows cancelled" in page.message.text(), what="the cancel"))
    assert _states(postgres, team_db, job.id) == [
        "succeeded",
        "needs_attention",
        "running",
        "cancelled",
        "cancelled",
    ]
    gui.run(
        until(
            lambda: (
                [page.rows_model.index(r, 1).data() for r in (3, 4)] == ["Cancelled", "Cancelled"]
            ),
            what="the cancelled rows shown",
        )
    )
    assert page.resume_button.isEnabled()
    assert SqlFleetStore(gui.services.engine).job(job.id).cancel_requested
    assert RowState.CANCELLED in SqlFleetStore(gui.services.engine).job(job.id).counts


def test_the_tray_counts_the_fleets_rows_and_opens_the_fleet_screen(
    team_gui: Gui, postgres: PostgresServer, team_db: str
) -> None:
    gui = team_gui
    gui.call(lambda: _job(gui, postgres, team_db))
    tray = Tray(gui.window, force=True)
    tray.show()
    gui.run(tray.reload())
    gui.run(until(lambda: tray.fleet_counts is not None, what="the fleet's counts"))
    assert tray.fleet_action in tray.menu.actions()
    assert tray.fleet_action.text() == "Fleet: 1 running, 1 needs attention"
    assert tray.fleet_action.menu() is tray.fleet_menu  # a submenu, whose first entry opens
    assert tray.fleet_menu.actions()[0] is tray.fleet_open_action  # the Fleet screen
    gui.window.show_screen("Library")
    tray.fleet_open_action.trigger()
    assert gui.window.fleet.isVisible()
    tray.hide()


# ── the tray's Fleet submenu: Cancel and Resume ─────────────────────────────────────────────


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture
def queue_gui(
    qapp: Any,
    postgres: PostgresServer,
    team_db: str,
    redis: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Gui]:
    """amy's window (an approver), her team's fleet on a real queue: Resume hands rows to it."""
    monkeypatch.setenv(
        "PROCEDURA_TEAM_DATABASE", f"postgresql://amy@127.0.0.1:{postgres.port}/{team_db}"
    )
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "amy-pw")
    monkeypatch.setenv("PROCEDURA_TEAM_QUEUE", redis.url())
    with open_gui(qapp) as opened:
        yield opened


def _cancel_question() -> QMessageBox:
    found = [w for w in top_level(QMessageBox) if w.objectName() == "fleet-cancel-confirm"]
    assert len(found) == 1, "Cancel asks first, with the Fleet screen's question"
    box = found[0]
    assert isinstance(box, QMessageBox)
    return box


def test_the_trays_fleet_submenu_lists_a_job_and_cancels_and_resumes_its_rows(
    queue_gui: Gui, postgres: PostgresServer, team_db: str, redis: RedisServer
) -> None:
    gui = queue_gui
    job = gui.call(lambda: _job(gui, postgres, team_db))
    tray = Tray(gui.window, force=True)
    tray.show()
    gui.run(tray.reload())
    gui.run(until(lambda: tray.fleet_job_actions(job.id) is not None, what="the job listed"))

    # The line is a submenu: the Fleet screen, then the job, a submenu of Cancel and Resume.
    assert tray.fleet_action.text() == "Fleet: 1 running, 1 needs attention"
    entries = tray.fleet_menu.actions()
    assert [a.objectName() for a in entries[:1]] == ["tray-fleet-open"] and entries[1].isSeparator()
    [job_menu] = tray.fleet_job_menus()
    assert entries[2:] == [job_menu.menuAction()]
    assert job_menu.menuAction().objectName() == "tray-fleet-job"
    assert job_menu.menuAction().data() == job.id
    assert job_menu.title() == (
        f"“{job.name}” v{job.version} (job {job.id[:8]}): 2 of 5 rows ended; "
        "1 needs attention, 1 running, 2 queued, 1 succeeded"
    )
    actions = tray.fleet_job_actions(job.id)
    assert actions is not None
    cancel, resume = actions
    assert job_menu.actions() == [cancel, resume]
    assert (cancel.objectName(), resume.objectName()) == ("tray-fleet-cancel", "tray-fleet-resume")
    assert cancel.isEnabled() and not resume.isEnabled()

    # Cancel asks first, as the Fleet screen does; No changes nothing.
    cancel.trigger()
    _cancel_question().button(QMessageBox.StandardButton.No).click()
    gui.settle()
    assert _states(postgres, team_db, job.id).count("queued") == 2
    assert tray.last_message is None

    # Yes cancels the queued rows (the running one stops before its next step), and the entry
    # reads the job again: Resume is on, Cancel stays on while a row runs.
    cancel.trigger()
    _cancel_question().button(QMessageBox.StandardButton.Yes).click()
    gui.run(
        until(
            lambda: (
                tray.last_message is not None and tray.last_message.title == "Fleet job cancelled"
            ),
            what="the cancel",
        )
    )
    assert tray.last_message is not None
    assert tray.last_message.text.startswith(f"“{job.name}”: 2 queued rows cancelled;")
    assert _states(postgres, team_db, job.id) == [
        "succeeded",
        "needs_attention",
        "running",
        "cancelled",
        "cancelled",
    ]
    gui.run(until(lambda: resume.isEnabled(), what="Resume to be on"))
    assert cancel.isEnabled()
    assert tray.fleet_job_menus() == [job_menu]  # the same entry, read again
    assert "2 cancelled (cancel asked)" in job_menu.title()

    # Resume queues them again, on the team's queue as well.
    resume.trigger()
    gui.run(
        until(
            lambda: (
                tray.last_message is not None and tray.last_message.title == "Fleet job resumed"
            ),
            what="the resume",
        )
    )
    assert tray.last_message is not None
    assert tray.last_message.text == f"“{job.name}”: 2 rows queued again."
    assert _states(postgres, team_db, job.id) == [
        "succeeded",
        "needs_attention",
        "running",
        "queued",
        "queued",
    ]
    from celery import Celery

    queued = Celery(broker=redis.url()).connection_for_write().default_channel.client
    assert queued.llen("procedura.rows") == 2
    # Both are off while the resume runs; the fleet read again turns Cancel back on.
    gui.run(until(lambda: "2 queued" in job_menu.title(), what="the job's rows read again"))
    assert cancel.isEnabled() and not resume.isEnabled()

    # A job that ended with failed rows: Resume only. One that ended otherwise is not listed.
    def end_rows(state: str) -> None:
        with postgres.connect(team_db) as conn:
            conn.execute(
                "UPDATE fleet_rows SET state = %s WHERE job_id = %s AND row_no >= 3",
                (state, job.id),
            )

    counted: list[int] = []
    tray.fleet_counted.connect(lambda: counted.append(1))

    def read_again() -> None:
        before = len(counted)
        tray.refresh_fleet()
        gui.run(until(lambda: len(counted) > before, what="the fleet read again"))

    end_rows("failed")
    read_again()
    assert tray.fleet_job_menus() == [job_menu]
    assert not cancel.isEnabled() and resume.isEnabled()
    end_rows("succeeded")
    read_again()
    assert tray.fleet_job_menus() == [] and tray.fleet_job_actions(job.id) is None
    assert [a.objectName() for a in tray.fleet_menu.actions() if not a.isSeparator()] == [
        "tray-fleet-open",
        "tray-fleet-no-jobs",
    ]
    tray.hide()
