"""Render team mode's pictures into docs/images: the Fleet screen (its jobs, its schedules and
the schedule dialog), the Settings screen's Team section and the "Join a team" dialog.

    python scripts/gui_team_screenshots.py [--out docs/images] [--scale 2]

Like ``scripts/gui_screenshots.py`` (whose display, settling and saving it uses), under Xvfb with
Qt's xcb platform on a 1440×900 screen, in a temporary data and config directory and an
in-memory keyring. Everything shown is real: a PostgreSQL server is started here (as the tests
start theirs: Debian's ``postgresql`` package, which scripts/bootstrap.sh installs), made a
team's database with ``init_team``, given members, workflows and fleet jobs whose rows are put in
the states a busy fleet shows, and schedules of approved workflows (one fired already, one
disabled); the window is amy's (an approver) in team mode with a queue. No
Redis is needed: the Fleet screen reads the jobs from the team's database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))

from gui_screenshots import Stage, _display, _save, _settle  # noqa: E402

QUEUE = "redis://queue.team.example:6379/0"

#: The jobs shown: workflow name, kind, who, and each row's (state, worker, error).
JOBS: list[tuple[str, str, str, list[tuple[str, str | None, str | None]]]] = [
    (
        "Send the monthly invoice",
        "schedule",
        "amy",
        [("succeeded", "runner-2:5120", None)] * 6
        + [
            (
                "needs_attention",
                "runner-1:4121",
                "the worker running this row stopped after beginning the irreversible step "
                "'Send the invoice'; it was not done again: check the application, then run the "
                "row by hand if needed",
            )
        ]
        + [("succeeded", "runner-2:5120", None)] * 5,
    ),
    (
        "Create a contact",
        "batch",
        "amy",
        [("succeeded", "runner-1:4121", None)] * 23
        + [("failed", "runner-2:5120", "step 4 'Save': no element matched 'Save contact'")] * 2
        + [("running", "runner-1:4121", None), ("running", "runner-2:5120", None)]
        + [("queued", None, None)] * 13,
    ),
    ("Look up an order", "intent", "rita", [("succeeded", "runner-2:5120", None)]),
]


#: The schedules shown: workflow name, cron fields, zone, enabled, "without asking".
SCHEDULES: list[tuple[str, str, str, bool, bool]] = [
    ("Send the monthly invoice", "0 9 1 * *", "Europe/Paris", True, True),
    ("Create a contact", "*/15 8-18 * * 1-5", "America/New_York", True, False),
    ("Look up an order", "30 6 * * mon,thu", "Asia/Tokyo", False, False),
]


def _stage_schedules(services: Any, workflow_ids: dict[str, str]) -> None:
    """Approve the workflows the schedules run, add them, and note the firings they made."""
    from datetime import UTC, datetime, timedelta

    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.fleet.schedules import add_schedule, parse_timing, set_enabled

    store = SqlFleetStore(services.engine)
    now = datetime.now(UTC)
    for name, cron, zone, enabled, yes in SCHEDULES:
        wid = workflow_ids[name]
        version = services.workflows.get(wid).version
        services.workflows.submit(wid, actor="amy")
        services.workflows.approve(wid, actor="amy", version=version)
        added = add_schedule(
            services, wid, cron, zone, {"user": "billing@acme.example"}, assume_yes=yes
        )
        fired = parse_timing(cron, zone).latest_due(now - timedelta(days=40), now)
        store.save_schedule(added.model_copy(update={"last_fired_at": fired}))
        if not enabled:
            set_enabled(services, added.id, False)


def _stage_team(server: Any, home: Path) -> tuple[str, dict[str, str]]:
    """A team's database with members, workflows and jobs; the settings file of amy's machine."""
    from factories import full_workflow

    from desktop_app.adapters.secrets import set_team_secret
    from desktop_app.adapters.sql.database import open_database
    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.adapters.sql.team import TeamRole, add_member
    from desktop_app.core.models.fleet import FleetJob, JobKind
    from desktop_app.gui.settings_io import save_settings
    from desktop_app.settings import load_settings
    from desktop_app.team import init_team

    database = server.new_database()
    owner = server.url(database)
    init_team(owner)
    engine = open_database(owner)
    add_member(engine, "amy", "amy-pw", [TeamRole.APPROVER])
    add_member(engine, "rita", "rita-pw", [TeamRole.RUNNER])
    url = f"postgresql://amy@127.0.0.1:{server.port}/{database}"
    set_team_secret("password", url, "amy-pw")
    save_settings(load_settings(home=home), {"team_database": url, "team_queue": QUEUE})

    from desktop_app.app import open_services

    ids: dict[str, str] = {}
    workflow_ids: dict[str, str] = {}
    with open_services(load_settings(home=home), write=True) as services:
        store = SqlFleetStore(services.engine)
        for number, (name, kind, who, rows) in enumerate(reversed(JOBS)):
            workflow = full_workflow(name=name).model_copy(update={"id": f"wf{number:04d}team"})
            saved = services.workflows.save(workflow, actor="amy").version
            workflow_ids[name] = saved.workflow_id
            job = FleetJob(
                kind=JobKind(kind),
                workflow_id=saved.workflow_id,
                version=saved.version,
                name=name,
                created_by=who,
            )
            store.add_job(job, [{"row": n} for n in range(1, len(rows) + 1)])
            ids[name] = job.id
            with engine.begin() as conn:
                from sqlalchemy import text

                for row, (state, worker, error) in enumerate(rows, start=1):
                    conn.execute(
                        text(
                            "UPDATE fleet_rows SET state = :s, worker = :w, error = :e, "
                            "attempt = :a "
                            "WHERE job_id = :j AND row_no = :r"
                        ),
                        {
                            "s": state,
                            "w": worker,
                            "e": error,
                            "a": 0 if state == "queued" else 1,
                            "j": job.id,
                            "r": row,
                        },
                    )
        _stage_schedules(services, workflow_ids)
    engine.dispose()
    return url, ids


async def _main(out: Path, suffix: str, ids: dict[str, str]) -> None:
    from PySide6.QtWidgets import QGroupBox

    from desktop_app.app import open_services
    from desktop_app.gui.backend import ServicesBackend
    from desktop_app.settings import load_settings
    from desktop_app.ui.fleet_page import FleetPage
    from desktop_app.ui.settings_page import SettingsPage

    with open_services(load_settings(), write=True) as services:
        backend = ServicesBackend(services)
        from desktop_app.ui.main_window import MainWindow

        window = MainWindow(backend, dialogs=False)
        window.setGeometry(window.screen().availableGeometry())
        window.show()
        await window.reload_all()
        stage = Stage(window, backend, "", "", out, suffix=suffix)
        try:
            page = window.show_screen("Fleet")
            assert isinstance(page, FleetPage)
            await page.reload()
            page.select_job(ids["Send the monthly invoice"])
            await _settle(stage, 1.0)
            _save(stage, window, "fleet")

            panel = page.show_schedules()
            await panel.reload()
            panel.select(panel.model.rows()[0].schedule.id)
            await _settle(stage, 1.0)
            _save(stage, window, "fleet-schedules")

            panel.add_button.click()
            while panel.dialog is None or panel.dialog.parameters is None:
                await asyncio.sleep(0.05)
            dialog = panel.dialog
            dialog.cron.setText("0 9 * * 1-5")
            dialog.zone.setCurrentText("Europe/Paris")
            dialog.parameters.set_value("user", "orders@acme.example")
            dialog.check_timing()
            await _settle(stage, 0.5)
            _save(stage, dialog, "schedule-dialog")
            dialog.reject()
            page.tabs.setCurrentIndex(0)

            settings = window.show_screen("Settings")
            assert isinstance(settings, SettingsPage)
            while settings.team is None:
                await asyncio.sleep(0.05)
            box = settings.findChild(QGroupBox, "settings-section-team")
            assert box is not None
            await _settle(stage, 0.5)
            _save(stage, box, "settings-team")

            settings.team_join_button.click()
            dialog = settings.join_dialog
            assert dialog is not None
            dialog.database.setText("postgresql://ann@db.team.example:5432/acme")
            dialog.password.setText("a password")
            dialog.queue.setText(QUEUE)
            await _settle(stage, 0.5)
            _save(stage, dialog, "team-join")
            dialog.reject()
        finally:
            window.close()
            await window.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--scale", type=float, default=1.0, help="QT_SCALE_FACTOR (1 to 4)")
    args = parser.parse_args(argv)
    if not 1 <= args.scale <= 4:
        parser.error(f"--scale {args.scale:g} is out of range; use 1 to 4")
    suffix = "" if args.scale == 1 else f"@{args.scale:g}x"
    args.out.mkdir(parents=True, exist_ok=True)
    from postgres_server import PostgresServer

    server = PostgresServer()
    with tempfile.TemporaryDirectory(prefix="procedura-team-shots-") as home:
        os.environ["PROCEDURA_HOME"] = home
        os.environ["XDG_CONFIG_HOME"] = str(Path(home) / "config")
        os.environ.pop("PYTHON_KEYRING_BACKEND", None)
        os.environ["ANONYMIZED_TELEMETRY"] = "False"
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PROCEDURA_LLM_BASE_URL"):
            os.environ.pop(var, None)
        import keyring
        from fakes.keyring_backend import MemoryKeyring

        keyring.set_keyring(MemoryKeyring())  # never the real keyring of whoever runs this
        server.start()
        try:
            _, ids = _stage_team(server, Path(home))
            with _display(args.scale):
                if args.scale != 1:
                    os.environ["QT_SCALE_FACTOR"] = f"{args.scale:g}"
                import qasync
                from PySide6.QtWidgets import QApplication

                from desktop_app.ui import theme

                app = QApplication(["procedura"])
                app.setApplicationName("Procedura")
                theme.apply(app)
                app.setQuitOnLastWindowClosed(False)
                loop = qasync.QEventLoop(app)
                asyncio.set_event_loop(loop)
                with loop:
                    loop.run_until_complete(_main(args.out.resolve(), suffix, ids))
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
