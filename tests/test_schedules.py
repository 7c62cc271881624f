"""The fleet's schedules: when a cron expression fires in its zone (across the clock changes),
and, for real, PostgreSQL, Redis, two schedulers (one in a worker, one alone) and a worker
whose runs land in the order desk's ledger once per minute that passed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from browser_support import CHROMIUM
from fleet_support import OrderDesk, RedisServer, environment, order_workflow
from postgres_server import PostgresServer, make_team
from replay_support import serving

from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.app import Services, open_services
from desktop_app.core.models.fleet import JobKind, RowState
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.fleet.schedules import add_schedule, list_schedules, parse_timing, set_enabled
from desktop_app.settings import load_settings

PARIS = ZoneInfo("Europe/Paris")


# ── when a schedule fires (no server) ───────────────────────────────────────────────────────


def _firings(cron: str, start: datetime, count: int, zone: str = "Europe/Paris") -> list[str]:
    timing = parse_timing(cron, zone)
    found, moment = [], start
    for _ in range(count):
        moment = timing.next_after(moment)
        found.append(moment.astimezone(UTC).strftime("%m-%d %H:%M"))
    return found


def test_clocks_going_forward_in_paris() -> None:
    # 29 March 2026, 02:00 CET becomes 03:00 CEST: 02:30 does not exist that night.
    assert _firings("30 2 * * *", datetime(2026, 3, 28, 12, tzinfo=PARIS), 2) == [
        "03-29 01:30",  # 02:30 read as CET: 03:30 CEST, once
        "03-30 00:30",  # 02:30 CEST
    ]
    # 09:00 stays 09:00 in Paris: an hour earlier in UTC from the Sunday on.
    assert _firings("0 9 * * *", datetime(2026, 3, 28, 10, tzinfo=PARIS), 2) == [
        "03-29 07:00",
        "03-30 07:00",
    ]
    # Every minute: 01:59 CET, then 03:00 CEST (one real minute later).
    assert _firings("* * * * *", datetime(2026, 3, 29, 1, 58, tzinfo=PARIS), 3) == [
        "03-29 00:59",
        "03-29 01:00",
        "03-29 01:01",
    ]


def test_clocks_going_back_in_paris_fire_a_time_once() -> None:
    # 25 October 2026, 03:00 CEST becomes 02:00 CET: 02:30 happens twice; it fires once.
    assert _firings("30 2 * * *", datetime(2026, 10, 24, 12, tzinfo=PARIS), 2) == [
        "10-25 00:30",
        "10-26 01:30",
    ]
    # Every minute pauses during the repeated hour (its wall times fired already).
    assert _firings("* * * * *", datetime(2026, 10, 25, 2, 58, tzinfo=PARIS), 2) == [
        "10-25 00:59",
        "10-25 02:00",
    ]
    timing = parse_timing("*/15 * * * *", "Europe/Paris")
    inside = datetime(2026, 10, 25, 2, 10, fold=1, tzinfo=PARIS)  # the second 02:10
    assert timing.next_after(inside).astimezone(UTC).strftime("%H:%M") == "02:00"


def test_a_late_scheduler_makes_the_last_missed_firing_only() -> None:
    timing = parse_timing("*/15 * * * *", "UTC")
    start = datetime(2026, 1, 5, 9, 1, tzinfo=UTC)
    assert timing.latest_due(start, datetime(2026, 1, 5, 10, 7, tzinfo=UTC)) == datetime(
        2026, 1, 5, 10, 0, tzinfo=UTC
    )
    assert timing.latest_due(start, datetime(2026, 1, 5, 9, 14, tzinfo=UTC)) is None


@pytest.mark.parametrize(
    ("cron", "zone", "said"),
    [
        ("0 9 * *", "UTC", "five fields are needed"),
        ("61 * * * *", "UTC", "the minute field '61' is not valid"),
        ("0 9 * * 7", "UTC", "Sunday is 0"),
        ("0 0 30 2 *", "UTC", "would never fire"),
        ("0 9 * * 1-5", "Europe/Pariss", "did you mean Europe/Paris?"),
    ],
)
def test_bad_timings_are_refused_in_one_line(cron: str, zone: str, said: str) -> None:
    with pytest.raises(ParameterError, match=said) as caught:
        parse_timing(cron, zone)
    assert "\n" not in str(caught.value)


# ── for real: a team, its queue, schedulers and a worker ────────────────────────────────────


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@dataclass
class Team:
    """A team whose approver (amy) has an approved order workflow; rita is a runner."""

    amy: Services
    workflow_id: str
    env: dict[str, str]  # what a runner's machine has (rita), for the processes
    desk: OrderDesk
    root: Path


@pytest.fixture
def team(
    postgres: PostgresServer, redis: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Team]:
    database = make_team(postgres, {"amy": "approver", "rita": "runner"})
    queue = redis.url(int(database[-2:], 16) % 16)
    from celery import Celery

    Celery(broker=queue).connection_for_write().default_channel.client.flushdb()
    url = f"postgresql://{{}}@127.0.0.1:{postgres.port}/{database}"
    # The command line in this process is amy's.
    monkeypatch.setenv("PROCEDURA_TEAM_DATABASE", url.format("amy"))
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "amy-pw")
    monkeypatch.setenv("PROCEDURA_TEAM_QUEUE", queue)
    desk = OrderDesk()
    settings = load_settings(home=tmp_path / "amy")
    with serving(desk.handler()) as base, open_services(settings, write=True) as amy:
        workflow = order_workflow(base)
        saved = amy.workflows.save(workflow, actor="amy").version
        amy.workflows.submit(workflow.id, actor="amy")
        amy.workflows.approve(workflow.id, actor="amy", version=saved.version)
        env = environment(
            PROCEDURA_TEAM_DATABASE=url.format("rita"),
            PROCEDURA_TEAM_PASSWORD="rita-pw",
            PROCEDURA_TEAM_QUEUE=queue,
            PROCEDURA_BROWSER=CHROMIUM,
            PROCEDURA_LLM_BASE_URL="http://127.0.0.1:9/v1",
        )
        yield Team(amy, workflow.id, env, desk, tmp_path)
        desk.release.set()


class Processes:
    """``procedura`` processes (a worker, a scheduler), each in a process group of its own."""

    def __init__(self, team: Team) -> None:
        self._team = team
        self.started: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *args: str) -> None:
        env = {**self._team.env, "PROCEDURA_HOME": str(self._team.root / name)}
        with (self._team.root / f"{name}.log").open("wb") as log:
            self.started[name] = subprocess.Popen(
                [sys.executable, "-m", "desktop_app", *args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self, name: str) -> str:
        return (self._team.root / f"{name}.log").read_text(errors="replace")

    def logs(self) -> str:
        return "\n".join(f"── {n}\n{self.log(n)[-4000:]}" for n in self.started)

    def stop(self) -> None:
        for process in self.started.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.started.values():
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture
def processes(team: Team) -> Iterator[Processes]:
    started = Processes(team)
    yield started
    started.stop()


def until(check: Callable[[], bool], timeout: float, what: str, processes: Processes) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s\n{processes.logs()}")
        time.sleep(0.2)


@pytest.mark.slow
def test_schedules_fire_once_a_minute_with_two_schedulers_and_stop_when_disabled(
    team: Team, processes: Processes
) -> None:
    kept = add_schedule(team.amy, team.workflow_id, "* * * * *", "Europe/Paris",
                        {"customer": "kept"}, assume_yes=True)  # fmt: skip
    stopped = add_schedule(team.amy, team.workflow_id, "* * * * *", "America/New_York",
                           {"customer": "stopped"}, assume_yes=True)  # fmt: skip
    # Two schedulers at once: one inside the worker, one alone (both logged in as rita).
    processes.start("worker", "worker", "--name", "w0@test", "--schedules")
    processes.start("scheduler", "fleet", "scheduler")
    store = SqlFleetStore(team.amy.engine)

    def jobs(schedule_id: str) -> list[datetime]:
        """The times a schedule's jobs were made for (one job per time, by the database)."""
        from sqlmodel import Session, col, select

        from desktop_app.adapters.sql.tables import FleetJobRow

        with Session(team.amy.engine) as session:
            found = session.exec(
                select(FleetJobRow.fired_for).where(col(FleetJobRow.schedule_id) == schedule_id)
            ).all()
        return sorted(t for t in found if t is not None)

    def ran(customer: str, times: int) -> Callable[[], bool]:
        return lambda: team.desk.orders()[customer] >= times

    until(ran("kept", 1), 90, "the first minute's run of 'kept'", processes)
    until(ran("stopped", 1), 30, "the first minute's run of 'stopped'", processes)
    first = jobs(kept.id)
    assert len(first) == 1 and first == jobs(stopped.id)  # the same minute, in two zones
    assert first[0].second == 0 and first[0] <= datetime.now(UTC)
    # Both schedulers came to that minute; the second found it taken.
    until(
        lambda: (
            all("schedule" in processes.log(n) for n in ("worker", "scheduler"))
            and "already fired" in processes.log("worker") + processes.log("scheduler")
        ),
        30,
        "both schedulers reached the minute",
        processes,
    )

    set_enabled(team.amy, stopped.id, False)
    until(ran("kept", 2), 75, "the next minute's run of 'kept'", processes)
    second = jobs(kept.id)
    assert len(second) == 2 and (second[1] - second[0]).total_seconds() == 60
    assert jobs(stopped.id) == first  # disabled before that minute: no firing
    orders = team.desk.orders()
    assert orders["kept"] == 2 and orders["stopped"] == 1
    made = [j for j in store.jobs() if j.schedule_id == kept.id]
    assert {j.kind for j in made} == {JobKind.SCHEDULE}
    assert {j.created_by for j in made} == {f"schedule {kept.id[:8]}"}
    until(lambda: all(store.job(j.id).finished for j in made), 60, "the runs ended", processes)
    assert all(store.job(j.id).counts == {RowState.SUCCEEDED: 1} for j in made)
    listed = {v.schedule.id: v for v in list_schedules(team.amy)}
    assert listed[kept.id].schedule.last_fired_at == second[1]  # rita's scheduler noted it
    assert listed[stopped.id].next_fire is None and not listed[stopped.id].schedule.enabled


@pytest.mark.slow
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(team: Team, procedura) -> None:  # type: ignore[no-untyped-def]
    draft = team.amy.workflows.save(
        order_workflow("http://127.0.0.1:9").model_copy(update={"name": "Draft only"}),
        actor="amy",
    ).version
    wid = team.workflow_id
    for args, said in [
        (["--cron", "0 9 * *"], "five fields are needed"),
        (["--cron", "0 25 * * *"], "the hour field '25' is not valid"),
        (["--cron", "0 9 * * 1-5", "--tz", "Mars/Olympus"], "is not an IANA zone name"),
        (["--cron", "0 9 * * 1-5", "-p", "client=x"], "client"),
    ]:
        done = procedura("schedule", "add", wid, "--tz", "UTC", *args)
        assert done.exit_code == 2, done.output
        assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    unapproved = procedura("schedule", "add", draft.workflow_id, "--cron", "0 9 * * *",
                           "--tz", "UTC", "-p", "customer=x")  # fmt: skip
    assert unapproved.exit_code == 2
    assert "no approved version" in unapproved.stderr and unapproved.stderr.count("\n") == 1
    assert SqlFleetStore(team.amy.engine).schedules() == []


@pytest.mark.slow
def test_an_approver_manages_schedules_and_a_runner_is_refused(
    team: Team, procedura, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    done = procedura("schedule", "add", team.workflow_id, "--cron", "0 9 * * 1-5",
                     "--tz", "Europe/Paris", "-p", "customer=acme", "--yes")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "'0 9 * * 1-5' in Europe/Paris; next " in done.stdout
    assert done.stdout.rstrip().endswith(("CET", "CEST"))
    listed = json.loads(procedura("schedule", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["workflow"] == "Place an order"
    assert listed[0]["values"] == {"customer": "acme"} and listed[0]["assume_yes"]
    upcoming = datetime.fromisoformat(listed[0]["next_fire"])
    assert upcoming.hour == 9 and upcoming.minute == 0 and upcoming.weekday() < 5
    assert upcoming.utcoffset() in (timedelta(hours=1), timedelta(hours=2))  # Paris
    short = listed[0]["id"][:8]
    assert procedura("schedule", "disable", short).exit_code == 0
    table = procedura("schedule", "list").stdout
    row = table.splitlines()[1]
    assert "Place an order" in row and row.split()[-3:] == ["no", "never", "-"]

    # A runner may not write schedules: the server says so, in one line (exit 1).
    monkeypatch.setenv("PROCEDURA_TEAM_DATABASE", team.env["PROCEDURA_TEAM_DATABASE"])
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "rita-pw")
    for args in (
        ["add", team.workflow_id, "--cron", "* * * * *", "--tz", "UTC", "-p", "customer=x"],
        ["enable", short],
        ["remove", short],
    ):
        refused = procedura("schedule", *args)
        assert refused.exit_code == 1, refused.output
        assert refused.stderr.count("\n") == 1
        assert "the team's server refused: permission denied" in refused.stderr
    listed = json.loads(procedura("schedule", "list", "--json").stdout)
    assert len(listed) == 1 and not listed[0]["enabled"]  # nothing changed

    monkeypatch.setenv("PROCEDURA_TEAM_DATABASE", team.env["PROCEDURA_TEAM_DATABASE"]
                       .replace("rita@", "amy@"))  # fmt: skip
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "amy-pw")
    assert procedura("schedule", "remove", short).exit_code == 0
    assert json.loads(procedura("schedule", "list", "--json").stdout) == []


@pytest.mark.slow
def test_a_workflow_with_no_approved_version_gets_no_job_and_one_line(
    team: Team, caplog: pytest.LogCaptureFixture
) -> None:
    from desktop_app.fleet.beat import TeamScheduler, use_schedules
    from desktop_app.fleet.queue import make_app

    added = add_schedule(team.amy, team.workflow_id, "0 9 * * *", "UTC", {"customer": "x"})
    team.amy.workflows.archive(team.workflow_id, actor="amy")
    app = make_app(team.amy.settings)
    use_schedules(app, team.amy.settings)
    scheduler = TeamScheduler(app)
    try:
        entry = scheduler._entries[added.id]
        due = datetime(2030, 1, 7, 9, 0, tzinfo=UTC)
        with caplog.at_level("INFO"):
            scheduler._fire(entry, due)
    finally:
        scheduler.close()
    said = [r.getMessage() for r in caplog.records if added.id[:8] in r.getMessage()]
    assert said == [
        f"schedule {added.id[:8]}: 'Place an order' has no approved version: nothing run for "
        "2030-01-07 09:00 UTC"
    ]
    assert entry.done_until == due  # that time is over: not tried again
    store = SqlFleetStore(team.amy.engine)
    assert store.jobs() == [] and store.schedule(added.id).last_fired_at is None
